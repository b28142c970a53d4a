"""ndcg_rel (trec_eval's ndcg_rel): NDCG averaged over the relevant documents, relevant meaning a positive
gain.  Each retrieved row with a positive gain at position p adds DCG(1..p) / ideal DCG(1..p), the ideal over
the query's positive gains (with judgments: of its judged documents, retrieved or not) and constant past them;
each of the P positive-gain documents not retrieved adds DCG of the whole list / the whole ideal DCG; the sum is
divided by P.  A query without positive gain scores `no_relevant` (trec_eval: 0).  Gains must not be negative.

Ties: a row's share is the DCG above it over an ideal depending on its position (a ratio of sums): no closed
form for its expectation over a tie block's orders, so ties="average" is refused (ties="doc" is trec_eval's
order); the bounds order a tie block by gain.
"""

from __future__ import annotations

import polars as pl

from . import dcg
from ._base import (
    CUMULATIVE_DCG,
    GAIN,
    IDEAL_DCG_AT,
    NO_SPELLING,
    POSITIVE_GAINS,
    Context,
    Definition,
    NoRelevant,
    Quantity,
    Spelling,
    Term,
    ideal_dcg,
    term_name,
)

RATIOS = term_name("ndcg_rel_ratios", None)
RETRIEVED = term_name("positive_retrieved", None)


def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
    positive = pl.col(GAIN) > 0
    ratio = pl.when(positive).then(pl.col(CUMULATIVE_DCG) / pl.col(IDEAL_DCG_AT)).otherwise(0.0)
    return {
        RATIOS: Term(ratio, None),
        RETRIEVED: Term(positive.cast(pl.Float64), None),
        **dcg.terms(context, None),
    }


def value(context: Context, cutoff: int | None) -> pl.Expr:
    positives = pl.col(POSITIVE_GAINS)
    missed = (positives - pl.col(RETRIEVED)) * pl.col(dcg.dcg_column(None)) / pl.col(ideal_dcg(None))
    total = pl.col(RATIOS) + pl.when(positives > pl.col(RETRIEVED)).then(missed).otherwise(0.0)
    return pl.when(positives == 0).then(context.no_relevant_value).otherwise(total / positives)


MEASURE = Definition(
    name="ndcg_rel",
    oracle="trec_eval binary; pytrec_eval",
    method=None,
    aliases=(),
    trec_eval=Spelling("ndcg_rel", None),
    ir_measures=NO_SPELLING,
    ranx=NO_SPELLING,
    family="gain",
    needs=frozenset({Quantity.DISCOUNT, Quantity.IDEAL_DCG, Quantity.RUN_PREFIXES, Quantity.IDEAL_PREFIXES}),
    terms=terms,
    value=value,
    bounds=(0.0, 1.0),
    no_relevant=NoRelevant(lambda context, cutoff: pl.col(POSITIVE_GAINS) == 0, lambda context: "no positive gain"),
    negative_gains=False,
    parameter="none",
    refuses_average="a row's share is a ratio of sums over the rows above it: no closed-form expectation",
)
