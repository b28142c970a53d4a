"""NERR9@k, "not (but nearly) ERR", equation 9 of Azzopardi, Mackenzie and Moffat (ICTIR 2021), as ir_measures
computes NERR9(max_rel=...)@k through cwl_eval: a C/W/L measure (`_cwl`) whose user goes on from position p
with probability C(p) = p / (p + 1) x (1 - g'(p)) for p < k and stops at k.  The product of C over the positions
above p is Q(p) / p, Q(p) the product of 1 - g' over them (`nerr8.continuation`), so

    NERR9@k = (sum over p <= k of Q(p) g'(p) / p) / (sum over p <= k of Q(p) / p),

positions past the end of the list (up to k) holding gain 0 and weight Q(m + 1) / p, Q(m + 1) the product over
the list's m rows: together Q(m + 1) (H(k) - H(m)), H the harmonic numbers (H(n) = digamma(n + 1) + Euler's
gamma, shifted by 14 and summed by its asymptotic series: within 1e-15).  Options `max_rel` (required) and
`min_rel` (default 0), as for sdcg.  A query with no row scores 0.

Ties: refused under ties="average" and the tie bounds (`_cwl`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping

import polars as pl

from . import _cwl, nerr8
from ._base import (
    NO_SPELLING,
    POSITION,
    ROWS,
    Context,
    Definition,
    Spelling,
    Term,
    cut,
    cut_at,
    only_at_a_parameter,
    term_name,
)

EULER_GAMMA = 0.5772156649015329
# digamma(x) = digamma(x + SHIFT) - sum over i < SHIFT of 1 / (x + i); past x + SHIFT >= 15 the asymptotic
# series below (through 1 / y**12) is within 2e-16
_SHIFT = 14
# the Bernoulli terms of digamma's asymptotic series: ln y - 1 / (2 y) - sum over n of B(2n) / (2n y**(2n))
_ASYMPTOTIC = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760)
# H(k) summed term by term up to this k, by the series past it
_SUMMED = 1 << 20


def harmonic(n: pl.Expr) -> pl.Expr:
    """H(n) = 1 + 1/2 + ... + 1/n for n >= 0 (per row), as digamma(n + 1) + Euler's gamma."""
    x = n.cast(pl.Float64) + 1.0
    y = x + float(_SHIFT)
    series = y.log() - 0.5 / y
    for order, coefficient in enumerate(_ASYMPTOTIC, start=1):
        series = series - coefficient / y.pow(2 * order)
    shifted = pl.sum_horizontal([1.0 / (x + float(i)) for i in range(_SHIFT)])
    return series - shifted + EULER_GAMMA


@functools.cache
def harmonic_number(k: int) -> float:
    """H(k), summed exactly rounded up to `_SUMMED`, by digamma's series past it."""
    if k <= _SUMMED:
        return math.fsum(1.0 / p for p in range(1, k + 1))
    y = float(k) + 1.0
    series = math.log(y) - 0.5 / y - sum(c / y ** (2 * order) for order, c in enumerate(_ASYMPTOTIC, start=1))
    return series + EULER_GAMMA


def _names(min_rel: float, max_rel: float, cutoff: int | None) -> tuple[str, str, str]:
    stem = _cwl.suffix(min_rel, max_rel)
    return (
        term_name(f"nerr9_utility_{stem}", cutoff),
        term_name(f"nerr9_weight_{stem}", cutoff),
        nerr8.list_product(min_rel, max_rel)[0],
    )


def terms_at(min_rel: float, max_rel: float, context: Context, cutoff: int | None) -> dict[str, Term]:
    product_above = pl.col(nerr8.continuation(min_rel, max_rel))
    gain = _cwl.scaled_gain(min_rel, max_rel)
    weight = product_above / pl.col(POSITION).cast(pl.Float64)
    utility, weights, _ = _names(min_rel, max_rel, cutoff)
    return {
        utility: Term(cut(weight * gain, POSITION, cutoff), None),
        weights: Term(cut(weight, POSITION, cutoff), None),
    } | dict([nerr8.list_product(min_rel, max_rel)])


def value_at(min_rel: float, max_rel: float, context: Context, cutoff: int | None) -> pl.Expr:
    if cutoff is None:
        msg = "nerr9 is computed at a cut-off: the plan asks it with one (`nerr9@k`)"
        raise AssertionError(msg)
    utility, weights, product = (pl.col(name) for name in _names(min_rel, max_rel, cut_at(cutoff)))
    rows = pl.col(ROWS)
    beyond = pl.when(rows < cutoff).then(harmonic_number(cutoff) - harmonic(rows)).otherwise(0.0)
    padded = beyond * product.fill_null(0.0)
    return pl.when(rows == 0).then(0.0).otherwise(utility / (weights + padded))


def with_options(values: Mapping[str, float]) -> Definition:
    min_rel, max_rel = _cwl.checked_levels("nerr9", values)
    return _cwl.bound(MEASURE, terms_at, value_at, (min_rel, max_rel), nerr8.running_at(min_rel, max_rel))


_terms, _value = only_at_a_parameter("nerr9(max_rel=...)")

MEASURE = Definition(
    name="nerr9",
    oracle="ir_measures (cwl_eval); hand derivations; harmonic numbers against exact fractions",
    method=None,
    aliases=(),
    ir_measures=Spelling(None, "NERR9(max_rel={max_rel})@{k}"),
    ranx=NO_SPELLING,
    family="gain",
    needs=frozenset(),
    terms=_terms,
    value=_value,
    bounds=(0.0, 1.0),
    parameter="required_cutoff",
    refuses_average=_cwl.REFUSES_AVERAGE,
    refuses_bounds=_cwl.REFUSES_BOUNDS,
    options=_cwl.OPTIONS,
    with_options=with_options,
)
