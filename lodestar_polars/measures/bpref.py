"""bpref (Buckley & Voorhees, SIGIR 2004, as trec_eval computes it): over the query's relevant rows, 1 -
min(n, R) / min(N, R), n being the judged non-relevant rows ranked above the row (1 when n = 0), summed and
divided by R.  R is the query's relevant total and N its judged non-relevant total (with judgments: its judged
documents with a level above the threshold, and with a level from 0 to the threshold, retrieved or not; a
retrieved document that is unjudged, or judged at a negative level, counts for nothing).  Without judgments
every row is judged.  A query with R = 0 scores `no_relevant`.

Ties: under ties="average", the exact expectation over the orders of each tie block.  A relevant row of a block
holding b judged non-relevant rows, with c judged non-relevant rows ranked above the block, has c + X of them
above it, X the block's non-relevant rows ranked before it: in a random order of the block its place among
those b rows and itself is uniform, so X is uniform on 0..b, whatever the block's other rows.  With the cap
min(v, R) summed as T(k) = sum_{v=0..k} min(v, R) = m(m+1)/2 + (k - m) R (m = min(k, R); T(-1) = 0), each of
the block's r relevant rows adds 1 - (T(c + b) - T(c - 1)) / ((b + 1) min(N, R)).  The bounds order a tie
block relevant rows first (optimistic) or last (pessimistic).
"""

from __future__ import annotations

import polars as pl

from . import recall
from ._base import (
    BLOCK_BEFORE,
    BLOCK_RELEVANT,
    JUDGED_BEFORE,
    NO_SPELLING,
    RELEVANT,
    RELEVANT_BEFORE,
    ROW_NONRELEVANT_TOTAL,
    ROW_RELEVANT_TOTAL,
    Context,
    Definition,
    Quantity,
    Spelling,
    Term,
    TrecEvalForm,
    term_name,
    unjudged,
)

PREFERENCES = term_name("bpref", None)
BLOCK_NONRELEVANT = term_name("block_judged_nonrelevant", None)
BLOCK_JUDGED_BEFORE = term_name("block_judged_before", None)
BLOCK_RELEVANT_TOTAL = term_name("block_relevant_total", None)
BLOCK_NONRELEVANT_TOTAL = term_name("block_nonrelevant_total", None)


def _capped_prefix(last: pl.Expr, relevant_total: pl.Expr) -> pl.Expr:
    """T(k) = sum over v = 0..k of min(v, R), for k >= -1 (T(-1) = 0)."""
    uncapped = pl.min_horizontal(last, relevant_total)
    return uncapped * (uncapped + 1.0) / 2.0 + (last - uncapped) * relevant_total


def _block(context: Context) -> tuple[pl.Expr, tuple[pl.Expr, ...]]:
    """The expected sum of a tie block's relevant rows' terms, and the block sums it reads."""
    sums = (
        pl.col(RELEVANT).sum().alias(BLOCK_RELEVANT),
        (~unjudged(context.judged) & ~pl.col(RELEVANT)).sum().alias(BLOCK_NONRELEVANT),
        pl.col(RELEVANT_BEFORE).min().alias(BLOCK_BEFORE),  # its first relevant row's
        pl.col(JUDGED_BEFORE).min().alias(BLOCK_JUDGED_BEFORE),  # its first judged row's
        pl.col(ROW_RELEVANT_TOTAL).max().alias(BLOCK_RELEVANT_TOTAL),
        pl.col(ROW_NONRELEVANT_TOTAL).max().alias(BLOCK_NONRELEVANT_TOTAL),
    )
    relevant = pl.col(BLOCK_RELEVANT).cast(pl.Float64)
    nonrelevant = pl.col(BLOCK_NONRELEVANT).cast(pl.Float64)
    # the judged rows above a block holding a relevant row are relevant or judged non-relevant
    above = (pl.col(BLOCK_JUDGED_BEFORE) - pl.col(BLOCK_BEFORE)).cast(pl.Float64)
    relevant_total, nonrelevant_total = pl.col(BLOCK_RELEVANT_TOTAL), pl.col(BLOCK_NONRELEVANT_TOTAL)
    capped = _capped_prefix(above + nonrelevant, relevant_total) - _capped_prefix(above - 1.0, relevant_total)
    scale = pl.min_horizontal(nonrelevant_total, relevant_total)
    # min(N, R) = 0 with a relevant row (R > 0) means N = 0: no non-relevant row anywhere, every term 1
    lost = pl.when(scale > 0).then(capped / ((nonrelevant + 1.0) * scale)).otherwise(0.0)
    return pl.when(relevant > 0).then(relevant * (1.0 - lost)).otherwise(0.0), sums


def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
    # a relevant row's judged rows above it are relevant or judged non-relevant
    nonrelevant_above = (pl.col(JUDGED_BEFORE) - pl.col(RELEVANT_BEFORE)).cast(pl.Float64)
    relevant_total, nonrelevant_total = pl.col(ROW_RELEVANT_TOTAL), pl.col(ROW_NONRELEVANT_TOTAL)
    # n > 0 implies N >= n > 0, and the row being relevant, R > 0
    kept = 1.0 - pl.min_horizontal(nonrelevant_above, relevant_total) / pl.min_horizontal(
        nonrelevant_total, relevant_total
    )
    preference = pl.when(nonrelevant_above > 0).then(kept).otherwise(1.0)
    row = pl.when(pl.col(RELEVANT)).then(preference).otherwise(0.0)
    block, sums = _block(context)
    return {PREFERENCES: Term(row, block, block_sums=sums, judged_rows=True)}


def value(context: Context, cutoff: int | None) -> pl.Expr:
    return context.per_relevant(pl.col(PREFERENCES))


MEASURE = Definition(
    name="bpref",
    oracle="trec_eval binary; pytrec_eval; every tied order enumerated",
    method=None,
    aliases=(),
    trec_eval_forms=(TrecEvalForm("bpref"),),
    ir_measures=Spelling("Bpref", None),
    # ranx's "bpref" differed from trec_eval's on the registry test's tool frame (not investigated further)
    ranx=NO_SPELLING,
    family="threshold",
    needs=frozenset({Quantity.RELEVANT_COUNT, Quantity.QUERY_TOTALS, Quantity.RELEVANT_BEFORE, Quantity.JUDGED_BEFORE}),
    terms=terms,
    value=value,
    bounds=(0.0, 1.0),
    no_relevant=recall.NO_RELEVANT,
    parameter="none",
)
