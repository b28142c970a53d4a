"""The namespace's data checks inside a group: per-group counters that one Python call reads on the per-group
results (never the rows), raising the namespace's data errors with the group in place of the query, and the
finishing of a measure's value once they pass (`_finish`, `_no_relevant_finish`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import polars as pl

from ..measures._base import ERR_MAX_GRADE
from ..measures.ndcg import NEGATIVE_LABELS_REFUSED
from ._inputs import _check_no_relevant, _check_threshold, _gain, _Inputs, _inputs

# data-error messages: the namespace's words, with the group in place of the query it names
BAD_VALUES_MESSAGE = "{role} column {column!r} has {total} null, NaN or infinite value(s)"
NEGATIVE_RELEVANCE_MESSAGE = (
    "relevance column {column!r} has {total} negative value(s) (the least {value}), in {groups} group(s); "
    + NEGATIVE_LABELS_REFUSED
)
UNMAPPED_LABEL_MESSAGE = "relevance label {value} has no gain in the gain mapping."
NULL_DOCS_MESSAGE = "doc column {column!r} has {total} null value(s)"
DUPLICATE_DOC_MESSAGE = (
    "a group lists doc {value} more than once (column {column!r}); "
    "a duplicated (query, doc) pair, often from a join fan-out, would inflate the metric."
)
NO_RELEVANT_MESSAGE = (
    "a group has no relevant document (ideal DCG is 0), and {total} group(s) in all; "
    "pass no_relevant=0.0, 1.0 or None to score them."
)
NO_RELEVANT_ABOVE_MESSAGE = (
    "a group has no document with relevance above {threshold:g}, and {total} group(s) in all; "
    "pass no_relevant=0.0, 1.0 or None to score them."
)
NO_GRADE_ABOVE_ZERO_MESSAGE = (
    "a group has no document of grade above 0 (ideal ERR is 0), and {total} group(s) in all; "
    "pass no_relevant=0.0, 1.0 or None to score them."
)
NO_POSITIVE_GAIN_MESSAGE = (
    "a group has no positive gain, and {total} group(s) in all; pass no_relevant=0.0, 1.0 or None to score them."
)
ERR_GRADE_MESSAGE = (
    f"relevance {{value}} (column {{column!r}}) is outside ERR's grades 0..{ERR_MAX_GRADE}: its stopping probability "
    f"(2**g - 1) / 2**{ERR_MAX_GRADE} must lie in [0, 1)"
)
_IN_GROUPS = ", in {groups} group(s)."


def _non_finite(column: pl.Expr) -> pl.Expr:
    return column.is_null() | ~column.cast(pl.Float64, strict=False).is_finite()


@dataclass(frozen=True)
class _Check:
    """A per-group counter that must be 0 in every group, and how to word the error when it is not."""

    name: str
    counter: pl.Expr
    message: Callable[[pl.DataFrame, pl.Series], str]
    value: pl.Expr | None = None  # a per-group offending value to quote


def _count_message(template: str, **names: object) -> Callable[[pl.DataFrame, pl.Series], str]:
    def message(frame: pl.DataFrame, failing: pl.Series) -> str:
        total = int(frame.get_column(failing.name).sum())
        groups = int((failing > 0).sum())
        return template.format(total=total, **names) + _IN_GROUPS.format(groups=groups)

    return message


def _value_message(template: str, least: bool = False, **names: object) -> Callable[[pl.DataFrame, pl.Series], str]:
    """The message quoting a failing group's value: the least over the failing groups with `least` (the same
    whatever order the groups come in), else the first failing group's."""

    def message(frame: pl.DataFrame, failing: pl.Series) -> str:
        values = frame.get_column(f"{failing.name}_value").filter(failing > 0).drop_nulls()
        value = values.min() if least else values[0]
        return template.format(value=repr(value) if isinstance(value, str) else value, **names)

    return message


def _negative_message(column: str) -> Callable[[pl.DataFrame, pl.Series], str]:
    """The negative labels' count and groups, and the least of them (the same whatever order the groups come in)."""

    def message(frame: pl.DataFrame, failing: pl.Series) -> str:
        total = int(frame.get_column(failing.name).sum())
        groups = int((failing > 0).sum())
        least = frame.get_column(f"{failing.name}_value").filter(failing > 0).min()
        return NEGATIVE_RELEVANCE_MESSAGE.format(column=column, total=total, value=least, groups=groups)

    return message


def _checks(metric: str, i: _Inputs, gain: pl.Expr) -> list[_Check]:
    """The namespace's data checks that apply inside a group, in the order the namespace raises them."""
    checks = [
        _Check(
            "bad_score",
            _non_finite(i.score).sum(),
            _count_message(BAD_VALUES_MESSAGE, role="score", column=i.score_name),
        ),
        _Check(
            "bad_relevance",
            _non_finite(i.relevance).sum(),
            _count_message(BAD_VALUES_MESSAGE, role="relevance", column=i.relevance_name),
        ),
    ]
    if metric == "ndcg":
        negative = i.relevance.cast(pl.Float64, strict=False) < 0
        least_negative = pl.when(negative).then(i.relevance).min()
        checks.append(_Check("negative", negative.sum(), _negative_message(i.relevance_name), least_negative))
    if isinstance(i.gain, tuple):
        unmapped = gain.is_null() & i.relevance.is_not_null()
        # the least unmapped label, so that the message does not depend on the order of rows or groups
        least_label = pl.when(unmapped).then(i.relevance).min()
        checks.append(
            _Check("unmapped", unmapped.sum(), _value_message(UNMAPPED_LABEL_MESSAGE, least=True), least_label)
        )
    if i.doc is not None:
        checks.append(_Check("null_docs", i.doc.is_null().sum(), _count_message(NULL_DOCS_MESSAGE, column=i.doc_name)))
        duplicated = i.doc.is_duplicated()
        first_duplicate = pl.when(duplicated).then(i.doc).drop_nulls().first()
        checks.append(
            _Check(
                "duplicates",
                duplicated.sum(),
                _value_message(DUPLICATE_DOC_MESSAGE, column=i.doc_name),
                first_duplicate,
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
    """0.0 for each group, from one Python call on the per-group counters (not the rows) that raises a failed
    check first.  `is_elementwise=True` makes Polars apply it once to the column of per-group values after the
    aggregation, instead of once per group."""
    fields = {"score_sample": i.score.first(), "relevance_sample": i.relevance.first()}
    for check in checks:
        fields[check.name] = check.counter
        if check.value is not None:
            fields[f"{check.name}_value"] = check.value

    def verify(per_group: pl.Series) -> pl.Series:
        frame = per_group.struct.unnest()
        _check_dtypes(i, frame)
        for check in checks:
            counts = frame.get_column(check.name)
            if (counts > 0).any():
                raise ValueError(check.message(frame, counts))
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
    error (`message`, formatted with `threshold` and the groups' `total`)."""
    checked = _check_no_relevant(no_relevant)

    def finish(values: pl.Series) -> pl.Series:
        if checked != "error":
            return values.fill_nan(checked)
        without = int(values.is_nan().sum())
        if without:
            raise ValueError(message.format(threshold=threshold, total=without))
        return values

    return finish
