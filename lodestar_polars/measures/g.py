"""G (trec_eval's G, normalised gain): the sum over the rows with a non-zero gain g(p) of
g(p) / log2(2 + C(p) - S(p)), divided by the sum of the positive gains of the query's levels (with judgments:
of its judged documents, retrieved or not).  S(p) is the gain over positions 1..p; C(p) the cost of the ideal
order over them, the sum of max(ideal gain, 1) over positions 1..p (an ideal gain past its positive gains is
0), so that a row scores nearly 1 / log2(2) when the rows above it gained nearly as much as the ideal.  A query
without positive gain scores `no_relevant` (trec_eval: 0).

Negative gains (trec_eval's `-m G.1=3,2=-1`): S(p) sums them, the ideal (its cost and its normaliser) takes the
positive gains only, as trec_eval's G.  G stays at or below 1 (C(p) >= S(p), so each row's share has the sign
of its gain and is at most its gain, and the positive gains retrieved sum to at most the normaliser) and has no
lower bound.

Ties: each row's contribution divides by a logarithm of the gain ranked above it: its expectation over a tie
block's orders needs the distribution of the summed gain of a random subset of the block, which takes up to
2**(n-1) values with real gains (pseudo-polynomial for integer gains only); we know of no polynomial algorithm,
so ties="average" is refused (ties="doc" is trec_eval's order).  The tie bounds are refused too: G's best and
worst orders of a tie block are not always the most and least gainful first (a low gain early can raise the
shares of the rows after it: gains 3, 1 ranked first, then a tie block of gains 2 and 3, score 0.8333 in the
order 2, 3 and 0.8214 most gainful first), and finding them is a search over the block's orders, not a sort;
ties="optimistic" / "pessimistic" would print a bound that some tied order exceeds.
"""

from __future__ import annotations

import math

import polars as pl

from ._base import (
    CUMULATIVE_GAIN,
    GAIN,
    IDEAL_EXCESS_AT,
    NO_SPELLING,
    POSITION,
    POSITIVE_GAIN_TOTAL,
    Context,
    Definition,
    NoRelevant,
    Quantity,
    Term,
    TrecEvalForm,
    term_name,
)

SUM = term_name("g", None)
LOG_2 = math.log(2.0)


def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
    # C(p) = p + the ideal's sum of max(gain - 1, 0) over 1..p: max(gain, 1) summed over p positions
    cost = pl.col(POSITION).cast(pl.Float64) + pl.col(IDEAL_EXCESS_AT)
    gain = pl.col(GAIN)
    row = pl.when(gain != 0).then(gain * LOG_2 / (2.0 + cost - pl.col(CUMULATIVE_GAIN)).log()).otherwise(0.0)
    return {SUM: Term(row, None, judged_rows=True)}


def value(context: Context, cutoff: int | None) -> pl.Expr:
    total = pl.col(POSITIVE_GAIN_TOTAL)
    return pl.when(total == 0).then(context.no_relevant_value).otherwise(pl.col(SUM) / total)


MEASURE = Definition(
    name="g",
    oracle="trec_eval binary; pytrec_eval",
    method=None,
    aliases=("normalized_gain",),
    trec_eval_forms=(TrecEvalForm("G", gains=True),),
    ir_measures=NO_SPELLING,
    ranx=NO_SPELLING,
    family="gain",
    needs=frozenset({Quantity.IDEAL_DCG, Quantity.RUN_PREFIXES, Quantity.IDEAL_PREFIXES}),
    terms=terms,
    value=value,
    bounds=(0.0, 1.0),
    negative_gain_bounds=(-float("inf"), 1.0),
    no_relevant=NoRelevant(
        lambda context, cutoff: pl.col(POSITIVE_GAIN_TOTAL) == 0, lambda context: "no positive gain"
    ),
    parameter="none",
    refuses_average="a row's share depends on the gains ranked above it inside a logarithm: no closed-form expectation",
    refuses_bounds=(
        "a low gain ranked early can raise the shares of the rows after it, so the most / least gainful order of a "
        "tie block is not always G's greatest / least value"
    ),
)
