"""What the C/W/L measures (Moffat et al.'s framework, as cwl_eval computes them for ir_measures: NERR8, NERR9,
BPM) share: the scaled gain and its options, and the finish of an expected utility per item.

A C/W/L measure is a user model: C(p), the chance of going on from position p to p + 1, gives the weight of
each position, W(p) = C(1) ... C(p - 1) / sum over q of C(1) ... C(q - 1), and the measure is the expected
utility per item, the sum over p of W(p) g'(p).  The gain g' is cwl_eval's as ir_measures hands it over: the
relevance level (the call's gain; with judgments a negative level counts as 0, and an unjudged document has
g' = 0) clipped to [min_rel, max_rel] and brought into [0, 1] (`sdcg.scaled_gain`); max_rel is required, as
ir_measures requires it.  cwl_eval scores the first 1000 positions of a ranking, padded with gain 0 past its
end: the measures here weigh the positions past the end the same way, up to the measure's own depth (its
cut-off k: with k <= 1000 and lists of at most 1000 rows the values are cwl_eval's).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping

import polars as pl

from . import sdcg
from ._base import ROWS, Context, Definition, Option, Running, Term, option_text

OPTIONS: tuple[Option, ...] = sdcg.OPTIONS
# cwl_eval's depth: the positions a ranking is scored over (RankingMaker's max_n in ir_measures' provider)
DEPTH = 1000

REFUSES_AVERAGE = (
    "its weights are products of 1 - g' over the positions above, normalised per query: not linear in per-position "
    "weights, and no closed-form expectation over the orders of tied rows is known"
)
REFUSES_BOUNDS = (
    "a gainful row ranked early lowers the weights of the rows after it and the normaliser, so the most / least "
    "gainful order of a tie block is not always its greatest / least value"
)


def scaled_gain(min_rel: float, max_rel: float) -> pl.Expr:
    """g' of each row, in [0, 1]."""
    return sdcg.scaled_gain(min_rel, max_rel)


def checked_levels(name: str, values: Mapping[str, float]) -> tuple[float, float]:
    """min_rel and max_rel, max_rel above min_rel."""
    min_rel, max_rel = values["min_rel"], values["max_rel"]
    if max_rel <= min_rel:
        msg = (
            f"{name}: max_rel={option_text(max_rel)} must exceed min_rel={option_text(min_rel)}: the gain is scaled "
            f"by max_rel - min_rel (e.g. {name}(min_rel=1,max_rel=3)@10)."
        )
        raise ValueError(msg)
    return min_rel, max_rel


def past_the_list(table: tuple[float, ...]) -> pl.Expr:
    """Per query, `table[m]` at its m rows (`ROWS`, at most `DEPTH`): the summed weights of the positions past
    the end of its list, tabulated per call for every m in 0..`DEPTH`."""
    return pl.lit(pl.Series(table, dtype=pl.Float64)).gather(pl.col(ROWS).clip(0, DEPTH))


def suffix(*values: float) -> str:
    """Term names carry the option values: two settings of a measure in one call do not share a sum."""
    return "_".join(option_text(value) for value in values)


def bound(
    measure: Definition,
    terms_at: Callable[..., dict[str, Term]],
    value_at: Callable[..., pl.Expr],
    options: tuple[float, ...],
    running: list[Running] | None = None,
) -> Definition:
    """`measure` at one setting of its options: `terms_at` and `value_at` take the option values `options`
    (in their order) before the context and the cut-off; `running` are its running sums at that setting."""

    def running_sums(context: Context) -> list[Running]:
        return running or []

    return measure.with_terms(
        functools.partial(terms_at, *options),
        functools.partial(value_at, *options),
        None if running is None else running_sums,
    )
