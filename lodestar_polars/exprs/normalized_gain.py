"""trec_eval's normalised gains: G (graded: each gain over log2 of 2 + the ideal's cost minus the gain so far)
and binG (binary: each relevant row over log2 of 2 + the non-relevant rows above it), run on the group's values in
ranked order.  G has no exact expectation over tied orders and no tie bounds (both refused, as in the
namespace); binG's expectation is a sum over each tie block's first positions (`_block_averaged_bin_g`)."""

from __future__ import annotations

import math
from collections.abc import Mapping

import polars as pl

from ._data_checks import NO_POSITIVE_GAIN_MESSAGE, _checks, _finish, _no_relevant_finish, _threshold_inputs
from ._inputs import (
    Column,
    Gain,
    NoRelevant,
    Ties,
    _check_threshold,
    _gain,
    _inputs,
    _refuse_tie_modes,
)
from ._positional import (
    _at_block_end,
    _at_block_start,
    _field,
    _in_ranked_order,
    _in_sorted_tied_groups,
    _sorted_in_list,
)

LOG_2 = math.log(2.0)


def _g_sum(gains: pl.Expr) -> pl.Expr:
    """Over a group's gains in ranked order g(1..n): the sum of g(p) / log2(2 + C(p) - S(p)), S(p) the gains of
    positions 1..p summed, C(p) = p + the sum of max(ideal gain - 1, 0) over the ideal's positions 1..p (the
    ideal: the gains sorted descending).  C(p) >= S(p): the logarithm is at least log 2."""
    position = pl.int_range(1, pl.len() + 1, dtype=pl.Int64).cast(pl.Float64)
    cost = position + (gains.sort(descending=True) - 1.0).clip(lower_bound=0.0).cum_sum()
    return (gains * LOG_2 / (2.0 + cost - gains.cum_sum()).log()).sum()


def g(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    ties: Ties = "average",
    gain: Gain = "linear",
    no_relevant: NoRelevant = 0.0,
    doc: Column | None = None,
) -> pl.Expr:
    """G of each group, trec_eval's normalised gain (`evaluate`'s `g`): the sum over its rows of
    g(p) / log2(2 + C(p) - S(p)), divided by the sum of its positive gains.  S(p) is the gain over positions
    1..p, C(p) the sum of max(ideal gain, 1) over them, the ideal being the group's gains sorted descending.

    The ideal and the positive gains are the group's own rows' (the namespace's `qrels=` takes every judged
    document).  No cut-off, as in trec_eval.

    Parameters
    ----------
    relevance, score, doc
        As for `ndcg`.
    ties
        "reverse", "input" or "doc" (trec_eval's order).  "average", the default as in the namespace, is refused
        with the namespace's message (G has no exact expectation there), and so are "optimistic" and
        "pessimistic" (the most / least gainful order of a tie block is not always G's greatest / least value).
    gain
        As for `ndcg`; a mapping may give negative gains, as trec_eval's G takes them (the ideal holds the
        positive ones).
    no_relevant
        G of a group without a positive gain: a float, None (null) or "error" (raise).

    Returns
    -------
    pl.Expr
        A Float64 expression named `g`, one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1], "relevance": [0, 2, 1], "score": [3, 2, 1]})
    >>> # C = 2, 3, 4 and S = 0, 2, 3: (2 / log2(2 + 3 - 2) + 1 / log2(2 + 4 - 3)) / 3 = 1 / log2(3)
    >>> df.group_by("query").agg(exprs.g(ties="input"))
    shape: (1, 2)
    ┌───────┬─────────┐
    │ query ┆ g       │
    │ ---   ┆ ---     │
    │ i64   ┆ f64     │
    ╞═══════╪═════════╡
    │ 1     ┆ 0.63093 │
    └───────┴─────────┘
    """
    i = _inputs("g", relevance, score, doc, None, ties, gain)
    _refuse_tie_modes("g", i)
    finish = _no_relevant_finish(no_relevant, 0.0, NO_POSITIVE_GAIN_MESSAGE)
    gain_expr = _gain(i)
    summed = _in_ranked_order(i, gain_expr, gain_expr).implode().list.eval(_g_sum(pl.element())).list.first()
    total = gain_expr.filter(gain_expr > 0).sum()
    value = pl.when(total > 0).then(summed / total).otherwise(math.nan)
    return _finish(i, "g", value, _checks("g", i, gain_expr), finish)


def _bin_g_sum(relevant: pl.Expr) -> pl.Expr:
    """Over a group's relevant flags (0.0 / 1.0) in ranked order: the sum over its relevant rows of
    1 / log2(2 + the non-relevant rows above it)."""
    return (relevant * LOG_2 / ((1.0 - relevant).cum_sum() + 2.0).log()).sum()


def _block_averaged_bin_g(fields: dict[str, pl.Expr], values: Mapping[str, pl.Expr]) -> pl.Expr:
    """The expectation of binG's sum over the orders of the tied rows, inside `_in_sorted_tied_groups`.  In a
    block of n rows, r relevant and m = n - r not, below N non-relevant rows, each relevant row has j of the
    block's non-relevant rows above it with probability 1 / (m + 1) for j in 0..m: it adds
    (w(N) + ... + w(N + m)) / (m + 1), w(t) = 1 / log2(2 + t).  Over the rows sorted by descending score, with
    S(p) the non-relevant rows at positions 1..p and X(p) the sum of w(S(q)) over those non-relevant rows q:
    N = S(a - 1) and N + m = S(b), and w(N + 1) + ... + w(N + m) = X(b) - X(a - 1), a..b the block's positions."""
    relevant = values["relevant"]
    nonrelevant = 1.0 - relevant
    seen = nonrelevant.cum_sum()
    fields["relevant"], fields["seen"] = relevant, seen
    fields["weight_seen"] = (nonrelevant * LOG_2 / (seen + 2.0).log()).cum_sum()
    own_nonrelevant = 1.0 - _field("relevant")
    own_weight = own_nonrelevant * LOG_2 / (_field("seen") + 2.0).log()
    above = _at_block_start(_field("seen") - own_nonrelevant)
    through = _at_block_end(_field("seen"))
    block = LOG_2 / (above + 2.0).log() + _at_block_end(_field("weight_seen"))
    block = block - _at_block_start(_field("weight_seen") - own_weight)
    return (_field("relevant") * block / (through - above + 1.0)).sum()


def bin_g(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    ties: Ties = "average",
    threshold: float = 0.0,
    no_relevant: NoRelevant = 0.0,
    doc: Column | None = None,
) -> pl.Expr:
    """binG of each group, trec_eval's binary G (`evaluate`'s `bin_g`): the sum over its relevant rows of
    1 / log2(2 + the non-relevant rows ranked above it), divided by R, the group's relevant rows.

    R counts the group's own rows only, as for `recall`.  No cut-off, as in trec_eval.

    Parameters
    ----------
    relevance, score, doc, threshold, no_relevant
        As for `recall`.
    ties
        As for `ndcg`; "average" gives the exact expectation over every order of the tied rows.

    Returns
    -------
    pl.Expr
        A Float64 expression named `bin_g`, one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1, 2, 2], "relevance": [0, 1, 1, 1, 0], "score": [3, 2, 1, 5, 5]})
    >>> df.group_by("query", maintain_order=True).agg(exprs.bin_g())  # 2 / log2(3) / 2; (1 + 1 / log2(3)) / 2
    shape: (2, 2)
    ┌───────┬──────────┐
    │ query ┆ bin_g    │
    │ ---   ┆ ---      │
    │ i64   ┆ f64      │
    ╞═══════╪══════════╡
    │ 1     ┆ 0.63093  │
    │ 2     ┆ 0.815465 │
    └───────┴──────────┘
    """
    i, relevant, checks = _threshold_inputs("bin_g", relevance, score, doc, None, ties, threshold)
    finish = _no_relevant_finish(no_relevant, _check_threshold(threshold))
    if i.ties != "average":
        ranked = _in_ranked_order(i, _gain(i), relevant).implode()
        summed = ranked.list.eval(_bin_g_sum(pl.element())).list.first()
    else:
        summed = _sorted_in_list(i, relevant).list.eval(_bin_g_sum(pl.element())).list.first()
        summed = pl.coalesce(_in_sorted_tied_groups(i, {"relevant": relevant}, _block_averaged_bin_g), summed)
    return _finish(i, "bin_g", summed / relevant.sum(), checks, finish)
