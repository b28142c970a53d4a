"""relative_P@k (trec_eval's relative_P_k): the relevant rows within the first k positions (`_hits`) divided by
min(k, R), the most a list could hold there; R is the query's relevant rows (with judgments: its relevant
judged documents, retrieved or not).  Precision up to R, recall past it; without a cut-off (k past the list),
recall.  A query with R = 0 scores `no_relevant` (trec_eval: 0).

Ties: under ties="average", the exact expectation, E[hits@k] / min(k, R), with E[hits@k] as `_hits` takes it.
"""

from __future__ import annotations

import polars as pl

from . import _hits, recall
from ._base import NO_SPELLING, Context, Definition, Quantity, TrecEvalForm, cut_at
from ._trec_parameters import TREC_CUTOFFS


def value(context: Context, cutoff: int | None) -> pl.Expr:
    c = cut_at(cutoff)
    hits = pl.col(_hits.hits_column(c))
    relevant = context.relevant_total
    most = relevant if c is None else pl.min_horizontal(relevant, pl.lit(float(c)))
    return pl.when(relevant == 0).then(context.no_relevant_value).otherwise(hits / most)


MEASURE = Definition(
    name="relative_p",
    oracle="trec_eval binary; every tied order enumerated",
    method=None,
    aliases=("relative_precision",),
    trec_eval_forms=(TrecEvalForm("relative_P", TREC_CUTOFFS),),
    ir_measures=NO_SPELLING,
    ranx=NO_SPELLING,
    family="threshold",
    needs=frozenset({Quantity.RELEVANT_COUNT}),
    terms=_hits.terms,
    value=value,
    bounds=(0.0, 1.0),
    no_relevant=recall.NO_RELEVANT,
)
