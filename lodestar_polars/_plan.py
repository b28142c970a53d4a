"""The plan builder: one lazy Polars query computing ranking measures per query (per `by` group and query).

Everything else in the package (namespaces, scikit-learn drop-ins, the Spark adapter, partitions) is a shell
over `per_query_plan` and `mean_plan`.

The user's frame enters through one `select` that renames every column the plan reads to an internal name
(`__lodestar_*`), and leaves through one `select` that names the outputs; in between only internal names
exist, so no user column name can collide with one.  A per-query row is identified by its keys: the `by`
columns, then the query columns.

How the measures are computed, for a query of n rows:

1. Each row gets a 1-based `position` by descending score (`rank("ordinal").over(keys)`, with the tie
   break of the chosen `ties` mode) and, for DCG, a `discount` = 1 / log_b(position + 1); a cut-off k
   zeroes everything past position k.  A row is relevant when its relevance is above `threshold`.
2. Deterministic tie modes: per-row sums, one group-by on the keys.
   DCG@k = sum(gain * discount);  hits@k = relevant rows at positions <= k (P@k = hits / k, R@k = hits / R);
   AP@k = sum over relevant rows at positions p <= k of (relevant rows at positions <= p) / p, divided by R
   (R: relevant rows of the query, or relevant judged documents with qrels: trec_eval's `map`);
   reciprocal rank and success use the position of the first relevant row.
3. `ties="average"`: the exact expectation over every order of the tied documents (McSherry & Najork, ECIR
   2008; scikit-learn's tie averaging for DCG).  The rows sharing a score form a block covering positions
   s+1..s+n, whatever order an ordinal rank deals them in, so block sums of per-position quantities are
   exact.  With r relevant rows in the block and C relevant rows before it:
   - DCG: (mean gain of the block) * (sum of the block's discounts);
   - hits@k: r/n * (positions of the block <= k);
   - AP@k: a relevant document at block offset i has E[relevant at or above it] = C + 1 + (i-1)(r-1)/(n-1),
     so the block adds sum_{p in block, p<=k} [r/n (C+1) + (p-s-1) r(r-1)/(n(n-1))] / p
     = r/n (C+1) D + r(r-1)/(n(n-1)) (M - (s+1) D), with D = sum 1/p and M = count, over p <= k;
   - reciprocal rank and success: only the first block holding a relevant row matters; the first relevant
     row lands at block offset j with P(J=j) = C(n-j, r-1)/C(n, r) (`_first_relevant_distribution`).
   A row in no tie is a block of one: its terms are the deterministic ones, summed with the other per-row
   sums.  Only the tied rows (`is_duplicated` over the query) go to a group-by on (keys, score) that
   computes the block sums once (`_block_sums`) and the block terms from them; with finite cut-offs only
   the blocks reaching the largest k enter it.  For rr and success, the sum over offsets runs as one
   elementwise step per position up to the largest cut-off (`_unrolled_expectations`), or as lists.
4. Ideal DCG@k: the same sum with positions taken by descending gain (ties there cannot matter, so the raw
   relevance is ranked when the gain grows with it).  With qrels, the ideal DCG and R come from every judged
   document of the query, retrieved or not (trec_eval), shared by every `by` group.

With judgments (qrels), each run row gets its judged level by a join on (query, doc); when every measure has
a cut-off and the positions do not read the relevance, the join comes after the positions and takes only
the rows that can count (those within the largest cut-off, or in tie blocks reaching it), while the counts
and checks still read every row.  Several key columns, or one String key, are grouped by one hash of the
keys (`_Names`).

Every step is a window over the keys, a group-by, a join or an elementwise expression, so the plan runs
natively in the streaming engine.  The data checks ride along in the group-bys; `_checks.apply_checks`
turns them into errors.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import NamedTuple

import polars as pl

from . import _mean
from ._checks import DataCheck, apply_checks, bad_values, describe, message, non_finite, quoted
from ._spec import GAIN_KINDS, THRESHOLD_KINDS, Measure, Spec

_P = "__lodestar_"
SCORE = f"{_P}score"
RELEVANCE = f"{_P}relevance"
RAW_RELEVANCE = f"{_P}raw_relevance"
RELEVANT = f"{_P}relevant"
GAIN = f"{_P}gain"
WEIGHT = f"{_P}weight"
POSITION = f"{_P}position"
RELEVANT_POSITION = f"{_P}relevant_position"
IDEAL_POSITION = f"{_P}ideal_position"
DISCOUNT = f"{_P}discount"
IDEAL_DISCOUNT = f"{_P}ideal_discount"
RELEVANT_BEFORE = f"{_P}relevant_before"
DUPLICATED = f"{_P}duplicated"
ROWS = f"{_P}rows"
RELEVANT_COUNT = f"{_P}relevant_count"
JUDGED_RELEVANT = f"{_P}judged_relevant"
FIRST_RELEVANT = f"{_P}first_relevant"
FIRST_PROBABILITY = f"{_P}first_probability"
FIRST_RECIPROCAL = f"{_P}first_reciprocal"
WEIGHT_MIN = f"{_P}weight_min"
WEIGHT_MAX = f"{_P}weight_max"
HAS_JUDGMENTS = f"{_P}has_judgments"
IN_RUN = f"{_P}in_run"
SCORED = f"{_P}scored"
UNJUDGED = f"{_P}unjudged"

# reciprocal rank and success with tie averaging pack (start, size, relevant) of a tie block into one integer
_PACK_BITS = 21
MAX_ROWS_PER_QUERY_FOR_AVERAGED_FIRST_RELEVANT = (1 << _PACK_BITS) - 1


def key(index: int) -> str:
    return f"{_P}key_{index}"


def doc(index: int) -> str:
    return f"{_P}doc_{index}"


def _term(name: str, cutoff: int | None) -> str:
    return f"{_P}{name}_{'all' if cutoff is None else cutoff}"


def _metric(index: int) -> str:
    return f"{_P}metric_{index}"


GROUP = f"{_P}group"
GROUP_CHECK = f"{_P}group_check"

# key dtypes whose values are equal exactly when their hashes' inputs are (no -0.0/0.0 or NaN subtleties)
_HASHABLE_KEYS = (pl.String, pl.Categorical, pl.Enum, pl.Boolean, pl.Date, pl.Datetime, pl.Duration, pl.Time)


class _Names:
    """Internal key names of a spec: all keys (by + query), the by part, the query part, the docs, and the
    `group`: the column(s) the windows and group-bys over the rows use.

    With one key column the group is that column.  With several (by= or a composite query), Polars
    row-encodes them for every window and group-by, and with one String column it hashes the strings for
    each: the group is then one UInt64 column, the hash of the keys (`pl.struct(keys).hash()`: a function of the values
    only, so every branch of the plan computes the same one).  The keys ride along in the per-query
    group-by, which also checks that no two different keys share a hash (`_hash_collision_check`).  Key
    dtypes whose equal values may differ in bits (floats: -0.0 and 0.0) or that nest keep the plain keys.

    Numbering composite keys into one integer id (unique + row index + join) was tried and dropped: that
    numbering depends on row order, and Polars may evaluate the shared input of two branches twice, so two
    branches could number the keys differently (seen with qrels and by=)."""

    def __init__(self, spec: Spec, schema: pl.Schema) -> None:
        self.keys = [key(i) for i in range(len(spec.keys))]
        self.by = self.keys[: len(spec.by)]
        self.query = self.keys[len(spec.by) :]
        self.docs = [doc(i) for i in range(len(spec.doc))]
        dtypes = [schema[name] for name in spec.keys]
        self.hashed = all(_hashable(d) for d in dtypes) and (len(dtypes) > 1 or dtypes[0] == pl.String)
        self.group = [GROUP] if self.hashed else self.keys


def _key_hash(keys: list[str], seed: int) -> pl.Expr:
    return pl.struct(keys).hash(seed)


def _hashable(dtype: pl.DataType) -> bool:
    return dtype.is_integer() or isinstance(dtype, _HASHABLE_KEYS)


# --- reading the rows ---------------------------------------------------------------------------------------


def _gain(spec: Spec, relevance: pl.Expr) -> pl.Expr:
    relevance = relevance.cast(pl.Float64)
    if spec.gain == "linear":
        return relevance
    if spec.gain == "exponential":
        return pl.lit(2.0).pow(relevance) - 1.0
    # when/then per label, not replace_strict: that one falls back to the in-memory engine
    return pl.coalesce([pl.when(relevance == label).then(pl.lit(value, pl.Float64)) for label, value in spec.gain])


def _judged_relevance(relevance: pl.Expr) -> pl.Expr:
    """Judged levels as trec_eval reads them: a negative level marks a document judged unjudged (in the pool,
    not assessed), null here as an unjudged document's is."""
    relevance = relevance.cast(pl.Float64)
    return pl.when(relevance >= 0).then(relevance)


def _run_rows(run: pl.LazyFrame, spec: Spec, names: _Names, with_relevance: bool) -> pl.LazyFrame:
    """The input reduced to internal columns: keys (and the group), docs, score, weight, and the relevance
    when the run holds it."""
    columns = [pl.col(name).alias(internal) for name, internal in zip(spec.keys, names.keys, strict=True)]
    columns += [pl.col(name).alias(internal) for name, internal in zip(spec.doc, names.docs, strict=True)]
    columns.append(spec.score.expr.alias(SCORE))
    if with_relevance:
        columns.append(spec.relevance.expr.alias(RELEVANCE))
    if spec.weight is not None:
        columns.append(spec.weight.expr.cast(pl.Float64).alias(WEIGHT))
    rows = run.select(columns)
    if names.hashed:
        rows = rows.with_columns(_key_hash(names.keys, 0).alias(GROUP), _key_hash(names.keys, 1).alias(GROUP_CHECK))
    if rows.collect_schema()[SCORE].is_float():
        rows = rows.with_columns(pl.col(SCORE) + 0.0)  # -0.0 + 0.0 == +0.0: -0.0 ties with 0.0, as in scikit-learn
    return rows


def _with_judged_relevance(
    rows: pl.LazyFrame, qrels: pl.LazyFrame, spec: Spec, names: _Names, keep_order: bool
) -> pl.LazyFrame:
    """Each run row gets its judged relevance: null when unjudged (or judged at a negative level), which
    `_with_gain_and_relevant` turns into gain 0 and not relevant, as trec_eval does."""
    judged = _qrels_rows(qrels, spec, names).select(*names.query, *names.docs, RELEVANCE)
    on = [*names.query, *names.docs]
    # keep_order: ties="input" / "reverse" read the run's row order, and a plain join may deal rows out of order
    return rows.join(judged, on=on, how="left", maintain_order="left" if keep_order else "none")


def _with_gain_and_relevant(rows: pl.LazyFrame, spec: Spec, judged: bool) -> pl.LazyFrame:
    """The gain and the relevant flag of each row.  With judgments, an unjudged document (null relevance) has
    gain 0 and is never relevant, whatever the gain mapping or the threshold (trec_eval)."""
    derived = []
    relevance = pl.col(RELEVANCE)
    if spec.uses(*GAIN_KINDS):
        gain = _gain(spec, relevance)
        derived.append((pl.when(relevance.is_null()).then(0.0).otherwise(gain) if judged else gain).alias(GAIN))
    if spec.uses(*THRESHOLD_KINDS):
        relevant = relevance.cast(pl.Float64) > spec.threshold
        derived.append((relevant.fill_null(False) if judged else relevant).alias(RELEVANT))
    return rows.with_columns(derived) if derived else rows


def _joins_relevance_late(spec: Spec, judged: bool) -> bool:
    """With qrels, join the relevance onto the rows that can count only, after the positions: possible when
    the positions do not read the relevance (not optimistic / pessimistic ties) and every measure has a
    cut-off, so that only the tie blocks reaching the largest one count."""
    if not judged or spec.ties in ("optimistic", "pessimistic"):
        return False
    return all(m.cutoff is not None for m in spec.measures)


def _qrels_rows(qrels: pl.LazyFrame, spec: Spec, names: _Names) -> pl.LazyFrame:
    """Judgments as (query keys, docs, relevance): the raw level kept for the checks."""
    columns = [pl.col(name).alias(internal) for name, internal in zip(spec.query, names.query, strict=True)]
    columns += [pl.col(name).alias(internal) for name, internal in zip(spec.doc, names.docs, strict=True)]
    raw = spec.relevance.expr
    columns += [_judged_relevance(raw).alias(RELEVANCE), raw.alias(RAW_RELEVANCE)]
    return qrels.select(columns)


# --- positions and discounts ---------------------------------------------------------------------------------


def _splits_positions(spec: Spec) -> bool:
    """Tie bounds are taken per measure: with ties='optimistic' or 'pessimistic', the measures that read the
    gain (best order: most gainful first) and those that count relevant rows (relevant first) may need two
    different orders of a tie block, so the latter get positions of their own (`RELEVANT_POSITION`)."""
    return spec.ties in ("optimistic", "pessimistic") and spec.uses(*GAIN_KINDS) and spec.uses(*THRESHOLD_KINDS)


def _threshold_position(spec: Spec) -> str:
    """The position column the measures counting relevant rows read."""
    return RELEVANT_POSITION if _splits_positions(spec) else POSITION


def _position(spec: Spec, names: _Names, *, by_relevant: bool = False) -> pl.Expr:
    """1-based position by descending score, ties broken as `ties` says ("average" needs any order); the
    bounds order a tie block by gain, or by the relevant flag when no measure reads a gain or `by_relevant`."""
    score, keys = pl.col(SCORE), names.group
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
        uses_gain = spec.uses(*GAIN_KINDS) and not by_relevant
        gain = pl.col(GAIN) if uses_gain else pl.col(RELEVANT).cast(pl.Int8)
        tie_break = [gain if spec.ties == "optimistic" else -gain]
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


def _within(position: str, cutoff: int | None) -> pl.Expr:
    # a column, not a literal: inside an aggregation `lit(True).sum()` would count 1, not the rows
    return pl.col(position) > 0 if cutoff is None else pl.col(position) <= cutoff


def _cut(value: pl.Expr, position: str, cutoff: int | None) -> pl.Expr:
    """A per-row value, 0 past the cut-off."""
    if cutoff is None:
        return value
    return pl.when(pl.col(position) <= cutoff).then(value).otherwise(0.0)


# a cut-off at or past this position keeps every row: no query has 2**40 rows, and the plan's integer
# arithmetic on positions stays far from overflowing
_LONGEST_CUTOFF = 1 << 40


def _cut_at(measure: Measure) -> int | None:
    """The position a measure is cut at in the plan: its k, or `_LONGEST_CUTOFF` for any larger k (a k past
    the list scores the whole list)."""
    return None if measure.cutoff is None else min(measure.cutoff, _LONGEST_CUTOFF)


def _cutoffs(spec: Spec, *kinds: str) -> list[int | None]:
    return list(dict.fromkeys(_cut_at(m) for m in spec.measures if m.kind in kinds))


# --- per-query and per-block terms ---------------------------------------------------------------------------


class Term(NamedTuple):
    """How a per-query sum is computed: `row`, elementwise per row, summed (or its least value taken, when
    `least`) over the query's rows; with tie averaging, over its rows in no tie, while `block`, elementwise over
    the block sums of `_block_sums` (None: ties cannot change the sum), gives the tie blocks' part.  One
    (keys, score) group-by over the tied rows computes the block sums once for every term and cut-off (Polars
    does not share a sub-expression between the aggregations of a group-by)."""

    row: pl.Expr
    block: pl.Expr | None
    least: bool = False


Terms = dict[str, Term]

TIED = f"{_P}tied"
BLOCK_SIZE = f"{_P}block_size"
BLOCK_RELEVANT = f"{_P}block_relevant"
BLOCK_START = f"{_P}block_start"
BLOCK_GAIN = f"{_P}block_gain"
BLOCK_BEFORE = f"{_P}block_before"


def _block_sums(spec: Spec) -> list[pl.Expr]:
    """Per tie block: its size n, relevant rows r, start s (positions s+1..s+n), gain sum, relevant rows
    ranked above it, and per cut-off its summed discount, positions within k and summed 1/position."""
    sums = [pl.len().alias(BLOCK_SIZE)]
    if spec.uses("ndcg", "dcg"):
        sums.append(pl.col(GAIN).sum().alias(BLOCK_GAIN))
        for c in _dcg_cutoffs(spec):
            sums.append(_cut(pl.col(DISCOUNT), POSITION, c).sum().alias(_term("block_discount", c)))
    if spec.uses("p", "r", "ap", "rr", "success"):
        sums.append(pl.col(RELEVANT).sum().alias(BLOCK_RELEVANT))
    if spec.uses("ap", "rr", "success"):
        sums.append((pl.col(POSITION).min() - 1).cast(pl.Int64).alias(BLOCK_START))
    if spec.uses("ap"):
        sums.append(pl.col(RELEVANT_BEFORE).min().alias(BLOCK_BEFORE))  # its first relevant row's
    for c in dict.fromkeys([*_hits_cutoffs(spec), *_cutoffs(spec, "ap")]):
        sums.append(_within(POSITION, c).sum().alias(_term("block_within", c)))
    for c in _cutoffs(spec, "ap"):
        inverse = _within(POSITION, c).cast(pl.Float64) / pl.col(POSITION).cast(pl.Float64)
        sums.append(inverse.sum().alias(_term("block_inverse", c)))
    return sums


def _dcg_cutoffs(spec: Spec) -> list[int | None]:
    return _cutoffs(spec, "ndcg", "dcg")


def _hits_cutoffs(spec: Spec) -> list[int | None]:
    """Cut-offs of P and R that tie averaging changes (every row counts without one)."""
    return [c for c in _cutoffs(spec, "p", "r") if c is not None]


def _terms(spec: Spec) -> Terms:
    terms: Terms = {}
    gain, relevant = pl.col(GAIN), pl.col(RELEVANT)
    n = pl.col(BLOCK_SIZE).cast(pl.Float64)
    for cutoff in _dcg_cutoffs(spec):
        discount = _cut(pl.col(DISCOUNT), POSITION, cutoff)
        # scikit-learn's tie averaging: the block's mean gain times the block's summed discount
        block = pl.col(BLOCK_GAIN) / n * pl.col(_term("block_discount", cutoff))
        terms[_term("dcg", cutoff)] = Term(gain * discount, block)
    for cutoff in _cutoffs(spec, "p", "r"):
        within = _within(_threshold_position(spec), cutoff)
        hits = None
        if cutoff is not None:
            hits = pl.col(BLOCK_RELEVANT).cast(pl.Float64) / n * pl.col(_term("block_within", cutoff)).cast(pl.Float64)
        terms[_term("hits", cutoff)] = Term((relevant & within).cast(pl.Float64), hits)
    for cutoff in _cutoffs(spec, "ap"):
        terms[_term("ap", cutoff)] = _average_precision_term(cutoff, _threshold_position(spec))
    if spec.uses("rr", "success"):
        terms[FIRST_RELEVANT] = _first_relevant_term(spec.ties == "average", _threshold_position(spec))
    return terms


def _average_precision_term(cutoff: int | None, position_column: str) -> Term:
    relevant, position = pl.col(RELEVANT), pl.col(position_column).cast(pl.Float64)
    within = _within(position_column, cutoff)
    # a relevant row at position p with c relevant rows above it adds (c + 1) / p
    per_row = (relevant & within).cast(pl.Float64) * (pl.col(RELEVANT_BEFORE).cast(pl.Float64) + 1.0) / position
    r = pl.col(BLOCK_RELEVANT).cast(pl.Float64)
    n = pl.col(BLOCK_SIZE).cast(pl.Float64)
    before = pl.col(BLOCK_BEFORE).cast(pl.Float64)
    inverse_positions = pl.col(_term("block_inverse", cutoff))
    positions_within = pl.col(_term("block_within", cutoff)).cast(pl.Float64)
    start = pl.col(BLOCK_START).cast(pl.Float64)
    pairs = pl.when(n > 1).then(r * (r - 1.0) / (n * (n - 1.0))).otherwise(0.0)
    block = r / n * (before + 1.0) * inverse_positions + pairs * (positions_within - (start + 1.0) * inverse_positions)
    return Term(per_row.fill_null(0.0), pl.when(r > 0).then(block).otherwise(0.0))


def _pack(start: pl.Expr, size: pl.Expr, relevant_rows: pl.Expr) -> pl.Expr:
    """A tie block's (start, size, relevant rows) as one integer whose least value over the blocks holding a
    relevant row is the first of them."""
    return start * (1 << (2 * _PACK_BITS)) + size * (1 << _PACK_BITS) + relevant_rows


def _first_relevant_term(averaged: bool, position_column: str) -> Term:
    """The first relevant position; with tie averaging, the first tie block holding a relevant row, packed
    (`_pack`): a relevant row in no tie is a block of one."""
    relevant, position = pl.col(RELEVANT), pl.col(position_column).cast(pl.Int64)
    if not averaged:
        return Term(pl.when(relevant).then(position), None, least=True)
    alone = _pack(position - 1, pl.lit(1, pl.Int64), pl.lit(1, pl.Int64))
    size, relevant_rows = pl.col(BLOCK_SIZE).cast(pl.Int64), pl.col(BLOCK_RELEVANT).cast(pl.Int64)
    block = pl.when(relevant_rows > 0).then(_pack(pl.col(BLOCK_START), size, relevant_rows))
    return Term(pl.when(relevant).then(alone), block, least=True)


def _unpack_first_block(packed: pl.Expr) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    """(s, n, r) of the first tie block holding a relevant row: it starts after s documents and holds n
    documents, r of them relevant."""
    s = packed // (1 << (2 * _PACK_BITS))
    n = (packed // (1 << _PACK_BITS)) % (1 << _PACK_BITS)
    return s, n, packed % (1 << _PACK_BITS)


def _first_relevant_distribution(packed: pl.Expr, cutoff: int | None) -> tuple[pl.Expr, pl.Expr]:
    """Offsets j = 1.. (a list) and P(first relevant row at block offset j) (a list) in the first tie block
    holding a relevant row (`_unpack_first_block`): P(J = j) = C(n - j, r - 1) / C(n, r)
    = r / (n - j + 1) * prod_{i<j-1} (n - r - i) / (n - i).  Offsets past the cut-off are left out."""
    s, n, r = _unpack_first_block(packed)
    last = n - r + 1 if cutoff is None else pl.min_horizontal(n - r + 1, pl.lit(cutoff) - s)
    j = pl.int_ranges(1, pl.max_horizontal(last, 0) + 1, dtype=pl.Int64)
    # survival factor for reaching offset j: prod_{i=0}^{j-2} (n - r - i) / (n - i); the first is 1
    step = ((n - r - j + 1) / (n - j + 1)).list.eval(pl.element().shift(1).fill_null(1.0).cum_prod())
    return j, step * r / (n - j + 1)


def _ideal_columns(spec: Spec) -> list[str]:
    return [_term("ideal", cutoff) for cutoff in _cutoffs(spec, "ndcg")]


def _ideal_terms(spec: Spec) -> list[pl.Expr]:
    return [
        (pl.col(GAIN) * _cut(pl.col(IDEAL_DISCOUNT), IDEAL_POSITION, cutoff)).sum().alias(_term("ideal", cutoff))
        for cutoff in _cutoffs(spec, "ndcg")
    ]


def _rows_that_count(rows: pl.LazyFrame, spec: Spec, names: _Names) -> pl.LazyFrame:
    """With finite cut-offs, a row past the largest k weighs nothing, and with tie averaging so does a tie
    block starting past it: drop them.  The blocks that reach the top k are those scoring at least the score
    at position k (fewer than k documents: every block).  Whatever ranks above a kept row is kept."""
    cutoffs = [_cut_at(m) for m in spec.measures]
    if None in cutoffs:
        return rows
    largest = max(c for c in cutoffs if c is not None)
    if spec.ties != "average":
        return rows.filter(pl.col(POSITION) <= largest)
    score_at_cutoff = pl.when(pl.col(POSITION) <= largest).then(pl.col(SCORE)).min().over(names.group)
    return rows.filter(pl.col(SCORE) >= score_at_cutoff)


def _aggregate(
    rows: pl.LazyFrame,
    terms_rows: pl.LazyFrame | None,
    spec: Spec,
    names: _Names,
    judged: bool,
    checks: list[DataCheck],
) -> pl.LazyFrame:
    """Group the rows by keys: the per-row terms and the check counters in one pass.  With `ties="average"`,
    the rows in no tie count there as they are, and the tied rows of the blocks that reach the largest cut-off
    go to a (keys, score) group-by (`_block_sums`), whose block terms are summed per query, joined on and
    added.  `terms_rows`, when given, are the rows that count, with their relevance joined late
    (`_joins_relevance_late`): the terms come from them, the counters from every row."""
    terms = _terms(spec)
    averaged = _averages_blocks(spec)
    per_row = [
        _reduce(_alone(term.row) if averaged and term.block is not None else term.row, term.least).alias(name)
        for name, term in terms.items()
    ]
    extra = [pl.len().alias(ROWS)]
    if spec.uses("r", "ap") and not judged:
        extra.append(pl.col(RELEVANT).sum().cast(pl.Float64).alias(RELEVANT_COUNT))
    if spec.weight is not None:
        extra += [pl.col(WEIGHT).min().alias(WEIGHT_MIN), pl.col(WEIGHT).max().alias(WEIGHT_MAX)]
    if spec.uses("ndcg") and not judged:
        extra += _ideal_terms(spec)
    counters = [expression for check in checks for expression in check.aggregations()]
    if names.hashed:
        extra += [pl.col(k).first() for k in names.keys]
    if terms_rows is None:
        per_query = rows.group_by(names.group).agg(*per_row, *extra, *counters)
    else:
        per_query = rows.group_by(names.group).agg(*extra, *counters)
        if per_row:
            row_totals = terms_rows.group_by(names.group).agg(per_row)
            per_query = per_query.join(row_totals, on=names.group, how="left", nulls_equal=True)
    if not averaged:
        return per_query
    # the tied rows of the blocks that reach the largest cut-off: `_rows_that_count` over the tied rows alone
    # (a block reaching it has a row within it, so scores at least the least tied row within it)
    tied = rows.filter(pl.col(TIED)) if terms_rows is None else terms_rows.filter(pl.col(TIED))
    if terms_rows is None:
        tied = _rows_that_count(tied, spec, names)
    # name -> (block term, least)
    per_block = {name: (term.block, term.least) for name, term in terms.items() if term.block is not None}
    blocks = tied.group_by(*names.group, SCORE).agg(_block_sums(spec))
    blocks = blocks.select(*names.group, *(block.alias(_block(name)) for name, (block, _) in per_block.items()))
    block_totals = blocks.group_by(names.group).agg(
        _reduce(pl.col(_block(name)), least) for name, (_, least) in per_block.items()
    )
    joined = per_query.join(block_totals, on=names.group, how="left", nulls_equal=True)
    added = [
        (pl.min_horizontal(name, _block(name)) if least else pl.col(name) + pl.col(_block(name)).fill_null(0.0)).alias(
            name
        )
        for name, (_, least) in per_block.items()
    ]
    return joined.with_columns(added).drop(_block(name) for name in per_block)


def _averages_blocks(spec: Spec) -> bool:
    return spec.ties == "average" and any(term.block is not None for term in _terms(spec).values())


def _alone(row: pl.Expr) -> pl.Expr:
    """A per-row term for the rows in no tie (with tie averaging); the tied rows count by block."""
    return pl.when(~pl.col(TIED)).then(row)


def _reduce(value: pl.Expr, least: bool) -> pl.Expr:
    return value.min() if least else value.sum()


def _block(name: str) -> str:
    return f"{name}_blocks"


# --- the data checks, each with its counter -----------------------------------------------------------------


def _describe_keys(names: list[str], by: list[str]) -> Callable[[dict[str, object]], str]:
    """Describe a row's keys for a message: `17`, `(session=3, query='a')`, `17 (model='bm25')`."""

    def where(keys: dict[str, object]) -> str:
        values = list(keys.values())
        by_values, query_values = values[: len(by)], values[len(by) :]
        if len(names) == 1:
            text = describe(query_values[0]) if query_values else "?"
        else:
            text = "(" + ", ".join(f"{n}={describe(v)}" for n, v in zip(names, query_values, strict=False)) + ")"
        if by:
            text += " (" + ", ".join(f"{n}={describe(v)}" for n, v in zip(by, by_values, strict=False)) + ")"
        return text

    return where


def _first(value: pl.Expr, failing: pl.Expr) -> pl.Expr:
    return pl.when(failing).then(value).drop_nulls().first()


def _doc_shown(spec: Spec, names: _Names) -> pl.Expr:
    """A doc id as a message quotes it: the value, or with several doc columns a struct under the user's names."""
    if len(names.docs) == 1:
        return pl.col(names.docs[0])
    return pl.struct(pl.col(internal).alias(name) for internal, name in zip(names.docs, spec.doc, strict=True))


def _doc_value(docs: list[str]) -> pl.Expr:
    return pl.col(docs[0]) if len(docs) == 1 else pl.struct(docs)


def _row_checks(spec: Spec, schema: pl.Schema, names: _Names, judged: bool) -> list[DataCheck]:
    """Checks counted over each query's rows, in the per-query group-by.  With judgments, the labels are
    checked with the judgments (`_qrels_checks`)."""
    checks = [DataCheck(f"{_P}bad_score", non_finite(SCORE, schema[SCORE]).sum(), bad_values("score", spec.score.name))]
    if not judged:
        relevance = spec.relevance.name
        checks.append(
            DataCheck(
                f"{_P}bad_relevance", non_finite(RELEVANCE, schema[RELEVANCE]).sum(), bad_values("relevance", relevance)
            )
        )
        if spec.uses("ndcg"):
            checks.append(
                DataCheck(
                    f"{_P}negative_relevance",
                    (pl.col(RELEVANCE).cast(pl.Float64) < 0).sum(),
                    message(ValueError, "ndcg_score should not be used on negative y_true values."),
                )
            )
    if spec.uses("ndcg", "dcg") and not judged:  # judged labels are checked with the judgments
        checks += _gain_checks(spec, "")
    if spec.doc:
        doc_names = ", ".join(quoted(d) for d in spec.doc)
        null_doc = pl.any_horizontal(pl.col(d).is_null() for d in names.docs)
        checks.append(
            DataCheck(
                f"{_P}null_docs",
                null_doc.sum(),
                message(
                    ValueError, f"doc column {doc_names} has {{total}} null value(s), the first in query {{query}}."
                ),
            )
        )
        query_names = ", ".join(quoted(q) for q in spec.query)
        checks.append(
            DataCheck(
                f"{_P}duplicate_docs",
                pl.col(DUPLICATED).sum(),
                message(
                    ValueError,
                    f"query {{query}} lists doc {{value}} more than once (columns {query_names}, {doc_names}); "
                    "a duplicated (query, doc) pair, often from a join fan-out, would inflate the metric.",
                ),
                _first(_doc_shown(spec, names), pl.col(DUPLICATED)),
            )
        )
    if names.hashed:
        checks.append(_hash_collision_check(spec, names))
    if spec.weight is not None:
        checks.append(
            DataCheck(
                f"{_P}bad_weights", non_finite(WEIGHT, pl.Float64()).sum(), bad_values("weight", spec.weight.name)
            )
        )
    return checks


def _hash_collision_check(spec: Spec, names: _Names) -> DataCheck:
    """Two different keys with the same 64-bit hash would share one group (about G**2 / 2**65 to happen for
    G keys: 3e-8 for a million).  Their rows would then disagree on a second, independently seeded hash of
    the keys: counting the groups where it varies finds such a pair unless both hashes collide at once."""
    check = pl.col(GROUP_CHECK)
    keys = ", ".join(quoted(name) for name in spec.keys)
    return DataCheck(
        f"{_P}hash_collision",
        (check.min() != check.max()).cast(pl.UInt32),
        message(
            RuntimeError,
            f"two different keys ({keys}) share one 64-bit hash, near {{query}}, which this plan groups by: a "
            "hash collision, not a data error; cast a key column to another dtype (the query ids to String, "
            "say), which changes the hash.",
        ),
    )


def _gain_checks(spec: Spec, source: str) -> list[DataCheck]:
    relevance, gain = pl.col(RELEVANCE), pl.col(GAIN)
    checks = []
    if isinstance(spec.gain, tuple):
        unmapped = gain.is_null() & relevance.is_not_null()
        checks.append(
            DataCheck(
                f"{_P}unmapped_labels",
                unmapped.sum(),
                message(
                    ValueError,
                    f"{source}relevance label {{value}} (query {{query}}) has no gain in the gain mapping.",
                ),
                _first(relevance, unmapped),
            )
        )
    if spec.gain == "exponential":
        # cast: Decimal relevance has no is_finite
        overflowing = relevance.cast(pl.Float64).is_finite() & ~gain.is_finite()
        checks.append(
            DataCheck(
                f"{_P}gain_overflow",
                overflowing.sum(),
                message(
                    ValueError,
                    f"{source}relevance {{value}} (query {{query}}) has an exponential gain 2 ** relevance - 1 "
                    "that overflows Float64.",
                ),
                _first(relevance, overflowing),
            )
        )
    return checks


def _qrels_checks(spec: Spec, names: _Names) -> list[DataCheck]:
    """Checks counted over each query's judgments, in the qrels group-by."""
    q = ", ".join(quoted(name) for name in spec.query)
    d = ", ".join(quoted(name) for name in spec.doc)
    raw = pl.col(RAW_RELEVANCE)
    duplicated = pl.col(DUPLICATED)
    checks = [
        DataCheck(
            f"{_P}qrels_bad_relevance",
            (raw.is_null() | ~raw.cast(pl.Float64).is_finite()).sum(),
            bad_values("qrels relevance", spec.relevance.name),
        ),
        DataCheck(
            f"{_P}qrels_null_docs",
            pl.any_horizontal(pl.col(name).is_null() for name in names.docs).sum(),
            message(ValueError, f"qrels doc column {d} has {{total}} null value(s), the first in query {{query}}."),
        ),
        DataCheck(
            f"{_P}qrels_duplicates",
            duplicated.sum(),
            message(
                ValueError,
                f"qrels list doc {{value}} twice for query {{query}} ({q}, {d}); each (query, doc) pair must be "
                "judged once.",
            ),
            _first(_doc_shown(spec, names), duplicated),
        ),
    ]
    if spec.uses("ndcg", "dcg"):
        # the qrels relevance column is named: the run may have a relevance column of its own
        checks += _gain_checks(spec, f"qrels relevance column {quoted(spec.relevance.name)}: ")
    return checks


def _final_checks(spec: Spec, names: _Names, metrics: list[str], judged: bool) -> list[DataCheck]:
    """Checks on the per-query rows."""
    query_names = ", ".join(quoted(q) for q in spec.query)
    checks = [
        DataCheck(
            f"{_P}null_queries",
            pl.any_horizontal(pl.col(k).is_null() for k in names.query).cast(pl.UInt32),
            message(ValueError, f"query column {query_names} has null values."),
        )
    ]
    if spec.weight is not None:
        checks.append(
            DataCheck(
                f"{_P}unequal_weights",
                (pl.col(WEIGHT_MIN) != pl.col(WEIGHT_MAX)).cast(pl.UInt32),
                message(
                    ValueError,
                    f"weight column {quoted(spec.weight.name)} differs within query {{query}}; "
                    "give every row of a query the same weight.",
                ),
            )
        )
    if spec.ties == "average" and spec.uses("rr", "success"):
        limit = MAX_ROWS_PER_QUERY_FOR_AVERAGED_FIRST_RELEVANT
        checks.append(
            DataCheck(
                f"{_P}too_long",
                (pl.col(ROWS) > limit).cast(pl.UInt32),
                message(
                    ValueError,
                    f"query {{query}} has more than {limit} rows, the limit of reciprocal rank and success with "
                    "ties='average'.",
                ),
            )
        )
    if spec.no_relevant == "error" and spec.uses("ndcg", "r", "ap"):
        checks.append(
            DataCheck(
                f"{_P}no_relevant",
                _no_relevant(spec, judged).fill_null(False).cast(pl.UInt32),
                message(ValueError, _no_relevant_message(spec)),
            )
        )
    bad = pl.any_horizontal(pl.col(m).is_not_null() & ~pl.col(m).is_finite() for m in metrics)
    columns = ", ".join(m.column for m in spec.measures)
    checks.append(
        DataCheck(
            f"{_P}metric_not_finite",
            bad.fill_null(False).cast(pl.UInt32),
            message(
                ValueError,
                f"a measure ({columns}) is not finite for query {{query}}: the gains or their sums overflow Float64.",
            ),
        )
    )
    return checks


def _no_relevant_message(spec: Spec) -> str:
    if spec.uses("r", "ap"):
        what = f"no document with relevance above {spec.threshold:g}"
        what += " or an ideal DCG of 0" if spec.uses("ndcg") else ""
    else:
        what = "no relevant document (ideal DCG is 0)"
    return (
        f"query {{query}} has {what}, and {{total}} query(ies) in all; pass no_relevant=0.0, 1.0 or None to score them."
    )


def _relevant_total(judged: bool) -> pl.Expr:
    return pl.col(JUDGED_RELEVANT if judged else RELEVANT_COUNT)


def _no_relevant(spec: Spec, judged: bool) -> pl.Expr:
    conditions = []
    if spec.uses("ndcg"):
        conditions.append(pl.col(_term("ideal", _cutoffs(spec, "ndcg")[0])) == 0)
    if spec.uses("r", "ap"):
        conditions.append(_relevant_total(judged) == 0)
    return pl.any_horizontal(conditions)


# --- judgments -----------------------------------------------------------------------------------------------


def _judgments(qrels: pl.LazyFrame, spec: Spec, names: _Names) -> pl.LazyFrame:
    """Per query of the qrels: the ideal DCG from all judged documents (retrieved or not, as trec_eval), the
    number of relevant judged documents, checked."""
    rows = _qrels_rows(qrels, spec, names)
    windows = [_doc_value(names.docs).is_duplicated().over(names.query).alias(DUPLICATED)]
    if spec.uses("ndcg", "dcg"):
        rows = rows.with_columns(_gain(spec, pl.col(RELEVANCE)).alias(GAIN))
    if spec.uses("ndcg"):
        windows.append(_ideal_position(spec, names.query).alias(IDEAL_POSITION))
    rows = rows.with_columns(windows)
    if spec.uses("ndcg"):
        rows = rows.with_columns(_discount(spec, pl.col(IDEAL_POSITION)).alias(IDEAL_DISCOUNT))
    checks = _qrels_checks(spec, names)
    aggregations = [(pl.col(RELEVANCE) > spec.threshold).sum().cast(pl.Float64).alias(JUDGED_RELEVANT)]
    if spec.uses("ndcg"):
        aggregations += _ideal_terms(spec)
    counters = [expression for check in checks for expression in check.aggregations()]
    per_query = rows.group_by(names.query).agg(*aggregations, *counters)
    null_query = DataCheck(
        f"{_P}qrels_null_queries",
        pl.any_horizontal(pl.col(k).is_null() for k in names.query).cast(pl.UInt32),
        message(ValueError, f"qrels query column {', '.join(quoted(q) for q in spec.query)} has null values."),
    )
    per_query = per_query.with_columns(null_query.aggregations())
    output = [*names.query, *_ideal_columns(spec), JUDGED_RELEVANT]
    where = _describe_keys(list(spec.query), [])
    checked = apply_checks(
        per_query.sort(names.query, nulls_last=True), where, names.query, output, [null_query, *checks]
    )
    return checked.with_columns(pl.lit(True).alias(HAS_JUDGMENTS))


def _join_judgments(
    per_query: pl.LazyFrame, judgments: pl.LazyFrame, spec: Spec, names: _Names, groups: pl.LazyFrame | None
) -> pl.LazyFrame:
    """Run queries get their judgments; with missing_queries='zero', every judged query missing from a
    group's run joins that group with nothing retrieved."""
    in_run = per_query.with_columns(pl.lit(True).alias(IN_RUN))
    joined = in_run.join(judgments, on=names.query, how="left", nulls_equal=True)
    if spec.missing_queries == "zero":
        if names.by:
            if groups is None:  # the groups of this run; a partition of a larger run is given them all
                groups = per_query.select(names.by).unique()
            else:
                groups = groups.select(pl.col(n).alias(k) for n, k in zip(spec.by, names.by, strict=True)).unique()
            candidates = groups.join(judgments, how="cross")
        else:
            candidates = judgments
        missing = candidates.join(per_query.select(names.keys), on=names.keys, how="anti", nulls_equal=True)
        joined = pl.concat([joined, missing.with_columns(pl.lit(False).alias(IN_RUN))], how="diagonal_relaxed")
    # a query missing from the run retrieved nothing: its sums and counters are 0 (its first relevant
    # position stays null), its ideal DCG and relevant count come from the judgments
    from_judgments = {*names.keys, HAS_JUDGMENTS, IN_RUN, FIRST_RELEVANT, JUDGED_RELEVANT, *_ideal_columns(spec)}
    # only numeric columns: a check's value column (a doc id, possibly Enum or Categorical) cannot take a 0,
    # and is read only when its counter, filled with 0 here, is positive
    numbers = [
        name for name, dtype in joined.collect_schema().items() if name not in from_judgments and dtype.is_numeric()
    ]
    return joined.with_columns(pl.col(HAS_JUDGMENTS).fill_null(False), *(pl.col(name).fill_null(0) for name in numbers))


# --- the measures ----------------------------------------------------------------------------------------------


def _value(measure: Measure, spec: Spec, judged: bool) -> pl.Expr:
    c, kind = _cut_at(measure), measure.kind
    no_relevant = pl.lit(None if spec.no_relevant == "error" else spec.no_relevant, pl.Float64)
    if kind == "dcg":
        return pl.col(_term("dcg", c))
    if kind == "ndcg":
        ideal = pl.col(_term("ideal", c))
        return pl.when(ideal == 0).then(no_relevant).otherwise(pl.col(_term("dcg", c)) / ideal)
    if kind == "p":
        hits = pl.col(_term("hits", c))
        # P@k divides by k, past the list too (trec_eval); a k beyond Float64 makes it 0
        length = pl.col(ROWS).cast(pl.Float64) if measure.cutoff is None else pl.lit(_as_float(measure.cutoff))
        return pl.when(length == 0).then(0.0).otherwise(hits / length)
    if kind in ("r", "ap"):
        relevant = _relevant_total(judged)
        numerator = pl.col(_term("hits" if kind == "r" else "ap", c))
        return pl.when(relevant == 0).then(no_relevant).otherwise(numerator / relevant)
    first = pl.col(FIRST_RELEVANT)
    if spec.ties == "average":
        # `_with_first_relevant_expectations`; null when no tie block holds a relevant row
        return pl.col(_term(f"expected_{kind}", c)).fill_null(0.0)
    within = first.is_not_null() if c is None else first <= c
    hit = 1.0 / first.cast(pl.Float64) if kind == "rr" else pl.lit(1.0)
    return pl.when(within).then(hit).otherwise(0.0)


def _as_float(value: int) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf


# the largest cut-off up to which `_with_first_relevant_expectations` sums in one elementwise step per position
_UNROLLED_OFFSETS = 64


def _with_first_relevant_expectations(per_query: pl.LazyFrame, spec: Spec) -> pl.LazyFrame:
    """With tie averaging, E[1 / position of the first relevant row] (rr) and P(it is within k) (success)
    per cut-off: sums over the block offsets j of P(J = j) (`_first_relevant_distribution`).  With cut-offs up
    to `_UNROLLED_OFFSETS`, one elementwise step per position (`_unrolled_expectations`); otherwise as lists
    (several times slower: `list.eval` runs per query)."""
    if spec.ties != "average" or not spec.uses("rr", "success"):
        return per_query
    wanted: list[tuple[str, int | None]] = list(
        dict.fromkeys((m.kind, _cut_at(m)) for m in spec.measures if m.kind in ("rr", "success"))
    )
    first = pl.col(FIRST_RELEVANT)
    finite = [c for _, c in wanted if c is not None]
    if len(finite) == len(wanted) and max(finite) <= _UNROLLED_OFFSETS:
        return _unrolled_expectations(per_query, first, wanted)
    largest = None if len(finite) < len(wanted) else max(finite)
    offsets, probability = _first_relevant_distribution(first, largest)
    start = first // (1 << (2 * _PACK_BITS))
    per_query = per_query.with_columns(
        probability.alias(FIRST_PROBABILITY), (probability / (start + offsets)).alias(FIRST_RECIPROCAL)
    )
    expectations = []
    for kind, c in wanted:
        terms = pl.col(FIRST_RECIPROCAL if kind == "rr" else FIRST_PROBABILITY)
        if c is not None:
            terms = terms.list.head(pl.max_horizontal(pl.lit(c) - start, 0))
        # + 0.0: an empty list (the block starts past k) sums to -0.0
        expectations.append((terms.list.sum() + 0.0).alias(_term(f"expected_{kind}", c)))
    return per_query.with_columns(expectations).drop(FIRST_PROBABILITY, FIRST_RECIPROCAL)


def _unrolled_expectations(
    per_query: pl.LazyFrame, first: pl.Expr, wanted: list[tuple[str, int | None]]
) -> pl.LazyFrame:
    """`_with_first_relevant_expectations` for cut-offs up to `_UNROLLED_OFFSETS`, one elementwise step per
    position t = 1, 2, ...: once the block has started (t > s, offset j = t - s), P(J = j) = survival * r /
    (n - j + 1) is added, over t, to E[1 / position] and to P(position <= t), which are the rr@t and
    success@t of the cut-offs equal to t; the survival factor prod_{i<j} (n - r - i) / (n - i) then moves on
    (it reaches 0 past offset n - r + 1).  Each step is its own `with_columns`, so the expressions stay
    small, and costs the same whatever the number of cut-offs."""
    s, n, r = (part.cast(pl.Float64) for part in _unpack_first_block(first))
    survival, reciprocal, probability = f"{_P}survival", f"{_P}reciprocal_sum", f"{_P}probability_sum"
    per_query = per_query.with_columns(
        pl.lit(1.0).alias(survival), pl.lit(0.0).alias(reciprocal), pl.lit(0.0).alias(probability)
    )
    survive = pl.col(survival)
    by_cutoff: dict[int, list[pl.Expr]] = {}
    for kind, c in wanted:
        assert c is not None
        by_cutoff.setdefault(c, []).append(
            pl.col(reciprocal if kind == "rr" else probability).alias(_term(f"expected_{kind}", c))
        )
    for t in range(1, max(by_cutoff) + 1):
        started, remaining = s < t, (n - (t - s) + 1).clip(lower_bound=1.0)  # j = t - s; n - j + 1
        step = pl.when(started).then(survive * r / remaining).otherwise(0.0)  # P(J = t - s)
        moved = pl.when(started).then(survive * (remaining - r).clip(lower_bound=0.0) / remaining).otherwise(survive)
        per_query = per_query.with_columns(
            (pl.col(reciprocal) + step / t).alias(reciprocal),
            (pl.col(probability) + step).alias(probability),
            moved.alias(survival),
        )
        if t in by_cutoff:
            per_query = per_query.with_columns(by_cutoff[t])
    return per_query.drop(survival, reciprocal, probability)


def _with_term_columns(rows: pl.LazyFrame, spec: Spec, names: _Names, judged: bool, ap_average: bool) -> pl.LazyFrame:
    """The per-row columns the terms read: discounts, and for AP the relevant rows ranked above (with tie
    averaging already among the windows, unless `ap_average`)."""
    derived = []
    if spec.uses("ndcg", "dcg"):  # one logarithm per row, shared by every cut-off
        derived.append(_discount(spec, pl.col(POSITION)).alias(DISCOUNT))
    if spec.uses("ndcg") and not judged:
        derived.append(_discount(spec, pl.col(IDEAL_POSITION)).alias(IDEAL_DISCOUNT))
    if spec.uses("ap") and (spec.ties != "average" or ap_average):
        derived.append(_relevant_before(spec, names).alias(RELEVANT_BEFORE))
    return rows.with_columns(derived) if derived else rows


def _flagged_per_query(
    run: pl.LazyFrame, qrels: pl.LazyFrame | None, spec: Spec, groups: pl.LazyFrame | None = None
) -> tuple[pl.LazyFrame, _Names]:
    """Every per-query row the plan saw, checked and sorted by keys: keys, metrics (internal names), weight,
    and the SCORED (and UNJUDGED) flags."""
    names = _Names(spec, run.collect_schema())
    judged = qrels is not None
    late = _joins_relevance_late(spec, judged)
    rows = _run_rows(run, spec, names, with_relevance=not judged)
    if qrels is not None and not late:
        rows = _with_judged_relevance(rows, qrels, spec, names, keep_order=spec.ties in ("input", "reverse"))
    if not late:
        rows = _with_gain_and_relevant(rows, spec, judged)
    windows = [_position(spec, names).alias(POSITION)]
    if _splits_positions(spec):
        windows.append(_position(spec, names, by_relevant=True).alias(RELEVANT_POSITION))
    if spec.uses("ndcg") and not judged:
        windows.append(_ideal_position(spec, names.group).alias(IDEAL_POSITION))
    if spec.doc:
        windows.append(_doc_value(names.docs).is_duplicated().over(names.group).alias(DUPLICATED))
    if spec.uses("ap") and spec.ties == "average" and not late:  # reads the scores only: shares the groups
        windows.append(_relevant_before(spec, names).alias(RELEVANT_BEFORE))
    if _averages_blocks(spec):  # the rows in a tie block of two or more
        windows.append(pl.col(SCORE).is_duplicated().over(names.group).alias(TIED))
    rows = rows.with_columns(windows)
    terms_rows = None
    if qrels is not None and late:
        terms_rows = _with_judged_relevance(_rows_that_count(rows, spec, names), qrels, spec, names, keep_order=False)
        terms_rows = _with_term_columns(
            _with_gain_and_relevant(terms_rows, spec, judged), spec, names, judged, ap_average=True
        )
    else:
        rows = _with_term_columns(rows, spec, names, judged, ap_average=False)
    checks = _row_checks(spec, rows.collect_schema(), names, judged)
    per_query = _aggregate(rows, terms_rows, spec, names, judged, checks)
    if qrels is not None:
        per_query = _join_judgments(per_query, _judgments(qrels, spec, names), spec, names, groups)
    metrics = [_metric(i) for i in range(len(spec.measures))]
    per_query = _with_first_relevant_expectations(per_query, spec)
    per_query = per_query.with_columns(
        _mean.positive_zero(_value(m, spec, judged)).alias(name) for m, name in zip(spec.measures, metrics, strict=True)
    )
    final = _final_checks(spec, names, metrics, judged)
    flags = [SCORED]
    if qrels is None:
        scored = pl.lit(True)
    else:
        scored = pl.col(HAS_JUDGMENTS) & (pl.col(IN_RUN) if spec.missing_queries == "skip" else pl.lit(True))
        flags.append(UNJUDGED)
    per_query = per_query.with_columns(
        *(expression for check in final for expression in check.aggregations()),
        scored.alias(SCORED),
        *([(pl.col(IN_RUN) & ~pl.col(HAS_JUDGMENTS)).alias(UNJUDGED)] if qrels is not None else []),
    )
    if spec.weight is not None:
        per_query = per_query.with_columns(_mean.positive_zero(pl.col(WEIGHT_MIN)).alias(WEIGHT))
    output = [*names.keys, *metrics, *([WEIGHT] if spec.weight is not None else []), *flags]
    where = _describe_keys(list(spec.query), list(spec.by))
    checked = apply_checks(per_query.sort(names.keys, nulls_last=True), where, names.keys, output, [*checks, *final])
    return checked, names


def _outputs(spec: Spec, names: _Names) -> list[pl.Expr]:
    output = [pl.col(internal).alias(name) for internal, name in zip(names.keys, spec.keys, strict=True)]
    output += [pl.col(_metric(i)).alias(m.column) for i, m in enumerate(spec.measures)]
    if spec.weight is not None:
        output.append(pl.col(WEIGHT).alias(spec.weight.name))
    return output


def per_query_plan(run: pl.LazyFrame, qrels: pl.LazyFrame | None, spec: Spec) -> pl.LazyFrame:
    """One row per (by..., query), sorted by them: the by columns, the query columns, the measures, the weight."""
    checked, names = _flagged_per_query(run, qrels, spec)
    return checked.filter(pl.col(SCORED)).select(_outputs(spec, names))


def flag_columns(spec: Spec) -> tuple[str, str]:
    """Names for the SCORED and UNJUDGED flags of `flagged_plan` that no output column has."""
    taken = {*spec.keys, *spec.metric_columns, *([spec.weight.name] if spec.weight is not None else [])}
    scored, unjudged = SCORED, UNJUDGED
    while scored in taken or unjudged in taken:
        scored, unjudged = scored + "_", unjudged + "_"
    return scored, unjudged


def flagged_plan(
    run: pl.LazyFrame, qrels: pl.LazyFrame | None, spec: Spec, groups: pl.LazyFrame | None
) -> pl.LazyFrame:
    """Every per-query row, under the output names, with the SCORED and UNJUDGED flags (named by
    `flag_columns`), for an engine that computes the means itself (Spark).  `groups` gives the by groups of
    the whole run to a partition of it."""
    checked, names = _flagged_per_query(run, qrels, spec, groups)
    scored, unjudged = flag_columns(spec)
    flag = pl.col(UNJUDGED) if qrels is not None else pl.lit(False)
    return checked.select(*_outputs(spec, names), pl.col(SCORED).alias(scored), flag.alias(unjudged))


def mean_plan(run: pl.LazyFrame, qrels: pl.LazyFrame | None, spec: Spec) -> pl.LazyFrame:
    """One row per `by` group (one row without by): the weighted mean of each measure, `queries` (the queries
    that entered it), `weight_sum`, and with qrels `queries_without_judgments`; see `_mean`."""
    checked, names = _flagged_per_query(run, qrels, spec)
    metrics = [_metric(i) for i in range(len(spec.measures))]
    result = _mean.means(
        checked,
        names.by,
        list(spec.by),
        metrics,
        WEIGHT if spec.weight is not None else None,
        spec.weight.name if spec.weight is not None else None,
        pl.col(SCORED),
        pl.col(UNJUDGED) if qrels is not None else None,
    )
    return result.rename({internal: m.column for internal, m in zip(metrics, spec.measures, strict=True)})
