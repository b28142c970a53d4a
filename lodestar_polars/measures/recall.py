"""R@k: the relevant rows within the first k positions (`_hits`) divided by R, the query's relevant rows (with
judgments: its relevant judged documents, retrieved or not, as trec_eval's recall_k).  A query with R = 0
scores `no_relevant`.

Ties: under ties="average", the exact expectation, E[hits@k] / R, with E[hits@k] as `_hits` takes it.
"""

from __future__ import annotations

import polars as pl

from . import _hits
from ._base import Context, Definition, NoRelevant, Quantity, Spelling, TrecEvalForm, cut_at
from ._trec_parameters import TREC_CUTOFFS


def value(context: Context, cutoff: int | None) -> pl.Expr:
    return context.per_relevant(pl.col(_hits.hits_column(cut_at(cutoff))))


def no_relevant_condition(context: Context, cutoff: int | None) -> pl.Expr:
    """R = 0 (shared with average precision)."""
    return context.relevant_total == 0


def no_relevant_reason(context: Context) -> str:
    return f"no document with relevance above {context.threshold:g}"


# the measures divided by R (recall, average precision, R-precision, bpref, iprec)
NO_RELEVANT = NoRelevant(no_relevant_condition, no_relevant_reason)


MEASURE = Definition(
    name="r",
    oracle="trec_eval binary (`recall`); ranx; every tied order enumerated",
    method="recall",
    aliases=("recall",),
    trec_eval_forms=(TrecEvalForm("recall", TREC_CUTOFFS),),
    ir_measures=Spelling(None, "R@{k}"),
    ranx=Spelling("recall", "recall@{k}"),
    family="threshold",
    needs=frozenset({Quantity.RELEVANT_COUNT}),
    terms=_hits.terms,
    value=value,
    bounds=(0.0, 1.0),
    no_relevant=NO_RELEVANT,
)
