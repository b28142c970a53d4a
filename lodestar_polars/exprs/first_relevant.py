"""The measures of the first relevant row: reciprocal rank and success (ranx's hit_rate).  Under ties="average"
their exact expectation comes from plain per-group sums over the first tie block holding a relevant row."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import polars as pl

from ..measures import reciprocal_rank as reciprocal_rank_measure
from ..measures import success as success_measure
from ._data_checks import _checks, _finish, _threshold_inputs
from ._inputs import Column, Ties, _check_threshold, _column_name, _gain, _Inputs, _inputs
from ._positional import _UNIT_WEIGHT, _in_ranked_order, _weighted_by_position


def _from_counts(counts: Mapping[str, pl.Expr], value: Callable[[pl.DataFrame], pl.Series]) -> pl.Expr:
    """A per-group value computed from per-group aggregations (`counts`, plain aggregations such as sums and
    maxima), by one Python call on the frame of their per-group results."""
    fields = pl.struct([e.alias(n) for n, e in counts.items()])
    return fields.map_batches(
        lambda per_group: value(per_group.struct.unnest()), return_dtype=pl.Float64, is_elementwise=True
    )


def _expected_at_first_relevant(
    before: pl.Expr,
    size: pl.Expr,
    relevant: pl.Expr,
    k: int | None,
    weigh: Callable[[pl.Expr, pl.Expr], pl.Expr],
) -> pl.Expr:
    """The expectation over the orders of the first relevant tie block (s rows before it, n in it, r relevant)
    of a score of s + J, the first relevant row's position: the sum of weigh(P(J = j), s + j) over j.

    P(J = j) = C(n - j, r - 1) / C(n, r) = r / (n - j + 1) * prod_{i=0}^{j-2} (n - r - i) / (n - i),
    for j = 1..n - r + 1, and a row past k scores 0.
    """
    s, n, r = before.cast(pl.Int64), size.cast(pl.Int64), relevant.cast(pl.Int64)
    last = n - r + 1 if k is None else pl.min_horizontal(n - r + 1, pl.lit(k, pl.Int64) - s)
    j = pl.int_ranges(1, pl.max_horizontal(last, 0) + 1, dtype=pl.Int64)
    survival = ((n - r - j + 1) / (n - j + 1)).list.eval(pl.element().shift(1).fill_null(1.0).cum_prod())
    probability = survival * r / (n - j + 1)
    return weigh(probability, s + j).list.sum()


def _first_relevant_block(i: _Inputs, relevant: pl.Expr) -> dict[str, pl.Expr]:
    """Per group, the first tie block holding a relevant row: the one at the highest score of a relevant row
    (no rank needed), its rows before, size and relevant rows, and whether there is one."""
    top = pl.when(relevant).then(i.score).max()
    in_block = i.score == top
    return {
        "before": (i.score > top).sum(),
        "size": in_block.sum(),
        "relevant": (in_block & relevant).sum(),
        "found": top.is_not_null(),
    }


def _expected_from_first_relevant_block(
    k: int | None, weigh: Callable[[pl.Expr, pl.Expr], pl.Expr]
) -> Callable[[pl.DataFrame], pl.Series]:
    """The expectation per group, from the first relevant block's counts.  A block whose rows are all relevant
    (an untied row among them) puts the first relevant row at its first position (P(J = 1) = 1): only the
    other groups build the lists of the sum over j, which cost a `list.eval` per group."""

    def expected(frame: pl.DataFrame) -> pl.Series:
        before, size, relevant = pl.col("before"), pl.col("size"), pl.col("relevant")
        first = before.cast(pl.Int64) + 1
        in_cut = pl.col("found") if k is None else pl.col("found") & (first <= k)
        certain = weigh(pl.lit(1.0), first)
        numbered = frame.with_row_index("group").with_columns(in_cut.alias("in_cut"), certain.alias("value"))
        uncertain = numbered.filter(pl.col("in_cut") & (relevant < size))
        values = numbered.get_column("value")
        if uncertain.height:
            sums = uncertain.select(_expected_at_first_relevant(before, size, relevant, k, weigh)).to_series()
            values = values.scatter(uncertain.get_column("group"), sums)
        return values.zip_with(numbered.get_column("in_cut"), pl.Series([0.0] * len(values)))

    return expected


def reciprocal_rank(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    k: int | None = None,
    ties: Ties = "average",
    threshold: float = 0.0,
    doc: Column | None = None,
) -> pl.Expr:
    """Reciprocal rank of each group: 1 / position of the first row whose relevance is above `threshold`.

    Parameters
    ----------
    relevance, score, k, doc
        As for `ndcg`.  A group without a relevant row, or whose first one lies past k, scores 0.
    ties
        As for `ndcg`; "average" gives the exact expectation over every order of the tied rows.
    threshold
        A row is relevant when its relevance is above it.

    Returns
    -------
    pl.Expr
        A Float64 expression named `rr` or `rr@{k}` (as `evaluate` names the measure), one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1, 2, 2], "relevance": [0, 1, 0, 1, 0], "score": [3, 2, 1, 5, 5]})
    >>> df.group_by("query", maintain_order=True).agg(exprs.reciprocal_rank())
    shape: (2, 2)
    ┌───────┬──────┐
    │ query ┆ rr   │
    │ ---   ┆ ---  │
    │ i64   ┆ f64  │
    ╞═══════╪══════╡
    │ 1     ┆ 0.5  │
    │ 2     ┆ 0.75 │
    └───────┴──────┘
    """
    i = _inputs("reciprocal_rank", relevance, score, doc, k, ties, "linear")
    cut = _check_threshold(threshold)
    relevant = i.relevance.cast(pl.Float64, strict=False) > cut
    name = _column_name(reciprocal_rank_measure.MEASURE.name, i.k)
    checks = _checks("reciprocal_rank", i, _gain(i))
    if i.ties == "average":
        expected = _expected_from_first_relevant_block(i.cut, lambda probability, position: probability / position)
        return _finish(i, name, _from_counts(_first_relevant_block(i, relevant), expected), checks)
    # 1 / position decreases with the position: its largest value over the relevant rows is the first one's
    relevant_in_order = _in_ranked_order(i, _gain(i), relevant.cast(pl.Float64)).implode()
    reciprocal = _weighted_by_position(relevant_in_order, i.cut, lambda position: 1.0 / position.cast(pl.Float64))
    return _finish(i, name, reciprocal.list.max().fill_null(0.0), checks)


def success(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    k: int | None = None,
    ties: Ties = "average",
    threshold: float = 0.0,
    doc: Column | None = None,
) -> pl.Expr:
    """Success of each group (trec_eval's success_k, ranx's hit_rate@k): 1 when a relevant row is within the
    first k positions, else 0.

    Parameters
    ----------
    relevance, score, k, doc, threshold
        As for `precision`.
    ties
        As for `ndcg`; "average" gives the exact probability over every order of the tied rows.

    Returns
    -------
    pl.Expr
        A Float64 expression named `success` or `success@{k}`, one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1, 2, 2], "relevance": [0, 1, 0, 1, 0], "score": [3, 2, 1, 5, 5]})
    >>> df.group_by("query", maintain_order=True).agg(exprs.success(k=1))
    shape: (2, 2)
    ┌───────┬───────────┐
    │ query ┆ success@1 │
    │ ---   ┆ ---       │
    │ i64   ┆ f64       │
    ╞═══════╪═══════════╡
    │ 1     ┆ 0.0       │
    │ 2     ┆ 0.5       │
    └───────┴───────────┘
    """
    i, relevant, checks = _threshold_inputs("success", relevance, score, doc, k, ties, threshold)
    name = _column_name(success_measure.MEASURE.name, i.k)
    if i.ties == "average":
        expected = _expected_from_first_relevant_block(i.cut, lambda probability, _position: probability)
        return _finish(i, name, _from_counts(_first_relevant_block(i, relevant > 0), expected), checks)
    relevant_in_order = _in_ranked_order(i, _gain(i), relevant).implode()
    within = _weighted_by_position(relevant_in_order, i.cut, _UNIT_WEIGHT.expression)
    return _finish(i, name, within.list.max().fill_null(0.0), checks)


# `hit_rate` is ranx's name for success, as `evaluate`'s alias: the same expression and column (`success@k`)
hit_rate = success
