"""Every bad input gets a precise error: type and message, eager and lazy."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

import lodestar_polars  # noqa: F401  (registers .rank_metrics)


@pytest.fixture
def frame() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "query": [1, 1, 2, 2, 3],
            "doc": ["a", "b", "a", "b", "c"],
            "relevance": [1, 0, 2, 1, 0],
            "score": [0.5, 0.2, 0.1, 0.3, 0.9],
            "w": [1.0, 1.0, 2.0, 2.0, 1.0],
        }
    )


Run = Callable[[pl.DataFrame], object]


def eager_and_lazy(method: str, **options: Any) -> list[Run]:
    """The same call on a DataFrame and, collected by both engines, on a LazyFrame."""
    return [
        lambda df: getattr(df.rank_metrics, method)(**options),
        lambda df: getattr(df.lazy().rank_metrics, method)(**options).collect(engine="in-memory"),
        lambda df: getattr(df.lazy().rank_metrics, method)(**options).collect(engine="streaming"),
    ]


def assert_raises(runs: list[Run], frame: pl.DataFrame, error: type[Exception], message: str) -> None:
    """`message` is the whole message, or its beginning when it ends with "..."."""
    for run in runs:
        with pytest.raises(error) as raised:
            run(frame)
        if message.endswith("..."):
            assert str(raised.value).startswith(message[:-3])
        else:
            assert str(raised.value) == message


# --- schema errors: raised when the method is called, even on a LazyFrame -------------------------------


def test_missing_column_is_named_with_the_frames_columns(frame: pl.DataFrame) -> None:
    message = "score column 'prediction' not found in the frame; its columns are: query, doc, relevance, score, w."
    with pytest.raises(pl.exceptions.ColumnNotFoundError, match=re.escape(message)):
        frame.lazy().rank_metrics.ndcg(score="prediction")  # no collect: fails at the call


@pytest.mark.parametrize(
    ("role", "option"),
    [("relevance", "relevance"), ("score", "score"), ("weight", "weight")],
)
def test_non_numeric_column_names_its_dtype(frame: pl.DataFrame, role: str, option: str) -> None:
    column = {"relevance": "relevance", "score": "score", "weight": "w"}[role]
    text = frame.with_columns(pl.col(column).cast(pl.String))
    kinds = "numeric or boolean" if role == "relevance" else "numeric"
    message = f"{role} column {column!r} in the frame must be {kinds}, got dtype String."
    with pytest.raises(pl.exceptions.SchemaError, match=re.escape(message)):
        text.lazy().rank_metrics.ndcg(**{option: column})


@pytest.mark.parametrize(
    ("k", "error", "message"),
    [
        (0, ValueError, "k must be at least 1, got 0."),
        (-3, ValueError, "k must be at least 1, got -3."),
        (True, TypeError, "k must be a positive int, None, or a list of them; got True (bool)."),
        (2.0, TypeError, "k must be a positive int, None, or a list of them; got 2.0 (float)."),
        ([5, 10, 5], ValueError, "k lists the same cut-off more than once: 5."),
        ([], ValueError, "k must not be an empty list."),
        ([3, False], TypeError, "got False (bool)."),
    ],
)
def test_bad_cutoffs(frame: pl.DataFrame, k: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=re.escape(message)):
        frame.lazy().rank_metrics.ndcg(k=k)


def test_unknown_tie_mode(frame: pl.DataFrame) -> None:
    message = "ties must be one of 'average', 'reverse', 'input', 'doc', 'optimistic', 'pessimistic'; got 'first'."
    with pytest.raises(ValueError, match=re.escape(message)):
        frame.lazy().rank_metrics.ndcg(ties="first")  # type: ignore[arg-type]  # the point of the test


def test_doc_ties_need_a_doc_column(frame: pl.DataFrame) -> None:
    with pytest.raises(ValueError, match=re.escape("ties='doc' breaks ties by the doc column: pass doc='<column>'.")):
        frame.rank_metrics.ndcg(ties="doc")


@pytest.mark.parametrize(
    ("gain", "error", "message"),
    [
        (
            "log",
            ValueError,
            "gain must be 'linear', 'exponential', a mapping label -> gain, or a sequence of gains; got 'log'.",
        ),
        (3, TypeError, "gain must be 'linear', 'exponential', a mapping label -> gain, or a sequence of gains; got 3."),
        ({}, ValueError, "gain mapping is empty."),
        ({0: 0.0, 1: float("nan")}, ValueError, "gain mapping gain must be a finite number, got nan (label 1)."),
    ],
)
def test_bad_gain(frame: pl.DataFrame, gain: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=re.escape(message)):
        frame.lazy().rank_metrics.ndcg(gain=gain)


@pytest.mark.parametrize(
    ("no_relevant", "error", "message"),
    [
        ("zero", TypeError, "no_relevant must be a float, None or 'error'; got 'zero'."),
        (float("inf"), ValueError, "no_relevant must be finite, got inf."),
    ],
)
def test_bad_no_relevant(frame: pl.DataFrame, no_relevant: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=re.escape(message)):
        frame.rank_metrics.ndcg(no_relevant=no_relevant)


@pytest.mark.parametrize("log_base", [0, -2.0, 1.0, float("inf")])
def test_bad_log_base(frame: pl.DataFrame, log_base: float) -> None:
    with pytest.raises(
        ValueError, match=re.escape(f"log_base must be a finite float above 0 and not 1, got {log_base!r}.")
    ):
        frame.rank_metrics.dcg(log_base=log_base)


def test_tie_bounds_of_dcg_below_log_base_one() -> None:
    """Two tied rows of grades 1 and 0.  In base 2 the best order gives 1 / log2(2) = 1.0, the worst
    1 / log2(3) = 0.631; in base 0.5 each discount is the negated base-2 one, so the most gainful order would give
    -1.0, the least value: the bounds are refused, for dcg only (ndcg's ratio does not change with the base),
    and the other tie modes still give scikit-learn's numbers (dcg_score(log_base=0.5): -(1 + 0.631) / 2)."""
    from lodestar_polars import exprs

    tied = pl.DataFrame({"query": [1, 1], "relevance": [1, 0], "score": [0.5, 0.5]})
    assert tied.rank_metrics.dcg(ties="optimistic")["dcg"].item() == 1.0
    for ties, order, value in (("optimistic", "most", "least"), ("pessimistic", "least", "greatest")):
        message = (
            f"dcg with log_base=0.5 (below 1) has negative discounts: ties={ties!r} orders a tie block {order} "
            f"gainful first, which gives its {value} value, not its bound; pass a log_base above 1 or another tie mode."
        )
        with pytest.raises(ValueError, match=re.escape(message)):
            tied.rank_metrics.dcg(ties=ties, log_base=0.5)
        with pytest.raises(ValueError, match=re.escape(message.replace("dcg with", "dcg@2 with"))):
            tied.rank_metrics.evaluate(["ndcg", "dcg@2"], ties=ties, log_base=0.5)
        with pytest.raises(ValueError, match=re.escape(message)):
            exprs.dcg(ties=ties, log_base=0.5)
        ndcg = tied.rank_metrics.evaluate(["ndcg"], ties=ties, log_base=0.5)["ndcg"].item()
        assert ndcg == pytest.approx(1.0 if ties == "optimistic" else 1.0 / math.log2(3.0), rel=1e-12)
    average = tied.rank_metrics.dcg(log_base=0.5)["dcg"].item()
    assert average == pytest.approx(-(1.0 + 1.0 / math.log2(3.0)) / 2.0, rel=1e-12)


def test_output_name_clash(frame: pl.DataFrame) -> None:
    clashing = frame.rename({"query": "ndcg@5"})
    with pytest.raises(
        ValueError, match=re.escape("column name 'ndcg@5' clashes with an output column; rename it first.")
    ):
        clashing.rank_metrics.ndcg(query="ndcg@5", k=5)


def test_a_single_number_needs_a_single_cutoff(frame: pl.DataFrame) -> None:
    with pytest.raises(TypeError, match=re.escape("ndcg_score returns one number: give k as one int or None")):
        frame.rank_metrics.ndcg_score(k=[1, 2])  # type: ignore[arg-type]  # the point of the test


# --- data errors: raised at collect time, with the same messages -------------------------------------------


@pytest.mark.parametrize("column", ["relevance", "score"])
@pytest.mark.parametrize("bad", [None, float("nan"), float("inf"), -float("inf")])
def test_null_nan_or_infinite_values_are_counted(frame: pl.DataFrame, column: str, bad: float | None) -> None:
    values = frame[column].cast(pl.Float64).to_list()
    values[1] = bad
    values[3] = bad
    broken = frame.with_columns(pl.Series(column, values, dtype=pl.Float64))
    message = f"{column} column {column!r} has 2 null, NaN or infinite value(s), the first in query 1."
    assert_raises(eager_and_lazy("ndcg"), broken, ValueError, message)


def negative_labels(column: str, total: int, query: int, label: int) -> str:
    return (
        f"relevance column {column!r} has {total} negative value(s), the first in query {query} "
        f"(its least label {label}); "
        "ndcg refuses negative labels, as scikit-learn's ndcg_score does (dcg accepts them)."
    )


def test_negative_relevance_is_refused_by_ndcg_as_in_scikit_learn(frame: pl.DataFrame) -> None:
    """scikit-learn's rule (`ndcg_score should not be used on negative y_true values.`) in the namespace's words:
    the column, the count, the first query in key order and its negative label."""
    broken = frame.with_columns(pl.Series("relevance", [1, 0, -1, 1, -2]))
    message = negative_labels("relevance", 2, 2, -1)
    assert_raises(eager_and_lazy("ndcg"), broken, ValueError, message)
    assert_raises(eager_and_lazy("ndcg_mean"), broken, ValueError, message)
    # the user's own column name, and the first query in key order whatever the rows' order
    renamed = broken.rename({"relevance": "label"}).reverse()
    message = negative_labels("label", 2, 2, -1)
    assert_raises(eager_and_lazy("ndcg", relevance="label"), renamed, ValueError, message)
    # two negative labels in the first query at fault: its least, whatever the rows' order (-1 comes first in
    # one order, -3 in the other)
    twice = frame.with_columns(pl.Series("relevance", [1, 0, -1, -3, -2]))
    for rows in (twice, twice.reverse()):
        assert_raises(eager_and_lazy("ndcg"), rows, ValueError, negative_labels("relevance", 3, 2, -3))


def test_negative_relevance_is_accepted_by_dcg(frame: pl.DataFrame) -> None:
    negative = frame.with_columns(pl.Series("relevance", [1, 0, -1, 1, 0]))
    # query 2: scores 0.1 (rel -1) and 0.3 (rel 1): 1/log2(2) + -1/log2(3)
    result = negative.rank_metrics.dcg()
    assert result.filter(pl.col("query") == 2)["dcg"].item() == pytest.approx(1.0 - 1.0 / 1.584962500721156)


def test_a_label_missing_from_the_gain_mapping(frame: pl.DataFrame) -> None:
    message = "relevance label 2 (query 2) has no gain in the gain mapping."
    assert_raises(eager_and_lazy("ndcg", gain={0: 0.0, 1: 1.0}), frame, ValueError, message)


@pytest.mark.parametrize("bad", [None, float("nan"), float("inf")])
def test_bad_weight(frame: pl.DataFrame, bad: float | None) -> None:
    broken = frame.with_columns(pl.Series("w", [1.0, 1.0, bad, bad, 1.0], dtype=pl.Float64))
    message = "weight column 'w' has 2 null, NaN or infinite value(s), the first in query 2."
    assert_raises(eager_and_lazy("ndcg", weight="w"), broken, ValueError, message)


def test_weight_differing_within_a_query(frame: pl.DataFrame) -> None:
    broken = frame.with_columns(pl.Series("w", [1.0, 1.0, 2.0, 2.5, 1.0]))
    message = "weight column 'w' differs within query 2; give every row of a query the same weight."
    assert_raises(eager_and_lazy("ndcg", weight="w"), broken, ValueError, message)


def test_weights_summing_to_zero(frame: pl.DataFrame) -> None:
    zero_sum = frame.with_columns(pl.Series("w", [1.0, 1.0, -2.0, -2.0, 1.0]))
    message = "Weights sum to zero, can't be normalized"
    assert_raises(eager_and_lazy("ndcg_mean", weight="w"), zero_sum, ZeroDivisionError, message)
    with pytest.raises(ZeroDivisionError, match=message):
        zero_sum.rank_metrics.ndcg_score(weight="w")


def test_duplicated_query_doc_pair_is_named(frame: pl.DataFrame) -> None:
    fanned_out = pl.concat([frame, frame.filter(pl.col("query") == 2).head(1)])
    message = "query 2 lists doc 'a' more than once (columns 'query', 'doc')..."
    assert_raises(eager_and_lazy("ndcg", doc="doc"), fanned_out, ValueError, message)


def test_the_quoted_value_is_the_least_whatever_the_rows_order() -> None:
    """A query with two failing values: the message quotes the least of them in every order of its rows (the
    first in the rows' order would be the other one in one of the two orders)."""
    run = pl.DataFrame(
        {
            "query": [1, 1, 1, 1, 2],
            "doc": ["b", "b", "a", "a", "c"],
            "relevance": [9, 5, 5, 0, 1],
            "score": [0.5, 0.4, 0.3, 0.2, 0.1],
        }
    )
    quotes = [
        (eager_and_lazy("ndcg", doc="doc"), "query 1 lists doc 'a' more than once (columns 'query', 'doc')..."),
        (eager_and_lazy("ndcg", gain={0: 0.0, 1: 1.0}), "relevance label 5 (query 1) has no gain in the gain mapping."),
        (
            eager_and_lazy("evaluate", measures=["err"], ties="input"),
            "relevance 5 (column 'relevance', query 1) is outside ERR's grades 0..4...",
        ),
    ]
    for rows in (run, run.reverse()):
        for runs, message in quotes:
            assert_raises(runs, rows, ValueError, message)
    # with judgments: the qrels' duplicated docs and the judged grades above ERR's largest, the least of each
    qrels = run.select("query", "doc", "relevance")
    for rows in (qrels, qrels.reverse()):
        with pytest.raises(ValueError, match=r"^qrels list doc 'a' twice for query 1 "):
            run.rank_metrics.ndcg(qrels=rows, doc="doc")
    grades = pl.DataFrame({"query": [1, 1, 1], "doc": ["x", "y", "z"], "relevance": [9, 5, 1]})
    for rows in (grades, grades.reverse()):
        with pytest.raises(ValueError, match=r"^qrels relevance 5 \(query 1\) is above ERR's largest grade 4"):
            run.unique("doc").rank_metrics.evaluate(["err"], qrels=rows, doc="doc", ties="input")


def test_null_doc(frame: pl.DataFrame) -> None:
    broken = frame.with_columns(pl.Series("doc", ["a", None, "a", "b", "c"]))
    message = "doc column 'doc' has 1 null value(s), the first in query 1."
    assert_raises(eager_and_lazy("ndcg", doc="doc"), broken, ValueError, message)


def test_null_query(frame: pl.DataFrame) -> None:
    broken = frame.with_columns(pl.Series("query", [1, 1, None, 2, 3]))
    assert_raises(eager_and_lazy("ndcg"), broken, ValueError, "query column 'query' has null values.")


def test_no_relevant_error_names_the_query(frame: pl.DataFrame) -> None:
    message = "query 3 has no relevant document (ideal DCG is 0), and 1 query(ies) in all..."
    assert_raises(eager_and_lazy("ndcg", no_relevant="error"), frame, ValueError, message)


def test_mean_of_nothing_is_an_error(frame: pl.DataFrame) -> None:
    message = "no query to average: the frame has no query (or every query's metric is null)."
    assert_raises(eager_and_lazy("ndcg_mean"), frame.clear(), ValueError, message)
    with pytest.raises(ValueError, match=re.escape(message)):
        frame.clear().rank_metrics.ndcg_score()
    # every query left out by no_relevant=None: nothing to average either
    only_irrelevant = frame.filter(pl.col("query") == 3)
    assert_raises(eager_and_lazy("ndcg_mean", no_relevant=None), only_irrelevant, ValueError, message)


def test_checks_survive_projection_and_filtering(frame: pl.DataFrame) -> None:
    """Selecting only a metric column, or filtering rows out, must not prune the data checks."""
    broken = frame.with_columns(pl.Series("relevance", [1, 0, -1, 1, 0]))
    plan = broken.lazy().rank_metrics.ndcg(k=[1, 2])
    message = negative_labels("relevance", 1, 2, -1)
    for pruned in (plan.select("ndcg@2"), plan.filter(pl.col("query") == 1), plan.head(1)):
        with pytest.raises(ValueError, match=re.escape(message)):
            pruned.collect()
