"""AP@k: the sum over relevant rows at positions p <= k of (relevant rows at positions <= p) / p, divided by R,
the query's relevant rows (with judgments: its relevant judged documents, retrieved or not, as trec_eval's
map and map_cut_k).  A query with R = 0 scores `no_relevant`.

Ties: under ties="average", the exact expectation over the orders of each tie block.  A block covering
positions s+1..s+n with r relevant rows and C relevant rows ranked above it gives a relevant document at block
offset i E[relevant at or above it] = C + 1 + (i-1)(r-1)/(n-1), so the block adds
sum_{p in block, p<=k} [r/n (C+1) + (p-s-1) r(r-1)/(n(n-1))] / p
= r/n (C+1) D + r(r-1)/(n(n-1)) (M - (s+1) D), with D = sum 1/p and M = count, over p <= k.

In the deterministic tie modes (one position per row), the sum is trec_eval's own: its terms added one position
after another (a running sum in position order, `Running`), its total at k the greatest running value within k
(the terms are not negative).  So the value has trec_eval's bits whatever the order of the input rows, with or
without `exact_sums` (a correctly rounded sum, 0.41875000000000001 for map's 1.675 / 4, prints 0.4188 where
trec_eval's sum in rank order prints 0.4187).
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
    Running,
    Spelling,
    Term,
    TrecEvalForm,
    cut_at,
    term_name,
    within,
)
from ._trec_parameters import TREC_CUTOFFS


def _ap_column(cutoff: int | None) -> str:
    return term_name("ap", cutoff)


RUNNING = term_name("ap_running", None)


def _in_rank_order(context: Context) -> bool:
    """One position per row, and the running windows' order (`POSITION`) is the one AP reads."""
    return not context.averaged and context.position == POSITION


def _precision_at_relevant(context: Context) -> pl.Expr:
    """A relevant row at position p with c relevant rows above it: (c + 1) / p; 0 on the other rows."""
    position = pl.col(context.position).cast(pl.Float64)
    per_row = pl.col(RELEVANT).cast(pl.Float64) * (pl.col(RELEVANT_BEFORE).cast(pl.Float64) + 1.0) / position
    return per_row.fill_null(0.0)


def running(context: Context) -> list[Running]:
    # a running sum of values 0 on every row but the relevant ones: the same over the judged rows alone
    return (
        [Running(RUNNING, _precision_at_relevant(context), "sum", judged_rows_suffice=True)]
        if _in_rank_order(context)
        else []
    )


def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
    if _in_rank_order(context):
        # the greatest running sum within k, as the least of its negation (null without a row within k)
        least = pl.when(within(context.position, cutoff)).then(-pl.col(RUNNING))
        return {_ap_column(cutoff): Term(least, None, least=True, judged_rows=True)}
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
    term = Term(per_row.fill_null(0.0), pl.when(r > 0).then(block).otherwise(0.0), block_sums=sums, judged_rows=True)
    return {_ap_column(cutoff): term}


def precision_sum(context: Context, cutoff: int | None) -> pl.Expr:
    """The per-query sum of precisions at the relevant rows within k (also read by yaap)."""
    total = pl.col(_ap_column(cut_at(cutoff)))
    # in rank order, the least of the negated running sum; no row within k: 0
    return (-total).fill_null(0.0) if _in_rank_order(context) else total


def value(context: Context, cutoff: int | None) -> pl.Expr:
    return context.per_relevant(precision_sum(context, cutoff))


MEASURE = Definition(
    name="ap",
    oracle="trec_eval binary (`map`, `map_cut`); ranx; every tied order enumerated",
    method="average_precision",
    aliases=("map", "average_precision"),
    trec_eval_forms=(
        TrecEvalForm("map"),
        TrecEvalForm("map_cut", TREC_CUTOFFS),
    ),
    ir_measures=Spelling("AP", "AP@{k}"),
    ranx=Spelling("map", "map@{k}"),
    family="threshold",
    needs=frozenset({Quantity.RELEVANT_COUNT, Quantity.RELEVANT_BEFORE}),
    terms=terms,
    value=value,
    bounds=(0.0, 1.0),
    no_relevant=recall.NO_RELEVANT,
    running=running,
)
