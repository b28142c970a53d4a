"""11pt_avg (trec_eval's 11pt_avg): the mean of the interpolated precision `iprec` at the recall levels 0.0,
0.1, ..., 1.0, summed from the highest level down as trec_eval sums them.  A query with R = 0 scores
`no_relevant` (trec_eval: 0).  `averaged(levels)` gives the mean over other levels (trec_eval's
`-m 11pt_avg..25,.5,.75`, which the CLI takes).

Ties: as iprec (the mean of eleven of its values, each a greatest precision whose expectation over a tie block's
orders needs a recursion over the block's positions that the plan does not compute): ties="average" is refused
(ties="doc" is trec_eval's order).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from .._command_errors import UsageError
from . import iprec_at_recall, recall
from ._base import NO_SPELLING, Context, Definition, Term, TrecEvalForm
from ._trec_parameters import DECIMAL, TREC_RECALL_LEVELS


def averaged(levels: Sequence[float]) -> Definition:
    """The mean of iprec over `levels` (ascending, as trec_eval's levels must be for this sum)."""
    ordered = tuple(levels)

    def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
        return {
            name: term for level in ordered for name, term in iprec_at_recall.terms_at(level, context, None).items()
        }

    def value(context: Context, cutoff: int | None) -> pl.Expr:
        # trec_eval adds the levels' values from the highest level down, then divides by their number
        total = pl.lit(0.0)
        for level in reversed(ordered):
            total = total + iprec_at_recall.value_at(level, context, None)
        return total / len(ordered)

    return MEASURE.with_terms(terms, value)


def trec_eval_levels(parameters: str) -> list[str]:
    """trec_eval's ``11pt_avg..25,.5,.75``: iprec at each level, in the order given (trec_eval keeps that order:
    levels out of order, or given twice, change what its walk adds, `trec_eval.quirks.eleven_point_walk`)."""
    values = [value.strip() for value in parameters.split(",")]
    if not all(DECIMAL.fullmatch(value) for value in values):
        msg = f"measure '11pt_avg.{parameters}': recall levels must be decimal numbers separated by commas."
        raise UsageError(msg)
    levels = [float(value) for value in values]
    if max(levels) > 1.0:
        msg = f"measure '11pt_avg.{parameters}': recall levels must lie from 0 to 1."
        raise UsageError(msg)
    return [f"iprec@{level!r}" for level in levels]


MEASURE = Definition(
    name="11pt_avg",
    oracle="trec_eval binary",
    method=None,
    aliases=("ipavg", "11pt_average"),
    trec_eval_forms=(TrecEvalForm("11pt_avg", averaged=trec_eval_levels),),
    ir_measures=NO_SPELLING,
    ranx=NO_SPELLING,
    family="threshold",
    needs=iprec_at_recall.MEASURE.needs,
    terms=lambda context, cutoff: averaged(TREC_RECALL_LEVELS).terms(context, cutoff),
    value=lambda context, cutoff: averaged(TREC_RECALL_LEVELS).value(context, cutoff),
    bounds=(0.0, 1.0),
    no_relevant=recall.NO_RELEVANT,
    parameter="none",
    refuses_average=iprec_at_recall.MEASURE.refuses_average,
)
