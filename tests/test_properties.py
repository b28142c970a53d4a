"""Property tests: random ragged frames with heavy ties against scikit-learn and the plain reference."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import lodestar_polars  # noqa: F401  (registers .rank_metrics)
from tests import reference

TIES = ["average", "reverse", "input", "doc", "optimistic", "pessimistic"]
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def ragged_frames(draw: st.DrawFn, max_docs: int = 60) -> pl.DataFrame:
    """1-8 queries of 1-60 documents, rows of different queries interleaved, heavy score ties."""
    n_queries = draw(st.integers(1, 8))
    integer_scores = draw(st.booleans())
    score_values = (
        st.integers(-2, 3)
        if integer_scores
        else st.sampled_from([-1.5, -0.0, 0.0, 0.25, 0.5, 0.5000000001, 1.0, 2.0, 1e-300])
    )
    rows: list[dict[str, Any]] = []
    for query in draw(st.lists(st.integers(0, 10_000), min_size=n_queries, max_size=n_queries, unique=True)):
        n_docs = draw(st.integers(1, max_docs))
        weight = draw(st.sampled_from([0.5, 1.0, 2.0, 3.25]))
        for doc in range(n_docs):
            rows.append(
                {
                    "query": query,
                    "doc": f"d{draw(st.integers(0, 10**6)):07d}-{doc}",
                    "relevance": draw(st.integers(0, 4)),
                    "score": draw(score_values),
                    "weight": weight,
                }
            )
    order = draw(st.permutations(range(len(rows))))
    return pl.DataFrame([rows[i] for i in order])


cutoffs = st.one_of(st.none(), st.integers(1, 70), st.lists(st.integers(1, 70), min_size=1, max_size=4, unique=True))
# the last mapping does not grow with the label: the ideal order must then follow the gain, not the label
gains = st.sampled_from(
    ["linear", "exponential", {0: 0.0, 1: 1.0, 2: 3.0, 3: 7.0, 4: 15.5}, {0: 5.0, 1: 0.0, 2: 1.0, 3: 2.5, 4: 0.5}]
)


def queries_in_row_order(frame: pl.DataFrame) -> dict[Any, dict[str, list[Any]]]:
    grouped: dict[Any, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    for row in frame.iter_rows(named=True):
        for column, value in row.items():
            grouped[row["query"]][column].append(value)
    return grouped


def as_list(k: Any) -> list[int | None]:
    return k if isinstance(k, list) else [k]


def column(metric: str, k: int | None) -> str:
    return metric if k is None else f"{metric}@{k}"


@SETTINGS
@given(frame=ragged_frames(), k=cutoffs, ties=st.sampled_from(TIES), gain=gains)
def test_ndcg_matches_the_reference_per_query(frame: pl.DataFrame, k: Any, ties: str, gain: Any) -> None:
    result = frame.rank_metrics.ndcg(k=k, ties=ties, gain=gain, doc="doc", weight="weight")
    queries = queries_in_row_order(frame)
    assert result["query"].to_list() == sorted(queries)
    for row in result.iter_rows(named=True):
        q = queries[row["query"]]
        g = reference.gains(q["relevance"], gain)
        for cutoff in as_list(k):
            expected = reference.ndcg(g, q["score"], cutoff, ties, q["doc"])
            assert row[column("ndcg", cutoff)] == pytest.approx(expected, rel=1e-12, abs=1e-12)
        assert row["weight"] == q["weight"][0]


@SETTINGS
@given(frame=ragged_frames(), k=cutoffs, gain=gains, log_base=st.sampled_from([2.0, 10.0, math.e, 1.5]))
def test_tie_averaged_dcg_matches_scikit_learn(frame: pl.DataFrame, k: Any, gain: Any, log_base: float) -> None:
    result = frame.rank_metrics.dcg(k=k, gain=gain, log_base=log_base)
    queries = queries_in_row_order(frame)
    for row in result.iter_rows(named=True):
        q = queries[row["query"]]
        g = reference.gains(q["relevance"], gain)
        for cutoff in as_list(k):
            if len(g) >= 2:  # scikit-learn refuses single-document rows
                expected = reference.sklearn_dcg(g, q["score"], cutoff, log_base)
            else:
                expected = reference.dcg(g, q["score"], cutoff, "average", log_base=log_base)
            assert row[column("dcg", cutoff)] == pytest.approx(expected, rel=1e-12, abs=1e-12)


@SETTINGS
@given(frame=ragged_frames(max_docs=12), k=cutoffs, ties=st.sampled_from(TIES))
def test_dcg_with_negative_relevance(frame: pl.DataFrame, k: Any, ties: str) -> None:
    frame = frame.with_columns(pl.col("relevance") - 2)
    result = frame.rank_metrics.dcg(k=k, ties=ties, doc="doc")
    queries = queries_in_row_order(frame)
    for row in result.iter_rows(named=True):
        q = queries[row["query"]]
        for cutoff in as_list(k):
            expected = reference.dcg([float(r) for r in q["relevance"]], q["score"], cutoff, ties, q["doc"])
            assert row[column("dcg", cutoff)] == pytest.approx(expected, rel=1e-12, abs=1e-12)


@SETTINGS
@given(frame=ragged_frames(), k=st.one_of(st.none(), st.integers(1, 70)), weighted=st.booleans())
def test_weighted_mean_matches_scikit_learn_average(frame: pl.DataFrame, k: int | None, weighted: bool) -> None:
    weight = "weight" if weighted else None
    per_query = frame.rank_metrics.ndcg(k=k, weight=weight)
    values = per_query[column("ndcg", k)].to_list()
    weights = per_query["weight"].to_list() if weighted else None
    expected = reference.weighted_mean(values, weights)
    assert frame.rank_metrics.ndcg_score(k=k, weight=weight) == pytest.approx(expected, rel=1e-12)
    mean = frame.rank_metrics.ndcg_mean(k=k, weight=weight)
    assert mean["queries"].item() == per_query.height
    assert mean["weight_sum"].item() == pytest.approx(sum(weights) if weights else per_query.height)


@SETTINGS
@given(
    frame=ragged_frames(),
    k=cutoffs,
    ties=st.sampled_from(TIES),
    no_relevant=st.sampled_from([0.0, 1.0, 0.5, None]),
)
def test_eager_lazy_and_streaming_agree(frame: pl.DataFrame, k: Any, ties: str, no_relevant: float | None) -> None:
    frame = frame.with_columns(
        pl.when(pl.col("query") % 3 == 0).then(0).otherwise(pl.col("relevance")).alias("relevance")
    )
    options: dict[str, Any] = {"k": k, "ties": ties, "doc": "doc", "weight": "weight", "no_relevant": no_relevant}
    eager = frame.rank_metrics.ndcg(**options)
    lazy = frame.lazy().rank_metrics.ndcg(**options)
    # parallel group-by sums may add in a different order: equal to rounding, not bit for bit
    assert_frame_equal(lazy.collect(engine="in-memory"), eager, rel_tol=1e-12, abs_tol=1e-12)
    assert_frame_equal(lazy.collect(engine="streaming"), eager, rel_tol=1e-12, abs_tol=1e-12)
    eager_mean = (
        frame.rank_metrics.ndcg_mean(**options)
        if eager[column("ndcg", as_list(k)[0])].null_count() < eager.height
        else None
    )
    if eager_mean is not None:
        streamed_mean = frame.lazy().rank_metrics.ndcg_mean(**options).collect(engine="streaming")
        assert_frame_equal(streamed_mean, eager_mean, rel_tol=1e-12, abs_tol=1e-12)


@SETTINGS
@given(frame=ragged_frames(), k=cutoffs, no_relevant=st.sampled_from([0.0, 1.0, 0.5, None]))
def test_no_relevant_sets_the_value_of_all_zero_queries(frame: pl.DataFrame, k: Any, no_relevant: float | None) -> None:
    frame = frame.with_columns(
        pl.when(pl.col("query") % 2 == 0).then(0).otherwise(pl.col("relevance")).alias("relevance")
    )
    result = frame.rank_metrics.ndcg(k=k, no_relevant=no_relevant, gain="exponential")
    queries = queries_in_row_order(frame)
    for row in result.iter_rows(named=True):
        q = queries[row["query"]]
        g = reference.gains(q["relevance"], "exponential")
        for cutoff in as_list(k):
            expected = reference.ndcg(g, q["score"], cutoff, "average", no_relevant=no_relevant)
            got = row[column("ndcg", cutoff)]
            if expected is None:
                assert got is None
            else:
                assert got == pytest.approx(expected, rel=1e-12, abs=1e-12)


@SETTINGS
@given(frame=ragged_frames(), k=st.one_of(st.none(), st.integers(1, 70)))
def test_optimistic_and_pessimistic_bound_every_tie_mode(frame: pl.DataFrame, k: int | None) -> None:
    name = column("ndcg", k)
    results = {ties: frame.rank_metrics.ndcg(k=k, ties=ties, doc="doc")[name] for ties in TIES}
    for ties in TIES:
        assert (results["pessimistic"] <= results[ties] + 1e-12).all()
        assert (results[ties] <= results["optimistic"] + 1e-12).all()
