"""num_ret: the query's rows (retrieved documents; trec_eval's num_ret).  A judged query missing from the run
(missing_queries="zero") retrieved 0.  Summary over queries: the sum.

Ties: ignores the order of the rows; every tie mode gives the same count.
"""

from __future__ import annotations

import math

import polars as pl

from ._base import NO_SPELLING, ROWS, Context, Definition, Spelling, Term, TrecEvalForm


def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
    return {}  # the plan counts every query's rows (`ROWS`)


def value(context: Context, cutoff: int | None) -> pl.Expr:
    return pl.col(ROWS).cast(pl.Float64)


MEASURE = Definition(
    name="num_ret",
    oracle="trec_eval binary",
    method=None,
    aliases=(),
    trec_eval_forms=(TrecEvalForm("num_ret", printed="count"),),
    ir_measures=Spelling("NumRet", None),
    ranx=NO_SPELLING,
    family="threshold",
    needs=frozenset(),
    terms=terms,
    value=value,
    bounds=(0.0, math.inf),
    summary="sum",
    parameter="none",
)
