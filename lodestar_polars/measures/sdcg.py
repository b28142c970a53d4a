"""SDCG@k, scaled discounted cumulative gain, as ir_measures computes SDCG(max_rel=...)@k (through cwl_eval's
NDCG-k, Moffat et al.'s C/W/L framework): nDCG@k, but normalised as if the query had at least k documents of
the greatest relevance level, so that a query with few relevant documents cannot score 1 by ranking them first.
With g'(p) the scaled gain of the document at position p,

    SDCG@k = (sum over p <= k of g'(p) / log2(p + 1)) / (sum over p <= k of 1 / log2(p + 1)),
    g' = (min(max(g, min_rel), max_rel) - min_rel) / (max_rel - min_rel),

g being the gain of the call (with the default linear gains, the relevance level, as ir_measures reads it; a
gain mapping is applied first, and min_rel / max_rel then bound the mapped gain: sdcg(max_rel=15)@10 with
gain="exponential" over grades 0..4).  Options `max_rel`, required as ir_measures requires it (a default
would silently turn graded labels into binary ones: `sdcg@10` is refused, `sdcg(max_rel=4)@10` taken, and the
column always shows it), and `min_rel` (default 0, ir_measures' default; it must not be negative: ir_measures
would then give documents judged 0, and those judged below 0, a positive gain, while an unjudged one has 0).
Gains past max_rel count as max_rel, as ir_measures defines SDCG (it clips them too, with a warning, which is
not repeated here): a max_rel below the greatest level is a choice, binary gains at max_rel=1 for instance;
gains below min_rel count as min_rel.  With judgments an unjudged document, or one judged at a negative level,
has g' = 0 (ir_measures: relevance max(level, 0), clipped; unjudged: cwl_eval's least gain 0).

The cut-off is required, as in ir_measures: the normaliser is the DCG of k positions at the greatest level,
whatever the length of the list, so a list shorter than k is normalised over all k positions, and a query
with no relevant document scores 0 (the normaliser is never 0: `no_relevant` does not apply).  A judged query
missing from the run scores 0 with missing_queries="zero" (ir_measures scores it 0); a run query without
judgments is left out, as ir_measures leaves it out.  The ratio is the same in every log base, so `log_base`
does not change it.  ir_measures (cwl_eval) keeps only the first 1000 documents of a ranking, padded with
gain 0: past k = 1000 its normaliser stops at 1000 positions, while here it counts all k (for k above 2**16
by the Euler-Maclaurin formula with the logarithmic integral, within 1e-14 of the sum; past k = 2**1000 the
normaliser exceeds 1e298 and SDCG is taken as 0).

Ties: linear in the per-position weights 1 / log2(p + 1) for a fixed normaliser, so under ties="average" the
exact expectation as `dcg` takes it: a tie block adds its mean g' times its summed weights within k.  The tie
bounds order a tie block by gain, and g' does not decrease with the gain: they are SDCG's best and worst orders.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping

import polars as pl

from .._exact_sum import sum_parts
from ._base import (
    BLOCK_SIZE,
    GAIN,
    NO_SPELLING,
    POSITION,
    Context,
    Definition,
    Option,
    Spelling,
    Term,
    cut,
    cut_at,
    exact_quotient,
    option_text,
    term_name,
)

DEFAULT_MIN_REL = 0.0
# max_rel has no default: the value its error messages and examples write
EXAMPLE_MAX_REL = 4.0
# the normaliser is summed position by position up to this k, by the Euler-Maclaurin formula past it; past
# `_INFINITE_POSITIONS` it is taken as infinite (it exceeds 1e298: SDCG is then below 1e-295, and taken as 0)
_SUMMED_POSITIONS = 1 << 16
_INFINITE_POSITIONS = 1 << 1000


def _refused_min_rel(value: float) -> str | None:
    if value < 0:
        return (
            "min_rel must not be negative: documents judged 0 would get a positive gain, more than an unjudged "
            "document's 0"
        )
    return None


def _refused_max_rel(value: float) -> str | None:
    return None if value > 0 and math.isfinite(value) else "max_rel, the greatest relevance level, must be positive"


OPTIONS = (
    Option("min_rel", DEFAULT_MIN_REL, "the least relevance level: gain 0 at or below it", _refused_min_rel),
    Option(
        "max_rel",
        None,
        "the greatest relevance level, gain 1 at or above it (ir_measures requires it too)",
        _refused_max_rel,
        example=EXAMPLE_MAX_REL,
    ),
)


def _exponential_integral(t: float) -> float:
    """Ei(t) for t > 0, by its power series gamma + ln t + sum over n >= 1 of t^n / (n n!) (every term positive,
    so it loses nothing to cancellation)."""
    total, power, n = 0.0, 1.0, 0
    while True:
        n += 1
        power *= t / n
        term = power / n
        total += term
        if term < total * 1e-17 or math.isinf(total):
            return 0.5772156649015329 + math.log(t) + total


def _weight_sum_beyond(first: int, last: int) -> float:
    """The sum over positions first..last of 1 / log2(p + 1), by the Euler-Maclaurin formula: the integral
    ln 2 x (li(last + 1) - li(first + 1)), with li(y) = Ei(ln y), plus the ends' halves and the first derivative
    correction (the next one is below 1e-19 past 2**16)."""
    ln2 = math.log(2.0)

    def weight(x: int) -> float:
        return ln2 / math.log(x + 1)

    def slope(x: int) -> float:
        return -ln2 / ((x + 1) * math.log(x + 1) ** 2)

    integral = ln2 * (_exponential_integral(math.log(last + 1)) - _exponential_integral(math.log(first + 1)))
    return integral + (weight(first) + weight(last)) / 2 + (slope(last) - slope(first)) / 12


@functools.cache
def ideal_weight(cutoff: int) -> float:
    """The normaliser: the sum over positions 1..k of 1 / log2(p + 1), the DCG@k of k documents of gain 1."""
    if cutoff <= _SUMMED_POSITIONS:
        return math.fsum(math.log(2.0) / math.log(p + 1) for p in range(1, cutoff + 1))
    if cutoff > _INFINITE_POSITIONS:
        return math.inf
    return ideal_weight(_SUMMED_POSITIONS) + _weight_sum_beyond(_SUMMED_POSITIONS + 1, cutoff)


def scaled_gain(min_rel: float, max_rel: float, gain: pl.Expr | None = None) -> pl.Expr:
    """g': the gain of the call (the plan's gain column, or `gain`) clipped to [min_rel, max_rel] and brought into
    [0, 1]."""
    # a float column / a scalar is a product with the reciprocal in some of Polars' paths and a true division in
    # others (the last bit then follows the path, which the rows' order can change): `exact_quotient` divides
    clipped = (pl.col(GAIN) if gain is None else gain).clip(min_rel, max_rel)
    return exact_quotient(clipped - min_rel, max_rel - min_rel)


def _sum_column(min_rel: float, max_rel: float, cutoff: int | None) -> str:
    return term_name(f"sdcg_{option_text(min_rel)}_{option_text(max_rel)}", cutoff)


def terms_at(min_rel: float, max_rel: float, context: Context, cutoff: int | None) -> dict[str, Term]:
    gain = scaled_gain(min_rel, max_rel)
    weights = cut(pl.lit(1.0) / (pl.col(POSITION) + 1).cast(pl.Float64).log(2.0), POSITION, cutoff)
    block_gain = term_name(f"block_sdcg_gain_{option_text(min_rel)}_{option_text(max_rel)}", None)
    block_weights = term_name("block_sdcg_weight", cutoff)
    block = pl.col(block_gain) / pl.col(BLOCK_SIZE).cast(pl.Float64) * pl.col(block_weights)
    sums = (*sum_parts(gain, block_gain, context.exact_sums), *sum_parts(weights, block_weights, context.exact_sums))
    return {_sum_column(min_rel, max_rel, cutoff): Term(gain * weights, block, block_sums=sums)}


def value_at(min_rel: float, max_rel: float, context: Context, cutoff: int | None) -> pl.Expr:
    if cutoff is None:
        msg = "sdcg is computed at a cut-off: the plan asks it with one (`sdcg@k`)"
        raise AssertionError(msg)
    return pl.col(_sum_column(min_rel, max_rel, cut_at(cutoff))) / ideal_weight(cutoff)


def with_options(values: Mapping[str, float]) -> Definition:
    min_rel, max_rel = values["min_rel"], values["max_rel"]
    if max_rel <= min_rel:
        msg = (
            f"sdcg: max_rel={option_text(max_rel)} must exceed min_rel={option_text(min_rel)}: the gain is scaled "
            "by max_rel - min_rel (e.g. sdcg(min_rel=1,max_rel=3)@10)."
        )
        raise ValueError(msg)

    def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
        return terms_at(min_rel, max_rel, context, cutoff)

    def value(context: Context, cutoff: int | None) -> pl.Expr:
        return value_at(min_rel, max_rel, context, cutoff)

    return MEASURE.with_terms(terms, value)


_UNCONFIGURED = "sdcg is computed with its max_rel: the plan asks `MEASURE.configured(options)`"


def _unconfigured_terms(context: Context, cutoff: int | None) -> dict[str, Term]:
    raise AssertionError(_UNCONFIGURED)


def _unconfigured_value(context: Context, cutoff: int | None) -> pl.Expr:
    raise AssertionError(_UNCONFIGURED)


MEASURE = Definition(
    name="sdcg",
    oracle="ir_measures (cwl_eval); hand derivations; every tied order enumerated",
    method=None,
    aliases=("scaled_dcg",),
    ir_measures=Spelling(None, "SDCG(max_rel={max_rel})@{k}"),
    ranx=NO_SPELLING,
    family="gain",
    needs=frozenset(),
    terms=_unconfigured_terms,
    value=_unconfigured_value,
    bounds=(0.0, 1.0),
    parameter="required_cutoff",
    options=OPTIONS,
    with_options=with_options,
)
