"""set_recall (trec_eval's set_recall, ir_measures' SetR): h / R (`_set_counts`).  A query with R = 0 scores
`no_relevant` (trec_eval: 0).  Equal to R without a cut-off.

Ties: ignores the order of the rows; every tie mode gives the same value.
"""

from __future__ import annotations

import polars as pl

from . import _set_counts, recall
from ._base import NO_SPELLING, Context, Definition, Quantity, Spelling, TrecEvalForm


def value(context: Context, cutoff: int | None) -> pl.Expr:
    return context.per_relevant(_set_counts.hits())


MEASURE = Definition(
    name="set_recall",
    oracle="trec_eval binary; ir_measures",
    method=None,
    aliases=("set_r",),
    trec_eval_forms=(TrecEvalForm("set_recall"),),
    ir_measures=Spelling("SetR", None),
    ranx=NO_SPELLING,
    family="threshold",
    needs=frozenset({Quantity.RELEVANT_COUNT}),
    terms=_set_counts.terms,
    value=value,
    bounds=(0.0, 1.0),
    no_relevant=recall.NO_RELEVANT,
    parameter="none",
)
