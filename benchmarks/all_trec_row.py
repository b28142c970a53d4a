"""trec_eval's whole `all_trec` set in one `evaluate` call against `ndcg(k=10)` alone, and against pytrec_eval's
evaluation call on the same measures, in one run (issue 20's speed target: <= 3x `ndcg(k=10)` on 10M rows,
faster than pytrec_eval).

    python benchmarks/all_trec_row.py [--queries 1000000] [--docs 10] [--repeats 3] [--peer-queries 100000]

Data: numpy seed 0, `queries` x `docs` rows grouped by query, relevance int8 0..4, score float64 rounded to 2
decimals (some ties).  The measures are those `lodestar-polars trec_eval -m all_trec` computes, with its default
parameters, as evaluate() names them (taken from the CLI's trec_eval table, so the list grows with it), called
as the CLI calls them: ties="doc" (trec_eval's order, which every measure has), doc="doc", no_relevant=0.
`ndcg(k=10)` is timed with the same options and with the defaults.  pytrec_eval runs its evaluation call alone
(its dicts built beforehand) with the trec_eval measures it knows among them, on the first `--peer-queries`
queries, scaled to all, in the same alternating loop.  Times are wall and CPU seconds, median of `repeats`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

import numpy as np
import polars as pl

import lodestar_polars  # noqa: F401  registers .rank_metrics
from lodestar_polars import trec_eval


def all_trec_measures() -> tuple[list[str], list[str]]:
    """(evaluate() names, trec_eval names) of the all_trec measures the CLI computes."""
    request = trec_eval.parse_trec_measures(["all_trec"])
    names: list[str] = []
    trec_names: list[str] = []
    for name, parameters in request.measures.items():
        if not trec_eval.TREC_BY_NAME[name].family:
            continue
        trec_names.append(name)
        names += [column for _, column in trec_eval.printed_columns(name, parameters)]
    return list(dict.fromkeys(names)), trec_names


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


def timed(function: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    function()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--queries", type=int, default=1_000_000)
    parser.add_argument("--docs", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--peer-queries", type=int, default=100_000)
    args = parser.parse_args()
    measures, trec_names = all_trec_measures()
    df = frame(args.queries, args.docs)
    trec_options = {"doc": "doc", "ties": "doc", "no_relevant": 0.0}
    contenders: dict[str, Callable[[], object]] = {
        "ndcg(k=10)": lambda: df.rank_metrics.ndcg(k=10),
        "ndcg(k=10), ties='doc'": lambda: df.rank_metrics.ndcg(k=10, doc="doc", ties="doc"),
        f"evaluate(all_trec: {len(measures)} columns), ties='doc'": lambda: df.rank_metrics.evaluate(
            measures, **trec_options
        ),
    }
    scale = args.queries / args.peer_queries
    scaled: set[str] = set()
    try:
        import pytrec_eval

        subset = df.filter(pl.col("query") < args.peer_queries)
        run: dict[str, dict[str, float]] = {}
        qrels: dict[str, dict[str, int]] = {}
        for query, doc, relevance, score in subset.iter_rows():
            run.setdefault(str(query), {})[str(doc)] = float(score)
            qrels.setdefault(str(query), {})[str(doc)] = int(relevance)
        known = set(pytrec_eval.supported_measures)
        theirs = [name for name in trec_names if name in known]
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(theirs))
        label = f"pytrec_eval ({len(theirs)} of the {len(trec_names)} measures), evaluation call only"
        contenders[label] = lambda: evaluator.evaluate(run)
        scaled.add(label)
    except ImportError as error:
        print(f"pytrec_eval skipped: {error}")
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in contenders}
    for _ in range(args.repeats):
        for name, function in contenders.items():
            wall, cpu = timed(function)
            factor = scale if name in scaled else 1.0
            times[name].append((wall * factor, cpu * factor))
    base_wall = statistics.median(w for w, _ in times["ndcg(k=10)"])
    base_cpu = statistics.median(c for _, c in times["ndcg(k=10)"])
    print(f"{args.queries:,} queries x {args.docs} docs = {df.height:,} rows; median of {args.repeats}")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    print(f"all_trec as evaluate() names: {', '.join(measures)}")
    for name, values in times.items():
        wall = statistics.median(w for w, _ in values)
        cpu = statistics.median(c for _, c in values)
        print(f"  {name:72s} {wall:8.3f} s {wall / base_wall:5.2f}x   CPU {cpu:8.3f} s {cpu / base_cpu:5.2f}x")
    if scaled:
        print(f"  (pytrec_eval on the first {args.peer_queries:,} queries, scaled x{scale:g})")


if __name__ == "__main__":
    main()
