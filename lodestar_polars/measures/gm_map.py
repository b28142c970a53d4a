"""gm_map: per query, average precision over the whole list (`average_precision`, as trec_eval's map);
over queries, trec_eval's geometric mean: exp of the (weighted) mean of log(max(AP, 1e-5)), so that a query
with AP = 0 counts as 1e-5 (trec_eval's MIN_GEO_MEAN).  A query with R = 0 scores `no_relevant` (null: left
out of the summary).

Ties: per query as average precision: under ties="average" the exact expectation of AP (the geometric mean
is then taken of the expected APs, not the expectation of the geometric mean).
"""

from __future__ import annotations

import polars as pl

from . import average_precision, recall
from ._base import NO_SPELLING, Context, Definition, Quantity, Term, TrecEvalForm


def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
    return average_precision.terms(context, None)


def value(context: Context, cutoff: int | None) -> pl.Expr:
    return average_precision.value(context, None)


MEASURE = Definition(
    name="gm_map",
    oracle="trec_eval binary; pytrec_eval",
    method=None,
    aliases=("gmap",),
    trec_eval_forms=(TrecEvalForm("gm_map", printed="summary"),),
    ir_measures=NO_SPELLING,
    ranx=NO_SPELLING,
    family="threshold",
    needs=frozenset({Quantity.RELEVANT_COUNT, Quantity.RELEVANT_BEFORE}),
    terms=terms,
    value=value,
    running=average_precision.running,
    bounds=(0.0, 1.0),
    no_relevant=recall.NO_RELEVANT,
    summary="geometric",
    parameter="none",
)
