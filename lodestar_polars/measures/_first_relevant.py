"""The first relevant position, shared by reciprocal rank and success.

Without tie averaging, the least position holding a relevant row.  With ties="average", only the first tie
block holding a relevant row matters: it starts after s documents and holds n documents, r of them relevant,
and the first relevant row lands at block offset j with P(J = j) = C(n-j, r-1) / C(n, r)
(`first_relevant_distribution`).  A relevant row in no tie is a block of one.  The block is found by one least
value over the rows and blocks: its (s, n, r) packed into one integer (`_pack`).  The expectations over J of
1 / position (rr) and of [position <= k] (success) are computed after the per-query group-by
(`with_expectations`).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from .._checks import DataCheck, message
from ._base import (
    BLOCK_RELEVANT,
    BLOCK_SIZE,
    BLOCK_START,
    POSITION,
    PREFIX,
    RELEVANT,
    ROWS,
    Context,
    Derived,
    Term,
    cut_at,
    term_name,
)

FIRST_RELEVANT = f"{PREFIX}first_relevant"
FIRST_PROBABILITY = f"{PREFIX}first_probability"
FIRST_RECIPROCAL = f"{PREFIX}first_reciprocal"

# a tie block's (start, size, relevant) packed into one integer
_PACK_BITS = 21
MAX_ROWS_PER_QUERY_FOR_AVERAGED_FIRST_RELEVANT = (1 << _PACK_BITS) - 1

# the largest cut-off up to which `with_expectations` sums in one elementwise step per position
_UNROLLED_OFFSETS = 64


def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
    """The first relevant position; with tie averaging, the first tie block holding a relevant row, packed
    (`_pack`): a relevant row in no tie is a block of one.  One term for every cut-off."""
    relevant, position = pl.col(RELEVANT), pl.col(context.position).cast(pl.Int64)
    if not context.averaged:
        return {FIRST_RELEVANT: Term(pl.when(relevant).then(position), None, least=True, judged_rows=True)}
    alone = _pack(position - 1, pl.lit(1, pl.Int64), pl.lit(1, pl.Int64))
    size, relevant_rows = pl.col(BLOCK_SIZE).cast(pl.Int64), pl.col(BLOCK_RELEVANT).cast(pl.Int64)
    block = pl.when(relevant_rows > 0).then(_pack(pl.col(BLOCK_START), size, relevant_rows))
    sums = (
        pl.col(RELEVANT).sum().alias(BLOCK_RELEVANT),
        (pl.col(POSITION).min() - 1).cast(pl.Int64).alias(BLOCK_START),
    )
    return {FIRST_RELEVANT: Term(pl.when(relevant).then(alone), block, least=True, block_sums=sums, judged_rows=True)}


def value(context: Context, cutoff: int | None, statistic: str) -> pl.Expr:
    """rr (statistic "reciprocal") or success ("within") at cut-off k, from the first relevant position, or
    with tie averaging from its expectation (`expectation`)."""
    c = cut_at(cutoff)
    if context.averaged:
        # null when no tie block holds a relevant row
        return pl.col(expectation(statistic, c).column).fill_null(0.0)
    first = pl.col(FIRST_RELEVANT)
    found = first.is_not_null() if c is None else first <= c
    hit = 1.0 / first.cast(pl.Float64) if statistic == "reciprocal" else pl.lit(1.0)
    return pl.when(found).then(hit).otherwise(0.0)


def expectation(statistic: str, cutoff: int | None) -> Derived:
    """E[1 / first relevant position, 0 past k] ("reciprocal") or P(first relevant position <= k) ("within")."""
    column = term_name(f"expected_{'rr' if statistic == 'reciprocal' else 'success'}", cutoff)
    return Derived(column, with_expectations, statistic, cutoff)


def too_long(context: Context) -> list[DataCheck]:
    """The packing holds positions below 2**21."""
    if not context.averaged:
        return []
    limit = MAX_ROWS_PER_QUERY_FOR_AVERAGED_FIRST_RELEVANT
    return [
        DataCheck(
            f"{PREFIX}too_long",
            (pl.col(ROWS) > limit).cast(pl.UInt32),
            message(
                ValueError,
                f"query {{query}} has more than {limit} rows, the limit of reciprocal rank and success with "
                "ties='average'.",
            ),
        )
    ]


def _pack(start: pl.Expr, size: pl.Expr, relevant_rows: pl.Expr) -> pl.Expr:
    """A tie block's (start, size, relevant rows) as one integer whose least value over the blocks holding a
    relevant row is the first of them."""
    return start * (1 << (2 * _PACK_BITS)) + size * (1 << _PACK_BITS) + relevant_rows


def _unpack_first_block(packed: pl.Expr) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    """(s, n, r) of the first tie block holding a relevant row: it starts after s documents and holds n
    documents, r of them relevant."""
    s = packed // (1 << (2 * _PACK_BITS))
    n = (packed // (1 << _PACK_BITS)) % (1 << _PACK_BITS)
    return s, n, packed % (1 << _PACK_BITS)


def first_relevant_distribution(packed: pl.Expr, cutoff: int | None) -> tuple[pl.Expr, pl.Expr]:
    """Offsets j = 1.. (a list) and P(first relevant row at block offset j) (a list) in the first tie block
    holding a relevant row (`_unpack_first_block`): P(J = j) = C(n - j, r - 1) / C(n, r)
    = r / (n - j + 1) * prod_{i<j-1} (n - r - i) / (n - i).  Offsets past the cut-off are left out."""
    s, n, r = _unpack_first_block(packed)
    last = n - r + 1 if cutoff is None else pl.min_horizontal(n - r + 1, pl.lit(cutoff) - s)
    j = pl.int_ranges(1, pl.max_horizontal(last, 0) + 1, dtype=pl.Int64)
    # survival factor for reaching offset j: prod_{i=0}^{j-2} (n - r - i) / (n - i); the first is 1
    step = ((n - r - j + 1) / (n - j + 1)).list.eval(pl.element().shift(1).fill_null(1.0).cum_prod())
    return j, step * r / (n - j + 1)


def with_expectations(per_query: pl.LazyFrame, wanted: Sequence[Derived]) -> pl.LazyFrame:
    """With tie averaging, E[1 / position of the first relevant row] (rr) and P(it is within k) (success)
    per cut-off: sums over the block offsets j of P(J = j) (`first_relevant_distribution`).  With cut-offs up
    to `_UNROLLED_OFFSETS`, one elementwise step per position (`_unrolled_expectations`); otherwise as lists
    (several times slower: `list.eval` runs per query)."""
    first = pl.col(FIRST_RELEVANT)
    finite = [w.cutoff for w in wanted if w.cutoff is not None]
    if len(finite) == len(wanted) and max(finite) <= _UNROLLED_OFFSETS:
        return _unrolled_expectations(per_query, first, wanted)
    largest = None if len(finite) < len(wanted) else max(finite)
    offsets, probability = first_relevant_distribution(first, largest)
    start = first // (1 << (2 * _PACK_BITS))
    per_query = per_query.with_columns(
        probability.alias(FIRST_PROBABILITY), (probability / (start + offsets)).alias(FIRST_RECIPROCAL)
    )
    expectations = []
    for w in wanted:
        terms = pl.col(FIRST_RECIPROCAL if w.statistic == "reciprocal" else FIRST_PROBABILITY)
        if w.cutoff is not None:
            terms = terms.list.head(pl.max_horizontal(pl.lit(w.cutoff) - start, 0))
        # + 0.0: an empty list (the block starts past k) sums to -0.0
        expectations.append((terms.list.sum() + 0.0).alias(w.column))
    return per_query.with_columns(expectations).drop(FIRST_PROBABILITY, FIRST_RECIPROCAL)


def _unrolled_expectations(per_query: pl.LazyFrame, first: pl.Expr, wanted: Sequence[Derived]) -> pl.LazyFrame:
    """`with_expectations` for cut-offs up to `_UNROLLED_OFFSETS`, one elementwise step per position
    t = 1, 2, ...: once the block has started (t > s, offset j = t - s), P(J = j) = survival * r / (n - j + 1)
    is added, over t, to E[1 / position] and to P(position <= t), which are the rr@t and success@t of the
    cut-offs equal to t; the survival factor prod_{i<j} (n - r - i) / (n - i) then moves on (it reaches 0
    past offset n - r + 1).  Each step is its own `with_columns`, so the expressions stay small, and costs
    the same whatever the number of cut-offs."""
    s, n, r = (part.cast(pl.Float64) for part in _unpack_first_block(first))
    survival, reciprocal, probability = f"{PREFIX}survival", f"{PREFIX}reciprocal_sum", f"{PREFIX}probability_sum"
    per_query = per_query.with_columns(
        pl.lit(1.0).alias(survival), pl.lit(0.0).alias(reciprocal), pl.lit(0.0).alias(probability)
    )
    survive = pl.col(survival)
    by_cutoff: dict[int, list[pl.Expr]] = {}
    for w in wanted:
        assert w.cutoff is not None
        by_cutoff.setdefault(w.cutoff, []).append(
            pl.col(reciprocal if w.statistic == "reciprocal" else probability).alias(w.column)
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
