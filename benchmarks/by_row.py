"""The `by=` row: several systems in one call against one call per system.

    python benchmarks/by_row.py                            # 10 systems x 100k queries x 10 docs = 10M rows
    python benchmarks/by_row.py --queries 10000            # 1M rows, a smoke run
    python benchmarks/by_row.py --queries 20000 --shuffled # 2M rows in a random order (issue 21's shape)
    python benchmarks/by_row.py --queries 20000 --shuffled --composite  # the query a composite key

Method
- Data (numpy seed 0, generated in memory, not timed): `system` String ("system_0".."system_9"), `query`
  int64, `relevance` int8 in 0..4, `score` float64 uniform; rows ordered by system, then query, as a
  concatenation of each system's prediction file would be, or with `--shuffled` in a seeded random order
  (an evaluation log written as the requests came).
- "one call": `frame.rank_metrics.ndcg(by="system", k=10)`, every system in one plan.
- "per system": what a user without `by` writes: for each system, `frame.filter(system == s)` then
  `.rank_metrics.ndcg(k=10)`, the system put back as a column, the ten frames concatenated; the result is
  checked equal to the one call's (to 1e-12) before timing.
- Both are eager DataFrame calls on the same frame in the same process (Polars' default engine, all cores).
- The same two from a Parquet file of the frame (written once to a temporary folder, not timed, in the
  frame's order: ordered by system, a per-system filter pushed into the scan can skip row groups; shuffled, it
  cannot): one lazy call with `by`, and
  ten `scan_parquet(...).filter(system == s)` calls, each collected.
  They alternate, one then the other, `--repeats` times; the table shows the median wall time
  (time.perf_counter) and the median CPU time of the process (time.process_time: all threads), and the
  per-system / one-call ratio.  The load average (os.getloadavg) before and after is printed: other
  processes on the machine slow both sides.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl
from polars.testing import assert_frame_equal

import lodestar_polars  # noqa: F401  (registers .rank_metrics)

LOCALES = ["en", "de", "fr", "ja", "es"]


def make_frame(systems: int, queries: int, docs: int, seed: int = 0, composite: bool = False) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    rows = systems * queries * docs
    query = np.tile(np.repeat(np.arange(queries, dtype=np.int64), docs), systems)
    keys = (
        {"query": query // len(LOCALES), "locale": np.array(LOCALES)[query % len(LOCALES)]}
        if composite
        else {"query": query}
    )
    return pl.DataFrame(
        {
            "system": pl.Series(np.repeat([f"system_{i}" for i in range(systems)], queries * docs)),
            **keys,
            "relevance": rng.integers(0, 5, rows).astype(np.int8),
            "score": rng.random(rows),
        }
    )


def query_of(frame: pl.DataFrame | pl.LazyFrame) -> list[str]:
    return [name for name in ("query", "locale") if name in frame.collect_schema()]


def one_call(frame: pl.DataFrame, k: int) -> pl.DataFrame:
    return frame.rank_metrics.ndcg(query=query_of(frame), by="system", k=k)


def per_system(frame: pl.DataFrame, k: int) -> pl.DataFrame:
    systems = frame["system"].unique().sort().to_list()
    parts = [
        frame.filter(pl.col("system") == system)
        .rank_metrics.ndcg(query=query_of(frame), k=k)
        .select(pl.lit(system).alias("system"), pl.all())
        for system in systems
    ]
    return pl.concat(parts)


def one_call_parquet(path: Path, k: int) -> pl.DataFrame:
    scan = pl.scan_parquet(path)
    return scan.rank_metrics.ndcg(query=query_of(scan), by="system", k=k).collect()


def per_system_parquet(path: Path, systems: list[str], k: int) -> pl.DataFrame:
    query = query_of(pl.scan_parquet(path))
    parts = [
        pl.scan_parquet(path)
        .filter(pl.col("system") == system)
        .rank_metrics.ndcg(query=query, k=k)
        .select(pl.lit(system).alias("system"), pl.all())
        for system in systems
    ]
    return pl.concat([part.collect() for part in parts])


def timed(function: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    function()
    return time.perf_counter() - wall, time.process_time() - cpu


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--docs", type=int, default=10)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--shuffled", action="store_true", help="rows in a seeded random order")
    parser.add_argument("--composite", action="store_true", help="the query a composite key: query + locale")
    args = parser.parse_args(argv)

    frame = make_frame(args.systems, args.queries, args.docs, composite=args.composite)
    if args.shuffled:
        frame = frame.sample(fraction=1.0, shuffle=True, seed=0)
    order = ("shuffled" if args.shuffled else "ordered by system, then query") + (
        "; query + locale keys" if args.composite else ""
    )
    print(
        f"{frame.height:,} rows ({order}): {args.systems} systems x {args.queries:,} queries x {args.docs} docs, "
        f"k={args.k}; "
        f"polars {pl.__version__}, {pl.thread_pool_size()} threads, {os.cpu_count()} cores"
    )
    load_before = os.getloadavg()
    assert_frame_equal(per_system(frame, args.k), one_call(frame, args.k), rel_tol=0.0, abs_tol=1e-12)
    path = Path(tempfile.mkdtemp()) / "by_row.parquet"
    frame.write_parquet(path)  # row groups of Polars' default size, the rows in the frame's order
    systems = frame["system"].unique().sort().to_list()
    assert_frame_equal(
        per_system_parquet(path, systems, args.k), one_call_parquet(path, args.k), rel_tol=0.0, abs_tol=1e-12
    )
    contenders: dict[str, Callable[[], object]] = {
        "one call, by='system'": lambda: one_call(frame, args.k),
        f"{args.systems} calls, filter + ndcg": lambda: per_system(frame, args.k),
        "Parquet: one call, by='system'": lambda: one_call_parquet(path, args.k),
        f"Parquet: {args.systems} calls, scan + filter + ndcg": lambda: per_system_parquet(path, systems, args.k),
    }
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in contenders}
    for _ in range(args.repeats):
        for name, function in contenders.items():
            samples[name].append(timed(function))
    load_after = os.getloadavg()

    medians = {
        name: (statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs))
        for name, runs in samples.items()
    }
    print(f"\n| contender | wall s (median of {args.repeats}) | CPU s (median) | all wall samples |")
    print("|---|---|---|---|")
    for name, (wall, cpu) in medians.items():
        every = ", ".join(f"{w:.2f}" for w, _ in samples[name])
        print(f"| {name} | {wall:.2f} | {cpu:.2f} | {every} |")
    (one_wall, one_cpu), (loop_wall, loop_cpu), (one_pq_wall, one_pq_cpu), (loop_pq_wall, loop_pq_cpu) = (
        medians.values()
    )
    print(f"\nin memory, per-system / one call: wall x{loop_wall / one_wall:.2f}, CPU x{loop_cpu / one_cpu:.2f}")
    print(
        f"Parquet, per-system / one call: wall x{loop_pq_wall / one_pq_wall:.2f}, CPU x{loop_pq_cpu / one_pq_cpu:.2f}"
    )
    shutil.rmtree(path.parent)
    print(
        "load average (1, 5, 15 min): before "
        + ", ".join(f"{x:.2f}" for x in load_before)
        + "; after "
        + ", ".join(f"{x:.2f}" for x in load_after)
    )


if __name__ == "__main__":
    main()
