"""utility (trec_eval's utility): a weighted sum over the contingency table of the query's documents,
a x (relevant retrieved) + b x (non-relevant retrieved) + c x (relevant not retrieved) + d x (non-relevant not
retrieved), options a, b, c, d (defaults 1, -1, 0, 0: utility(a=2,b=-1)).  Retrieved: the query's rows (n);
relevant: h of them, out of R (with judgments: the query's relevant judged documents, retrieved or not); the
non-relevant documents not retrieved are collection - n - R + h, `collection` (trec_eval's -N) being the
documents in the collection: an option that d != 0 requires here (the command line's trec_eval mode, as
trec_eval, takes 0 without -N and prints the utility of that negative count).  With judgments, a judged query
missing from the run (missing_queries="zero") scores 0, as every measure does there, and as trec_eval -c prints
plain `utility`.  Given parameters (`-m utility.1,-1,2,0`), trec_eval -c scores such a query as one that
retrieved a single non-relevant stand-in document (2R - 1 there); the command line's trec_eval mode reproduces
that, `evaluate` does not.  Summary over queries: the mean (trec_eval's).

Ties: ignores the order of the rows; every tie mode gives the same value.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import replace

import polars as pl

from . import _hits
from ._base import (
    IN_RUN,
    NO_SPELLING,
    ROWS,
    Context,
    Definition,
    Option,
    Quantity,
    Term,
    TrecEvalForm,
    option_defaults,
)
from ._trec_parameters import decimals


def _any(value: float) -> str | None:
    return None


def _collection_refusal(value: float) -> str | None:
    if value < 0 or not value.is_integer():
        return "it counts the documents in the collection, a whole number >= 0"
    return None


OPTIONS = (
    Option("a", 1.0, "the worth of a relevant document retrieved", _any),
    Option("b", -1.0, "the worth of a non-relevant document retrieved", _any),
    Option("c", 0.0, "the worth of a relevant document not retrieved", _any),
    Option("d", 0.0, "the worth of a non-relevant document not retrieved", _any),
    Option(
        "collection", 0.0, "the documents in the collection, needed when d != 0 (trec_eval's -N)", _collection_refusal
    ),
)


def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
    return _hits.terms(context, None)


def _value(a: float, b: float, c: float, d: float, collection: float) -> Callable[[Context, int | None], pl.Expr]:
    def value(context: Context, cutoff: int | None) -> pl.Expr:
        h, n, relevant = pl.col(_hits.hits_column(None)), pl.col(ROWS).cast(pl.Float64), context.relevant_total
        # trec_eval's order of operations, so that its per-query doubles are trec_eval's
        total = a * h + b * (n - h) + c * (relevant - h) + d * (collection + h - n - relevant)
        return pl.when(pl.col(IN_RUN)).then(total).otherwise(0.0) if context.judged else total

    return value


def with_options(values: Mapping[str, float]) -> Definition:
    if values["d"] != 0 and values["collection"] == 0:
        msg = (
            f"utility: d={values['d']:g} weighs the non-relevant documents not retrieved, counted from the documents "
            "in the collection: give collection= (trec_eval's -N), e.g. utility(d=0.1,collection=500000)."
        )
        raise ValueError(msg)
    return replace(MEASURE, value=_value(*(values[option.name] for option in OPTIONS)))


def trec_eval_columns(parameters: str | None) -> list[tuple[str, str]]:
    """trec_eval's utility (coefficients 1,-1,0,0), or utility.a,b,c,d (printed utility_a,b,c,d); -N fills
    {collection}."""
    if parameters is None:
        return [("utility", "utility(collection={collection})")]
    coefficients = decimals("utility", parameters, 4, "four decimal numbers a,b,c,d (the coefficients)")
    options = ",".join(f"{name}={float(value)!r}" for name, value in zip("abcd", coefficients, strict=True))
    return [(f"utility_{parameters}", f"utility({options},collection={{collection}})")]


MEASURE = Definition(
    name="utility",
    oracle="trec_eval binary; hand derivations",
    method=None,
    aliases=(),
    trec_eval_forms=(TrecEvalForm("utility", columns=trec_eval_columns, collection=True),),
    ir_measures=NO_SPELLING,
    ranx=NO_SPELLING,
    family="threshold",
    needs=frozenset({Quantity.RELEVANT_COUNT}),
    terms=terms,
    value=_value(**option_defaults(OPTIONS)),
    bounds=(-math.inf, math.inf),
    parameter="none",
    options=OPTIONS,
    with_options=with_options,
)
