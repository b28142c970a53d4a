"""The plan builder: one lazy Polars query computing DCG, NDCG or reciprocal rank per query.

Everything else in the package (namespaces, scikit-learn drop-ins, the Spark adapter) is a shell over
`per_query_plan` and `mean_plan`.

How DCG@k is computed, for a query of n rows:

1. Each row gets a 1-based `position` by descending score (`rank("ordinal").over(query)`, with the tie
   break of the chosen `ties` mode) and a `discount` = 1 / log_b(position + 1), computed once per row;
   a cut-off k zeroes the discounts of positions past k.
2. Deterministic tie modes: DCG@k = sum(gain * discount), one group-by on the query.
   `ties="average"` (scikit-learn): the rows sharing a score occupy a contiguous block of positions, and
   scikit-learn credits that block with (mean gain of the block) * (sum of the block's discounts).  The
   block's discount sum does not depend on how positions are dealt within it, so an arbitrary ordinal
   rank gives it exactly: group by (query, score), then sum(gain) / len * sum(discount) per block, and
   sum the blocks.  Blocks that straddle k get partial credit for free, as positions past k weigh 0; with
   finite cut-offs only the blocks reaching the largest k enter that group-by.
3. Ideal DCG@k: the same sum with positions taken by descending gain (ties there cannot matter, so the
   raw relevance is ranked when the gain grows with it).
4. Reciprocal rank: the smallest position of a relevant row; with `ties="average"` the exact expectation
   over the orders of the first tie block holding a relevant row (`_expected_reciprocal_rank`).

Every step is a window over the query, a group-by, a join of per-query frames or an elementwise
expression, so the plan runs natively in the streaming engine.  The counters for the data checks ride
along in the per-query group-by; `_checks.apply_checks` turns them into errors.
"""

from __future__ import annotations

import itertools
import math

import polars as pl

from ._checks import DataCheck, apply_checks, bad_values, fixed, with_query
from ._options import NO_QUERY_MESSAGE, ZERO_WEIGHTS_MESSAGE, Cutoff, MetricOptions

QUERY = "__lodestar_query"
RELEVANCE = "__lodestar_relevance"
SCORE = "__lodestar_score"
DOC = "__lodestar_doc"
WEIGHT = "__lodestar_weight"
GAIN = "__lodestar_gain"
POSITION = "__lodestar_position"
IDEAL_POSITION = "__lodestar_ideal_position"
DISCOUNT = "__lodestar_discount"
IDEAL_DISCOUNT = "__lodestar_ideal_discount"
HAS_JUDGMENTS = "__lodestar_has_judgments"
IN_RUN = "__lodestar_in_run"
SCORED = "__lodestar_scored"
FIRST_RELEVANT = "__lodestar_first_relevant"
TOO_LONG = "__lodestar_too_long"
UNJUDGED = "__lodestar_unjudged"

ROWS = "__lodestar_rows"
BAD_RELEVANCE = "__lodestar_bad_relevance"
BAD_SCORE = "__lodestar_bad_score"
NEGATIVE_RELEVANCE = "__lodestar_negative_relevance"
UNMAPPED_LABELS = "__lodestar_unmapped_labels"
UNMAPPED_LABEL = "__lodestar_unmapped_label"
NULL_DOCS = "__lodestar_null_docs"
DUPLICATE_DOCS = "__lodestar_duplicate_docs"
DUPLICATE_DOC = "__lodestar_duplicate_doc"
BAD_WEIGHTS = "__lodestar_bad_weights"
WEIGHT_MIN = "__lodestar_weight_min"
WEIGHT_MAX = "__lodestar_weight_max"
UNEQUAL_WEIGHTS = "__lodestar_unequal_weights"
NULL_QUERIES = "__lodestar_null_queries"
NO_RELEVANT = "__lodestar_no_relevant"
QRELS_DUPLICATES = "__lodestar_qrels_duplicates"
QRELS_DUPLICATE_DOC = "__lodestar_qrels_duplicate_doc"
QRELS_BAD_RELEVANCE = "__lodestar_qrels_bad_relevance"

# reciprocal rank with tie averaging packs (start, size, relevant) of a tie block into one integer
_PACK_BITS = 21
MAX_ROWS_PER_QUERY_FOR_AVERAGED_RR = (1 << _PACK_BITS) - 1


def _dcg_column(cutoff: Cutoff) -> str:
    return f"__lodestar_dcg_{cutoff}"


def _ideal_column(cutoff: Cutoff) -> str:
    return f"__lodestar_ideal_{cutoff}"


def _non_finite(column: str, dtype: pl.DataType) -> pl.Expr:
    bad = pl.col(column).is_null()
    if dtype.is_float():
        bad = bad | ~pl.col(column).is_finite()
    return bad


def _gain(o: MetricOptions, relevance: pl.Expr) -> pl.Expr:
    if o.gain == "linear":
        return relevance.cast(pl.Float64)
    if o.gain == "exponential":
        return pl.lit(2.0).pow(relevance.cast(pl.Float64)) - 1.0
    # when/then per label, not replace_strict: that one falls back to the in-memory engine
    relevance = relevance.cast(pl.Float64)
    return pl.coalesce([pl.when(relevance == label).then(pl.lit(value, pl.Float64)) for label, value in o.gain])


def _discount(o: MetricOptions, position: pl.Expr) -> pl.Expr:
    """1 / log_b(position + 1) for 1-based positions."""
    return pl.lit(math.log(o.log_base)) / (position + 1).cast(pl.Float64).log()


def _cut(discount: str, position: str, cutoff: Cutoff) -> pl.Expr:
    """A discount column, 0 past the cut-off."""
    if cutoff is None:
        return pl.col(discount)
    return pl.when(pl.col(position) <= cutoff).then(pl.col(discount)).otherwise(0.0)


def _position(o: MetricOptions) -> pl.Expr:
    """1-based position by descending score, ties broken as `ties` says ("average" needs any order)."""
    score, gain = pl.col(SCORE), pl.col(GAIN)
    if o.ties in ("average", "input"):
        # rank("ordinal") breaks ties by row order: the earlier row first
        return score.rank("ordinal", descending=True).over(QUERY)
    if o.ties == "reverse":
        # reversing the ascending order puts the later of two tied rows first
        return pl.len().over(QUERY) - score.rank("ordinal").over(QUERY) + 1
    tie_break = {"doc": pl.col(DOC), "optimistic": gain, "pessimistic": -gain}[o.ties]
    return pl.struct(score, tie_break).rank("ordinal", descending=True).over(QUERY)


def _ideal_position(o: MetricOptions) -> pl.Expr:
    """1-based position by descending gain.  Ties there cannot change the ideal DCG, so when the gain never
    decreases as the relevance grows, ranking the raw relevance gives the same DCG and is cheaper (often a
    small integer column instead of a Float64 one)."""
    ranked = pl.col(RELEVANCE) if _gain_follows_relevance(o) else pl.col(GAIN)
    return ranked.rank("ordinal", descending=True).over(QUERY)


def _gain_follows_relevance(o: MetricOptions) -> bool:
    if isinstance(o.gain, str):
        return True
    gains = [gain for _, gain in sorted(o.gain)]
    return all(a <= b for a, b in itertools.pairwise(gains))


def _run_rows(frame: pl.LazyFrame, o: MetricOptions) -> pl.LazyFrame:
    """The input reduced to the internal columns: query, relevance, gain, score (and doc, weight)."""
    schema = frame.collect_schema()
    score = pl.col(o.score)
    if schema[o.score].is_float():
        score = score + 0.0  # -0.0 + 0.0 == +0.0, so -0.0 ties with 0.0 as in scikit-learn
    columns = [pl.col(o.query).alias(QUERY), score.alias(SCORE)]
    if o.qrels is None:
        columns.append(pl.col(o.relevance).alias(RELEVANCE))
    if o.doc is not None:
        columns.append(pl.col(o.doc).alias(DOC))
    if o.weight is not None:
        columns.append(pl.col(o.weight).cast(pl.Float64).alias(WEIGHT))
    rows = frame.select(columns)
    if o.qrels is not None:
        judged = _qrels_rows(o).select(QUERY, DOC, RELEVANCE)
        rows = rows.join(judged, on=[QUERY, DOC], how="left").with_columns(pl.col(RELEVANCE).fill_null(0))
    return rows.with_columns(_gain(o, pl.col(RELEVANCE)).alias(GAIN))


def _qrels_rows(o: MetricOptions) -> pl.LazyFrame:
    """Judgments as (query, doc, relevance): negative levels count as 0, as in trec_eval."""
    assert o.qrels is not None
    q = o.qrels
    relevance = pl.col(q.relevance).cast(pl.Float64)
    return q.frame.select(
        pl.col(q.query).alias(QUERY),
        pl.col(q.doc).alias(DOC),
        pl.when(relevance < 0).then(0.0).otherwise(relevance).alias(RELEVANCE),
        relevance.alias("__lodestar_raw_relevance"),
    )


def _check_counters(o: MetricOptions, schema: pl.Schema) -> list[pl.Expr]:
    """Per-row counters for the data checks, summed (or min/maxed) per query by the aggregations."""
    counters = [
        pl.len().alias(ROWS),
        _non_finite(SCORE, schema[SCORE]).sum().alias(BAD_SCORE),
    ]
    if o.qrels is None:
        counters.append(_non_finite(RELEVANCE, schema[RELEVANCE]).sum().alias(BAD_RELEVANCE))
        if o.metric == "ndcg":
            counters.append((pl.col(RELEVANCE).cast(pl.Float64) < 0).sum().alias(NEGATIVE_RELEVANCE))
    if isinstance(o.gain, tuple):
        unmapped = pl.col(GAIN).is_null() & pl.col(RELEVANCE).is_not_null()
        counters.append(unmapped.sum().alias(UNMAPPED_LABELS))
        counters.append(pl.when(unmapped).then(pl.col(RELEVANCE)).drop_nulls().first().alias(UNMAPPED_LABEL))
    if o.doc is not None:
        counters.append(pl.col(DOC).is_null().sum().alias(NULL_DOCS))
        duplicated = pl.col("__lodestar_duplicated")
        counters.append(duplicated.sum().alias(DUPLICATE_DOCS))
        counters.append(pl.when(duplicated).then(pl.col(DOC)).drop_nulls().first().alias(DUPLICATE_DOC))
    if o.weight is not None:
        counters.append(_non_finite(WEIGHT, pl.Float64()).sum().alias(BAD_WEIGHTS))
        counters.append(pl.col(WEIGHT).min().alias(WEIGHT_MIN))
        counters.append(pl.col(WEIGHT).max().alias(WEIGHT_MAX))
    return counters


def _aggregate_per_query(
    rows: pl.LazyFrame, o: MetricOptions, sums: dict[str, tuple[pl.Expr, pl.Expr | None]]
) -> pl.LazyFrame:
    """Group the rows by query.  `sums` maps an output name to (per-row term, per-tie-block term or None).

    Per-row terms, and the check counters, are aggregated by query in one pass.  With `ties="average"` a
    term that has a per-tie-block form is aggregated by (query, score) instead, the blocks summed per query
    and joined on: the block group-by is the expensive one (one group per distinct score), so it carries
    nothing else.
    """
    averaged = o.ties == "average"
    per_row = [row.alias(name) for name, (row, block) in sums.items() if not (averaged and block is not None)]
    per_query = rows.group_by(QUERY).agg(*per_row, *_check_counters(o, rows.collect_schema()))
    per_block = {name: block for name, (_, block) in sums.items() if averaged and block is not None}
    if not per_block:
        return per_query
    reaching = _rows_in_blocks_reaching_the_cutoff(rows, o)
    blocks = reaching.group_by(QUERY, SCORE).agg(block.alias(name) for name, block in per_block.items())
    block_totals = blocks.group_by(QUERY).agg(_sum_blocks(name) for name in per_block)
    return per_query.join(block_totals, on=QUERY, how="left", nulls_equal=True)


def _rows_in_blocks_reaching_the_cutoff(rows: pl.LazyFrame, o: MetricOptions) -> pl.LazyFrame:
    """With finite cut-offs, a tie block starting past the largest k weighs nothing: drop its rows before
    the (query, score) group-by.  The blocks that reach the top k are those scoring at least the score at
    position k (fewer than k documents: every block)."""
    if None in o.cutoffs:
        return rows
    largest = max(k for k in o.cutoffs if k is not None)
    score_at_cutoff = pl.when(pl.col(POSITION) <= largest).then(pl.col(SCORE)).min().over(QUERY)
    return rows.filter(pl.col(SCORE) >= score_at_cutoff)


def _sum_blocks(column: str) -> pl.Expr:
    if column == FIRST_RELEVANT:  # the earliest tie block holding a relevant document
        has_relevant = pl.col(column) % (1 << _PACK_BITS) > 0
        return pl.when(has_relevant).then(pl.col(column)).min()
    return pl.col(column).sum()


def _dcg_sums(o: MetricOptions) -> dict[str, tuple[pl.Expr, pl.Expr | None]]:
    sums: dict[str, tuple[pl.Expr, pl.Expr | None]] = {}
    gain = pl.col(GAIN)
    for cutoff in o.cutoffs:
        discount = _cut(DISCOUNT, POSITION, cutoff)
        # scikit-learn's tie averaging: the block's mean gain times the block's summed discount
        sums[_dcg_column(cutoff)] = ((gain * discount).sum(), gain.sum() / pl.len() * discount.sum())
        if o.metric == "ndcg" and o.qrels is None:
            sums[_ideal_column(cutoff)] = ((gain * _cut(IDEAL_DISCOUNT, IDEAL_POSITION, cutoff)).sum(), None)
    return sums


def _ideal_from_qrels(o: MetricOptions) -> pl.LazyFrame:
    """Ideal DCG per query from all judged documents, retrieved or not (trec_eval), with qrels checks."""
    qrels = _qrels_rows(o).with_columns(_gain(o, pl.col(RELEVANCE)).alias(GAIN))
    qrels = qrels.with_columns(
        _ideal_position(o).alias(IDEAL_POSITION),
        pl.col(DOC).is_duplicated().over(QUERY).alias("__lodestar_duplicated"),
    ).with_columns(_discount(o, pl.col(IDEAL_POSITION)).alias(IDEAL_DISCOUNT))
    raw = pl.col("__lodestar_raw_relevance")
    ideals = [
        (pl.col(GAIN) * _cut(IDEAL_DISCOUNT, IDEAL_POSITION, cutoff)).sum().alias(_ideal_column(cutoff))
        for cutoff in o.cutoffs
    ]
    return qrels.group_by(QUERY).agg(
        *ideals,
        pl.col("__lodestar_duplicated").sum().alias(QRELS_DUPLICATES),
        pl.when(pl.col("__lodestar_duplicated")).then(pl.col(DOC)).drop_nulls().first().alias(QRELS_DUPLICATE_DOC),
        (raw.is_null() | ~raw.is_finite()).sum().alias(QRELS_BAD_RELEVANCE),
        pl.lit(True).alias(HAS_JUDGMENTS),
    )


def _reciprocal_rank_sums(o: MetricOptions) -> dict[str, tuple[pl.Expr, pl.Expr | None]]:
    relevant = pl.col(RELEVANCE).cast(pl.Float64) > o.threshold
    first_relevant = pl.when(relevant).then(pl.col(POSITION)).min()
    # per tie block: (start, size, relevant count) packed so that min() picks the first relevant block
    start = (pl.col(POSITION).min() - 1).cast(pl.Int64)
    packed = (start * (1 << (2 * _PACK_BITS))) + (pl.len().cast(pl.Int64) * (1 << _PACK_BITS)) + relevant.sum()
    return {FIRST_RELEVANT: (first_relevant, packed)}


def _expected_reciprocal_rank(packed: pl.Expr, cutoff: Cutoff) -> pl.Expr:
    """E[1 / position of the first relevant document] over all orders of the first relevant tie block.

    The block starts after `s` documents, holds `n` documents of which `r` are relevant.  The first
    relevant one lands at block offset j with P(J = j) = C(n - j, r - 1) / C(n, r)
                                                      = r / (n - j + 1) * prod_{i<j-1} (n - r - i) / (n - i),
    and contributes 1 / (s + j) when s + j <= k.
    """
    mask = (1 << _PACK_BITS) - 1
    s = packed // (1 << (2 * _PACK_BITS))
    n = (packed // (1 << _PACK_BITS)) % (1 << _PACK_BITS)
    r = packed % (1 << _PACK_BITS)
    assert mask > 0
    last = n - r + 1 if cutoff is None else pl.min_horizontal(n - r + 1, pl.lit(cutoff) - s)
    j = pl.int_ranges(1, pl.max_horizontal(last, 0) + 1, dtype=pl.Int64)
    # survival factor for reaching offset j: prod_{i=0}^{j-2} (n - r - i) / (n - i); the first is 1
    step = ((n - r - j + 1) / (n - j + 1)).list.eval(pl.element().shift(1).fill_null(1.0).cum_prod())
    probability = step * r / (n - j + 1)
    expected = (probability / (s + j)).list.sum()
    return pl.when(packed.is_null()).then(0.0).otherwise(expected)


def _finalise(per_query: pl.LazyFrame, o: MetricOptions) -> pl.LazyFrame:
    metrics = []
    for cutoff in o.cutoffs:
        name = o.column_name(cutoff)
        if o.metric == "dcg":
            metrics.append(pl.col(_dcg_column(cutoff)).alias(name))
        elif o.metric == "ndcg":
            ideal = pl.col(_ideal_column(cutoff))
            no_relevant = None if o.no_relevant == "error" else o.no_relevant
            value = (
                pl.when(ideal == 0).then(pl.lit(no_relevant, pl.Float64)).otherwise(pl.col(_dcg_column(cutoff)) / ideal)
            )
            metrics.append(value.alias(name))
        elif o.ties == "average":
            metrics.append(_expected_reciprocal_rank(pl.col(FIRST_RELEVANT), cutoff).alias(name))
        else:
            first = pl.col(FIRST_RELEVANT)
            in_cut = first.is_not_null() if cutoff is None else first <= cutoff
            metrics.append(pl.when(in_cut).then(1.0 / first.cast(pl.Float64)).otherwise(0.0).alias(name))
    extra = [pl.col(QUERY).is_null().cast(pl.UInt32).alias(NULL_QUERIES)]
    if o.weight is not None:
        extra.append((pl.col(WEIGHT_MIN) != pl.col(WEIGHT_MAX)).cast(pl.UInt32).alias(UNEQUAL_WEIGHTS))
        extra.append(pl.col(WEIGHT_MIN).alias(o.weight))
    if o.metric == "ndcg":
        extra.append((pl.col(_ideal_column(o.cutoffs[0])) == 0).cast(pl.UInt32).alias(NO_RELEVANT))
    if o.metric == "reciprocal_rank" and o.ties == "average":
        extra.append((pl.col(ROWS) > MAX_ROWS_PER_QUERY_FOR_AVERAGED_RR).cast(pl.UInt32).alias(TOO_LONG))
    return per_query.with_columns(*metrics, *extra)


def _data_checks(o: MetricOptions) -> list[DataCheck]:
    checks = [
        DataCheck(NULL_QUERIES, with_query(ValueError, f"query column {o.query!r} has null values."), None),
        DataCheck(BAD_SCORE, bad_values("score", o.score)),
    ]
    if o.qrels is None:
        checks.append(DataCheck(BAD_RELEVANCE, bad_values("relevance", o.relevance)))
        if o.metric == "ndcg":
            checks.append(
                DataCheck(
                    NEGATIVE_RELEVANCE, fixed(ValueError, "ndcg_score should not be used on negative y_true values.")
                )
            )
    else:
        q = o.qrels
        checks.append(DataCheck(QRELS_BAD_RELEVANCE, bad_values("qrels relevance", q.relevance)))
        checks.append(
            DataCheck(
                QRELS_DUPLICATES,
                with_query(
                    ValueError,
                    f"qrels list doc {{value}} twice for query {{query}} ({q.query!r}, {q.doc!r}); "
                    "each (query, doc) pair must be judged once.",
                ),
                QRELS_DUPLICATE_DOC,
            )
        )
    if isinstance(o.gain, tuple):
        checks.append(
            DataCheck(
                UNMAPPED_LABELS,
                with_query(ValueError, "relevance label {value} (query {query}) has no gain in the gain mapping."),
                UNMAPPED_LABEL,
            )
        )
    if o.doc is not None:
        checks.append(
            DataCheck(
                NULL_DOCS,
                with_query(
                    ValueError, f"doc column {o.doc!r} has {{total}} null value(s), the first in query {{query}}."
                ),
            )
        )
        checks.append(
            DataCheck(
                DUPLICATE_DOCS,
                with_query(
                    ValueError,
                    f"query {{query}} lists doc {{value}} more than once (columns {o.query!r}, {o.doc!r}); "
                    "a duplicated (query, doc) pair, often from a join fan-out, would inflate the metric.",
                ),
                DUPLICATE_DOC,
            )
        )
    if o.weight is not None:
        checks.append(DataCheck(BAD_WEIGHTS, bad_values("weight", o.weight)))
        checks.append(
            DataCheck(
                UNEQUAL_WEIGHTS,
                with_query(
                    ValueError,
                    f"weight column {o.weight!r} differs within query {{query}}; "
                    "give every row of a query the same weight.",
                ),
            )
        )
    if o.metric == "reciprocal_rank" and o.ties == "average":
        limit = MAX_ROWS_PER_QUERY_FOR_AVERAGED_RR
        message = f"query {{query}} has more than {limit} rows, the limit of reciprocal_rank with ties='average'."
        checks.append(DataCheck(TOO_LONG, with_query(ValueError, message)))
    if o.metric == "ndcg" and o.no_relevant == "error":
        checks.append(
            DataCheck(
                NO_RELEVANT,
                with_query(
                    ValueError,
                    "query {query} has no relevant document (ideal DCG is 0), and {total} "
                    "query(ies) in all; pass no_relevant=0.0, 1.0 or None to score them.",
                ),
            )
        )
    return checks


def _per_query_unchecked(frame: pl.LazyFrame, o: MetricOptions) -> pl.LazyFrame:
    """Per-query metrics with the check counters, before checks, sorting and the qrels filter."""
    rows = _run_rows(frame, o)
    windows = [_position(o).alias(POSITION)]
    if o.metric == "ndcg" and o.qrels is None:
        windows.append(_ideal_position(o).alias(IDEAL_POSITION))
    if o.doc is not None:
        windows.append(pl.col(DOC).is_duplicated().over(QUERY).alias("__lodestar_duplicated"))
    rows = rows.with_columns(windows)
    if o.metric != "reciprocal_rank":  # one logarithm per row, shared by every cut-off
        discounts = [_discount(o, pl.col(POSITION)).alias(DISCOUNT)]
        if o.metric == "ndcg" and o.qrels is None:
            discounts.append(_discount(o, pl.col(IDEAL_POSITION)).alias(IDEAL_DISCOUNT))
        rows = rows.with_columns(discounts)
    sums = _reciprocal_rank_sums(o) if o.metric == "reciprocal_rank" else _dcg_sums(o)
    per_query = _aggregate_per_query(rows, o, sums)
    if o.qrels is not None:
        per_query = _join_judgments(per_query.with_columns(pl.lit(True).alias(IN_RUN)), o)
    return _finalise(per_query, o)


def _join_judgments(per_query: pl.LazyFrame, o: MetricOptions) -> pl.LazyFrame:
    assert o.qrels is not None
    ideal = _ideal_from_qrels(o)
    if o.metric != "ndcg":
        ideal = ideal.drop(_ideal_column(c) for c in o.cutoffs)
    joined = per_query.join(ideal, on=QUERY, how="full", coalesce=True)
    fill = {HAS_JUDGMENTS: False, IN_RUN: False}
    joined = joined.with_columns(pl.col(name).fill_null(value) for name, value in fill.items())
    zero_filled = [
        c
        for c in joined.collect_schema().names()
        if c.startswith("__lodestar_dcg_")
        or c
        in (
            ROWS,
            BAD_SCORE,
            NULL_DOCS,
            DUPLICATE_DOCS,
            QRELS_DUPLICATES,
            QRELS_BAD_RELEVANCE,
            UNMAPPED_LABELS,
            BAD_WEIGHTS,
        )
    ]
    return joined.with_columns(pl.col(c).fill_null(0) for c in zero_filled)


def _scored_queries(o: MetricOptions) -> pl.Expr:
    """Which per-query rows are reported.  With qrels: judged queries in the run, and judged queries
    missing from the run too when missing_queries='zero'; run queries without judgments never."""
    if o.qrels is None:
        return pl.lit(True)
    if o.qrels.missing_queries == "skip":
        return pl.col(HAS_JUDGMENTS) & pl.col(IN_RUN)
    return pl.col(HAS_JUDGMENTS)


def _checked_per_query(frame: pl.LazyFrame, o: MetricOptions) -> pl.LazyFrame:
    """Every query the plan saw, checked and sorted, with a SCORED flag (and an UNJUDGED one with qrels)."""
    per_query = _per_query_unchecked(frame, o).with_columns(_scored_queries(o).alias(SCORED))
    flags = [SCORED]
    if o.qrels is not None:
        per_query = per_query.with_columns((pl.col(IN_RUN) & ~pl.col(HAS_JUDGMENTS)).alias(UNJUDGED))
        flags.append(UNJUDGED)
    output = [QUERY, *o.metric_columns, *([o.weight] if o.weight else []), *flags]
    return apply_checks(per_query.sort(QUERY, nulls_last=True), QUERY, output, _data_checks(o))


def per_query_plan(frame: pl.LazyFrame, o: MetricOptions) -> pl.LazyFrame:
    """One row per query, sorted by query: the query column, the metric columns, then the weight."""
    checked = _checked_per_query(frame, o)
    output = [QUERY, *o.metric_columns, *([o.weight] if o.weight else [])]
    return checked.filter(pl.col(SCORED)).select(output).rename({QUERY: o.query})


def mean_plan(frame: pl.LazyFrame, o: MetricOptions) -> pl.LazyFrame:
    """One row: the weighted mean of each metric column, the queries that entered it and their weight sum.

    mean = sum(w * m) / sum(w) over queries whose metric is not null (no_relevant=None leaves some out).
    With qrels, also the number of run queries left out because they had no judgments.
    """
    checked = _checked_per_query(frame, o)
    scored = checked.filter(pl.col(SCORED))
    weight = pl.col(o.weight) if o.weight is not None else pl.lit(1.0)
    entered = pl.col(o.metric_columns[0]).is_not_null()
    aggregates = [
        ((weight * pl.col(name)).sum() / weight.filter(pl.col(name).is_not_null()).sum()).alias(name)
        for name in o.metric_columns
    ]
    aggregates += [
        entered.sum().alias("queries"),
        weight.filter(entered).sum().cast(pl.Float64).alias("weight_sum"),
    ]
    summary = scored.select(aggregates)
    output = [*o.metric_columns, "queries", "weight_sum"]
    if o.qrels is not None:
        unjudged = checked.select(pl.col(UNJUDGED).sum().alias("queries_without_judgments"))
        summary = pl.concat([summary, unjudged], how="horizontal")
        output.append("queries_without_judgments")
    summary = summary.with_columns(
        pl.lit(None, pl.Null).alias(QUERY),
        (pl.col("queries") == 0).cast(pl.UInt32).alias("__lodestar_no_queries"),
        ((pl.col("queries") > 0) & (pl.col("weight_sum") == 0)).cast(pl.UInt32).alias("__lodestar_zero_weight"),
    )
    checks = [
        DataCheck(
            "__lodestar_no_queries",
            fixed(ValueError, NO_QUERY_MESSAGE),
        ),
        DataCheck("__lodestar_zero_weight", fixed(ZeroDivisionError, ZERO_WEIGHTS_MESSAGE)),
    ]
    return apply_checks(summary, QUERY, output, checks)
