"""set_F (trec_eval's set_F, ir_measures' SetF): the weighted harmonic mean of set precision P = h / n and set
recall R = h / R (`_set_counts`), (beta + 1) P R / (beta P + R), beta weighing recall against precision
(trec_eval's x, not squared as van Rijsbergen's F_beta; option `beta`, default 1: set_f(beta=0.5)); 0 when
h = 0.  A query with R = 0 scores `no_relevant` (trec_eval: 0).

Ties: ignores the order of the rows; every tie mode gives the same value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

import polars as pl

from .._command_errors import UsageError
from . import _set_counts, recall
from ._base import NO_SPELLING, Context, Definition, Option, Quantity, Spelling, TrecEvalForm, option_defaults
from ._trec_parameters import decimals


def _refusal(beta: float) -> str | None:
    return "beta weighs recall against precision, from 0 (precision alone) up" if beta < 0 else None


BETA = Option("beta", 1.0, "the weight of recall against precision", _refusal)


def _value(beta: float) -> Callable[[Context, int | None], pl.Expr]:
    def value(context: Context, cutoff: int | None) -> pl.Expr:
        h, relevant = _set_counts.hits(), context.relevant_total
        precision = h / _set_counts.rows()
        recall_share = h / relevant
        f = (beta + 1.0) * precision * recall_share / (beta * precision + recall_share)
        return pl.when(relevant == 0).then(context.no_relevant_value).when(h == 0).then(0.0).otherwise(f)

    return value


def with_options(values: Mapping[str, float]) -> Definition:
    return replace(MEASURE, value=_value(values["beta"]))


def trec_eval_columns(parameters: str | None) -> list[tuple[str, str]]:
    """trec_eval's set_F (beta 1), or set_F.x (beta x, printed set_F_x as trec_eval prints it: the text as given)."""
    if parameters is None:
        return [("set_F", "set_f")]
    # trec_eval reads the first of several values
    beta = decimals("set_F", parameters, None, "decimal numbers, the first one beta (weight of recall)")[0]
    if float(beta) < 0:
        msg = f"measure 'set_F.{parameters}': beta weighs recall against precision, from 0 up."
        raise UsageError(msg)
    return [(f"set_F_{parameters}", f"set_f(beta={float(beta)!r})")]


MEASURE = Definition(
    name="set_f",
    oracle="trec_eval binary; ir_measures",
    method=None,
    aliases=(),
    trec_eval_forms=(TrecEvalForm("set_F", columns=trec_eval_columns),),
    ir_measures=Spelling("SetF", None),
    ranx=NO_SPELLING,
    family="threshold",
    needs=frozenset({Quantity.RELEVANT_COUNT}),
    terms=_set_counts.terms,
    value=_value(option_defaults((BETA,))["beta"]),
    bounds=(0.0, 1.0),
    no_relevant=recall.NO_RELEVANT,
    parameter="none",
    options=(BETA,),
    with_options=with_options,
)
