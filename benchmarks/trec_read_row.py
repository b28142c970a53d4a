"""Reading a TREC run file strictly against reading it as trec_eval does (`lenient=True`, the CLI's trec_eval
mode): wall and CPU seconds of `scan_trec_run(path, lenient=...).collect()`.

    python benchmarks/trec_read_row.py [--lines 2000000] [--repeats 3]

Data (numpy seed 0): `lines` run lines over 20,000 queries, `qid Q0 d<i> <i mod 1000> <score> tag`, scores
uniform in [0, 1) written with Python's repr, generated once to benchmarks/data/run_<lines>.txt (gitignored).
Both readers read every line alike (no field needs leniency here): the difference is the lenient reader's
prefix extraction (C's atof of the score) against Polars' strict cast.  One process, the two readers
alternating (strict, lenient, lenient, strict per repeat); printed: the median wall and CPU seconds of each,
their ratio, and the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np
from _timing import cpu_seconds

from lodestar_polars.io import scan_trec_run

DATA = Path(__file__).resolve().parent / "data"


def run_file(lines: int) -> Path:
    path = DATA / f"run_{lines}.txt"
    if not path.exists():
        DATA.mkdir(exist_ok=True)
        rng = np.random.default_rng(0)
        queries, scores = rng.integers(0, 20_000, lines).tolist(), rng.random(lines).tolist()
        path.write_text("".join(f"{queries[i]} Q0 d{i} {i % 1000} {scores[i]!r} tag\n" for i in range(lines)))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=2_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    path = run_file(args.lines)
    print(f"load before: {os.getloadavg()}")
    times: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    for _ in range(args.repeats):
        for lenient in (False, True, True, False):
            cpu, wall = cpu_seconds(), time.perf_counter()
            scan_trec_run(path, lenient=lenient).collect()
            times[lenient].append((time.perf_counter() - wall, cpu_seconds() - cpu))
    medians = {
        lenient: (statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs))
        for lenient, runs in times.items()
    }
    for lenient, (wall, cpu) in medians.items():
        print(f"{'lenient' if lenient else 'strict '}: wall {wall:.2f} s, CPU {cpu:.2f} s")
    ratio_wall = medians[True][0] / medians[False][0]
    ratio_cpu = medians[True][1] / medians[False][1]
    print(f"lenient / strict: wall {ratio_wall:.2f}x, CPU {ratio_cpu:.2f}x")
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
