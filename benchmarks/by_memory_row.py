"""`by=` over a String column: one call's peak memory (and time), per engine and source, for one or more trees.

    python benchmarks/by_memory_row.py                                   # the working tree, 20M rows
    python benchmarks/by_memory_row.py --trees /path/to/main /path/to/branch --queries 20000

Data (numpy seed 0, written once to benchmarks/data/by_memory_<systems>x<queries>x<docs>.parquet, gitignored):
`system` String ("system_0".."system_9"), `query` Int64, `relevance` Int8 in 0..4, `score` Float64 uniform,
the rows in a seeded random order (shuffled); 10 systems x 200k queries x 10 documents = 20M rows by default.

Each measurement is a fresh child process whose `sys.path` starts with the tree given (its `lodestar_polars`
is checked to be the one imported), one per (tree, case):
- "frame, eager": the child reads the Parquet file into a DataFrame, then `frame.rank_metrics.ndcg(by="system",
  k=10)`;
- "parquet, auto" / "parquet, in-memory" / "parquet, streaming": `pl.scan_parquet(path).rank_metrics.ndcg(
  by="system", k=10)` collected with that engine ("auto" is `collect()` as a user writes it);
- "parquet, sink": the same plan through `sink_parquet(..., engine="streaming")`.
The child prints the process's peak RSS (VmHWM from /proc/self/status, kernel-tracked: the frame read included
for the frame case, which also prints the peak after the read), the call's wall and CPU seconds (Linux only).
Cases run tree after tree, in order; the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
from by_row import make_frame

CHILD = r"""
import sys, time
tree, path, case, out = sys.argv[1:5]
sys.path.insert(0, tree)
import polars as pl
import lodestar_polars
assert lodestar_polars.__file__.startswith(tree), lodestar_polars.__file__

def peak_mb():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024

after_read = 0.0
if case == "frame, eager":
    frame = pl.read_parquet(path)
    after_read = peak_mb()
wall, cpu = time.perf_counter(), time.process_time()
if case == "frame, eager":
    frame.rank_metrics.ndcg(by="system", k=10)
else:
    plan = pl.scan_parquet(path).rank_metrics.ndcg(by="system", k=10)
    if case == "parquet, sink":
        plan.sink_parquet(out, engine="streaming")
    else:
        plan.collect(engine=case.split(", ")[1])  # "auto": the engine Polars picks, as `collect()`
print(f"{peak_mb():.0f} {after_read:.0f} {time.perf_counter() - wall:.2f} {time.process_time() - cpu:.2f}")
"""

CASES = ["frame, eager", "parquet, auto", "parquet, in-memory", "parquet, streaming", "parquet, sink"]


def data_file(systems: int, queries: int, docs: int) -> Path:
    path = Path(__file__).parent / "data" / f"by_memory_{systems}x{queries}x{docs}.parquet"
    if not path.exists():
        frame = make_frame(systems, queries, docs).sample(fraction=1.0, shuffle=True, seed=0)
        path.parent.mkdir(exist_ok=True)
        frame.write_parquet(path)
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trees", nargs="+", default=[str(Path(__file__).resolve().parent.parent)])
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--queries", type=int, default=200_000)
    parser.add_argument("--docs", type=int, default=10)
    parser.add_argument("--cases", nargs="+", default=CASES, choices=CASES)
    args = parser.parse_args(argv)

    path = data_file(args.systems, args.queries, args.docs)
    raw = pl.read_parquet(path).estimated_size() / 2**20
    print(f"{path.name}: {args.systems * args.queries * args.docs:,} rows, raw columns {raw:.0f} MB (estimated_size)")
    print(f"load average before: {os.getloadavg()}")
    print("\n| tree | case | peak RSS MB | after the read MB | wall s | CPU s |\n|---|---|---|---|---|---|")
    out = path.with_name("by_memory_out.parquet")
    for tree in args.trees:
        for case in args.cases:
            command = [sys.executable, "-c", CHILD, str(Path(tree).resolve()), str(path), case, str(out)]
            result = subprocess.run(command, capture_output=True, text=True, check=True)
            peak, after_read, wall, cpu = result.stdout.split()
            shown = after_read if case == "frame, eager" else ""
            print(f"| {tree} | {case} | {peak} | {shown} | {wall} | {cpu} |", flush=True)
    out.unlink(missing_ok=True)
    print(f"\nload average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
