"""Rndcg (trec_eval's Rndcg): NDCG averaged at the R-level points, the last position b of each positive gain
value in the ideal order (the query's positive gains sorted descending; with judgments those of its judged
documents, retrieved or not): the mean over them of DCG(1..b) / ideal DCG(1..b), and, when the list is at
least two rows longer than the positive gains (trec_eval's implied last level), of DCG of the whole list /
the whole ideal DCG.  A query with R = 0 (no relevant document above the threshold) or without positive gain
scores `no_relevant` (trec_eval: 0; 0 / 0 for relevant documents of gain 0 only).

Negative gains (trec_eval's `-m Rndcg.1=3,2=-1`): the DCG sums them where they are ranked, the ideal and its
R-level points take the positive gains only (trec_eval's ideal stops at the first gain <= 0); each averaged
ratio stays at or below 1, and Rndcg has no lower bound.

Ties: DCG(1..b) summed over the points b is linear in the gains at the positions: a row at position p weighs
its discount times the sum of 1 / ideal DCG(1..b) over the points b >= p, so under ties="average" the exact
expectation as `dcg` takes it, a tie block adding its mean gain times its summed weights.  Those weights
decrease with the position, so the bounds (a tie block most / least gainful first) are its greatest / least
value over the tied orders with any real gains.
"""

from __future__ import annotations

import polars as pl

from .._exact_sum import sum_parts
from . import dcg, recall
from ._base import (
    BLOCK_GAIN,
    BLOCK_SIZE,
    BOUNDARIES,
    BOUNDARY_WEIGHT_AT,
    DISCOUNT,
    GAIN,
    NO_SPELLING,
    POSITIVE_GAINS,
    ROWS,
    Context,
    Definition,
    NoRelevant,
    Quantity,
    Term,
    TrecEvalForm,
    ideal_dcg,
    term_name,
)

AT_POINTS = term_name("rndcg_points", None)
BLOCK_WEIGHTS = term_name("block_rndcg_weights", None)


def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
    weight = pl.col(DISCOUNT) * pl.col(BOUNDARY_WEIGHT_AT)
    block = pl.col(BLOCK_GAIN) / pl.col(BLOCK_SIZE).cast(pl.Float64) * pl.col(BLOCK_WEIGHTS)
    sums = (
        *sum_parts(pl.col(GAIN), BLOCK_GAIN, context.exact_sums),
        *sum_parts(weight, BLOCK_WEIGHTS, context.exact_sums),
    )
    return {
        AT_POINTS: Term(pl.col(GAIN) * weight, block, block_sums=sums, judged_rows=True),
        **dcg.terms(context, None),
    }


def value(context: Context, cutoff: int | None) -> pl.Expr:
    implied = pl.col(ROWS).cast(pl.Float64) >= pl.col(POSITIVE_GAINS) + 2.0
    whole = pl.col(dcg.dcg_column(None)) / pl.col(ideal_dcg(None))
    total = pl.col(AT_POINTS) + pl.when(implied).then(whole).otherwise(0.0)
    points = pl.col(BOUNDARIES) + implied.cast(pl.Float64)
    return pl.when(_no_relevant(context, cutoff)).then(context.no_relevant_value).otherwise(total / points)


def _no_relevant(context: Context, cutoff: int | None) -> pl.Expr:
    """R = 0, or no positive gain: no R level and an ideal DCG of 0 (trec_eval divides 0 by 0 there)."""
    return (context.relevant_total == 0) | (pl.col(BOUNDARIES) == 0)


def _reason(context: Context) -> str:
    return f"{recall.no_relevant_reason(context)} or no positive gain"


MEASURE = Definition(
    name="rndcg",
    oracle="trec_eval binary; pytrec_eval; every tied order enumerated",
    method=None,
    aliases=(),
    trec_eval_forms=(TrecEvalForm("Rndcg", gains=True),),
    ir_measures=NO_SPELLING,
    ranx=NO_SPELLING,
    family="gain",
    needs=frozenset(
        {Quantity.DISCOUNT, Quantity.IDEAL_DCG, Quantity.IDEAL_PREFIXES, Quantity.RELEVANT, Quantity.RELEVANT_COUNT}
    ),
    terms=terms,
    value=value,
    bounds=(0.0, 1.0),
    negative_gain_bounds=(-float("inf"), 1.0),
    no_relevant=NoRelevant(_no_relevant, _reason),
    parameter="none",
)
