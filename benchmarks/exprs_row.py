"""The expression form against the namespace: `group_by("query").agg(exprs.ndcg(k=10))` vs `rank_metrics.ndcg(k=10)`.

    python benchmarks/exprs_row.py        # 10M rows, 100k queries x 100 docs (minutes; 7 under heavy load)
    python benchmarks/exprs_row.py --queries 10000 --repeats 1   # a smoke run

Method
- Data as in run.py's "100k x 100" shape (numpy seed 0): query int64 grouped and ascending, relevance int8
  in 0..4, score float64 uniform in [0, 1).
- The results of both are checked equal (to 1e-12) before timing.
- Each repeat runs every contender once, alternating; the median wall time is reported, with the process
  CPU time (user + sys) of the same call, since the machine is shared and wall time is noisy under load.
- Contenders: eager `DataFrame.group_by().agg(exprs.ndcg(k=10))` and `df.rank_metrics.ndcg(k=10)`, the
  expression beside two other aggregations, and both collected lazily by the streaming engine (the
  expression's group-by runs there as an in-memory node: rank inside an aggregation is not streamable).
- polars-ds `query_ndcg_score(..., k=10, ignore_ties=True)` is timed too when it imports (its tie-averaged
  default fails on Polars 2); its order for tied scores is our ties="reverse".
- `uptime` is printed before and after: other processes on the machine slow every contender.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import time
from collections.abc import Callable

import numpy as np
import polars as pl
from polars.testing import assert_frame_equal

import lodestar_polars  # noqa: F401  registers .rank_metrics
from lodestar_polars import exprs


def frame(queries: int, docs: int) -> pl.DataFrame:
    rng = np.random.default_rng(0)
    rows = queries * docs
    return pl.DataFrame(
        {
            "query": np.repeat(np.arange(queries, dtype=np.int64), docs),
            "relevance": rng.integers(0, 5, rows).astype(np.int8),
            "score": rng.random(rows),
        }
    )


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    arguments = parser.parse_args()
    print("uptime before:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    df = frame(arguments.queries, arguments.docs)
    lf = df.lazy()
    print(f"{df.height:,} rows, {arguments.queries:,} queries x {arguments.docs} documents; polars {pl.__version__}")

    expected = df.rank_metrics.ndcg(k=10)
    assert_frame_equal(df.group_by("query").agg(exprs.ndcg(k=10)).sort("query"), expected, abs_tol=1e-12)

    contenders: dict[str, Callable[[], object]] = {
        "namespace df.rank_metrics.ndcg(k=10)": lambda: df.rank_metrics.ndcg(k=10),
        'expression df.group_by("query").agg(exprs.ndcg(k=10))': lambda: df.group_by("query").agg(exprs.ndcg(k=10)),
        "expression beside pl.len() and a mean": lambda: df.group_by("query").agg(
            exprs.ndcg(k=10), pl.len(), pl.col("score").mean()
        ),
        "namespace, lazy, streaming engine": lambda: lf.rank_metrics.ndcg(k=10).collect(engine="streaming"),
        "expression, lazy, streaming engine": lambda: (
            lf.group_by("query").agg(exprs.ndcg(k=10)).collect(engine="streaming")
        ),
    }
    try:
        import polars_ds as pds  # type: ignore[import-not-found]  # optional, in the bench extra

        ours = df.group_by("query").agg(exprs.ndcg(k=10, ties="reverse")).sort("query")
        pds_ndcg = pds.query_ndcg_score("relevance", "score", k=10, ignore_ties=True).alias("ndcg@10")
        theirs = df.group_by("query").agg(pds_ndcg)
        assert_frame_equal(theirs.sort("query"), ours, abs_tol=1e-12)
        contenders["polars-ds query_ndcg_score(k=10, ignore_ties=True)"] = lambda: df.group_by("query").agg(pds_ndcg)
    except ImportError as missing:
        print(f"polars-ds not timed: {missing}")

    walls: dict[str, list[float]] = {name: [] for name in contenders}
    cpus: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(arguments.repeats):
        for name, run in contenders.items():
            cpu, start = cpu_seconds(), time.perf_counter()
            run()
            walls[name].append(time.perf_counter() - start)
            cpus[name].append(cpu_seconds() - cpu)

    baseline = "namespace df.rank_metrics.ndcg(k=10)"
    base_wall, base_cpu = statistics.median(walls[baseline]), statistics.median(cpus[baseline])
    print("\n| contender | median wall s | CPU s | wall / namespace | CPU / namespace |")
    print("|---|---:|---:|---:|---:|")
    for name in contenders:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        print(f"| {name} | {wall:.2f} | {cpu:.2f} | {wall / base_wall:.2f} | {cpu / base_cpu:.2f} |")
    print("\nuptime after:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
