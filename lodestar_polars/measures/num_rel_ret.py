"""num_rel_ret: the relevant rows of the query (with judgments: its retrieved documents judged above the
threshold; trec_eval's num_rel_ret), the hits over the whole list (`_hits`).  Summary over queries: the sum.

Ties: ignores the order of the rows; every tie mode gives the same count.
"""

from __future__ import annotations

import math

import polars as pl

from . import _hits
from ._base import NO_SPELLING, Context, Definition, Spelling, Term, TrecEvalForm


def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
    return _hits.terms(context, None)


def value(context: Context, cutoff: int | None) -> pl.Expr:
    return pl.col(_hits.hits_column(None))


MEASURE = Definition(
    name="num_rel_ret",
    oracle="trec_eval binary",
    method=None,
    aliases=(),
    trec_eval_forms=(TrecEvalForm("num_rel_ret", printed="count"),),
    ir_measures=Spelling("NumRelRet", None),
    ranx=NO_SPELLING,
    family="threshold",
    needs=frozenset(),
    terms=terms,
    value=value,
    bounds=(0.0, math.inf),
    summary="sum",
    parameter="none",
)
