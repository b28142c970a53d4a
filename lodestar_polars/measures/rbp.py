"""RBP@k, rank-biased precision (Moffat & Zobel, TOIS 2008): (1 - p) x the sum over positions i <= k of
p^(i-1) x g'(i), p being the persistence (option `p`, default 0.9 as in trec_eval; ir_measures' default is
0.8, so its spelling always carries p).  g' is the gain of the call brought into [0, 1] as trec_eval does:
when a gain of the query's levels lies outside [0, 1], g' = (g - low) / (high - low), low and high being the
least and greatest gain of the query's levels (without judgments: of its rows; with judgments: of its judged
documents, retrieved or not), each taken together with 0, trec_eval's gain of level 0; otherwise g' = g.  An
unjudged document has g' = 0.  With linear gains, graded judgments 0..L are so divided by L.  Without a
cut-off the whole list counts (trec_eval's rbp); a query with no row scores 0.

ir_measures' RBP (computed by trectools) sums the raw relevance without bringing it into [0, 1], and averages
the weights of tied documents: it equals this with judgments in [0, 1] and ties="average".

Ties: linear in the per-position weights p^(i-1), so under ties="average" the exact expectation as `dcg`
takes it: a tie block adds its mean g' times its summed weights (within k).
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from ._base import (
    BLOCK_GAIN,
    BLOCK_SIZE,
    GAIN,
    GAIN_HIGH,
    GAIN_LOW,
    NO_SPELLING,
    POSITION,
    RELEVANCE,
    Context,
    Definition,
    Option,
    Quantity,
    Spelling,
    Term,
    cut,
    cut_at,
    option_text,
    term_name,
)

DEFAULT_PERSISTENCE = 0.9


def refused_persistence(p: float) -> str | None:
    return None if 0.0 < p < 1.0 else "the persistence p lies strictly between 0 and 1"


def weight(p: float, cutoff: int | None) -> pl.Expr:
    """p^(position - 1), 0 past the cut-off."""
    return cut(pl.lit(p).pow(pl.col(POSITION).cast(pl.Float64) - 1.0), POSITION, cutoff)


def judged(context: Context) -> pl.Expr:
    """A row judged at a level >= 0 (without judgments: every row; a column, not a literal, so that a block's
    sum of it counts its rows)."""
    return pl.col(RELEVANCE).is_not_null() if context.judged else pl.col(POSITION) > 0


def _gain_column(p: float, cutoff: int | None) -> str:
    return term_name(f"rbp_gain_{option_text(p)}", cutoff)


def _judged_column(p: float, cutoff: int | None) -> str:
    return term_name(f"rbp_judged_{option_text(p)}", cutoff)


def terms_at(p: float, context: Context, cutoff: int | None) -> dict[str, Term]:
    weights = weight(p, cutoff)
    block_weights = term_name(f"block_rbp_weight_{option_text(p)}", cutoff)
    block_judged = term_name("block_judged", None)
    n = pl.col(BLOCK_SIZE).cast(pl.Float64)
    summed_weights = weights.sum().alias(block_weights)
    is_judged = judged(context)
    return {
        _gain_column(p, cutoff): Term(
            pl.col(GAIN) * weights,
            pl.col(BLOCK_GAIN) / n * pl.col(block_weights),
            block_sums=(pl.col(GAIN).sum().alias(BLOCK_GAIN), summed_weights),
        ),
        _judged_column(p, cutoff): Term(
            is_judged.cast(pl.Float64) * weights,
            pl.col(block_judged).cast(pl.Float64) / n * pl.col(block_weights),
            block_sums=(is_judged.sum().alias(block_judged), summed_weights),
        ),
    }


def value_at(p: float, context: Context, cutoff: int | None) -> pl.Expr:
    c = cut_at(cutoff)
    low, high = pl.col(GAIN_LOW), pl.col(GAIN_HIGH)
    gains, judged_weights = pl.col(_gain_column(p, c)), pl.col(_judged_column(p, c))
    brought_into_range = (gains - low * judged_weights) / (high - low)
    return (1.0 - p) * pl.when((low < 0) | (high > 1)).then(brought_into_range).otherwise(gains)


def with_options(values: Mapping[str, float]) -> Definition:
    p = values["p"]

    def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
        return terms_at(p, context, cutoff)

    def value(context: Context, cutoff: int | None) -> pl.Expr:
        return value_at(p, context, cutoff)

    return MEASURE.with_terms(terms, value)


MEASURE = Definition(
    name="rbp",
    method=None,
    aliases=("rank_biased_precision",),
    trec_eval=Spelling("rbp", None),
    ir_measures=Spelling(f"RBP(p={DEFAULT_PERSISTENCE})", f"RBP(p={DEFAULT_PERSISTENCE})@{{k}}"),
    ranx=NO_SPELLING,
    family="gain",
    needs=frozenset({Quantity.GAIN_RANGE}),
    terms=lambda context, cutoff: terms_at(DEFAULT_PERSISTENCE, context, cutoff),
    value=lambda context, cutoff: value_at(DEFAULT_PERSISTENCE, context, cutoff),
    bounds=(0.0, 1.0),
    options=(Option("p", DEFAULT_PERSISTENCE, "persistence", refused_persistence),),
    with_options=with_options,
)
