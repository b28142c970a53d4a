"""ndcg_rel (trec_eval's ndcg_rel): NDCG averaged over the relevant documents, relevant meaning a positive
gain.  Each retrieved row with a positive gain at position p adds DCG(1..p) / ideal DCG(1..p), the ideal over
the query's positive gains (with judgments: of its judged documents, retrieved or not) and constant past them;
each of the P positive-gain documents not retrieved adds DCG of the whole list / the whole ideal DCG; the sum is
divided by P, and a sum that is not positive gives 0 (trec_eval: `if (sum > 0.0)`).  A query without positive
gain scores `no_relevant` (trec_eval: 0).

Negative gains (trec_eval's `-m ndcg_rel.1=3,2=-1`): the DCG sums them where they are ranked, the ideal takes
the positive gains only (trec_eval's ideal stops at the first gain <= 0), and a row of negative gain adds no
share of its own; the sum can then be negative, which trec_eval's test above makes 0: ndcg_rel stays in [0, 1].

Ties: a row's share is the DCG above it over an ideal depending on its position (a ratio of sums): no closed
form for its expectation over a tie block's orders, so ties="average" is refused (ties="doc" is trec_eval's
order); the bounds order a tie block by gain.  With a negative gain retrieved that order is not always the
best or worst (a share with a negative DCG above it is the greater under the larger ideal of a later
position): ties="optimistic" / "pessimistic" then raise, naming the query.
"""

from __future__ import annotations

import polars as pl

from .._checks import DataCheck, message, row_check
from . import dcg
from ._base import (
    CUMULATIVE_DCG,
    GAIN,
    IDEAL_DCG_AT,
    NO_SPELLING,
    POSITIVE_GAINS,
    PREFIX,
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
    # trec_eval: `if (sum > 0.0) value = sum / num_rel`, else 0 (a negative gain can make the sum negative)
    shares = pl.when(total > 0.0).then(total / positives).otherwise(0.0)
    return pl.when(positives == 0).then(context.no_relevant_value).otherwise(shares)


def row_checks(context: Context) -> list[DataCheck]:
    """The tie bounds are ndcg_rel's bounds only when no retrieved row has a negative gain."""
    if context.ties not in ("optimistic", "pessimistic"):
        return []
    negative = pl.col(GAIN) < 0
    return [
        row_check(
            f"{PREFIX}ndcg_rel_negative_gain_bound",
            negative,
            message(
                ValueError,
                f"ndcg_rel with ties={context.ties!r}: query {{query}} retrieves a document of negative gain "
                "{value}, and with one the order of a tie block by gain is not always ndcg_rel's "
                f"{'best' if context.ties == 'optimistic' else 'worst'} order (a share with a negative DCG above "
                "it grows with the ideal DCG of a later position); pass a deterministic tie mode or non-negative "
                "gains.",
            ),
            pl.when(negative).then(pl.col(GAIN)).drop_nulls().first(),
        )
    ]


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
    row_checks=row_checks,
    parameter="none",
    refuses_average="a row's share is a ratio of sums over the rows above it: no closed-form expectation",
)
