"""The judgment side of a call with qrels: per query, from every judged document (retrieved or not), R, the
ideal DCG and ERR, the positive gains and the checks on the judgments (`_judgments`), joined onto the run's
per-query rows; a judged query missing from the run enters there (`_join_judgments`)."""

from __future__ import annotations

import polars as pl

from .._checks import DataCheck, apply_checks, message, quoted
from ..measures._base import (
    IN_RUN,
    JUDGED_RELEVANT,
    RELEVANCE,
)
from .aggregate import _with_exact_totals
from .checks import _qrels_checks
from .inputs import _qrels_rows
from .keys import _P, DUPLICATED, HAS_JUDGMENTS, _describe_keys, _doc_value
from .needs import _terms
from .registry import Build, expressions, frame_steps, per_query_columns, with_expressions

# --- judgments -----------------------------------------------------------------------------------------------


def _judgments(build: Build) -> pl.LazyFrame:
    """Per query of the qrels: the number of relevant judged documents and what the needed quantities take from
    all of its judged documents, retrieved or not (as trec_eval: the ideal DCG, the ideal ERR, the positive
    gains; `QuantityPlan.judgment_values`, `judgment_windows`, `judgment_rows`, `per_query`), checked."""
    spec, names = build.spec, build.names
    rows = with_expressions(build, _qrels_rows(build.qrels_frame(), spec, names), lambda plan: plan.judgment_values)
    windows = [_doc_value(names.docs).is_duplicated().over(names.query).alias(DUPLICATED)]
    rows = rows.with_columns(windows + expressions(build, lambda plan: plan.judgment_windows))
    rows = frame_steps(build, rows, lambda plan: plan.judgment_rows)
    aggregations = [(pl.col(RELEVANCE) > spec.threshold).sum().cast(pl.Float64).alias(JUDGED_RELEVANT)]
    aggregations += expressions(build, lambda plan: plan.per_query)
    checks = _qrels_checks(build)
    counters = [expression for check in checks for expression in check.aggregations()]
    per_query = _with_exact_totals(spec, rows.group_by(names.query).agg(*aggregations, *counters))
    null_query = DataCheck(
        f"{_P}qrels_null_queries",
        pl.any_horizontal(pl.col(k).is_null() for k in names.query).cast(pl.UInt32),
        message(ValueError, f"qrels query column {', '.join(quoted(q) for q in spec.query)} has null values."),
    )
    per_query = per_query.with_columns(null_query.aggregations())
    output = [*names.query, *per_query_columns(build), JUDGED_RELEVANT]
    where = _describe_keys(list(spec.query), [])
    checked = apply_checks(per_query, where, names.query, output, [null_query, *checks])
    return checked.with_columns(pl.lit(True).alias(HAS_JUDGMENTS))


def _join_judgments(
    per_query: pl.LazyFrame, judgments: pl.LazyFrame, build: Build, groups: pl.LazyFrame | None
) -> pl.LazyFrame:
    """Run queries get their judgments; with missing_queries='zero', every judged query missing from a
    group's run joins that group with nothing retrieved."""
    spec, names = build.spec, build.names
    in_run = per_query.with_columns(pl.lit(True).alias(IN_RUN))
    joined = in_run.join(judgments, on=names.query, how="left", nulls_equal=True)
    if spec.missing_queries == "zero":
        if names.by:
            if groups is None:  # the groups of this run; a partition of a larger run is given them all
                groups = per_query.select(names.by).unique()
            else:
                groups = groups.select(pl.col(n).alias(k) for n, k in zip(spec.by, names.by, strict=True)).unique()
            candidates = groups.join(judgments, how="cross")
        else:
            candidates = judgments
        missing = candidates.join(per_query.select(names.keys), on=names.keys, how="anti", nulls_equal=True)
        joined = pl.concat([joined, missing.with_columns(pl.lit(False).alias(IN_RUN))], how="diagonal_relaxed")
    # a query missing from the run retrieved nothing: its sums and counters are 0 (a least term, such as the
    # first relevant position, stays null), its ideal DCG and relevant count come from the judgments
    least = [name for name, term in _terms(spec, judged=True).items() if term.least]
    from_judgments = {*names.keys, HAS_JUDGMENTS, IN_RUN, *least, JUDGED_RELEVANT, *per_query_columns(build)}
    # only numeric columns: a check's value column (a doc id, possibly Enum or Categorical) cannot take a 0,
    # and is read only when its counter, filled with 0 here, is positive
    numbers = [
        name for name, dtype in joined.collect_schema().items() if name not in from_judgments and dtype.is_numeric()
    ]
    return joined.with_columns(pl.col(HAS_JUDGMENTS).fill_null(False), *(pl.col(name).fill_null(0) for name in numbers))
