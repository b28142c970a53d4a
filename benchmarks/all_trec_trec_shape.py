"""trec_eval's whole `all_trec` set on a TREC-shaped run with judgments, against `ndcg(k=10)` and against
pytrec_eval, in one run (issue 46's first speed target: all_trec at most 2.5x `ndcg(k=10)` in wall time, and
faster than pytrec_eval end to end from the same frames).

    python benchmarks/all_trec_trec_shape.py [--queries 20000] [--docs 100] [--judged 40] [--repeats 3]
                                             [--families]

Data (numpy seed 0): `queries` x `docs` run rows, String query and doc ids, scores rounded to 3 decimals (some
ties), rows shuffled; judgments of `judged` documents a query (half of them retrieved, half not), levels -1..3.
The measures are those `lodestar-polars trec_eval -m all_trec` computes, called as the CLI calls them
(ties="doc", no_relevant=0, qrels=).  pytrec_eval: its `evaluate` call alone with `ndcg_cut.10`, with every
measure it supports, and the cost of building its dicts from the frames (group_by().agg() then dict(zip())).
`--families` also times each measure family of all_trec alone (where the time goes).  Wall and CPU seconds,
median of `repeats`, every contender in one alternating loop.
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


def all_trec_measures() -> list[str]:
    """The all_trec measures the CLI computes, as evaluate() names them."""
    request = trec_eval.parse_trec_measures(["all_trec"])
    names: list[str] = []
    for name, parameters in request.measures.items():
        if not trec_eval.TREC_BY_NAME[name].family:
            continue
        names += [column for _, column in trec_eval.printed_columns(name, parameters)]
    return list(dict.fromkeys(names))


def frames(queries: int, docs: int, judged: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(0)
    rows = queries * docs
    run = pl.DataFrame(
        {
            "query": np.repeat(np.arange(queries), docs).astype(str),
            "doc": np.char.add("d", np.tile(np.arange(docs), queries).astype(str)),
            "score": rng.random(rows).round(3),
        }
    ).sample(fraction=1.0, shuffle=True, seed=0)
    # half of the judged documents retrieved (doc ids 0..docs-1), half not (ids from docs on)
    per_query = judged // 2
    retrieved = np.concatenate([rng.choice(docs, per_query, replace=False) for _ in range(queries)])
    unretrieved = np.tile(np.arange(docs, docs + judged - per_query), queries)
    qrels = pl.DataFrame(
        {
            "query": np.concatenate(
                [np.repeat(np.arange(queries), per_query), np.repeat(np.arange(queries), judged - per_query)]
            ).astype(str),
            "doc": np.char.add("d", np.concatenate([retrieved, unretrieved]).astype(str)),
            "relevance": rng.integers(-1, 4, queries * judged).astype(np.int64),
        }
    ).sample(fraction=1.0, shuffle=True, seed=1)
    return run, qrels


def timed(function: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    function()
    return time.perf_counter() - wall, time.process_time() - cpu


def family_of(column: str) -> str:
    head = column.split("@")[0]
    return head


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--queries", type=int, default=20_000)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--judged", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--families", action="store_true")
    parser.add_argument("--no-peer", action="store_true")
    args = parser.parse_args()
    measures = all_trec_measures()
    run, qrels = frames(args.queries, args.docs, args.judged)
    options = {"qrels": qrels, "doc": "doc", "ties": "doc", "no_relevant": 0.0}
    contenders: dict[str, Callable[[], object]] = {
        "ndcg(k=10)": lambda: run.rank_metrics.ndcg(k=10, **options),  # type: ignore[arg-type]
        f"evaluate(all_trec: {len(measures)} columns)": lambda: run.rank_metrics.evaluate(measures, **options),
    }
    if args.families:
        families: dict[str, list[str]] = {}
        for column in measures:
            families.setdefault(family_of(column), []).append(column)
        for family, columns in families.items():
            contenders[f"  {family} ({len(columns)})"] = lambda columns=columns: run.rank_metrics.evaluate(
                columns, **options
            )
    if not args.no_peer:
        import pytrec_eval

        def dicts() -> tuple[dict[str, dict[str, float]], dict[str, dict[str, int]]]:
            runs = run.group_by("query").agg("doc", "score")
            judged = qrels.group_by("query").agg("doc", "relevance")
            run_dict = {
                q: dict(zip(d, s, strict=True))
                for q, d, s in zip(runs["query"], runs["doc"].to_list(), runs["score"].to_list(), strict=True)
            }
            qrels_dict = {
                q: dict(zip(d, r, strict=True))
                for q, d, r in zip(judged["query"], judged["doc"].to_list(), judged["relevance"].to_list(), strict=True)
            }
            return run_dict, qrels_dict

        run_dict, qrels_dict = dicts()
        one = pytrec_eval.RelevanceEvaluator(qrels_dict, {"ndcg_cut.10"})
        every = pytrec_eval.RelevanceEvaluator(qrels_dict, pytrec_eval.supported_measures)
        contenders["pytrec_eval ndcg_cut.10, evaluate call"] = lambda: one.evaluate(run_dict)
        contenders["pytrec_eval every measure, evaluate call"] = lambda: every.evaluate(run_dict)
        contenders["pytrec_eval: building its dicts from the frames"] = dicts
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in contenders}
    loads = [os.getloadavg()[0]]
    for _ in range(args.repeats):
        for name, function in contenders.items():
            times[name].append(timed(function))
        loads.append(os.getloadavg()[0])
    medians = {
        name: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for name, v in times.items()
    }
    base_wall, base_cpu = medians["ndcg(k=10)"]
    print(
        f"{args.queries:,} queries x {args.docs} docs = {run.height:,} run rows, {qrels.height:,} judgments; "
        f"median of {args.repeats}; load {min(loads):.1f}-{max(loads):.1f}"
    )
    for name, (wall, cpu) in medians.items():
        print(f"  {name:60s} {wall:8.3f} s {wall / base_wall:5.2f}x   CPU {cpu:8.3f} s {cpu / base_cpu:5.2f}x")
    if not args.no_peer:
        end_to_end = medians["pytrec_eval every measure, evaluate call"][0]
        end_to_end += medians["pytrec_eval: building its dicts from the frames"][0]
        ours = medians[f"evaluate(all_trec: {len(measures)} columns)"][0]
        print(
            f"  pytrec_eval end to end (dicts + every measure): {end_to_end:.3f} s; "
            f"all_trec / that: {ours / end_to_end:.2f}x"
        )


if __name__ == "__main__":
    main()
