"""DCG@k: sum over positions p <= k of gain(p) / log_b(p + 1) (Järvelin & Kekäläinen, 2002), with the gain
mapping and log base of the call.  Gains may be negative (a mapping's, or a negative label's under linear
gains: scikit-learn's dcg_score takes negative y_true); the DCG then has no lower bound.

Ties: under ties="average", the exact expectation over the orders of each tie block, as scikit-learn's
dcg_score: a block covering positions s+1..s+n adds (its mean gain) x (its summed discounts within k),
because every document of the block is equally likely at each of its positions.
"""

from __future__ import annotations

import polars as pl

from .._exact_sum import sum_parts
from ._base import (
    BLOCK_GAIN,
    BLOCK_SIZE,
    DISCOUNT,
    GAIN,
    NO_SPELLING,
    POSITION,
    Context,
    Definition,
    Quantity,
    Spelling,
    Term,
    TrecEvalForm,
    cut,
    cut_at,
    term_name,
)


def dcg_column(cutoff: int | None) -> str:
    """The per-query DCG@k sum (shared with ndcg)."""
    return term_name("dcg", cutoff)


def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
    discount = cut(pl.col(DISCOUNT), POSITION, cutoff)
    block_discount = term_name("block_discount", cutoff)
    n = pl.col(BLOCK_SIZE).cast(pl.Float64)
    # scikit-learn's tie averaging: the block's mean gain times the block's summed discount
    block = pl.col(BLOCK_GAIN) / n * pl.col(block_discount)
    sums = (
        *sum_parts(pl.col(GAIN), BLOCK_GAIN, context.exact_sums),
        *sum_parts(discount, block_discount, context.exact_sums),
    )
    return {dcg_column(cutoff): Term(pl.col(GAIN) * discount, block, block_sums=sums, judged_rows=True)}


def value(context: Context, cutoff: int | None) -> pl.Expr:
    return pl.col(dcg_column(cut_at(cutoff)))


MEASURE = Definition(
    name="dcg",
    oracle="scikit-learn `dcg_score`; trec_eval binary (`dcg`); every tied order enumerated",
    method="dcg",
    aliases=(),
    trec_eval_forms=(TrecEvalForm("dcg", gains=True),),
    ir_measures=NO_SPELLING,
    ranx=Spelling("dcg", "dcg@{k}"),
    family="gain",
    needs=frozenset({Quantity.DISCOUNT}),
    terms=terms,
    value=value,
    bounds=(0.0, float("inf")),
    negative_gain_bounds=(-float("inf"), float("inf")),
    scaled_by_log_base=True,
    reads_within_cutoff=True,
)
