"""num_nonrel_judged_ret: the query's judged non-relevant rows (with judgments: its retrieved documents judged
at a level from 0 to the threshold; an unjudged document, or one judged at a negative level, counts for
nothing, as in trec_eval's num_nonrel_judged_ret); without judgments every row is judged, so its rows not
above the threshold.  Summary over queries: the sum.

Ties: ignores the order of the rows; every tie mode gives the same count.
"""

from __future__ import annotations

import math

import polars as pl

from ._base import NO_SPELLING, RELEVANT, Context, Definition, Term, TrecEvalForm, term_name, unjudged

NONRELEVANT_JUDGED = term_name("nonrelevant_judged", None)


def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
    row = ~pl.col(RELEVANT) & ~unjudged(context.judged)
    return {NONRELEVANT_JUDGED: Term(row.cast(pl.Float64), None, whole=True)}


def value(context: Context, cutoff: int | None) -> pl.Expr:
    return pl.col(NONRELEVANT_JUDGED)


MEASURE = Definition(
    name="num_nonrel_judged_ret",
    oracle="trec_eval binary",
    method=None,
    aliases=(),
    trec_eval_forms=(TrecEvalForm("num_nonrel_judged_ret", printed="count"),),
    ir_measures=NO_SPELLING,
    ranx=NO_SPELLING,
    family="threshold",
    needs=frozenset(),
    terms=terms,
    value=value,
    bounds=(0.0, math.inf),
    summary="sum",
    parameter="none",
)
