"""The cascade measures: ERR and nERR, run on the list of stopping probabilities in ranked order.  They have no
exact expectation over tied orders here: ties="average" is refused, as in the namespace."""

from __future__ import annotations

import polars as pl

from ..measures._base import ERR_MAX_GRADE, stopping_probability
from ._data_checks import (
    ERR_GRADE_MESSAGE,
    NO_GRADE_ABOVE_ZERO_MESSAGE,
    _Check,
    _checks,
    _finish,
    _no_relevant_finish,
    _relevance_check,
)
from ._inputs import Column, NoRelevant, Ties, _column_name, _gain, _Inputs, _inputs, _refuse_tie_modes
from ._positional import _in_ranked_order


def _err_inputs(metric: str, relevance: object, score: object, doc: object, k: object, ties: object) -> _Inputs:
    i = _inputs(metric, relevance, score, doc, k, ties, "linear")
    _refuse_tie_modes(metric, i)
    return i


def _stopping_probabilities(i: _Inputs) -> pl.Expr:
    return stopping_probability(i.relevance.cast(pl.Float64, strict=False))


def _err_checks(i: _Inputs) -> list[_Check]:
    """The namespace's checks, and ERR's grades in [0, 4]."""
    grade = i.relevance.cast(pl.Float64, strict=False)
    outside = (grade < 0) | (grade > ERR_MAX_GRADE)
    # the least grade outside, as the namespace quotes it
    return [*_checks("err", i, _gain(i)), _relevance_check(i, "err_grade", outside, ERR_GRADE_MESSAGE)]


def _cascade(stops_in_order: pl.Expr, k: int | None) -> pl.Expr:
    """ERR of each group's stopping probabilities in ranked order (a list): over positions p <= k, the sum of
    R_p / p x the product of 1 - R over the positions above p."""
    listed = stops_in_order if k is None else stops_in_order.list.head(k)
    stop = pl.element()
    continuation = (1.0 - stop).cum_prod().shift(1, fill_value=1.0)
    position = pl.int_range(1, pl.len() + 1, dtype=pl.Int64).cast(pl.Float64)
    return listed.list.eval((stop * continuation / position).sum()).list.first()


def _ranked_err(i: _Inputs) -> pl.Expr:
    """ERR@k in the tie mode's order (the bounds order a tie block by grade: ERR's best and worst orders)."""
    stops = _stopping_probabilities(i)
    return _cascade(_in_ranked_order(i, stops, stops).implode(), i.cut)


def err(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    k: int | None = None,
    ties: Ties = "average",
    doc: Column | None = None,
) -> pl.Expr:
    """ERR@k of each group, expected reciprocal rank as ir_measures' ERR@k (gdeval) computes it: over positions
    p <= k, the sum of R(g_p) / p x the product of 1 - R(g) over the positions above, with R(g) =
    (2**g - 1) / 2**4 for the relevance grade g (gdeval's largest grade 4).

    The grade is the relevance itself: there is no gain option (`evaluate` reads its `gain` only to refuse a
    tie bound whose gain mapping does not order the grades).  Grades must lie in [0, 4].

    Parameters
    ----------
    relevance, score, k, doc
        As for `ndcg`.
    ties
        "reverse", "input", "doc", "optimistic" or "pessimistic" (the bounds order a tie block by descending
        or ascending grade: ERR's best and worst orders).  "average", the default as in the namespace, is
        refused with the namespace's message: ERR has no exact expectation over tied orders here.

    Returns
    -------
    pl.Expr
        A Float64 expression named `err` or `err@{k}`, one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1], "relevance": [0, 4, 2], "score": [3, 2, 1]})
    >>> df.group_by("query").agg(exprs.err(ties="input"), exprs.err(k=2, ties="input"))
    shape: (1, 3)
    ┌───────┬──────────┬─────────┐
    │ query ┆ err      ┆ err@2   │
    │ ---   ┆ ---      ┆ ---     │
    │ i64   ┆ f64      ┆ f64     │
    ╞═══════╪══════════╪═════════╡
    │ 1     ┆ 0.472656 ┆ 0.46875 │
    └───────┴──────────┴─────────┘
    """
    i = _err_inputs("err", relevance, score, doc, k, ties)
    return _finish(i, _column_name("err", i.k), _ranked_err(i), _err_checks(i))


def nerr(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    k: int | None = None,
    ties: Ties = "average",
    no_relevant: NoRelevant = 0.0,
    doc: Column | None = None,
) -> pl.Expr:
    """nERR@k of each group: `err` divided by the ideal ERR@k, that of the group's grades sorted descending.

    The ideal comes from the group's own rows (the namespace's `qrels=` takes every judged document).

    Parameters
    ----------
    relevance, score, k, doc, ties
        As for `err`.
    no_relevant
        nERR of a group whose ideal ERR is 0 (no grade above 0): a float, None (null) or "error" (raise).

    Returns
    -------
    pl.Expr
        A Float64 expression named `nerr` or `nerr@{k}`, one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 2], "relevance": [0, 4, 0], "score": [3, 2, 1]})
    >>> df.group_by("query", maintain_order=True).agg(exprs.nerr(ties="input"))
    shape: (2, 2)
    ┌───────┬──────┐
    │ query ┆ nerr │
    │ ---   ┆ ---  │
    │ i64   ┆ f64  │
    ╞═══════╪══════╡
    │ 1     ┆ 0.5  │
    │ 2     ┆ 0.0  │
    └───────┴──────┘
    """
    i = _err_inputs("nerr", relevance, score, doc, k, ties)
    finish = _no_relevant_finish(no_relevant, 0.0, NO_GRADE_ABOVE_ZERO_MESSAGE)
    ideal = _cascade(_stopping_probabilities(i).implode().list.sort(descending=True), i.cut)
    # grades are not negative: an ideal ERR of 0 has an ERR of 0, and only 0 / 0 is NaN
    return _finish(i, _column_name("nerr", i.k), _ranked_err(i) / ideal, _err_checks(i), finish)
