"""set_relative_P (trec_eval's set_relative_P, ir_measures' SetRelP): h / min(n, R), set precision relative
to the most a set of n rows could reach (`_set_counts`).  A query with R = 0 scores `no_relevant` (trec_eval:
0); a query with no row (and R > 0) scores 0.

Ties: ignores the order of the rows; every tie mode gives the same value.
"""

from __future__ import annotations

import polars as pl

from . import _set_counts, recall
from ._base import NO_SPELLING, Context, Definition, Quantity, Spelling, TrecEvalForm


def value(context: Context, cutoff: int | None) -> pl.Expr:
    n, relevant = _set_counts.rows(), context.relevant_total
    ratio = _set_counts.hits() / pl.min_horizontal(n, relevant)
    return pl.when(relevant == 0).then(context.no_relevant_value).when(n == 0).then(0.0).otherwise(ratio)


MEASURE = Definition(
    name="set_relative_p",
    oracle="trec_eval binary; ir_measures",
    method=None,
    aliases=("set_relative_precision",),
    trec_eval_forms=(TrecEvalForm("set_relative_P"),),
    ir_measures=Spelling("SetRelP", None),
    ranx=NO_SPELLING,
    family="threshold",
    needs=frozenset({Quantity.RELEVANT_COUNT}),
    terms=_set_counts.terms,
    value=value,
    bounds=(0.0, 1.0),
    no_relevant=recall.NO_RELEVANT,
    parameter="none",
)
