"""Documented semantics: known values, tie modes, gains, output shape, eager/lazy types.

Each test that calls a per-query or mean method runs on the three engines of the `engine` fixture (eager,
lazy in-memory, lazy streaming): the same documented behaviour, whichever way the plan is run.  The `*_score`
floats exist on the DataFrame namespace only, so their lines stay eager.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from sklearn.metrics import dcg_score, ndcg_score

import lodestar_polars
from lodestar_polars import RankMetricsFrame, RankMetricsLazyFrame, rank_metrics
from tests.conftest import Engine

LOG2_3 = math.log2(3)


def one_query(relevance: list[float], score: list[float], **columns: list[object]) -> pl.DataFrame:
    return pl.DataFrame({"query": [7] * len(score), "relevance": relevance, "score": score, **columns})


# --- known values (scikit-learn's documented examples; confirmed against scikit-learn here) ----------------


@pytest.mark.parametrize(
    ("score", "expected"),
    [([0.9, 0.5, 0.4, 0.1], 1.0), ([0.1, 0.4, 0.5, 0.9], 0.6138273133441086)],
)
def test_known_ndcg_values(score: list[float], expected: float) -> None:
    relevance = [3, 2, 1, 0]
    assert ndcg_score([relevance], [score]) == pytest.approx(expected, abs=1e-15)
    assert one_query(relevance, score).rank_metrics.ndcg_score() == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize(
    ("k", "expected"), [(3, 0.9777813616305048), (5, 0.8610441760375026), (10, 0.9608081943360616)]
)
def test_known_ndcg_at_k(engine: Engine, k: int, expected: float) -> None:
    frame = one_query([3, 2, 3, 0, 1, 2], [0.9, 0.8, 0.7, 0.6, 0.5, 0.4])
    assert frame.rank_metrics.ndcg_score(k=k) == pytest.approx(expected, abs=1e-15)
    assert engine(frame, "ndcg", k=[3, 5, 10])[f"ndcg@{k}"].item() == pytest.approx(expected, abs=1e-15)


def test_a_tie_block_straddling_k_gets_partial_credit(engine: Engine) -> None:
    # scikit-learn: dcg_score([[10, 0, 0, 1, 5]], [[1, 0, 0, 0, 1]], k=1) == 7.5: the block {10, 5} has mean
    # gain 7.5 and only its first position (discount 1) lies within k
    frame = one_query([10, 0, 0, 1, 5], [1, 0, 0, 0, 1])
    assert engine(frame, "dcg", k=1)["dcg@1"].item() == pytest.approx(7.5, abs=1e-15)
    assert engine(frame, "ndcg", k=1)["ndcg@1"].item() == pytest.approx(0.75, abs=1e-15)
    assert dcg_score([[10, 0, 0, 1, 5]], [[1, 0, 0, 0, 1]], k=1) == pytest.approx(7.5)


def test_negative_zero_ties_with_zero(engine: Engine) -> None:
    frame = one_query([0, 3, 1], [-0.0, 0.0, -1.0])
    expected = dcg_score([[0, 3, 1]], [[-0.0, 0.0, -1.0]])
    # hand: the {0, 3} block has mean gain 1.5 over positions 1-2, then gain 1 at position 3
    assert expected == pytest.approx(1.5 * (1 + 1 / LOG2_3) + 0.5)
    assert engine(frame, "dcg")["dcg"].item() == pytest.approx(expected, abs=1e-15)


def test_k_past_the_list_scores_the_whole_list(engine: Engine) -> None:
    frame = one_query([1, 0, 2], [0.3, 0.2, 0.1])
    whole = engine(frame, "ndcg")["ndcg"].item()
    assert engine(frame, "ndcg", k=50)["ndcg@50"].item() == whole
    assert whole == pytest.approx(ndcg_score([[1, 0, 2]], [[0.3, 0.2, 0.1]]))


def test_a_single_document_query_is_scored(engine: Engine) -> None:
    # scikit-learn's dense API refuses one column; here the single document is position 1 of its own list
    frame = pl.DataFrame({"query": [1, 2, 3, 3], "relevance": [2, 0, 1, 0], "score": [0.4, 0.1, 0.2, 0.9]})
    result = engine(frame, "ndcg", no_relevant=0.5)
    assert result["ndcg"].to_list() == pytest.approx([1.0, 0.5, 1 / LOG2_3])
    assert engine(frame, "dcg")["dcg"].to_list()[:2] == [2.0, 0.0]


# --- deterministic tie modes, derived by hand on one query ------------------------------------------------
#   row:        0    1    2    3
#   doc:        b    d    a    c
#   relevance:  0    2    1    3
#   score:      .5   .5   .5   .1      rows 0-2 tie; row 3 is always last (position 4)


@pytest.mark.parametrize(
    ("ties", "tied_order_gains"),
    [
        ("input", [0, 2, 1]),  # row order 0, 1, 2
        ("reverse", [1, 2, 0]),  # row order 2, 1, 0
        ("doc", [2, 0, 1]),  # doc descending: d, b, a
        ("optimistic", [2, 1, 0]),
        ("pessimistic", [0, 1, 2]),
    ],
)
def test_deterministic_tie_modes(engine: Engine, ties: str, tied_order_gains: list[int]) -> None:
    frame = one_query([0, 2, 1, 3], [0.5, 0.5, 0.5, 0.1], doc=["b", "d", "a", "c"])
    discounts = [1.0, 1 / LOG2_3, 0.5, 1 / math.log2(5)]
    expected = sum(g * d for g, d in zip([*tied_order_gains, 3], discounts, strict=True))
    assert engine(frame, "dcg", ties=ties, doc="doc")["dcg"].item() == pytest.approx(expected, abs=1e-15)


def test_average_ties_is_the_mean_over_all_tie_orders(engine: Engine) -> None:
    frame = one_query([0, 2, 1, 3], [0.5, 0.5, 0.5, 0.1])
    discounts = [1.0, 1 / LOG2_3, 0.5]
    mean_over_orders = 3 * sum(discounts) / 3 + 3 / math.log2(5)  # each tied row's gain averaged: (0+2+1)/3 = 1
    assert engine(frame, "dcg")["dcg"].item() == pytest.approx(mean_over_orders, abs=1e-15)


def test_average_ties_count_the_untied_rows_of_a_tied_query_and_an_untied_query(engine: Engine) -> None:
    # query a holds a tie, so all of its rows go to the block path, its untied top row as a block of one:
    # 3 at position 1, then the block {2, 1} over positions 2-3 of which only position 2 lies within k=2
    # (mean gain 1.5); query b holds none: 2 at position 1, 1 at position 2
    frame = pl.DataFrame(
        {
            "query": ["a", "a", "a", "a", "b", "b"],
            "relevance": [3, 2, 1, 0, 1, 2],
            "score": [0.9, 0.5, 0.5, 0.1, 0.2, 0.8],
        }
    )
    result = engine(frame, "dcg", k=2)
    assert result["query"].to_list() == ["a", "b"]
    assert result["dcg@2"].to_list() == pytest.approx([3 + 1.5 / LOG2_3, 2 + 1 / LOG2_3], abs=1e-15)
    assert dcg_score([[3, 2, 1, 0]], [[0.9, 0.5, 0.5, 0.1]], k=2) == pytest.approx(3 + 1.5 / LOG2_3)


def test_input_order_is_the_order_within_the_query_when_queries_interleave(engine: Engine) -> None:
    frame = pl.DataFrame({"query": ["b", "a", "b", "a"], "relevance": [1, 0, 0, 1], "score": [1.0, 1.0, 1.0, 1.0]})
    result = engine(frame, "dcg", ties="input")
    assert result["query"].to_list() == ["a", "b"]
    assert result["dcg"].to_list() == pytest.approx([1 / LOG2_3, 1.0], abs=1e-15)


# --- gains ------------------------------------------------------------------------------------------------


def test_exponential_gain(engine: Engine) -> None:
    frame = one_query([2, 1], [0.1, 0.9])
    # position 1: 2**1 - 1 = 1, position 2: (2**2 - 1) / log2(3)
    assert engine(frame, "dcg", gain="exponential")["dcg"].item() == pytest.approx(1 + 3 / LOG2_3, abs=1e-15)


@pytest.mark.parametrize("gain", [{0: 0.0, 1: 1.0, 2: 10.0}, [0.0, 1.0, 10.0]])
def test_gain_mapping_and_label_gain_sequence(engine: Engine, gain: object) -> None:
    frame = one_query([2, 1, 0], [0.1, 0.9, 0.5])
    expected = 1.0 + 0.0 / LOG2_3 + 10.0 / 2.0
    assert engine(frame, "dcg", gain=gain)["dcg"].item() == pytest.approx(expected, abs=1e-15)


def test_boolean_relevance_is_binary_gain(engine: Engine) -> None:
    frame = one_query([True, False, True], [0.3, 0.2, 0.1])  # type: ignore[list-item]
    assert engine(frame, "dcg")["dcg"].item() == pytest.approx(1.5, abs=1e-15)


# --- output shape -----------------------------------------------------------------------------------------


def test_output_columns_dtypes_and_order(engine: Engine) -> None:
    frame = pl.DataFrame(
        {
            "qid": pl.Series(["q2", "q10", "q2", "q1"]),
            "label": [1, 0, 0, 2],
            "pred": pl.Series([0.2, 0.1, 0.3, 0.5], dtype=pl.Float32),
            "w": [2.0, 1.0, 2.0, 0.5],
        }
    )
    result = engine(frame, "ndcg", query="qid", relevance="label", score="pred", k=[3, None, 1], weight="w")
    assert result.schema == pl.Schema(
        {"qid": pl.String, "ndcg@3": pl.Float64, "ndcg": pl.Float64, "ndcg@1": pl.Float64, "w": pl.Float64}
    )
    assert result["qid"].to_list() == ["q1", "q10", "q2"]
    assert result["w"].to_list() == [0.5, 1.0, 2.0]


@pytest.mark.parametrize("dtype", [pl.Int8, pl.UInt64, pl.String, pl.Categorical, pl.Int64])
def test_query_dtype_is_kept(engine: Engine, dtype: pl.DataType) -> None:
    frame = pl.DataFrame({"query": ["1", "1", "2"], "relevance": [1, 0, 1], "score": [1, 2, 3]})
    result = engine(frame.with_columns(pl.col("query").cast(dtype)), "dcg", k=2)
    assert result.schema["query"] == dtype
    assert result.height == 2


def test_empty_input_gives_an_empty_frame_with_the_schema(engine: Engine) -> None:
    frame = pl.DataFrame(schema={"query": pl.Int32, "relevance": pl.Int8, "score": pl.Float32, "w": pl.Float64})
    result = engine(frame, "ndcg", k=[1, 5], weight="w")
    assert result.schema == pl.Schema({"query": pl.Int32, "ndcg@1": pl.Float64, "ndcg@5": pl.Float64, "w": pl.Float64})
    assert result.height == 0


def test_mean_frame(engine: Engine) -> None:
    frame = pl.DataFrame(
        {
            "query": [1, 1, 2, 2, 3],
            "relevance": [1, 0, 0, 1, 0],
            "score": [0.9, 0.1, 0.9, 0.1, 0.5],
            "w": [1.0, 1.0, 3.0, 3.0, 2.0],
        }
    )
    mean = engine(frame, "ndcg_mean", k=[1, None], weight="w", no_relevant=None)
    # query 3 has no relevant document: null, left out; queries 1 and 2: ndcg@1 1 and 0, ndcg 1 and 1/log2(3)
    assert mean.columns == ["ndcg@1", "ndcg", "queries", "weight_sum"]
    assert mean.row(0) == pytest.approx((1 / 4, (1 + 3 / LOG2_3) / 4, 2, 4.0))
    expected = ndcg_score([[1, 0], [0, 1]], [[0.9, 0.1], [0.9, 0.1]], sample_weight=[1.0, 3.0])
    assert frame.filter(pl.col("query") < 3).rank_metrics.ndcg_score(weight="w") == pytest.approx(expected)


def test_unweighted_mean_counts_every_query(engine: Engine) -> None:
    frame = pl.DataFrame({"query": [1, 1, 2, 2], "relevance": [1, 0, 0, 0], "score": [0.9, 0.1, 0.9, 0.1]})
    assert engine(frame, "ndcg_mean").row(0) == (0.5, 2, 2.0)  # query 2 scores no_relevant = 0.0
    assert engine(frame, "ndcg_mean", no_relevant=1.0).row(0) == (1.0, 2, 2.0)


def test_frame_types_and_typed_accessor() -> None:
    frame = pl.DataFrame({"query": [1, 1], "relevance": [1, 0], "score": [0.2, 0.8]})
    assert isinstance(frame.rank_metrics, RankMetricsFrame)
    assert isinstance(frame.lazy().rank_metrics, RankMetricsLazyFrame)
    assert isinstance(rank_metrics(frame).ndcg(), pl.DataFrame)
    assert isinstance(rank_metrics(frame.lazy()).ndcg(), pl.LazyFrame)
    assert isinstance(frame.lazy().rank_metrics.ndcg_mean(), pl.LazyFrame)
    with pytest.raises(TypeError, match=r"rank_metrics\(\) takes a polars DataFrame or LazyFrame, got dict."):
        rank_metrics({"query": [1]})  # type: ignore[call-overload]  # the point of the test
    assert lodestar_polars.__version__


def test_the_lazy_method_reads_no_data_until_collect() -> None:
    calls = []

    def spy(series: pl.Series) -> pl.Series:
        calls.append(len(series))
        return series

    lazy = pl.LazyFrame({"query": [1, 1], "relevance": [1, 0], "score": [0.2, 0.8]}).with_columns(
        pl.col("score").map_batches(spy, return_dtype=pl.Float64)
    )
    plan = lazy.rank_metrics.ndcg(k=[1, 2])
    assert calls == []
    plan.collect()
    assert calls


def test_chaining_in_a_notebook(engine: Engine) -> None:
    frame = pl.DataFrame(
        {"query": [1, 1, 2, 2], "relevance": [1, 0, 0, 1], "score": [0.9, 0.1, 0.9, 0.1], "model": ["a"] * 4}
    )
    per_query = engine(frame.filter(pl.col("model") == "a"), "ndcg", k=1).filter(pl.col("ndcg@1") < 1)
    assert per_query["query"].to_list() == [2]


def test_sorted_and_unsorted_inputs_agree(engine: Engine) -> None:
    rng = np.random.default_rng(3)
    frame = pl.DataFrame(
        {"query": rng.integers(0, 50, 2000), "relevance": rng.integers(0, 4, 2000), "score": rng.integers(0, 5, 2000)}
    )
    shuffled = engine(frame, "ndcg", k=[3, 10])
    grouped = engine(frame.sort("query", maintain_order=True), "ndcg", k=[3, 10])
    assert_frame_equal(shuffled, grouped, rel_tol=1e-12)
