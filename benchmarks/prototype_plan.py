"""Benchmark-only prototypes of restructured NDCG plans, measured against the package's own plan.

Each prototype replaces only `lodestar_polars._plan._per_query_unchecked` (the windows and the
aggregation); the input selection (`_run_rows`), the data-check counters, `_finalise`, the final sort and
the check stage are the package's own, so the timings compare like with like.  Every prototype is checked
against the package's output before it is timed.

    python benchmarks/prototype_plan.py [--quick]

Prototypes (tie-averaged NDCG/DCG with finite cut-offs, no qrels: the benchmarked path):

- `package`: the plan as shipped: rank("ordinal") windows on score and on the Float64 gain,
  group_by(query, score), then group_by(query).
- `ideal_on_relevance`: as shipped, but the ideal position ranks the raw relevance column (Int8 here)
  instead of the Float64 gain; valid whenever the gain is a non-decreasing function of relevance
  (linear, exponential), as ties within the ideal order do not change the ideal DCG.
- `block_ranks`: no group_by(query, score).  A tie block covers positions rank("min")..rank("max") of the
  score (two windows), so its summed discount is C(min(max, k)) - C(min(min - 1, k)) with C the
  cumulative discount table C(p) = sum_{j<=p} 1/log_b(j + 1), read with `pl.lit(table).gather(...)`.
  Each row then adds gain * block discount sum / block size in a single group_by(query).
- `block_ranks_rel`: `block_ranks` plus the ideal ranked on relevance.
- `block_ranks_counts`: `block_ranks` for the DCG; the ideal from group_by(query, relevance) counts
  (a few rows per query when relevance has few levels), their running sum in descending relevance order
  (`cum_sum().over(query, order_by=...)`) giving each level's positions, joined back per query.
- `block_ranks_shared`: `block_ranks_rel` with the per-row work shared by the cut-offs (see its docstring).
- `*_sorted`: the same plan with the query column flagged sorted (`set_sorted`), as a core option
  `presorted=True` (or a cheap `is_sorted` check on DataFrames) could do.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Callable

import numpy as np
import polars as pl

import lodestar_polars  # noqa: F401  registers .rank_metrics
from lodestar_polars import _plan as P
from lodestar_polars._options import MetricOptions, make_options

FIRST = "__proto_first"
LAST = "__proto_last"
ORIGINAL = P._per_query_unchecked


def _cumulative_discount(o: MetricOptions) -> pl.Expr:
    """C(p) = sum_{j=1..p} 1/log_b(j + 1) for p = 0..max cut-off, as a literal to gather from."""
    top = max(c for c in o.cutoffs if c is not None)
    positions = np.arange(1, top + 1, dtype=np.float64)
    table = np.concatenate(([0.0], np.cumsum(math.log(o.log_base) / np.log(positions + 1.0))))
    return pl.lit(pl.Series("__proto_cumulative_discount", table))


def _block_discount_sum(first: pl.Expr, last: pl.Expr, cumulative: pl.Expr, k: int) -> pl.Expr:
    """Sum of the discounts of 1-based positions first..last, positions past k weighing 0."""
    return cumulative.gather(last.clip(upper_bound=k)) - cumulative.gather((first - 1).clip(upper_bound=k))


def _ideal_source(o: MetricOptions, on_relevance: bool) -> pl.Expr:
    monotone = o.gain in ("linear", "exponential")
    return pl.col(P.RELEVANCE) if on_relevance and monotone else pl.col(P.GAIN)


def ideal_on_relevance(frame: pl.LazyFrame, o: MetricOptions) -> pl.LazyFrame:
    rows = P._run_rows(frame, o)
    rows = rows.with_columns(
        pl.col(P.SCORE).rank("ordinal", descending=True).over(P.QUERY).alias(P.POSITION),
        _ideal_source(o, True).rank("ordinal", descending=True).over(P.QUERY).alias(P.IDEAL_POSITION),
    )
    return P._finalise(P._aggregate_per_query(rows, o, P._dcg_sums(o)), o)


def _block_ranks(frame: pl.LazyFrame, o: MetricOptions, ideal: str) -> pl.LazyFrame:
    if o.ties != "average" or o.qrels is not None or o.doc is not None or None in o.cutoffs:
        return ORIGINAL(frame, o)
    rows = P._run_rows(frame, o)
    score = pl.col(P.SCORE)
    windows = [
        score.rank("min", descending=True).over(P.QUERY).alias(FIRST),
        score.rank("max", descending=True).over(P.QUERY).alias(LAST),
    ]
    if ideal != "counts":
        source = _ideal_source(o, ideal == "relevance")
        windows.append(source.rank("ordinal", descending=True).over(P.QUERY).alias(P.IDEAL_POSITION))
    rows = rows.with_columns(windows)
    cumulative = _cumulative_discount(o)
    gain, first, last = pl.col(P.GAIN), pl.col(FIRST), pl.col(LAST)
    block_size = (last - first + 1).cast(pl.Float64)
    sums = []
    for k in o.cutoffs:
        assert k is not None
        # scikit-learn's tie averaging, row by row: the row's gain times its block's mean discount
        sums.append((gain * _block_discount_sum(first, last, cumulative, k) / block_size).sum().alias(P._dcg_column(k)))
        if o.metric == "ndcg" and ideal != "counts":
            position = pl.col(P.IDEAL_POSITION)
            sums.append((gain * _block_discount_sum(position, position, cumulative, k)).sum().alias(P._ideal_column(k)))
    per_query = rows.group_by(P.QUERY).agg(*sums, *P._check_counters(o, rows.collect_schema()))
    if o.metric == "ndcg" and ideal == "counts":
        levels = rows.group_by(P.QUERY, P.GAIN).agg(pl.len().alias("__proto_count"))
        count = pl.col("__proto_count")
        end = count.cum_sum().over(P.QUERY, order_by=P.GAIN, descending=True)
        levels = levels.with_columns(end.alias(LAST)).with_columns((pl.col(LAST) - count + 1).alias(FIRST))
        ideals = levels.group_by(P.QUERY).agg(
            (gain * _block_discount_sum(first, last, cumulative, k)).sum().alias(P._ideal_column(k))
            for k in o.cutoffs
            if k is not None
        )
        per_query = per_query.join(ideals, on=P.QUERY, how="left", nulls_equal=True)
    return P._finalise(per_query, o)


def _discount_table(o: MetricOptions) -> tuple[np.ndarray, int]:
    """d[p] = 1/log_b(p + 1) for p = 1..K, d[0] = d[K + 1] = 0; and K, the largest cut-off."""
    top = max(c for c in o.cutoffs if c is not None)
    positions = np.arange(1, top + 1, dtype=np.float64)
    return np.concatenate(([0.0], math.log(o.log_base) / np.log(positions + 1.0), [0.0])), top


def block_ranks_shared(frame: pl.LazyFrame, o: MetricOptions) -> pl.LazyFrame:
    """`block_ranks_rel` with the per-row work shared by all cut-offs: two gathers per row in all.

    With C the cumulative discount (C[p] = d[1] + ... + d[p]) a row in the tie block first..last earns, at
    cut-off k: gain / size * (C[last] - C[first - 1]) when last <= k (the whole block is in; the same
    for every such k), gain / size * (C[k] - C[first - 1]) when first <= k < last (a literal C[k]), else 0.
    The ideal row earns gain * d[ideal position] when that position is <= k.
    """
    if o.ties != "average" or o.qrels is not None or o.doc is not None or None in o.cutoffs:
        return ORIGINAL(frame, o)
    d, top = _discount_table(o)
    c = np.cumsum(d[: top + 1])  # C[0..K]
    rows = P._run_rows(frame, o)
    score = pl.col(P.SCORE)
    rows = rows.with_columns(
        score.rank("min", descending=True).over(P.QUERY).alias(FIRST),
        score.rank("max", descending=True).over(P.QUERY).alias(LAST),
        _ideal_source(o, True).rank("ordinal", descending=True).over(P.QUERY).alias(P.IDEAL_POSITION),
    )
    gain, first, last, ideal_position = pl.col(P.GAIN), pl.col(FIRST), pl.col(LAST), pl.col(P.IDEAL_POSITION)
    cumulative = pl.lit(pl.Series("__proto_c", c))
    before = cumulative.gather((first - 1).clip(upper_bound=top))
    share = gain / (last - first + 1).cast(pl.Float64)
    rows = rows.with_columns(
        (share * (cumulative.gather(last.clip(upper_bound=top)) - before)).alias("__proto_whole_block"),
        share.alias("__proto_share"),
        before.alias("__proto_before"),
        (gain * pl.lit(pl.Series("__proto_d", d)).gather(ideal_position.clip(upper_bound=top + 1))).alias(
            "__proto_ideal"
        ),
    )
    whole_block, share, before = pl.col("__proto_whole_block"), pl.col("__proto_share"), pl.col("__proto_before")
    sums = []
    for k in o.cutoffs:
        assert k is not None
        term = pl.when(last <= k).then(whole_block).when(first <= k).then(share * (float(c[k]) - before)).otherwise(0.0)
        sums.append(term.sum().alias(P._dcg_column(k)))
        if o.metric == "ndcg":
            sums.append(pl.col("__proto_ideal").filter(ideal_position <= k).sum().alias(P._ideal_column(k)))
    per_query = rows.group_by(P.QUERY).agg(*sums, *P._check_counters(o, rows.collect_schema()))
    return P._finalise(per_query, o)


PROTOTYPES: dict[str, Callable[[pl.LazyFrame, MetricOptions], pl.LazyFrame]] = {
    "package": ORIGINAL,
    "ideal_on_relevance": ideal_on_relevance,
    "block_ranks": lambda f, o: _block_ranks(f, o, "gain"),
    "block_ranks_rel": lambda f, o: _block_ranks(f, o, "relevance"),
    "block_ranks_counts": lambda f, o: _block_ranks(f, o, "counts"),
    "block_ranks_shared": block_ranks_shared,
}


def plan(name: str, frame: pl.LazyFrame, k: int | list[int], presorted: bool = False) -> pl.LazyFrame:
    """The per-query NDCG plan with `name`'s middle stage; the rest is the package's."""
    if presorted:
        frame = frame.with_columns(pl.col("query").set_sorted())
    options = make_options(
        "ndcg", query="query", relevance="relevance", score="score", doc=None, k=k, ties="average",
        gain="linear", weight=None, no_relevant=0.0, qrels=None, missing_queries="skip",
    )  # fmt: skip
    P._per_query_unchecked = PROTOTYPES[name]
    try:
        return P.per_query_plan(frame, options)
    finally:
        P._per_query_unchecked = ORIGINAL


def make_frame(shape: str, scale: float) -> pl.DataFrame:
    """The same deterministic data as benchmarks/run.py."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from run import make_shape

    return make_shape(shape, scale).frame


def verify() -> None:
    rng = np.random.default_rng(1)
    for n_queries, tied in [(300, True), (300, False)]:
        lengths = rng.integers(1, 40, n_queries)
        rows = int(lengths.sum())
        score = rng.integers(0, 3, rows).astype(np.float64) if tied else rng.random(rows)
        frame = pl.DataFrame(
            {
                "query": np.repeat(rng.permutation(n_queries), lengths),
                "relevance": rng.integers(0, 4, rows).astype(np.int8),
                "score": score,
            }
        ).sample(fraction=1.0, shuffle=True, seed=3)
        for k in (1, 3, [1, 3, 5, 10, 20]):
            expected = plan("package", frame.lazy(), k).collect()
            for name in PROTOTYPES:
                for engine in ("streaming", "in-memory"):
                    got = plan(name, frame.lazy(), k).collect(engine=engine)
                    assert got.columns == expected.columns and got["query"].equals(expected["query"]), name
                    for column in expected.columns[1:]:
                        diff = (got[column] - expected[column]).abs().max()
                        assert diff is not None and diff < 1e-12, (name, engine, k, column, diff)


def profile(shape: str, scale: float, repeats: int) -> None:
    """Time each node of the package's plan on its own (a window, a group-by) and the plan with parts
    cut off, on `shape`; each ends in a cheap reduction so the node must run in full."""
    frame = make_frame(shape, scale)
    options = make_options(
        "ndcg", query="query", relevance="relevance", score="score", doc=None, k=10, ties="average",
        gain="linear", weight=None, no_relevant=0.0, qrels=None, missing_queries="skip",
    )  # fmt: skip
    rows = P._run_rows(frame.lazy(), options)
    q, s, g, r = P.QUERY, P.SCORE, P.GAIN, P.RELEVANCE
    position = pl.col(s).rank("ordinal", descending=True).over(q)
    windows = rows.with_columns(
        position.alias(P.POSITION), pl.col(g).rank("ordinal", descending=True).over(q).alias(P.IDEAL_POSITION)
    )

    def descending_rank(column: str) -> pl.Expr:
        return pl.col(column).rank("ordinal", descending=True).over(q)

    reaching = P._rows_in_blocks_reaching_the_cutoff(windows, options)
    block_sums = {name: block for name, (_, block) in P._dcg_sums(options).items() if block is not None}
    row_sums = [row.alias(name) for name, (row, block) in P._dcg_sums(options).items() if block is None]
    counters = P._check_counters(options, windows.collect_schema())
    parts = {
        "input selection only (sum of columns)": rows.select(pl.all().sum()),
        "rank(ordinal) of score over query": rows.select(position.sum()),
        "rank(ordinal) of Float64 gain over query": rows.select(descending_rank(g).sum()),
        "rank(ordinal) of Int8 relevance over query": rows.select(descending_rank(r).sum()),
        "rank(min) + rank(max) of score over query": rows.select(
            pl.col(s).rank("min", descending=True).over(q).sum().alias("a"),
            pl.col(s).rank("max", descending=True).over(q).sum().alias("b"),
        ),
        "group_by(query, score) on all rows (old plan)": rows.group_by(q, s).agg(pl.len()).select(pl.len()),
        "both rank windows (plan prefix)": windows.select(pl.col(P.POSITION).sum(), pl.col(P.IDEAL_POSITION).sum()),
        "+ filter to blocks reaching k (min().over window)": reaching.select(pl.len(), pl.col(g).sum()),
        "+ group_by(query, score) of those blocks": reaching.group_by(q, s)
        .agg(e.alias(n) for n, e in block_sums.items())
        .select(pl.all().exclude(q, s).sum()),
        "windows + per-query group_by (ideal, counters)": windows.group_by(q)
        .agg(*row_sums, *counters)
        .select(pl.all().exclude(q).sum()),
        "windows + _aggregate_per_query (both + join)": P._aggregate_per_query(windows, options, P._dcg_sums(options))
        .select(pl.all().exclude(q).sum()),
        "whole per-query plan (+ finalise, sort, checks)": P.per_query_plan(frame.lazy(), options),
    }  # fmt: skip
    print(f"profile of the package plan on {shape} (k=10), median of {repeats}")
    print(f"{'part':56s} {'streaming s':>11s} {'CPU s':>6s} {'in-memory s':>11s} {'CPU s':>6s}")
    for name, lazy in parts.items():
        cells = []
        for engine in ("streaming", "in-memory"):
            walls, cpus = [], []
            for _ in range(repeats):
                cpu_start, start = _cpu(), time.perf_counter()
                lazy.collect(engine=engine)
                walls.append(time.perf_counter() - start)
                cpus.append(_cpu() - cpu_start)
            cells.append(f"{np.median(walls):11.3f} {np.median(cpus):6.2f}")
        print(f"{name:56s} {' '.join(cells)}  load1 {os.getloadavg()[0]:.1f}", flush=True)


def _cpu() -> float:
    times = os.times()
    return times.user + times.system


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1/20 of the data")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--engines", nargs="*", default=["streaming", "in-memory"])
    parser.add_argument("--cases", type=int, nargs="*", help="indices into the case list")
    parser.add_argument("--variants", nargs="*", help="prototype names (default: all but block_ranks)")
    parser.add_argument("--profile", metavar="SHAPE", help="time the package plan's nodes on SHAPE and stop")
    args = parser.parse_args()
    if args.profile:
        profile(args.profile, 0.05 if args.quick else 1.0, args.repeats)
        return
    verify()
    print("all prototypes agree with the package (|diff| < 1e-12, both engines)", flush=True)
    scale = 0.05 if args.quick else 1.0
    five = [1, 3, 5, 10, 20]
    cases = [
        ("100k x 100", 10),
        ("100k x 100", five),
        ("ties 100k x 100", 10),
        ("1M x 10", 10),
        ("ragged Zipf 1..1000", five),
        ("1M x 10", five),
        ("ragged Zipf 1..1000", 10),
    ]
    if args.cases:
        cases = [cases[i] for i in args.cases]
    names = args.variants or [n for n in PROTOTYPES if n != "block_ranks"]
    variants = [(name, False) for name in names] + [("package", True), ("block_ranks_shared", True)]
    engines = args.engines
    print(
        f"{'shape':20s} {'k':17s} {'plan':26s} "
        + " ".join(f"{e + ' s':>12s} {'CPU s':>6s}" for e in engines)
        + "  load1"
    )
    for shape, k in cases:
        frame = make_frame(shape, scale)
        timings: dict[tuple[str, bool, str], list[float]] = {}
        cpu: dict[tuple[str, bool, str], list[float]] = {}
        for _ in range(args.repeats):  # alternate the variants within each repeat
            for name, presorted in variants:
                for engine in engines:
                    lazy = plan(name, frame.lazy(), k, presorted)
                    cpu_start, start = _cpu(), time.perf_counter()
                    lazy.collect(engine=engine)
                    timings.setdefault((name, presorted, engine), []).append(time.perf_counter() - start)
                    cpu.setdefault((name, presorted, engine), []).append(_cpu() - cpu_start)
        for name, presorted in variants:
            label = name + ("_sorted" if presorted else "")
            cells = " ".join(
                f"{np.median(timings[(name, presorted, e)]):12.3f} {np.median(cpu[(name, presorted, e)]):6.2f}"
                for e in engines
            )
            print(f"{shape:20s} {k!s:17s} {label:26s} {cells}  {os.getloadavg()[0]:.1f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
