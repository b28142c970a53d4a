"""Hits@k, the relevant rows within the first k positions, shared by precision and recall.

Ties: under ties="average", a tie block with r relevant rows out of n puts each of its positions on a relevant
row with probability r/n, so it adds r/n x (its positions within k).  Without a cut-off every row counts
whatever the order: the tie blocks need nothing of their own.
"""

from __future__ import annotations

import polars as pl

from ._base import BLOCK_RELEVANT, BLOCK_SIZE, POSITION, RELEVANT, Context, Term, term_name, within


def hits_column(cutoff: int | None) -> str:
    return term_name("hits", cutoff)


def within_block(cutoff: int | None) -> pl.Expr:
    """Per tie block: its positions within k (also read by average precision)."""
    return within(POSITION, cutoff).sum().alias(term_name("block_within", cutoff))


def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
    if cutoff is None:  # every row is within the whole list: no position read (none computed if no other term reads it)
        return {hits_column(cutoff): Term(pl.col(RELEVANT).cast(pl.Float64), None, judged_rows=True, whole=True)}
    row = (pl.col(RELEVANT) & within(context.position, cutoff)).cast(pl.Float64)
    n = pl.col(BLOCK_SIZE).cast(pl.Float64)
    positions_within = pl.col(term_name("block_within", cutoff)).cast(pl.Float64)
    block = pl.col(BLOCK_RELEVANT).cast(pl.Float64) / n * positions_within
    sums = (pl.col(RELEVANT).sum().alias(BLOCK_RELEVANT), within_block(cutoff))
    return {hits_column(cutoff): Term(row, block, block_sums=sums, judged_rows=True, whole=True)}
