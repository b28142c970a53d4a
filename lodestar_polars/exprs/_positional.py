"""A group's values in ranked order, summed with per-position weights: `_positional_sum` for a measure linear in
per-position weights (DCG: the discounts; hits@k: 1 within k), and under ties="average" its exact expectation over
the orders of tied rows from each row's tie block (`_block_averaged_sum`, `_in_tied_groups`: the blocks by ranks;
`_in_sorted_tied_groups`: over each tied group's rows sorted once, for binG)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import polars as pl

from ._inputs import _Inputs

# cut-offs up to this use a lookup table of cumulative discounts; larger ones (and None) a per-group cum_sum
_TABLE_CUTOFF_LIMIT = 10_000


def _field(name: str) -> pl.Expr:
    return pl.element().struct.field(name)


def _let(fields: Mapping[str, pl.Expr], body: pl.Expr) -> pl.Expr:
    """The group's rows of `body` as a list: `body`, written with `_field(name)`, reads `fields`, each evaluated
    once (Polars does not share repeated sub-expressions inside an aggregation).  `list.eval` rather than
    `struct.with_fields`: the streaming engine refuses `pl.field` inside an aggregation."""
    return pl.struct([e.alias(n) for n, e in fields.items()]).implode().list.eval(body)


def _in_ranked_order(i: _Inputs, gain: pl.Expr, values: pl.Expr) -> pl.Expr:
    """`values` sorted by descending score, ties broken as a deterministic `ties` mode says (one sort per group,
    cheaper there than a rank)."""
    if i.ties == "input":  # a stable sort keeps the earlier of two tied rows first
        return values.sort_by(i.score, descending=True, maintain_order=True)
    if i.ties == "reverse":  # reversing the stable ascending order puts the later of two tied rows first
        return values.sort_by(i.score, maintain_order=True).reverse()
    if i.ties == "average":  # only for a group without ties, where every order is the same
        return values.sort_by(i.score, descending=True)
    if i.ties == "doc":  # trec_eval compares docnos as strings, descending
        assert i.doc is not None
        return values.sort_by(i.score, i.doc.cast(pl.String), descending=True)
    return values.sort_by(i.score, gain, descending=[True, i.ties == "optimistic"])


def _sorted_in_list(i: _Inputs, values: pl.Expr) -> pl.Expr:
    """`values` sorted by descending score, as a list, for ties="average" (the order of a group without ties,
    the only one it is read for): the rows go to a `list.eval` as one list, sorted there (cheaper than
    `sort_by` in the aggregation)."""
    element = pl.element().struct
    rows = pl.struct(i.score.alias("score"), values.alias("values")).implode()
    return rows.list.eval(element.field("values").sort_by(element.field("score"), descending=True))


def _weighted_by_position(ranked: pl.Expr, k: int | None, weight: Callable[[pl.Expr], pl.Expr]) -> pl.Expr:
    """A group's values in ranked order (a list), the first k of them, each times `weight(position)`.

    The product runs on every group's list at once: an expression evaluated group by group (a rank, a
    cumulative sum, a range of positions) costs about a microsecond per group, which is most of the time on
    many small groups.
    """
    length = pl.len() if k is None else pl.len().clip(upper_bound=k)
    weights = pl.int_ranges(1, length + 1, dtype=pl.Int64).list.eval(weight(pl.element()))
    return (ranked if k is None else ranked.list.head(k)) * weights


@dataclass(frozen=True)
class _Weight:
    """A weight per 1-based position (before the cut-off), as an expression and as a number (for the table of
    its cumulative sums)."""

    expression: Callable[[pl.Expr], pl.Expr]
    number: Callable[[int], float]

    def cut(self, position: pl.Expr, k: int | None) -> pl.Expr:
        weight = self.expression(position)
        return weight if k is None else pl.when(position <= k).then(weight).otherwise(0.0)

    def cumulative(self, k: int) -> list[float]:
        """W(p) for p = 0..k: the weights of positions 1..p summed."""
        table, total = [0.0], 0.0
        for position in range(1, k + 1):
            total += self.number(position)
            table.append(total)
        return table


# 1.0 at every position, as a column of the positions' length
_UNIT_WEIGHT = _Weight(lambda position: (position > 0).cast(pl.Float64), lambda position: 1.0)


def _block_weights(fields: dict[str, pl.Expr], name: str, cut: int | None, weight: _Weight) -> pl.Expr:
    """W(b) - W(a - 1) inside a `_let` whose fields hold a and b, the positions of each row's tie block, with
    W(p) the weights of positions 1..min(p, k) summed: a table lookup for a cut-off up to
    `_TABLE_CUTOFF_LIMIT`, else a cumulative sum over the group (added to `fields` under `name`) gathered at a
    and b."""
    a, b = _field("a"), _field("b")
    if cut is not None and cut <= _TABLE_CUTOFF_LIMIT:
        k, table = cut, weight.cumulative(cut)

        def cumulative(position: pl.Expr) -> pl.Expr:
            clipped = pl.min_horizontal(position, pl.lit(k, pl.Int64))
            return clipped.replace_strict(list(range(k + 1)), table, return_dtype=pl.Float64)

        return cumulative(b) - cumulative(a - 1)
    per_position = weight.cut(pl.int_range(1, pl.len() + 1, dtype=pl.Int64), cut)
    fields[f"{name}_weight"], fields[f"{name}_cumulative"] = per_position, per_position.cum_sum()
    # W(b) - W(a - 1) = W(b) - W(a) + weight(a), with 0-based gathers
    c, w = _field(f"{name}_cumulative"), _field(f"{name}_weight")
    return c.gather(b - 1) - c.gather(a - 1) + w.gather(a - 1)


def _block_positions(score: pl.Expr) -> dict[str, pl.Expr]:
    """a and b: the first and last positions of each row's tie block."""
    return {"a": score.rank("min", descending=True), "b": score.rank("max", descending=True)}


def _in_sorted_tied_groups(
    i: _Inputs,
    values: Mapping[str, pl.Expr],
    tied_value: Callable[[dict[str, pl.Expr], Mapping[str, pl.Expr]], pl.Expr],
) -> pl.Expr:
    """As `_in_tied_groups`, on each tied group's rows sorted by descending score (one sort per tied group: a
    rank costs several, and every quantity of a tie block is positional once its rows are together).

    `tied_value(fields, values)` gets the fields of a `_let` over the sorted rows, holding "start" and "end"
    (the first and the last row of each tie block, `is_first_distinct` / `is_last_distinct` of the sorted
    score, which count -0.0 and 0.0 as one score as `n_unique` does), and `values`, each value over the sorted
    rows; it may add fields (read once each) and returns the group's value written with `_field`.  The sum of
    per-row terms runs in the sorted order, not the rows' order: the same value to rounding.
    """
    tied = i.score.implode().list.n_unique() < pl.len()
    rows = pl.struct([i.score.alias("score"), *(value.alias(name) for name, value in values.items())]).implode()
    element = pl.element().struct
    score = element.field("score")
    in_order = pl.when(tied).then(rows).list.eval(pl.element().sort_by(score, descending=True))
    fields = {"start": score.is_first_distinct(), "end": score.is_last_distinct()}
    body = tied_value(fields, {name: element.field(name) for name in values})
    return in_order.list.eval(_let(fields, body).list.first()).list.first()


def _at_block_start(value: pl.Expr) -> pl.Expr:
    """Over sorted rows in a `_let` holding "start": `value` at the first row of each row's tie block."""
    return pl.when(_field("start")).then(value).forward_fill()


def _at_block_end(value: pl.Expr) -> pl.Expr:
    """Over sorted rows in a `_let` holding "end": `value` at the last row of each row's tie block."""
    return pl.when(_field("end")).then(value).backward_fill()


def _block_averaged_sum(score: pl.Expr, value: pl.Expr, cut: int | None, weight: _Weight) -> pl.Expr:
    """The expectation of sum(value * weight(position)) over the orders of the tied rows: each row adds
    value * (W(b) - W(a - 1)) / (b - a + 1), a..b the positions of its tie block.  By ranks: on 100-row groups
    the sorted rows of `_in_sorted_tied_groups` (positions, block flags, fills) measured ~10% slower."""
    fields = {**_block_positions(score), "v": value}
    block_size = (_field("b") - _field("a") + 1).cast(pl.Float64)
    block_weight = _block_weights(fields, "w", cut, weight)
    return _let(fields, _field("v") * block_weight / block_size).list.sum()


def _in_tied_groups(i: _Inputs, values: Mapping[str, pl.Expr], tied_value: Callable[..., pl.Expr]) -> pl.Expr:
    """`tied_value(score=..., **values)` evaluated on the rows of each group with tied scores, null elsewhere.

    A group is tied when it has fewer distinct scores than rows (as `_plan`'s `_in_tied_query`).  The tied
    groups' rows go, as one list each, to a `list.eval`; the other groups' lists are null and cost nothing
    there, so data without ties pays no rank.
    """
    tied = i.score.implode().list.n_unique() < pl.len()
    rows = pl.struct([i.score.alias("score"), *(value.alias(name) for name, value in values.items())]).implode()
    element = pl.element().struct
    body = tied_value(score=element.field("score"), **{name: element.field(name) for name in values})
    return pl.when(tied).then(rows).list.eval(body).list.first()


def _positional_sum(i: _Inputs, gain: pl.Expr, value: pl.Expr, weight: _Weight) -> pl.Expr:
    """sum(value * weight(position)) over the group's first k positions; under ties="average", its exact
    expectation over the orders of tied rows (the block-averaged sum in tied groups, the sorted order's sum in
    the others, whose order is unique)."""
    if i.ties != "average":
        return _weighted_by_position(_in_ranked_order(i, gain, value).implode(), i.cut, weight.expression).list.sum()
    ordered = _weighted_by_position(_sorted_in_list(i, value), i.cut, weight.expression).list.sum()

    def averaged(score: pl.Expr, value: pl.Expr) -> pl.Expr:
        return _block_averaged_sum(score, value, i.cut, weight)

    return pl.coalesce(_in_tied_groups(i, {"value": value}, averaged), ordered)
