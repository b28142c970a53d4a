"""yaap (trec_eval's yaap, "yet another average precision", Robertson, ECIR 2012): log((1 + S) / (1 + R - S)),
S being the sum over the relevant rows of (relevant rows at positions <= p) / p, average precision's numerator
(AP = S / R), and R the query's relevant total (with judgments: its relevant judged documents, retrieved or
not).  Monotonic with AP on one query, unbounded: a query with no relevant row retrieved scores log(1 / (1 + R)),
one with every relevant row first log(1 + R).  A query with R = 0 scores log(1) = 0, as in trec_eval (no
`no_relevant` option).  No cut-off, as in trec_eval.  Summary over queries: the mean (trec_eval's).

Ties: the logarithm of a ratio of S, a sum over every tie block at once: its expectation needs the
distribution of S over the orders of all of them, which takes exponentially many values in general; we know of
no polynomial algorithm, so ties="average" is refused (ties="doc" is trec_eval's order).  yaap grows with S,
so the bounds are average precision's: a tie block relevant rows first (optimistic) or last (pessimistic).
"""

from __future__ import annotations

import math

import polars as pl

from . import average_precision
from ._base import NO_SPELLING, Context, Definition, Quantity, Term, TrecEvalForm


def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
    return average_precision.terms(context, None)


def value(context: Context, cutoff: int | None) -> pl.Expr:
    found = average_precision.precision_sum(context, None)
    relevant = context.relevant_total.cast(pl.Float64)
    # trec_eval's expression: log((1.0 + sum) / (1.0 + num_rel - sum))
    return ((1.0 + found) / (1.0 + relevant - found)).log()


MEASURE = Definition(
    name="yaap",
    oracle="trec_eval binary; hand derivations",
    method=None,
    aliases=(),
    trec_eval_forms=(TrecEvalForm("yaap"),),
    ir_measures=NO_SPELLING,
    ranx=NO_SPELLING,
    family="threshold",
    needs=frozenset({Quantity.RELEVANT_COUNT, Quantity.RELEVANT_BEFORE}),
    terms=terms,
    value=value,
    running=average_precision.running,
    bounds=(-math.inf, math.inf),
    parameter="none",
    refuses_average="the logarithm of a ratio of average precision's sum has no closed-form expectation over a "
    "tie block's orders",
)
