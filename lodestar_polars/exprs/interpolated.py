"""The interpolated precisions: at a recall level (iprec_at_recall) and their mean over trec_eval's eleven levels
(11pt_avg).  The greatest of ratios has no exact expectation over tied orders here: ties="average" is refused, as
in the namespace."""

from __future__ import annotations

import math
from collections.abc import Sequence

import polars as pl

from .. import _spec
from ._data_checks import _Check, _finish, _no_relevant_finish, _threshold_inputs
from ._inputs import Column, NoRelevant, Ties, _check_threshold, _gain, _Inputs
from ._positional import _in_ranked_order


def _check_level(level: object) -> float:
    if not _spec._is_real(level):
        msg = f"level must be a recall level (a float from 0 to 1), got {level!r}."
        raise TypeError(msg)
    if not 0.0 <= float(level) <= 1.0:
        msg = f"level must be a recall level from 0 to 1, got {level!r}."
        raise ValueError(msg)
    return float(level)


def _interpolated_precisions(levels: Sequence[float]) -> pl.Expr:
    """Inside a `list.eval` over a group's relevant flags in ranked order, the interpolated precision at each
    level: the greatest precision c / p over its relevant rows with c >= max(lround(level R), 1), c the
    relevant rows at or above the row and p its position (trec_eval rounds level R half away from zero).  That
    is the greatest precision from the n-th relevant row on, n = max(lround(level R), 1): one suffix maximum
    serves every level.  A group without a relevant row gives nulls."""
    relevant = pl.element()
    position = pl.int_range(1, pl.len() + 1, dtype=pl.Int64).cast(pl.Float64)
    precisions = (relevant.cum_sum() / position).filter(relevant > 0)
    greatest_from = precisions.reverse().cum_max().reverse()
    scaled = pl.lit(pl.Series(levels, dtype=pl.Float64)) * relevant.sum()
    needed = pl.max_horizontal(scaled.round(0, mode="half_away_from_zero"), 1.0).cast(pl.Int64)
    return greatest_from.gather(needed - 1, null_on_oob=True)


def _interpolated_inputs(
    metric: str, column: str, relevance: object, score: object, doc: object, ties: object, threshold: object
) -> tuple[_Inputs, pl.Expr, pl.Expr, list[_Check]]:
    """The inputs, the relevant flags in ranked order (a list; the bounds put a tie block's relevant rows first
    or last), R and the checks; ties="average" refused as the namespace refuses it."""
    i, relevant, checks = _threshold_inputs(metric, relevance, score, doc, None, ties, threshold)
    if i.ties == "average":
        _spec._refuse_average((_spec.Measure(metric, None, column),))
    return i, _in_ranked_order(i, _gain(i), relevant).implode(), relevant.sum(), checks


def iprec_at_recall(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    level: float,
    ties: Ties = "average",
    threshold: float = 0.0,
    no_relevant: NoRelevant = 0.0,
    doc: Column | None = None,
) -> pl.Expr:
    """Interpolated precision at a recall level of each group (trec_eval's iprec_at_recall, `evaluate`'s
    `iprec@level`): the greatest precision at a relevant row whose recall reaches the level, 0 when none does.

    R counts the group's own rows only, as for `recall`.

    Parameters
    ----------
    relevance, score, doc, threshold, no_relevant
        As for `recall`.
    level
        The recall level, from 0 to 1 (trec_eval's are 0.0, 0.1, ..., 1.0); level R is rounded half away from
        zero, and at least one relevant row is needed.
    ties
        "reverse", "input", "doc", "optimistic" or "pessimistic" (a tie block's relevant rows first or last).
        "average", the default as in the namespace, is refused with the namespace's message: the greatest of
        ratios has no exact expectation over tied orders here.

    Returns
    -------
    pl.Expr
        A Float64 expression named `iprec@{level}` (`iprec@0.5`), one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1, 1], "relevance": [0, 1, 0, 1], "score": [4, 3, 2, 1]})
    >>> df.group_by("query").agg(exprs.iprec_at_recall(level=0.5, ties="input"))
    shape: (1, 2)
    ┌───────┬───────────┐
    │ query ┆ iprec@0.5 │
    │ ---   ┆ ---       │
    │ i64   ┆ f64       │
    ╞═══════╪═══════════╡
    │ 1     ┆ 0.5       │
    └───────┴───────────┘
    """
    checked_level = _check_level(level)
    column = _spec.level_column("iprec", checked_level)
    i, ranked, total, checks = _interpolated_inputs("iprec", column, relevance, score, doc, ties, threshold)
    finish = _no_relevant_finish(no_relevant, _check_threshold(threshold))
    interpolated = ranked.list.eval(_interpolated_precisions([checked_level])).list.first()
    value = pl.when(total > 0).then(interpolated).otherwise(math.nan)
    return _finish(i, column, value, checks, finish)


# trec_eval's recall levels of 11pt_avg
_ELEVEN_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def eleven_point_average(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    ties: Ties = "average",
    threshold: float = 0.0,
    no_relevant: NoRelevant = 0.0,
    doc: Column | None = None,
) -> pl.Expr:
    """trec_eval's 11pt_avg of each group: the mean of `iprec_at_recall` at the levels 0.0, 0.1, ..., 1.0
    (summed from the highest level down, as trec_eval sums them).

    Parameters
    ----------
    relevance, score, doc, ties, threshold, no_relevant
        As for `iprec_at_recall` (ties="average" refused).

    Returns
    -------
    pl.Expr
        A Float64 expression named `11pt_avg`, one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1, 1], "relevance": [0, 1, 0, 1], "score": [4, 3, 2, 1]})
    >>> df.group_by("query").agg(exprs.eleven_point_average(ties="input"))
    shape: (1, 2)
    ┌───────┬──────────┐
    │ query ┆ 11pt_avg │
    │ ---   ┆ ---      │
    │ i64   ┆ f64      │
    ╞═══════╪══════════╡
    │ 1     ┆ 0.5      │
    └───────┴──────────┘
    """
    i, ranked, total, checks = _interpolated_inputs("11pt_avg", "11pt_avg", relevance, score, doc, ties, threshold)
    finish = _no_relevant_finish(no_relevant, _check_threshold(threshold))
    # trec_eval adds the levels' values from the highest level down, then divides by their number
    mean = ranked.list.eval(_interpolated_precisions(_ELEVEN_LEVELS[::-1]).sum() / len(_ELEVEN_LEVELS)).list.first()
    value = pl.when(total > 0).then(mean).otherwise(math.nan)
    return _finish(i, "11pt_avg", value, checks, finish)
