"""P@k: the relevant rows within the first k positions (`_hits`), divided by k, also past the end of the list
(trec_eval's P_k); without a cut-off, by the query's rows.  A query with no row scores 0.

Ties: under ties="average", the exact expectation, E[hits@k] / k, with E[hits@k] as `_hits` takes it.
"""

from __future__ import annotations

import math

import polars as pl

from . import _hits
from ._base import ROWS, Context, Definition, Spelling, TrecEvalForm, cut_at, exact_quotient
from ._trec_parameters import TREC_CUTOFFS


def _as_float(value: int) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf


def value(context: Context, cutoff: int | None) -> pl.Expr:
    hits = pl.col(_hits.hits_column(cut_at(cutoff)))
    if cutoff is None:
        length = pl.col(ROWS).cast(pl.Float64)
        return pl.when(length == 0).then(0.0).otherwise(hits / length)
    # P@k divides by k, past the list too (trec_eval); a k beyond Float64 makes it 0
    return exact_quotient(hits, _as_float(cutoff))


MEASURE = Definition(
    name="p",
    oracle="trec_eval binary (`P`); ranx; ir_measures; every tied order enumerated",
    method="precision",
    aliases=("precision",),
    trec_eval_forms=(TrecEvalForm("P", TREC_CUTOFFS),),
    ir_measures=Spelling(None, "P@{k}"),
    ranx=Spelling("precision", "precision@{k}"),
    family="threshold",
    needs=frozenset(),
    terms=_hits.terms,
    value=value,
    bounds=(0.0, 1.0),
)
