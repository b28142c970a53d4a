"""The plan builder: one lazy Polars query computing ranking measures per query (per `by` group and query).

Everything else in the package (namespaces, scikit-learn drop-ins, the Spark adapter, partitions) is a shell
over `per_query_plan` and `mean_plan`.

The user's frame enters through one `select` that renames every column the plan reads to an internal name
(`__lodestar_*`), and leaves through one `select` that names the outputs; in between only internal names
exist, so no user column name can collide with one.  A per-query row is identified by its keys: the `by`
columns, then the query columns.

The measures themselves live in `measures/`, one module each (`measures/__init__.py`): each declares the
shared quantities it needs, its per-query terms and its finish.  This module only orchestrates: it asks the
registry which quantities the measures of a call need (`_needs`), computes each once, sums the union of their
terms (`_terms`; a term two measures share, such as DCG@k for ndcg and dcg, is summed once), runs the
per-query steps they derive (`_with_derived`) and finishes each measure with its own expression.  For a
query of n rows:

1. Each row gets a 1-based `position` by descending score (`rank("ordinal").over(keys)`, with the tie
   break of the chosen `ties` mode) and, when a measure needs them, a `discount` = 1 / log_b(position + 1),
   its gain, its relevant flag (relevance above `threshold`), the relevant rows ranked above it, and its
   ideal position and discount.  With ties="optimistic"/"pessimistic", the measures reading the gain and
   those counting relevant rows may order a tie block differently: the latter get positions of their own.
2. Deterministic tie modes: each term's row form, summed (or its least value taken) in one group-by on the
   keys, with the relevant count, the ideal DCG and the data checks.  When every measure of the call has a
   cut-off and reads only the rows within it (ndcg, dcg: `_rows_within_cutoffs`), that group-by reads only
   the rows ranked within the largest cut-off in the run's or the ideal order, and the row checks are counted
   over each query's failing rows, found among every row (`_with_row_checks`).
3. `ties="average"`: the exact expectation over every order of the tied documents (McSherry & Najork, ECIR
   2008; scikit-learn's tie averaging for DCG).  The rows sharing a score form a block covering positions
   s+1..s+n, whatever order an ordinal rank deals them in, so block sums of per-position quantities are
   exact; each measure module gives its terms' block form from them (and says why in its docstring).  A row
   in no tie is a block of one: its block term is its row term.  Only the rows of the queries holding a tie
   (fewer distinct scores than rows: `_in_tied_query`) go to a group-by on (keys, score) that computes every
   block sum once (`_block_sums`), and the block terms from them (of a query longer than the largest
   cut-off, only the tie blocks reaching it: `_blocks_reaching`); the other queries' rows count in the row
   sums.  The two branches fork from the windows' output and each computes its rows' discounts after the
   fork: the streaming engine holds the rows one branch has not read yet, and the discounts are 16 bytes a row.
   With the relevance joined late (below), every row that counts goes to that group-by (a row in no tie is a
   block of one), so the tied flag needs no window over every row.
4. Measures that read prefixes in position order (trec_eval's G, ndcg_rel, Rndcg, rbp) get them from windows
   ordered by position (`Running`, the run's and the ideal order's prefixes, with the relevant rows ranked
   above in the deterministic tie modes, in one context) before the group-by.  Without judgments the ideal's
   come from the query's gains sorted inside those windows; with them they are joined on the position.
5. Ideal DCG@k: the same sum over the positive gains with positions taken by descending gain (ties there
   cannot matter, so the raw relevance is ranked when the gain grows with it).  With qrels, the ideal DCG and
   R come from every judged document of the query, retrieved or not (trec_eval), shared by every `by` group.

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

import functools
import itertools
import math
import weakref
from collections.abc import Callable, Sequence

import polars as pl

from . import _mean
from ._checks import DataCheck, apply_checks, bad_values, describe, message, non_finite, quoted, row_check
from ._exact_sum import exact_sum, sum_parts, with_exact_totals
from ._spec import Measure, Spec, join_dtype
from .measures._base import (
    BLOCK_SIZE,
    BLOCK_START,
    BLOCK_UNJUDGED,
    BOUNDARIES,
    BOUNDARY_WEIGHT_AT,
    CONTINUATION,
    CUMULATIVE_DCG,
    CUMULATIVE_GAIN,
    DISCOUNT,
    ERR_MAX_GRADE,
    GAIN,
    GAIN_HIGH,
    IDEAL_DCG_AT,
    IDEAL_DISCOUNT,
    IDEAL_EXCESS_AT,
    IDEAL_POSITION,
    IN_RUN,
    JUDGED_BEFORE,
    JUDGED_RELEVANT,
    POOLED,
    POOLED_BEFORE,
    POSITION,
    POSITIVE_GAIN_TOTAL,
    POSITIVE_GAINS,
    PREFIX,
    RELEVANCE,
    RELEVANT,
    RELEVANT_BEFORE,
    RELEVANT_COUNT,
    RELEVANT_POSITION,
    ROW_NONRELEVANT_TOTAL,
    ROW_RELEVANT_TOTAL,
    ROWS,
    TIED,
    Context,
    Definition,
    Derived,
    NoRelevant,
    Quantity,
    Running,
    Term,
    cut,
    cut_at,
    ideal_dcg,
    ideal_err,
    stopping_probability,
    unjudged,
)
from .measures._registry import REGISTRY

_P = PREFIX
SCORE = f"{_P}score"
RAW_RELEVANCE = f"{_P}raw_relevance"
WEIGHT = f"{_P}weight"
DUPLICATED = f"{_P}duplicated"
WEIGHT_MIN = f"{_P}weight_min"
WEIGHT_MAX = f"{_P}weight_max"
HAS_JUDGMENTS = f"{_P}has_judgments"
SCORED = f"{_P}scored"
UNJUDGED = f"{_P}unjudged"
ERR_IDEAL_POSITION = f"{_P}err_ideal_position"
ERR_IDEAL_CONTINUATION = f"{_P}err_ideal_continuation"
JUDGED_DOC = f"{_P}judged_doc"


def key(index: int) -> str:
    return f"{_P}key_{index}"


def doc(index: int) -> str:
    return f"{_P}doc_{index}"


def _metric(index: int) -> str:
    return f"{_P}metric_{index}"


GROUP = f"{_P}group"

# key dtypes whose values are equal exactly when their hashes' inputs are (no -0.0/0.0 or NaN subtleties)
_HASHABLE_KEYS = (pl.String, pl.Categorical, pl.Enum, pl.Boolean, pl.Date, pl.Datetime, pl.Duration, pl.Time)


class _Names:
    """Internal key names of a spec: all keys (by + query), the by part, the query part, the docs, and the
    `group`: the column(s) the windows and group-bys over the rows use.

    With one key column the group is that column.  With several (by= or a composite query), Polars
    row-encodes them for every window and group-by, and with one String column it hashes the strings for
    each: the group is then one UInt64 column, the hash of the keys (`pl.struct(keys).hash()`: a function of the values
    only, so every branch of the plan computes the same one).  The keys themselves do not ride through the
    windows: each group's key values come from the distinct keys of the run, hashed again and joined to the
    per-query rows (`_group_keys`), where two different keys sharing one hash are found
    (`_hash_collision_check`).  Key dtypes whose equal values may differ in bits (floats: -0.0 and 0.0) or that
    nest keep the plain keys.

    One to three keys that are each a String, Categorical, Enum or integer (`packed`: a `by` column and an
    integer query, a String query, a `by` column beside a composite query of two columns) get an exact group
    instead wherever their codes fit (`_packed_group`), read back from the group itself; only the rows whose keys
    do not fit (a negative or huge integer; among three keys, any code from 2**21 - 1) are hashed, and only their
    distinct keys are looked up.  Without the hash's collision check over every row's keys, a `by=` call over 2M
    shuffled rows took a fifth less CPU (two keys), a quarter less (three keys).

    Numbering composite keys into one integer id (unique + row index + join) was tried and dropped: that
    numbering depends on row order, and Polars may evaluate the shared input of two branches twice, so two
    branches could number the keys differently (seen with qrels and by=)."""

    def __init__(self, spec: Spec, schema: pl.Schema, qrels_schema: pl.Schema | None = None) -> None:
        self.keys = [key(i) for i in range(len(spec.keys))]
        # query and doc columns whose run and judgments dtypes differ (integers of different widths): both
        # sides are cast to the dtype they join in, and the query columns back to the run's on the way out
        self.join_dtypes: dict[str, pl.DataType] = {}
        if qrels_schema is not None:
            for role, columns in (("query", spec.query), ("doc", spec.doc)):
                for name in columns:
                    if schema[name] != qrels_schema[name]:
                        self.join_dtypes[name] = join_dtype(role, name, schema[name], qrels_schema[name])
        self.run_dtypes = {name: schema[name] for name in spec.query if name in self.join_dtypes}
        self.by = self.keys[: len(spec.by)]
        self.query = self.keys[len(spec.by) :]
        self.docs = [doc(i) for i in range(len(spec.doc))]
        self.dtypes = [self.join_dtypes.get(name, schema[name]) for name in spec.keys]
        self.hashed = all(_hashable(d) for d in self.dtypes) and (len(self.dtypes) > 1 or self.dtypes[0] == pl.String)
        # up to three keys, each a String, Categorical, Enum or integer: the group packs their codes (`_packed_group`)
        self.packed = self.hashed and len(self.dtypes) <= _MOST_PACKED_KEYS and all(_packable(d) for d in self.dtypes)
        self.group = [GROUP] if self.hashed else self.keys

    def joined(self, name: str) -> pl.Expr:
        """A query or doc column as it joins the judgments: cast to `join_dtypes`' dtype where it has one."""
        column = pl.col(name)
        return column.cast(self.join_dtypes[name]) if name in self.join_dtypes else column

    def output(self, internal: str, name: str) -> pl.Expr:
        """A key column under its user name, in the run's dtype (a query column widened to join is narrowed
        back, strictly: a judged query missing from the run whose id the run's dtype cannot hold fails)."""
        column = pl.col(internal)
        if name in self.run_dtypes:
            column = column.cast(self.run_dtypes[name], strict=True)
        return column.alias(name)


def _key_hash(keys: list[str]) -> pl.Expr:
    return pl.struct(keys).hash(0)


# a packed group (`_packed_group`): one slot of 63 // count bits per key (31 bits for two keys, 21 for three;
# four keys would get 15 bits, too few for most ids); the top bit marks a group that is a hash
_MOST_PACKED_KEYS = 3
_HASHED_BIT = 1 << 63


def _slot_bits(count: int) -> int:
    """Bits per slot for `count` keys; one key alone (a String query) keeps the 31 bits of two."""
    return 63 // max(count, 2)


def _packable(dtype: pl.DataType) -> bool:
    return dtype.is_integer() or isinstance(dtype, (pl.String, pl.Categorical, pl.Enum))


def _slot(name: str, dtype: pl.DataType, bits: int) -> pl.Expr:
    """A key's slot of `bits` bits: 0 for null, else its code + 1, where the code is a String's code in Polars'
    global Categorical (the same string, the same code, in every branch of one query), a Categorical's or an
    Enum's own code, or a non-negative integer; null where the code does not fit the slot (a negative integer
    too)."""
    column = pl.col(name)
    if dtype == pl.String:
        code = column.cast(pl.Categorical).to_physical().cast(pl.UInt64)
    elif isinstance(dtype, (pl.Categorical, pl.Enum)):
        code = column.to_physical().cast(pl.UInt64)
    else:
        code = pl.when(column >= 0).then(column).cast(pl.UInt64)
    fits = column.is_null() | (code < (1 << bits) - 1)
    return pl.when(fits).then((code + 1).fill_null(0))


def _packed_group(keys: list[str], dtypes: list[pl.DataType]) -> pl.Expr:
    """Up to three keys' slots side by side (`_slot`), the first key's highest: a different group for every
    different key, no hash collision possible; a row whose key does not fit its slot gets the keys' hash with
    the top bit set instead, whose collisions are checked (`_group_keys`)."""
    bits = _slot_bits(len(keys))
    first, *others = (_slot(key, dtype, bits) for key, dtype in zip(keys, dtypes, strict=True))
    packed = first
    for slot in others:
        packed = packed * (1 << bits) + slot
    return packed.fill_null(_key_hash(keys) | _HASHED_BIT)


def _unpacked_key(index: int, count: int, dtype: pl.DataType) -> pl.Expr:
    """Key `index` of `count` read back from a packed group: null where it is null or the group a hash."""
    group = pl.col(GROUP)
    bits = _slot_bits(count)
    shift = bits * (count - 1 - index)
    slot = group // (1 << shift) if shift else group  # the first key's slot is the highest: nothing above it
    slot = slot % (1 << bits) if index else slot
    code = pl.when((group < _HASHED_BIT) & (slot > 0)).then(slot - 1)
    if dtype == pl.String:
        return code.cast(pl.UInt32).cat.to(pl.Categorical).cast(pl.String)
    if isinstance(dtype, (pl.Categorical, pl.Enum)):
        return code.cast(pl.Series(dtype=dtype).to_physical().dtype).cat.to(dtype)
    return code.cast(dtype)


def _hashable(dtype: pl.DataType) -> bool:
    return dtype.is_integer() or isinstance(dtype, _HASHABLE_KEYS)


# --- the measures of a call ----------------------------------------------------------------------------------


# what the builder asks of a call's measures over and over, built once per measure or per call (a plan of
# trec_eval's all_trec asked for some 9,000 definitions and 4,000 quantity sets: half its building time)
_CALLS: weakref.WeakKeyDictionary[Spec, tuple[list[tuple[Definition, Measure]], frozenset[Quantity]]] = (
    weakref.WeakKeyDictionary()
)


def _measures_of(spec: Spec) -> tuple[list[tuple[Definition, Measure]], frozenset[Quantity]]:
    """The call's (definition, measure) pairs and the quantities they need, built once per call."""
    known = _CALLS.get(spec)
    if known is None:
        definitions = [(_definition(m), m) for m in spec.measures]
        quantities = frozenset(q for definition, _ in definitions for q in definition.quantities)
        known = _CALLS[spec] = (definitions, quantities)
    return known


def _definitions(spec: Spec) -> list[tuple[Definition, Measure]]:
    return _measures_of(spec)[0]


@functools.lru_cache(maxsize=4096)
def _definition(measure: Measure) -> Definition:
    """A measure's definition at its level and options (`at` and `configured` make new frozen definitions)."""
    return REGISTRY[measure.kind].at(measure.level).configured(dict(measure.options))


def _needs(spec: Spec, quantity: Quantity) -> bool:
    """Whether a measure of the call needs a shared quantity."""
    return quantity in _measures_of(spec)[1]


def _cutoffs_needing(spec: Spec, quantity: Quantity) -> list[int | None]:
    """The cut-offs (as `cut_at` takes them) of the measures that need a per-cut-off quantity."""
    return list(dict.fromkeys(cut_at(m.cutoff) for d, m in _definitions(spec) if quantity in d.quantities))


def _context(spec: Spec, judged: bool) -> Context:
    return Context(
        spec.ties,
        judged,
        _threshold_position(spec),
        spec.threshold,
        spec.no_relevant,
        spec.relevance.name,
        spec.exact_sums,
    )


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
    columns = [names.joined(name).alias(internal) for name, internal in zip(spec.keys, names.keys, strict=True)]
    columns += [names.joined(name).alias(internal) for name, internal in zip(spec.doc, names.docs, strict=True)]
    score = spec.score.expr
    if run.select(score).collect_schema().dtypes()[0].is_float():
        score = score + 0.0  # -0.0 + 0.0 == +0.0: -0.0 ties with 0.0, as in scikit-learn
    # in the select, not a later with_columns: the windows over the score then share one context (and the
    # groups Polars computes for it) with those over the relevance
    columns.append(score.alias(SCORE))
    if with_relevance:
        columns.append(spec.relevance.expr.alias(RELEVANCE))
    if spec.weight is not None:
        columns.append(spec.weight.expr.cast(pl.Float64).alias(WEIGHT))
    rows = run.select(columns)
    if names.packed:
        rows = rows.with_columns(_packed_group(names.keys, names.dtypes).alias(GROUP))
    elif names.hashed:
        rows = rows.with_columns(_key_hash(names.keys).alias(GROUP))
    return rows


def _with_judged_relevance(
    rows: pl.LazyFrame, qrels: pl.LazyFrame, spec: Spec, names: _Names, keep_order: bool
) -> pl.LazyFrame:
    """Each run row gets its judged relevance: null when unjudged (or judged at a negative level), which
    `_with_gain_and_relevant` turns into gain 0 and not relevant, as trec_eval does."""
    # without the raw level the select differs from the judgments side's, so Polars caches the judgments'
    # source for both rather than one select's output (3% less CPU and peak memory in a paired probe on 10M
    # judged rows; within noise in ab.py, 2026-12-03: benchmarks/RESULTS.md)
    judged = _qrels_rows(qrels, spec, names, raw_level=False)
    pooled = _needs(spec, Quantity.POOLED_BEFORE)
    if pooled:  # in the qrels at any level, negative ones included
        judged = judged.with_columns(pl.lit(True).alias(POOLED))
    on = [*names.query, *names.docs]
    # keep_order: ties="input" / "reverse" read the run's row order, and a plain join may deal rows out of order
    joined = rows.join(judged, on=on, how="left", maintain_order="left" if keep_order else "none")
    return joined.with_columns(pl.col(POOLED).fill_null(False)) if pooled else joined


def _with_gain_and_relevant(rows: pl.LazyFrame, spec: Spec, judged: bool) -> pl.LazyFrame:
    """The gain and the relevant flag of each row.  With judgments, an unjudged document (null relevance) has
    gain 0 and is never relevant, whatever the gain mapping or the threshold (trec_eval)."""
    derived = []
    relevance = pl.col(RELEVANCE)
    if _needs(spec, Quantity.GAIN):
        gain = _gain(spec, relevance)
        derived.append((pl.when(relevance.is_null()).then(0.0).otherwise(gain) if judged else gain).alias(GAIN))
    if _needs(spec, Quantity.RELEVANT):
        relevant = relevance.cast(pl.Float64) > spec.threshold
        derived.append((relevant.fill_null(False) if judged else relevant).alias(RELEVANT))
    return rows.with_columns(derived) if derived else rows


def _joins_relevance_late(spec: Spec, judged: bool) -> bool:
    """With qrels, join the relevance onto the rows that can count only, after the positions: possible when
    the positions do not read the relevance (not optimistic / pessimistic ties) and every measure has a
    cut-off, so that only the tie blocks reaching the largest one count."""
    if not judged or spec.ties in ("optimistic", "pessimistic"):
        return False
    # a measure reading its query's totals on every row has no cut-off, so never joins late
    return all(m.cutoff is not None for m in spec.measures)


def _qrels_rows(qrels: pl.LazyFrame, spec: Spec, names: _Names, raw_level: bool = True) -> pl.LazyFrame:
    """Judgments as (query keys, docs, relevance), with the raw level for the checks unless told not to."""
    columns = [names.joined(name).alias(internal) for name, internal in zip(spec.query, names.query, strict=True)]
    columns += [names.joined(name).alias(internal) for name, internal in zip(spec.doc, names.docs, strict=True)]
    raw = spec.relevance.expr
    columns.append(_judged_relevance(raw).alias(RELEVANCE))
    if raw_level:
        columns.append(raw.alias(RAW_RELEVANCE))
    return qrels.select(columns)


# --- the retrieved documents that count (max_retrieved, judged_only) ------------------------------------------


def _first_retrieved(rows: pl.LazyFrame, spec: Spec, names: _Names, limit: int) -> pl.LazyFrame:
    """The first `limit` rows of each query in the tie-broken order (trec_eval -M cuts after its sort).  A row
    whose score is null or not finite stays, so that the score check sees it."""
    # max_retrieved comes with an ordered tie mode only, in which the judged flag orders nothing
    position = _position(spec, names, judged=False)
    bad_score = non_finite(SCORE, rows.collect_schema()[SCORE])
    return rows.filter((position <= limit) | bad_score)


def _judged_retrieved(rows: pl.LazyFrame, qrels: pl.LazyFrame, spec: Spec, names: _Names) -> pl.LazyFrame:
    """The rows whose document is judged at a level >= 0 (trec_eval -J), in their order.  A row with a null or
    duplicated doc id stays, so that the doc checks see it."""
    on = [*names.query, *names.docs]
    judged = (
        _qrels_rows(qrels, spec, names)
        .filter(pl.col(RELEVANCE).is_not_null())
        .select(on)
        .unique()
        .with_columns(pl.lit(True).alias(JUDGED_DOC))
    )
    keep_order = spec.ties in ("input", "reverse")
    marked = rows.join(judged, on=on, how="left", maintain_order="left" if keep_order else "none")
    checked_doc = pl.any_horizontal(pl.col(d).is_null() for d in names.docs) | _doc_value(
        names.docs
    ).is_duplicated().over(names.group)
    return marked.filter(pl.col(JUDGED_DOC).is_not_null() | checked_doc).drop(JUDGED_DOC)


def _emptied_queries(retrieved: pl.LazyFrame, per_query: pl.LazyFrame, spec: Spec, names: _Names) -> pl.LazyFrame:
    """The run's queries judged_only left without a row: they retrieved nothing (trec_eval scores them, with
    num_ret 0), keeping their keys and weight."""
    carried = [pl.col(k).first() for k in names.keys] if names.hashed else []
    if spec.weight is not None:
        carried += [pl.col(WEIGHT).min().alias(WEIGHT_MIN), pl.col(WEIGHT).max().alias(WEIGHT_MAX)]
    queries = retrieved.group_by(names.group).agg(carried) if carried else retrieved.select(names.group).unique()
    return queries.join(per_query.select(names.group), on=names.group, how="anti", nulls_equal=True)


# --- positions and discounts ---------------------------------------------------------------------------------


def _splits_positions(spec: Spec) -> bool:
    """Tie bounds are taken per measure: with ties='optimistic' or 'pessimistic', the measures that read the
    gain (best order: most gainful first) and those that count relevant rows (relevant first) may need two
    different orders of a tie block, so the latter get positions of their own (`RELEVANT_POSITION`)."""
    bounds = spec.ties in ("optimistic", "pessimistic")
    return bounds and _needs(spec, Quantity.GAIN) and _needs(spec, Quantity.RELEVANT)


def _threshold_position(spec: Spec) -> str:
    """The position column the measures counting relevant rows read."""
    return RELEVANT_POSITION if _splits_positions(spec) else POSITION


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


def _with_query_totals(
    rows: pl.LazyFrame, qrels: pl.LazyFrame | None, spec: Spec, names: _Names, keep_order: bool
) -> pl.LazyFrame:
    """Each row gets its query's relevant total R and judged non-relevant total N: with judgments, from all
    of the query's judged documents (retrieved or not; a negative level counts in neither, as trec_eval's
    form_res_rels), joined on the query keys; without, from the query's rows."""
    if qrels is None:
        return rows.with_columns(_query_totals_in_rows(names))
    relevance = pl.col(RELEVANCE)
    totals = (
        _qrels_rows(qrels, spec, names)
        .group_by(names.query)
        .agg(
            (relevance > spec.threshold).sum().cast(pl.Float64).alias(ROW_RELEVANT_TOTAL),
            (relevance <= spec.threshold).sum().cast(pl.Float64).alias(ROW_NONRELEVANT_TOTAL),
        )
    )
    joined = rows.join(totals, on=names.query, how="left", maintain_order="left" if keep_order else "none")
    return joined.with_columns(pl.col(ROW_RELEVANT_TOTAL, ROW_NONRELEVANT_TOTAL).fill_null(0.0))


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


# --- per-query and per-block terms ---------------------------------------------------------------------------


Terms = dict[str, Term]


def _terms(spec: Spec, judged: bool) -> Terms:
    """The per-query terms of every measure of the call, by column name: a term two measures share (DCG@k of
    ndcg and dcg, hits@k of precision and recall, the first relevant position) is summed once."""
    context = _context(spec, judged)
    terms: Terms = {}
    for measure in spec.measures:
        for name, term in _measure_terms(measure, context).items():
            terms.setdefault(name, term)
    return terms


@functools.lru_cache(maxsize=4096)
def _measure_terms(measure: Measure, context: Context) -> Terms:
    """One measure's terms in a context, built once (a plan asks for them several times; read only)."""
    return _definition(measure).terms(context, cut_at(measure.cutoff))


def _block_sums(terms: Terms) -> list[pl.Expr]:
    """Per tie block: its size, and the block sums every block term reads, each once."""
    sums = {BLOCK_SIZE: pl.len().alias(BLOCK_SIZE)}
    for term in terms.values():
        if term.block is not None:
            for block_sum in term.block_sums:
                sums.setdefault(block_sum.meta.output_name(), block_sum)
    return list(sums.values())


def _ideal_columns(spec: Spec) -> list[str]:
    dcg = [ideal_dcg(cutoff) for cutoff in _cutoffs_needing(spec, Quantity.IDEAL_DCG)]
    return dcg + [ideal_err(cutoff) for cutoff in _cutoffs_needing(spec, Quantity.IDEAL_ERR)]


def _with_ideal_err_rows(rows: pl.LazyFrame, spec: Spec, keys: list[str]) -> pl.LazyFrame:
    """Each row's position by descending grade and its continuation in that order (the ideal ERR's)."""
    if not _needs(spec, Quantity.IDEAL_ERR):
        return rows
    position = pl.col(RELEVANCE).cast(pl.Float64).rank("ordinal", descending=True).over(keys)
    rows = rows.with_columns(position.alias(ERR_IDEAL_POSITION))
    return rows.with_columns(_continuation(keys, ERR_IDEAL_POSITION).alias(ERR_IDEAL_CONTINUATION))


def _continuation(keys: list[str], position: str) -> pl.Expr:
    """ERR's product over the rows ranked above of 1 - their stopping probability, in `position` order."""
    kept = 1.0 - stopping_probability(pl.col(RELEVANCE))
    return kept.cum_prod().shift(1, fill_value=1.0).over(keys, order_by=position)


def _ideal_err_terms(spec: Spec) -> list[pl.Expr]:
    position = pl.col(ERR_IDEAL_POSITION)
    found = stopping_probability(pl.col(RELEVANCE)) * pl.col(ERR_IDEAL_CONTINUATION) / position.cast(pl.Float64)
    return [
        part
        for cutoff in _cutoffs_needing(spec, Quantity.IDEAL_ERR)
        for part in sum_parts(cut(found, ERR_IDEAL_POSITION, cutoff), ideal_err(cutoff), spec.exact_sums)
    ]


def _greatest_gain() -> pl.Expr:
    return pl.max_horizontal(pl.col(GAIN).max(), 0.0).fill_null(0.0)


def _with_greatest_gain(
    rows: pl.LazyFrame, qrels: pl.LazyFrame | None, spec: Spec, names: _Names, keep_order: bool
) -> pl.LazyFrame:
    """Each row gets its query's greatest gain, taken with 0 (`Quantity.GREATEST_GAIN`): without judgments
    over its rows, with them over its judged documents, retrieved or not (0 for a query without judgments)."""
    greatest = _greatest_gain()
    if qrels is None:
        return rows.with_columns(greatest.over(names.group).alias(GAIN_HIGH))
    judged = _qrels_rows(qrels, spec, names).with_columns(_gain(spec, pl.col(RELEVANCE)).alias(GAIN))
    per_query = judged.group_by(names.query).agg(greatest.alias(GAIN_HIGH))
    joined = rows.join(per_query, on=names.query, how="left", maintain_order="left" if keep_order else "none")
    return joined.with_columns(pl.col(GAIN_HIGH).fill_null(0.0))


def _positive_gains(spec: Spec) -> list[pl.Expr]:
    """Per query: its positive gains, their sum and their distinct values (`Quantity.IDEAL_PREFIXES`)."""
    gain = pl.col(GAIN)
    return [
        (gain > 0).sum().cast(pl.Float64).alias(POSITIVE_GAINS),
        *sum_parts(pl.when(gain > 0).then(gain), POSITIVE_GAIN_TOTAL, spec.exact_sums),
        gain.filter(gain > 0).n_unique().cast(pl.Float64).alias(BOUNDARIES),
    ]


def _positive_gain_columns(spec: Spec) -> list[str]:
    return [POSITIVE_GAINS, POSITIVE_GAIN_TOTAL, BOUNDARIES] if _needs(spec, Quantity.IDEAL_PREFIXES) else []


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
    rows: pl.LazyFrame, qrels: pl.LazyFrame, spec: Spec, names: _Names, keep_order: bool
) -> pl.LazyFrame:
    """With judgments, each row gets the ideal order's prefixes at its position (`Quantity.IDEAL_PREFIXES`)
    from its query's judged documents; past the ideal list, the totals (the greatest prefixes of its query) and
    no boundary weight.  Without judgments: `_ideal_prefixes_in_run_order`."""
    keys = names.query
    judged = _qrels_rows(qrels, spec, names).filter(pl.col(RELEVANCE).is_not_null())
    judged = judged.with_columns(_gain(spec, pl.col(RELEVANCE)).alias(GAIN))
    ideal = judged.select(*keys, GAIN, _ideal_position(spec, keys).alias(IDEAL_POSITION))
    prefixes = _ideal_prefixes(ideal, spec, keys)
    joined = rows.join(prefixes, on=[*keys, POSITION], how="left", maintain_order="left" if keep_order else "none")
    return joined.with_columns(
        pl.col(IDEAL_DCG_AT, IDEAL_EXCESS_AT).fill_null(pl.col(IDEAL_DCG_AT, IDEAL_EXCESS_AT).max().over(names.group)),
        pl.col(BOUNDARY_WEIGHT_AT).fill_null(0.0),
    )


def _ideal_prefixes_in_run_order(spec: Spec, names: _Names) -> list[pl.Expr]:
    """Without judgments, the ideal prefixes of `_ideal_prefixes` as windows ordered by position, no join: in
    such a window the query's gains sorted descending are the ideal order's, the one at the row of position p
    the ideal's at p (the same products summed in the same order as from the ideal positions)."""
    ideal = pl.col(GAIN).sort(descending=True)
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
    """Per row: the gain and the DCG over positions 1..p of its position p (`Quantity.RUN_PREFIXES`)."""
    gain = pl.col(GAIN)
    return [
        gain.cum_sum().over(names.group, order_by=POSITION).alias(CUMULATIVE_GAIN),
        (gain * _discount(spec, pl.col(POSITION))).cum_sum().over(names.group, order_by=POSITION).alias(CUMULATIVE_DCG),
    ]


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


def _rows_that_count(rows: pl.LazyFrame, spec: Spec, names: _Names) -> pl.LazyFrame:
    """With finite cut-offs, a row past the largest k weighs nothing, and with tie averaging so does a tie
    block starting past it: drop them.  The blocks that reach the top k are those scoring at least the score
    at position k (fewer than k documents: every block).  Whatever ranks above a kept row is kept."""
    cutoffs = [cut_at(m.cutoff) for m in spec.measures]
    if None in cutoffs:
        return rows
    largest = max(c for c in cutoffs if c is not None)
    if spec.ties != "average":
        within = pl.col(POSITION) <= largest
        if _splits_positions(spec):  # the counting measures read positions of their own
            within = within | (pl.col(RELEVANT_POSITION) <= largest)
        return rows.filter(within)
    score_at_cutoff = pl.when(pl.col(POSITION) <= largest).then(pl.col(SCORE)).min().over(names.group)
    return rows.filter(pl.col(SCORE) >= score_at_cutoff)


def _aggregate(
    rows: pl.LazyFrame,
    terms_rows: pl.LazyFrame | None,
    spec: Spec,
    names: _Names,
    judged: bool,
    checks: list[DataCheck],
    retrieved_in_terms: bool = False,
) -> pl.LazyFrame:
    """Group the rows by keys: the per-row terms and the check counters in one pass.  `terms_rows`, when
    given, are the rows that count, their relevance joined late (`_joins_relevance_late`), or without
    judgments the first max_retrieved rows (`retrieved_in_terms`: the retrieved count comes from them too):
    the terms come from them, the counters and the judgment side (R, ideal orders) from every row.  With
    `ties="average"`, the terms that tie blocks change come from a (keys, score) group-by (`_block_sums`), whose
    block terms are summed per query, joined on and added: over the rows that count when they are given (a row
    in no tie is a block of one, whose block term is its row term), else over the rows of the queries holding a
    tie only, the others counting in the per-row sums: then (the fork) `rows` are the windows' output, without
    the discounts, which each branch computes from its own rows (`_with_discounts`)."""
    terms = _terms(spec, judged)
    averaged = _averages_blocks(spec, judged)
    forked = averaged and terms_rows is None  # `_flagged_per_query` left the discounts out exactly then
    # the row checks counted apart (`_with_row_checks`), and no group-by over every row: over the rows within the
    # largest cut-off without judgments, over the judged rows that count with them (`_reads_within_cutoffs`)
    apart = _reads_within_cutoffs(spec, checks) and (terms_rows is None or (judged and not retrieved_in_terms))
    within = _rows_within_cutoffs(spec, judged) if apart and terms_rows is None else None
    every_row = rows
    if forked:
        # read by up to four branches: an explicit cache of the windows' output (else Polars' common-plan cache
        # recomputes the windows in one), before the discounts: the streaming engine's multiplexer holds the
        # rows one branch has not read yet, without 16 bytes of discounts a row
        forked_rows = every_row = rows.cache()
        rows = forked_rows if within is None else forked_rows.filter(within)
        rows = _with_discounts(rows, spec, judged)
    elif within is not None:
        rows = rows.filter(within)
    every_row_by_block = averaged and terms_rows is not None
    per_row = [
        aggregation
        for name, term in terms.items()
        if not (every_row_by_block and term.block is not None)
        for aggregation in _reduce(
            _alone(term.row) if averaged and term.block is not None else term.row, term.least, name, spec.exact_sums
        )
    ]
    retrieved = [pl.len().alias(ROWS)]
    extra = [] if retrieved_in_terms or apart else [*retrieved]
    if _needs(spec, Quantity.RELEVANT_COUNT) and not judged:
        extra.append(pl.col(RELEVANT).sum().cast(pl.Float64).alias(RELEVANT_COUNT))
    if spec.weight is not None:
        extra += [pl.col(WEIGHT).min().alias(WEIGHT_MIN), pl.col(WEIGHT).max().alias(WEIGHT_MAX)]
    if _needs(spec, Quantity.IDEAL_DCG) and not judged:
        extra += _ideal_terms(spec)
    if _needs(spec, Quantity.IDEAL_ERR) and not judged:
        extra += _ideal_err_terms(spec)
    if _needs(spec, Quantity.IDEAL_PREFIXES) and not judged:
        extra += _positive_gains(spec)
    counters = [] if apart else [expression for check in checks for expression in check.aggregations()]
    per_query: pl.LazyFrame | None
    if terms_rows is None:
        per_query = _with_exact_totals(spec, rows.group_by(names.group).agg(*per_row, *extra, *counters))
    else:
        # with the checks apart nothing else is counted over every row (`extra` is empty: no weight, no R)
        per_query = (
            _with_exact_totals(spec, rows.group_by(names.group).agg(*extra, *counters)) if extra or counters else None
        )
        per_row += retrieved if retrieved_in_terms else []
        if per_row:
            row_totals = _with_exact_totals(spec, terms_rows.group_by(names.group).agg(per_row))
            per_query = (
                row_totals
                if per_query is None
                else per_query.join(row_totals, on=names.group, how="left", nulls_equal=True)
            )
    if averaged:
        per_query = _with_blocks(per_query, forked_rows if forked else terms_rows, spec, names, judged, forked)
    assert per_query is not None  # a judged call has a term with no block form, or is tie-averaged
    return _with_row_checks(per_query, every_row, names, checks) if apart else per_query


def _with_blocks(
    per_query: pl.LazyFrame | None,
    rows: pl.LazyFrame | None,
    spec: Spec,
    names: _Names,
    judged: bool,
    forked: bool,
) -> pl.LazyFrame:
    """The per-query terms' block parts added (`_aggregate`): `rows` are the rows that count (relevance joined
    late), whose blocks carry every block term, or (`forked`) the windows' output, whose tied queries' blocks do.
    Without `per_query` (the checks apart, every term by block), the blocks' totals are the per-query rows."""
    assert rows is not None
    terms = _terms(spec, judged)
    largest = _largest_cutoff(spec)
    # the blocks: every row that counts (relevance joined late), or those of the queries holding a tie
    if not forked:
        tied = rows
    elif largest is None:
        tied = _with_discounts(rows.filter(pl.col(TIED)), spec, judged)
    else:
        reaching = _blocks_reaching(rows, largest, names)
        tied = _with_discounts(pl.concat([rows.filter(pl.col(TIED)), reaching]), spec, judged)
    # name -> (block term, least)
    per_block = {name: (term.block, term.least) for name, term in terms.items() if term.block is not None}
    blocks = _with_exact_totals(spec, tied.group_by(*names.group, SCORE).agg(_block_sums(terms)))
    blocks = blocks.select(*names.group, *(block.alias(_block(name)) for name, (block, _) in per_block.items()))
    block_totals = blocks.group_by(names.group).agg(
        aggregation
        for name, (_, least) in per_block.items()
        for aggregation in _reduce(pl.col(_block(name)), least, _block(name), spec.exact_sums)
    )
    block_totals = _with_exact_totals(spec, block_totals)
    if per_query is None:
        joined = block_totals
    else:
        joined = per_query.join(block_totals, on=names.group, how="left", nulls_equal=True)
    added = [_added(name, least, not forked).alias(name) for name, (_, least) in per_block.items()]
    return joined.with_columns(added).drop(_block(name) for name in per_block)


def _reads_within_cutoffs(spec: Spec, checks: list[DataCheck]) -> bool:
    """Every measure of the call has a finite cut-off and reads only the rows within it
    (`Definition.reads_within_cutoff`), there is no weight, and every row check counts failing rows
    (`DataCheck.failing`): the per-query sums then need only the rows within the largest cut-off
    (`_rows_within_cutoffs`), and the row checks are counted apart over every row (`_with_row_checks`)."""
    if _largest_cutoff(spec) is None or spec.weight is not None or any(check.failing is None for check in checks):
        return False
    return all(definition.reads_within_cutoff for definition, _ in _definitions(spec))


def _rows_within_cutoffs(spec: Spec, judged: bool) -> pl.Expr:
    """The rows ranked within the largest cut-off, in the run's order or, for the ideal DCG, the ideal order.
    On 100 documents a query and a largest cut-off of 10 or 20, a fifth to a third of the rows."""
    largest = _largest_cutoff(spec)
    assert largest is not None
    within = pl.col(POSITION) <= largest
    if _splits_positions(spec):
        within = within | (pl.col(RELEVANT_POSITION) <= largest)
    if _needs(spec, Quantity.IDEAL_DCG) and not judged:
        within = within | (pl.col(IDEAL_POSITION) <= largest)
    return within


def _with_row_checks(
    per_query: pl.LazyFrame, rows: pl.LazyFrame, names: _Names, checks: list[DataCheck]
) -> pl.LazyFrame:
    """The per-query rows with the row checks' counters, counted over every row's failing rows (usually none:
    a filter over every row and a group-by over what it keeps) and joined on; a query failing none counts 0.
    A full join: a query none of whose rows `per_query` read (every score null: no position) still fails."""
    if not checks:
        return per_query
    failing = [check.failing for check in checks if check.failing is not None]
    counters = [expression for check in checks for expression in check.aggregations()]
    counts = rows.filter(pl.any_horizontal(failing)).group_by(names.group).agg(counters)
    per_query = per_query.join(counts, on=names.group, how="full", coalesce=True, nulls_equal=True)
    return per_query.with_columns(pl.col(check.column).fill_null(0) for check in checks)


def _added(name: str, least: bool, blocks_only: bool) -> pl.Expr:
    """A per-query term: its row part and its blocks' part, or the blocks' part alone."""
    blocks = pl.col(_block(name))
    if blocks_only:
        return blocks if least else blocks.fill_null(0.0)
    return pl.min_horizontal(name, blocks) if least else pl.col(name) + blocks.fill_null(0.0)


def _averages_blocks(spec: Spec, judged: bool) -> bool:
    return spec.ties == "average" and any(term.block is not None for term in _terms(spec, judged).values())


def _largest_cutoff(spec: Spec) -> int | None:
    """The largest cut-off of the call, None when a measure has none."""
    cutoffs = [cut_at(m.cutoff) for m in spec.measures]
    return None if None in cutoffs else max(c for c in cutoffs if c is not None)


def _in_tied_query(names: _Names, spec: Spec) -> pl.Expr:
    """Null when a row's query holds no two rows of one score; else whether every row of the query can count
    (no cut-off, or no more rows than the largest one), or only the tie blocks reaching the largest cut-off
    (`_blocks_reaching`).  A tied query's rows go to the block group-by (a row in no tie as a block of one).
    Per query, not per row (`is_duplicated`): beside the two rank windows on 1M x 10 rows, counting distinct
    scores added 0.50 s of CPU, flagging the tied rows per query 0.84 s (benchmarks/RESULTS.md, 2026-12-05
    12:40-13:15; `benchmarks/sorted_path_row.py` times the flag at 26% of the window context there)."""
    largest = _largest_cutoff(spec)
    every_row = pl.lit(True) if largest is None else pl.len() <= largest
    return pl.when(pl.col(SCORE).n_unique() < pl.len()).then(every_row).over(names.group)


def _blocks_reaching(rows: pl.LazyFrame, largest: int, names: _Names) -> pl.LazyFrame:
    """The rows of the tied queries longer than the largest cut-off (`_in_tied_query` False) in the tie blocks
    reaching it: those scoring at least the score at position `largest`, taken per query by a group-by over
    the first `largest` rows and joined on (a window over the query cost more on 100k x 100 rows, 0.30
    against 0.22 s of CPU)."""
    at_cutoff = f"{_P}score_at_cutoff"
    long = pl.col(TIED).not_()
    first = rows.filter(long & (pl.col(POSITION) <= largest))
    scores = first.group_by(names.group).agg(pl.col(SCORE).min().alias(at_cutoff))
    reaching = rows.filter(long).join(scores, on=names.group, nulls_equal=True)
    reaching = reaching.filter(pl.col(SCORE) >= pl.col(at_cutoff))
    return reaching.drop(at_cutoff)


def _alone(row: pl.Expr) -> pl.Expr:
    """A per-row term for the rows of the queries in no tie (with tie averaging); the others count by block."""
    return pl.when(pl.col(TIED).is_null()).then(row)


def _with_exact_totals(spec: Spec, frame: pl.LazyFrame) -> pl.LazyFrame:
    """The exact sums' partial totals of a group-by's output added up (`exact_sums=True`; else nothing to add)."""
    return with_exact_totals(frame) if spec.exact_sums else frame


def _reduce(value: pl.Expr, least: bool, name: str, exact: bool) -> list[pl.Expr]:
    """A term's per-query aggregation named `name`: its least value, or its sum (with `exact`, as partial totals
    that `with_exact_totals` adds up after the group-by: the same bits whatever the rows' order)."""
    return [value.min().alias(name)] if least else sum_parts(value, name, exact)


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
    checks = [row_check(f"{_P}bad_score", non_finite(SCORE, schema[SCORE]), bad_values("score", spec.score.name))]
    if not judged:
        relevance = spec.relevance.name
        checks.append(
            row_check(
                f"{_P}bad_relevance", non_finite(RELEVANCE, schema[RELEVANCE]), bad_values("relevance", relevance)
            )
        )
    checks += _measure_checks(spec, judged, lambda definition: definition.row_checks)
    if _needs(spec, Quantity.GAIN) and not judged:  # judged labels are checked with the judgments
        checks += _gain_checks(spec, "")
    if spec.doc:
        doc_names = ", ".join(quoted(d) for d in spec.doc)
        null_doc = pl.any_horizontal(pl.col(d).is_null() for d in names.docs)
        checks.append(
            row_check(
                f"{_P}null_docs",
                null_doc,
                message(
                    ValueError, f"doc column {doc_names} has {{total}} null value(s), the first in query {{query}}."
                ),
            )
        )
        query_names = ", ".join(quoted(q) for q in spec.query)
        checks.append(
            row_check(
                f"{_P}duplicate_docs",
                pl.col(DUPLICATED),
                message(
                    ValueError,
                    f"query {{query}} lists doc {{value}} more than once (columns {query_names}, {doc_names}); "
                    "a duplicated (query, doc) pair, often from a join fan-out, would inflate the metric.",
                ),
                _first(_doc_shown(spec, names), pl.col(DUPLICATED)),
            )
        )
    if spec.weight is not None:
        checks.append(
            row_check(f"{_P}bad_weights", non_finite(WEIGHT, pl.Float64()), bad_values("weight", spec.weight.name))
        )
    return checks


# the row checks that read only the run's own columns (not a judgment, not a key's hash)
_RUN_ROW_CHECKS = frozenset(f"{_P}{name}" for name in ("bad_score", "null_docs", "duplicate_docs", "bad_weights"))


def _count_run_rows_once(
    per_query: pl.LazyFrame, checks: list[DataCheck], repeated_index: int, names: _Names
) -> pl.LazyFrame:
    """With `Spec.repeated_over` (query column `repeated_index`), each run row is in every per-query row of its
    query's values of that column: the checks on the run's own columns keep their count in the first value only
    (the least; a null one if all are), so that a message counts each bad run row once."""
    repeated = names.query[repeated_index]
    others = [key for key in names.keys if key != repeated]
    least = pl.col(repeated).min().over(others) if others else pl.col(repeated).min()
    first = pl.col(repeated).eq_missing(least)
    return per_query.with_columns(
        pl.when(first).then(pl.col(check.column)).otherwise(0).alias(check.column)
        for check in checks
        if check.column in _RUN_ROW_CHECKS
    )


def _group_keys(rows: pl.LazyFrame, names: _Names, checks: list[DataCheck]) -> pl.LazyFrame:
    """Each hashed group's key values, with the hash-collision counter (`checks`): the distinct keys of the
    run's rows, hashed as the rows were, one row per hash.  A second consumer of the (cached) rows' keys:
    carrying the keys through the windows and taking their first value in the per-query group-by cost more
    (a fifth of a `by=` call over a String column on 2M shuffled rows, with a second hash of every row for
    the collision check).  With packed groups (`_packed_group`), only the rows whose keys did not fit are read."""
    if names.packed:
        rows = rows.filter(pl.col(GROUP) >= _HASHED_BIT)
    keys = rows.select(names.keys).unique().with_columns(_key_hash(names.keys).alias(GROUP))
    if names.packed:
        keys = keys.with_columns(pl.col(GROUP) | _HASHED_BIT)
    counters = [expression for check in checks for expression in check.aggregations()]
    return keys.group_by(GROUP).agg(*(pl.col(key).first() for key in names.keys), *counters)


def _with_group_keys(
    per_query: pl.LazyFrame, rows: pl.LazyFrame, names: _Names, checks: list[DataCheck]
) -> pl.LazyFrame:
    """The per-query rows with their key values and the hash-collision counter: from the distinct keys of the
    hashed groups (`_group_keys`), and for packed groups read back from the group itself."""
    per_query = per_query.join(_group_keys(rows, names, checks), on=GROUP, how="left")
    if not names.packed:
        return per_query
    count = len(names.keys)
    return per_query.with_columns(
        *(
            pl.coalesce(_unpacked_key(index, count, dtype), key).alias(key)
            for index, (key, dtype) in enumerate(zip(names.keys, names.dtypes, strict=True))
        ),
        *(pl.col(check.column).fill_null(0) for check in checks),
    )


def _hash_collision_check(spec: Spec, names: _Names) -> DataCheck:
    """Two different keys with the same 64-bit hash would share one group (about G**2 / 2**65 to happen for
    G keys: 3e-8 for a million).  Counted over the distinct keys (`_group_keys`): a hash that two of them
    share."""
    keys = ", ".join(quoted(name) for name in spec.keys)
    return DataCheck(
        f"{_P}hash_collision",
        (pl.len() > 1).cast(pl.UInt32),
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
            row_check(
                f"{_P}unmapped_labels",
                unmapped,
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
            row_check(
                f"{_P}gain_overflow",
                overflowing,
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
    if _needs(spec, Quantity.GAIN):
        # the qrels relevance column is named: the run may have a relevance column of its own
        checks += _gain_checks(spec, f"qrels relevance column {quoted(spec.relevance.name)}: ")
    if _needs(spec, Quantity.CONTINUATION):
        above = raw.cast(pl.Float64) > ERR_MAX_GRADE
        checks.append(
            DataCheck(
                f"{_P}qrels_err_grade",
                above.sum(),
                message(
                    ValueError,
                    f"qrels relevance {{value}} (query {{query}}) is above ERR's largest grade {ERR_MAX_GRADE}: "
                    f"its stopping probability (2**g - 1) / 2**{ERR_MAX_GRADE} must lie in [0, 1).",
                ),
                _first(raw, above),
            )
        )
    return checks


def _final_checks(spec: Spec, names: _Names, metrics: list[str], judged: bool) -> list[DataCheck]:
    """Checks on the per-query rows."""
    query_names = ", ".join(quoted(q) for q in spec.query)
    # the repeated column (judgment groups) is null where a run query has no judgments: those rows are checked,
    # then skipped as any unjudged query is
    keys = [k for k, name in zip(names.query, spec.query, strict=True) if name != spec.repeated_over]
    checks = [
        DataCheck(
            f"{_P}null_queries",
            pl.any_horizontal(pl.col(k).is_null() for k in keys).cast(pl.UInt32),
            message(ValueError, f"query column {query_names} has null values."),
        )
    ]
    for index, (internal, name) in enumerate(zip(names.query, spec.query, strict=True)):
        if name in names.run_dtypes:
            run_dtype = names.run_dtypes[name]
            unfit = pl.col(internal).is_not_null() & pl.col(internal).cast(run_dtype, strict=False).is_null()
            checks.append(
                DataCheck(
                    f"{_P}query_dtype_{index}",
                    unfit.cast(pl.UInt32),
                    message(
                        ValueError,
                        f"query {{value}} of qrels (column {quoted(name)}, a judged query missing from the run) "
                        f"does not fit the run's query dtype {run_dtype}, which the output keeps; cast the run's "
                        f"{quoted(name)} to {names.join_dtypes[name]}.",
                    ),
                    pl.col(internal),
                )
            )
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
    checks += _measure_checks(spec, judged, lambda definition: definition.query_checks)
    if spec.no_relevant == "error" and _normalised(spec):
        checks.append(
            DataCheck(
                f"{_P}no_relevant",
                _no_relevant(spec, judged).fill_null(False).cast(pl.UInt32),
                message(ValueError, _no_relevant_message(spec, judged)),
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


def _measure_checks(
    spec: Spec, judged: bool, declared: Callable[[Definition], Callable[[Context], list[DataCheck]]]
) -> list[DataCheck]:
    """The data checks the measures of the call declare, each once."""
    context = _context(spec, judged)
    checks: dict[str, DataCheck] = {}
    for definition, _ in _definitions(spec):
        for check in declared(definition)(context):
            checks.setdefault(check.column, check)
    return list(checks.values())


def _normalised(spec: Spec) -> list[tuple[NoRelevant, Measure]]:
    """The measures of the call that `no_relevant` applies to, the first of each kind, in registry order."""
    first_of_each: dict[str, Measure] = {}
    for measure in spec.measures:
        first_of_each.setdefault(measure.kind, measure)
    return [
        (definition.no_relevant, first_of_each[name])
        for name, definition in REGISTRY.items()
        if name in first_of_each and definition.no_relevant is not None
    ]


def _no_relevant_message(spec: Spec, judged: bool) -> str:
    context = _context(spec, judged)
    reasons = [no_relevant.reason(context) for no_relevant, _ in _normalised(spec)]
    return (
        f"query {{query}} has {' or '.join(dict.fromkeys(reasons))}, and {{total}} query(ies) in all; pass "
        "no_relevant=0.0, 1.0 or None to score them."
    )


def _no_relevant(spec: Spec, judged: bool) -> pl.Expr:
    """A query with nothing to normalise by, for some measure of the call (at the first cut-off of each kind)."""
    context = _context(spec, judged)
    conditions: list[pl.Expr] = []
    for no_relevant, measure in _normalised(spec):
        condition = no_relevant.condition(context, measure.cutoff)
        if not any(condition.meta.eq(other) for other in conditions):
            conditions.append(condition)
    return pl.any_horizontal(conditions)


# --- judgments -----------------------------------------------------------------------------------------------


def _judgments(qrels: pl.LazyFrame, spec: Spec, names: _Names) -> pl.LazyFrame:
    """Per query of the qrels: the ideal DCG from all judged documents (retrieved or not, as trec_eval), the
    number of relevant judged documents, checked."""
    rows = _qrels_rows(qrels, spec, names)
    windows = [_doc_value(names.docs).is_duplicated().over(names.query).alias(DUPLICATED)]
    if _needs(spec, Quantity.GAIN):
        rows = rows.with_columns(_gain(spec, pl.col(RELEVANCE)).alias(GAIN))
    if _needs(spec, Quantity.IDEAL_DCG):
        windows.append(_ideal_position(spec, names.query).alias(IDEAL_POSITION))
    rows = rows.with_columns(windows)
    if _needs(spec, Quantity.IDEAL_DCG):
        rows = rows.with_columns(_discount(spec, pl.col(IDEAL_POSITION)).alias(IDEAL_DISCOUNT))
    rows = _with_ideal_err_rows(rows, spec, names.query)
    checks = _qrels_checks(spec, names)
    aggregations = [(pl.col(RELEVANCE) > spec.threshold).sum().cast(pl.Float64).alias(JUDGED_RELEVANT)]
    if _needs(spec, Quantity.IDEAL_DCG):
        aggregations += _ideal_terms(spec)
    if _needs(spec, Quantity.IDEAL_ERR):
        aggregations += _ideal_err_terms(spec)
    if _needs(spec, Quantity.IDEAL_PREFIXES):
        aggregations += _positive_gains(spec)
    counters = [expression for check in checks for expression in check.aggregations()]
    per_query = _with_exact_totals(spec, rows.group_by(names.query).agg(*aggregations, *counters))
    null_query = DataCheck(
        f"{_P}qrels_null_queries",
        pl.any_horizontal(pl.col(k).is_null() for k in names.query).cast(pl.UInt32),
        message(ValueError, f"qrels query column {', '.join(quoted(q) for q in spec.query)} has null values."),
    )
    per_query = per_query.with_columns(null_query.aggregations())
    output = [*names.query, *_ideal_columns(spec), *_positive_gain_columns(spec), JUDGED_RELEVANT]
    where = _describe_keys(list(spec.query), [])
    checked = apply_checks(per_query, where, names.query, output, [null_query, *checks])
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
    # a query missing from the run retrieved nothing: its sums and counters are 0 (a least term, such as the
    # first relevant position, stays null), its ideal DCG and relevant count come from the judgments
    least = [name for name, term in _terms(spec, judged=True).items() if term.least]
    from_judgments = {*names.keys, HAS_JUDGMENTS, IN_RUN, *least, JUDGED_RELEVANT, *_ideal_columns(spec)}
    from_judgments |= set(_positive_gain_columns(spec))
    # only numeric columns: a check's value column (a doc id, possibly Enum or Categorical) cannot take a 0,
    # and is read only when its counter, filled with 0 here, is positive
    numbers = [
        name for name, dtype in joined.collect_schema().items() if name not in from_judgments and dtype.is_numeric()
    ]
    return joined.with_columns(pl.col(HAS_JUDGMENTS).fill_null(False), *(pl.col(name).fill_null(0) for name in numbers))


# --- the measures ----------------------------------------------------------------------------------------------


def _with_derived(per_query: pl.LazyFrame, spec: Spec, judged: bool) -> pl.LazyFrame:
    """The per-query columns the measures of the call derive after the group-by, each step once for all of
    its columns (with tie averaging, rr's and success's expectations over the first relevant block)."""
    context = _context(spec, judged)
    wanted: list[Derived] = list(
        dict.fromkeys(derived for d, m in _definitions(spec) for derived in d.derived(context, m.cutoff))
    )
    for step in dict.fromkeys(derived.step for derived in wanted):
        per_query = step(per_query, [derived for derived in wanted if derived.step is step])
    return per_query


def _with_term_columns(
    rows: pl.LazyFrame,
    spec: Spec,
    names: _Names,
    ap_average: bool,
    judged: bool,
    windows: Sequence[pl.Expr] = (),
    discount: bool = True,
) -> pl.LazyFrame:
    """The per-row columns the terms read: discounts (unless not `discount`: `_aggregate` takes them after its
    fork), for AP the relevant rows ranked above (with tie averaging already among the windows, unless
    `ap_average`), for bpref the judged rows ranked above."""
    derived = []
    windows = list(windows)
    if discount and _needs(spec, Quantity.DISCOUNT):  # one logarithm per row, shared by every cut-off
        derived.append(_discount(spec, pl.col(POSITION)).alias(DISCOUNT))
    if _needs(spec, Quantity.RELEVANT_BEFORE) and spec.ties != "average":
        # a running count in position order, in the context of the other ordered windows
        windows.append(_counted_before(pl.col(RELEVANT), spec, names).alias(RELEVANT_BEFORE))
    elif _needs(spec, Quantity.RELEVANT_BEFORE) and ap_average:
        derived.append(_relevant_before(spec, names).alias(RELEVANT_BEFORE))
    if _needs(spec, Quantity.JUDGED_BEFORE):
        derived.append(_judged_before(spec, judged, names).alias(JUDGED_BEFORE))
    if _needs(spec, Quantity.POOLED_BEFORE):
        derived.append(_pooled_before(spec, judged, names).alias(POOLED_BEFORE))
    if _needs(spec, Quantity.CONTINUATION):
        derived.append(_continuation(names.group, POSITION).alias(CONTINUATION))
    if _needs(spec, Quantity.TIE_BLOCKS) and spec.ties in ("optimistic", "pessimistic"):
        derived += _tie_block_windows(spec, judged, names)
    rows = rows.with_columns(derived) if derived else rows
    return _with_running(rows, spec, names, judged, windows)


def _with_running(
    rows: pl.LazyFrame, spec: Spec, names: _Names, judged: bool, windows: Sequence[pl.Expr] = ()
) -> pl.LazyFrame:
    """The running products and sums in position order the measures of the call declare (`Running`), each
    once, in the order declared (a later one may read an earlier one), in one context with `windows` (and
    with each other) until one reads an earlier one: windows over the same groups in one context cost less."""
    context = _context(spec, judged)
    running: dict[str, Running] = {}
    for definition, _ in _definitions(spec):
        for column in definition.running(context):
            running.setdefault(column.column, column)
    batch = list(windows)
    in_batch: set[str] = set()
    for column in running.values():
        if column.operation == "block_sum":
            block_sum = exact_sum(column.value) if spec.exact_sums else column.value.sum()
            window = block_sum.over([*names.group, SCORE])
        elif column.operation == "block_least":
            window = column.value.min().over([*names.group, SCORE])
        else:
            ordered = column.value.cum_prod() if column.operation == "product" else column.value.cum_sum()
            if column.exclusive:
                ordered = ordered.shift(1, fill_value=1.0 if column.operation == "product" else 0.0)
            window = ordered.over(names.group, order_by=POSITION)
        if in_batch & set(column.value.meta.root_names()):
            rows = rows.with_columns(batch)
            batch, in_batch = [], set()
        batch.append(window.alias(column.column))
        in_batch.add(column.column)
    return rows.with_columns(batch) if batch else rows


def _tie_block_windows(spec: Spec, judged: bool, names: _Names) -> list[pl.Expr]:
    """Under tie bounds, each row's tie block (its rows of equal score, at positions s+1..s+n): s, n and its
    unjudged rows, for the measures whose bound is taken per block in closed form (`Quantity.TIE_BLOCKS`)."""
    block = [*names.group, SCORE]
    return [
        (pl.col(_threshold_position(spec)).min().over(block) - 1).cast(pl.Int64).alias(BLOCK_START),
        pl.len().over(block).alias(BLOCK_SIZE),
        unjudged(judged).sum().over(block).alias(BLOCK_UNJUDGED),
    ]


def _with_discounts(rows: pl.LazyFrame, spec: Spec, judged: bool, run: bool = True) -> pl.LazyFrame:
    """The discounts of each row's position (`run`) and ideal position, where the measures need them: one
    logarithm per row each, elementwise, so computed after any filter of the rows."""
    discounts = []
    if run and _needs(spec, Quantity.DISCOUNT):  # shared by every cut-off
        discounts.append(_discount(spec, pl.col(POSITION)).alias(DISCOUNT))
    if _needs(spec, Quantity.IDEAL_DCG) and not judged:
        discounts.append(_discount(spec, pl.col(IDEAL_POSITION)).alias(IDEAL_DISCOUNT))
    return rows.with_columns(discounts) if discounts else rows


def _flagged_per_query(
    run: pl.LazyFrame, qrels: pl.LazyFrame | None, spec: Spec, groups: pl.LazyFrame | None = None
) -> tuple[pl.LazyFrame, _Names]:
    """Every per-query row the plan saw, checked and sorted by keys: keys, metrics (internal names), weight,
    and the SCORED (and UNJUDGED) flags."""
    names = _Names(spec, run.collect_schema(), qrels.collect_schema() if qrels is not None else None)
    judged = qrels is not None
    late = _joins_relevance_late(spec, judged)
    rows = retrieved = _run_rows(run, spec, names, with_relevance=not judged)
    if names.hashed:  # read again for the groups' keys (`_group_keys`): cached, so that the source is read once
        rows = retrieved = retrieved.cache()
    # without judgments, the rows past max_retrieved still count as judgments: they are cut from the terms only
    terms_limit = None if judged else spec.max_retrieved
    if spec.max_retrieved is not None and judged:
        rows = _first_retrieved(rows, spec, names, spec.max_retrieved)
    if spec.judged_only and qrels is not None:
        rows = _judged_retrieved(rows, qrels, spec, names)
    if qrels is not None and not late:
        rows = _with_judged_relevance(rows, qrels, spec, names, keep_order=spec.ties in ("input", "reverse"))
    if not late:
        rows = _with_gain_and_relevant(rows, spec, judged)
        if _needs(spec, Quantity.QUERY_TOTALS) and qrels is not None:
            rows = _with_query_totals(rows, qrels, spec, names, keep_order=spec.ties in ("input", "reverse"))
    windows = [_position(spec, names, judged=judged).alias(POSITION)]
    # without judgments the per-query totals are aggregation windows sharing this context's groups
    if qrels is None and _needs(spec, Quantity.QUERY_TOTALS):
        windows += _query_totals_in_rows(names)
    if qrels is None and _needs(spec, Quantity.GREATEST_GAIN):
        windows.append(_greatest_gain().over(names.group).alias(GAIN_HIGH))
    if _splits_positions(spec):
        windows.append(_position(spec, names, judged=judged, by_relevant=True).alias(RELEVANT_POSITION))
    if _needs(spec, Quantity.IDEAL_DCG) and not judged:
        windows.append(_ideal_position(spec, names.group).alias(IDEAL_POSITION))
    if spec.doc:
        windows.append(_doc_value(names.docs).is_duplicated().over(names.group).alias(DUPLICATED))
    # with tie averaging the relevant rows ranked above read the scores only: a window sharing the groups
    if _needs(spec, Quantity.RELEVANT_BEFORE) and spec.ties == "average" and not late:
        windows.append(_relevant_before(spec, names).alias(RELEVANT_BEFORE))
    # with the relevance joined late, every row that counts goes to the block group-by instead (`_aggregate`)
    if _averages_blocks(spec, judged) and not late:
        windows.append(_in_tied_query(names, spec).alias(TIED))
    rows = rows.with_columns(windows)
    if not judged:
        rows = _with_ideal_err_rows(rows, spec, names.group)
    if _needs(spec, Quantity.GREATEST_GAIN) and not late and qrels is not None:
        rows = _with_greatest_gain(rows, qrels, spec, names, keep_order=spec.ties in ("input", "reverse"))
    # the windows ordered by position: with the running sums and products (`_with_running`) when the rows that
    # count are all the rows
    prefixes = _run_prefixes(spec, names) if _needs(spec, Quantity.RUN_PREFIXES) else []
    if _needs(spec, Quantity.IDEAL_PREFIXES) and qrels is None:
        prefixes += _ideal_prefixes_in_run_order(spec, names)
    if prefixes and late:
        rows = rows.with_columns(prefixes)
    if _needs(spec, Quantity.IDEAL_PREFIXES) and qrels is not None:
        rows = _with_ideal_prefixes(rows, qrels, spec, names, keep_order=spec.ties in ("input", "reverse"))
    terms_rows = None
    forked = False
    if qrels is not None and late:
        terms_rows = _with_judged_relevance(_rows_that_count(rows, spec, names), qrels, spec, names, keep_order=False)
        terms_rows = _with_gain_and_relevant(terms_rows, spec, judged)
        if _needs(spec, Quantity.GREATEST_GAIN):
            terms_rows = _with_greatest_gain(terms_rows, qrels, spec, names, keep_order=False)
        terms_rows = _with_term_columns(terms_rows, spec, names, ap_average=True, judged=judged)
    elif terms_limit is not None:  # the rows `_first_retrieved` keeps; the checks count every row
        # the ordered windows over every row (the ideal prefixes read the rows cut too), then the cut
        rows = rows.with_columns(prefixes) if prefixes else rows
        terms_rows = rows.filter(pl.col(POSITION) <= terms_limit)
        terms_rows = _with_term_columns(terms_rows, spec, names, ap_average=False, judged=judged)
    else:
        # with tie averaging over every row (no late judgments, no max_retrieved), the rows fork after the
        # windows into the per-row sums and the tie blocks (`_aggregate`), each branch taking its discounts
        forked = _averages_blocks(spec, judged)
        rows = _with_term_columns(
            rows, spec, names, ap_average=False, judged=judged, windows=prefixes, discount=not forked
        )
    if not forked:  # the ideal positions' discounts, read by the per-query group-by over every row
        rows = _with_discounts(rows, spec, judged, run=False)
    checks = _row_checks(spec, rows.collect_schema(), names, judged)
    retrieved_in_terms = terms_limit is not None
    per_query = _aggregate(rows, terms_rows, spec, names, judged, checks, retrieved_in_terms)
    key_checks = [_hash_collision_check(spec, names)] if names.hashed else []
    if names.hashed:
        per_query = _with_group_keys(per_query, retrieved, names, key_checks)
    if spec.repeated_over is not None:
        per_query = _count_run_rows_once(per_query, checks, spec.query.index(spec.repeated_over), names)
    if qrels is not None:
        if spec.judged_only:
            emptied = _emptied_queries(retrieved, per_query, spec, names)
            per_query = pl.concat([per_query, emptied], how="diagonal_relaxed")
        per_query = _join_judgments(per_query, _judgments(qrels, spec, names), spec, names, groups)
    metrics = [_metric(i) for i in range(len(spec.measures))]
    per_query = _with_derived(per_query, spec, judged)
    context = _context(spec, judged)
    per_query = per_query.with_columns(
        _mean.positive_zero(definition.value(context, measure.cutoff)).alias(name)
        for (definition, measure), name in zip(_definitions(spec), metrics, strict=True)
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
    every_check = [*checks, *key_checks, *final]
    # only the columns the checks and the output read go on: the checks' map is opaque to the optimizer, which
    # would otherwise sort every term and counter along
    read = [check.column for check in every_check] + [c.value_column for c in every_check if c.value is not None]
    kept = per_query.select(list(dict.fromkeys([*output, *read])))
    # sorted before the checks' map, not after it: with the sort after it, the score forms' mean changed in its
    # last digit with the column names (2026-12-03): its sum no longer ran in key order
    checked = apply_checks(kept.sort(names.keys, nulls_last=True), where, names.keys, output, every_check)
    return checked, names


def _outputs(spec: Spec, names: _Names) -> list[pl.Expr]:
    output = [names.output(internal, name) for internal, name in zip(names.keys, spec.keys, strict=True)]
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
        summaries=[definition.summary for definition, _ in _definitions(spec)],
        exact=spec.exact_sums,
    )
    return result.rename({internal: m.column for internal, m in zip(metrics, spec.measures, strict=True)})
