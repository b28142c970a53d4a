"""NDCG@k: DCG@k / ideal DCG@k (`dcg`), the ideal from the query's own gains sorted descending, or with
judgments from every judged document of the query, retrieved or not (trec_eval's ndcg_cut).  A query whose
ideal DCG is 0 scores `no_relevant`.

Negative gains (a gain mapping's, as trec_eval's `-m ndcg.1=3,2=-1`; a negative label stays refused without
judgments, as scikit-learn's ndcg_score refuses negative y_true): the DCG sums them where they are ranked, the
ideal DCG takes the positive gains only (trec_eval's ideal stops at the first gain <= 0), so NDCG still lies at
or below 1 but has no lower bound; a query without positive gain has an ideal DCG of 0 and scores
`no_relevant`, whatever its DCG.

Ties: under ties="average", the exact expectation over the orders of each tie block: the ideal DCG does not
depend on the run's order, so the expectation is E[DCG@k] / ideal DCG@k, with E[DCG@k] as `dcg` takes it.
The bounds order a tie block most / least gainful first, DCG's greatest / least value over its orders with any
real gains (discounts decrease with the position).
"""

from __future__ import annotations

import polars as pl

from .._checks import DataCheck, least_failing, message, quoted, row_check
from . import dcg
from ._base import (
    PREFIX,
    RELEVANCE,
    Context,
    Definition,
    NoRelevant,
    Quantity,
    Spelling,
    TrecEvalForm,
    cut_at,
    ideal_dcg,
)
from ._trec_parameters import TREC_CUTOFFS


def value(context: Context, cutoff: int | None) -> pl.Expr:
    c = cut_at(cutoff)
    ideal = pl.col(ideal_dcg(c))
    return pl.when(ideal == 0).then(context.no_relevant_value).otherwise(pl.col(dcg.dcg_column(c)) / ideal)


def _no_relevant(context: Context, cutoff: int | None) -> pl.Expr:
    return pl.col(ideal_dcg(cut_at(cutoff))) == 0


def _reason(context: Context) -> str:
    return "no relevant document (ideal DCG is 0)"


def row_checks(context: Context) -> list[DataCheck]:
    """scikit-learn's refusal of negative labels (judged labels: negative ones mark unjudged documents)."""
    if context.judged:
        return []
    negative = pl.col(RELEVANCE).cast(pl.Float64) < 0
    return [
        row_check(
            f"{PREFIX}negative_relevance",
            negative,
            message(ValueError, f"relevance column {quoted(context.relevance_name)} {NEGATIVE_LABELS}"),
            least_failing(pl.col(RELEVANCE), negative),
        )
    ]


# why a negative label is refused, the end of the namespace's message and of the expressions' (exprs.ndcg)
NEGATIVE_LABELS_REFUSED = "ndcg refuses negative labels, as scikit-learn's ndcg_score does (dcg accepts them)."
# the message's end after the column: the count, the first offending query and its least label (`min`, the same
# whatever the rows' order, and a plain aggregation: `drop_nulls().first()` here made `ndcg` at five cut-offs on
# 1M shuffled, heavily tied queries 1.35x 0.1.0's time)
NEGATIVE_LABELS = (
    "has {total} negative value(s), the first in query {query} (its least label {value}); " + NEGATIVE_LABELS_REFUSED
)


MEASURE = Definition(
    name="ndcg",
    oracle=(
        "scikit-learn `ndcg_score`; trec_eval binary (`ndcg`, `ndcg_cut`); LightGBM, XGBoost; ir_measures, ranx;"
        " every tied order enumerated"
    ),
    method="ndcg",
    aliases=(),
    trec_eval_forms=(
        TrecEvalForm("ndcg", gains=True),
        TrecEvalForm("ndcg_cut", TREC_CUTOFFS),
    ),
    ir_measures=Spelling("nDCG", "nDCG@{k}"),
    ranx=Spelling("ndcg", "ndcg@{k}"),
    family="gain",
    needs=frozenset({Quantity.DISCOUNT, Quantity.IDEAL_DCG}),
    terms=dcg.terms,
    value=value,
    bounds=(0.0, 1.0),
    negative_gain_bounds=(-float("inf"), 1.0),
    no_relevant=NoRelevant(_no_relevant, _reason),
    reads_within_cutoff=True,
    row_checks=row_checks,
)
