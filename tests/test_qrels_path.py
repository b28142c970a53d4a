"""The `qrels=` path against the in-frame path: the same rows, the relevance given two ways.

With every judged document retrieved, a run plus its judgments holds exactly what one frame with a relevance
column holds (an unjudged retrieved document has label 0), so every measure must come out the same.  The
in-frame path is the one the rest of the suite checks against scikit-learn, trec_eval and ranx; this test
pins the qrels path to it on random ragged runs with heavy ties, every tie mode, cut-offs with and without
the whole list, and gains.  It guards in particular the plan that joins the judgments onto the rows within
the largest cut-off only (every measure cut off, positions not reading the relevance), and the plan that
joins them first (`k=None`, optimistic / pessimistic ties, a gain mapping without label 0).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from tests.conftest import Engine

TIES = ["average", "reverse", "input", "doc", "optimistic", "pessimistic"]
MEASURES = ["ndcg", "dcg", "p", "r", "ap", "rr", "success"]
GAINS: list[Any] = ["linear", "exponential", {0: 0.0, 1: 1.0, 2: 3.0, 3: 7.5}]
SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def run_and_frame(seed: int, string_queries: bool) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """A ragged run (rows of queries interleaved, scores from 4 values: heavy ties), its judgments (about
    half the retrieved documents, some judged 0), and the same rows as one frame with the relevance."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 30, rng.integers(1, 8))
    query = np.repeat(np.arange(lengths.size), lengths)
    rows = query.size
    frame = pl.DataFrame(
        {
            "query": [f"q{q}" for q in query] if string_queries else query,
            "doc": [f"d{i:04d}" for i in rng.permutation(rows)],
            "score": rng.integers(0, 4, rows).astype(np.float64),
            "relevance": rng.integers(0, 4, rows),
            "judged": rng.random(rows) < 0.5,
        }
    ).sample(fraction=1.0, shuffle=True, seed=seed)
    # every query has at least one judgment, so no query is skipped as unjudged in the qrels path
    first_of_query = pl.int_range(pl.len()).over("query") == 0
    frame = frame.with_columns(judged=pl.col("judged") | first_of_query)
    qrels = frame.filter("judged").select("query", "doc", "relevance")
    relevance = pl.when("judged").then("relevance").otherwise(0).alias("relevance")
    in_frame = frame.select("query", "doc", "score", relevance)
    return frame.select("query", "doc", "score"), qrels, in_frame


@given(
    seed=st.integers(0, 2**32 - 1),
    ties=st.sampled_from(TIES),
    measures=st.lists(
        st.tuples(st.sampled_from(MEASURES), st.sampled_from([None, 1, 2, 3, 5, 10, 40])), min_size=1, max_size=5
    ),
    gain=st.sampled_from(GAINS),
    string_queries=st.booleans(),
)
@SETTINGS
@pytest.mark.parametrize("engine_name", ["eager", "lazy-streaming"])
def test_the_qrels_path_equals_the_in_frame_path(
    engine_name: str, seed: int, ties: str, measures: list[tuple[str, int | None]], gain: Any, string_queries: bool
) -> None:
    engine = Engine(engine_name)  # type: ignore[arg-type]  # a name of tests.conftest.ENGINES
    names = list(dict.fromkeys(m if k is None else f"{m}@{k}" for m, k in measures))
    run, qrels, in_frame = run_and_frame(seed, string_queries)
    options: dict[str, Any] = {"measures": names, "doc": "doc", "ties": ties, "gain": gain}
    judged = engine(run, "evaluate", qrels=qrels, **options)
    expected = engine(in_frame, "evaluate", **options)
    assert_frame_equal(judged, expected, rel_tol=1e-12, abs_tol=1e-12)


def test_an_unjudged_document_needs_no_gain_in_a_mapping(engine: Engine) -> None:
    """Unjudged documents have gain 0 (trec_eval), so a mapping need not name label 0.  By hand: the run ranks
    a (1), b (2), c (unjudged); gains 1 and 3: DCG@3 = 1 + 3 / log2(3); ideal 3 + 1 / log2(3)."""
    run = pl.DataFrame({"query": [1, 1, 1], "doc": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    qrels = pl.DataFrame({"query": [1, 1], "doc": ["a", "b"], "relevance": [1, 2]})
    result = engine(run, "ndcg", k=[1, 3], doc="doc", qrels=qrels, gain={1: 1.0, 2: 3.0})
    assert result["ndcg@1"].to_list() == pytest.approx([1 / 3], rel=1e-12)
    expected = (1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3))
    assert result["ndcg@3"].to_list() == pytest.approx([expected], rel=1e-12)


# --- key dtypes: integer ids of different widths join in the narrowest integer dtype holding both ----------

# run q1 ranks doc 10 then 11; q2 ranks 20 then 21; q3 is judged only.  By hand: q1 has R = 2 (docs 11, 12)
# and its one relevant retrieved document at rank 2: AP = (1/2) / 2 = 0.25, P@2 = 0.5; q2 has R = 1, doc 20
# at rank 1: AP 1, P@2 0.5; q3 (missing_queries="zero") scores 0 with R = 1.
HAND_VALUES = {"query": [1, 2, 3], "ap": [0.25, 1.0, 0.0], "p@2": [0.5, 0.5, 0.0], "num_rel": [2.0, 1.0, 1.0]}


def typed_run_and_qrels(run_dtype: pl.DataType, qrels_dtype: pl.DataType) -> tuple[pl.DataFrame, pl.DataFrame]:
    run = pl.DataFrame(
        {
            "query": pl.Series([1, 1, 2, 2], dtype=run_dtype),
            "doc": pl.Series([10, 11, 20, 21], dtype=run_dtype),
            "score": [0.9, 0.5, 0.3, 0.2],
        }
    )
    qrels = pl.DataFrame(
        {
            "query": pl.Series([1, 1, 2, 3], dtype=qrels_dtype),
            "doc": pl.Series([11, 12, 20, 30], dtype=qrels_dtype),
            "relevance": [1, 1, 2, 1],
        }
    )
    return run, qrels


@pytest.mark.parametrize(
    ("run_dtype", "qrels_dtype"),
    [
        (pl.Int32(), pl.Int64()),
        (pl.Int64(), pl.Int32()),
        (pl.UInt32(), pl.Int64()),
        (pl.UInt32(), pl.Int32()),
        (pl.Int16(), pl.UInt8()),
        (pl.UInt8(), pl.UInt64()),
    ],
    ids=str,
)
def test_integer_ids_of_different_widths_join(engine: Engine, run_dtype: pl.DataType, qrels_dtype: pl.DataType) -> None:
    """The query and doc columns join in the narrowest integer dtype holding both (a cast in the plan's
    selects); the output's query column keeps the run's dtype."""
    run, qrels = typed_run_and_qrels(run_dtype, qrels_dtype)
    options: dict[str, Any] = {"doc": "doc", "ties": "doc", "qrels": qrels, "missing_queries": "zero"}
    got = engine.collect(engine.method(run, "evaluate")(["ap", "p@2", "num_rel"], **options))
    expected = pl.DataFrame(HAND_VALUES).with_columns(pl.col("query").cast(run_dtype))
    assert_frame_equal(got, expected)
    mean = engine.collect(engine.method(run, "evaluate_mean")(["ap"], **options))
    assert mean["ap"].item() == pytest.approx(1.25 / 3)


@pytest.mark.parametrize(
    ("run_dtype", "qrels_dtype", "why"),
    [
        (pl.UInt64(), pl.Int64(), "no integer dtype of at most 64 bits holds every value of both"),
        (pl.Int8(), pl.UInt64(), "no integer dtype of at most 64 bits holds every value of both"),
        (pl.String(), pl.Int64(), "only integer key dtypes are widened to join"),
        (pl.Int32(), pl.Float64(), "only integer key dtypes are widened to join"),
    ],
    ids=str,
)
def test_ids_without_a_lossless_common_dtype_are_refused(
    run_dtype: pl.DataType, qrels_dtype: pl.DataType, why: str
) -> None:
    run, qrels = typed_run_and_qrels(pl.Int64(), pl.Int64())
    run = run.with_columns(pl.col("query").cast(run_dtype))
    qrels = qrels.with_columns(pl.col("query").cast(qrels_dtype))
    words = (
        f"query column 'query' of the run has dtype {run_dtype} but 'query' of qrels has dtype {qrels_dtype}, "
        f"and {why}; cast one so they join."
    )
    with pytest.raises(pl.exceptions.SchemaError) as raised:
        run.lazy().rank_metrics.evaluate(["ap"], doc="doc", ties="doc", qrels=qrels)
    assert str(raised.value) == words


def test_a_judged_query_the_run_dtype_cannot_hold_is_named() -> None:
    """With missing_queries="zero" a judged query missing from the run enters the output, in the run's query
    dtype: an id that dtype cannot hold is an error naming it, not a wrapped or null id."""
    run, qrels = typed_run_and_qrels(pl.Int32(), pl.Int64())
    qrels = qrels.with_columns(pl.Series("query", [1, 1, 2, 2**40]))
    options: dict[str, Any] = {"doc": "doc", "ties": "doc", "qrels": qrels}
    with pytest.raises(ValueError, match=r"query 1099511627776 of qrels .* does not fit the run's query dtype Int32"):
        run.rank_metrics.evaluate(["ap"], missing_queries="zero", **options)
    skipped = run.rank_metrics.evaluate(["ap"], missing_queries="skip", **options)
    assert skipped.rows() == [(1, 0.25), (2, 1.0)]
    assert skipped.schema["query"] == pl.Int32
