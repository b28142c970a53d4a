"""rprec_mult@m (trec_eval's Rprec_mult_m): precision at m x R, the relevant rows within the first c positions
divided by c, c = floor(m x R + 0.9) as trec_eval rounds it, also past the end of the list; 0 when c is 0.  R
is the query's relevant total (with judgments: its relevant judged documents, retrieved or not); a query with
R = 0 scores `no_relevant` (trec_eval: 0).  m is any positive multiplier (`rprec_mult@0.2`,
`rprec_mult@1.5`); trec_eval's default multipliers are 0.2, 0.4, ..., 2.0, and at m = 1 it is Rprec.

Ties: linear in per-position weights (1 within the first c positions), so under ties="average" the exact
expectation as precision takes it: a tie block with r relevant rows out of n adds r/n x (its positions within
the first c), c per query.
"""

from __future__ import annotations

import polars as pl

from . import recall
from ._base import (
    BLOCK_RELEVANT,
    BLOCK_SIZE,
    NO_SPELLING,
    POSITION,
    RELEVANT,
    ROW_RELEVANT_TOTAL,
    Context,
    Definition,
    Quantity,
    Spelling,
    Term,
    TrecEvalForm,
    at_parameter,
    only_at_a_parameter,
    term_name,
)
from ._trec_parameters import parse_multipliers


def positions_counted(multiplier: float, relevant_total: pl.Expr) -> pl.Expr:
    """c = floor(m x R + 0.9), in trec_eval's double arithmetic."""
    return (pl.lit(multiplier) * relevant_total + 0.9).floor()


def _hits_column(multiplier: float) -> str:
    return term_name(f"hits_within_{multiplier!r}_r", None)


def terms_at(multiplier: float, context: Context, cutoff: int | None) -> dict[str, Term]:
    counted = positions_counted(multiplier, pl.col(ROW_RELEVANT_TOTAL))
    row = (pl.col(RELEVANT) & (pl.col(context.position) <= counted)).cast(pl.Float64)
    block_within = term_name(f"block_within_{multiplier!r}_r", None)
    positions_within = pl.col(block_within).cast(pl.Float64)
    block = pl.col(BLOCK_RELEVANT).cast(pl.Float64) / pl.col(BLOCK_SIZE).cast(pl.Float64) * positions_within
    sums = (pl.col(RELEVANT).sum().alias(BLOCK_RELEVANT), (pl.col(POSITION) <= counted).sum().alias(block_within))
    return {_hits_column(multiplier): Term(row, block, block_sums=sums, judged_rows=True, whole=True)}


def value_at(multiplier: float, context: Context, cutoff: int | None) -> pl.Expr:
    counted = positions_counted(multiplier, context.relevant_total)
    precision = pl.when(counted > 0).then(pl.col(_hits_column(multiplier)) / counted).otherwise(0.0)
    return pl.when(context.relevant_total == 0).then(context.no_relevant_value).otherwise(precision)


_TERMS_WITHOUT_PARAMETER, _VALUE_WITHOUT_PARAMETER = only_at_a_parameter("rprec_mult")


def at_multiplier(multiplier: float) -> Definition:
    return at_parameter(MEASURE, multiplier, terms_at, value_at)


# trec_eval's default multipliers of Rprec_mult (and Rprec_mult_avgjg)
TREC_RPREC_MULTIPLIERS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)


def trec_eval_columns(parameters: str | None) -> list[tuple[str, str]]:
    """trec_eval's ``Rprec_mult``: one column per multiplier, printed ``Rprec_mult_0.20``."""
    multipliers = TREC_RPREC_MULTIPLIERS if parameters is None else parse_multipliers("Rprec_mult", parameters)
    return [(f"Rprec_mult_{m:3.2f}", f"rprec_mult@{m!r}") for m in multipliers]


MEASURE = Definition(
    name="rprec_mult",
    oracle="trec_eval binary; pytrec_eval; every tied order enumerated",
    method=None,
    aliases=(),
    trec_eval_names=Spelling(None, "Rprec_mult_{k:.2f}"),
    trec_eval_forms=(TrecEvalForm("Rprec_mult", columns=trec_eval_columns),),
    ir_measures=NO_SPELLING,
    ranx=NO_SPELLING,
    family="threshold",
    needs=frozenset({Quantity.RELEVANT_COUNT, Quantity.QUERY_TOTALS}),
    terms=_TERMS_WITHOUT_PARAMETER,
    value=_VALUE_WITHOUT_PARAMETER,
    bounds=(0.0, 1.0),
    no_relevant=recall.NO_RELEVANT,
    parameter="multiplier",
    at_level=at_multiplier,
)
