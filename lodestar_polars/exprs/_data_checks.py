"""The namespace's data checks inside a group: per-group counters that one Python call reads on the per-group
results (never the rows), raising the namespace's data errors with the group in place of the query, and the
finishing of a measure's value once they pass (`_finish`, `_no_relevant_finish`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import polars as pl

from .._checks import least_failing
from ..measures._base import ERR_MAX_GRADE
from ..measures.ndcg import NEGATIVE_LABELS_REFUSED
from ._inputs import _check_no_relevant, _check_threshold, _gain, _Inputs, _inputs

# data-error messages: the namespace's words, about one group (an expression does not see its group's key, and
# Polars may hand the per-group results to the check in batches, or once per row under the streaming engine's
# `.over()`, so no count over the groups would be sure)
BAD_VALUES_MESSAGE = "a group has {count} null, NaN or infinite value(s) in {role} column {column!r}."
NEGATIVE_RELEVANCE_MESSAGE = (
    "a group has {count} negative value(s) in relevance column {column!r} (the least {value}); "
    + NEGATIVE_LABELS_REFUSED
)
UNMAPPED_LABEL_MESSAGE = "relevance label {value} has no gain in the gain mapping."
NULL_DOCS_MESSAGE = "a group has {count} null value(s) in doc column {column!r}."
DUPLICATE_DOC_MESSAGE = (
    "a group lists doc {value} more than once (column {column!r}); "
    "a duplicated (query, doc) pair, often from a join fan-out, would inflate the metric."
)
NO_RELEVANT_MESSAGE = (
    "a group has no relevant document (ideal DCG is 0); pass no_relevant=0.0, 1.0 or None to score them."
)
NO_RELEVANT_ABOVE_MESSAGE = (
    "a group has no document with relevance above {threshold:g}; pass no_relevant=0.0, 1.0 or None to score them."
)
NO_GRADE_ABOVE_ZERO_MESSAGE = (
    "a group has no document of grade above 0 (ideal ERR is 0); pass no_relevant=0.0, 1.0 or None to score them."
)
NO_POSITIVE_GAIN_MESSAGE = "a group has no positive gain; pass no_relevant=0.0, 1.0 or None to score them."
ERR_GRADE_MESSAGE = (
    f"relevance {{value}} (column {{column!r}}) is outside ERR's grades 0..{ERR_MAX_GRADE}: its stopping probability "
    f"(2**g - 1) / 2**{ERR_MAX_GRADE} must lie in [0, 1)."
)


def _non_finite(column: pl.Expr) -> pl.Expr:
    return column.is_null() | ~column.cast(pl.Float64, strict=False).is_finite()


@dataclass(frozen=True)
class _Check:
    """A per-group counter that must be 0 in every group, and the message that words one failing group: its
    `count` and, with `value`, a value of that group to quote.  The group quoted is the one with the least
    value when `least` (the same whatever order the groups come in, among the groups the check is handed at
    once), else the first with the greatest count (its count is then the same in any order)."""

    name: str
    counter: pl.Expr
    message: str  # formatted with `count`, `value` and `names`
    value: pl.Expr | None = None  # a per-group offending value to quote
    least: bool = False
    names: tuple[tuple[str, object], ...] = ()

    def raise_if_failing(self, frame: pl.DataFrame) -> None:
        failing = frame.filter(pl.col(self.name) > 0)
        if failing.is_empty():
            return
        if self.value is not None and self.least:
            failing = failing.sort(f"{self.name}_value", self.name, descending=[False, True], nulls_last=True)
        else:
            failing = failing.sort(self.name, descending=True, maintain_order=True)
        group = failing.row(0, named=True)
        value = group.get(f"{self.name}_value")
        quoted = repr(value) if isinstance(value, str) else value
        raise ValueError(self.message.format(count=group[self.name], value=quoted, **dict(self.names)))


def _relevance_check(i: _Inputs, name: str, failing: pl.Expr, message: str) -> _Check:
    """A check counting the group's `failing` rows and quoting the least of their relevance values (the same
    message whatever the order of the rows or of the groups), with the relevance column's name."""
    least = least_failing(i.relevance, failing)
    return _Check(name, failing.sum(), message, least, least=True, names=(("column", i.relevance_name),))


def _checks(metric: str, i: _Inputs, gain: pl.Expr) -> list[_Check]:
    """The namespace's data checks that apply inside a group, in the order the namespace raises them."""
    checks = [
        _Check(
            "bad_score",
            _non_finite(i.score).sum(),
            BAD_VALUES_MESSAGE,
            names=(("role", "score"), ("column", i.score_name)),
        ),
        _Check(
            "bad_relevance",
            _non_finite(i.relevance).sum(),
            BAD_VALUES_MESSAGE,
            names=(("role", "relevance"), ("column", i.relevance_name)),
        ),
    ]
    if metric == "ndcg":
        negative = i.relevance.cast(pl.Float64, strict=False) < 0
        checks.append(_relevance_check(i, "negative", negative, NEGATIVE_RELEVANCE_MESSAGE))
    if isinstance(i.gain, tuple):
        unmapped = gain.is_null() & i.relevance.is_not_null()
        checks.append(_relevance_check(i, "unmapped", unmapped, UNMAPPED_LABEL_MESSAGE))
    if i.doc is not None:
        checks.append(_Check("null_docs", i.doc.is_null().sum(), NULL_DOCS_MESSAGE, names=(("column", i.doc_name),)))
        duplicated = i.doc.is_duplicated()
        # the least duplicated doc (a sort, not `min`: a doc given as `pl.struct(...)` has no `min`), so that the
        # message does not depend on the order of rows or groups
        least_duplicate = pl.when(duplicated).then(i.doc).drop_nulls().sort().first()
        checks.append(
            _Check(
                "duplicates",
                duplicated.sum(),
                DUPLICATE_DOC_MESSAGE,
                least_duplicate,
                least=True,
                names=(("column", i.doc_name),),
            )
        )
    return checks


def _check_dtypes(i: _Inputs, frame: pl.DataFrame) -> None:
    """The namespace's schema check, made on the per-group results: an expression does not know the frame."""
    for role, name, allow_boolean in (("score", i.score_name, False), ("relevance", i.relevance_name, True)):
        dtype = frame.schema[f"{role}_sample"]
        if not (dtype.is_numeric() or dtype == pl.Null or (allow_boolean and dtype == pl.Boolean)):
            kinds = "numeric or boolean" if allow_boolean else "numeric"
            msg = f"{role} column {name!r} in the frame must be {kinds}, got dtype {dtype}."
            raise pl.exceptions.SchemaError(msg)


def _checked(i: _Inputs, checks: Sequence[_Check]) -> pl.Expr:
    """0.0 for each group, from a Python call on the per-group counters that raises a failed check first.
    `is_elementwise=True` makes Polars apply it to the column of per-group values after the aggregation, not
    once per group: in one call or in batches, and under the streaming engine's `.over()` of a plain
    aggregation to the values broadcast to the rows, in morsels (hence messages about one group)."""
    fields = {"score_sample": i.score.first(), "relevance_sample": i.relevance.first()}
    for check in checks:
        fields[check.name] = check.counter
        if check.value is not None:
            fields[f"{check.name}_value"] = check.value

    def verify(per_group: pl.Series) -> pl.Series:
        frame = per_group.struct.unnest()
        _check_dtypes(i, frame)
        for check in checks:
            check.raise_if_failing(frame)
        return pl.zeros(per_group.len(), pl.Float64, eager=True)

    return pl.struct([e.alias(n) for n, e in fields.items()]).map_batches(
        verify, return_dtype=pl.Float64, is_elementwise=True
    )


def _finish(
    i: _Inputs,
    name: str,
    value: pl.Expr,
    checks: Sequence[_Check],
    then: Callable[[pl.Series], pl.Series] | None = None,
) -> pl.Expr:
    """The per-group `value` once the data checks pass: plus the checks' 0.0, which also makes an empty sum's
    -0.0 a 0.0, as the namespace gives it; `then`, if given, finishes the column of per-group values (one call).

    The value stays a Polars expression apart from the checks: a struct mixing list-derived per-group values
    with plain aggregations (the counters) made Polars take a slow path (2.9 s against 1.6 s of CPU on 200k
    groups of 10 rows), and so did `fill_nan` on the value.
    """
    checked = value + _checked(i, checks)
    if then is None:
        return checked.alias(name)
    return checked.map_batches(then, return_dtype=pl.Float64, is_elementwise=True).alias(name)


def _threshold_inputs(
    metric: str, relevance: object, score: object, doc: object, k: object, ties: object, threshold: object
) -> tuple[_Inputs, pl.Expr, list[_Check]]:
    """The inputs of a measure counting relevant rows, the per-row relevance flag as 0.0 / 1.0 and the checks."""
    i = _inputs(metric, relevance, score, doc, k, ties, "linear")
    cut = _check_threshold(threshold)
    relevant = (i.relevance.cast(pl.Float64, strict=False) > cut).cast(pl.Float64)
    return i, relevant, _checks(metric, i, _gain(i))


def _no_relevant_finish(
    no_relevant: object, threshold: float, message: str = NO_RELEVANT_ABOVE_MESSAGE
) -> Callable[[pl.Series], pl.Series]:
    """The value of a group without a relevant row (NaN there, as 0 / 0): `no_relevant`, or the namespace's
    error (`message`, formatted with `threshold`)."""
    checked = _check_no_relevant(no_relevant)

    def finish(values: pl.Series) -> pl.Series:
        if checked != "error":
            return values.fill_nan(checked)
        if values.is_nan().any():
            raise ValueError(message.format(threshold=threshold))
        return values

    return finish
