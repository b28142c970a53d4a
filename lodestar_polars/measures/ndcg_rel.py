"""ndcg_rel (trec_eval's ndcg_rel): NDCG averaged over the relevant documents, relevant meaning a positive
gain.  Each retrieved row with a positive gain at position p adds DCG(1..p) / ideal DCG(1..p), the ideal over
the query's positive gains (with judgments: of its judged documents, retrieved or not) and constant past them;
each of the P positive-gain documents not retrieved adds DCG of the whole list / the whole ideal DCG; the sum is
divided by P, and a sum that is not positive gives 0 (trec_eval: `if (sum > 0.0)`).  A query without positive
gain scores `no_relevant` (trec_eval: 0).

Negative gains (trec_eval's `-m ndcg_rel.1=3,2=-1`): the DCG sums them where they are ranked, the ideal takes
the positive gains only (trec_eval's ideal stops at the first gain <= 0), and a row of negative gain adds no
share of its own; the sum can then be negative, which trec_eval's test above makes 0: ndcg_rel stays in [0, 1].

Ties: under ties="average", the exact expectation over the orders of each tie block.  The ideal at a position
does not depend on the run's order, so a block covering positions s+1..s+n adds the mean over its orders of
its positive rows' shares, each a sum over the block's positions p of a share with a fixed denominator I_p.
A positive row i lands at each position p with probability 1/n, and there each other row of the block is at
each of the positions s+1..p-1 with probability 1/(n-1): the DCG above it is, in expectation, A (the positions
above the block, whose orders are independent of the block's: each gain there replaced by its own block's mean
gain) plus (G - g_i) / (n-1) x W_p, G the block's summed gain and W_p the discounts of s+1..p-1.  With P
positive rows, the block adds 1/n sum_p [P A + G (P-1) / (n-1) W_p + G d_p] / I_p.  trec_eval's floor of a
sum that is not positive at 0 is not linear in the order: with a negative gain retrieved in a query holding a
tie, ties="average" raises, naming the query (without one every sum is at least 0 and the floor changes
nothing).  The bounds order a tie block by gain.  With a negative gain retrieved that order is not always the
best or worst (a share with a negative DCG above it is the greater under the larger ideal of a later
position): ties="optimistic" / "pessimistic" then raise, naming the query.
"""

from __future__ import annotations

import polars as pl

from .._checks import DataCheck, least_failing, message, row_check
from .._exact_sum import sum_parts
from . import dcg
from ._base import (
    BLOCK_SIZE,
    CUMULATIVE_DCG,
    DISCOUNT,
    DISCOUNT_ABOVE,
    EXPECTED_DCG_ABOVE,
    GAIN,
    IDEAL_DCG_AT,
    NO_SPELLING,
    POSITIVE_GAINS,
    PREFIX,
    TIED,
    Context,
    Definition,
    NoRelevant,
    Quantity,
    Term,
    TrecEvalForm,
    ideal_dcg,
    term_name,
)

RATIOS = term_name("ndcg_rel_ratios", None)
RETRIEVED = term_name("positive_retrieved", None)
BLOCK_POSITIVE = term_name("block_positive", None)
BLOCK_POSITIVE_GAIN = term_name("block_positive_gain", None)
BLOCK_DISCOUNT_HIGH = term_name("block_discount_high", None)
BLOCK_DCG_ABOVE_LEAST = term_name("block_dcg_above_least", None)
BLOCK_DCG_ABOVE_GREATEST = term_name("block_dcg_above_greatest", None)
BLOCK_DISCOUNT_ABOVE_LEAST = term_name("block_discount_above_least", None)
BLOCK_DISCOUNT_ABOVE_GREATEST = term_name("block_discount_above_greatest", None)
BLOCK_INVERSE_IDEAL = term_name("block_inverse_ideal", None)
BLOCK_DISCOUNTS_BEFORE = term_name("block_discounts_before", None)
BLOCK_DISCOUNT_RATIOS = term_name("block_discount_ratios", None)


def _block(context: Context) -> tuple[pl.Expr, tuple[pl.Expr, ...]]:
    """The expected sum of a tie block's shares (the module's docstring), and the block sums it reads."""
    positive = pl.col(GAIN) > 0
    # the ideal DCG at a position of a query with a positive gain is not 0 (negative with a log base below 1)
    inverse_ideal = pl.when(pl.col(IDEAL_DCG_AT) != 0).then(1.0 / pl.col(IDEAL_DCG_AT)).otherwise(0.0)
    sums = (
        positive.sum().alias(BLOCK_POSITIVE),
        *sum_parts(pl.when(positive).then(pl.col(GAIN)).otherwise(0.0), BLOCK_POSITIVE_GAIN, context.exact_sums),
        pl.col(DISCOUNT).max().alias(BLOCK_DISCOUNT_HIGH),
        pl.col(EXPECTED_DCG_ABOVE).min().alias(BLOCK_DCG_ABOVE_LEAST),
        pl.col(EXPECTED_DCG_ABOVE).max().alias(BLOCK_DCG_ABOVE_GREATEST),
        pl.col(DISCOUNT_ABOVE).min().alias(BLOCK_DISCOUNT_ABOVE_LEAST),
        pl.col(DISCOUNT_ABOVE).max().alias(BLOCK_DISCOUNT_ABOVE_GREATEST),
        *sum_parts(inverse_ideal, BLOCK_INVERSE_IDEAL, context.exact_sums),
        *sum_parts(pl.col(DISCOUNT_ABOVE) * inverse_ideal, BLOCK_DISCOUNTS_BEFORE, context.exact_sums),
        *sum_parts(pl.col(DISCOUNT) * inverse_ideal, BLOCK_DISCOUNT_RATIOS, context.exact_sums),
    )
    # the discounts and the expected DCG of the positions above the block are those above its first row: every
    # discount has one sign (that of the log base's logarithm) and every gain of a tied query is at least 0
    # (`row_checks`), so they are the block's least with positive discounts, its greatest with negative ones
    rising = pl.col(BLOCK_DISCOUNT_HIGH) > 0
    dcg_above = pl.when(rising).then(pl.col(BLOCK_DCG_ABOVE_LEAST)).otherwise(pl.col(BLOCK_DCG_ABOVE_GREATEST))
    discount_above = (
        pl.when(rising).then(pl.col(BLOCK_DISCOUNT_ABOVE_LEAST)).otherwise(pl.col(BLOCK_DISCOUNT_ABOVE_GREATEST))
    )
    n = pl.col(BLOCK_SIZE).cast(pl.Float64)
    positives = pl.col(BLOCK_POSITIVE).cast(pl.Float64)
    gain = pl.col(BLOCK_POSITIVE_GAIN)
    inverse_ideals = pl.col(BLOCK_INVERSE_IDEAL)
    # sum_p W_p / I_p, W_p the discounts of the block's positions before p
    within_block = pl.col(BLOCK_DISCOUNTS_BEFORE) - discount_above * inverse_ideals
    others = pl.when(n > 1).then(gain * (positives - 1.0) / (n - 1.0) * within_block).otherwise(0.0)
    shares = positives * dcg_above * inverse_ideals + others + gain * pl.col(BLOCK_DISCOUNT_RATIOS)
    return pl.when(positives > 0).then(shares / n).otherwise(0.0), sums


def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
    positive = pl.col(GAIN) > 0
    ratio = pl.when(positive).then(pl.col(CUMULATIVE_DCG) / pl.col(IDEAL_DCG_AT)).otherwise(0.0)
    block, sums = _block(context)
    return {
        RATIOS: Term(ratio, block, block_sums=sums, judged_rows=True),
        RETRIEVED: Term(positive.cast(pl.Float64), None, judged_rows=True, whole=True),
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
    """The tie bounds are ndcg_rel's bounds, and its expectation over tied orders is the blocks' sum, only when
    no retrieved row (of a query holding a tie, under ties="average") has a negative gain."""
    negative = pl.col(GAIN) < 0
    if context.averaged:
        failing = negative & pl.col(TIED).is_not_null()
        why = (
            "and with one trec_eval's floor of a negative sum of shares at 0 makes ndcg_rel's expectation over the "
            "orders of its tied documents more than a sum over its tie blocks"
        )
    elif context.ties in ("optimistic", "pessimistic"):
        failing = negative
        why = (
            "and with one the order of a tie block by gain is not always ndcg_rel's "
            f"{'best' if context.ties == 'optimistic' else 'worst'} order (a share with a negative DCG above "
            "it grows with the ideal DCG of a later position)"
        )
    else:
        return []
    held = " holds tied documents and" if context.averaged else ""
    return [
        row_check(
            f"{PREFIX}ndcg_rel_negative_gain_{'average' if context.averaged else 'bound'}",
            failing,
            message(
                ValueError,
                f"ndcg_rel with ties={context.ties!r}: query {{query}}{held} retrieves a document of negative gain "
                f"{{value}}, {why}; pass a deterministic tie mode or non-negative gains.",
            ),
            least_failing(pl.col(GAIN), failing),
        )
    ]


MEASURE = Definition(
    name="ndcg_rel",
    oracle="trec_eval binary; pytrec_eval; every tied order enumerated",
    method=None,
    aliases=(),
    trec_eval_forms=(TrecEvalForm("ndcg_rel", gains=True),),
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
)
