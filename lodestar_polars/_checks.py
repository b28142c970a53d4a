"""Checks that need the data, run inside the lazy plan.

Polars has no expression that raises, so the plan carries a few per-query counters (bad values, the first
offending value) into a Python function applied batch-wise to the per-query frame, never to the input rows.
It raises the first failed check with the message a user needs, at collect time; otherwise it passes the
per-query columns through untouched.  The function is opaque to the optimiser, so no projection or filter
on the result can prune the check away.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import polars as pl

Raise = Callable[[int, object, object], Exception]


@dataclass(frozen=True)
class DataCheck:
    """A per-query counter column that must be 0 everywhere, and the error to raise when it is not.

    `make_error(total, first_query, first_value)` builds the exception; `value_column`, when set, names a
    per-query column holding an offending value (a label, a doc id) to quote.
    """

    count_column: str
    make_error: Raise
    value_column: str | None = None


def _describe(value: object) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def bad_values(role: str, column: str) -> Raise:
    def make(total: int, first_query: object, _: object) -> Exception:
        return ValueError(
            f"{role} column {column!r} has {total} null, NaN or infinite value(s), "
            f"the first in query {_describe(first_query)}."
        )

    return make


def fixed(error: type[Exception], message: str) -> Raise:
    return lambda _total, _query, _value: error(message)


def with_query(error: type[Exception], template: str) -> Raise:
    """`template` may use {total}, {query} and {value}."""

    def make(total: int, first_query: object, value: object) -> Exception:
        return error(template.format(total=total, query=_describe(first_query), value=_describe(value)))

    return make


def apply_checks(
    per_query: pl.LazyFrame,
    query_column: str,
    output_columns: Sequence[str],
    checks: Sequence[DataCheck],
) -> pl.LazyFrame:
    """Raise the first failing check when the frame is collected; keep `output_columns` unchanged.

    The count, first offending query and first offending value of each check are broadcast from the whole
    frame, so the message is the same whichever batch the engine hands the function first.
    """
    if not checks:
        return per_query.select(output_columns)
    summaries: list[pl.Expr] = []
    for index, check in enumerate(checks):
        failing = pl.col(check.count_column) > 0
        summaries.append(pl.col(check.count_column).sum().alias(f"__check_{index}_total"))
        summaries.append(pl.col(query_column).filter(failing).first().alias(f"__check_{index}_query"))
        value = pl.lit(None) if check.value_column is None else pl.col(check.value_column).filter(failing).first()
        summaries.append(value.alias(f"__check_{index}_value"))
    schema = per_query.collect_schema()

    def check_batch(frame: pl.DataFrame) -> pl.DataFrame:
        for index, check in enumerate(checks):
            if (frame[check.count_column] > 0).any():
                first = frame.row(0, named=True)
                total, query, value = (first[f"__check_{index}_{part}"] for part in ("total", "query", "value"))
                raise check.make_error(int(total), query, value)
        return frame.select(output_columns)

    # a frame-level map (not an expression UDF): streamed batch by batch, and the exception reaches the
    # caller as raised, without Polars' expression context appended to its message
    return per_query.with_columns(summaries).map_batches(
        check_batch,
        schema={name: schema[name] for name in output_columns},
        streamable=True,
        validate_output_schema=False,
    )
