"""The builders of the shared quantities the measures read (`measures._base.Quantity`), which the quantity
registry (`registry.py`) calls where a call needs them: positions (by score, by relevance under tie bounds, in
the ideal order), discounts, the relevant / judged / pooled rows ranked above a row, the query's totals on each
row, the greatest gain, the run's and the ideal order's prefixes, the ideal DCG, the tie blocks' windows under
tie bounds.  ERR's cascade and compat's ideal are built in their measure modules (`measures/_cascade.py`,
`measures/compat.py`)."""

from __future__ import annotations

import itertools
import math

import polars as pl

from .._exact_sum import sum_parts
from .._spec import Spec
from ..measures._base import (
    BLOCK_SIZE,
    BLOCK_START,
    BLOCK_UNJUDGED,
    BOUNDARIES,
    BOUNDARY_WEIGHT_AT,
    CUMULATIVE_DCG,
    CUMULATIVE_GAIN,
    DISCOUNT_ABOVE,
    EXPECTED_DCG_ABOVE,
    GAIN,
    IDEAL_DCG_AT,
    IDEAL_DISCOUNT,
    IDEAL_EXCESS_AT,
    IDEAL_GAIN_AT,
    IDEAL_POSITION,
    POOLED,
    POSITION,
    POSITIVE_GAIN_TOTAL,
    POSITIVE_GAINS,
    PREFIX,
    RELEVANCE,
    RELEVANT,
    ROW_NONRELEVANT_TOTAL,
    ROW_RELEVANT_TOTAL,
    Quantity,
    cut,
    ideal_dcg,
    unjudged,
)
from .inputs import _gain, _qrels_rows
from .keys import GROUP, SCORE, _Names, _packed_group
from .needs import _cutoffs_needing, _needs, _threshold_position


def _position(
    spec: Spec, names: _Names, *, judged: bool, by_relevant: bool = False, over: list[str] | None = None
) -> pl.Expr:
    """1-based position by descending score, ties broken as `ties` says ("average" needs any order); the
    bounds order a tie block by gain, or by the relevant flag when no measure reads a gain or `by_relevant`,
    and, with judgments, rows of equal gain (or flag) judged first: rbp_resid reads where the unjudged rows
    are, and the order the bounds give is then the same whatever the order of the rows.  Per `names.group`,
    or per the columns `over` (the keys themselves: `_diversity`)."""
    score, keys = pl.col(SCORE), names.group if over is None else over
    if spec.ties in ("average", "input"):
        # rank("ordinal") breaks ties by row order: the earlier row first
        return score.rank("ordinal", descending=True).over(keys)
    if spec.ties == "reverse":
        # reversing the ascending order puts the later of two tied rows first
        return pl.len().over(keys) - score.rank("ordinal").over(keys) + 1
    if spec.ties == "doc":
        # trec_eval compares docnos as strings: the doc id's text, whatever its dtype ("9" > "100")
        tie_break: list[pl.Expr] = [pl.col(name).cast(pl.String) for name in names.docs]
    else:
        # most (optimistic) or least (pessimistic) gainful first, or relevant first / last
        uses_gain = _needs(spec, Quantity.GAIN) and not by_relevant
        gain = pl.col(GAIN) if uses_gain else pl.col(RELEVANT).cast(pl.Int8)
        tie_break = [gain if spec.ties == "optimistic" else -gain]
        if judged:
            tie_break.append(pl.col(RELEVANCE).is_not_null().cast(pl.Int8))
    return pl.struct(score, *tie_break).rank("ordinal", descending=True).over(keys)


def _relevant_before(spec: Spec, names: _Names) -> pl.Expr:
    """For a relevant row: the relevant rows ranked above it.  With tie averaging, by score in row order
    within a tie block, so that the block's least value counts the relevant rows of higher score (an ordinal
    rank costs less than rank("min"))."""
    relevant = pl.col(RELEVANT)
    if spec.ties == "average":
        ranked = pl.when(relevant).then(pl.col(SCORE)).rank("ordinal", descending=True)
    else:
        ranked = pl.when(relevant).then(pl.col(_threshold_position(spec))).rank("ordinal")
    return (ranked.over(names.group) - 1).cast(pl.Int64)


def _counted_before(flag: pl.Expr, spec: Spec, names: _Names) -> pl.Expr:
    """For a flagged row, the flagged rows ranked above it (deterministic tie modes), as a running count in the
    order the measures counting relevant rows read; null on the other rows."""
    above = flag.cast(pl.Int64).cum_sum() - 1
    return pl.when(flag).then(above).over(names.group, order_by=_threshold_position(spec))


def _judged_before(spec: Spec, judged: bool, names: _Names) -> pl.Expr:
    """For a judged row (with judgments: judged at a level >= 0; without: every row): the judged rows ranked
    above it, in the order the measures counting relevant rows read."""
    position = pl.col(_threshold_position(spec))
    if not judged:  # every row counts, and the positions are already its ranks 1..n
        return (position - 1).cast(pl.Int64)
    position = pl.when(pl.col(RELEVANCE).is_not_null()).then(position)
    return (position.rank("ordinal").over(names.group) - 1).cast(pl.Int64)


def _pooled_before(spec: Spec, judged: bool, names: _Names) -> pl.Expr:
    """For a pooled row (with judgments: in the qrels at any level; without: every row): the pooled rows
    ranked above it, in the order the measures counting relevant rows read."""
    position = pl.col(_threshold_position(spec))
    if not judged:  # every row counts, and the positions are already its ranks 1..n
        return (position - 1).cast(pl.Int64)
    position = pl.when(pl.col(POOLED)).then(position)
    return (position.rank("ordinal").over(names.group) - 1).cast(pl.Int64)


def _query_totals_in_rows(names: _Names) -> list[pl.Expr]:
    """Without judgments, R and N of each row's query (`Quantity.QUERY_TOTALS`), as windows over its rows."""
    relevant = pl.col(RELEVANT)
    return [
        relevant.sum().over(names.group).cast(pl.Float64).alias(ROW_RELEVANT_TOTAL),
        (~relevant).sum().over(names.group).cast(pl.Float64).alias(ROW_NONRELEVANT_TOTAL),
    ]


def _gain_follows_relevance(spec: Spec) -> bool:
    if isinstance(spec.gain, str):
        return True
    gains = [gain for _, gain in sorted(spec.gain)]
    return all(a <= b for a, b in itertools.pairwise(gains))


def _ideal_position(spec: Spec, keys: list[str]) -> pl.Expr:
    """1-based position by descending gain.  Ties there cannot change the ideal DCG, so when the gain never
    decreases as the relevance grows, ranking the raw relevance gives the same DCG and is cheaper."""
    ranked = pl.col(RELEVANCE) if _gain_follows_relevance(spec) else pl.col(GAIN)
    return ranked.rank("ordinal", descending=True).over(keys)


def _discount(spec: Spec, position: pl.Expr) -> pl.Expr:
    """1 / log_b(position + 1) for 1-based positions."""
    return pl.lit(math.log(spec.log_base)) / (position + 1).cast(pl.Float64).log()


def _greatest_gain() -> pl.Expr:
    return pl.max_horizontal(pl.col(GAIN).max(), 0.0).fill_null(0.0)


def _positive_gains(spec: Spec) -> list[pl.Expr]:
    """Per query: its positive gains, their sum and their distinct values (`Quantity.IDEAL_PREFIXES`)."""
    gain = pl.col(GAIN)
    return [
        (gain > 0).sum().cast(pl.Float64).alias(POSITIVE_GAINS),
        *sum_parts(pl.when(gain > 0).then(gain), POSITIVE_GAIN_TOTAL, spec.exact_sums),
        gain.filter(gain > 0).n_unique().cast(pl.Float64).alias(BOUNDARIES),
    ]


def _ideal_prefixes(ideal: pl.LazyFrame, spec: Spec, keys: list[str]) -> pl.LazyFrame:
    """A query's ideal order (rows with `IDEAL_POSITION` and `GAIN`) -> (keys, POSITION, the ideal prefixes at
    that position): its DCG over positions 1..p of its positive gains, the sum of max(gain - 1, 0) over them, and
    the sum of 1 / (ideal DCG at b) over the boundaries b >= p (the last position of each positive gain value)."""
    positive = pl.when(pl.col(GAIN) > 0).then(pl.col(GAIN)).otherwise(0.0)
    # the rows of one gain are consecutive in the ideal order: the last of them has the greatest ideal position
    # (an aggregation window costs less than a shift in position order)
    last_of_its_gain = pl.col(IDEAL_POSITION) == pl.col(IDEAL_POSITION).max().over([*keys, GAIN])
    prefixed = ideal.with_columns(
        (positive * _discount(spec, pl.col(IDEAL_POSITION)))
        .cum_sum()
        .over(keys, order_by=IDEAL_POSITION)
        .alias(IDEAL_DCG_AT),
        (positive - 1.0).clip(lower_bound=0.0).cum_sum().over(keys, order_by=IDEAL_POSITION).alias(IDEAL_EXCESS_AT),
        ((pl.col(GAIN) > 0) & last_of_its_gain).alias(BOUNDARY_WEIGHT_AT),
    )
    inverse = pl.when(pl.col(BOUNDARY_WEIGHT_AT)).then(1.0 / pl.col(IDEAL_DCG_AT)).otherwise(0.0)
    weights = inverse.cum_sum(reverse=True).over(keys, order_by=IDEAL_POSITION).alias(BOUNDARY_WEIGHT_AT)
    return prefixed.with_columns(weights).select(
        *keys, pl.col(IDEAL_POSITION).alias(POSITION), IDEAL_DCG_AT, IDEAL_EXCESS_AT, BOUNDARY_WEIGHT_AT
    )


def _with_ideal_prefixes(
    rows: pl.LazyFrame, qrels: pl.LazyFrame, spec: Spec, names: _Names, keep_order: bool, every_row: bool = True
) -> pl.LazyFrame:
    """With judgments, each row gets the ideal order's prefixes at its position (`Quantity.IDEAL_PREFIXES`)
    from its query's judged documents; past the ideal list, its totals (the prefixes at its last position) and
    no boundary weight.  `every_row`: the rows are all of the query's, so those at the ideal list's positions
    carry the totals (windows over them); else (the judged rows alone) the totals are joined from the ideal order.
    Without judgments: `_ideal_prefixes_in_run_order`."""
    keys = names.query
    judged = _qrels_rows(qrels, spec, names).filter(pl.col(RELEVANCE).is_not_null())
    judged = judged.with_columns(_gain(spec, pl.col(RELEVANCE)).alias(GAIN))
    if names.packed and len(names.keys) == 1:
        # one String, Categorical or Enum query (no `by=`): its code, packed as the run's rows pack it
        # (`_packed_group`, a function of the value alone, exact below 2**31 - 1 codes), so that the ideal
        # order's windows, group-by and joins read one integer column, not the strings hashed for each
        judged = judged.with_columns(_packed_group(names.keys, names.dtypes).alias(GROUP))
        keys = [GROUP]
    if not every_row:
        # over the judged rows alone, the ideal order's positive gains suffice: they come first in it (their
        # positions are the same among them as among every judged row), and past them the prefixes stay at
        # their totals and the boundary weights at 0, as the fill below gives them (a query judged without a
        # positive gain: 0); on the TREC-shaped run, 60% of the judged rows in the ideal order's windows
        judged = judged.filter(pl.col(GAIN) > 0)
    ideal = judged.select(*keys, GAIN, _ideal_position(spec, keys).alias(IDEAL_POSITION))
    prefixes = _ideal_prefixes(ideal, spec, keys)
    joined = rows.join(prefixes, on=[*keys, POSITION], how="left", maintain_order="left" if keep_order else "none")
    # the totals, the prefixes at the last position: running sums of terms of one sign, so the greatest prefixes,
    # but the ideal DCG's least with a log base below 1 (negative discounts); a plain aggregation (the value at
    # the greatest position, `filter(last).first()`, took 1.6 s over 1M queries in a group-by, a `min` 0.25 s)
    ideal_dcg_total = pl.col(IDEAL_DCG_AT).max() if spec.log_base > 1 else pl.col(IDEAL_DCG_AT).min()
    excess_total = pl.col(IDEAL_EXCESS_AT).max()
    if every_row:
        dcg_total, excess_total = ideal_dcg_total.over(names.group), excess_total.over(names.group)
    else:
        totals = prefixes.group_by(keys).agg(
            ideal_dcg_total.alias(_IDEAL_DCG_TOTAL), excess_total.alias(_IDEAL_EXCESS_TOTAL)
        )
        joined = joined.join(totals, on=keys, how="left", maintain_order="left" if keep_order else "none")
        # the rows are judged: a query without a positive gain, so without ideal rows, has prefixes of 0 (as
        # over every judged row; the measures reading them score such a query `no_relevant` anyway)
        dcg_total, excess_total = pl.col(_IDEAL_DCG_TOTAL).fill_null(0.0), pl.col(_IDEAL_EXCESS_TOTAL).fill_null(0.0)
    filled = joined.with_columns(
        pl.col(IDEAL_DCG_AT).fill_null(dcg_total),
        pl.col(IDEAL_EXCESS_AT).fill_null(excess_total),
        pl.col(BOUNDARY_WEIGHT_AT).fill_null(0.0),
    )
    return filled if every_row else filled.drop(_IDEAL_DCG_TOTAL, _IDEAL_EXCESS_TOTAL)


# a query's ideal order's totals, joined onto its judged rows (`_with_ideal_prefixes` over the judged rows alone)
_IDEAL_DCG_TOTAL = f"{PREFIX}ideal_dcg_total"
_IDEAL_EXCESS_TOTAL = f"{PREFIX}ideal_excess_total"


def _ideal_gains_in_run_order(names: _Names) -> pl.Expr:
    """Without judgments, the ideal order's gain at each row's position (`IDEAL_GAIN_AT`): in a window ordered by
    position, the query's gains sorted descending are the ideal order's, the one at the row of position p the
    ideal's at p.  Its own context, before the ideal prefixes' windows read it: one sort a query, where each of
    those windows sorting the gains again would cost one each."""
    return pl.col(GAIN).sort(descending=True).over(names.group, order_by=POSITION).alias(IDEAL_GAIN_AT)


def _ideal_prefixes_in_run_order(spec: Spec, names: _Names) -> list[pl.Expr]:
    """Without judgments, the ideal prefixes of `_ideal_prefixes` as windows ordered by position over the ideal
    order's gain at each position (`_ideal_gains_in_run_order`), no join: the same products summed in the same
    order as from the ideal positions."""
    ideal = pl.col(IDEAL_GAIN_AT)
    positive = pl.when(ideal > 0).then(ideal).otherwise(0.0)
    dcg_at = (positive * _discount(spec, pl.col(POSITION))).cum_sum()
    # the rows of one gain are consecutive in the ideal order: the last of them is followed by a lower gain
    last_of_its_gain = (ideal > 0) & (ideal != ideal.shift(-1, fill_value=0.0))
    weights = pl.when(last_of_its_gain).then(1.0 / dcg_at).otherwise(0.0).cum_sum(reverse=True)
    return [
        dcg_at.over(names.group, order_by=POSITION).alias(IDEAL_DCG_AT),
        (positive - 1.0).clip(lower_bound=0.0).cum_sum().over(names.group, order_by=POSITION).alias(IDEAL_EXCESS_AT),
        weights.over(names.group, order_by=POSITION).alias(BOUNDARY_WEIGHT_AT),
    ]


def _run_prefixes(spec: Spec, names: _Names) -> list[pl.Expr]:
    """Per row: the gain and the DCG over positions 1..p of its position p, and with tie averaging the
    discounts and the expected DCG over positions 1..p-1 (`Quantity.RUN_PREFIXES`)."""
    gain, discount = pl.col(GAIN), _discount(spec, pl.col(POSITION))
    prefixes = [
        gain.cum_sum().over(names.group, order_by=POSITION).alias(CUMULATIVE_GAIN),
        (gain * discount).cum_sum().over(names.group, order_by=POSITION).alias(CUMULATIVE_DCG),
    ]
    if spec.ties == "average":
        # every row of a tie block is equally likely at each of its positions: the expected gain there is the
        # block's mean gain
        expected_gain = gain.mean().over([*names.group, SCORE])
        prefixes += [
            _before(discount).over(names.group, order_by=POSITION).alias(DISCOUNT_ABOVE),
            _before(expected_gain * discount).over(names.group, order_by=POSITION).alias(EXPECTED_DCG_ABOVE),
        ]
    return prefixes


def _before(value: pl.Expr) -> pl.Expr:
    """The sum of `value` over the positions above a row's, in a window ordered by position."""
    return value.cum_sum().shift(1, fill_value=0.0)


def _ideal_terms(spec: Spec) -> list[pl.Expr]:
    """The ideal DCG@k: the gains by descending gain, a negative one (from a gain mapping, or a negative label
    under linear or exponential gains) adding nothing: trec_eval's ideal stops at the first gain <= 0."""
    gain = pl.col(GAIN).clip(lower_bound=0.0)
    return [
        part
        for cutoff in _cutoffs_needing(spec, Quantity.IDEAL_DCG)
        for part in sum_parts(
            gain * cut(pl.col(IDEAL_DISCOUNT), IDEAL_POSITION, cutoff), ideal_dcg(cutoff), spec.exact_sums
        )
    ]


def _tie_block_windows(spec: Spec, judged: bool, names: _Names) -> list[pl.Expr]:
    """Under tie bounds, each row's tie block (its rows of equal score, at positions s+1..s+n): s, n and its
    unjudged rows, for the measures whose bound is taken per block in closed form (`Quantity.TIE_BLOCKS`)."""
    block = [*names.group, SCORE]
    return [
        (pl.col(_threshold_position(spec)).min().over(block) - 1).cast(pl.Int64).alias(BLOCK_START),
        pl.len().over(block).alias(BLOCK_SIZE),
        unjudged(judged).sum().over(block).alias(BLOCK_UNJUDGED),
    ]
