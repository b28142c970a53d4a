"""set_map (trec_eval's set_map, ir_measures' SetAP): h**2 / (n R), set precision times set recall: average
precision of an unranked set, each relevant retrieved row at the set's precision and each relevant row not
retrieved at 0 (`_set_counts`).  A query with R = 0 scores `no_relevant` (trec_eval: 0); a query with no row
(and R > 0) scores 0.

Ties: ignores the order of the rows; every tie mode gives the same value.
"""

from __future__ import annotations

import polars as pl

from . import _set_counts, recall
from ._base import NO_SPELLING, Context, Definition, Quantity, Spelling, TrecEvalForm


def value(context: Context, cutoff: int | None) -> pl.Expr:
    h, n, relevant = _set_counts.hits(), _set_counts.rows(), context.relevant_total
    ratio = (h * h) / (n * relevant)
    return pl.when(relevant == 0).then(context.no_relevant_value).when(n == 0).then(0.0).otherwise(ratio)


MEASURE = Definition(
    name="set_map",
    oracle="trec_eval binary; ir_measures",
    method=None,
    aliases=("set_ap",),
    trec_eval_forms=(TrecEvalForm("set_map"),),
    ir_measures=Spelling("SetAP", None),
    ranx=NO_SPELLING,
    family="threshold",
    needs=frozenset({Quantity.RELEVANT_COUNT}),
    terms=_set_counts.terms,
    value=value,
    bounds=(0.0, 1.0),
    no_relevant=recall.NO_RELEVANT,
    parameter="none",
)
