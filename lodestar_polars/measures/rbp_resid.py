"""rbp_resid, the residual of RBP (trec_eval's rbp_resid): how much RBP could still rise if every unjudged
retrieved document had the greatest gain, p^n + (1 - p) x the sum of p^(i-1) over the positions i of the
unjudged documents (judgments: not judged, or judged at a negative level), n being the query's rows; 0 for a
query with no unjudged document (trec_eval), and so for every query without judgments.  p is the
persistence (option `p`, default 0.9 as in trec_eval's rbp_resid).  It has no cut-off (trec_eval has none,
and whether an unjudged document lies within k would depend on the order of a tie block cut by k).

Ties: linear in the per-position weights p^(i-1) (p^n and the presence of an unjudged document do not depend
on the order), so under ties="average" the exact expectation: a tie block adds its share of unjudged rows
times its summed weights.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from . import rbp
from ._base import (
    BLOCK_SIZE,
    NO_SPELLING,
    ROWS,
    Context,
    Definition,
    Option,
    Spelling,
    Term,
    option_text,
    term_name,
)

UNJUDGED_ROWS = term_name("unjudged_rows", None)


def _unjudged_column(p: float) -> str:
    return term_name(f"rbp_unjudged_{option_text(p)}", None)


def terms_at(p: float, context: Context, cutoff: int | None) -> dict[str, Term]:
    weights = rbp.weight(p, None)
    block_weights = term_name(f"block_rbp_weight_{option_text(p)}", None)
    block_unjudged = term_name("block_unjudged", None)
    unjudged = ~rbp.judged(context)
    n = pl.col(BLOCK_SIZE).cast(pl.Float64)
    return {
        _unjudged_column(p): Term(
            unjudged.cast(pl.Float64) * weights,
            pl.col(block_unjudged).cast(pl.Float64) / n * pl.col(block_weights),
            block_sums=(unjudged.sum().alias(block_unjudged), weights.sum().alias(block_weights)),
        ),
        UNJUDGED_ROWS: Term(unjudged.cast(pl.Float64), None),
    }


def value_at(p: float, context: Context, cutoff: int | None) -> pl.Expr:
    residual = pl.lit(p).pow(pl.col(ROWS).cast(pl.Float64)) + (1.0 - p) * pl.col(_unjudged_column(p))
    return pl.when(pl.col(UNJUDGED_ROWS) > 0).then(residual).otherwise(0.0)


def with_options(values: Mapping[str, float]) -> Definition:
    p = values["p"]

    def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
        return terms_at(p, context, cutoff)

    def value(context: Context, cutoff: int | None) -> pl.Expr:
        return value_at(p, context, cutoff)

    return MEASURE.with_terms(terms, value)


MEASURE = Definition(
    name="rbp_resid",
    method=None,
    aliases=(),
    trec_eval=Spelling("rbp_resid", None),
    ir_measures=NO_SPELLING,
    ranx=NO_SPELLING,
    family="gain",
    needs=frozenset(),
    terms=lambda context, cutoff: terms_at(rbp.DEFAULT_PERSISTENCE, context, cutoff),
    value=lambda context, cutoff: value_at(rbp.DEFAULT_PERSISTENCE, context, cutoff),
    bounds=(0.0, 1.0),
    parameter="none",
    options=(Option("p", rbp.DEFAULT_PERSISTENCE, "persistence", rbp.refused_persistence),),
    with_options=with_options,
)
