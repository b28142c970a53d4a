"""rbp_resid, the residual of RBP (trec_eval's rbp_resid): how much RBP could still rise if every unjudged
retrieved document had the greatest gain, p^n + (1 - p) x the sum of p^(i-1) over the positions i of the
unjudged documents (judgments: not judged, or judged at a negative level), n being the query's rows; 0 for a
query with no unjudged document (trec_eval), and so for every query without judgments.  p is the
persistence (option `p`, default 0.9 as in trec_eval's rbp_resid).  It has no cut-off (trec_eval has none,
and whether an unjudged document lies within k would depend on the order of a tie block cut by k).  In the
deterministic tie modes the powers are multiplied out and the terms added one position after another, as
trec_eval does.

Ties: linear in the per-position weights p^(i-1) (p^n and the presence of an unjudged document do not depend
on the order), so under ties="average" the exact expectation: a tie block adds its share of unjudged rows
times its summed weights.  The bounds order a tie block as for RBP (by gain, judged rows first among equal
gains): rbp_resid is then the residual of RBP's best or worst order, not an extreme of its own.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from .._exact_sum import sum_parts
from . import rbp
from ._base import (
    BLOCK_SIZE,
    NO_SPELLING,
    ROWS,
    Context,
    Definition,
    Option,
    Running,
    Term,
    TrecEvalForm,
    option_text,
    term_name,
)
from ._trec_parameters import persistence_columns

UNJUDGED_ROWS = term_name("unjudged_rows", None)


def _unjudged_column(p: float) -> str:
    return term_name(f"rbp_unjudged_{option_text(p)}", None)


def _power_column(p: float) -> str:
    return term_name(f"rbp_power_{option_text(p)}", None)


def _running_unjudged(p: float) -> str:
    return term_name(f"rbp_running_unjudged_{option_text(p)}", None)


def running_at(p: float, context: Context) -> list[Running]:
    if context.averaged or not context.judged:  # without judgments every row is judged: no running sums
        return []
    # trec_eval's weights (rbp's table), added one unjudged position after another: over every row
    unjudged = (~rbp.judged(context)).cast(pl.Float64) * pl.col(rbp.weight_column(p))
    return [rbp.weight_by_table(p), Running(_running_unjudged(p), unjudged, "sum")]


def terms_at(p: float, context: Context, cutoff: int | None) -> dict[str, Term]:
    if not context.judged:  # every row is judged: rbp_resid is 0 (`value_at`)
        return {}
    unjudged = ~rbp.judged(context)
    count = {UNJUDGED_ROWS: Term(unjudged.cast(pl.Float64), None, whole=True)}
    if not context.averaged:
        # trec_eval's sums, position after position: p^n is the least running power (the running weight at
        # position n times p, the product trec_eval forms one position further), the sum the greatest
        return {
            _unjudged_column(p): Term(-pl.col(_running_unjudged(p)), None, least=True),
            _power_column(p): Term(pl.col(rbp.weight_column(p)) * p, None, least=True),
            **count,
        }
    weights = rbp.power_weight(p, None)
    block_weights = term_name(f"block_rbp_weight_{option_text(p)}", None)
    block_unjudged = term_name("block_unjudged", None)
    block = pl.col(block_unjudged).cast(pl.Float64) / pl.col(BLOCK_SIZE).cast(pl.Float64) * pl.col(block_weights)
    sums = (unjudged.sum().alias(block_unjudged), *sum_parts(weights, block_weights, context.exact_sums))
    return {_unjudged_column(p): Term(unjudged.cast(pl.Float64) * weights, block, block_sums=sums), **count}


def value_at(p: float, context: Context, cutoff: int | None) -> pl.Expr:
    if not context.judged:
        return pl.lit(0.0)
    if context.averaged:
        power, unjudged = pl.lit(p).pow(pl.col(ROWS).cast(pl.Float64)), pl.col(_unjudged_column(p))
    else:
        power, unjudged = pl.col(_power_column(p)), -pl.col(_unjudged_column(p))
    return pl.when(pl.col(UNJUDGED_ROWS) > 0).then(power + (1.0 - p) * unjudged).otherwise(0.0)


def with_options(values: Mapping[str, float]) -> Definition:
    p = values["p"]

    def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
        return terms_at(p, context, cutoff)

    def value(context: Context, cutoff: int | None) -> pl.Expr:
        return value_at(p, context, cutoff)

    def running(context: Context) -> list[Running]:
        return running_at(p, context)

    return MEASURE.with_terms(terms, value, running)


MEASURE = Definition(
    name="rbp_resid",
    oracle="trec_eval binary; every tied order enumerated",
    method=None,
    aliases=(),
    trec_eval_forms=(TrecEvalForm("rbp_resid", columns=persistence_columns("rbp_resid", "rbp_resid")),),
    ir_measures=NO_SPELLING,
    ranx=NO_SPELLING,
    family="gain",
    needs=frozenset(),
    terms=lambda context, cutoff: terms_at(rbp.DEFAULT_PERSISTENCE, context, cutoff),
    value=lambda context, cutoff: value_at(rbp.DEFAULT_PERSISTENCE, context, cutoff),
    bounds=(0.0, 1.0),
    parameter="none",
    running=lambda context: running_at(rbp.DEFAULT_PERSISTENCE, context),
    options=(Option("p", rbp.DEFAULT_PERSISTENCE, "persistence", rbp.refused_persistence),),
    with_options=with_options,
)
