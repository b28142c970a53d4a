"""iprec@level (trec_eval's iprec_at_recall_<level>): the interpolated precision at a recall level x in [0, 1],
the greatest precision c / p over the query's relevant rows, c being the row's count of relevant rows at or
above it and p its position, among those with c >= max(lround(x R), 1) (trec_eval rounds x R half away from
zero); 0 when none qualifies (fewer relevant rows retrieved than x R).  R is the query's relevant total (with
judgments: its relevant judged documents, retrieved or not).  A query with R = 0 scores `no_relevant`
(trec_eval: 0).  evaluate() takes it as `iprec@0.5`; trec_eval's default levels are 0.0, 0.1, ..., 1.0.

Ties: ties="average" is refused (ties="doc" is trec_eval's order).  Its value is a greatest precision, and the
expectation of a maximum is no sum of per-row or per-block terms.  It is polynomial all the same: the relevant
rows above each block are the same in every order, so the block maxima are independent, and each block's
distribution of its greatest precision follows from counting the orders whose j-th relevant row lies at or
below a position (a dynamic program over the block's positions, for each of its O(n r) candidate values); the
plan's lazy Polars expressions have no operation for such a per-block recursion, so it is not computed.  The
bounds order a tie block relevant rows first or last.
"""

from __future__ import annotations

import polars as pl

from . import recall
from ._base import (
    NO_SPELLING,
    RELEVANT,
    RELEVANT_BEFORE,
    ROW_RELEVANT_TOTAL,
    Context,
    Definition,
    Quantity,
    Spelling,
    Term,
    TrecEvalForm,
    at_parameter,
    only_at_a_parameter,
    term_name,
)
from ._trec_parameters import TREC_RECALL_LEVELS


def _column(level: float) -> str:
    return term_name(f"iprec_{level!r}", None)


def terms_at(level: float, context: Context, cutoff: int | None) -> dict[str, Term]:
    count = pl.col(RELEVANT_BEFORE).cast(pl.Float64) + 1.0
    needed = pl.max_horizontal((pl.lit(level) * pl.col(ROW_RELEVANT_TOTAL)).round(0, mode="half_away_from_zero"), 1.0)
    precision = count / pl.col(context.position).cast(pl.Float64)
    # the greatest precision, as the least of its negation (a `least` term): null when no row qualifies
    row = pl.when(pl.col(RELEVANT) & (count >= needed)).then(-precision)
    return {_column(level): Term(row, None, least=True, judged_rows=True)}


def value_at(level: float, context: Context, cutoff: int | None) -> pl.Expr:
    relevant = context.relevant_total
    interpolated = (-pl.col(_column(level))).fill_null(0.0)
    return pl.when(relevant == 0).then(context.no_relevant_value).otherwise(interpolated)


_TERMS_WITHOUT_PARAMETER, _VALUE_WITHOUT_PARAMETER = only_at_a_parameter("iprec")


def at_level(level: float) -> Definition:
    return at_parameter(MEASURE, level, terms_at, value_at)


MEASURE = Definition(
    name="iprec",
    oracle="trec_eval binary (trec_eval 10's rounding); pytrec_eval where its rounding agrees",
    method=None,
    aliases=("iprec_at_recall",),
    trec_eval_forms=(TrecEvalForm("iprec_at_recall", TREC_RECALL_LEVELS, levels=True),),
    ir_measures=Spelling(None, "IPrec@{k}"),
    ranx=NO_SPELLING,
    family="threshold",
    needs=frozenset({Quantity.RELEVANT_COUNT, Quantity.QUERY_TOTALS, Quantity.RELEVANT_BEFORE}),
    terms=_TERMS_WITHOUT_PARAMETER,
    value=_VALUE_WITHOUT_PARAMETER,
    bounds=(0.0, 1.0),
    no_relevant=recall.NO_RELEVANT,
    parameter="recall_level",
    at_level=at_level,
    refuses_average=(
        "the expectation of a greatest precision over a tie block's orders needs a recursion over the block's "
        "positions, not a sum of block terms"
    ),
)
