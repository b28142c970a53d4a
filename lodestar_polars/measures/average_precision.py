"""AP@k: the sum over relevant rows at positions p <= k of (relevant rows at positions <= p) / p, divided by R,
the query's relevant rows (with judgments: its relevant judged documents, retrieved or not, as trec_eval's
map and map_cut_k).  A query with R = 0 scores `no_relevant`.

Ties: under ties="average", the exact expectation over the orders of each tie block.  A block covering
positions s+1..s+n with r relevant rows and C relevant rows ranked above it gives a relevant document at block
offset i E[relevant at or above it] = C + 1 + (i-1)(r-1)/(n-1), so the block adds
sum_{p in block, p<=k} [r/n (C+1) + (p-s-1) r(r-1)/(n(n-1))] / p
= r/n (C+1) D + r(r-1)/(n(n-1)) (M - (s+1) D), with D = sum 1/p and M = count, over p <= k.
"""

from __future__ import annotations

import polars as pl

from .._exact_sum import sum_parts
from . import _hits, recall
from ._base import (
    BLOCK_BEFORE,
    BLOCK_RELEVANT,
    BLOCK_SIZE,
    BLOCK_START,
    POSITION,
    RELEVANT,
    RELEVANT_BEFORE,
    Context,
    Definition,
    Quantity,
    Spelling,
    Term,
    cut_at,
    term_name,
    within,
)


def _ap_column(cutoff: int | None) -> str:
    return term_name("ap", cutoff)


def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
    relevant, position = pl.col(RELEVANT), pl.col(context.position).cast(pl.Float64)
    # a relevant row at position p with c relevant rows above it adds (c + 1) / p
    per_row = (relevant & within(context.position, cutoff)).cast(pl.Float64)
    per_row = per_row * (pl.col(RELEVANT_BEFORE).cast(pl.Float64) + 1.0) / position
    inverse = term_name("block_inverse", cutoff)
    sums = (
        pl.col(RELEVANT).sum().alias(BLOCK_RELEVANT),
        (pl.col(POSITION).min() - 1).cast(pl.Int64).alias(BLOCK_START),
        pl.col(RELEVANT_BEFORE).min().alias(BLOCK_BEFORE),  # its first relevant row's
        _hits.within_block(cutoff),
        *sum_parts(
            within(POSITION, cutoff).cast(pl.Float64) / pl.col(POSITION).cast(pl.Float64), inverse, context.exact_sums
        ),
    )
    r = pl.col(BLOCK_RELEVANT).cast(pl.Float64)
    n = pl.col(BLOCK_SIZE).cast(pl.Float64)
    before = pl.col(BLOCK_BEFORE).cast(pl.Float64)
    inverse_positions = pl.col(inverse)
    positions_within = pl.col(term_name("block_within", cutoff)).cast(pl.Float64)
    start = pl.col(BLOCK_START).cast(pl.Float64)
    pairs = pl.when(n > 1).then(r * (r - 1.0) / (n * (n - 1.0))).otherwise(0.0)
    block = r / n * (before + 1.0) * inverse_positions + pairs * (positions_within - (start + 1.0) * inverse_positions)
    term = Term(per_row.fill_null(0.0), pl.when(r > 0).then(block).otherwise(0.0), block_sums=sums)
    return {_ap_column(cutoff): term}


def value(context: Context, cutoff: int | None) -> pl.Expr:
    return context.per_relevant(pl.col(_ap_column(cut_at(cutoff))))


MEASURE = Definition(
    name="ap",
    oracle="trec_eval binary (`map`, `map_cut`); ranx; every tied order enumerated",
    method="average_precision",
    aliases=("map", "average_precision"),
    trec_eval=Spelling("map", "map_cut_{k}"),
    ir_measures=Spelling("AP", "AP@{k}"),
    ranx=Spelling("map", "map@{k}"),
    family="threshold",
    needs=frozenset({Quantity.RELEVANT_COUNT, Quantity.RELEVANT_BEFORE}),
    terms=terms,
    value=value,
    bounds=(0.0, 1.0),
    no_relevant=recall.NO_RELEVANT,
)
