"""Any in-frame measure as an expression, derived from its own module (`measures/`): `measure("compat")`.

A measure module writes its maths against the plan's vocabulary, the per-row and per-query columns of
`measures._base` (`__lodestar_position`, `__lodestar_gain`, a term's per-query sum...).  Inside an aggregation
those columns do not exist, so each is replaced here by an expression computing it over the group's own rows
(`_GroupSpace`): the rows sorted once by descending score (ties broken as `ties` says), positions 1..n, the
discounts, the relevant rows above each row, the ideal order (the gains sorted), ERR's continuations.  The
module's running columns (`Running`), its per-query terms (`Term`, summed or their least taken over the group)
and its finish (`Definition.value`) are then its own expressions with those columns replaced, so the
expression computes exactly what `evaluate` computes for a query with the same rows, from one definition.

The replacement goes through Polars' JSON form of an expression (`Expr.meta.serialize`), within one process
and one Polars version: each `col(name)` of the vocabulary becomes the group's expression for it.

Tie modes: every one `evaluate` takes for the measure.  Under ties="average" each row carries its tie block's
sums (a running sum in the ranked order read at the block's first and last positions, the block's least or
greatest value after sorting the block by it) and the measure's block term (`Term.block`) is taken once per
block, as the plan's (keys, score) group-by takes it; rr and success, whose expectation over the first relevant
block is a step over the per-query frame, are `exprs.reciprocal_rank` and `exprs.success` there.

What it costs: Polars runs a sort, a rank or a running sum inside an aggregation once per group, and shares no
repeated sub-expression there.  So the group's rows are sorted once, into a list of structs, the row columns the
measure reads are computed once per group as its fields (`_GroupSpace.materialize`), and the measure is evaluated
on that list (`evaluated`).  A derived expression then takes 1.5-4.3x the time `evaluate` takes on the same rows
under a deterministic tie mode (300k groups of 10 rows) and 2.8-15x under ties="average" for a measure with tie
blocks (100k groups; bpref the most), against 0.6-1.8x for the hand-written expressions (`ndcg`, `precision`,
...), which compute their measures on lists for every group at once; so `measure` hands the call to one where
the measure has one taking every option of the call (`_hand_written`), and `derived_measure` always derives
(`benchmarks/exprs_measure_row.py`).  A table read by index (rbp's weights, compat's
partial sums) becomes a lookup by value (`_looked_up`): a gather from a literal table runs group by group, 60x
slower.
"""

from __future__ import annotations

import inspect
import io
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import polars as pl

from .. import _spec
from .._checks import MakeError
from .._plan.inputs import _gain as _plan_gain
from .._plan.needs import _cutoffs_needing, _definition, _needs, _splits_positions
from .._plan.quantities import _discount, _ideal_terms
from ..measures import _cascade
from ..measures._base import (
    BLOCK_SIZE,
    BLOCK_START,
    BLOCK_UNJUDGED,
    BOUNDARIES,
    BOUNDARY_WEIGHT_AT,
    COMPATIBLE_IDEAL_POSITION,
    CONTINUATION,
    CUMULATIVE_DCG,
    CUMULATIVE_GAIN,
    DISCOUNT,
    DISCOUNT_ABOVE,
    EXPECTED_DCG_ABOVE,
    GAIN,
    GAIN_HIGH,
    HIGHER_LEVELS,
    IDEAL_DCG_AT,
    IDEAL_DISCOUNT,
    IDEAL_EXCESS_AT,
    IDEAL_GAIN_AT,
    IDEAL_POSITION,
    JUDGED_BEFORE,
    LEVEL_TOTAL,
    POOLED,
    POOLED_BEFORE,
    POSITION,
    POSITIVE_GAIN_TOTAL,
    POSITIVE_GAINS,
    PREFIX,
    RELEVANCE,
    RELEVANT,
    RELEVANT_BEFORE,
    RELEVANT_COUNT,
    RELEVANT_POSITION,
    ROW_NONRELEVANT_TOTAL,
    ROW_RELEVANT_TOTAL,
    ROWS,
    TIED,
    Context,
    Definition,
    Quantity,
    cut_at,
    stopping_probability,
)
from ._data_checks import ERR_GRADE_MESSAGE, NEGATIVE_RELEVANCE_MESSAGE, _Check, _checks, _finish, _relevance_check
from ._inputs import Column, Gain, NoRelevant, Ties, _Inputs, _inputs
from ._positional import _in_ranked_order
from .cascade import err, nerr
from .first_relevant import reciprocal_rank, success
from .gain import dcg, ideal_dcg, ndcg, rbp, sdcg
from .interpolated import eleven_point_average, iprec_at_recall
from .normalized_gain import bin_g, g
from .precision_recall import average_precision, f1, precision, recall, relative_precision, rprec, yaap

# the placeholder names of the columns `make_spec` checks: an expression sees no query column, and its doc may be
# an expression (`_inputs` checks the columns themselves)
_GROUP = f"{PREFIX}expression_group"
_DOC = f"{PREFIX}expression_doc"


def measure(
    name: str,
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    ties: Ties = "average",
    gain: Gain = "linear",
    threshold: float = 0.0,
    log_base: float = 2.0,
    no_relevant: NoRelevant = 0.0,
    doc: Column | None = None,
) -> pl.Expr:
    """Any in-frame measure of `evaluate`, by its `evaluate` name, as an expression over a group's rows: the value
    `evaluate` gives a query with the group's rows.  The measure's hand-written expression (`ndcg`, ...) where it
    has one taking every option set here, else derived from the measure's own definition (the module docstring).

    Parameters
    ----------
    name
        A measure name as `evaluate` takes it: "compat", "rprec_mult@0.5", "rbp(p=0.8)@10", "ndcg@10", ...
    relevance, score, doc
        Column names or expressions, as for `ndcg`.
    ties, gain, threshold, log_base, no_relevant
        As `evaluate` takes them: every tie mode `evaluate` takes for the measure (ties="average", the default,
        is the exact expectation over the orders of tied rows), and its refusal of the others.  A derived
        expression costs more than `evaluate` on the same rows, most under ties="average" (the module
        docstring).

    Returns
    -------
    pl.Expr
        A Float64 expression named as `evaluate` names the measure's column, one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame(
    ...     {"query": [1, 1, 1, 2, 2], "doc": ["a", "b", "c", "a", "b"], "relevance": [2, 0, 1, 1, 0],
    ...      "score": [3.0, 2.0, 1.0, 5.0, 4.0]}
    ... )
    >>> df.group_by("query", maintain_order=True).agg(
    ...     exprs.measure("compat", ties="doc", doc="doc"), exprs.measure("rprec_mult@0.5")
    ... )
    shape: (2, 3)
    ┌───────┬──────────┬────────────────┐
    │ query ┆ compat   ┆ rprec_mult@0.5 │
    │ ---   ┆ ---      ┆ ---            │
    │ i64   ┆ f64      ┆ f64            │
    ╞═══════╪══════════╪════════════════╡
    │ 1     ┆ 0.813847 ┆ 1.0            │
    │ 2     ┆ 1.0      ┆ 1.0            │
    └───────┴──────────┴────────────────┘

    ir_measures' Compat(p=0.95) of query 1 is 0.8138471587197909.
    """
    parsed, spec, i = _checked(name, relevance, score, ties, gain, threshold, log_base, no_relevant, doc)
    options = {"gain": gain, "threshold": threshold, "log_base": log_base, "no_relevant": no_relevant}
    hand_written = _hand_written(parsed, spec, relevance, score, doc, options)
    if hand_written is not None:
        return hand_written
    return _derived(parsed, spec, i)


def derived_measure(
    name: str,
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    ties: Ties = "average",
    gain: Gain = "linear",
    threshold: float = 0.0,
    log_base: float = 2.0,
    no_relevant: NoRelevant = 0.0,
    doc: Column | None = None,
) -> pl.Expr:
    """`measure` always derived from the measure's module, also where a hand-written expression computes it (the
    tests compare the two)."""
    parsed, spec, i = _checked(name, relevance, score, ties, gain, threshold, log_base, no_relevant, doc)
    return _derived(parsed, spec, i)


def _checked(
    name: object,
    relevance: Column,
    score: Column,
    ties: object,
    gain: object,
    threshold: object,
    log_base: object,
    no_relevant: object,
    doc: Column | None,
) -> tuple[_spec.Measure, _spec.Spec, _Inputs]:
    """The measure and the options, checked as `evaluate` checks them."""
    if not isinstance(name, str):
        msg = f"`name` must be one measure name (str), got {name!r}."
        raise TypeError(msg)
    if _spec.diversity_kind(name) is not None:
        msg = f"exprs.measure: {name!r} reads subtopic judgments (a diversity measure), not a group's own rows."
        raise ValueError(msg)
    (parsed,) = _spec.parse_measures([name])
    i = _inputs(parsed.kind, relevance, score, doc, None, ties, gain)
    spec = _spec.make_spec(
        (parsed,),
        query=_GROUP,
        relevance=i.relevance,
        score=i.score,
        doc=None if doc is None else _DOC,
        by=None,
        ties=ties,
        gain=gain,
        weight=None,
        no_relevant=no_relevant,
        log_base=log_base,
        threshold=threshold,
        missing_queries="skip",
    )
    return parsed, spec, i


# the hand-written expression of each measure that has one (by its registry name), which `measure` calls where it
# takes the call's options; the README's measure table names them (`exprs._MEASURE_EXPRESSIONS`)
HAND_WRITTEN: dict[str, Callable[..., pl.Expr]] = {
    "ndcg": ndcg,
    "dcg": dcg,
    "ideal_dcg": ideal_dcg,
    "rr": reciprocal_rank,
    "p": precision,
    "r": recall,
    "ap": average_precision,
    "success": success,
    "rprec": rprec,
    "relative_p": relative_precision,
    "f1": f1,
    "yaap": yaap,
    "err": err,
    "nerr": nerr,
    "rbp": rbp,
    "iprec": iprec_at_recall,
    "11pt_avg": eleven_point_average,
    "sdcg": sdcg,
    "g": g,
    "bin_g": bin_g,
}

# the options `measure` hands a hand-written expression, with `make_spec`'s defaults: one set to another value
# that the expression does not take makes `measure` derive the measure instead
_DEFAULTS: dict[str, object] = {"gain": "linear", "threshold": 0.0, "log_base": 2.0, "no_relevant": 0.0}


def _hand_written(
    parsed: _spec.Measure,
    spec: _spec.Spec,
    relevance: Column,
    score: Column,
    doc: Column | None,
    options: Mapping[str, object],
) -> pl.Expr | None:
    """The measure's hand-written expression (`exprs.ndcg`, ...) with the call's options, where it has one that
    takes every option the call sets: it computes on lists, for every group at once (the module docstring)."""
    function = HAND_WRITTEN.get(parsed.kind)
    if function is None:
        return None
    takes = inspect.signature(function).parameters
    given: dict[str, object] = {"ties": spec.ties, "doc": doc}
    values: dict[str, object] = {
        "gain": spec.gain,
        "threshold": spec.threshold,
        "log_base": spec.log_base,
        "no_relevant": spec.no_relevant,
    }
    for option, value in values.items():
        if option in takes:
            given[option] = options[option]  # as the caller gave it: the expression checks it again
        elif value != _DEFAULTS[option]:
            return None
    parameters: dict[str, object] = {"k": parsed.cutoff, "level": parsed.level, **dict(parsed.options)}
    for option, value in parameters.items():
        if option in takes:
            given[option] = value
        elif value is not None:
            return None
    expression: pl.Expr = function(relevance, score, **given)
    return expression.alias(parsed.column)


def _derived(parsed: _spec.Measure, spec: _spec.Spec, i: _Inputs) -> pl.Expr:
    """The measure's expression derived from its module (`measure`)."""
    name = parsed.column
    definition = _definition(parsed)
    context = Context(spec.ties, False, _position_read(spec), spec.threshold, spec.no_relevant, i.relevance_name)
    cutoff = cut_at(parsed.cutoff)
    if definition.derived(context, cutoff):
        # the expectation of the first relevant row under ties="average" is a step over the per-query frame
        # (`_first_relevant.with_expectations`); the hand-written expressions compute it for a group
        return _first_relevant_expectation(parsed, i, spec)
    if definition.query_checks(context):
        msg = f"exprs.measure({name!r}): no group form of its per-query checks"
        raise AssertionError(msg)
    space = _GroupSpace(spec, i)
    # the tie blocks' bounds: read by the block terms under ties="average" and by the block windows
    terms = definition.terms(context, cutoff).values()
    blocks = (context.averaged and any(term.block is not None for term in terms)) or any(
        running.operation.startswith("block") for running in definition.running(context)
    )
    space.materialize(_read_by(definition, context, cutoff, parsed.cutoff), blocks)
    columns = dict(space.rows)
    for running in definition.running(context):
        value = _substitute(running.value, columns)
        if running.operation == "row":
            columns[running.column] = value
        elif running.operation in ("sum", "product"):
            ordered = value.cum_sum() if running.operation == "sum" else value.cum_prod()
            if running.exclusive:
                ordered = ordered.shift(1, fill_value=1.0 if running.operation == "product" else 0.0)
            columns[running.column] = ordered
        elif running.operation == "block_sum":
            columns[running.column] = space.block_sum(value)
        else:
            columns[running.column] = space.block_least(value)
    per_group = {**columns, **space.per_group}
    for column, term in definition.terms(context, cutoff).items():
        if context.averaged and term.block is not None:
            # each row carries its tie block's sums (`_GroupSpace.block_aggregation`), and the block's term is
            # taken once, at its first row: a row in no tie is a block of one, whose block term is its row term
            sums = {BLOCK_SIZE: space.rows[BLOCK_SIZE]}
            for block_sum in term.block_sums:
                sums[block_sum.meta.output_name()] = space.block_aggregation(
                    _substitute(block_sum.meta.undo_aliases(), columns)
                )
            block = pl.when(space.block_first).then(_substitute(term.block, {**columns, **sums}))
            per_group[column] = block.min() if term.least else block.sum()
            continue
        row = _substitute(term.row, columns)
        per_group[column] = row.min() if term.least else row.sum()
    # `first`: a value reading a table by a per-group index (compat's, `lit(table).gather(i)`) is a list of one
    # value per group in an aggregation, where the plan's per-query frame reads it row by row
    value = space.evaluated(_substitute(definition.value(context, parsed.cutoff), per_group).first())
    checks = _checks("", i, space.unsorted_gain) + _measure_checks(definition, context, i, space, per_group, cutoff)
    return _finish(i, parsed.column, value, checks)


def _read_by(definition: Definition, context: Context, cutoff: int | None, k: int | None) -> set[str]:
    """The plan's columns the measure's expressions read (its running columns, terms, finish, no_relevant)."""
    expressions = [running.value for running in definition.running(context)]
    for term in definition.terms(context, cutoff).values():
        expressions += [term.row, *([term.block] if term.block is not None else []), *term.block_sums]
    expressions.append(definition.value(context, k))
    if definition.no_relevant is not None:
        expressions.append(definition.no_relevant.condition(context, cutoff))
    read: set[str] = set()
    for expression in expressions:
        read |= {name for name in expression.meta.root_names() if name.startswith(PREFIX)}
    return read


def _first_relevant_expectation(parsed: _spec.Measure, i: _Inputs, spec: _spec.Spec) -> pl.Expr:
    """rr and success under ties="average": `exprs.reciprocal_rank` and `exprs.success`."""
    make = {"rr": reciprocal_rank, "success": success}.get(parsed.kind)
    if make is None:
        msg = f"exprs.measure: no group form of {parsed.column}'s per-query step"
        raise AssertionError(msg)
    return make(i.relevance, i.score, k=parsed.cutoff, ties=spec.ties, threshold=spec.threshold, doc=i.doc)


def _position_read(spec: _spec.Spec) -> str:
    """The position column the measure's counting terms read (`_plan.needs._threshold_position`)."""
    return RELEVANT_POSITION if _splits_positions(spec) else POSITION


# the fields of a group's sorted rows (`_GroupSpace`), and the tie blocks' bounds added by `materialize`
_BASE_FIELDS = ("relevance", "gain", "score", "relevant")
_BLOCK_START, _BLOCK_END, _SCORE = f"{PREFIX}block_first_position", f"{PREFIX}block_last_position", f"{PREFIX}score"


class _GroupSpace:
    """The plan's vocabulary over one group's rows: per row (`rows`), in the ranked order (descending score, ties
    broken as `ties` says; the order of the rows does not matter to a measure ties cannot change), and per group
    (`per_group`), each as the plan computes it for a query without judgments."""

    def __init__(self, spec: _spec.Spec, i: _Inputs) -> None:
        relevance = i.relevance.cast(pl.Float64, strict=False)
        gain = _plan_gain(spec, i.relevance)
        relevant = relevance > spec.threshold
        # tie bounds order a tie block by gain when the measure reads one, else by the relevant flag
        gainful = _needs(spec, Quantity.GAIN)
        key = gain if gainful else relevant.cast(pl.Int8)
        # under ties="average" any order of a tie block: the blocks' sums read it whole (`block_aggregation`)
        ordered = replace(i, ties="input" if spec.ties == "average" else spec.ties)

        # the group's rows sorted once, as a list of structs per group: everything below is evaluated on it
        # (`evaluated`), each field read where a column was (Polars shares no repeated sub-expression inside an
        # aggregation: a sort per reference cost bpref under ties="average" 60x `evaluate`'s time)
        fields = dict(zip(_BASE_FIELDS, (relevance, gain, i.score, relevant.cast(pl.Int8)), strict=True))
        self.sorted_rows = _in_ranked_order(ordered, key, pl.struct([e.alias(n) for n, e in fields.items()]))
        self.rows_list = self.sorted_rows.implode()
        row = pl.element().struct

        position = pl.int_range(1, pl.len() + 1, dtype=pl.UInt32)
        discount = _discount(spec, position)
        ranked_relevance, ranked_gain = row.field("relevance"), row.field("gain")
        ranked_relevant = ranked_relevance > spec.threshold
        ideal_gain = ranked_gain.sort(descending=True)
        positive_ideal = ideal_gain.clip(lower_bound=0.0)
        ideal_dcg_at = (positive_ideal * discount).cum_sum()
        # the last position of each positive gain value in the ideal order (Rndcg's boundaries)
        boundary = (ideal_gain > 0) & ideal_gain.ne_missing(ideal_gain.shift(-1))
        relevant_position = position
        if _splits_positions(spec):  # the counting measures' own order of a tie block: relevant first / last
            flag = row.field("relevant")
            flag = flag if spec.ties == "optimistic" else -flag
            relevant_position = pl.struct(row.field("score"), flag).rank("ordinal", descending=True)
        level = pl.when(ranked_relevant).then(ranked_relevance)
        within_level = pl.struct(ranked_relevance, position).rank("ordinal") - ranked_relevance.rank("min") + 1
        higher_levels = (level.rank("min", descending=True) - 1).cast(pl.Int64)
        score = row.field("score")
        # a row's tie block: positions start..end of the rows of its score (1-based, in the ranked order)
        self.score = score
        self.block_start = score.rank("min", descending=True)
        self.block_end = score.rank("max", descending=True)
        self.block_first = position == self.block_start
        block_mean_gain = self.block_sum(ranked_gain) / (self.block_end - self.block_start + 1).cast(pl.Float64)
        self.unsorted_gain, self.unsorted_relevant = gain, relevant
        # order-free per-group values, from the sorted rows
        gain, relevant = ranked_gain, ranked_relevant
        # 0.0 on each row (elementwise: a per-group value added to it is one per row)
        on_rows = pl.zeros(pl.len(), pl.Float64)
        self.rows: dict[str, pl.Expr] = {
            RELEVANCE: ranked_relevance,
            GAIN: ranked_gain,
            RELEVANT: ranked_relevant,
            POSITION: position,
            RELEVANT_POSITION: relevant_position,
            DISCOUNT: discount,
            RELEVANT_BEFORE: pl.when(ranked_relevant).then(ranked_relevant.cast(pl.Int64).cum_sum() - 1),
            JUDGED_BEFORE: (position - 1).cast(pl.Int64),
            POOLED_BEFORE: (position - 1).cast(pl.Int64),
            POOLED: position > 0,
            # per row, as the plan has them (a tie block's greatest of them is read)
            ROW_RELEVANT_TOTAL: on_rows + relevant.sum().cast(pl.Float64),
            ROW_NONRELEVANT_TOTAL: on_rows + (~relevant).sum().cast(pl.Float64),
            GAIN_HIGH: on_rows + pl.max_horizontal(gain.max(), 0.0).fill_null(0.0),
            CUMULATIVE_GAIN: ranked_gain.cum_sum(),
            CUMULATIVE_DCG: (ranked_gain * discount).cum_sum(),
            DISCOUNT_ABOVE: discount.cum_sum().shift(1, fill_value=0.0),
            EXPECTED_DCG_ABOVE: (block_mean_gain * discount).cum_sum().shift(1, fill_value=0.0),
            IDEAL_GAIN_AT: ideal_gain,
            IDEAL_DCG_AT: ideal_dcg_at,
            IDEAL_EXCESS_AT: (positive_ideal - 1.0).clip(lower_bound=0.0).cum_sum(),
            BOUNDARY_WEIGHT_AT: pl.when(boundary).then(1.0 / ideal_dcg_at).otherwise(0.0).cum_sum(reverse=True),
            CONTINUATION: (1.0 - stopping_probability(ranked_relevance)).cum_prod().shift(1, fill_value=1.0),
            BLOCK_START: (self.block_start - 1).cast(pl.Int64),
            BLOCK_SIZE: self.block_end - self.block_start + 1,
            BLOCK_UNJUDGED: position * 0,
            HIGHER_LEVELS: higher_levels,
            LEVEL_TOTAL: (ranked_relevance.rank("max") - ranked_relevance.rank("min") + 1).cast(pl.Int64),
            COMPATIBLE_IDEAL_POSITION: pl.when(ranked_relevant).then(higher_levels + within_level.cast(pl.Int64)),
        }
        self.per_group: dict[str, pl.Expr] = {
            ROWS: pl.len(),
            RELEVANT_COUNT: relevant.sum().cast(pl.Float64),
            POSITIVE_GAINS: (gain > 0).sum().cast(pl.Float64),
            POSITIVE_GAIN_TOTAL: pl.when(gain > 0).then(gain).sum(),
            BOUNDARIES: gain.filter(gain > 0).n_unique().cast(pl.Float64),
        }
        # the ideal DCG and ideal ERR per cut-off, the plan's own sums over the ideal order
        ideal = {GAIN: ideal_gain, IDEAL_POSITION: position, IDEAL_DISCOUNT: discount}
        for total in _ideal_terms(spec):
            self.per_group[total.meta.output_name()] = _substitute(total.meta.undo_aliases(), ideal)
        grades = ranked_relevance.sort(descending=True)
        ideal_err = {
            RELEVANCE: grades,
            _cascade.IDEAL_ERR_POSITION: position,
            _cascade.IDEAL_ERR_CONTINUATION: (1.0 - stopping_probability(grades)).cum_prod().shift(1, fill_value=1.0),
        }
        for total in _cascade.ideal_err_sums(_cutoffs_needing(spec, Quantity.IDEAL_ERR), False):
            self.per_group[total.meta.output_name()] = _substitute(total.meta.undo_aliases(), ideal_err)

    def evaluated(self, expression: pl.Expr) -> pl.Expr:
        """A per-group `expression` written over the sorted rows (`rows`, `per_group`), in the aggregation."""
        return self.rows_list.list.eval(expression).list.first()

    def materialize(self, read: set[str], blocks: bool) -> None:
        """The row columns in `read`, and the tie blocks' bounds, computed once per group as fields of the sorted
        rows (a first `list.eval`), where the measure's expressions then read them: each of them, written out
        at every reference, was computed again there."""
        row = pl.element().struct
        names = [name for name in self.rows if name in read]
        bounds = {_BLOCK_START: self.block_start, _BLOCK_END: self.block_end, _SCORE: self.score} if blocks else {}
        fields = [row.field(name) for name in _BASE_FIELDS]
        fields += [self.rows[name].alias(name) for name in names]
        fields += [expression.alias(name) for name, expression in bounds.items()]
        self.rows_list = self.sorted_rows.implode().list.eval(pl.struct(fields))
        self.rows.update({name: row.field(name) for name in names})
        if blocks:
            self.block_start, self.block_end, self.score = (row.field(name) for name in bounds)
            self.block_first = pl.int_range(1, pl.len() + 1, dtype=pl.UInt32) == self.block_start

    def block_sum(self, value: pl.Expr) -> pl.Expr:
        """Per row: the sum of `value` (in the ranked order) over its tie block, from one running sum."""
        running = value.cast(pl.Float64).cum_sum()
        return running.gather(self.block_end - 1) - (running - value.cast(pl.Float64)).gather(self.block_start - 1)

    def block_least(self, value: pl.Expr, greatest: bool = False) -> pl.Expr:
        """Per row: the least (or greatest) of `value` over its tie block: the block's first row once the rows of
        each score are sorted by `value` too (nulls last, as `min` skips them)."""
        by_value = value.sort_by([self.score, value], descending=[True, greatest], nulls_last=True)
        return by_value.gather(self.block_start - 1)

    def block_aggregation(self, aggregation: pl.Expr) -> pl.Expr:
        """A measure's per-block aggregation (`Term.block_sums`: sums, least or greatest values of
        elementwise values, in an expression), per row over its tie block."""

        def walk(node: Any) -> Any:
            if isinstance(node, dict) and set(node) == {"Agg"}:
                ((kind, argument),) = node["Agg"].items()
                value = _from_json(argument["input"] if kind in ("Min", "Max") else argument)
                if kind == "Sum":
                    return _json(self.block_sum(value))
                if kind in ("Min", "Max"):
                    return _json(self.block_least(value, greatest=kind == "Max"))
                msg = f"no block form of the aggregation {kind} in {aggregation}"
                raise ValueError(msg)
            if isinstance(node, dict):
                return {key: walk(value) for key, value in node.items()}
            if isinstance(node, list):
                return [walk(value) for value in node]
            return node

        return _from_json(walk(_json(aggregation)))


@dataclass(frozen=True)
class _WordedCheck(_Check):
    """A check raising the namespace's own error of a measure's check, the group in place of the query."""

    make_error: MakeError | None = None

    def raise_if_failing(self, frame: pl.DataFrame) -> None:
        failing = frame.filter(pl.col(self.name) > 0)
        if failing.is_empty() or self.make_error is None:
            return
        if self.value is not None:
            failing = failing.sort(f"{self.name}_value", nulls_last=True)
        group = failing.row(0, named=True)
        raise self.make_error(group[self.name], "(this group)", group.get(f"{self.name}_value"))


def _measure_checks(
    definition: Definition,
    context: Context,
    i: _Inputs,
    space: _GroupSpace,
    per_group: Mapping[str, pl.Expr],
    cutoff: int | None,
) -> list[_Check]:
    """The measure's own data checks (ndcg's negative labels, ERR's grades), worded for a group as the
    hand-written expressions word them, and with no_relevant="error" the check of a group with nothing to
    normalise by."""
    checks: list[_Check] = []
    raw_gain, relevant = space.unsorted_gain, space.unsorted_relevant
    # the query holds a tie (null otherwise), as the plan's TIED of each row
    tied = pl.when(i.score.n_unique() < pl.len()).then(pl.lit(True))
    raw = {RELEVANCE: i.relevance.cast(pl.Float64, strict=False), RELEVANT: relevant, GAIN: raw_gain, TIED: tied}
    for check in definition.row_checks(context):
        assert check.failing is not None, f"{definition.name}: a row check counts its failing rows"
        failing = _substitute(check.failing, raw)
        message = _GROUP_MESSAGES.get(check.column)
        if message is not None:
            checks.append(_relevance_check(i, check.column, failing, message))
        else:  # the namespace's words, with the group in place of the query
            value = None if check.value is None else _substitute(check.value, {**raw, GAIN: raw_gain})
            checks.append(_WordedCheck(check.column, failing.sum(), "", value, least=True, make_error=check.make_error))
    if context.no_relevant == "error" and definition.no_relevant is not None:
        condition = space.evaluated(_substitute(definition.no_relevant.condition(context, cutoff), per_group))
        reason = definition.no_relevant.reason(context)
        message = f"a group has {reason}; pass no_relevant=0.0, 1.0 or None to score them."
        checks.append(_Check("no_relevant", condition.cast(pl.UInt32), message.replace("{", "{{").replace("}", "}}")))
    return checks


# the measures' own row checks, as a group's message words them (`_data_checks`)
_GROUP_MESSAGES = {
    f"{PREFIX}negative_relevance": NEGATIVE_RELEVANCE_MESSAGE,
    f"{PREFIX}err_grade": ERR_GRADE_MESSAGE,
}


def _json(expression: pl.Expr) -> Any:
    return json.loads(expression.meta.serialize(format="json"))


def _substitute(expression: pl.Expr, columns: Mapping[str, pl.Expr]) -> pl.Expr:
    """`expression` with each `col(name)` of the plan's vocabulary replaced by `columns[name]`; a name of the
    vocabulary missing there raises (the measure reads a quantity this group space does not have)."""
    replacements: dict[str, Any] = {}
    missing: set[str] = set()

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            column = node.get("Column") if len(node) == 1 else None
            if isinstance(column, str) and column.startswith(PREFIX):
                if column not in columns:
                    missing.add(column)
                    return node
                if column not in replacements:
                    replacements[column] = _json(columns[column])
                return replacements[column]
            return {key: walk(value) for key, value in node.items()}
        if isinstance(node, list):
            return [walk(value) for value in node]
        return node

    tree = _looked_up(walk(_json(expression)))
    if missing:
        msg = f"no group form of {sorted(missing)}: the measure reads a quantity of the plan's own"
        raise ValueError(msg)
    return _from_json(tree)


def _looked_up(node: Any) -> Any:
    """Each table read by index (`lit(table).gather(index)`: rbp's weights, compat's partial sums) as a lookup
    by value (`replace_strict`), elementwise: in an aggregation the gather runs group by group (rbp over 300k
    groups of 10 rows: 34 s against 0.55 s)."""
    if isinstance(node, dict):
        gather = node.get("Gather") if len(node) == 1 else None
        if isinstance(gather, dict) and isinstance(gather.get("expr"), dict) and "Literal" in gather["expr"]:
            table = pl.select(_from_json(gather["expr"])).to_series()
            index = _from_json(_looked_up(gather["idx"])).cast(pl.Int64)
            positions = pl.Series(range(table.len()), dtype=pl.Int64)
            return _json(index.replace_strict(positions, table, return_dtype=table.dtype))
        return {key: _looked_up(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_looked_up(value) for value in node]
    return node


def _from_json(tree: Any) -> pl.Expr:
    return pl.Expr.deserialize(io.StringIO(json.dumps(tree)), format="json")
