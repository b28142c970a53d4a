"""The rows outside the judgments within the first k positions, shared by unj and judged, in two senses:

- "unjudged" (trec_eval's unj): judgments (qrels=) give the row no level, or a negative one (a document judged
  -1 is in the pool but unjudged);
- "unpooled" (ir_measures' Judged): the row's document is not in the judgments at any level (a document judged
  -1 or -2 counts as judged).

Without judgments every row is judged in both senses.

Ties: under ties="average", a tie block with u such rows out of n puts each of its positions on one with
probability u/n, so it adds u/n x (its positions within k), the exact expectation.  Under the tie bounds, the
least or the largest count over the orders of the tied rows, per tie block in closed form: a block at positions
s+1..s+n with w = clip(k - s, 0, n) of them within k holds at most min(u, w) and at least max(0, w - (n - u))
such rows there (`Quantity.TIE_BLOCKS` gives s and n, and u for "unjudged"; a block sum gives u for
"unpooled").  Without a cut-off every row counts whatever the order.
"""

from __future__ import annotations

from typing import Literal

import polars as pl

from . import _hits
from ._base import (
    BLOCK_SIZE,
    BLOCK_START,
    BLOCK_UNJUDGED,
    POOLED,
    PREFIX,
    Context,
    Running,
    Term,
    term_name,
    unjudged,
    within,
)

# the extreme a measure takes under the tie bounds: the most rows outside the judgments within k, or the fewest
Extreme = Literal["most", "fewest"]
# which rows are outside the judgments: trec_eval's unjudged, or ir_measures' unpooled (see the module docstring)
Kind = Literal["unjudged", "unpooled"]

# per tie block: its unpooled rows (ties="average": a block sum; tie bounds: a block window, `running`)
BLOCK_UNPOOLED = f"{PREFIX}block_unpooled"


def outside(context: Context, kind: Kind) -> pl.Expr:
    """Per row: outside the judgments in the sense of `kind` (a column: false on every row without judgments)."""
    if kind == "unpooled" and context.judged:
        return ~pl.col(POOLED)
    return unjudged(context.judged)


def _block_count(kind: Kind) -> str:
    return BLOCK_UNJUDGED if kind == "unjudged" else BLOCK_UNPOOLED


def count_column(context: Context, cutoff: int | None, extreme: Extreme, kind: Kind) -> str:
    """The per-query count's column; under the tie bounds the most and the fewest are two columns."""
    bounded = context.ties in ("optimistic", "pessimistic") and cutoff is not None
    return term_name(f"{kind}_{extreme}" if bounded else kind, cutoff)


def terms(context: Context, cutoff: int | None, extreme: Extreme, kind: Kind) -> dict[str, Term]:
    """The rows outside the judgments within k: in the measure's own order, or at `extreme` over the orders of
    tied rows under the tie bounds."""
    row_outside = outside(context, kind)
    column = count_column(context, cutoff, extreme, kind)
    if cutoff is None:
        return {column: Term(row_outside.cast(pl.Float64), None, whole=True)}
    if context.ties in ("optimistic", "pessimistic"):
        return {column: Term(_bound_per_block(context, cutoff, extreme, kind), None, whole=True)}
    row = (row_outside & within(context.position, cutoff)).cast(pl.Float64)
    n = pl.col(BLOCK_SIZE).cast(pl.Float64)
    positions_within = pl.col(term_name("block_within", cutoff)).cast(pl.Float64)
    block = pl.col(_block_count(kind)).cast(pl.Float64) / n * positions_within
    sums = (row_outside.sum().alias(_block_count(kind)), _hits.within_block(cutoff))
    return {column: Term(row, block, block_sums=sums, whole=True)}


def running(context: Context, kind: Kind) -> list[Running]:
    """Under the tie bounds, the unpooled rows of each row's tie block (the plan's `Quantity.TIE_BLOCKS` gives
    the unjudged ones)."""
    if kind == "unjudged" or context.ties not in ("optimistic", "pessimistic"):
        return []
    return [Running(BLOCK_UNPOOLED, outside(context, kind).cast(pl.Float64), "block_sum")]


def _bound_per_block(context: Context, cutoff: int, extreme: Extreme, kind: Kind) -> pl.Expr:
    """The block's extreme count, carried by its first row (the others add 0)."""
    start, size = pl.col(BLOCK_START).cast(pl.Float64), pl.col(BLOCK_SIZE).cast(pl.Float64)
    block_outside = pl.col(_block_count(kind)).cast(pl.Float64)
    positions_within = (pl.lit(float(cutoff)) - start).clip(0.0, None)
    positions_within = pl.min_horizontal(positions_within, size)
    if extreme == "most":
        count = pl.min_horizontal(block_outside, positions_within)
    else:
        count = (positions_within - (size - block_outside)).clip(0.0, None)
    first = pl.col(context.position).cast(pl.Float64) == start + 1.0
    return pl.when(first).then(count).otherwise(0.0)
