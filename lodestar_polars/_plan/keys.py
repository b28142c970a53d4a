"""The plan's names and keys: the internal column names the plan adds, the internal names of the user's key and
doc columns (`_Names`), the one group column several keys (or a String key) are grouped by (packed codes or a
64-bit hash), reading the key values back for the output, and how a message names a query."""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from .._checks import DataCheck, describe
from .._spec import Spec, join_dtype
from ..measures._base import (
    PREFIX,
)

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


def _doc_shown(spec: Spec, names: _Names) -> pl.Expr:
    """A doc id as a message quotes it: the value, or with several doc columns a struct under the user's names."""
    if len(names.docs) == 1:
        return pl.col(names.docs[0])
    return pl.struct(pl.col(internal).alias(name) for internal, name in zip(names.docs, spec.doc, strict=True))


def _doc_value(docs: list[str]) -> pl.Expr:
    return pl.col(docs[0]) if len(docs) == 1 else pl.struct(docs)


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
