"""trec_eval's whole all_trec set with judgments on the TREC shape, two revisions paired: each revision's
`lodestar_polars` extracted with `git archive`, then `--runs` alternating fresh processes a side, each timing one
`evaluate` call (after a warm-up call on three measures).  Prints each timing and the medians' ratio.

    python benchmarks/all_trec_paired.py BASE HEAD [--runs 5] [--queries 20000] [--docs 100] [--judged 40]
    python benchmarks/all_trec_paired.py BASE HEAD --in-frame [--queries 1000000] [--docs 10]
    python benchmarks/all_trec_paired.py BASE HEAD --exact-sums        # the trec_eval mode's arithmetic
    python benchmarks/all_trec_paired.py BASE HEAD --measures rbp rbp_resid   # these measures, not all_trec

The data and the call are `all_trec_trec_shape.py`'s (ties="doc", no_relevant=0, qrels=); with `--in-frame`,
`all_trec_row.py`'s (in-frame relevance, ties="doc", doc="doc", no_relevant=0; warm-up on 1,000 rows).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[1]); sys.path.insert(1, sys.argv[2])
import lodestar_polars
assert lodestar_polars.__file__.startswith(sys.argv[1]), lodestar_polars.__file__
from all_trec_trec_shape import all_trec_measures, frames
run, qrels = frames(int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
measures = json.loads(sys.argv[7]) or all_trec_measures()
options = {"qrels": qrels, "doc": "doc", "ties": "doc", "no_relevant": 0.0, "exact_sums": sys.argv[6] == "exact"}
run.rank_metrics.evaluate(measures[:3], **options)
wall, cpu = time.perf_counter(), time.process_time()
run.rank_metrics.evaluate(measures, **options)
print(time.perf_counter() - wall, time.process_time() - cpu)
"""

CHILD_IN_FRAME = """
import json, sys, time
sys.path.insert(0, sys.argv[1]); sys.path.insert(1, sys.argv[2])
import lodestar_polars
assert lodestar_polars.__file__.startswith(sys.argv[1]), lodestar_polars.__file__
from all_trec_row import all_trec_measures, frame
df = frame(int(sys.argv[3]), int(sys.argv[4]))
measures = json.loads(sys.argv[7]) or all_trec_measures()[0]
options = {"doc": "doc", "ties": "doc", "no_relevant": 0.0, "exact_sums": sys.argv[6] == "exact"}
df.head(1000).rank_metrics.evaluate(measures, **options)
wall, cpu = time.perf_counter(), time.process_time()
df.rank_metrics.evaluate(measures, **options)
print(time.perf_counter() - wall, time.process_time() - cpu)
"""


def extract(revision: str, into: Path) -> Path:
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", revision, "lodestar_polars"], cwd=ROOT, check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("base")
    parser.add_argument("head")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--queries", type=int, default=20_000)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--judged", type=int, default=40)
    parser.add_argument("--in-frame", action="store_true", help="all_trec_row.py's in-frame data, no judgments")
    parser.add_argument("--exact-sums", action="store_true", help="evaluate(..., exact_sums=True)")
    parser.add_argument("--measures", nargs="+", default=[], help="these measures instead of the all_trec set")
    args = parser.parse_args()
    child = CHILD_IN_FRAME if args.in_frame else CHILD
    with tempfile.TemporaryDirectory() as folder:
        sides = {name: extract(name, Path(folder) / str(i)) for i, name in enumerate([args.base, args.head])}
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
        loads = [os.getloadavg()[0]]
        for _ in range(args.runs):
            for name, package in sides.items():
                shape = [str(args.queries), str(args.docs), str(args.judged), "exact" if args.exact_sums else "float"]
                command = [
                    sys.executable,
                    "-c",
                    child,
                    str(package),
                    str(ROOT / "benchmarks"),
                    *shape,
                    json.dumps(args.measures),
                ]
                wall, cpu = map(
                    float, subprocess.run(command, check=True, capture_output=True, text=True).stdout.split()
                )
                times[name].append((wall, cpu))
                print(f"{name:12s} {wall:7.3f} s   CPU {cpu:7.3f} s", flush=True)
            loads.append(os.getloadavg()[0])
    (base_wall, base_cpu), (head_wall, head_cpu) = (
        (statistics.median(w for w, _ in times[name]), statistics.median(c for _, c in times[name])) for name in sides
    )
    print(
        f"medians of {args.runs}: {args.base} {base_wall:.3f} s / CPU {base_cpu:.3f} s; {args.head} {head_wall:.3f} s"
    )
    print(f"{args.head} / {args.base}: wall {head_wall / base_wall:.2f}x, CPU {head_cpu / base_cpu:.2f}x")
    print(f"load {min(loads):.1f}-{max(loads):.1f}")


if __name__ == "__main__":
    main()
