"""RR@k: 1 / (position of the first relevant row), 0 when none is within k (trec_eval's recip_rank, without k).

Ties: under ties="average", the exact expectation over the orders of tied rows: only the first tie block
holding a relevant row matters, and E[1 / position] sums P(J = j) / (s + j) over its offsets j <= k - s
(`_first_relevant`).  Queries are limited to 2**21 - 1 rows there.
"""

from __future__ import annotations

import polars as pl

from . import _first_relevant
from ._base import Context, Definition, Derived, Spelling, TrecEvalForm, cut_at


def value(context: Context, cutoff: int | None) -> pl.Expr:
    return _first_relevant.value(context, cutoff, "reciprocal")


def derived(context: Context, cutoff: int | None) -> list[Derived]:
    return [_first_relevant.expectation("reciprocal", cut_at(cutoff))] if context.averaged else []


MEASURE = Definition(
    name="rr",
    oracle="trec_eval binary (`recip_rank`); ranx; every tied order enumerated",
    method="reciprocal_rank",
    aliases=("mrr", "recip_rank", "reciprocal_rank"),
    trec_eval_forms=(TrecEvalForm("recip_rank"),),
    ir_measures=Spelling("RR", "RR@{k}"),
    ranx=Spelling("mrr", "mrr@{k}"),
    family="threshold",
    needs=frozenset(),
    terms=_first_relevant.terms,
    value=value,
    bounds=(0.0, 1.0),
    derived=derived,
    query_checks=_first_relevant.too_long,
)
