"""binG (trec_eval's binG, binary G): the sum over the relevant retrieved rows of 1 / log2(2 + the
non-relevant rows ranked above it), divided by R, the query's relevant total (with judgments: its relevant
judged documents, retrieved or not).  A query with R = 0 scores `no_relevant` (trec_eval: 0).  It has no
cut-off (trec_eval has none).

Ties: under ties="average", the exact expectation over the orders of each tie block.  In a block with r
relevant and m non-relevant rows, below N non-relevant rows ranked above it, each relevant row has j of the
block's non-relevant rows above it with probability 1 / (m + 1) for every j in 0..m, so the block adds
r / (m + 1) x the sum over j in 0..m of 1 / log2(2 + N + j): one sum over the block's first m + 1 positions.
"""

from __future__ import annotations

import math

import polars as pl

from .._exact_sum import sum_parts
from . import recall
from ._base import (
    BLOCK_RELEVANT,
    BLOCK_SIZE,
    NO_SPELLING,
    POSITION,
    RELEVANT,
    RELEVANT_BEFORE,
    Context,
    Definition,
    Quantity,
    Running,
    Term,
    TrecEvalForm,
    term_name,
)

SUM = term_name("bin_g", None)
BLOCK_DISCOUNTS = term_name("block_bin_g_discounts", None)
LOG_2 = math.log(2.0)


def discount(nonrelevant_above: pl.Expr) -> pl.Expr:
    """1 / log2(2 + the non-relevant rows above)."""
    return pl.lit(LOG_2) / (nonrelevant_above.cast(pl.Float64) + 2.0).log()


BLOCK_FIRST = term_name("bin_g_block_first", None)
BLOCK_NONRELEVANT = term_name("bin_g_block_nonrelevant", None)
BLOCK_RELEVANT_ABOVE = term_name("bin_g_block_relevant_above", None)


def running(context: Context) -> list[Running]:
    """With tie averaging, each row of a tie block: the block's first position, its non-relevant rows and the
    relevant rows above it."""
    if not context.averaged:
        return []
    return [
        Running(BLOCK_FIRST, pl.col(POSITION), "block_least"),
        Running(BLOCK_NONRELEVANT, (~pl.col(RELEVANT)).cast(pl.Int64), "block_sum"),
        Running(BLOCK_RELEVANT_ABOVE, pl.col(RELEVANT_BEFORE), "block_least"),
    ]


def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
    position = pl.col(context.position)
    row = pl.when(pl.col(RELEVANT)).then(discount(position - 1 - pl.col(RELEVANT_BEFORE))).otherwise(0.0)
    if not context.averaged:
        return {SUM: Term(row, None, judged_rows=True)}
    # in a block: offset t = 0..n-1 from its start; the non-relevant rows above it N = start - relevant above it
    offset = pl.col(POSITION) - pl.col(BLOCK_FIRST)
    nonrelevant_above = pl.col(BLOCK_FIRST) - 1 - pl.col(BLOCK_RELEVANT_ABOVE)
    first_offsets = offset <= pl.col(BLOCK_NONRELEVANT)
    discounts = pl.when(first_offsets).then(discount(nonrelevant_above + offset)).otherwise(0.0)
    sums = (pl.col(RELEVANT).sum().alias(BLOCK_RELEVANT), *sum_parts(discounts, BLOCK_DISCOUNTS, context.exact_sums))
    r = pl.col(BLOCK_RELEVANT).cast(pl.Float64)
    m = pl.col(BLOCK_SIZE).cast(pl.Float64) - r
    block = pl.when(r > 0).then(r / (m + 1.0) * pl.col(BLOCK_DISCOUNTS).fill_null(0.0)).otherwise(0.0)
    return {SUM: Term(row, block, block_sums=sums, judged_rows=True)}


def value(context: Context, cutoff: int | None) -> pl.Expr:
    return context.per_relevant(pl.col(SUM))


MEASURE = Definition(
    name="bin_g",
    oracle="trec_eval binary; pytrec_eval; every tied order enumerated",
    method=None,
    aliases=("bing",),
    trec_eval_forms=(TrecEvalForm("binG"),),
    ir_measures=NO_SPELLING,
    ranx=NO_SPELLING,
    family="threshold",
    needs=frozenset({Quantity.RELEVANT_COUNT, Quantity.RELEVANT_BEFORE}),
    terms=terms,
    value=value,
    bounds=(0.0, 1.0),
    no_relevant=recall.NO_RELEVANT,
    parameter="none",
    running=running,
)
