"""The per-row columns the measures' terms read, after the positions' windows: the quantities' row columns
and running windows (`registry`), the measures' own running windows (`Running`), and the discounts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import polars as pl

from .._exact_sum import exact_sum
from ..measures._base import POOLED, POSITION, RELEVANCE, Running
from .keys import SCORE
from .needs import _context, _definitions
from .registry import (
    Build,
    on_judged_rows,
    ordered_windows,
    pooled_row_columns,
    row_columns,
    running_on_judged_rows,
    running_windows,
    with_expressions,
    with_ordered_joins,
)


def _with_term_columns(rows: pl.LazyFrame, build: Build, windows: Sequence[pl.Expr] = ()) -> pl.LazyFrame:
    """The per-row columns the terms read (`QuantityPlan.row_columns`: the discounts unless the rows fork into
    tie blocks, the judged and pooled rows ranked above, ...), then the running windows in position order, in
    one context with `windows` and the quantities' running windows (the relevant rows ranked above)."""
    columns = row_columns(build)
    rows = rows.with_columns(columns) if columns else rows
    return _with_running(rows, build, [*windows, *running_windows(build)])


def _with_running(rows: pl.LazyFrame, build: Build, windows: Sequence[pl.Expr] = ()) -> pl.LazyFrame:
    """The running products and sums in position order the measures of the call declare (`Running`), each
    once, in the order declared (a later one may read an earlier one), in one context with `windows` (and
    with each other) until one reads an earlier one: windows over the same groups in one context cost less."""
    spec, names = build.spec, build.names
    context = _context(spec, build.judged)
    apart = running_on_judged_rows(build)  # computed over the judged rows alone (`judged_rows_apart`)
    running: dict[str, Running] = {}
    for definition, _ in _definitions(spec):
        for column in definition.running(context):
            if (column.column in apart) == build.on_judged_rows:
                running.setdefault(column.column, column)
    batch = list(windows)
    # a running column reading one of `windows` (AP's reads the relevant rows above) goes in a later context
    in_batch: set[str] = {window.meta.output_name() for window in windows}
    for column in running.values():
        if column.operation == "block_sum":
            block_sum = exact_sum(column.value) if spec.exact_sums else column.value.sum()
            window = block_sum.over([*names.group, SCORE])
        elif column.operation == "block_least":
            window = column.value.min().over([*names.group, SCORE])
        elif column.operation == "row":
            window = column.value
        else:
            ordered = column.value.cum_prod() if column.operation == "product" else column.value.cum_sum()
            if column.exclusive:
                ordered = ordered.shift(1, fill_value=1.0 if column.operation == "product" else 0.0)
            window = ordered.over(names.group, order_by=POSITION)
        if in_batch & set(column.value.meta.root_names()):
            rows = rows.with_columns(batch)
            batch, in_batch = [], set()
        batch.append(window.alias(column.column))
        in_batch.add(column.column)
    return rows.with_columns(batch) if batch else rows


def judged_rows_apart(build: Build, rows: pl.LazyFrame) -> pl.LazyFrame:
    """The judged rows of `rows` (every row's terms, with judgments) with the quantities computed over them alone
    (`on_judged_rows`) and the measures' running windows that go with them: the row columns right over the pooled
    rows (`pooled_row_columns`, the pooled rows ranked above: over 2M rows of which a fifth pooled, its rank took
    0.08 s over every row, 0.02 s over the pooled ones), then their ordered joins, their row columns, then their
    ordered and running windows with the running columns."""
    here = replace(build, on_judged_rows=True)
    pooled = pooled_row_columns(here)
    if pooled:  # a judged row is pooled: judged at a level >= 0
        rows = rows.filter(pl.col(POOLED)).with_columns(pooled)
    rows = rows.filter(pl.col(RELEVANCE).is_not_null())
    if not on_judged_rows(build) and not running_on_judged_rows(build):
        return rows
    rows = with_ordered_joins(here, rows)
    columns = row_columns(here)
    rows = rows.with_columns(columns) if columns else rows
    return _with_running(rows, here, [*ordered_windows(here), *running_windows(here)])


def _with_discounts(rows: pl.LazyFrame, build: Build) -> pl.LazyFrame:
    """The discounts the quantities compute after any filter or fork of the rows (`QuantityPlan.discounts`): one
    logarithm per row each, elementwise."""
    return with_expressions(build, rows, lambda plan: plan.discounts)
