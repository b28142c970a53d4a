"""Success@k: 1 when a relevant row is within the first k positions, else 0 (trec_eval's success_k; ranx's
hit_rate@k).

Ties: under ties="average", the exact expectation over the orders of tied rows, P(first relevant position
<= k): the sum of P(J = j) over the offsets j <= k - s of the first tie block holding a relevant row
(`_first_relevant`).  Queries are limited to 2**21 - 1 rows there.
"""

from __future__ import annotations

import polars as pl

from . import _first_relevant
from ._base import Context, Definition, Derived, Spelling, TrecEvalForm, cut_at


def value(context: Context, cutoff: int | None) -> pl.Expr:
    return _first_relevant.value(context, cutoff, "within")


def derived(context: Context, cutoff: int | None) -> list[Derived]:
    return [_first_relevant.expectation("within", cut_at(cutoff))] if context.averaged else []


MEASURE = Definition(
    name="success",
    oracle="trec_eval binary (`success`); ranx `hit_rate`; every tied order enumerated",
    method="success",
    aliases=("hit_rate",),
    trec_eval_forms=(TrecEvalForm("success", (1, 5, 10)),),
    ir_measures=Spelling(None, "Success@{k}"),
    ranx=Spelling("hit_rate", "hit_rate@{k}"),
    family="threshold",
    needs=frozenset(),
    terms=_first_relevant.terms,
    value=value,
    bounds=(0.0, 1.0),
    derived=derived,
    query_checks=_first_relevant.too_long,
)
