"""RBP@k, rank-biased precision (Moffat & Zobel, TOIS 2008): (1 - p) x the sum over positions i <= k of
p^(i-1) x g'(i), p being the persistence (option `p`, default 0.9 as in trec_eval; ir_measures' default is
0.8, so its spelling always carries p).  g' is the gain of the call brought into [0, 1] as trec_eval does:
when a gain of the query's levels exceeds 1, g' = g / high, high being the greatest gain of the query's levels
(without judgments: of its rows; with judgments: of its judged documents, retrieved or not); otherwise g' = g.
An unjudged document has g' = 0.  With linear gains, graded judgments 0..L are so divided by L.  Gains must not
be negative (trec_eval would shift them by the least, and an unjudged document would no longer weigh as little
as a judged one of gain 0).  Without a cut-off the whole list counts (trec_eval's rbp); a query with no row
scores 0.  In the deterministic tie modes the weights are multiplied and the terms added one position after
another, as trec_eval does, so that its printed digits are met also where a decimal p puts a value on a
rounding boundary: the weights are read from a table of those products (`weight_table`, up to 2^20 positions;
past them, for a p above about 0.9993 only, by a power, within a few units in the last place), and the terms
added in a running sum, which only the rows whose gain is not 0 change (so, with judgments, it runs over the
judged rows only).

ir_measures' RBP(p=...) (computed by trectools, outside its default pipeline) sums the raw relevance without
bringing it into [0, 1], and averages the weights of tied documents: it equals this with judgments in {0, 1}
and ties="average" over the whole list (at a cut-off it keeps its first k rows before averaging their ties);
its RBP(p=...,rel=1) (cwl_eval) counts relevance >= 1 as gain 1.

Ties: linear in the per-position weights p^(i-1), so under ties="average" the exact expectation as `dcg`
takes it: a tie block adds its mean g' times its summed weights (within k).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import polars as pl

from .._exact_sum import sum_parts
from ._base import (
    BLOCK_SIZE,
    GAIN,
    GAIN_HIGH,
    NO_SPELLING,
    POSITION,
    RELEVANCE,
    Context,
    Definition,
    Option,
    Quantity,
    Running,
    Spelling,
    Term,
    TrecEvalForm,
    cut,
    cut_at,
    option_text,
    term_name,
)
from ._trec_parameters import persistence_columns

DEFAULT_PERSISTENCE = 0.9


def refused_persistence(p: float) -> str | None:
    return None if 0.0 < p < 1.0 else "the persistence p lies strictly between 0 and 1"


def weight_column(p: float) -> str:
    """p^(position - 1), as trec_eval multiplies it out one position after another (`weight_table`)."""
    return term_name(f"rbp_weight_{option_text(p)}", None)


# the longest table of weights kept (8 MiB): the weights of a p up to about 0.9993 settle within it
_TABLE_LIMIT = 1 << 20


@functools.cache
def weight_table(p: float) -> tuple[float, ...]:
    """1, p, p*p, ...: each entry the one before times p, the products trec_eval forms position after position, up
    to the first that the next product leaves unchanged (0, or a subnormal that p rounds back to itself: every later
    one is the same), or `_TABLE_LIMIT` entries."""
    weights = [1.0]
    while len(weights) < _TABLE_LIMIT:
        following = weights[-1] * p
        if following == weights[-1]:
            return tuple(weights)
        weights.append(following)
    return tuple(weights)


def table_weight(p: float, position: pl.Expr) -> pl.Expr:
    """p^(position - 1), elementwise, read from `weight_table` (no running order needed): past a table that ends
    where the products settle, its last entry; past one cut at `_TABLE_LIMIT` (p above about 0.9993), its last
    entry times p^(the positions further) by a power, within a few units in the last place of the running
    product."""
    table = weight_table(p)
    last = len(table) - 1
    offset = position.cast(pl.Int64) - 1
    weight = pl.lit(pl.Series(table, dtype=pl.Float64)).gather(offset.clip(0, last))
    if len(table) < _TABLE_LIMIT or table[-1] * p == table[-1]:
        return weight
    further = pl.lit(p, pl.Float64).pow((offset - last).cast(pl.Float64))
    return pl.when(offset > last).then(table[-1] * further).otherwise(weight)


def weight_by_table(p: float) -> Running:
    """The weight column, row by row before the aggregation (a gather the streaming engine runs in a select, not
    inside it); its value at a row is its own, so the judged rows alone give it too."""
    return Running(weight_column(p), table_weight(p, pl.col(POSITION)), "row", judged_rows_suffice=True)


def power_weight(p: float, cutoff: int | None) -> pl.Expr:
    """p^(position - 1) by a power (tie averaging: block sums need no running order), 0 past the cut-off."""
    return cut(pl.lit(p).pow(pl.col(POSITION).cast(pl.Float64) - 1.0), POSITION, cutoff)


def judged(context: Context) -> pl.Expr:
    """A row judged at a level >= 0 (without judgments: every row; a column, not a literal, so that a block's
    sum of it counts its rows)."""
    return pl.col(RELEVANCE).is_not_null() if context.judged else pl.col(POSITION) > 0


def brought_into_range() -> pl.Expr:
    """g': the gain divided by the query's greatest when that exceeds 1 (trec_eval: (g - 0) / (high - 0))."""
    high = pl.col(GAIN_HIGH)
    return pl.when(high > 1).then(pl.col(GAIN) / high).otherwise(pl.col(GAIN))


def _sum_column(p: float, cutoff: int | None) -> str:
    return term_name(f"rbp_{option_text(p)}", cutoff)


def _running_sum(p: float) -> str:
    return term_name(f"rbp_running_{option_text(p)}", None)


def running_at(p: float, context: Context) -> list[Running]:
    if context.averaged:
        return []
    # trec_eval's sum, position after position: only its non-zero terms change it, and those are judged rows, so
    # the running sum over the judged rows alone ends at the same value, bit for bit
    weighted = brought_into_range() * pl.col(weight_column(p))
    return [weight_by_table(p), Running(_running_sum(p), weighted, "sum", judged_rows_suffice=True)]


def terms_at(p: float, context: Context, cutoff: int | None) -> dict[str, Term]:
    gain = brought_into_range()
    if not context.averaged:
        if cutoff is None:  # trec_eval's sum, position after position: its greatest (last) running value
            # the least of the running sums' negations is reached at the last row whose gain is not 0, a judged one
            return {_sum_column(p, cutoff): Term(-pl.col(_running_sum(p)), None, least=True, judged_rows=True)}
        weighted = gain * cut(pl.col(weight_column(p)), POSITION, cutoff)
        return {_sum_column(p, cutoff): Term(weighted, None, judged_rows=True)}
    weights = power_weight(p, cutoff)
    block_gain = term_name("block_rbp_gain", None)
    block_weights = term_name(f"block_rbp_weight_{option_text(p)}", cutoff)
    block = pl.col(block_gain) / pl.col(BLOCK_SIZE).cast(pl.Float64) * pl.col(block_weights)
    sums = (*sum_parts(gain, block_gain, context.exact_sums), *sum_parts(weights, block_weights, context.exact_sums))
    return {_sum_column(p, cutoff): Term(gain * weights, block, block_sums=sums)}


def value_at(p: float, context: Context, cutoff: int | None) -> pl.Expr:
    total = pl.col(_sum_column(p, cut_at(cutoff)))
    if not context.averaged and cutoff is None:
        total = (-total).fill_null(0.0)  # a query with no row (a judged query missing from the run): 0
    return (1.0 - p) * total


def with_options(values: Mapping[str, float]) -> Definition:
    p = values["p"]

    def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
        return terms_at(p, context, cutoff)

    def value(context: Context, cutoff: int | None) -> pl.Expr:
        return value_at(p, context, cutoff)

    def running(context: Context) -> list[Running]:
        return running_at(p, context)

    return MEASURE.with_terms(terms, value, running)


MEASURE = Definition(
    name="rbp",
    oracle="trec_eval binary; ir_measures (its trectools and cwl_eval providers); every tied order enumerated",
    method=None,
    aliases=("rank_biased_precision",),
    trec_eval_forms=(TrecEvalForm("rbp", columns=persistence_columns("rbp", "rbp")),),
    ir_measures=Spelling(f"RBP(p={DEFAULT_PERSISTENCE})", f"RBP(p={DEFAULT_PERSISTENCE})@{{k}}"),
    ranx=NO_SPELLING,
    family="gain",
    needs=frozenset({Quantity.GREATEST_GAIN}),
    terms=lambda context, cutoff: terms_at(DEFAULT_PERSISTENCE, context, cutoff),
    value=lambda context, cutoff: value_at(DEFAULT_PERSISTENCE, context, cutoff),
    bounds=(0.0, 1.0),
    refuses_negative_gains=(
        "it brings the gains into [0, 1] by the query's greatest gain, as trec_eval's rbp, and an unjudged document "
        "has gain 0: a negative gain would weigh below it"
    ),
    running=lambda context: running_at(DEFAULT_PERSISTENCE, context),
    options=(Option("p", DEFAULT_PERSISTENCE, "persistence", refused_persistence),),
    with_options=with_options,
)
