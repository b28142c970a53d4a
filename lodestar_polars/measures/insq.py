"""INSQ(T), Moffat, Thomas and Scholer's INST without its adaptation (CIKM 2013), as ir_measures computes
INSQ(max_rel=...) through cwl_eval: a C/W/L measure (`_cwl`) whose user goes on from position p with probability
C(p) = ((p + 2T - 1) / (p + 2T))^2 whatever the gains, so the weight of position p is the telescoping product
(2T / (p - 1 + 2T))^2, normalised over cwl_eval's depth of 1000 positions:

    INSQ(T) = (sum over p <= 1000 of w(p) g'(p)) / (sum over p <= 1000 of w(p)),  w(p) = (2T / (p - 1 + 2T))^2,

positions past the end of the list holding gain 0, and the rows past position 1000 weighing nothing, as in
cwl_eval (the normaliser is a constant of T, summed exactly rounded).  Options `t` (T, the gain the user wants;
default 1, ir_measures' default; positive), `max_rel` (required) and `min_rel` (default 0), as for sdcg.  A query
with no row scores 0.

Ties: linear in the per-position weights w(p) over a fixed normaliser, so under ties="average" the exact
expectation, as for sdcg: a tie block adds its mean g' times its summed weights.  The weights decrease with the
position and g' does not decrease with the gain, so the tie bounds (a block most / least gainful first) are its
greatest and least values.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping

import polars as pl

from .._exact_sum import sum_parts
from . import _cwl, bpm
from ._base import (
    BLOCK_SIZE,
    NO_SPELLING,
    POSITION,
    Context,
    Definition,
    Spelling,
    Term,
    cut,
    exact_quotient,
    only_at_a_parameter,
    term_name,
)

DEPTH = _cwl.DEPTH


def weight(target: float) -> pl.Expr:
    """w(p) = (2T / (p - 1 + 2T))^2 of each row's position, 0 past `DEPTH`."""
    twice = 2.0 * target
    position = pl.col(POSITION).cast(pl.Float64)
    return cut((twice / (position - 1.0 + twice)).pow(2), POSITION, DEPTH)


@functools.cache
def normaliser(target: float) -> float:
    """The sum of w(p) over positions 1..`DEPTH`."""
    twice = 2.0 * target
    return math.fsum((twice / (p - 1.0 + twice)) ** 2 for p in range(1, DEPTH + 1))


def _names(target: float, min_rel: float, max_rel: float) -> tuple[str, str, str]:
    stem = _cwl.suffix(target, min_rel, max_rel)
    return (
        term_name(f"insq_{stem}", None),
        term_name(f"block_cwl_gain_{_cwl.suffix(min_rel, max_rel)}", None),
        term_name(f"block_insq_weight_{_cwl.suffix(target)}", None),
    )


def terms_at(target: float, min_rel: float, max_rel: float, context: Context, cutoff: int | None) -> dict[str, Term]:
    gain, weights = _cwl.scaled_gain(min_rel, max_rel), weight(target)
    total, block_gain, block_weights = _names(target, min_rel, max_rel)
    block = pl.col(block_gain) / pl.col(BLOCK_SIZE).cast(pl.Float64) * pl.col(block_weights)
    sums = (*sum_parts(gain, block_gain, context.exact_sums), *sum_parts(weights, block_weights, context.exact_sums))
    return {total: Term(gain * weights, block, block_sums=sums)}


def value_at(target: float, min_rel: float, max_rel: float, context: Context, cutoff: int | None) -> pl.Expr:
    return exact_quotient(pl.col(_names(target, min_rel, max_rel)[0]), normaliser(target))


def with_options(values: Mapping[str, float]) -> Definition:
    min_rel, max_rel = _cwl.checked_levels("insq", values)
    target = values["t"]
    return _cwl.bound(MEASURE, terms_at, value_at, (target, min_rel, max_rel))


_terms, _value = only_at_a_parameter("insq(max_rel=...)")

MEASURE = Definition(
    name="insq",
    oracle="ir_measures (cwl_eval); hand derivations; every tied order enumerated",
    method=None,
    aliases=(),
    ir_measures=Spelling("INSQ(max_rel={max_rel})", None),
    ranx=NO_SPELLING,
    family="gain",
    needs=frozenset(),
    terms=_terms,
    value=_value,
    bounds=(0.0, 1.0),
    parameter="none",
    options=bpm.OPTIONS,
    with_options=with_options,
)
