"""set_P (trec_eval's set_P, ir_measures' SetP): h / n, the relevant share of the retrieved rows
(`_set_counts`); a query with no row scores 0.  Equal to P without a cut-off.

Ties: ignores the order of the rows; every tie mode gives the same value.
"""

from __future__ import annotations

import polars as pl

from . import _set_counts
from ._base import NO_SPELLING, Context, Definition, Spelling, TrecEvalForm


def value(context: Context, cutoff: int | None) -> pl.Expr:
    n = _set_counts.rows()
    return pl.when(n == 0).then(0.0).otherwise(_set_counts.hits() / n)


MEASURE = Definition(
    name="set_p",
    oracle="trec_eval binary; ir_measures",
    method=None,
    aliases=("set_precision",),
    trec_eval_forms=(TrecEvalForm("set_P"),),
    ir_measures=Spelling("SetP", None),
    ranx=NO_SPELLING,
    family="threshold",
    needs=frozenset(),
    terms=_set_counts.terms,
    value=value,
    bounds=(0.0, 1.0),
    parameter="none",
)
