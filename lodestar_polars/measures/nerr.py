"""nERR@k: ERR@k (`err`) divided by the ideal ERR@k, the ERR@k of the query's grades sorted descending (with
judgments, of all of its judged documents, retrieved or not), its largest value over every order.  A query
whose ideal ERR is 0 (no document of grade above 0) scores `no_relevant`.

Oracles (tests/test_nerr_oracles.py): NTCIREVAL's nERR@k (pyNTCIREVAL) with gain values 1:3:7:15 for levels
1..4, whose stopping probability gain / (largest gain + 1) is then (2**l - 1) / 2**4, its ideal every judged
document by level, cut at k: the same formula on integer grades; and ndeval's nERR-IA@k (pyndeval) with one
subtopic, on binary grades 0 / g with alpha = (2**g - 1) / 16, k <= 20.  ir_measures has no nERR (its nERR_IA
is ndeval's intent-aware one, NERR8-11 are C/W/L's).

Ties: as `err` (the ideal does not depend on the run's order): the bounds order a tie block by grade,
ties="average" is refused.
"""

from __future__ import annotations

import polars as pl

from . import err
from ._base import NO_SPELLING, Context, Definition, NoRelevant, Quantity, cut_at, ideal_err


def value(context: Context, cutoff: int | None) -> pl.Expr:
    c = cut_at(cutoff)
    ideal = pl.col(ideal_err(c))
    return pl.when(ideal == 0).then(context.no_relevant_value).otherwise(pl.col(err.err_column(c)) / ideal)


def _no_relevant(context: Context, cutoff: int | None) -> pl.Expr:
    return pl.col(ideal_err(cut_at(cutoff))) == 0


def _reason(context: Context) -> str:
    return "no document of grade above 0 (ideal ERR is 0)"


MEASURE = Definition(
    name="nerr",
    oracle="NTCIREVAL (pyNTCIREVAL, gains 1:3:7:15); ndeval nERR-IA, one subtopic, binary; hand derivations",
    method=None,
    aliases=(),
    ir_measures=NO_SPELLING,
    ranx=NO_SPELLING,
    family="gain",
    needs=frozenset({Quantity.CONTINUATION, Quantity.IDEAL_ERR}),
    terms=err.terms,
    value=value,
    bounds=(0.0, 1.0),
    no_relevant=NoRelevant(_no_relevant, _reason),
    refuses_average=err.REFUSES_AVERAGE,
    orders_by_grade=True,
    row_checks=err.row_checks,
)
