"""`preferences.evaluate` with several judgment groups over the same documents: time and peak RSS.

    python benchmarks/prefs_row.py [--docs 2000] [--groups 2] [--levels 5] [--retrieved 1500] [--repeats 3]
                                   [--measures all_prefs]

Data (numpy seed 0): one query; `groups` EC judgment groups (one sub-group each), each judging every one of
`docs` documents at a level drawn uniformly from 0..levels-1 (so every doc is shared by every group); a run
retrieving `retrieved` of them (random scores, no ties).  `--measures prefs_simp` leaves the shared doc pairs
out (only `prefs_pair*` need them).

Each repeat runs in a fresh child process (`python -c CHILD ...`, in the temporary folder, so that the
package imported is the one on PYTHONPATH or installed, printed) that builds the frames, then times
`evaluate(...).collect()` (wall and CPU seconds) and reports its peak RSS (`VmHWM`, tracked by the kernel;
the frames and imports are in it, ~0.1-0.2 GB).  Printed: the median wall and CPU seconds, the largest peak,
the load average before the first child.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = """
import json, resource, sys, time
import numpy as np
import polars as pl
from lodestar_polars.preferences import ALL_PREFS, OFFICIAL_PREFS, evaluate
docs, groups, levels, retrieved, measures = json.loads(sys.argv[1])
rng = np.random.default_rng(0)
ids = [f"d{i:05d}" for i in range(docs)]
prefs = pl.LazyFrame({
    "query": ["q"] * (docs * groups),
    "jg": [f"g{g}" for g in range(groups) for _ in range(docs)],
    "jsg": ["s"] * (docs * groups),
    "doc": ids * groups,
    "level": rng.integers(0, levels, docs * groups).astype(float),
})
chosen = rng.permutation(docs)[:retrieved]
run = pl.LazyFrame({"query": ["q"] * retrieved, "doc": [ids[i] for i in chosen], "score": rng.random(retrieved)})
names = {"all_prefs": ALL_PREFS, "prefs": OFFICIAL_PREFS}.get(measures, tuple(measures.split(",")))
wall, cpu = time.perf_counter(), time.process_time()
frame = evaluate(run, prefs, names).collect()
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
import lodestar_polars
row = frame.row(0, named=True)
print(json.dumps({"wall": wall, "cpu": cpu, "peak_gb": peak / 1e6, "row": row, "package": lodestar_polars.__file__}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--groups", type=int, default=2)
    parser.add_argument("--levels", type=int, default=5)
    parser.add_argument("--retrieved", type=int, default=1500)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--measures", default="all_prefs")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    spec = json.dumps([args.docs, args.groups, args.levels, args.retrieved, args.measures])
    results = []
    for _ in range(args.repeats):
        # run from the temporary folder: `python -c` puts the working directory first on sys.path
        out = subprocess.run(
            [sys.executable, "-c", CHILD, spec], capture_output=True, text=True, check=True, cwd=tempfile.gettempdir()
        )
        results.append(json.loads(out.stdout))
    print(f"package: {results[0]['package']}")
    print(f"values: {results[0]['row']}")
    wall = statistics.median(r["wall"] for r in results)
    cpu = statistics.median(r["cpu"] for r in results)
    peak = max(r["peak_gb"] for r in results)
    print(
        f"{args.docs} docs x {args.groups} groups, {args.levels} levels, {args.retrieved} retrieved, "
        f"{args.measures}: wall {wall:.3f} s, CPU {cpu:.3f} s (median of {args.repeats}), peak RSS {peak:.3f} GB"
    )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
