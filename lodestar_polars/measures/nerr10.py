"""NERR10(p), "not (but nearly) ERR", equation 10 of Azzopardi, Mackenzie and Moffat (ICTIR 2021), as ir_measures
computes NERR10(p=...,max_rel=...) through cwl_eval: a C/W/L measure (`_cwl`) whose user goes on from position p
with probability C = phi (1 - g'), RBP's persistence phi times ERR's chance of not being satisfied, to cwl_eval's
depth of 1000 positions.  With Q(p) the product of 1 - g' over the positions above p (`nerr8.continuation`),

    NERR10(phi) = (sum over p of phi^(p - 1) Q(p) g'(p)) / (sum over p of phi^(p - 1) Q(p)),  p <= 1000,

positions past the end of the list holding gain 0: together Q(m + 1) (phi^m + ... + phi^999), Q(m + 1) the
product over the list's m rows (tabulated per call for every m up to 1000).  Options `p` (phi, default 0.9,
ir_measures' default; strictly between 0 and 1), `max_rel` (required) and `min_rel` (default 0), as for sdcg.  A
query with no row scores 0.

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
    Option,
    Spelling,
    Term,
    cut,
    only_at_a_parameter,
    term_name,
)

DEFAULT_PERSISTENCE = 0.9


def _refused_persistence(value: float) -> str | None:
    return None if 0.0 < value < 1.0 else "the persistence p lies strictly between 0 and 1"


OPTIONS = (Option("p", DEFAULT_PERSISTENCE, "phi: the persistence", _refused_persistence), *_cwl.OPTIONS)


@functools.cache
def tail(phi: float) -> tuple[float, ...]:
    """For every list length m in 0..1000: the sum of phi^(q - 1) over the positions q = m + 1..1000."""
    return tuple(math.fsum(phi ** (q - 1) for q in range(m + 1, _cwl.DEPTH + 1)) for m in range(_cwl.DEPTH + 1))


def _names(phi: float, min_rel: float, max_rel: float) -> tuple[str, str, str]:
    stem = _cwl.suffix(phi, min_rel, max_rel)
    return (
        term_name(f"nerr10_utility_{stem}", None),
        term_name(f"nerr10_weight_{stem}", None),
        nerr8.list_product(min_rel, max_rel)[0],
    )


def terms_at(phi: float, min_rel: float, max_rel: float, context: Context, cutoff: int | None) -> dict[str, Term]:
    position = pl.col(POSITION).cast(pl.Float64)
    weight = pl.lit(phi).pow(position - 1.0) * pl.col(nerr8.continuation(min_rel, max_rel))
    gain = _cwl.scaled_gain(min_rel, max_rel)
    utility, weights, _ = _names(phi, min_rel, max_rel)
    return {
        utility: Term(cut(weight * gain, POSITION, _cwl.DEPTH), None),
        weights: Term(cut(weight, POSITION, _cwl.DEPTH), None),
    } | dict([nerr8.list_product(min_rel, max_rel)])


def value_at(phi: float, min_rel: float, max_rel: float, context: Context, cutoff: int | None) -> pl.Expr:
    utility, weights, product = (pl.col(name) for name in _names(phi, min_rel, max_rel))
    padded = _cwl.past_the_list(tail(phi)) * product.fill_null(0.0)
    return pl.when(pl.col(ROWS) == 0).then(0.0).otherwise(utility / (weights + padded))


def with_options(values: Mapping[str, float]) -> Definition:
    min_rel, max_rel = _cwl.checked_levels("nerr10", values)
    phi = values["p"]
    return _cwl.bound(MEASURE, terms_at, value_at, (phi, min_rel, max_rel), nerr8.running_at(min_rel, max_rel))


_terms, _value = only_at_a_parameter("nerr10(max_rel=...)")

MEASURE = Definition(
    name="nerr10",
    oracle="ir_measures (cwl_eval); hand derivations",
    method=None,
    aliases=(),
    ir_measures=Spelling("NERR10(max_rel={max_rel})", None),
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
