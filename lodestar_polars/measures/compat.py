"""Compat(p), compatibility (Clarke, Vtyurina and Smucker, "Assessing top-k preferences", TOIS 2021): the
rank-biased overlap (Webber, Moffat and Zobel, 2010) of the run with an ideal ranking, as ir_measures computes
its `Compat(p=..., normalize=...)`.  Options `p` (the persistence, default 0.95 as ir_measures') and `normalize`
(1, the default, or 0; `True` / `False` as ir_measures writes them).

The ideal ranking holds the query's relevant documents (relevance above the threshold, 0 by default: ir_measures'
`qrels > 0`; with judgments every judged relevant document, retrieved or not) by descending relevance level; within
a level, ordered as ir_measures orders them, by the run's score, an unretrieved document counting as score 0: the
retrieved ones scored >= 0 in the run's order, then the unretrieved ones, then those scored below 0.  The
run's ranking is its rows in the tie mode's order; an unjudged document holds a place in it and matches nothing.
With D = max(n, R) (n rows, R relevant documents) and O(d) the documents in both the run's first d and the ideal's
first d:

    RBO = (sum over d <= D of p^(d-1) O(d) / d) / (sum over d <= D of p^(d-1)),

and with `normalize` the RBO of the ideal with itself divides it, whose O(d) is min(d, R): Compat = RBO / RBO(ideal)
(0 < RBO(ideal) whenever R > 0; a query with R = 0 scores `no_relevant`, which ir_measures scores 0; without
`normalize` such a query scores 0).

A relevant retrieved document at run position r and ideal position i is in O(d) exactly for d >= max(r, i), so the
sum is one per-row term: with H(m) = sum over d <= m of p^(d-1) / d,

    sum over d <= D of p^(d-1) O(d) / d = M H(D) - sum over those rows of H(max(r, i) - 1),

M the relevant rows, and RBO(ideal)'s sum is (1 - p^R) / (1 - p) + R (H(D) - H(R)).  H has no closed form: it is
tabulated once per p up to the position where its terms stop changing its last bit (`partial_sums`; p is at most
0.9999, whose table holds some 380,000 positions), and read by `gather` row by row before the per-query
aggregation (a "row" `Running` column: inside the aggregation the streaming engine would leave it to memory); the
ideal position comes from the plan (`Quantity.COMPATIBLE_IDEAL`: windows over the rows of each level, and with
judgments two windows over the judgments, carried by the relevance's join), so the measure stays one lazy plan.

Where ir_measures' number differs: it orders the documents of one level that share a score (a tie in the run, or
a retrieved document scored 0 beside an unretrieved one) as its qrels list them, so that its value changes with
the order of the judgment rows; here they follow the run's order, the unretrieved last (the ideal most compatible
with the run, as Clarke et al. define it), and no value depends on the order of the rows.  With the qrels listed
by ascending doc id and the run's ties broken by ascending doc id (ir_measures' ranking), and no retrieved relevant
document scored exactly 0, the two agree.

Ties: ties="average" is refused (the ideal ranking follows the run's order, so both positions of a row change
with the order of a tie block: no closed-form expectation is known), and so are the tie bounds (the bounds order a
tie block by the relevant flag, not by level, and a level's ideal order follows the run's: neither order is known
to be the best or the worst).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import replace

import polars as pl

from . import _hits
from ._base import (
    COMPATIBLE_IDEAL_POSITION,
    HIGHER_LEVELS,
    LEVEL_TOTAL,
    NO_SPELLING,
    RELEVANCE,
    RELEVANT,
    ROWS,
    Context,
    Definition,
    NoRelevant,
    Option,
    Quantity,
    Running,
    Spelling,
    Term,
    option_text,
    term_name,
)

DEFAULT_PERSISTENCE = 0.95
# the greatest persistence taken: H's table grows as 1 / (1 - p) (some 380,000 positions at 0.9999)
GREATEST_PERSISTENCE = 0.9999
# H's tail past the table's last position is below this, far below the last bit of H >= 1
_TAIL = 2.0**-60


def relevant_levels(threshold: float, keys: list[str]) -> list[pl.Expr]:
    """`Quantity.COMPATIBLE_IDEAL`'s first part, per relevant row or judged document: the relevant ones of its
    query (`keys`) of a higher level, and of its level (`HIGHER_LEVELS`, `LEVEL_TOTAL`)."""
    relevance = pl.col(RELEVANCE)
    relevant_level = pl.when(relevance.cast(pl.Float64) > threshold).then(relevance)
    return [
        (relevant_level.rank("min", descending=True).over(keys) - 1).cast(pl.Int64).alias(HIGHER_LEVELS),
        pl.len().over([*keys, RELEVANCE]).cast(pl.Int64).alias(LEVEL_TOTAL),
    ]


def compatible_ideal_position(position: str, score: str, keys: list[str]) -> pl.Expr:
    """For a relevant row that counts: its position in the ideal ranking most compatible with the run, as
    ir_measures' Compat orders it (`Quantity.COMPATIBLE_IDEAL`): after the relevant documents of a higher level,
    its level's retrieved rows in the run's order (`position`), the unretrieved documents of its level (scored 0
    there) coming before the rows scored below 0 (`score`)."""
    level = [*keys, RELEVANCE]
    within_level = pl.col(position).rank("ordinal").over(level).cast(pl.Int64)
    unretrieved = pl.col(LEVEL_TOTAL) - pl.len().over(level).cast(pl.Int64)
    after_unretrieved = pl.when(pl.col(score) < 0).then(unretrieved).otherwise(0)
    return pl.when(pl.col(RELEVANT)).then(pl.col(HIGHER_LEVELS) + within_level + after_unretrieved)


def refused_persistence(p: float) -> str | None:
    if not 0.0 < p < 1.0:
        return "the persistence p lies strictly between 0 and 1"
    if p > GREATEST_PERSISTENCE:
        return (
            f"p is at most {GREATEST_PERSISTENCE}: the sums of p^(d-1) / d are tabulated up to the depth where they "
            "stop changing, which grows as 1 / (1 - p)"
        )
    return None


def refused_normalize(value: float) -> str | None:
    return None if value in (0.0, 1.0) else "normalize is 1 (True: divide by the ideal's own overlap) or 0 (False)"


@functools.cache
def partial_sum_table(p: float) -> tuple[float, ...]:
    """H(0), H(1), ..., H(N): H(m) = sum over d <= m of p^(d-1) / d, up to the first N whose tail, the sum past it
    (below p^N / ((N + 1)(1 - p))), is under 2^-60: H(m) for m > N is H(N) to the last bit."""
    sums = [0.0]
    total = compensation = 0.0
    d = 1
    while True:
        term = math.pow(p, d - 1) / d
        # Neumaier's compensated sum: every entry within an ulp or two, whatever the table's length
        added = total + term
        compensation += (total - added) + term if abs(total) >= term else (term - added) + total
        total = added
        sums.append(total + compensation)
        if math.pow(p, d) / ((d + 1) * (1.0 - p)) < _TAIL:
            return tuple(sums)
        d += 1


def partial_sums(p: float, index: pl.Expr) -> pl.Expr:
    """H(index), elementwise: the table gathered (an index past it reads its last entry)."""
    table = partial_sum_table(p)
    last = len(table) - 1
    return pl.lit(pl.Series(table, dtype=pl.Float64)).gather(index.cast(pl.Int64).clip(0, last))


def geometric_sum(p: float, count: pl.Expr) -> pl.Expr:
    """sum over d <= count of p^(d-1) = (1 - p^count) / (1 - p)."""
    return (1.0 - pl.lit(p).pow(count.cast(pl.Float64))) / (1.0 - p)


def _overlap_column(p: float) -> str:
    return term_name(f"compat_overlap_{option_text(p)}", None)


def _entered_column(p: float) -> str:
    return term_name(f"compat_entered_{option_text(p)}", None)


def running_at(p: float, context: Context) -> list[Running]:
    """Per relevant row, H(max(r, i) - 1): a lookup the streaming engine runs row by row, not inside the
    per-query aggregation."""
    entered = pl.max_horizontal(pl.col(context.position), pl.col(COMPATIBLE_IDEAL_POSITION))
    return [Running(_entered_column(p), pl.when(pl.col(RELEVANT)).then(partial_sums(p, entered - 1)), "row")]


def terms_at(p: float, normalize: float, context: Context, cutoff: int | None) -> dict[str, Term]:
    overlap = pl.col(_entered_column(p)).fill_null(0.0)
    return {**_hits.terms(context, None), _overlap_column(p): Term(overlap, None)}


def value_at(p: float, normalize: float, context: Context, cutoff: int | None) -> pl.Expr:
    relevant = context.relevant_total
    depth = pl.max_horizontal(pl.col(ROWS).cast(pl.Float64), relevant)
    matched = pl.col(_hits.hits_column(None))
    overlap = matched * partial_sums(p, depth) - pl.col(_overlap_column(p))
    if normalize:
        ideal = geometric_sum(p, relevant) + relevant * (partial_sums(p, depth) - partial_sums(p, relevant))
        compat = pl.when(relevant == 0).then(context.no_relevant_value).otherwise(overlap / ideal)
    else:
        compat = pl.when(matched == 0).then(0.0).otherwise(overlap / geometric_sum(p, depth))
    # in [0, 1]; the two sums differ by rounding only where they are equal (the ideal run: 1) or at 0
    return compat.clip(0.0, 1.0)


def _no_relevant(context: Context, cutoff: int | None) -> pl.Expr:
    return context.relevant_total == 0


def _reason(context: Context) -> str:
    return "no relevant document (the ideal ranking is empty)"


NORMALISED = NoRelevant(_no_relevant, _reason)


def with_options(values: Mapping[str, float]) -> Definition:
    p, normalize = values["p"], values["normalize"]

    def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
        return terms_at(p, normalize, context, cutoff)

    def value(context: Context, cutoff: int | None) -> pl.Expr:
        return value_at(p, normalize, context, cutoff)

    def running(context: Context) -> list[Running]:
        return running_at(p, context)

    measure = MEASURE.with_terms(terms, value, running)
    # without normalisation nothing is divided by the ideal: no_relevant does not apply
    return measure if normalize else replace(measure, no_relevant=None)


MEASURE = Definition(
    name="compat",
    oracle="ir_measures (its compat provider); hand derivations",
    method=None,
    aliases=("compatibility",),
    ir_measures=Spelling("Compat", None),
    ranx=NO_SPELLING,
    family="threshold",
    needs=frozenset({Quantity.RELEVANT_COUNT, Quantity.COMPATIBLE_IDEAL}),
    terms=lambda context, cutoff: terms_at(DEFAULT_PERSISTENCE, 1.0, context, cutoff),
    value=lambda context, cutoff: value_at(DEFAULT_PERSISTENCE, 1.0, context, cutoff),
    running=lambda context: running_at(DEFAULT_PERSISTENCE, context),
    bounds=(0.0, 1.0),
    no_relevant=NORMALISED,
    parameter="none",
    refuses_average=(
        "its ideal ranking follows the run's order, so a row's run and ideal positions both change with the order "
        "of its tie block: no closed-form expectation over the tied orders is known"
    ),
    refuses_bounds=(
        "the bounds order a tie block by the relevant flag, not by level, and the ideal ranking follows the run's "
        "order: neither order is known to be its greatest or least value"
    ),
    options=(
        Option("p", DEFAULT_PERSISTENCE, "persistence", refused_persistence),
        Option("normalize", 1.0, "1: divided by the ideal's own overlap, 0: not", refused_normalize, flag=True),
    ),
    with_options=with_options,
)
