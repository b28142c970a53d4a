"""unj@k (trec_eval's unj_k): the unjudged rows within the first k positions (`_unjudged`), divided by k, also
past the end of the list (trec_eval: the positions past it hold judged non-relevant documents); without a
cut-off, by the query's rows.  With judgments, a row is unjudged when the judgments give it no level or a
negative one (judged@k, ir_measures' Judged@k, counts a document judged at a negative level as judged, so
unj@k + judged@k is not 1 then); without judgments every row is judged, and unj is 0.  A query with no row (a
judged query missing from the run, missing_queries="zero") scores 0, as trec_eval -c sets it.

Ties: linear in per-position weights: under ties="average" the exact expectation, E[unjudged@k] / k; under
ties="optimistic" the largest value over the orders of tied rows (unjudged rows first), under "pessimistic"
the least (`_unjudged`).
"""

from __future__ import annotations

import math

import polars as pl

from . import _unjudged
from ._base import (
    NO_SPELLING,
    ROWS,
    Context,
    Definition,
    Quantity,
    Term,
    TrecEvalForm,
    cut_at,
    exact_quotient,
)


def _extreme(context: Context) -> _unjudged.Extreme:
    return "fewest" if context.ties == "pessimistic" else "most"


def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
    return _unjudged.terms(context, cutoff, _extreme(context), "unjudged")


def value(context: Context, cutoff: int | None) -> pl.Expr:
    c = cut_at(cutoff)
    count = pl.col(_unjudged.count_column(context, c, _extreme(context), "unjudged"))
    if cutoff is None:
        length = pl.col(ROWS).cast(pl.Float64)
        return pl.when(length == 0).then(0.0).otherwise(count / length)
    # by the constant k: divided as C divides, not by Polars' reciprocal product (`exact_quotient`)
    return exact_quotient(count, _as_float(cutoff))


def _as_float(value: int) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf


MEASURE = Definition(
    name="unj",
    oracle=(
        "trec_eval binary (a document judged at a negative level counts as unjudged: unlike `judged`); every tied"
        " order enumerated"
    ),
    method=None,
    aliases=("unjudged",),
    trec_eval_forms=(TrecEvalForm("unj", (5, 10, 20)),),
    ir_measures=NO_SPELLING,
    ranx=NO_SPELLING,
    family="threshold",
    needs=frozenset({Quantity.TIE_BLOCKS}),
    terms=terms,
    value=value,
    bounds=(0.0, 1.0),
)
