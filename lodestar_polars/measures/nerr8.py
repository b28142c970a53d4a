"""NERR8@k, "not (but nearly) ERR", equation 8 of Azzopardi, Mackenzie and Moffat (ICTIR 2021), as ir_measures
computes NERR8(max_rel=...)@k through cwl_eval: a C/W/L measure (`_cwl`) whose user goes on from position p
with probability C(p) = 1 - g'(p) for p < k and stops at k, so

    NERR8@k = (sum over p <= k of P(p) g'(p)) / (sum over p <= k of P(p)),  P(p) = product over q < p of 1 - g'(q),

positions past the end of the list (up to k) holding gain 0 and weight P(m + 1), the product over the list's m
rows.  Options `max_rel` (required) and `min_rel` (default 0), as for sdcg.  A query with no row scores 0.

Ties: refused under ties="average" and the tie bounds (`_cwl`).
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from . import _cwl
from ._base import (
    NO_SPELLING,
    POSITION,
    ROWS,
    Context,
    Definition,
    Running,
    Spelling,
    Term,
    cut,
    cut_at,
    only_at_a_parameter,
    term_name,
)


def continuation(min_rel: float, max_rel: float) -> str:
    """P(p): the product of 1 - g' over the positions above p."""
    return term_name(f"cwl_continuation_{_cwl.suffix(min_rel, max_rel)}", None)


def running_at(min_rel: float, max_rel: float) -> list[Running]:
    return [Running(continuation(min_rel, max_rel), 1.0 - _cwl.scaled_gain(min_rel, max_rel), "product", True)]


def list_product(min_rel: float, max_rel: float) -> tuple[str, Term]:
    """The product of 1 - g' over the whole list (null for a query with no row): the least of the running
    products (factors in [0, 1])."""
    name = term_name(f"cwl_list_product_{_cwl.suffix(min_rel, max_rel)}", None)
    product = pl.col(continuation(min_rel, max_rel)) * (1.0 - _cwl.scaled_gain(min_rel, max_rel))
    return name, Term(product, None, least=True)


def _names(min_rel: float, max_rel: float, cutoff: int | None) -> tuple[str, str, str]:
    stem = _cwl.suffix(min_rel, max_rel)
    return (
        term_name(f"nerr8_utility_{stem}", cutoff),
        term_name(f"nerr8_weight_{stem}", cutoff),
        list_product(min_rel, max_rel)[0],
    )


def terms_at(min_rel: float, max_rel: float, context: Context, cutoff: int | None) -> dict[str, Term]:
    weight, gain = pl.col(continuation(min_rel, max_rel)), _cwl.scaled_gain(min_rel, max_rel)
    utility, weights, _ = _names(min_rel, max_rel, cutoff)
    return {
        utility: Term(cut(weight * gain, POSITION, cutoff), None),
        weights: Term(cut(weight, POSITION, cutoff), None),
    } | dict([list_product(min_rel, max_rel)])


def value_at(min_rel: float, max_rel: float, context: Context, cutoff: int | None) -> pl.Expr:
    if cutoff is None:
        msg = "nerr8 is computed at a cut-off: the plan asks it with one (`nerr8@k`)"
        raise AssertionError(msg)
    utility, weights, product = (pl.col(name) for name in _names(min_rel, max_rel, cut_at(cutoff)))
    rows = pl.col(ROWS).cast(pl.Float64)
    padded = (pl.lit(float(cutoff)) - rows).clip(0.0, None) * product.fill_null(0.0)
    return pl.when(rows == 0).then(0.0).otherwise(utility / (weights + padded))


def with_options(values: Mapping[str, float]) -> Definition:
    min_rel, max_rel = _cwl.checked_levels("nerr8", values)
    return _cwl.bound(MEASURE, terms_at, value_at, (min_rel, max_rel), running_at(min_rel, max_rel))


_terms, _value = only_at_a_parameter("nerr8(max_rel=...)")

MEASURE = Definition(
    name="nerr8",
    oracle="ir_measures (cwl_eval); hand derivations",
    method=None,
    aliases=(),
    ir_measures=Spelling(None, "NERR8(max_rel={max_rel})@{k}"),
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
