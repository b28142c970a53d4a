"""ideal_dcg@k (trec_eval's ideal_dcg): the DCG@k of the ideal order, the query's positive gains sorted
descending (with judgments: those of every judged document of the query, retrieved or not), with the gain
mapping and log base of the call: NDCG's denominator.  A gain <= 0 adds nothing (trec_eval's ideal stops at
the first gain <= 0), so it is never negative; a query without a positive gain scores 0.

Ties: it does not depend on the run's order, so every tie mode gives the same value (the expectation over
tied orders included).
"""

from __future__ import annotations

import polars as pl

from ._base import NO_SPELLING, Context, Definition, Quantity, Term, TrecEvalForm, cut_at, ideal_dcg


def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
    return {}


def value(context: Context, cutoff: int | None) -> pl.Expr:
    return pl.col(ideal_dcg(cut_at(cutoff)))


MEASURE = Definition(
    name="ideal_dcg",
    oracle="trec_eval binary; scikit-learn `dcg_score` of the ideal order",
    method=None,
    aliases=("idcg",),
    trec_eval_forms=(TrecEvalForm("ideal_dcg", gains=True),),
    ir_measures=NO_SPELLING,
    ranx=NO_SPELLING,
    family="gain",
    needs=frozenset({Quantity.IDEAL_DCG}),
    terms=terms,
    value=value,
    bounds=(0.0, float("inf")),
    scaled_by_log_base=True,
)
