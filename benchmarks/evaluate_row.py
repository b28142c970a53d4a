"""`evaluate` with many measures against `ndcg(k=10)` alone, and against pytrec_eval's and ranx's evaluation
of the same measures, in one run.

    python benchmarks/evaluate_row.py [--queries 1000000] [--docs 10] [--repeats 3]

Data: numpy seed 0, `queries` x `docs` rows grouped by query, relevance int8 0..4, score float64 rounded to
2 decimals (some ties).  Measures: ndcg, dcg, p, r, ap, rr, success at k = 5, 10, 20 (21 columns), and the same plus
ap over the whole list.  Times are wall seconds, median of `repeats`, the contenders alternating.  pytrec_eval and
ranx run their evaluation call alone (the dicts they need built beforehand, timed once and printed apart) on the
first `--peer-queries` queries, scaled to all, in the same alternating loop.  The numbers printed are those to
copy into a dated section of HISTORY.md (and the target's row of RESULTS.md).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np
import polars as pl

import lodestar_polars  # noqa: F401  registers .rank_metrics

CUTOFFS = (5, 10, 20)
MEASURES = [f"{m}@{k}" for m in ("ndcg", "dcg", "p", "r", "ap", "rr", "success") for k in CUTOFFS]
WITH_UNCUT = [*MEASURES, "ap"]  # one measure over the whole list: every tie block enters the block group-by
TREC_NAMES = {"ndcg": "ndcg_cut", "p": "P", "r": "recall", "ap": "map_cut", "success": "success"}


def frame(queries: int, docs: int) -> pl.DataFrame:
    rng = np.random.default_rng(0)
    rows = queries * docs
    return pl.DataFrame(
        {
            "query": np.repeat(np.arange(queries, dtype=np.int64), docs),
            "doc": np.tile(np.arange(docs, dtype=np.int64), queries),
            "relevance": rng.integers(0, 5, rows).astype(np.int8),
            "score": rng.random(rows).round(2),
        }
    )


def timed(function: Callable[[], object]) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--queries", type=int, default=1_000_000)
    parser.add_argument("--docs", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--peer-queries", type=int, default=100_000)
    args = parser.parse_args()
    df = frame(args.queries, args.docs)
    subset = df.filter(pl.col("query") < args.peer_queries)
    scale = args.queries / args.peer_queries
    contenders: dict[str, Callable[[], object]] = {
        "ndcg(k=10)": lambda: df.rank_metrics.ndcg(k=10),
        f"evaluate({len(MEASURES)} columns)": lambda: df.rank_metrics.evaluate(MEASURES),
        f"evaluate + 'ap' ({len(WITH_UNCUT)} columns)": lambda: df.rank_metrics.evaluate(WITH_UNCUT),
        f"evaluate, ties='doc' ({len(MEASURES)} columns)": lambda: df.rank_metrics.evaluate(
            MEASURES, doc="doc", ties="doc"
        ),
    }
    build_start = time.perf_counter()
    run, qrels = peer_dicts(subset)
    build = (time.perf_counter() - build_start) * scale
    scaled = set()
    for name, function in peers(run, qrels).items():
        contenders[name] = function
        scaled.add(name)
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(args.repeats):
        for name, function in contenders.items():
            times[name].append(timed(function) * (scale if name in scaled else 1.0))
    base = statistics.median(times["ndcg(k=10)"])
    print(f"{args.queries:,} queries x {args.docs} docs = {df.height:,} rows; median of {args.repeats}")
    print(f"peers: evaluation call only, on the first {args.peer_queries:,} queries, scaled x{scale:g}")
    for name, values in times.items():
        print(f"  {name:60s} {statistics.median(values):8.3f} s  {statistics.median(values) / base:5.2f}x ndcg(k=10)")
    print(f"  building the dicts both peers need: {build:.3f} s (scaled)")


def peer_dicts(subset: pl.DataFrame) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, int]]]:
    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for query, doc, relevance, score in subset.iter_rows():
        run.setdefault(str(query), {})[str(doc)] = float(score)
        qrels.setdefault(str(query), {})[str(doc)] = int(relevance)
    return run, qrels


def peers(run: dict[str, dict[str, float]], qrels: dict[str, dict[str, int]]) -> dict[str, Callable[[], object]]:
    """The peers' evaluation calls (the dicts built beforehand), those installed."""
    calls: dict[str, Callable[[], object]] = {}
    try:
        import pytrec_eval

        names = {f"{TREC_NAMES.get(m, m)}.{','.join(map(str, CUTOFFS))}" for m in TREC_NAMES} | {"map", "recip_rank"}
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, names)
        calls["pytrec_eval (ndcg_cut, P, recall, map_cut, success @5,10,20; map; recip_rank)"] = lambda: (
            evaluator.evaluate(run)
        )
    except ImportError as error:
        print(f"  pytrec_eval skipped: {error}")
    try:
        from ranx import Qrels, Run, evaluate

        ranx_metrics = [f"{m}@{k}" for m in ("ndcg", "precision", "recall", "map", "mrr", "hit_rate") for k in CUTOFFS]
        ranx_run, ranx_qrels = Run(run), Qrels(qrels)
        evaluate(ranx_qrels, ranx_run, ranx_metrics[:1])  # numba compilation, not timed
        calls[f"ranx ({len(ranx_metrics)} metrics)"] = lambda: evaluate(ranx_qrels, ranx_run, ranx_metrics)
    except ImportError as error:
        print(f"  ranx skipped: {error}")
    return calls


if __name__ == "__main__":
    main()
