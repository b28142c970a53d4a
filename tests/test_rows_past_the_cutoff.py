"""With cut-offs, the per-query sums of ndcg and dcg read only the rows ranked within the largest one
(`_plan.aggregate._rows_within_cutoffs`), while every row check still reads every row.

A bad row is placed where no cut-off of the call reaches it, in the run's order and in the ideal order: the
last position of a 40-document query, scored lowest and judged least.  Each check must still name it, on
every engine.  The messages are the templates of `_plan.checks._row_checks` and `_plan.checks._gain_checks` filled in by
hand (one bad row, in query 7); the values are compared with scikit-learn.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import polars as pl
import pytest
from sklearn.metrics import dcg_score, ndcg_score

import lodestar_polars  # noqa: F401  (registers .rank_metrics)

ENGINES = ("eager", "in-memory", "streaming")
QUERIES, DOCS = 12, 40
BAD_QUERY = 7
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("ndcg", {"k": 1}),
    ("ndcg", {"k": [1, 3]}),
    ("dcg", {"k": 2}),
    ("ndcg", {"k": 3, "ties": "doc", "doc": "doc"}),
    ("ndcg", {"k": 2, "ties": "optimistic"}),
    ("ndcg", {"k": 1, "by": "system"}),
]


def _frame() -> pl.DataFrame:
    """12 queries of 40 docs, relevance 1..4 and scores in 1..10 (ties), but in each query one last row:
    relevance 0 and the lowest score, ranked last in both orders; rows shuffled."""
    rng = np.random.default_rng(3)
    n = QUERIES * DOCS
    last = np.tile(np.arange(DOCS) == DOCS - 1, QUERIES)
    frame = pl.DataFrame(
        {
            "query": np.repeat(np.arange(QUERIES), DOCS),
            "doc": np.tile(np.arange(DOCS), QUERIES),
            "system": np.where(np.repeat(np.arange(QUERIES), DOCS) % 2 == 0, "bm25", "dense"),
            "relevance": np.where(last, 0, rng.integers(1, 5, n)),
            "score": np.where(last, 0.0, rng.integers(1, 11, n).astype(np.float64)),
        }
    )
    return frame.sample(fraction=1.0, shuffle=True, seed=5)


def _with_bad_last_row(column: str, value: object) -> pl.DataFrame:
    frame = _frame()
    bad = (pl.col("query") == BAD_QUERY) & (pl.col("doc") == DOCS - 1)
    return frame.with_columns(pl.when(bad).then(pl.lit(value)).otherwise(pl.col(column)).alias(column))


def _call(frame: pl.DataFrame, engine: str, method: str, **options: Any) -> pl.DataFrame:
    if engine == "eager":
        result: pl.DataFrame = getattr(frame.rank_metrics, method)(**options)
        return result
    return getattr(frame.lazy().rank_metrics, method)(**options).collect(engine=engine)


def _where(options: dict[str, Any]) -> str:
    return f"{BAD_QUERY} (system='dense')" if "by" in options else str(BAD_QUERY)


@pytest.mark.parametrize(("method", "options"), CALLS)
@pytest.mark.parametrize("engine", ENGINES)
def test_a_bad_score_past_the_cutoff_is_found(method: str, options: dict[str, Any], engine: str) -> None:
    # -inf ranks last (a NaN would rank first, within every cut-off)
    frame = _with_bad_last_row("score", float("-inf"))
    text = f"score column 'score' has 1 null, NaN or infinite value(s), the first in query {_where(options)}."
    with pytest.raises(ValueError, match=f"^{re.escape(text)}$"):
        _call(frame, engine, method, **options)


@pytest.mark.parametrize(("method", "options"), CALLS)
@pytest.mark.parametrize("engine", ENGINES)
def test_a_null_relevance_past_the_cutoff_is_found(method: str, options: dict[str, Any], engine: str) -> None:
    frame = _with_bad_last_row("relevance", None)
    text = f"relevance column 'relevance' has 1 null, NaN or infinite value(s), the first in query {_where(options)}."
    with pytest.raises(ValueError, match=f"^{re.escape(text)}$"):
        _call(frame, engine, method, **options)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_negative_label_past_the_cutoff_is_refused(engine: str) -> None:
    frame = _with_bad_last_row("relevance", -1)
    text = (
        f"relevance column 'relevance' has 1 negative value(s), the first in query {BAD_QUERY} (its least label -1); "
        "ndcg refuses negative labels, as scikit-learn's ndcg_score does (dcg accepts them)."
    )
    with pytest.raises(ValueError, match=f"^{re.escape(text)}$"):
        _call(frame, engine, "ndcg", k=1)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_repeated_doc_past_the_cutoff_is_found(engine: str) -> None:
    frame = _frame()
    repeated = frame.filter((pl.col("query") == BAD_QUERY) & (pl.col("doc") == DOCS - 1))
    text = (
        f"query {BAD_QUERY} lists doc {DOCS - 1} more than once (columns 'query', 'doc'); a duplicated (query, doc) "
        "pair, often from a join fan-out, would inflate the metric."
    )
    with pytest.raises(ValueError, match=f"^{re.escape(text)}$"):
        _call(pl.concat([frame, repeated]), engine, "ndcg", k=1, doc="doc")


@pytest.mark.parametrize("engine", ENGINES)
def test_an_unmapped_label_past_the_cutoff_is_found(engine: str) -> None:
    frame = _with_bad_last_row("relevance", 9)  # ranked last by score; in the ideal order the gain is null
    gain = {0: 0.0, 1: 1.0, 2: 3.0, 3: 7.0, 4: 15.0}
    text = f"relevance label 9 (query {BAD_QUERY}) has no gain in the gain mapping."
    with pytest.raises(ValueError, match=f"^{re.escape(text)}$"):
        _call(frame, engine, "dcg", k=1, gain=gain)


@pytest.mark.parametrize("engine", ENGINES)
def test_an_overflowing_gain_past_the_cutoff_is_found(engine: str) -> None:
    # dcg has no ideal order: the row, ranked last, is past the cut-off
    frame = _with_bad_last_row("relevance", 2000)
    text = f"relevance 2000 (query {BAD_QUERY}) has an exponential gain 2 ** relevance - 1 that overflows Float64."
    with pytest.raises(ValueError, match=f"^{re.escape(text)}$"):
        _call(frame, engine, "dcg", k=1, gain="exponential")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("k", [1, 3, 5, 10, 20, 39, 40, 41])
def test_long_tied_queries_match_scikit_learn_at_every_cutoff(engine: str, k: int) -> None:
    frame = _frame()
    got = _call(frame, engine, "ndcg", k=[k, 2]).join(_call(frame, engine, "dcg", k=k), on="query")
    for query, rows in frame.sort("doc").group_by("query", maintain_order=True):
        y_true, y_score = rows["relevance"].to_numpy()[None, :], rows["score"].to_numpy()[None, :]
        row = got.filter(pl.col("query") == query[0])
        assert row[f"ndcg@{k}"].item() == pytest.approx(ndcg_score(y_true, y_score, k=k), rel=1e-12)
        assert row["ndcg@2"].item() == pytest.approx(ndcg_score(y_true, y_score, k=2), rel=1e-12)
        assert row[f"dcg@{k}"].item() == pytest.approx(dcg_score(y_true, y_score, k=k), rel=1e-12)


@pytest.mark.parametrize("by", [None, "system"])
@pytest.mark.parametrize("engine", ENGINES)
def test_a_query_with_no_ranked_row_is_still_checked(engine: str, by: str | None) -> None:
    # every score and label of query 7 null: none of its rows has a position in either order, so the group-by
    # over the rows within the cut-off never sees the query; its checks must still name it
    frame = _frame().with_columns(
        pl.when(pl.col("query") == BAD_QUERY).then(None).otherwise(pl.col(name)).alias(name)
        for name in ("score", "relevance")
    )
    options: dict[str, Any] = {"k": 1} if by is None else {"k": 1, "by": by}
    text = f"score column 'score' has {DOCS} null, NaN or infinite value(s), the first in query {_where(options)}."
    with pytest.raises(ValueError, match=f"^{re.escape(text)}$"):
        _call(frame, engine, "ndcg", **options)


def _run_and_judgments(frame: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    return frame.select("query", "doc", "system", "score"), frame.select("query", "doc", "relevance")


def _judged_call(run: pl.DataFrame, qrels: pl.DataFrame, engine: str, **options: Any) -> pl.DataFrame:
    if engine == "eager":
        return run.rank_metrics.ndcg(qrels=qrels, doc="doc", **options)
    return run.lazy().rank_metrics.ndcg(qrels=qrels.lazy(), doc="doc", **options).collect(engine=engine)


@pytest.mark.parametrize("by", [None, "system"])
@pytest.mark.parametrize("engine", ENGINES)
def test_with_judgments_a_bad_score_past_the_cutoff_is_found(engine: str, by: str | None) -> None:
    # with qrels= and cut-offs the relevance is joined onto the rows that can count only, and no group-by reads
    # every run row: the row checks, counted over the failing rows, must still see this one
    run, qrels = _run_and_judgments(_with_bad_last_row("score", float("-inf")))
    options: dict[str, Any] = {"k": [1, 3]} if by is None else {"k": [1, 3], "by": by}
    text = f"score column 'score' has 1 null, NaN or infinite value(s), the first in query {_where(options)}."
    with pytest.raises(ValueError, match=f"^{re.escape(text)}$"):
        _judged_call(run, qrels, engine, **options)


@pytest.mark.parametrize("engine", ENGINES)
def test_with_judgments_a_repeated_run_doc_past_the_cutoff_is_found(engine: str) -> None:
    frame = _frame()
    repeated = frame.filter((pl.col("query") == BAD_QUERY) & (pl.col("doc") == DOCS - 1))
    run, _ = _run_and_judgments(pl.concat([frame, repeated]))
    _, qrels = _run_and_judgments(frame)  # each (query, doc) judged once: only the run repeats one
    text = (
        f"query {BAD_QUERY} lists doc {DOCS - 1} more than once (columns 'query', 'doc'); a duplicated (query, doc) "
        "pair, often from a join fan-out, would inflate the metric."
    )
    with pytest.raises(ValueError, match=f"^{re.escape(text)}$"):
        _judged_call(run, qrels, engine, k=1)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("k", [1, 10, 40])
def test_with_judgments_long_tied_queries_match_scikit_learn(engine: str, k: int) -> None:
    # every run doc judged: trec_eval's ndcg over the judgments is then scikit-learn's over the frame
    frame = _frame()
    run, qrels = _run_and_judgments(frame)
    got = _judged_call(run, qrels, engine, k=k)
    for query, rows in frame.sort("doc").group_by("query", maintain_order=True):
        y_true, y_score = rows["relevance"].to_numpy()[None, :], rows["score"].to_numpy()[None, :]
        value = got.filter(pl.col("query") == query[0])[f"ndcg@{k}"].item()
        assert value == pytest.approx(ndcg_score(y_true, y_score, k=k), rel=1e-12)
