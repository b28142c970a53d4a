"""`exprs.precision`, `recall`, `average_precision` and `success`: the measures counting relevant rows.

Oracles:
- `tests/measures_reference.py`, a plain-Python reference written from the definitions that shares no code
  with the package: every tie mode, and under ties="average" the brute-force mean over every order of the
  tied rows;
- pytrec_eval (trec_eval's code) with ties="doc" on random runs with tied scores (P_k, recall_k, map,
  map_cut_k, success_k), the judgments being the frame's own rows;
- scikit-learn's `average_precision_score` on rows without ties;
- the `.rank_metrics` namespace on the same frame (eager, lazy in-memory and streaming), and with `.over`.

R, the relevant count of recall and average precision, is the group's relevant rows: an expression sees no
judgments outside the frame.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from sklearn.metrics import average_precision_score

import lodestar_polars  # noqa: F401  (registers .rank_metrics)
from lodestar_polars import exprs
from lodestar_polars.exprs._positional import _TABLE_CUTOFF_LIMIT
from tests import measures_reference as reference
from tests.test_exprs import ENGINES, EVALUATE_NAMES, SETTINGS, TIES, TOLERANCE, aggregate, broadcast, ragged_frames

MEASURES = ["precision", "recall", "average_precision", "success"]
WITH_NO_RELEVANT = {"recall", "average_precision"}


def column(measure: str, k: int | None) -> str:
    """The expression's column: named as `evaluate` names the measure."""
    name = EVALUATE_NAMES.get(measure, measure)
    return name if k is None else f"{name}@{k}"


def namespace(frame: pl.DataFrame, measure: str, **options: Any) -> pl.DataFrame:
    """The namespace method's per-query frame, its column (named after the method) under the expression's name."""
    result: pl.DataFrame = getattr(frame.rank_metrics, measure)(**options)
    return result.rename(
        {c: column(measure, None) + c[len(measure) :] for c in result.columns if c.startswith(measure)}
    )


@st.composite
def calls(draw: st.DrawFn, max_k: int = 45) -> tuple[str, dict[str, Any]]:
    """A measure and options valid for the expression, the namespace and the reference (doc="doc" always)."""
    measure = draw(st.sampled_from(MEASURES))
    options: dict[str, Any] = {
        "k": draw(st.one_of(st.none(), st.integers(1, max_k))),
        "ties": draw(st.sampled_from(TIES)),
        "threshold": draw(st.sampled_from([0.0, 1.5])),
        "doc": "doc",
    }
    if measure in WITH_NO_RELEVANT:
        options["no_relevant"] = draw(st.sampled_from([0.0, 1.0, None]))
    return measure, options


@st.composite
def small_tied_frames(draw: st.DrawFn) -> pl.DataFrame:
    """1-4 queries of 1-9 documents (small enough to enumerate every order of the tied rows), rows of different
    queries interleaved, heavy score ties (-0.0 and 0.0 among them)."""
    scores = st.sampled_from([-1.0, -0.0, 0.0, 0.5, 2.0])
    rows: list[dict[str, Any]] = []
    for query in draw(st.lists(st.integers(0, 100), min_size=1, max_size=4, unique=True)):
        for doc in range(draw(st.integers(1, 9))):
            rows.append(
                {
                    "query": query,
                    "doc": f"d{draw(st.integers(0, 99))}-{doc}",
                    "relevance": draw(st.integers(0, 3)),
                    "score": draw(scores),
                }
            )
    order = draw(st.permutations(range(len(rows))))
    return pl.DataFrame([rows[i] for i in order])


def reference_per_query(frame: pl.DataFrame, measure: str, options: dict[str, Any]) -> pl.DataFrame:
    """The reference's value of each query, computed from its rows in frame order."""
    values = []
    for (query,), rows in frame.group_by("query", maintain_order=True):
        reference_options = {key: value for key, value in options.items() if key != "doc"}
        value = getattr(reference, measure)(
            rows["relevance"].to_list(), rows["score"].to_list(), doc=rows["doc"].to_list(), **reference_options
        )
        values.append({"query": query, column(measure, options["k"]): value})
    schema = {"query": frame.schema["query"], column(measure, options["k"]): pl.Float64}
    return pl.DataFrame(values, schema=schema, orient="row").sort("query")


def expression(measure: str, options: dict[str, Any]) -> pl.Expr:
    built: pl.Expr = getattr(exprs, measure)(**options)
    return built


@pytest.mark.parametrize("engine", ["eager", "streaming"])
@SETTINGS
@given(frame=small_tied_frames(), call=calls(max_k=12))
def test_the_reference_definition_in_every_tie_mode(
    frame: pl.DataFrame, call: tuple[str, dict[str, Any]], engine: str
) -> None:
    measure, options = call
    result = aggregate(frame, engine, expression(measure, options))
    assert_frame_equal(result, reference_per_query(frame, measure, options), **TOLERANCE)


@pytest.mark.parametrize("engine", ENGINES)
@SETTINGS
@given(frame=ragged_frames(), call=calls())
def test_group_by_agg_matches_the_namespace(frame: pl.DataFrame, call: tuple[str, dict[str, Any]], engine: str) -> None:
    measure, options = call
    expected = namespace(frame, measure, **options).sort("query")
    assert_frame_equal(aggregate(frame, engine, expression(measure, options)), expected, **TOLERANCE)


@SETTINGS
@given(frame=ragged_frames(), call=calls())
def test_over_broadcasts_the_namespaces_value(frame: pl.DataFrame, call: tuple[str, dict[str, Any]]) -> None:
    measure, options = call
    result = broadcast(frame, "streaming", expression(measure, options))
    per_query = namespace(frame, measure, **options)
    expected = frame.join(per_query, on="query", how="left", maintain_order="left")
    assert_frame_equal(result, expected, **TOLERANCE)


def test_a_large_cutoff_takes_the_cumulative_sum_path() -> None:
    """Cut-offs above the lookup-table limit (and None) sum the tied blocks' weights another way: same numbers."""
    rng = np.random.default_rng(5)
    frame = pl.DataFrame(
        {"query": rng.integers(0, 4, 2000), "relevance": rng.integers(0, 3, 2000), "score": rng.integers(0, 30, 2000)}
    )
    k = _TABLE_CUTOFF_LIMIT + 1
    for measure in MEASURES:
        for cutoff in (None, 700, k):
            expected = namespace(frame, measure, k=cutoff).sort("query")
            result = frame.group_by("query").agg(getattr(exprs, measure)(k=cutoff)).sort("query")
            assert_frame_equal(result, expected, **TOLERANCE)


# --- pytrec_eval (trec_eval) with ties="doc" --------------------------------------------------------------

CUTOFFS = [1, 2, 3, 5, 10]


def test_trec_eval_on_a_random_tied_run() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = np.random.default_rng(11)
    rows = 3000
    frame = pl.DataFrame(
        {
            "query": rng.integers(0, 150, rows),
            "doc": [f"d{i}" for i in rng.permutation(rows)],
            "relevance": rng.integers(0, 3, rows),
            "score": rng.integers(0, 6, rows).astype(float),  # ties in nearly every query
        }
    )
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for query, doc, relevance, score in frame.iter_rows():
        qrels.setdefault(str(query), {})[doc] = relevance
        run.setdefault(str(query), {})[doc] = score
    cut = ",".join(map(str, CUTOFFS))
    names = {f"P.{cut}", f"recall.{cut}", "map", f"map_cut.{cut}", f"success.{cut}"}
    expected = pytrec_eval.RelevanceEvaluator(qrels, names).evaluate(run)
    trec_names = {"ap": "map"}
    for k in CUTOFFS:
        trec_names |= {
            f"p@{k}": f"P_{k}",
            f"r@{k}": f"recall_{k}",
            f"ap@{k}": f"map_cut_{k}",
            f"success@{k}": f"success_{k}",
        }
    built = [exprs.average_precision(ties="doc", doc="doc")]
    for k in CUTOFFS:
        built += [getattr(exprs, measure)(k=k, ties="doc", doc="doc") for measure in MEASURES]
    result = frame.group_by("query").agg(built)
    assert result.height == len(expected) == 150
    for row in result.iter_rows(named=True):
        theirs = expected[str(row["query"])]
        for ours, name in trec_names.items():
            assert row[ours] == pytest.approx(theirs[name], abs=1e-12), (row["query"], ours)


# --- scikit-learn --------------------------------------------------------------------------------------------


def test_average_precision_is_scikit_learns_on_rows_without_ties() -> None:
    rng = np.random.default_rng(2)
    queries, docs = 40, 25
    relevance = rng.integers(0, 2, (queries, docs))
    relevance[:, 0] = 1  # scikit-learn needs a relevant row
    score = rng.random((queries, docs))
    frame = pl.DataFrame(
        {"query": np.repeat(np.arange(queries), docs), "relevance": relevance.ravel(), "score": score.ravel()}
    )
    result = frame.group_by("query").agg(exprs.average_precision()).sort("query")
    expected = [average_precision_score(relevance[q], score[q]) for q in range(queries)]
    np.testing.assert_allclose(result["ap"].to_numpy(), expected, rtol=0, atol=1e-12)


# --- options and data errors ----------------------------------------------------------------------------


@pytest.fixture
def small() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "query": [1, 1, 2, 2, 3],
            "doc": ["a", "b", "a", "b", "c"],
            "relevance": [1, 0, 2, 1, 0],
            "score": [0.5, 0.2, 0.1, 0.3, 0.9],
        }
    )


def namespace_error(frame: pl.DataFrame, measure: str, **options: Any) -> BaseException:
    with pytest.raises(Exception) as raised:
        namespace(frame, measure, **options)
    return raised.value


@pytest.mark.parametrize("measure", MEASURES)
@pytest.mark.parametrize(
    "options", [{"k": 0}, {"k": 2.5}, {"ties": "doc"}, {"ties": "random"}, {"threshold": math.inf}]
)
def test_option_errors_raise_at_build_time_with_the_namespaces_message(
    small: pl.DataFrame, measure: str, options: dict[str, Any]
) -> None:
    expected = namespace_error(small, measure, **options)
    with pytest.raises(type(expected)) as raised:
        getattr(exprs, measure)(**options)
    assert str(raised.value) == str(expected)


@pytest.mark.parametrize("measure", sorted(WITH_NO_RELEVANT))
def test_no_relevant_error_names_the_threshold(small: pl.DataFrame, measure: str) -> None:
    with pytest.raises(ValueError, match=r"^a group has no document with relevance above 1; pass no_relevant"):
        small.group_by("query").agg(getattr(exprs, measure)(threshold=1.0, no_relevant="error"))
    answered = small.filter(pl.col("query") != 3)  # every group has a relevant row: no error
    result = answered.group_by("query").agg(getattr(exprs, measure)(no_relevant="error")).sort("query")
    assert_frame_equal(result, namespace(answered, measure, no_relevant="error"), **TOLERANCE)


@pytest.mark.parametrize("measure", MEASURES)
@pytest.mark.parametrize(("role", "bad"), [("relevance", None), ("score", math.nan)])
def test_bad_values_raise_the_namespaces_message(small: pl.DataFrame, measure: str, role: str, bad: Any) -> None:
    frame = small.with_columns(pl.when(pl.col("doc") == "c").then(bad).otherwise(pl.col(role)).alias(role))
    expected = str(namespace_error(frame, measure))
    with pytest.raises(ValueError) as raised:
        frame.group_by("query").agg(getattr(exprs, measure)())
    message = str(raised.value).split("\n\n")[0]
    assert expected.startswith(f"{role} column {role!r} has 1 null, NaN or infinite value(s), the first in query ")
    assert message == f"a group has 1 null, NaN or infinite value(s) in {role} column {role!r}."


def test_recall_counts_the_frames_relevant_rows_only() -> None:
    """R is the group's relevant rows: a relevant document the run lacks is not counted (qrels= counts it)."""
    frame = pl.DataFrame({"query": [1, 1, 1], "doc": ["a", "b", "c"], "relevance": [1, 0, 1], "score": [3, 2, 1]})
    assert frame.select(exprs.recall(k=1)).item() == 0.5  # 1 of the 2 relevant rows in the frame
    qrels = pl.DataFrame({"query": [1, 1, 1, 1], "doc": ["a", "b", "c", "d"], "relevance": [1, 0, 1, 1]})
    assert frame.rank_metrics.recall(k=1, doc="doc", qrels=qrels)["recall@1"].item() == pytest.approx(1 / 3)


def test_precision_at_k_is_divided_as_c_divides() -> None:
    """3 hits in the top 20 is 3.0 / 20 = 0.15, as trec_eval and pytrec_eval compute it; Polars 2.1 divides a
    column by the constant 20 as a product with 1 / 20, which gives 0.15000000000000002."""
    frame = pl.DataFrame(
        {"query": [1] * 5 + [2] * 5, "relevance": [1, 1, 1, 0, 0] * 2, "score": [5.0, 4.0, 3.0, 2.0, 1.0] * 2}
    )
    got = frame.group_by("query").agg(exprs.precision(k=20))["p@20"].to_list()
    assert got == [3.0 / 20] * 2 == [0.15] * 2
