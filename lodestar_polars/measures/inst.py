"""INST(T), Moffat, Bailey, Scholer and Thomas's adaptive C/W/L measure (ADCS 2015), as ir_measures computes
INST(T=...,max_rel=...) through cwl_eval: a C/W/L measure (`_cwl`) whose user, wanting T of gain, goes on from
position p with probability C(p) = ((x - 1) / x)^2, x = p + T + T(p) and T(p) = T - G(p) the gain still wanted
(G(p) the scaled gain g' gathered through p, summed position after position), to cwl_eval's depth of 1000
positions:

    INST(T) = (sum over p of P(p) g'(p)) / (sum over p of P(p)),  P(p) = C(1) ... C(p - 1),  p <= 1000.

Past the end of the list (m rows) the gain stays G, so with a = 2T - G the products telescope,
P(q) = P(m + 1) ((m + a) / (q - 1 + a))^2, and the positions m + 1..1000 weigh together
P(m + 1) (m + a)^2 (trigamma(m + a) - trigamma(1000 + a)), trigamma shifted by 14 and summed by its asymptotic
series (within 1e-16).  Options `t` (T, default 1, ir_measures' default; at least 1/4: below it C can exceed 1),
`max_rel` (required) and `min_rel` (default 0), as for sdcg.  A query with no row scores 0.

Ties: refused under ties="average" and the tie bounds (`_cwl`: the gain gathered above a row sets its weight).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import polars as pl

from . import _cwl
from ._base import (
    NO_SPELLING,
    POSITION,
    ROWS,
    Context,
    Definition,
    Option,
    Running,
    Spelling,
    Term,
    cut,
    only_at_a_parameter,
    term_name,
)

DEFAULT_TARGET = 1.0
LEAST_TARGET = 0.25
# trigamma(x) = trigamma(x + SHIFT) + sum over i < SHIFT of 1 / (x + i)^2; past x + SHIFT >= 14 the asymptotic
# series 1/y + 1/(2 y^2) + sum over n of B(2n) / y^(2n + 1) through B(14) is within 1e-17
_SHIFT = 14
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)


def _refused_target(value: float) -> str | None:
    if value >= LEAST_TARGET and math.isfinite(value):
        return None
    return "T must be at least 1/4: below it INST's chance of going on, ((x - 1) / x)^2, can exceed 1"


OPTIONS = (Option("t", DEFAULT_TARGET, "T: the gain the user wants", _refused_target), *_cwl.OPTIONS)


def trigamma(x: pl.Expr) -> pl.Expr:
    """The trigamma function of x > 0 (per row): the sum over i >= 0 of 1 / (x + i)^2."""
    y = x + float(_SHIFT)
    series = 1.0 / y + 0.5 / y.pow(2)
    for order, coefficient in enumerate(_BERNOULLI, start=1):
        series = series + coefficient / y.pow(2 * order + 1)
    return series + pl.sum_horizontal([1.0 / (x + float(i)).pow(2) for i in range(_SHIFT)])


def _columns(target: float, min_rel: float, max_rel: float) -> tuple[str, str]:
    stem = _cwl.suffix(target, min_rel, max_rel)
    return term_name(f"cwl_gain_through_{_cwl.suffix(min_rel, max_rel)}", None), term_name(f"inst_{stem}", None)


def _continuation(target: float, min_rel: float, max_rel: float) -> pl.Expr:
    """C(p) = ((x - 1) / x)^2, x = p + 2T - G(p)."""
    through = pl.col(_columns(target, min_rel, max_rel)[0])
    x = pl.col(POSITION).cast(pl.Float64) + 2.0 * target - through
    return ((x - 1.0) / x).pow(2)


def running_at(target: float, min_rel: float, max_rel: float) -> list[Running]:
    through, weight = _columns(target, min_rel, max_rel)
    return [
        Running(through, _cwl.scaled_gain(min_rel, max_rel), "sum"),
        Running(weight, _continuation(target, min_rel, max_rel), "product", exclusive=True),
    ]


def _names(target: float, min_rel: float, max_rel: float) -> tuple[str, str, str, str]:
    stem = _cwl.suffix(target, min_rel, max_rel)
    return (
        term_name(f"inst_utility_{stem}", None),
        term_name(f"inst_weight_{stem}", None),
        term_name(f"inst_list_product_{stem}", None),
        term_name(f"cwl_gain_{_cwl.suffix(min_rel, max_rel)}", None),
    )


def terms_at(target: float, min_rel: float, max_rel: float, context: Context, cutoff: int | None) -> dict[str, Term]:
    weight = pl.col(_columns(target, min_rel, max_rel)[1])
    gain = _cwl.scaled_gain(min_rel, max_rel)
    utility, weights, product, gathered = _names(target, min_rel, max_rel)
    return {
        utility: Term(cut(weight * gain, POSITION, _cwl.DEPTH), None),
        weights: Term(cut(weight, POSITION, _cwl.DEPTH), None),
        # C <= 1 (T >= 1/4): the product through the list is the least of the running products
        product: Term(weight * _continuation(target, min_rel, max_rel), None, least=True),
        gathered: Term(cut(gain, POSITION, _cwl.DEPTH), None),
    }


def value_at(target: float, min_rel: float, max_rel: float, context: Context, cutoff: int | None) -> pl.Expr:
    utility, weights, product, gathered = (pl.col(name) for name in _names(target, min_rel, max_rel))
    rows = pl.col(ROWS).cast(pl.Float64)
    start = rows + 2.0 * target - gathered  # m + a
    beyond = start.pow(2) * (trigamma(start) - trigamma(start + (float(_cwl.DEPTH) - rows)))
    padded = pl.when(rows < _cwl.DEPTH).then(beyond * product.fill_null(0.0)).otherwise(0.0)
    return pl.when(rows == 0).then(0.0).otherwise(utility / (weights + padded))


def with_options(values: Mapping[str, float]) -> Definition:
    min_rel, max_rel = _cwl.checked_levels("inst", values)
    target = values["t"]
    return _cwl.bound(MEASURE, terms_at, value_at, (target, min_rel, max_rel), running_at(target, min_rel, max_rel))


_terms, _value = only_at_a_parameter("inst(max_rel=...)")

MEASURE = Definition(
    name="inst",
    oracle="ir_measures (cwl_eval); hand derivations; trigamma against exact fractions",
    method=None,
    aliases=(),
    ir_measures=Spelling("INST(max_rel={max_rel})", None),
    ranx=NO_SPELLING,
    family="gain",
    needs=frozenset(),
    terms=_terms,
    value=_value,
    bounds=(0.0, 1.0),
    parameter="none",
    refuses_average=_cwl.REFUSES_AVERAGE,
    refuses_bounds=_cwl.REFUSES_BOUNDS,
    options=OPTIONS,
    with_options=with_options,
)
