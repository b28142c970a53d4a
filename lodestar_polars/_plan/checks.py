"""The data checks the plan counts as it goes (`_checks.DataCheck`): on the run's rows, on the judgments, on
the per-query rows (null or ill-typed queries, unequal weights, no relevant document, non-finite values), and
the measures' own; `_checks.apply_checks` turns the counts into errors."""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from .._checks import DataCheck, bad_values, least_failing, message, non_finite, quoted, row_check
from .._spec import Measure, Spec
from ..measures._base import (
    GAIN,
    RELEVANCE,
    Context,
    Definition,
    NoRelevant,
    Quantity,
)
from ..measures._registry import REGISTRY
from .keys import _P, DUPLICATED, RAW_RELEVANCE, SCORE, WEIGHT, WEIGHT_MAX, WEIGHT_MIN, _doc_shown, _Names
from .needs import _context, _definitions, _needs
from .registry import Build
from .registry import judgment_checks as registry_judgment_checks


def _row_checks(spec: Spec, schema: pl.Schema, names: _Names, judged: bool) -> list[DataCheck]:
    """Checks counted over each query's rows, in the per-query group-by.  With judgments, the labels are
    checked with the judgments (`_qrels_checks`)."""
    checks = [row_check(f"{_P}bad_score", non_finite(SCORE, schema[SCORE]), bad_values("score", spec.score.name))]
    if not judged:
        relevance = spec.relevance.name
        checks.append(
            row_check(
                f"{_P}bad_relevance", non_finite(RELEVANCE, schema[RELEVANCE]), bad_values("relevance", relevance)
            )
        )
    checks += _measure_checks(spec, judged, lambda definition: definition.row_checks)
    if _needs(spec, Quantity.GAIN) and not judged:  # judged labels are checked with the judgments
        checks += _gain_checks(spec, "")
    if spec.doc:
        doc_names = ", ".join(quoted(d) for d in spec.doc)
        null_doc = pl.any_horizontal(pl.col(d).is_null() for d in names.docs)
        checks.append(
            row_check(
                f"{_P}null_docs",
                null_doc,
                message(
                    ValueError, f"doc column {doc_names} has {{total}} null value(s), the first in query {{query}}."
                ),
            )
        )
        query_names = ", ".join(quoted(q) for q in spec.query)
        checks.append(
            row_check(
                f"{_P}duplicate_docs",
                pl.col(DUPLICATED),
                message(
                    ValueError,
                    f"query {{query}} lists doc {{value}} more than once (columns {query_names}, {doc_names}); "
                    "a duplicated (query, doc) pair, often from a join fan-out, would inflate the metric.",
                ),
                least_failing(_doc_shown(spec, names), pl.col(DUPLICATED), len(names.docs) > 1),
            )
        )
    if spec.weight is not None:
        checks.append(
            row_check(f"{_P}bad_weights", non_finite(WEIGHT, pl.Float64()), bad_values("weight", spec.weight.name))
        )
    return checks


# the row checks that read only the run's own columns (not a judgment, not a key's hash)
_RUN_ROW_CHECKS = frozenset(f"{_P}{name}" for name in ("bad_score", "null_docs", "duplicate_docs", "bad_weights"))


def _count_run_rows_once(
    per_query: pl.LazyFrame, checks: list[DataCheck], repeated_index: int, names: _Names
) -> pl.LazyFrame:
    """With `Spec.repeated_over` (query column `repeated_index`), each run row is in every per-query row of its
    query's values of that column: the checks on the run's own columns keep their count in the first value only
    (the least; a null one if all are), so that a message counts each bad run row once."""
    repeated = names.query[repeated_index]
    others = [key for key in names.keys if key != repeated]
    least = pl.col(repeated).min().over(others) if others else pl.col(repeated).min()
    first = pl.col(repeated).eq_missing(least)
    return per_query.with_columns(
        pl.when(first).then(pl.col(check.column)).otherwise(0).alias(check.column)
        for check in checks
        if check.column in _RUN_ROW_CHECKS
    )


def _hash_collision_check(spec: Spec, names: _Names) -> DataCheck:
    """Two different keys with the same 64-bit hash would share one group (about G**2 / 2**65 to happen for
    G keys: 3e-8 for a million).  Counted over the distinct keys (`_group_keys`): a hash that two of them
    share."""
    keys = ", ".join(quoted(name) for name in spec.keys)
    return DataCheck(
        f"{_P}hash_collision",
        (pl.len() > 1).cast(pl.UInt32),
        message(
            RuntimeError,
            f"two different keys ({keys}) share one 64-bit hash, near {{query}}, which this plan groups by: a "
            "hash collision, not a data error; cast a key column to another dtype (the query ids to String, "
            "say), which changes the hash.",
        ),
    )


def _gain_checks(spec: Spec, source: str) -> list[DataCheck]:
    relevance, gain = pl.col(RELEVANCE), pl.col(GAIN)
    checks = []
    if isinstance(spec.gain, tuple):
        unmapped = gain.is_null() & relevance.is_not_null()
        checks.append(
            row_check(
                f"{_P}unmapped_labels",
                unmapped,
                message(
                    ValueError,
                    f"{source}relevance label {{value}} (query {{query}}) has no gain in the gain mapping.",
                ),
                least_failing(relevance, unmapped),
            )
        )
    if spec.gain == "exponential":
        # cast: Decimal relevance has no is_finite
        overflowing = relevance.cast(pl.Float64).is_finite() & ~gain.is_finite()
        checks.append(
            row_check(
                f"{_P}gain_overflow",
                overflowing,
                message(
                    ValueError,
                    f"{source}relevance {{value}} (query {{query}}) has an exponential gain 2 ** relevance - 1 "
                    "that overflows Float64.",
                ),
                least_failing(relevance, overflowing),
            )
        )
    return checks


def _qrels_checks(build: Build) -> list[DataCheck]:
    """Checks counted over each query's judgments, in the qrels group-by (with the needed quantities' own:
    `QuantityPlan.judgment_checks`)."""
    spec, names = build.spec, build.names
    q = ", ".join(quoted(name) for name in spec.query)
    d = ", ".join(quoted(name) for name in spec.doc)
    raw = pl.col(RAW_RELEVANCE)
    duplicated = pl.col(DUPLICATED)
    checks = [
        DataCheck(
            f"{_P}qrels_bad_relevance",
            (raw.is_null() | ~raw.cast(pl.Float64).is_finite()).sum(),
            bad_values("qrels relevance", spec.relevance.name),
        ),
        DataCheck(
            f"{_P}qrels_null_docs",
            pl.any_horizontal(pl.col(name).is_null() for name in names.docs).sum(),
            message(ValueError, f"qrels doc column {d} has {{total}} null value(s), the first in query {{query}}."),
        ),
        DataCheck(
            f"{_P}qrels_duplicates",
            duplicated.sum(),
            message(
                ValueError,
                f"qrels list doc {{value}} twice for query {{query}} ({q}, {d}); each (query, doc) pair must be "
                "judged once.",
            ),
            least_failing(_doc_shown(spec, names), duplicated, len(names.docs) > 1),
        ),
    ]
    if _needs(spec, Quantity.GAIN):
        # the qrels relevance column is named: the run may have a relevance column of its own
        checks += _gain_checks(spec, f"qrels relevance column {quoted(spec.relevance.name)}: ")
    checks += registry_judgment_checks(build)
    return checks


def _final_checks(spec: Spec, names: _Names, metrics: list[str], judged: bool) -> list[DataCheck]:
    """Checks on the per-query rows."""
    query_names = ", ".join(quoted(q) for q in spec.query)
    # the repeated column (judgment groups) is null where a run query has no judgments: those rows are checked,
    # then skipped as any unjudged query is
    keys = [k for k, name in zip(names.query, spec.query, strict=True) if name != spec.repeated_over]
    checks = [
        DataCheck(
            f"{_P}null_queries",
            pl.any_horizontal(pl.col(k).is_null() for k in keys).cast(pl.UInt32),
            message(ValueError, f"query column {query_names} has null values."),
        )
    ]
    for index, (internal, name) in enumerate(zip(names.query, spec.query, strict=True)):
        if name in names.run_dtypes:
            run_dtype = names.run_dtypes[name]
            unfit = pl.col(internal).is_not_null() & pl.col(internal).cast(run_dtype, strict=False).is_null()
            checks.append(
                DataCheck(
                    f"{_P}query_dtype_{index}",
                    unfit.cast(pl.UInt32),
                    message(
                        ValueError,
                        f"query {{value}} of qrels (column {quoted(name)}, a judged query missing from the run) "
                        f"does not fit the run's query dtype {run_dtype}, which the output keeps; cast the run's "
                        f"{quoted(name)} to {names.join_dtypes[name]}.",
                    ),
                    pl.col(internal),
                )
            )
    if spec.weight is not None:
        checks.append(
            DataCheck(
                f"{_P}unequal_weights",
                (pl.col(WEIGHT_MIN) != pl.col(WEIGHT_MAX)).cast(pl.UInt32),
                message(
                    ValueError,
                    f"weight column {quoted(spec.weight.name)} differs within query {{query}}; "
                    "give every row of a query the same weight.",
                ),
            )
        )
    checks += _measure_checks(spec, judged, lambda definition: definition.query_checks)
    if spec.no_relevant == "error" and _normalised(spec):
        checks.append(
            DataCheck(
                f"{_P}no_relevant",
                _no_relevant(spec, judged).fill_null(False).cast(pl.UInt32),
                message(ValueError, _no_relevant_message(spec, judged)),
            )
        )
    bad = pl.any_horizontal(pl.col(m).is_not_null() & ~pl.col(m).is_finite() for m in metrics)
    columns = ", ".join(m.column for m in spec.measures)
    checks.append(
        DataCheck(
            f"{_P}metric_not_finite",
            bad.fill_null(False).cast(pl.UInt32),
            message(
                ValueError,
                f"a measure ({columns}) is not finite for query {{query}}: the gains or their sums overflow Float64.",
            ),
        )
    )
    return checks


def _measure_checks(
    spec: Spec, judged: bool, declared: Callable[[Definition], Callable[[Context], list[DataCheck]]]
) -> list[DataCheck]:
    """The data checks the measures of the call declare, each once."""
    context = _context(spec, judged)
    checks: dict[str, DataCheck] = {}
    for definition, _ in _definitions(spec):
        for check in declared(definition)(context):
            checks.setdefault(check.column, check)
    return list(checks.values())


def _normalised(spec: Spec) -> list[tuple[NoRelevant, Measure]]:
    """The measures of the call that `no_relevant` applies to, the first of each kind, in registry order."""
    first_of_each: dict[str, Measure] = {}
    for measure in spec.measures:
        first_of_each.setdefault(measure.kind, measure)
    return [
        (definition.no_relevant, first_of_each[name])
        for name, definition in REGISTRY.items()
        if name in first_of_each and definition.no_relevant is not None
    ]


def _no_relevant_message(spec: Spec, judged: bool) -> str:
    context = _context(spec, judged)
    reasons = [no_relevant.reason(context) for no_relevant, _ in _normalised(spec)]
    return (
        f"query {{query}} has {' or '.join(dict.fromkeys(reasons))}, and {{total}} query(ies) in all; pass "
        "no_relevant=0.0, 1.0 or None to score them."
    )


def _no_relevant(spec: Spec, judged: bool) -> pl.Expr:
    """A query with nothing to normalise by, for some measure of the call (at the first cut-off of each kind)."""
    context = _context(spec, judged)
    conditions: list[pl.Expr] = []
    for no_relevant, measure in _normalised(spec):
        condition = no_relevant.condition(context, measure.cutoff)
        if not any(condition.meta.eq(other) for other in conditions):
            conditions.append(condition)
    return pl.any_horizontal(conditions)
