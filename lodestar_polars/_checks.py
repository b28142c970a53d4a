"""Checks that need the data, run inside the lazy plan.

Polars has no expression that raises, so the plan carries a few per-query counters (bad values, the first
offending value) into a Python function applied batch-wise to a per-query frame, never to the input rows.
It raises the first failed check with the message a user needs, at collect time; otherwise it passes the
per-query columns through untouched.  The function is opaque to the optimiser, so no projection or filter
on the result can prune the check away.

Each `DataCheck` declares its counter expression next to its message: the plan puts `count` (and `value`)
into the aggregation that sees the rows, under the check's own column name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import polars as pl

# make_error(total, where, value): `where` describes the first offending query (or group), `value` quotes
# an offending value of that query (a label, a doc id: the least of them, `least_failing`) when the check has one
MakeError = Callable[[int, str, object], Exception]


def least_failing(value: pl.Expr, failing: pl.Expr, composite: bool = False) -> pl.Expr:
    """The value a check's message quotes for a query (or an expression's group): the least of `value` over
    its failing rows, the same in any order of the rows, and a plain aggregation (over 1M queries of 10 rows in
    plain Polars, a group-by's sum took 0.16-0.21 s, with `drop_nulls().first()` beside it 0.35-0.47 s, with
    `min` 0.17-0.27 s).  A `composite` value (a struct: several doc columns) has no least in Polars: its first
    failing row's, in the rows' order."""
    failing_value = pl.when(failing).then(value)
    return failing_value.drop_nulls().first() if composite else failing_value.min()


@dataclass(frozen=True, eq=False)
class DataCheck:
    """A counter that must be 0 on every row of a per-query frame, and the error to raise when it is not.

    `count` is evaluated where the check is placed (an aggregation over a query's rows, or an expression over
    the per-query frame); `value`, when set, gives an offending value to quote.  `failing`, set by `row_check`,
    is the per-row condition that `count` counts: such a check can be counted over its query's failing rows
    alone, and `value` reads only those.
    """

    column: str
    count: pl.Expr
    make_error: MakeError
    value: pl.Expr | None = None
    failing: pl.Expr | None = None

    @property
    def value_column(self) -> str:
        return f"{self.column}_value"

    def aggregations(self) -> list[pl.Expr]:
        """The counter (and the offending value) as expressions for the frame the check is placed on."""
        expressions = [self.count.alias(self.column)]
        if self.value is not None:
            expressions.append(self.value.alias(self.value_column))
        return expressions


def row_check(column: str, failing: pl.Expr, make_error: MakeError, value: pl.Expr | None = None) -> DataCheck:
    """A check over a query's rows that counts the rows where `failing` holds (`value` must read only those)."""
    return DataCheck(column, failing.sum(), make_error, value, failing)


def describe(value: object) -> str:
    return repr(value) if isinstance(value, str) else str(value)


_TOKEN = re.compile(r"\{\{|\}\}|\{(total|query|value)\}")


def quoted(name: str) -> str:
    """A user's column name, quoted for a message template: its braces doubled, so that a name holding
    "{total}" (or any brace) reaches the message as it is."""
    return repr(name).replace("{", "{{").replace("}", "}}")


def message(error: type[Exception], template: str) -> MakeError:
    """`template` may use {total}, {query} (the first offending query or group) and {value}; `{{` and `}}`
    are literal braces, as `quoted` writes a user's name.  One pass, so no value is read as a template."""

    def make(total: int, where: str, value: object) -> Exception:
        parts = {"total": str(total), "query": where, "value": describe(value)}

        def replace(match: re.Match[str]) -> str:
            token = match.group(0)
            return token[0] if token in ("{{", "}}") else parts[match.group(1)]

        return error(_TOKEN.sub(replace, template))

    return make


def bad_values(role: str, column: str) -> MakeError:
    return message(
        ValueError,
        f"{role} column {quoted(column)} has {{total}} null, NaN or infinite value(s), the first in query {{query}}.",
    )


def non_finite(column: str, dtype: pl.DataType) -> pl.Expr:
    bad = pl.col(column).is_null()
    if dtype.is_float():
        bad = bad | ~pl.col(column).is_finite()
    return bad


def _first_failing(column: pl.Expr, failing: pl.Expr, key_columns: Sequence[str]) -> pl.Expr:
    """`column` at the first failing row in key order (nulls last): the failing rows alone are sorted, so the
    frame's own order does not matter and a frame that fails nothing sorts nothing."""
    failing_values = column.filter(failing)
    if not key_columns:
        return failing_values.first()
    return failing_values.sort_by([pl.col(key).filter(failing) for key in key_columns], nulls_last=True).first()


def apply_checks(
    per_query: pl.LazyFrame,
    where: Callable[[dict[str, object]], str],
    key_columns: Sequence[str],
    output_columns: Sequence[str],
    checks: Sequence[DataCheck],
) -> pl.LazyFrame:
    """Raise the first failing check when the frame is collected; keep `output_columns` unchanged.

    The frame must already hold each check's column (and value column).  The count, first offending row in
    key order (its `key_columns`, described by `where`; nulls last) and that row's offending value of each
    check are broadcast from the whole frame, so the message is the same whatever the frame's row order and
    whichever batch the engine hands the function first: the frame need not be sorted.
    """
    if not checks:
        return per_query.select(output_columns)
    summaries: list[pl.Expr] = []
    for index, check in enumerate(checks):
        failing = pl.col(check.column) > 0
        keys = _first_failing(pl.struct(key_columns), failing, key_columns) if key_columns else pl.lit(None)
        summaries.append(pl.col(check.column).sum().alias(f"__lodestar_check_{index}_total"))
        summaries.append(keys.alias(f"__lodestar_check_{index}_where"))
        value = pl.lit(None)
        if check.value is not None:
            value = _first_failing(pl.col(check.value_column), failing, key_columns)
        summaries.append(value.alias(f"__lodestar_check_{index}_value"))
    schema = per_query.collect_schema()

    def check_batch(frame: pl.DataFrame) -> pl.DataFrame:
        for index, check in enumerate(checks):
            if (frame[check.column] > 0).any():
                first = frame.row(0, named=True)
                total, keys, value = (first[f"__lodestar_check_{index}_{part}"] for part in ("total", "where", "value"))
                raise check.make_error(int(total), where(keys or {}), value)
        # a plain constructor, not frame.select: no Polars query starts inside the running plan's callback
        return pl.DataFrame([frame.get_column(name) for name in output_columns])

    # a frame-level map (not an expression UDF): streamed batch by batch, and the exception reaches the
    # caller as raised, without Polars' expression context appended to its message
    return per_query.with_columns(summaries).map_batches(
        check_batch,
        schema={name: schema[name] for name in output_columns},
        streamable=True,
        validate_output_schema=False,
    )


def refuse_nan_keys(frame: pl.LazyFrame, where: str, columns: Sequence[str]) -> pl.LazyFrame:
    """`frame` with a check that its float key `columns` (query ids) hold no NaN: a NaN would group as a query
    of its own (named "nan"), where a null query id is refused.  Integer and text columns are left as they
    are; a frame without a float key column is returned unchanged (no extra pass over the rows)."""
    schema = frame.collect_schema()
    floats = [name for name in columns if name in schema and schema[name].is_float()]
    if not floats:
        return frame
    checks = [
        DataCheck(
            f"__lodestar_nan_key_{index}",
            pl.col(name).is_nan().fill_null(False).cast(pl.UInt32),
            message(
                ValueError,
                f"{where}query column {quoted(name)} has {{total}} NaN value(s): a query id must be a value, "
                "and NaN, as null, names no query.",
            ),
        )
        for index, name in enumerate(floats)
    ]
    counted = frame.with_columns(expression for check in checks for expression in check.aggregations())
    return apply_checks(counted, lambda keys: "", [], list(schema.names()), checks)
