"""The unjudged rows within the first k positions, shared by unj and judged.

A row is unjudged when judgments (qrels=) give it no level, or a negative one (trec_eval's unj: a document
judged -1 is in the pool but unjudged); without judgments every row is judged.

Ties: under ties="average", a tie block with u unjudged rows out of n puts each of its positions on an
unjudged row with probability u/n, so it adds u/n x (its positions within k), the exact expectation.  Under
the tie bounds, the least or the largest count over the orders of the tied rows, per tie block in closed form:
a block at positions s+1..s+n with w = clip(k - s, 0, n) of them within k holds at most min(u, w) and at
least max(0, w - (n - u)) unjudged rows there (`Quantity.TIE_BLOCKS`).  Without a cut-off every row counts
whatever the order.
"""

from __future__ import annotations

from typing import Literal

import polars as pl

from . import _hits
from ._base import (
    BLOCK_SIZE,
    BLOCK_START,
    BLOCK_UNJUDGED,
    Context,
    Term,
    term_name,
    unjudged,
    within,
)

# the extreme a measure takes under the tie bounds: the most unjudged rows within k, or the fewest
Extreme = Literal["most", "fewest"]


def unjudged_column(context: Context, cutoff: int | None, extreme: Extreme) -> str:
    """The per-query count's column; under the tie bounds the most and the fewest are two columns."""
    bounded = context.ties in ("optimistic", "pessimistic") and cutoff is not None
    return term_name(f"unjudged_{extreme}" if bounded else "unjudged", cutoff)


def terms(context: Context, cutoff: int | None, extreme: Extreme) -> dict[str, Term]:
    """The unjudged rows within k: in the measure's own order, or at `extreme` over the orders of tied rows
    under the tie bounds."""
    row_unjudged = unjudged(context.judged)
    column = unjudged_column(context, cutoff, extreme)
    if cutoff is None:
        return {column: Term(row_unjudged.cast(pl.Float64), None)}
    if context.ties in ("optimistic", "pessimistic"):
        return {column: Term(_bound_per_block(context, cutoff, extreme), None)}
    row = (row_unjudged & within(context.position, cutoff)).cast(pl.Float64)
    n = pl.col(BLOCK_SIZE).cast(pl.Float64)
    positions_within = pl.col(term_name("block_within", cutoff)).cast(pl.Float64)
    block = pl.col(BLOCK_UNJUDGED).cast(pl.Float64) / n * positions_within
    sums = (row_unjudged.sum().alias(BLOCK_UNJUDGED), _hits.within_block(cutoff))
    return {column: Term(row, block, block_sums=sums)}


def _bound_per_block(context: Context, cutoff: int, extreme: Extreme) -> pl.Expr:
    """The block's extreme count, carried by its first row (the others add 0)."""
    start, size = pl.col(BLOCK_START).cast(pl.Float64), pl.col(BLOCK_SIZE).cast(pl.Float64)
    block_unjudged = pl.col(BLOCK_UNJUDGED).cast(pl.Float64)
    positions_within = (pl.lit(float(cutoff)) - start).clip(0.0, None)
    positions_within = pl.min_horizontal(positions_within, size)
    if extreme == "most":
        count = pl.min_horizontal(block_unjudged, positions_within)
    else:
        count = (positions_within - (size - block_unjudged)).clip(0.0, None)
    first = pl.col(context.position).cast(pl.Float64) == start + 1.0
    return pl.when(first).then(count).otherwise(0.0)
