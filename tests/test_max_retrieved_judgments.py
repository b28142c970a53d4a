"""`max_retrieved=M` without `qrels` (the relevance in the frame): the rows past the first M are no longer
retrieved, but their relevance still counts as judgments, as trec_eval -M cuts the run and leaves the judgments
file whole: R, the ideal orders and the judged counts see every row, the terms over positions the first M."""

from __future__ import annotations

import math
import random

import polars as pl
import pytest
import pytrec_eval

# per query: (doc, score, relevance); ties="doc" orders by score, then doc id descending
Rows = list[tuple[str, float, int]]


def scored(rows: Rows, measures: list[str], limit: int, **options: object) -> dict[str, float | None]:
    frame = pl.DataFrame(rows, schema={"doc": pl.String, "score": pl.Float64, "relevance": pl.Int64}, orient="row")
    frame = frame.with_columns(pl.lit("q").alias("query"))
    result = frame.rank_metrics.evaluate(measures, doc="doc", ties="doc", max_retrieved=limit, **options)
    lazy = frame.lazy().rank_metrics.evaluate(measures, doc="doc", ties="doc", max_retrieved=limit, **options)
    assert lazy.collect().equals(result)
    return result.drop("query").row(0, named=True)


# every derivation: R and the ideal order over every row, the measure's sum over the first `limit` rows
HAND_DERIVED = [
    pytest.param(
        [("d0", 3.0, 1), ("d1", 2.0, 1)],
        1,
        # retrieved d0 (relevant); R = 2: r = 1/2, AP = (1/1) / 2, Rprec = 1 relevant in the first R = 2 / 2;
        # bpref: N = 0, d0 has no non-relevant above: 1 / R; ndcg: DCG 1, ideal 1 + 1/log2(3)
        {"r": 0.5, "ap": 0.5, "rprec": 0.5, "bpref": 0.5, "ndcg": 1 / (1 + 1 / math.log2(3))},
        id="second-relevant-cut",
    ),
    pytest.param(
        [("d0", 1.0, 3), ("d1", 2.0, 0), ("d2", 3.0, 0)],
        1,
        # retrieved d2 (relevance 0); R = 1 (d0, cut): recall 0, ndcg 0, not the null of a query without any
        {"r": 0.0, "ndcg": 0.0},
        id="only-relevant-cut",
    ),
    pytest.param(
        [("d0", 3.0, 0), ("d1", 2.0, 1), ("d2", 1.0, 1)],
        2,
        # retrieved d0, d1; R = 2: AP = (1/2) / 2; Rprec = 1 relevant in the first 2 / 2
        {"ap": 0.25, "rprec": 0.5, "r": 0.5},
        id="ap-and-rprec",
    ),
    pytest.param(
        [("d0", 5.0, 0), ("d1", 4.0, 1), ("d2", 3.0, 1), ("d3", 2.0, 0), ("d4", 1.0, 0)],
        2,
        # retrieved d0 (non-relevant), d1 (relevant); R = 2, N = 3: d1 scores 1 - min(1, R) / min(R, N) = 1/2,
        # bpref = (1/2) / R
        {"bpref": 0.25},
        id="bpref-judged-counts",
    ),
    pytest.param(
        [("d0", 3.0, 1), ("d1", 2.0, 0), ("d2", 1.0, 2)],
        2,
        # linear gain, DCG = 1 (d0 at 1); the ideal puts d2 (gain 2) first: 2 + 1/log2(3)
        {"ndcg": 1 / (2 + 1 / math.log2(3))},
        id="ndcg-ideal-over-cut-rows",
    ),
]


@pytest.mark.parametrize(("rows", "limit", "expected"), HAND_DERIVED)
def test_the_rows_cut_still_count_as_judgments(rows: Rows, limit: int, expected: dict[str, float]) -> None:
    names = {"r": "recall", "ap": "map", "rprec": "Rprec", "bpref": "bpref", "ndcg": "ndcg"}
    got = scored(rows, [names[column] for column in expected], limit, no_relevant=None)
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_by_groups_keep_their_own_judgments() -> None:
    """The same query key in two by groups: each list's cut rows judge within its group only."""
    frame = pl.DataFrame(
        {
            "system": ["a", "a", "b", "b"],
            "query": ["q"] * 4,
            "doc": ["d0", "d1", "d0", "d1"],
            "score": [2.0, 1.0, 2.0, 1.0],
            "relevance": [1, 1, 1, 0],
        }
    )
    got = frame.rank_metrics.evaluate(["recall"], doc="doc", by="system", ties="doc", max_retrieved=1)
    assert got["r"].to_list() == [0.5, 1.0]


# P@5, recall, AP, nDCG, R-precision and bpref under both names, ours first
PYTREC_MEASURES = {"p@5": "P_5", "r": "set_recall", "ap": "map", "ndcg": "ndcg", "rprec": "Rprec", "bpref": "bpref"}


def random_frame(generator: random.Random) -> pl.DataFrame:
    """1-4 queries of 1-12 documents, scores from 4 values (ties), labels 0-3."""
    rows = []
    for q in range(generator.randint(1, 4)):
        docs = generator.sample(range(20), generator.randint(1, 12))
        rows += [(f"q{q}", f"d{d}", float(generator.randint(0, 3)), generator.randint(0, 3)) for d in docs]
    return pl.DataFrame(rows, schema=["query", "doc", "score", "relevance"], orient="row")


@pytest.mark.parametrize("seed", range(40))
def test_equals_pytrec_eval_on_the_run_cut_by_hand(seed: int) -> None:
    """pytrec_eval's run: each query's first M rows (M below the longest list's length) by score, then doc
    id descending (trec_eval's order, ties='doc'), cut by hand; its judgments: every row of the frame."""
    generator = random.Random(seed)
    frame = random_frame(generator)
    longest = frame.group_by("query").len()["len"].max()
    assert isinstance(longest, int)
    limit = generator.randint(1, max(1, longest - 1))  # a cut of the longest list, when it has two rows
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for query, doc, _, relevance in frame.iter_rows():
        qrels.setdefault(query, {})[doc] = relevance
    ordered = frame.sort(["query", "score", "doc"], descending=[False, True, True])
    for query, doc, score, _ in ordered.iter_rows():
        if len(run.setdefault(query, {})) < limit:
            run[query][doc] = score
    expected = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC_MEASURES.values())).evaluate(run)
    got = frame.rank_metrics.evaluate(list(PYTREC_MEASURES), doc="doc", ties="doc", max_retrieved=limit)
    for row in got.iter_rows(named=True):
        for ours, theirs in PYTREC_MEASURES.items():
            assert row[ours] == pytest.approx(expected[row["query"]][theirs], abs=1e-12), (ours, row, limit)
