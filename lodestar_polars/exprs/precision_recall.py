"""The measures counting relevant rows within a cut-off: precision, recall, F1, relative precision,
R-precision (cut at the group's R) and average precision."""

from __future__ import annotations

import math

import polars as pl

from ..measures import average_precision as average_precision_measure
from ..measures import precision as precision_measure
from ..measures import recall as recall_measure
from ..measures._base import exact_quotient
from ._data_checks import _finish, _no_relevant_finish, _threshold_inputs
from ._inputs import Column, NoRelevant, Ties, _check_threshold, _column_name, _gain, _Inputs, _refuse_tie_modes
from ._positional import (
    _UNIT_WEIGHT,
    _block_positions,
    _block_weights,
    _field,
    _in_ranked_order,
    _in_tied_groups,
    _let,
    _positional_sum,
    _Weight,
)


def _hits(i: _Inputs, relevant: pl.Expr) -> pl.Expr:
    """The relevant rows within the first k positions; under ties="average", their expected number.  Without a
    cut-off, every relevant row, whatever the order."""
    if i.cut is None:
        return relevant.sum()
    return _positional_sum(i, _gain(i), relevant, _UNIT_WEIGHT)


def _as_float(k: int) -> float:
    try:
        return float(k)
    except OverflowError:
        return math.inf


def precision(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    k: int | None = None,
    ties: Ties = "average",
    threshold: float = 0.0,
    doc: Column | None = None,
) -> pl.Expr:
    """Precision of each group: its relevant rows within the first k positions, divided by k (also when the
    group has fewer than k rows, as trec_eval's P_k); without k, by the group's rows.

    Parameters
    ----------
    relevance, score, k, doc
        As for `ndcg`.
    ties
        As for `ndcg`; "average" gives the exact expectation over every order of the tied rows.
    threshold
        A row is relevant when its relevance is above it.

    Returns
    -------
    pl.Expr
        A Float64 expression named `p` or `p@{k}` (as `evaluate` names the measure), one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1, 2, 2], "relevance": [0, 1, 0, 1, 0], "score": [3, 2, 1, 5, 5]})
    >>> df.group_by("query", maintain_order=True).agg(exprs.precision(k=1))
    shape: (2, 2)
    ┌───────┬─────┐
    │ query ┆ p@1 │
    │ ---   ┆ --- │
    │ i64   ┆ f64 │
    ╞═══════╪═════╡
    │ 1     ┆ 0.0 │
    │ 2     ┆ 0.5 │
    └───────┴─────┘
    """
    i, relevant, checks = _threshold_inputs("precision", relevance, score, doc, k, ties, threshold)
    hits = _hits(i, relevant)
    name = _column_name(precision_measure.MEASURE.name, i.k)
    if i.k is None:  # a group without rows (an empty window) scores 0, as a query without rows
        return _finish(i, name, hits / pl.len(), checks, lambda values: values.fill_nan(0.0))
    # divided as C divides, not by Polars' product with the reciprocal of k (`exact_quotient`)
    return _finish(i, name, exact_quotient(hits, _as_float(i.k)), checks)


def recall(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    k: int | None = None,
    ties: Ties = "average",
    threshold: float = 0.0,
    no_relevant: NoRelevant = 0.0,
    doc: Column | None = None,
) -> pl.Expr:
    """Recall of each group: its relevant rows within the first k positions, divided by R, its relevant rows.

    R counts the group's own rows only: an expression sees no judgments outside the frame, so a relevant
    document the run did not retrieve is not counted (the namespace's `qrels=` counts it, as trec_eval).

    Parameters
    ----------
    relevance, score, k, doc, ties, threshold
        As for `precision`.
    no_relevant
        Recall of a group with R = 0: a float, None (null) or "error" (raise).

    Returns
    -------
    pl.Expr
        A Float64 expression named `r` or `r@{k}` (as `evaluate` names the measure), one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1, 2, 2], "relevance": [1, 1, 0, 1, 0], "score": [3, 2, 1, 5, 5]})
    >>> df.group_by("query", maintain_order=True).agg(exprs.recall(k=1))
    shape: (2, 2)
    ┌───────┬─────┐
    │ query ┆ r@1 │
    │ ---   ┆ --- │
    │ i64   ┆ f64 │
    ╞═══════╪═════╡
    │ 1     ┆ 0.5 │
    │ 2     ┆ 0.5 │
    └───────┴─────┘
    """
    i, relevant, checks = _threshold_inputs("recall", relevance, score, doc, k, ties, threshold)
    finish = _no_relevant_finish(no_relevant, _check_threshold(threshold))
    return _finish(
        i, _column_name(recall_measure.MEASURE.name, i.k), _hits(i, relevant) / relevant.sum(), checks, finish
    )


def _ordered_average_precision(relevant_in_order: pl.Expr, k: int | None) -> pl.Expr:
    """sum over relevant rows at positions p <= k of (relevant rows at positions <= p) / p, in one order."""
    element = pl.element()
    position = pl.int_range(1, pl.len() + 1, dtype=pl.Int64).cast(pl.Float64)
    per_position = element * element.cum_sum() / position
    return relevant_in_order.implode().list.eval((per_position if k is None else per_position.head(k)).sum())


def _block_averaged_precision(score: pl.Expr, relevant: pl.Expr, cut: int | None) -> pl.Expr:
    """The expectation of the sum above over the orders of the tied rows.  A block at positions a..b (n rows),
    r of them relevant and C relevant rows above it, adds r/n (C+1) D + r(r-1)/(n(n-1)) (M - a D), with
    D = sum 1/p and M = count over its positions p <= k (see `measures.average_precision`): each of its
    relevant rows adds 1/r of it.  C + 1 and C + r are the first and last ranks of a relevant row's score
    among the relevant rows' scores."""
    among_relevant = pl.when(relevant > 0).then(score)
    fields = {
        **_block_positions(score),
        "relevant": relevant,
        "first_relevant": among_relevant.rank("min", descending=True),
        "last_relevant": among_relevant.rank("max", descending=True),
    }
    inverse = _block_weights(fields, "inverse", cut, _Weight(lambda p: 1.0 / p.cast(pl.Float64), lambda p: 1.0 / p))
    count = _block_weights(fields, "count", cut, _UNIT_WEIGHT)
    a, n = _field("a").cast(pl.Float64), (_field("b") - _field("a") + 1).cast(pl.Float64)
    first, last = _field("first_relevant").cast(pl.Float64), _field("last_relevant").cast(pl.Float64)
    pairs = pl.when(n > 1).then((last - first) / (n * (n - 1.0))).otherwise(0.0)
    per_row = _field("relevant") * (first / n * inverse + pairs * (count - a * inverse))
    return _let(fields, per_row.fill_null(0.0)).list.sum()


def average_precision(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    k: int | None = None,
    ties: Ties = "average",
    threshold: float = 0.0,
    no_relevant: NoRelevant = 0.0,
    doc: Column | None = None,
) -> pl.Expr:
    """Average precision of each group (trec_eval's map, map_cut_k with k): over its relevant rows at
    positions p <= k, the sum of the precision at p, divided by R, the group's relevant rows.

    R counts the group's own rows only, as for `recall`.

    Parameters
    ----------
    relevance, score, k, doc, threshold, no_relevant
        As for `recall`.
    ties
        As for `ndcg`; "average" gives the exact expectation over every order of the tied rows.

    Returns
    -------
    pl.Expr
        A Float64 expression named `ap` or `ap@{k}` (as `evaluate` names the measure), one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1, 2, 2], "relevance": [0, 1, 1, 1, 0], "score": [3, 2, 1, 5, 5]})
    >>> df.group_by("query", maintain_order=True).agg(exprs.average_precision())
    shape: (2, 2)
    ┌───────┬──────────┐
    │ query ┆ ap       │
    │ ---   ┆ ---      │
    │ i64   ┆ f64      │
    ╞═══════╪══════════╡
    │ 1     ┆ 0.583333 │
    │ 2     ┆ 0.75     │
    └───────┴──────────┘
    """
    i, relevant, checks = _threshold_inputs("average_precision", relevance, score, doc, k, ties, threshold)
    finish = _no_relevant_finish(no_relevant, _check_threshold(threshold))
    summed = _ordered_average_precision(_in_ranked_order(i, _gain(i), relevant), i.cut).list.first()
    if i.ties == "average":

        def averaged(score: pl.Expr, relevant: pl.Expr) -> pl.Expr:
            return _block_averaged_precision(score, relevant, i.cut)

        summed = pl.coalesce(_in_tied_groups(i, {"relevant": relevant}, averaged), summed)
    return _finish(
        i, _column_name(average_precision_measure.MEASURE.name, i.k), summed / relevant.sum(), checks, finish
    )


def yaap(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    ties: Ties = "average",
    threshold: float = 0.0,
    doc: Column | None = None,
) -> pl.Expr:
    """yaap of each group (trec_eval's yaap, `evaluate`'s `yaap`): log((1 + S) / (1 + R - S)), S the sum over
    its relevant rows of the precision at their positions (average precision's sum, AP = S / R), R the group's
    relevant rows; a group without a relevant row scores log(1) = 0, as in trec_eval.  No cut-off.

    R counts the group's own rows only, as for `recall`.

    Parameters
    ----------
    relevance, score, doc, threshold
        As for `recall`.
    ties
        "doc" (trec_eval's order), "input", "reverse", "optimistic" or "pessimistic" (relevant rows of a tie
        block first or last: yaap grows with S, so these are its greatest and least values).  "average", the
        default as in the namespace, is refused with the namespace's message (a logarithm of a ratio of S has no
        closed-form expectation over tied orders).

    Returns
    -------
    pl.Expr
        A Float64 expression named `yaap`, one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1, 1], "relevance": [0, 2, 1, 1], "score": [4, 3, 2, 1]})
    >>> # S = 1/2 + 2/3 + 3/4 = 23/12, R = 3: log((35/12) / (25/12)) = log(1.4)
    >>> df.group_by("query").agg(exprs.yaap(ties="input"))
    shape: (1, 2)
    ┌───────┬──────────┐
    │ query ┆ yaap     │
    │ ---   ┆ ---      │
    │ i64   ┆ f64      │
    ╞═══════╪══════════╡
    │ 1     ┆ 0.336472 │
    └───────┴──────────┘
    """
    i, relevant, checks = _threshold_inputs("yaap", relevance, score, doc, None, ties, threshold)
    _refuse_tie_modes("yaap", i)
    summed = _ordered_average_precision(_in_ranked_order(i, _gain(i), relevant), i.cut).list.first()
    value = ((1.0 + summed) / (1.0 + relevant.sum() - summed)).log()
    return _finish(i, "yaap", value, checks)


def f1(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    k: int | None = None,
    ties: Ties = "average",
    threshold: float = 0.0,
    no_relevant: NoRelevant = 0.0,
    doc: Column | None = None,
) -> pl.Expr:
    """F1 of each group (ranx's f1@k): the harmonic mean of precision@k and recall@k, 2 hits@k / (k + R),
    R the group's relevant rows; without k, k is the group's rows.

    R counts the group's own rows only, as for `recall`.  The value is linear in hits@k, so under
    ties="average" it is the exact expectation over every order of the tied rows.

    Parameters
    ----------
    relevance, score, k, doc, ties, threshold, no_relevant
        As for `recall`.

    Returns
    -------
    pl.Expr
        A Float64 expression named `f1` or `f1@{k}`, one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1, 2, 2], "relevance": [1, 1, 0, 1, 0], "score": [3, 2, 1, 5, 5]})
    >>> df.group_by("query", maintain_order=True).agg(exprs.f1(k=1))
    shape: (2, 2)
    ┌───────┬──────────┐
    │ query ┆ f1@1     │
    │ ---   ┆ ---      │
    │ i64   ┆ f64      │
    ╞═══════╪══════════╡
    │ 1     ┆ 0.666667 │
    │ 2     ┆ 0.5      │
    └───────┴──────────┘
    """
    i, relevant, checks = _threshold_inputs("f1", relevance, score, doc, k, ties, threshold)
    finish = _no_relevant_finish(no_relevant, _check_threshold(threshold))
    total = relevant.sum()
    length = pl.len().cast(pl.Float64) if i.k is None else pl.lit(_as_float(i.k))
    value = pl.when(total > 0).then(2.0 * _hits(i, relevant) / (length + total)).otherwise(math.nan)
    return _finish(i, _column_name("f1", i.k), value, checks, finish)


def relative_precision(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    k: int | None = None,
    ties: Ties = "average",
    threshold: float = 0.0,
    no_relevant: NoRelevant = 0.0,
    doc: Column | None = None,
) -> pl.Expr:
    """Relative precision of each group (trec_eval's relative_P_k): its relevant rows within the first k
    positions divided by min(k, R), the most the first k positions could hold, R the group's relevant rows:
    precision up to R, recall past it; without k, recall over the whole group (1 when R > 0).

    R counts the group's own rows only, as for `recall`.  The value is linear in hits@k, so under
    ties="average" it is the exact expectation over every order of the tied rows.

    Parameters
    ----------
    relevance, score, k, doc, ties, threshold, no_relevant
        As for `recall` (trec_eval scores a query with R = 0 as 0, the default).

    Returns
    -------
    pl.Expr
        A Float64 expression named `relative_p` or `relative_p@{k}` (as `evaluate` names it), one value per
        group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1, 2, 2], "relevance": [1, 0, 1, 1, 0], "score": [3, 2, 1, 5, 5]})
    >>> df.group_by("query", maintain_order=True).agg(exprs.relative_precision(k=2))
    shape: (2, 2)
    ┌───────┬──────────────┐
    │ query ┆ relative_p@2 │
    │ ---   ┆ ---          │
    │ i64   ┆ f64          │
    ╞═══════╪══════════════╡
    │ 1     ┆ 0.5          │
    │ 2     ┆ 1.0          │
    └───────┴──────────────┘
    """
    i, relevant, checks = _threshold_inputs("relative_precision", relevance, score, doc, k, ties, threshold)
    finish = _no_relevant_finish(no_relevant, _check_threshold(threshold))
    total = relevant.sum()
    most = total if i.k is None else pl.min_horizontal(total, pl.lit(_as_float(i.k)))
    value = pl.when(total > 0).then(_hits(i, relevant) / most).otherwise(math.nan)
    return _finish(i, _column_name("relative_p", i.k), value, checks, finish)


def _hits_within_relevant_total(i: _Inputs, relevant: pl.Expr) -> pl.Expr:
    """The relevant rows within the first R positions, R the group's relevant rows; under ties="average" their
    expected number: a row of the tie block at positions a..b adds (min(b, R) - min(a - 1, R)) / (b - a + 1)."""
    total = relevant.sum()
    ranked = _in_ranked_order(i, _gain(i), relevant).implode()
    # the running count at position R (cheaper than a head of a per-group length); R = 0 reads the last
    # position, whose count is R, 0; an empty group (a window) has none
    running = ranked.list.eval(pl.element().cum_sum())
    ordered = running.list.get(total.cast(pl.Int64) - 1, null_on_oob=True).fill_null(0.0)
    if i.ties != "average":
        return ordered

    def averaged(score: pl.Expr, relevant: pl.Expr) -> pl.Expr:
        fields = {**_block_positions(score), "relevant": relevant}
        a, b = _field("a").cast(pl.Float64), _field("b").cast(pl.Float64)
        r = _field("relevant").sum()
        within = pl.min_horizontal(b, r) - pl.min_horizontal(a - 1.0, r)
        return _let(fields, _field("relevant") * within / (b - a + 1.0)).list.sum()

    return pl.coalesce(_in_tied_groups(i, {"relevant": relevant}, averaged), ordered)


def rprec(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    ties: Ties = "average",
    threshold: float = 0.0,
    no_relevant: NoRelevant = 0.0,
    doc: Column | None = None,
) -> pl.Expr:
    """R-precision of each group (trec_eval's Rprec): its relevant rows within the first R positions, divided
    by R, the group's relevant rows.

    R counts the group's own rows only, as for `recall` (trec_eval counts the relevant judged documents the
    run did not retrieve too: the namespace's `qrels=`).  No cut-off: R is the cut-off.

    Parameters
    ----------
    relevance, score, doc, threshold, no_relevant
        As for `recall`.
    ties
        As for `ndcg`; "average" gives the exact expectation over every order of the tied rows.

    Returns
    -------
    pl.Expr
        A Float64 expression named `rprec`, one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1, 2, 2], "relevance": [0, 1, 1, 1, 0], "score": [3, 2, 1, 5, 5]})
    >>> df.group_by("query", maintain_order=True).agg(exprs.rprec())
    shape: (2, 2)
    ┌───────┬───────┐
    │ query ┆ rprec │
    │ ---   ┆ ---   │
    │ i64   ┆ f64   │
    ╞═══════╪═══════╡
    │ 1     ┆ 0.5   │
    │ 2     ┆ 0.5   │
    └───────┴───────┘
    """
    i, relevant, checks = _threshold_inputs("rprec", relevance, score, doc, None, ties, threshold)
    finish = _no_relevant_finish(no_relevant, _check_threshold(threshold))
    return _finish(i, "rprec", _hits_within_relevant_total(i, relevant) / relevant.sum(), checks, finish)
