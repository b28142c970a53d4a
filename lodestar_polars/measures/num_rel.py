"""num_rel: R, the query's relevant rows; with judgments, its judged documents with a level above the
threshold, retrieved or not (trec_eval's num_rel; a negative level is not counted).  Summary over queries:
the sum.

Ties: ignores the order of the rows; every tie mode gives the same count.
"""

from __future__ import annotations

import math

import polars as pl

from ._base import NO_SPELLING, Context, Definition, Quantity, Spelling, Term, TrecEvalForm


def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
    return {}  # the plan counts R per query (`Quantity.RELEVANT_COUNT`)


def value(context: Context, cutoff: int | None) -> pl.Expr:
    return context.relevant_total.cast(pl.Float64)


MEASURE = Definition(
    name="num_rel",
    oracle="trec_eval binary",
    method=None,
    aliases=(),
    trec_eval_forms=(TrecEvalForm("num_rel", printed="count"),),
    ir_measures=Spelling("NumRel", None),
    ranx=NO_SPELLING,
    family="threshold",
    needs=frozenset({Quantity.RELEVANT_COUNT}),
    terms=terms,
    value=value,
    bounds=(0.0, math.inf),
    summary="sum",
    parameter="none",
)
