"""F1@k (ranx's f1@k): the harmonic mean of P@k and R@k, 2 P R / (P + R) with P = hits@k / k (k past the list
too, as precision) and R = hits@k / R (`_hits`); without a cut-off, P over the query's rows (then equal to
set_f).  0 when hits@k = 0; a query with R = 0 scores `no_relevant` (ranx: 0).

Ties: 2 P R / (P + R) = 2 hits@k / (k + R), linear in hits@k (k and R do not depend on the order), so under
ties="average" the exact expectation is this function of E[hits@k], as `_hits` takes it.
"""

from __future__ import annotations

import math

import polars as pl

from . import _hits, recall
from ._base import NO_SPELLING, ROWS, Context, Definition, Quantity, Spelling, cut_at


def _as_float(value: int) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf


def value(context: Context, cutoff: int | None) -> pl.Expr:
    hits, relevant = pl.col(_hits.hits_column(cut_at(cutoff))), context.relevant_total
    length = pl.col(ROWS).cast(pl.Float64) if cutoff is None else pl.lit(_as_float(cutoff))
    f1 = 2.0 * hits / (length + relevant)
    return pl.when(relevant == 0).then(context.no_relevant_value).when(hits == 0).then(0.0).otherwise(f1)


MEASURE = Definition(
    name="f1",
    oracle="ranx; every tied order enumerated",
    method=None,
    aliases=(),
    ir_measures=NO_SPELLING,
    ranx=Spelling("f1", "f1@{k}"),
    family="threshold",
    needs=frozenset({Quantity.RELEVANT_COUNT}),
    terms=_hits.terms,
    value=value,
    bounds=(0.0, 1.0),
    no_relevant=recall.NO_RELEVANT,
)
