"""Reciprocal rank: the tie-averaged value against brute-force enumeration of the tied orders, and the
deterministic tie modes against a plain-Python reference that sorts by the tie rule."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lodestar_polars  # noqa: F401  (registers .rank_metrics)
from lodestar_polars import rank_metrics

TOLERANCE = 1e-12
ENGINES = ["in-memory", "streaming"]


@dataclass(frozen=True)
class Row:
    query: str
    doc: str
    score: float
    relevance: int
    weight: float


def _queries(rows: Sequence[Row]) -> dict[str, list[Row]]:
    grouped: dict[str, list[Row]] = {}
    for row in rows:
        grouped.setdefault(row.query, []).append(row)
    return grouped


def _reciprocal_rank(ordered: Sequence[Row], threshold: float, k: int | None) -> Fraction:
    for position, row in enumerate(ordered, start=1):
        if k is not None and position > k:
            break
        if row.relevance > threshold:
            return Fraction(1, position)
    return Fraction(0)


def _tied_orders(rows: Sequence[Row]) -> Iterator[list[Row]]:
    """Every order of the rows by descending score: each tie group in every one of its permutations."""
    groups = [list(group) for _, group in itertools.groupby(sorted(rows, key=lambda r: -r.score), lambda r: r.score)]
    for choice in itertools.product(*(itertools.permutations(group) for group in groups)):
        yield [row for group in choice for row in group]


def expected_reciprocal_rank(rows: Sequence[Row], threshold: float, k: int | None) -> float:
    """Mean reciprocal rank over all orders of the tied documents, each order equally likely (exact)."""
    orders = list(_tied_orders(rows))
    return float(sum(_reciprocal_rank(order, threshold, k) for order in orders) / len(orders))


def ordered_by_rule(rows: Sequence[Row], ties: str) -> list[Row]:
    """The rows by descending score, ties broken as the named rule says (Python's sort is stable)."""
    indexed = list(enumerate(rows))
    if ties == "input":
        key = lambda item: (-item[1].score, item[0])  # noqa: E731
    elif ties == "reverse":
        key = lambda item: (-item[1].score, -item[0])  # noqa: E731
    elif ties == "optimistic":
        key = lambda item: (-item[1].score, -item[1].relevance)  # noqa: E731
    elif ties == "pessimistic":
        key = lambda item: (-item[1].score, item[1].relevance)  # noqa: E731
    elif ties == "doc":
        # score descending, then doc id descending (trec_eval); the reverse of ascending (score, doc)
        return [row for _, row in sorted(indexed, key=lambda item: (item[1].score, item[1].doc), reverse=True)]
    else:
        raise AssertionError(ties)
    return [row for _, row in sorted(indexed, key=key)]


def _frame(rows: Sequence[Row]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "query": [r.query for r in rows],
            "doc": [r.doc for r in rows],
            "score": [r.score for r in rows],
            "relevance": [r.relevance for r in rows],
            "weight": [r.weight for r in rows],
        },
        schema={
            "query": pl.String,
            "doc": pl.String,
            "score": pl.Float64,
            "relevance": pl.Int64,
            "weight": pl.Float64,
        },
    )


def _column(cutoff: int | None) -> str:
    return "reciprocal_rank" if cutoff is None else f"reciprocal_rank@{cutoff}"


@st.composite
def ranked_queries(draw: st.DrawFn, max_docs: int = 7) -> list[Row]:
    """1-4 queries of 1-`max_docs` documents; scores from a small grid so that ties are common."""
    rows: list[Row] = []
    for q in range(draw(st.integers(1, 4))):
        size = draw(st.integers(1, max_docs))
        docs = draw(st.lists(st.sampled_from("abcdefghij"), min_size=size, max_size=size, unique=True))
        weight = draw(st.sampled_from([0.5, 1.0, 2.0, 3.25]))
        for doc in docs:
            score = draw(st.sampled_from([0.0, 0.5, 1.0, 2.0]))
            relevance = draw(st.integers(0, 3))
            rows.append(Row(f"q{q}", doc, score, relevance, weight))
    return rows


CUTOFFS: list[int | None] = [None, 1, 2, 3, 5]


class TestTieAveraged:
    def test_three_tied_documents_one_relevant(self) -> None:
        df = pl.DataFrame({"query": [1, 1, 1], "relevance": [0, 1, 0], "score": [0.5, 0.5, 0.5]})
        result = df.rank_metrics.reciprocal_rank()
        assert result["reciprocal_rank"].item() == pytest.approx((1 + 1 / 2 + 1 / 3) / 3, abs=TOLERANCE)

    def test_tie_block_straddling_the_cutoff_gets_partial_credit(self) -> None:
        # first relevant among 2 relevant in a block of 4 after 1 document; k=2 keeps only offset 1
        df = pl.DataFrame({"query": [1] * 5, "relevance": [0, 1, 1, 0, 0], "score": [9.0, 1.0, 1.0, 1.0, 1.0]})
        result = df.rank_metrics.reciprocal_rank(k=[None, 2])
        rows = [Row("1", str(i), s, r, 1.0) for i, (s, r) in enumerate(zip(df["score"], df["relevance"], strict=True))]
        assert result["reciprocal_rank@2"].item() == pytest.approx(0.5 * 2 / 4, abs=TOLERANCE)
        assert result["reciprocal_rank"].item() == pytest.approx(
            expected_reciprocal_rank(rows, 0.0, None), abs=TOLERANCE
        )

    @settings(max_examples=150, deadline=None)
    @given(rows=ranked_queries(), threshold=st.sampled_from([0.0, 0.5, 1.0, 2.0]))
    def test_equals_the_mean_over_every_order_of_the_tied_documents(self, rows: list[Row], threshold: float) -> None:
        result = _frame(rows).rank_metrics.reciprocal_rank(k=CUTOFFS, threshold=threshold)
        queries = _queries(rows)
        assert result["query"].to_list() == sorted(queries)
        for cutoff in CUTOFFS:
            expected = [expected_reciprocal_rank(queries[q], threshold, cutoff) for q in sorted(queries)]
            assert result[_column(cutoff)].to_list() == pytest.approx(expected, abs=TOLERANCE, rel=0)

    @pytest.mark.parametrize("engine", ENGINES)
    @settings(max_examples=40, deadline=None)
    @given(rows=ranked_queries(), threshold=st.sampled_from([0.0, 1.0]))
    def test_weighted_mean_over_queries(self, engine: str, rows: list[Row], threshold: float) -> None:
        lazy = _frame(rows).lazy()
        mean = rank_metrics(lazy).reciprocal_rank_mean(k=CUTOFFS, threshold=threshold, weight="weight")
        result = mean.collect(engine=engine)  # type: ignore[call-overload]  # engine is one of ENGINES
        queries = _queries(rows)
        weights = {q: group[0].weight for q, group in queries.items()}
        for cutoff in CUTOFFS:
            expected = sum(
                weights[q] * expected_reciprocal_rank(group, threshold, cutoff) for q, group in queries.items()
            ) / sum(weights.values())
            assert result[_column(cutoff)].item() == pytest.approx(expected, abs=TOLERANCE, rel=0)
        assert result["queries"].item() == len(queries)
        assert result["weight_sum"].item() == pytest.approx(sum(weights.values()), abs=TOLERANCE)

    def test_a_query_of_many_tied_documents(self) -> None:
        # closed form: one relevant among n tied documents -> H(n) / n
        n = 500
        df = pl.DataFrame({"query": [1] * n, "relevance": [1] + [0] * (n - 1), "score": [1.0] * n})
        harmonic = math.fsum(1 / i for i in range(1, n + 1))
        assert df.rank_metrics.reciprocal_rank()["reciprocal_rank"].item() == pytest.approx(harmonic / n, abs=TOLERANCE)


class TestDeterministicTies:
    @pytest.mark.parametrize("ties", ["input", "reverse", "doc", "optimistic", "pessimistic"])
    @settings(max_examples=60, deadline=None)
    @given(rows=ranked_queries(max_docs=9), threshold=st.sampled_from([0.0, 0.5, 1.0, 2.0]))
    def test_equals_the_reference_order(self, ties: str, rows: list[Row], threshold: float) -> None:
        result = _frame(rows).rank_metrics.reciprocal_rank(
            k=CUTOFFS,
            threshold=threshold,
            ties=ties,  # type: ignore[arg-type]  # parametrised over the Ties literals
            doc="doc",
            weight="weight",
        )
        queries = _queries(rows)
        for cutoff in CUTOFFS:
            expected = [
                float(_reciprocal_rank(ordered_by_rule(queries[q], ties), threshold, cutoff)) for q in sorted(queries)
            ]
            assert result[_column(cutoff)].to_list() == pytest.approx(expected, abs=TOLERANCE, rel=0)
        assert result["weight"].to_list() == [queries[q][0].weight for q in sorted(queries)]

    @pytest.mark.parametrize("ties", ["input", "reverse", "doc", "optimistic", "pessimistic"])
    @settings(max_examples=30, deadline=None)
    @given(rows=ranked_queries(max_docs=9))
    def test_weighted_mean(self, ties: str, rows: list[Row]) -> None:
        result = _frame(rows).rank_metrics.reciprocal_rank_mean(
            k=CUTOFFS,
            ties=ties,  # type: ignore[arg-type]  # parametrised over the Ties literals
            doc="doc",
            weight="weight",
        )
        queries = _queries(rows)
        total = sum(group[0].weight for group in queries.values())
        for cutoff in CUTOFFS:
            expected = (
                sum(
                    group[0].weight * float(_reciprocal_rank(ordered_by_rule(group, ties), 0.0, cutoff))
                    for group in queries.values()
                )
                / total
            )
            assert result[_column(cutoff)].item() == pytest.approx(expected, abs=TOLERANCE, rel=0)

    def test_optimistic_and_pessimistic_bound_the_average(self) -> None:
        df = pl.DataFrame({"query": [1] * 4, "relevance": [0, 0, 1, 0], "score": [2.0, 1.0, 1.0, 1.0]})
        values = {
            ties: df.rank_metrics.reciprocal_rank(ties=ties)["reciprocal_rank"].item()  # type: ignore[arg-type]
            for ties in ("optimistic", "average", "pessimistic")
        }
        assert values["optimistic"] == pytest.approx(1 / 2)
        assert values["pessimistic"] == pytest.approx(1 / 4)
        assert values["pessimistic"] < values["average"] < values["optimistic"]

    def test_average_of_a_tie_block_after_the_first_document(self) -> None:
        df = pl.DataFrame({"query": [1] * 4, "relevance": [0, 0, 1, 0], "score": [2.0, 1.0, 1.0, 1.0]})
        result = df.rank_metrics.reciprocal_rank(ties="average")
        assert result["reciprocal_rank"].item() == pytest.approx((1 / 2 + 1 / 3 + 1 / 4) / 3, abs=TOLERANCE)

    def test_no_relevant_document_scores_zero(self) -> None:
        df = pl.DataFrame({"query": [1, 1, 2], "relevance": [0, 0, 1], "score": [0.3, 0.2, 0.1]})
        result = df.rank_metrics.reciprocal_rank(ties="input")
        assert result["reciprocal_rank"].to_list() == [0.0, 1.0]

    def test_first_relevant_past_the_cutoff_scores_zero(self) -> None:
        df = pl.DataFrame({"query": [1, 1, 1], "relevance": [0, 0, 1], "score": [0.3, 0.2, 0.1]})
        result = df.rank_metrics.reciprocal_rank(ties="input", k=[2, 3])
        assert result.select("reciprocal_rank@2", "reciprocal_rank@3").row(0) == (0.0, pytest.approx(1 / 3))
