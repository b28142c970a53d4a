"""`lodestar_polars.exprs`: the metrics as group expressions give the namespace's per-query numbers.

The oracle is the `.rank_metrics` namespace (itself tested against scikit-learn, trec_eval and LightGBM) on
the same frame, plus scikit-learn directly on dense rows.  Every comparison runs eager, lazy in-memory and
lazy streaming.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from sklearn.metrics import dcg_score, ndcg_score

import lodestar_polars  # noqa: F401  (registers .rank_metrics)
from lodestar_polars import exprs
from lodestar_polars.exprs._positional import _TABLE_CUTOFF_LIMIT

TIES = ["average", "reverse", "input", "doc", "optimistic", "pessimistic"]
ALL_METRICS = ["ndcg", "dcg", "reciprocal_rank", "precision", "recall", "average_precision", "success"]
ENGINES = ["eager", "in-memory", "streaming"]
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TOLERANCE = {"abs_tol": 1e-12, "rel_tol": 1e-12}


def aggregate(frame: pl.DataFrame, engine: str, *aggregations: pl.Expr) -> pl.DataFrame:
    """`group_by("query").agg(...)` sorted by query, eager or collected by one engine."""
    if engine == "eager":
        return frame.group_by("query").agg(*aggregations).sort("query")
    return frame.lazy().group_by("query").agg(*aggregations).sort("query").collect(engine=engine)  # type: ignore[call-overload]  # engine is one of the literals


def broadcast(frame: pl.DataFrame, engine: str, expression: pl.Expr) -> pl.DataFrame:
    """`with_columns(expression.over("query"))`, eager or collected by one engine."""
    if engine == "eager":
        return frame.with_columns(expression.over("query"))
    return frame.lazy().with_columns(expression.over("query")).collect(engine=engine)  # type: ignore[call-overload]  # as above


@st.composite
def ragged_frames(draw: st.DrawFn) -> pl.DataFrame:
    """1-6 queries of 1-40 documents, rows of different queries interleaved, heavy score ties (-0.0 and 0.0)."""
    integer_scores = draw(st.booleans())
    score_values = (
        st.integers(-2, 3)
        if integer_scores
        else st.sampled_from([-1.5, -0.0, 0.0, 0.25, 0.5, 0.5000000001, 1.0, 2.0, 1e-300])
    )
    rows: list[dict[str, Any]] = []
    queries = draw(st.lists(st.integers(0, 10_000), min_size=1, max_size=6, unique=True))
    for query in queries:
        for doc in range(draw(st.integers(1, 40))):
            rows.append(
                {
                    "query": query,
                    # text order differs from numeric order ("d9-" > "d10-"), as trec_eval compares docnos
                    "doc": f"d{draw(st.integers(0, 10**6))}-{doc}",
                    "relevance": draw(st.integers(0, 4)),
                    "score": draw(score_values),
                }
            )
    order = draw(st.permutations(range(len(rows))))
    return pl.DataFrame([rows[i] for i in order])


cutoffs = st.one_of(st.none(), st.integers(1, 45))
# the last mapping does not grow with the label: the ideal order must then follow the gain, not the label
gains = st.sampled_from(["linear", "exponential", {0: 0.0, 1: 1.0, 2: 3.0, 3: 7.0, 4: 15.5}, [5.0, 0.0, 1.0, 2.5, 0.5]])


@st.composite
def metric_calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A metric and options valid for both the expression and the namespace (doc="doc" always)."""
    metric = draw(st.sampled_from(["ndcg", "dcg", "reciprocal_rank"]))
    options: dict[str, Any] = {"k": draw(cutoffs), "ties": draw(st.sampled_from(TIES)), "doc": "doc"}
    if metric != "reciprocal_rank":
        options["gain"] = draw(gains)
    if metric == "ndcg":
        options["no_relevant"] = draw(st.sampled_from([0.0, 1.0, 0.5, None]))
    if metric == "dcg":
        options["log_base"] = draw(st.sampled_from([2.0, 10.0, math.e]))
    if metric == "reciprocal_rank":
        options["threshold"] = draw(st.sampled_from([0.0, 1.5, 3.0]))
    return metric, options


# the namespace methods name their column after the method; an expression, as `evaluate` names the measure
EVALUATE_NAMES = {"reciprocal_rank": "rr", "precision": "p", "recall": "r", "average_precision": "ap"}


def per_query(frame: pl.DataFrame, metric: str, options: dict[str, Any]) -> pl.DataFrame:
    result: pl.DataFrame = getattr(frame.rank_metrics, metric)(**options)
    return result.rename(
        lambda column: metric_column(metric, None) + column[len(metric) :] if column.startswith(metric) else column
    )


def expression(metric: str, options: dict[str, Any]) -> pl.Expr:
    built: pl.Expr = getattr(exprs, metric)(**options)
    return built


def metric_column(metric: str, k: int | None) -> str:
    name = EVALUATE_NAMES.get(metric, metric)
    return name if k is None else f"{name}@{k}"


# --- the same numbers as the namespace ------------------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
@SETTINGS
@given(frame=ragged_frames(), call=metric_calls())
def test_group_by_agg_matches_the_namespace(frame: pl.DataFrame, call: tuple[str, dict[str, Any]], engine: str) -> None:
    metric, options = call
    expected = per_query(frame, metric, options)
    result = aggregate(frame, engine, expression(metric, options))
    assert_frame_equal(result, expected, **TOLERANCE)


@pytest.mark.parametrize("engine", ENGINES)
@SETTINGS
@given(frame=ragged_frames(), call=metric_calls())
def test_beside_other_aggregations(frame: pl.DataFrame, call: tuple[str, dict[str, Any]], engine: str) -> None:
    metric, options = call
    column = metric_column(metric, options["k"])
    others = [pl.len().alias("rows"), pl.col("score").mean().alias("mean_score"), pl.col("relevance").max()]
    result = aggregate(frame, engine, *others, expression(metric, options), pl.col("doc").n_unique())
    expected_others = frame.group_by("query").agg(*others, pl.col("doc").n_unique()).sort("query")
    assert_frame_equal(result.drop(column), expected_others, **TOLERANCE)
    assert_frame_equal(result.select("query", column), per_query(frame, metric, options), **TOLERANCE)


@pytest.mark.parametrize("engine", ENGINES)
@SETTINGS
@given(frame=ragged_frames(), call=metric_calls(), second_k=st.integers(1, 12))
def test_several_cutoffs_are_several_expressions(
    frame: pl.DataFrame, call: tuple[str, dict[str, Any]], second_k: int, engine: str
) -> None:
    metric, options = call
    second = {**options, "k": second_k}
    if second_k == options["k"]:
        return  # two columns of the same name: Polars refuses, as it should
    result = aggregate(frame, engine, expression(metric, options), expression(metric, second))
    expected = per_query(frame, metric, options).join(per_query(frame, metric, second), on="query")
    assert_frame_equal(result, expected, **TOLERANCE)


@pytest.mark.parametrize("engine", ENGINES)
@SETTINGS
@given(frame=ragged_frames(), call=metric_calls())
def test_over_broadcasts_the_group_value_to_its_rows(
    frame: pl.DataFrame, call: tuple[str, dict[str, Any]], engine: str
) -> None:
    metric, options = call
    column = metric_column(metric, options["k"])
    result = broadcast(frame, engine, expression(metric, options))
    expected = frame.join(per_query(frame, metric, options), on="query", how="left", maintain_order="left")
    assert_frame_equal(result, expected, **TOLERANCE)
    assert result.height == frame.height and column in result.columns


@SETTINGS
@given(frame=ragged_frames(), call=metric_calls())
def test_columns_given_as_expressions(frame: pl.DataFrame, call: tuple[str, dict[str, Any]]) -> None:
    metric, options = call
    renamed = frame.rename({"relevance": "label", "score": "pred", "doc": "docno"})
    built = getattr(exprs, metric)(
        relevance=pl.col("label"), score=pl.col("pred") * 2.0, **{**options, "doc": pl.col("docno")}
    )
    result = renamed.group_by("query").agg(built).sort("query")
    assert_frame_equal(result, per_query(frame, metric, options), **TOLERANCE)


def test_select_over_the_whole_frame_is_one_group() -> None:
    frame = pl.DataFrame({"relevance": [3, 2, 3, 0, 1, 2], "score": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]})
    result = frame.select(exprs.ndcg(k=3), exprs.dcg(k=5), exprs.reciprocal_rank())
    expected = frame.with_columns(query=pl.lit(1))
    assert result["ndcg@3"].item() == pytest.approx(expected.rank_metrics.ndcg(k=3)["ndcg@3"].item(), abs=1e-12)
    assert result["dcg@5"].item() == pytest.approx(expected.rank_metrics.dcg(k=5)["dcg@5"].item(), abs=1e-12)
    assert result["rr"].item() == 1.0


def test_a_large_cutoff_uses_the_cumulative_sum_path() -> None:
    """Cut-offs above the lookup-table limit take the other tie-averaged path: same numbers."""
    rng = np.random.default_rng(3)
    frame = pl.DataFrame(
        {
            "query": rng.integers(0, 5, 3000),
            "relevance": rng.integers(0, 4, 3000),
            "score": rng.integers(0, 40, 3000).astype(float),
        }
    )
    k = _TABLE_CUTOFF_LIMIT + 1
    result = frame.group_by("query").agg(exprs.ndcg(k=600), exprs.ndcg(k=k), exprs.dcg()).sort("query")
    expected = frame.rank_metrics.ndcg(k=[600, k]).join(frame.rank_metrics.dcg(), on="query")
    assert_frame_equal(result, expected, **TOLERANCE)


# --- other aggregation contexts: rolling and group_by_dynamic ---------------------------------------------


@pytest.fixture
def timed() -> pl.DataFrame:
    rng = np.random.default_rng(7)
    n = 60
    return pl.DataFrame(
        {
            "t": np.sort(rng.integers(0, 30, n)),
            "relevance": rng.integers(0, 4, n),
            "score": rng.integers(0, 5, n).astype(float),
        }
    )


def namespace_on_rows(rows: pl.DataFrame, metric: str, **options: Any) -> float:
    value: float = getattr(rows.with_columns(query=pl.lit(0)).rank_metrics, metric)(**options).item(0, 1)
    return value


@pytest.mark.parametrize("metric", ALL_METRICS)
def test_rolling_windows_match_the_namespace_on_each_window(timed: pl.DataFrame, metric: str) -> None:
    result = timed.rolling("t", period="5i").agg(getattr(exprs, metric)(k=3).alias("value"))
    for t, value in result.iter_rows():
        window = timed.filter((pl.col("t") > t - 5) & (pl.col("t") <= t))
        assert value == pytest.approx(namespace_on_rows(window, metric, k=3), abs=1e-12)


@pytest.mark.parametrize("metric", ALL_METRICS)
def test_group_by_dynamic_windows_match_the_namespace_on_each_window(timed: pl.DataFrame, metric: str) -> None:
    result = timed.group_by_dynamic("t", every="7i", period="10i").agg(getattr(exprs, metric)(k=4).alias("value"))
    assert result.height > 2
    for t, value in result.iter_rows():
        window = timed.filter((pl.col("t") >= t) & (pl.col("t") < t + 10))
        assert value == pytest.approx(namespace_on_rows(window, metric, k=4), abs=1e-12)


# --- scikit-learn directly, on dense rows ---------------------------------------------------------------


def long_frame(y_true: np.ndarray, y_score: np.ndarray) -> pl.DataFrame:
    queries, docs = y_true.shape
    return pl.DataFrame(
        {
            "query": np.repeat(np.arange(queries), docs),
            "relevance": y_true.ravel(),
            "score": y_score.ravel(),
        }
    )


@pytest.mark.parametrize("k", [None, 1, 3, 7])
def test_ndcg_and_dcg_match_scikit_learn_row_by_row_with_ties(k: int | None) -> None:
    rng = np.random.default_rng(11)
    y_true = rng.integers(0, 5, (30, 12))
    y_score = rng.integers(0, 4, (30, 12)).astype(float)  # heavy ties
    frame = long_frame(y_true, y_score)
    result = frame.group_by("query").agg(exprs.ndcg(k=k).alias("ndcg"), exprs.dcg(k=k).alias("dcg")).sort("query")
    for row, (ndcg, dcg) in enumerate(result.select("ndcg", "dcg").iter_rows()):
        assert ndcg == pytest.approx(ndcg_score(y_true[[row]], y_score[[row]], k=k), abs=1e-12)
        assert dcg == pytest.approx(dcg_score(y_true[[row]], y_score[[row]], k=k), abs=1e-12)


def test_scikit_learns_documented_partial_credit_at_the_cutoff() -> None:
    """scikit-learn's own docstring example: a tie block straddling k=1 gets half the credit."""
    y_true, y_score = np.array([[10, 0, 0, 1, 5]]), np.array([[1, 0, 0, 0, 1]])
    frame = long_frame(y_true, y_score)
    result = frame.group_by("query").agg(exprs.dcg(k=1), exprs.ndcg(k=1))
    assert result["dcg@1"].item() == pytest.approx(dcg_score(y_true, y_score, k=1), abs=1e-12)  # 7.5
    assert result["ndcg@1"].item() == pytest.approx(ndcg_score(y_true, y_score, k=1), abs=1e-12)  # 0.75


def test_reverse_ties_are_scikit_learns_ignore_ties_on_tie_free_rows() -> None:
    rng = np.random.default_rng(5)
    y_true = rng.integers(0, 5, (20, 9))
    y_score = rng.permuted(np.tile(np.arange(9.0), (20, 1)), axis=1)  # distinct scores in each row
    frame = long_frame(y_true, y_score)
    result = frame.group_by("query").agg(exprs.ndcg(k=4, ties="reverse")).sort("query")["ndcg@4"]
    for row, value in enumerate(result):
        assert value == pytest.approx(ndcg_score(y_true[[row]], y_score[[row]], k=4, ignore_ties=True), abs=1e-12)


def test_dcg_log_base_matches_scikit_learn() -> None:
    rng = np.random.default_rng(9)
    y_true, y_score = rng.integers(0, 5, (10, 8)), rng.integers(0, 3, (10, 8)).astype(float)
    result = long_frame(y_true, y_score).group_by("query").agg(exprs.dcg(k=5, log_base=10.0)).sort("query")
    for row, value in enumerate(result["dcg@5"]):
        assert value == pytest.approx(dcg_score(y_true[[row]], y_score[[row]], k=5, log_base=10), abs=1e-12)


# --- option errors: raised when the expression is built, with the namespace's message ---------------------


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


def namespace_error(frame: pl.DataFrame, metric: str, **options: Any) -> BaseException:
    with pytest.raises(Exception) as raised:
        getattr(frame.rank_metrics, metric)(**options)
    return raised.value


@pytest.mark.parametrize(
    ("metric", "options"),
    [
        ("ndcg", {"k": 0}),
        ("ndcg", {"k": -3}),
        ("ndcg", {"ties": "random"}),
        ("ndcg", {"ties": "doc"}),
        ("ndcg", {"gain": "quadratic"}),
        ("ndcg", {"gain": 2}),
        ("ndcg", {"gain": {}}),
        ("ndcg", {"gain": {1: math.inf}}),
        ("ndcg", {"gain": {True: 1.0}}),
        ("ndcg", {"no_relevant": "zero"}),
        ("ndcg", {"no_relevant": math.nan}),
        ("ndcg", {"no_relevant": True}),
        ("dcg", {"log_base": 1}),
        ("dcg", {"log_base": 0}),
        ("dcg", {"log_base": "2"}),
        ("reciprocal_rank", {"threshold": math.inf}),
        ("reciprocal_rank", {"threshold": "0"}),
    ],
)
def test_option_errors_raise_at_build_time_with_the_namespaces_message(
    small: pl.DataFrame, metric: str, options: dict[str, Any]
) -> None:
    expected = namespace_error(small, metric, **options)
    with pytest.raises(type(expected)) as raised:
        getattr(exprs, metric)(**options)  # no frame, no collect
    assert str(raised.value) == str(expected)


@pytest.mark.parametrize("k", [2.5, "3", True])
def test_a_non_int_cutoff_is_a_type_error_as_in_the_namespace(small: pl.DataFrame, k: Any) -> None:
    expected = namespace_error(small, "ndcg", k=k)
    assert isinstance(expected, TypeError)
    with pytest.raises(TypeError) as raised:
        exprs.ndcg(k=k)
    assert str(raised.value) == str(expected)  # the namespace's own check: one home per rule


def test_one_cutoff_per_expression() -> None:
    with pytest.raises(TypeError, match=r"exprs.ndcg takes one cut-off: .* not \[1, 3\]"):
        exprs.ndcg(k=[1, 3])  # type: ignore[arg-type]  # the error under test


def test_a_column_must_be_a_name_or_an_expression() -> None:
    with pytest.raises(TypeError, match="`score` must be a column name"):
        exprs.ndcg(score=3)  # type: ignore[arg-type]  # the error under test


# --- data errors: raised at collect time, with the namespace's message ------------------------------------


def expression_error(frame: pl.DataFrame, engine: str, context: str, built: pl.Expr) -> str:
    """The first paragraph of the error (Polars appends the expression that failed after a blank line)."""
    with pytest.raises(ValueError) as raised:
        if context == "agg":
            aggregate(frame, engine, built)
        else:
            broadcast(frame, engine, built)
    return str(raised.value).split("\n\n")[0]


CONTEXTS = [(engine, context) for engine in ENGINES for context in ("agg", "over")]


def assert_quotes_a_failing_group(message: str, engine: str, quotes: Sequence[str]) -> None:
    """`quotes`: the message worded for each failing group, the group the check prefers first.  The eager and
    in-memory engines hand the check every group's results at once, so it quotes the preferred group; the
    streaming engine may hand them over in batches (under `.over()`, once per row, in morsels), so the message
    is true of one of the failing groups."""
    if engine == "streaming":
        assert message in quotes
    else:
        assert message == quotes[0]


@pytest.mark.parametrize(("engine", "context"), CONTEXTS)
@pytest.mark.parametrize(("column", "bad"), [("relevance", None), ("relevance", math.nan), ("score", math.inf)])
@pytest.mark.parametrize("metric", ALL_METRICS)
def test_null_nan_or_infinite_values(
    small: pl.DataFrame, metric: str, column: str, bad: float | None, engine: str, context: str
) -> None:
    frame = small.with_columns(pl.col(column).cast(pl.Float64))
    frame = frame.with_columns(pl.when(pl.col("query") >= 2).then(bad).otherwise(pl.col(column)).alias(column))
    namespace = str(namespace_error(frame, metric))
    message = expression_error(frame, engine, context, getattr(exprs, metric)())
    # the namespace counts them and names the first query; an expression, which sees neither the group key nor
    # (under the streaming engine) every group at once, words one group: the one with the most (query 2: 2 rows)
    stem = f"{column} column {column!r} has 3 null, NaN or infinite value(s)"
    assert namespace.startswith(stem + ", the first in query 2.")
    quotes = [f"a group has {count} null, NaN or infinite value(s) in {column} column {column!r}." for count in (2, 1)]
    assert_quotes_a_failing_group(message, engine, quotes)


@pytest.mark.parametrize(("engine", "context"), CONTEXTS)
@pytest.mark.parametrize("metric", ["ndcg", "precision"])
def test_a_data_error_words_one_group_whatever_the_batches(metric: str, engine: str, context: str) -> None:
    """600 groups of 5 rows, group g with g % 4 NaN scores (0 to 3), rows of the groups interleaved: under the
    streaming engine the check may see the groups in batches, or (`.over()` of a plain aggregation such as
    precision's) once per row, so a count over the groups it is handed would be wrong; the message words one
    failing group, the one with the most where every group is handed at once."""
    groups = np.arange(3000) % 600
    position = np.arange(3000) // 600
    frame = pl.DataFrame(
        {
            "query": groups,
            "relevance": position % 2,
            "score": np.where(position < groups % 4, np.nan, position / 10),
        }
    )
    message = expression_error(frame, engine, context, getattr(exprs, metric)())
    quotes = [f"a group has {count} null, NaN or infinite value(s) in score column 'score'." for count in (3, 2, 1)]
    assert_quotes_a_failing_group(message, engine, quotes)


@pytest.mark.parametrize(("engine", "context"), CONTEXTS)
def test_negative_relevance_is_refused_by_ndcg(small: pl.DataFrame, engine: str, context: str) -> None:
    frame = small.with_columns(relevance=pl.Series([1, -1, 2, 1, -3]))
    message = expression_error(frame, engine, context, exprs.ndcg())
    # the namespace names the first query and its label; an expression words the group with the least label
    # (query 3: -3; query 1 has -1)
    reason = "ndcg refuses negative labels, as scikit-learn's ndcg_score does (dcg accepts them)."
    namespace = "relevance column 'relevance' has 2 negative value(s), the first in query 1 (its least label -1); "
    assert str(namespace_error(frame, "ndcg")) == namespace + reason
    stem = "a group has 1 negative value(s) in relevance column 'relevance'"
    assert_quotes_a_failing_group(message, engine, [f"{stem} (the least {least}); {reason}" for least in (-3, -1)])
    # dcg accepts negative relevance, as scikit-learn's dcg_score does
    result = frame.group_by("query").agg(exprs.dcg()).sort("query")
    assert_frame_equal(result, frame.rank_metrics.dcg(), **TOLERANCE)


@pytest.mark.parametrize(("engine", "context"), CONTEXTS)
def test_a_label_missing_from_the_gain_mapping(small: pl.DataFrame, engine: str, context: str) -> None:
    gain = {0: 0.0, 1: 1.0}
    message = expression_error(small, engine, context, exprs.ndcg(gain=gain))
    namespace = str(namespace_error(small, "ndcg", gain=gain))
    assert namespace == "relevance label 2 (query 2) has no gain in the gain mapping."
    assert message == namespace.replace(" (query 2)", "")


@pytest.mark.parametrize(("engine", "context"), CONTEXTS)
def test_several_labels_missing_from_the_gain_mapping_quote_the_least(engine: str, context: str) -> None:
    """Labels 9 and 5 unmapped in one group (9 first), 7 in another: the message quotes 5, the least, whatever
    the order of the rows and of the groups (the first unmapped label of the first failing group would be 9 or
    7, depending on the order the groups come in); the streaming engine, which may hand the check the groups
    in batches, quotes the least of one group, 5 or 7."""
    frame = pl.DataFrame(
        {
            "query": [1, 1, 1, 2, 2, 3],
            "relevance": [9, 1, 5, 0, 7, 1],
            "score": [0.5, 0.2, 0.1, 0.3, 0.9, 0.4],
        }
    )
    gain = {0: 0.0, 1: 1.0}
    for order in ([0, 1, 2, 3, 4, 5], [4, 3, 5, 0, 1, 2], [5, 3, 4, 2, 1, 0]):
        message = expression_error(frame[order], engine, context, exprs.ndcg(gain=gain))
        quotes = [f"relevance label {label} has no gain in the gain mapping." for label in (5, 7)]
        assert_quotes_a_failing_group(message, engine, quotes)


@pytest.mark.parametrize(("engine", "context"), CONTEXTS)
def test_a_duplicated_doc(small: pl.DataFrame, engine: str, context: str) -> None:
    frame = small.with_columns(doc=pl.Series(["a", "b", "b", "b", "c"]))
    message = expression_error(frame, engine, context, exprs.ndcg(doc="doc"))
    namespace = str(namespace_error(frame, "ndcg", doc="doc"))
    tail = "more than once (column 'doc'); a duplicated (query, doc) pair, often from a join fan-out, would "
    assert namespace.startswith("query 2 lists doc 'b' more than once")
    assert namespace.endswith(" would inflate the metric.")
    assert message == "a group lists doc 'b' " + tail + "inflate the metric."


@pytest.mark.parametrize(("engine", "context"), CONTEXTS)
def test_a_duplicated_doc_and_an_err_grade_quote_the_least(engine: str, context: str) -> None:
    """Group 1 lists 'b' then 'a' twice each and grades 9 then 5 outside ERR's 0..4; group 2 lists 'c' twice and
    has grade 7: every engine quotes the least of one failing group ('a' or 'c', 5 or 7), the eager and in-memory
    engines the least of all ('a', 5), in both orders of the rows (the first in the rows' order would be 'b' or
    9 in one of them), as the namespace quotes the least of its query."""
    frame = pl.DataFrame(
        {
            "query": [1, 1, 1, 1, 2, 2],
            "doc": ["b", "b", "a", "a", "c", "c"],
            "relevance": [9, 5, 5, 0, 7, 1],
            "score": [0.5, 0.4, 0.3, 0.2, 0.1, 0.6],
        }
    )
    tail = "more than once (column 'doc'); a duplicated (query, doc) pair, often from a join fan-out, would "
    grade_tail = "is outside ERR's grades 0..4: its stopping probability (2**g - 1) / 2**4 must lie in [0, 1)."
    for rows in (frame, frame.reverse()):
        message = expression_error(rows, engine, context, exprs.ndcg(doc="doc"))
        quotes = [f"a group lists doc {doc!r} " + tail + "inflate the metric." for doc in ("a", "c")]
        assert_quotes_a_failing_group(message, engine, quotes)
        message = expression_error(rows, engine, context, exprs.err(ties="input"))
        quotes = [f"relevance {grade} (column 'relevance') {grade_tail}" for grade in (5, 7)]
        assert_quotes_a_failing_group(message, engine, quotes)
    # a doc given as a struct expression (several id columns) is quoted too, the least of its fields' order
    composite = frame.with_columns(part=pl.lit(0))
    message = expression_error(composite, engine, context, exprs.ndcg(doc=pl.struct("doc", "part")))
    quotes = [f"a group lists doc {{'doc': {doc!r}, 'part': 0}} " for doc in ("a", "c")]
    assert any(message.startswith(quote) for quote in quotes[: 1 if engine != "streaming" else 2]), message


@pytest.mark.parametrize(("engine", "context"), CONTEXTS)
def test_a_null_doc(small: pl.DataFrame, engine: str, context: str) -> None:
    frame = small.with_columns(doc=pl.Series(["a", None, "a", "b", None]))
    message = expression_error(frame, engine, context, exprs.reciprocal_rank(doc="doc", ties="doc"))
    namespace = str(namespace_error(frame, "reciprocal_rank", doc="doc", ties="doc"))
    assert namespace == "doc column 'doc' has 2 null value(s), the first in query 1."
    assert message == "a group has 1 null value(s) in doc column 'doc'."  # queries 1 and 3 have one each


@pytest.mark.parametrize(("engine", "context"), CONTEXTS)
def test_no_relevant_error(small: pl.DataFrame, engine: str, context: str) -> None:
    message = expression_error(small, engine, context, exprs.ndcg(no_relevant="error"))
    namespace = str(namespace_error(small, "ndcg", no_relevant="error"))
    assert namespace.startswith("query 3 has no relevant document (ideal DCG is 0), and 1 ")
    assert namespace.endswith("in all; pass no_relevant=0.0, 1.0 or None to score them.")
    expected = "a group has no relevant document (ideal DCG is 0); pass no_relevant=0.0, 1.0 or None to score them."
    assert message == expected


def test_no_relevant_none_gives_null_as_the_namespace(small: pl.DataFrame) -> None:
    result = small.group_by("query").agg(exprs.ndcg(no_relevant=None)).sort("query")
    assert result["ndcg"].to_list()[2] is None
    assert_frame_equal(result, small.rank_metrics.ndcg(no_relevant=None), **TOLERANCE)


def test_data_errors_raise_beside_other_aggregations(small: pl.DataFrame) -> None:
    frame = small.with_columns(score=pl.Series([0.5, None, 0.1, 0.3, 0.9]))
    expected = "a group has 1 null, NaN or infinite value(s) in score column 'score'."
    with pytest.raises(ValueError, match=re.escape(expected)):
        frame.group_by("query").agg(pl.len(), exprs.ndcg(k=3), pl.col("relevance").sum())


# --- the polars-ds migration table (README): run only where polars-ds is installed -------------------------


def test_polars_ds_ignore_ties_is_our_reverse_ties() -> None:
    """polars-ds is not a test dependency: this check of the migration table skips without it."""
    pds = pytest.importorskip("polars_ds")
    rng = np.random.default_rng(1)
    frame = pl.DataFrame(
        {
            "query": rng.integers(0, 50, 1500),
            "relevance": rng.integers(0, 4, 1500),
            "score": rng.integers(0, 4, 1500).astype(float),  # heavy ties: the tie order matters
        }
    )
    for k in (None, 3):
        theirs = frame.group_by("query").agg(
            pds.query_ndcg_score("relevance", "score", k=k, ignore_ties=True).alias("ndcg"),
            pds.query_dcg_score("relevance", "score", 10.0, k, True).alias("dcg"),
        )
        ours = frame.group_by("query").agg(
            exprs.ndcg(k=k, ties="reverse").alias("ndcg"), exprs.dcg(k=k, ties="reverse", log_base=10.0).alias("dcg")
        )
        assert_frame_equal(theirs.sort("query"), ours.sort("query"), **TOLERANCE)


@pytest.mark.parametrize(("column", "values"), [("relevance", ["1", "0", "2", "1", "0"]), ("score", [True] * 5)])
def test_a_non_numeric_column_is_a_schema_error_with_the_namespaces_message(
    small: pl.DataFrame, column: str, values: list[Any]
) -> None:
    frame = small.with_columns(pl.Series(column, values))
    namespace = namespace_error(frame, "ndcg")
    assert isinstance(namespace, pl.exceptions.SchemaError)
    for engine, context in CONTEXTS:
        with pytest.raises(pl.exceptions.SchemaError) as raised:
            if context == "agg":
                aggregate(frame, engine, exprs.ndcg())
            else:
                broadcast(frame, engine, exprs.ndcg())
        assert str(raised.value).split("\n\n")[0] == str(namespace)


def test_doc_ties_compare_ids_as_text_as_trec_eval() -> None:
    """Integer doc ids tie-broken as trec_eval does, by their text descending ("9" > "100"): pytrec_eval."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    frame = pl.DataFrame({"query": [1, 1, 1], "doc": [9, 100, 5], "relevance": [0, 1, 0], "score": [1.0, 1.0, 0.5]})
    run = {"1": {str(d): s for d, s in zip(frame["doc"], frame["score"], strict=True)}}
    qrels = {"1": {str(d): r for d, r in zip(frame["doc"], frame["relevance"], strict=True)}}
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank", "ndcg"}).evaluate(run)["1"]
    result = frame.group_by("query").agg(
        exprs.reciprocal_rank(doc="doc", ties="doc"), exprs.ndcg(doc="doc", ties="doc")
    )
    assert result["rr"].item() == pytest.approx(expected["recip_rank"], abs=1e-12)  # 0.5: "9" first
    assert result["ndcg"].item() == pytest.approx(expected["ndcg"], abs=1e-12)


@pytest.mark.parametrize("engine", ENGINES)
def test_empty_input(small: pl.DataFrame, engine: str) -> None:
    empty = small.head(0)
    result = aggregate(empty, engine, exprs.ndcg(), exprs.dcg(k=3), exprs.reciprocal_rank(ties="input"))
    assert result.height == 0
    assert result.schema == pl.Schema({"query": pl.Int64, "ndcg": pl.Float64, "dcg@3": pl.Float64, "rr": pl.Float64})
    # over a whole empty frame, `select` sees one group without rows: empty sums, as Polars' own sum gives 0
    totals = empty.select(exprs.ndcg(), exprs.dcg(k=3), exprs.reciprocal_rank())
    assert totals.row(0) == (0.0, 0.0, 0.0)
    assert math.copysign(1.0, totals["dcg@3"].item()) == 1.0


# (expression, evaluate's measure) pairs: every expression of the package, its output name against the column
# `evaluate` gives the same measure (issue 46: one name for a measure whichever front end computes it)
NAMED_AS_EVALUATE: list[tuple[Callable[[], pl.Expr], str]] = [
    (lambda: exprs.ndcg(k=5), "ndcg@5"),
    (lambda: exprs.measure("compat(p=0.8)", ties="doc", doc="doc"), "compat(p=0.8)"),
    (lambda: exprs.measure("rprec_mult@0.5"), "rprec_mult@0.5"),
    (lambda: exprs.dcg(), "dcg"),
    (lambda: exprs.ideal_dcg(k=3), "ideal_dcg@3"),
    (lambda: exprs.reciprocal_rank(k=5), "rr@5"),
    (lambda: exprs.reciprocal_rank(), "mrr"),
    (lambda: exprs.precision(k=5), "p@5"),
    (lambda: exprs.precision(), "precision"),
    (lambda: exprs.recall(k=5), "r@5"),
    (lambda: exprs.average_precision(k=5), "ap@5"),
    (lambda: exprs.average_precision(), "map"),
    (lambda: exprs.success(k=1), "success@1"),
    (lambda: exprs.hit_rate(k=3), "hit_rate@3"),
    (lambda: exprs.rprec(), "rprec"),
    (lambda: exprs.relative_precision(k=5), "relative_p@5"),
    (lambda: exprs.f1(k=5), "f1@5"),
    (lambda: exprs.yaap(ties="doc", doc="doc"), "yaap"),
    (lambda: exprs.err(k=5, ties="doc", doc="doc"), "err@5"),
    (lambda: exprs.nerr(k=5, ties="doc", doc="doc"), "nerr@5"),
    (lambda: exprs.rbp(k=5), "rbp@5"),
    (lambda: exprs.rbp(p=0.8), "rbp(p=0.8)"),
    (lambda: exprs.sdcg(max_rel=2, k=5), "sdcg(max_rel=2)@5"),
    (lambda: exprs.iprec_at_recall(level=0.5, ties="doc", doc="doc"), "iprec@0.5"),
    (lambda: exprs.eleven_point_average(ties="doc", doc="doc"), "11pt_avg"),
    (lambda: exprs.g(ties="doc", doc="doc"), "g"),
    (lambda: exprs.bin_g(), "bin_g"),
]


def test_every_expression_is_named_as_evaluate_names_its_measure() -> None:
    assert {name for name in exprs.__all__} <= {
        "ndcg",
        "dcg",
        "ideal_dcg",
        "reciprocal_rank",
        "precision",
        "recall",
        "average_precision",
        "success",
        "hit_rate",
        "rprec",
        "relative_precision",
        "f1",
        "yaap",
        "err",
        "nerr",
        "rbp",
        "sdcg",
        "iprec_at_recall",
        "eleven_point_average",
        "g",
        "bin_g",
        "measure",
    }, "an expression was added: name it in NAMED_AS_EVALUATE"
    frame = pl.DataFrame({"query": [1, 1, 1], "doc": ["a", "b", "c"], "relevance": [1, 0, 2], "score": [3.0, 2.0, 1.0]})
    for build, measure in NAMED_AS_EVALUATE:
        expected = frame.rank_metrics.evaluate([measure], ties="doc", doc="doc").columns[-1]
        assert frame.group_by("query").agg(build()).columns[-1] == expected, measure


def test_the_measure_table_names_the_expression_of_every_measure_that_has_one() -> None:
    """The README's measure table reads `_MEASURE_EXPRESSIONS`: every expression (hit_rate is success under
    ranx's name) computes one registered measure, and names its column as `evaluate` names that measure."""
    from lodestar_polars.exprs import _MEASURE_EXPRESSIONS
    from lodestar_polars.measures._registry import REGISTRY

    assert sorted(_MEASURE_EXPRESSIONS.values()) == sorted(set(exprs.__all__) - {"hit_rate", "measure"})
    assert set(_MEASURE_EXPRESSIONS) <= set(REGISTRY)
    named = {measure.split("@")[0].split("(")[0]: build for build, measure in NAMED_AS_EVALUATE}
    frame = pl.DataFrame({"query": [1, 1], "doc": ["a", "b"], "relevance": [1, 0], "score": [2.0, 1.0]})
    for measure, function in _MEASURE_EXPRESSIONS.items():
        build = named.get(measure) or named[function]
        column = frame.group_by("query").agg(build()).columns[-1]
        assert column.split("@")[0].split("(")[0] == measure, (measure, function, column)
