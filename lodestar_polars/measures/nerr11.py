"""NERR11(T), "not (but nearly) ERR", equation 11 of Azzopardi, Mackenzie and Moffat (ICTIR 2021), as ir_measures
computes NERR11(T=...,max_rel=...) through cwl_eval: a C/W/L measure (`_cwl`) whose user goes on from position p
with probability C(p) = ((p + 2T - 1) / (p + 2T))^2 (1 - g'(p)), INSQ's continuation (`insq`) times ERR's chance
of not being satisfied, to cwl_eval's depth of 1000 positions.  The product of C over the positions above p is
w(p) Q(p), w(p) = (2T / (p - 1 + 2T))^2 and Q(p) the product of 1 - g' over them (`nerr8.continuation`), so

    NERR11(T) = (sum over p of w(p) Q(p) g'(p)) / (sum over p of w(p) Q(p)),  p <= 1000,

positions past the end of the list holding gain 0: together Q(m + 1) (w(m + 1) + ... + w(1000)), Q(m + 1) the
product over the list's m rows (tabulated per call for every m up to 1000).  Options `t` (T, default 1,
ir_measures' default; positive), `max_rel` (required) and `min_rel` (default 0), as for sdcg.  A query with no
row scores 0.

Ties: refused under ties="average" and the tie bounds (`_cwl`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping

import polars as pl

from . import _cwl, bpm, insq, nerr8
from ._base import (
    NO_SPELLING,
    ROWS,
    Context,
    Definition,
    Spelling,
    Term,
    only_at_a_parameter,
    term_name,
)


@functools.cache
def tail(target: float) -> tuple[float, ...]:
    """For every list length m in 0..1000: the sum of w(q) over the positions q = m + 1..1000."""
    twice = 2.0 * target
    weights = [(twice / (q - 1.0 + twice)) ** 2 for q in range(1, _cwl.DEPTH + 1)]
    return tuple(math.fsum(weights[m:]) for m in range(_cwl.DEPTH + 1))


def _names(target: float, min_rel: float, max_rel: float) -> tuple[str, str, str]:
    stem = _cwl.suffix(target, min_rel, max_rel)
    return (
        term_name(f"nerr11_utility_{stem}", None),
        term_name(f"nerr11_weight_{stem}", None),
        nerr8.list_product(min_rel, max_rel)[0],
    )


def terms_at(target: float, min_rel: float, max_rel: float, context: Context, cutoff: int | None) -> dict[str, Term]:
    weight = insq.weight(target) * pl.col(nerr8.continuation(min_rel, max_rel))
    gain = _cwl.scaled_gain(min_rel, max_rel)
    utility, weights, _ = _names(target, min_rel, max_rel)
    return {utility: Term(weight * gain, None), weights: Term(weight, None)} | dict(
        [nerr8.list_product(min_rel, max_rel)]
    )


def value_at(target: float, min_rel: float, max_rel: float, context: Context, cutoff: int | None) -> pl.Expr:
    utility, weights, product = (pl.col(name) for name in _names(target, min_rel, max_rel))
    padded = _cwl.past_the_list(tail(target)) * product.fill_null(0.0)
    return pl.when(pl.col(ROWS) == 0).then(0.0).otherwise(utility / (weights + padded))


def with_options(values: Mapping[str, float]) -> Definition:
    min_rel, max_rel = _cwl.checked_levels("nerr11", values)
    target = values["t"]
    return _cwl.bound(MEASURE, terms_at, value_at, (target, min_rel, max_rel), nerr8.running_at(min_rel, max_rel))


_terms, _value = only_at_a_parameter("nerr11(max_rel=...)")

MEASURE = Definition(
    name="nerr11",
    oracle="ir_measures (cwl_eval); hand derivations",
    method=None,
    aliases=(),
    ir_measures=Spelling("NERR11(max_rel={max_rel})", None),
    ranx=NO_SPELLING,
    family="gain",
    needs=frozenset(),
    terms=_terms,
    value=_value,
    bounds=(0.0, 1.0),
    parameter="none",
    refuses_average=_cwl.REFUSES_AVERAGE,
    refuses_bounds=_cwl.REFUSES_BOUNDS,
    options=bpm.OPTIONS,
    with_options=with_options,
)
