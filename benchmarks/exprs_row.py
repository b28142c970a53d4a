"""The expression form against the namespace: `group_by("query").agg(exprs.ndcg(k=10))` vs `rank_metrics.ndcg(k=10)`.

    python benchmarks/exprs_row.py        # 10M rows, 100k queries x 100 docs (minutes; 7 under heavy load)
    python benchmarks/exprs_row.py --queries 10000 --repeats 1   # a smoke run
    python benchmarks/exprs_row.py --shapes 200000x10,100000x100 --shuffle --core   # issue 21's target 4
    python benchmarks/exprs_row.py --shapes 200000x10 --shuffle --measures err@10,rbp@10,rprec,f1@10
    python benchmarks/exprs_row.py --shapes 200000x10 --shuffle --tied --measures "sdcg(max_rel=4)@10,g,bin_g"

Method
- Data as in run.py's "100k x 100" shape (numpy seed 0): query int64 grouped and ascending, relevance int8
  in 0..4, score float64 uniform in [0, 1).  `--shapes QxD,...` runs several shapes in turn; `--shuffle`
  shuffles the rows (numpy seed 1), so a query's rows are scattered; `--tied` gives every row the score 0.5,
  so that each query is one tie block (ties="average" then takes the tie-averaged path in every group).
- The results of both are checked equal (to 1e-12) before timing.
- Each repeat runs every contender once, alternating; the median wall time is reported, with the process
  CPU time (user + sys) of the same call, since the machine is shared and wall time is noisy under load.
- Contenders: eager `DataFrame.group_by().agg(exprs.ndcg(k=10))` and `df.rank_metrics.ndcg(k=10)`, the
  expression beside two other aggregations, and both collected lazily by the streaming engine (the
  expression's group-by runs there as an in-memory node: rank inside an aggregation is not streamable).
- polars-ds `query_ndcg_score(..., k=10, ignore_ties=True)` is timed too when it imports (its tie-averaged
  default fails on Polars 2); its order for tied scores is our ties="reverse".
- `--core` times only the namespace call and the bare expression (the ratio issue 21 asks for).
- `--measures NAME,...` times other measures instead, core only: each expression against `evaluate` of its
  name (the measures without a method of their own), with `ties="reverse"` for err, nerr, iprec, 11pt_avg and
  g, which refuse the default "average" (the scores are untied floats: every mode gives the same order).
- `uptime` is printed before and after each shape: other processes on the machine slow every contender.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time
from collections.abc import Callable

import numpy as np
import polars as pl
from _timing import cpu_seconds
from polars.testing import assert_frame_equal

import lodestar_polars  # noqa: F401  registers .rank_metrics
from lodestar_polars import exprs


def frame(queries: int, docs: int, shuffle: bool, tied: bool = False) -> pl.DataFrame:
    rng = np.random.default_rng(0)
    rows = queries * docs
    df = pl.DataFrame(
        {
            "query": np.repeat(np.arange(queries, dtype=np.int64), docs),
            "relevance": rng.integers(0, 5, rows).astype(np.int8),
            "score": np.full(rows, 0.5) if tied else rng.random(rows),
        }
    )
    return df[np.random.default_rng(1).permutation(rows)] if shuffle else df


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def shape(text: str) -> tuple[int, int]:
    queries, docs = text.lower().split("x")
    return int(queries), int(docs)


# evaluate's name -> (the expression, the tie mode of both)
OTHER_MEASURES: dict[str, tuple[Callable[[], pl.Expr], str]] = {
    "ndcg@10": (lambda: exprs.ndcg(k=10), "average"),
    "err@10": (lambda: exprs.err(k=10, ties="reverse"), "reverse"),
    "nerr@10": (lambda: exprs.nerr(k=10, ties="reverse"), "reverse"),
    "rbp@10": (lambda: exprs.rbp(k=10), "average"),
    "rbp": (lambda: exprs.rbp(), "average"),
    "rprec": (lambda: exprs.rprec(), "average"),
    "f1@10": (lambda: exprs.f1(k=10), "average"),
    "success@10": (lambda: exprs.hit_rate(k=10), "average"),
    "iprec@0.5": (lambda: exprs.iprec_at_recall(level=0.5, ties="reverse"), "reverse"),
    "11pt_avg": (lambda: exprs.eleven_point_average(ties="reverse"), "reverse"),
    "p@10": (lambda: exprs.precision(k=10).alias("p@10"), "average"),
    "sdcg(max_rel=4)@10": (lambda: exprs.sdcg(k=10, max_rel=4), "average"),
    "g": (lambda: exprs.g(ties="reverse"), "reverse"),
    "bin_g": (lambda: exprs.bin_g(), "average"),
}


def measure_contenders(df: pl.DataFrame, name: str) -> dict[str, Callable[[], object]]:
    """`evaluate([name])` against the expression, checked equal first."""
    expression, ties = OTHER_MEASURES[name]
    expected = df.rank_metrics.evaluate([name], ties=ties).sort("query")
    assert_frame_equal(df.group_by("query").agg(expression()).sort("query"), expected, abs_tol=1e-12)
    return {
        f'namespace df.rank_metrics.evaluate(["{name}"])': lambda: df.rank_metrics.evaluate([name], ties=ties),
        f'expression df.group_by("query").agg(exprs ... {name})': lambda: df.group_by("query").agg(expression()),
    }


def contenders_for(df: pl.DataFrame, core: bool) -> dict[str, Callable[[], object]]:
    lf = df.lazy()
    contenders: dict[str, Callable[[], object]] = {
        "namespace df.rank_metrics.ndcg(k=10)": lambda: df.rank_metrics.ndcg(k=10),
        'expression df.group_by("query").agg(exprs.ndcg(k=10))': lambda: df.group_by("query").agg(exprs.ndcg(k=10)),
    }
    if core:
        return contenders
    contenders |= {
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
    return contenders


def run_shape(queries: int, docs: int, arguments: argparse.Namespace) -> None:
    print("\nuptime before:", load())
    df = frame(queries, docs, arguments.shuffle, arguments.tied)
    order = ("shuffled" if arguments.shuffle else "grouped") + (", every score tied" if arguments.tied else "")
    print(f"{df.height:,} rows, {queries:,} queries x {docs} documents, {order}; polars {pl.__version__}")

    if arguments.measures:
        for name in arguments.measures:
            time_contenders(measure_contenders(df, name), arguments.repeats)
    else:
        expected = df.rank_metrics.ndcg(k=10)
        assert_frame_equal(df.group_by("query").agg(exprs.ndcg(k=10)).sort("query"), expected, abs_tol=1e-12)
        time_contenders(contenders_for(df, arguments.core), arguments.repeats)
    print("\nuptime after:", load())


def time_contenders(contenders: dict[str, Callable[[], object]], repeats: int) -> None:
    """Every contender once per repeat, alternating; the table of medians against the first (the namespace)."""
    walls: dict[str, list[float]] = {name: [] for name in contenders}
    cpus: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(repeats):
        for name, run in contenders.items():
            cpu, start = cpu_seconds(), time.perf_counter()
            run()
            walls[name].append(time.perf_counter() - start)
            cpus[name].append(cpu_seconds() - cpu)

    baseline = next(iter(contenders))
    base_wall, base_cpu = statistics.median(walls[baseline]), statistics.median(cpus[baseline])
    print("\n| contender | median wall s | CPU s | wall / namespace | CPU / namespace |")
    print("|---|---:|---:|---:|---:|")
    for name in contenders:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        print(f"| {name} | {wall:.2f} | {cpu:.2f} | {wall / base_wall:.2f} | {cpu / base_cpu:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--shapes", type=lambda text: [shape(s) for s in text.split(",")], default=None)
    parser.add_argument("--shuffle", action="store_true")
    parser.add_argument("--core", action="store_true")
    parser.add_argument("--tied", action="store_true", help="every score 0.5: each query one tie block")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--measures", type=lambda text: text.split(","), default=None, help=f"of {', '.join(OTHER_MEASURES)}"
    )
    arguments = parser.parse_args()
    for queries, docs in arguments.shapes or [(arguments.queries, arguments.docs)]:
        run_shape(queries, docs, arguments)


if __name__ == "__main__":
    main()
