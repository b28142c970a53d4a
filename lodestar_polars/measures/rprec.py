"""Rprec (R-precision): the relevant rows within the first R positions divided by R, R being the query's
relevant rows (with judgments: its relevant judged documents, retrieved or not): P@R, also when the list is
shorter than R (trec_eval's Rprec).  A query with R = 0 scores `no_relevant`.

Ties: linear in per-position weights, so under ties="average" the exact expectation as precision takes it: a
tie block with r relevant rows out of n adds r/n x (its positions within the first R), with R per query.
"""

from __future__ import annotations

import polars as pl

from . import recall
from ._base import (
    BLOCK_RELEVANT,
    BLOCK_SIZE,
    POSITION,
    RELEVANT,
    ROW_RELEVANT_TOTAL,
    Context,
    Definition,
    Quantity,
    Spelling,
    Term,
    TrecEvalForm,
    term_name,
)

HITS = term_name("hits_within_r", None)
BLOCK_WITHIN_R = term_name("block_within_r", None)


def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
    within_r = pl.col(context.position) <= pl.col(ROW_RELEVANT_TOTAL)
    row = (pl.col(RELEVANT) & within_r).cast(pl.Float64)
    positions_within = pl.col(BLOCK_WITHIN_R).cast(pl.Float64)
    block = pl.col(BLOCK_RELEVANT).cast(pl.Float64) / pl.col(BLOCK_SIZE).cast(pl.Float64) * positions_within
    sums = (
        pl.col(RELEVANT).sum().alias(BLOCK_RELEVANT),
        (pl.col(POSITION) <= pl.col(ROW_RELEVANT_TOTAL)).sum().alias(BLOCK_WITHIN_R),
    )
    return {HITS: Term(row, block, block_sums=sums, judged_rows=True, whole=True)}


def value(context: Context, cutoff: int | None) -> pl.Expr:
    return context.per_relevant(pl.col(HITS))


MEASURE = Definition(
    name="rprec",
    oracle="trec_eval binary; pytrec_eval; every tied order enumerated",
    method=None,
    aliases=("r-precision", "r_precision"),
    trec_eval_forms=(TrecEvalForm("Rprec"),),
    ir_measures=Spelling("Rprec", None),
    ranx=Spelling("r-precision", None),
    family="threshold",
    needs=frozenset({Quantity.RELEVANT_COUNT, Quantity.QUERY_TOTALS}),
    terms=terms,
    value=value,
    bounds=(0.0, 1.0),
    no_relevant=recall.NO_RELEVANT,
    parameter="none",
)
