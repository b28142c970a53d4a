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
