"""The measures of graded gains summed with per-position weights: NDCG, DCG and SDCG (the discounts
1 / log_b(position + 1)) and RBP (the weights p**(position - 1))."""

from __future__ import annotations

import math

import polars as pl

from .. import _spec
from ..measures import rbp as _rbp
from ..measures import sdcg as _sdcg
from ..measures._base import options_suffix
from ._data_checks import NO_RELEVANT_MESSAGE, _checks, _finish
from ._inputs import (
    Column,
    Gain,
    NoRelevant,
    Ties,
    _check_log_base,
    _check_no_relevant,
    _column_name,
    _gain,
    _Inputs,
    _inputs,
)
from ._positional import _positional_sum, _Weight, _weighted_by_position


def _discount(position: pl.Expr, k: int | None, log_base: float) -> pl.Expr:
    """1 / log_b(position + 1) for a 1-based position, 0 past k."""
    discount = pl.lit(math.log(log_base)) / (position + 1).cast(pl.Float64).log()
    return discount if k is None else pl.when(position <= k).then(discount).otherwise(0.0)


def _discounted_sum(ranked: pl.Expr, k: int | None, log_base: float) -> pl.Expr:
    """sum(gain * discount(position)) over a group's gains in ranked order (a list), the first k of them."""
    return _weighted_by_position(ranked, k, lambda position: _discount(position, None, log_base)).list.sum()


def _discount_weight(log_base: float) -> _Weight:
    return _Weight(
        lambda position: _discount(position, None, log_base),
        lambda position: math.log(log_base) / math.log(position + 1),
    )


def _dcg(i: _Inputs, gain: pl.Expr, log_base: float) -> pl.Expr:
    return _positional_sum(i, gain, gain, _discount_weight(log_base))


def _ideal_dcg(i: _Inputs, gain: pl.Expr, log_base: float = 2.0) -> pl.Expr:
    """The gains sorted descending (the k largest with a cut-off), times the discounts of positions 1, 2, ...;
    a negative gain adds nothing (trec_eval's ideal stops at the first gain <= 0)."""
    if _spec.has_negative_gain(i.gain):
        gain = gain.clip(lower_bound=0.0)
    return _discounted_sum(gain.implode().list.sort(descending=True, nulls_last=True), i.cut, log_base)


def ndcg(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    k: int | None = None,
    ties: Ties = "average",
    gain: Gain = "linear",
    no_relevant: NoRelevant = 0.0,
    doc: Column | None = None,
) -> pl.Expr:
    """NDCG of each group, as scikit-learn's `ndcg_score` defines it (with the namespace's options).

    Parameters
    ----------
    relevance, score
        The graded relevance (the gain source) and the model score: column names or expressions.
    k
        The cut-off, or None for the whole list.  One per expression: several cut-offs are several
        expressions.
    ties
        "average" (scikit-learn), "reverse" (the later row first), "input" (the earlier row first:
        LightGBM), "doc" (doc id compared as text, descending: trec_eval), "optimistic", "pessimistic".
    gain
        "linear" (relevance), "exponential" (2**relevance - 1), a mapping label -> gain, or a sequence
        (LightGBM's `label_gain`: index -> gain).  A mapping may give negative gains, as trec_eval's gain
        pairs: the DCG sums them where they are ranked, the ideal DCG takes the positive gains only, and
        NDCG then lies in (-inf, 1].  Negative relevance stays refused (scikit-learn's `ndcg_score`).
    no_relevant
        NDCG of a group whose ideal DCG is 0: a float, None (null) or "error" (raise).
    doc
        Document id (column name or expression): for `ties="doc"`, and checked for nulls and duplicates.

    Returns
    -------
    pl.Expr
        A Float64 expression named `ndcg` or `ndcg@{k}`: one value per group in an aggregation, the
        group's value on each of its rows with `.over(keys)`.  Data errors (null, NaN or infinite
        relevance or score, negative relevance, an unmapped gain label, null or duplicated docs) raise a
        `ValueError` when the query is collected.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame(
    ...     {
    ...         "query": [1, 1, 1, 1, 2, 2, 2],
    ...         "relevance": [3, 2, 1, 0, 0, 1, 2],
    ...         "score": [0.1, 0.4, 0.5, 0.9, 0.3, 0.3, 0.8],
    ...     }
    ... )
    >>> df.group_by("query", maintain_order=True).agg(exprs.ndcg(), exprs.ndcg(k=1), pl.len())
    shape: (2, 4)
    ┌───────┬──────────┬────────┬─────┐
    │ query ┆ ndcg     ┆ ndcg@1 ┆ len │
    │ ---   ┆ ---      ┆ ---    ┆ --- │
    │ i64   ┆ f64      ┆ f64    ┆ u32 │
    ╞═══════╪══════════╪════════╪═════╡
    │ 1     ┆ 0.613827 ┆ 0.0    ┆ 4   │
    │ 2     ┆ 0.975117 ┆ 1.0    ┆ 3   │
    └───────┴──────────┴────────┴─────┘
    """
    i = _inputs("ndcg", relevance, score, doc, k, ties, gain)
    checked_no_relevant = _check_no_relevant(no_relevant)
    gain_expr = _gain(i)
    # non-negative gains: an ideal DCG of 0 has a DCG of 0, and only 0 / 0 is NaN (the ideal DCG is read once:
    # Polars would compute it again for a second use); with a negative gain the DCG under an ideal of 0 can be
    # negative, so that ideal is made NaN first
    ideal = _ideal_dcg(i, gain_expr)
    if _spec.has_negative_gain(i.gain):
        ideal = ideal.replace(0.0, float("nan"))
    ratio = _dcg(i, gain_expr, 2.0) / ideal

    def no_relevant_value(values: pl.Series) -> pl.Series:
        if checked_no_relevant != "error":
            return values.fill_nan(checked_no_relevant)
        if values.is_nan().any():
            raise ValueError(NO_RELEVANT_MESSAGE)
        return values

    return _finish(i, _column_name("ndcg", i.k), ratio, _checks("ndcg", i, gain_expr), no_relevant_value)


def dcg(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    k: int | None = None,
    ties: Ties = "average",
    gain: Gain = "linear",
    log_base: float = 2.0,
    doc: Column | None = None,
) -> pl.Expr:
    """DCG of each group, as scikit-learn's `dcg_score` defines it (with the namespace's options).

    Parameters
    ----------
    relevance, score, k, ties, gain, doc
        As for `ndcg`.  Negative relevance is accepted, as scikit-learn's `dcg_score` accepts it.
    log_base
        Base of the logarithm of the discount 1 / log_b(position + 1).  Below 1 every discount is negative
        (as in scikit-learn), and ties="optimistic" / "pessimistic" are refused: they would not be the bounds.

    Returns
    -------
    pl.Expr
        A Float64 expression named `dcg` or `dcg@{k}`, one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1, 1, 1], "relevance": [10, 0, 0, 1, 5], "score": [1, 0, 0, 0, 1]})
    >>> df.group_by("query").agg(exprs.dcg(k=1))  # scikit-learn's dcg_score(..., k=1) is 7.5 too
    shape: (1, 2)
    ┌───────┬───────┐
    │ query ┆ dcg@1 │
    │ ---   ┆ ---   │
    │ i64   ┆ f64   │
    ╞═══════╪═══════╡
    │ 1     ┆ 7.5   │
    └───────┴───────┘
    """
    i = _inputs("dcg", relevance, score, doc, k, ties, gain)
    base = _check_log_base(log_base)
    _spec.refuse_bounds_below_base_one(_column_name("dcg", i.k), i.ties, base)
    gain_expr = _gain(i)
    return _finish(i, _column_name("dcg", i.k), _dcg(i, gain_expr, base), _checks("dcg", i, gain_expr))


def ideal_dcg(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    k: int | None = None,
    ties: Ties = "average",
    gain: Gain = "linear",
    log_base: float = 2.0,
    doc: Column | None = None,
) -> pl.Expr:
    """The ideal DCG of each group (trec_eval's ideal_dcg, `evaluate`'s `ideal_dcg`): the DCG@k of the group's
    gains sorted descending, a gain <= 0 adding nothing: NDCG's denominator.

    The ideal comes from the group's own rows (the namespace's `qrels=` takes every judged document).  It does
    not depend on the scores, so every tie mode gives the same value; the scores, `ties` and `doc` are checked
    as for `dcg`.

    Parameters
    ----------
    relevance, score, k, ties, gain, doc
        As for `ndcg`.
    log_base
        As for `dcg` (below 1 the discounts are negative and ties="optimistic" / "pessimistic" are refused).

    Returns
    -------
    pl.Expr
        A Float64 expression named `ideal_dcg` or `ideal_dcg@{k}`, one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1], "relevance": [0, 1, 2], "score": [3, 2, 1]})
    >>> df.group_by("query").agg(exprs.ideal_dcg(k=2))  # 2 + 1 / log2(3)
    shape: (1, 2)
    ┌───────┬─────────────┐
    │ query ┆ ideal_dcg@2 │
    │ ---   ┆ ---         │
    │ i64   ┆ f64         │
    ╞═══════╪═════════════╡
    │ 1     ┆ 2.63093     │
    └───────┴─────────────┘
    """
    i = _inputs("ideal_dcg", relevance, score, doc, k, ties, gain)
    base = _check_log_base(log_base)
    _spec.refuse_bounds_below_base_one(_column_name("ideal_dcg", i.k), i.ties, base)
    gain_expr = _gain(i)
    value = _ideal_dcg(i, gain_expr, base)
    return _finish(i, _column_name("ideal_dcg", i.k), value, _checks("ideal_dcg", i, gain_expr))


def _check_persistence(p: object) -> float:
    if not _spec._is_real(p):
        msg = f"p must be a float, got {p!r}."
        raise TypeError(msg)
    refusal = _rbp.refused_persistence(float(p))
    if refusal is not None:
        msg = f"option p={p!r} is refused: {refusal}."
        raise ValueError(msg)
    return float(p)


def _persistence_weight(p: float) -> _Weight:
    return _Weight(
        lambda position: pl.lit(p).pow(position.cast(pl.Float64) - 1.0), lambda position: p ** (position - 1)
    )


def rbp(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    k: int | None = None,
    ties: Ties = "average",
    gain: Gain = "linear",
    p: float = _rbp.DEFAULT_PERSISTENCE,
    doc: Column | None = None,
) -> pl.Expr:
    """RBP of each group, rank-biased precision as trec_eval's rbp: (1 - p) x the sum over positions i <= k of
    p**(i - 1) x g', g' the gain divided by the group's greatest gain when that exceeds 1 (graded 0..L by L).

    The greatest gain is the group's own rows' (the namespace's `qrels=` takes every judged document).

    Parameters
    ----------
    relevance, score, k, doc
        As for `ndcg`.  Without k the whole group counts.
    ties
        As for `ndcg`; "average" gives the exact expectation over every order of the tied rows.
    gain
        As for `ndcg`; a gain mapping must not give a negative gain.
    p
        The persistence, strictly between 0 and 1 (trec_eval's default 0.9; ir_measures' is 0.8).

    Returns
    -------
    pl.Expr
        A Float64 expression named as `evaluate` names the measure: `rbp`, `rbp@{k}`, and with another p
        `rbp(p=0.8)`, `rbp(p=0.8)@{k}`; one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1], "relevance": [2, 0, 1], "score": [3, 2, 1]})
    >>> df.group_by("query").agg(exprs.rbp(), exprs.rbp(p=0.5, k=1))
    shape: (1, 3)
    ┌───────┬────────┬──────────────┐
    │ query ┆ rbp    ┆ rbp(p=0.5)@1 │
    │ ---   ┆ ---    ┆ ---          │
    │ i64   ┆ f64    ┆ f64          │
    ╞═══════╪════════╪══════════════╡
    │ 1     ┆ 0.1405 ┆ 0.5          │
    └───────┴────────┴──────────────┘
    """
    i = _inputs("rbp", relevance, score, doc, k, ties, gain)
    persistence = _check_persistence(p)
    gain_expr = _gain(i)
    # g / high when high > 1, else g: g / max(high, 1), divided out of the sum (one division per group)
    weighted = _positional_sum(i, gain_expr, gain_expr, _persistence_weight(persistence))
    total = weighted / pl.max_horizontal(gain_expr.max(), 1.0)
    options = options_suffix([("p", persistence)] if persistence != _rbp.DEFAULT_PERSISTENCE else [])
    name = _column_name(f"rbp{options}", i.k)
    return _finish(i, name, (1.0 - persistence) * total, _checks("rbp", i, gain_expr))


def _check_scale(min_rel: object, max_rel: object) -> tuple[float, float]:
    """SDCG's min_rel and max_rel, refused as `evaluate` refuses them in a measure name."""
    if max_rel is None:
        msg = (
            "exprs.sdcg needs max_rel, the greatest relevance level, gain 1 at or above it (ir_measures requires "
            f"it too): write exprs.sdcg(k=10, max_rel={_sdcg.EXAMPLE_MAX_REL:g})."
        )
        raise ValueError(msg)
    values: dict[str, float] = {}
    for option, value in zip(_sdcg.OPTIONS, (min_rel, max_rel), strict=True):
        if not _spec._is_real(value):
            msg = f"{option.name} must be a float, got {value!r}."
            raise TypeError(msg)
        # evaluate's parser reads no nan or inf in a measure name ("it is not a decimal number")
        refusal = option.refusal(float(value)) if math.isfinite(value) else "it is not a finite number"
        if refusal is not None:
            msg = f"option {option.name}={value!r} is refused: {refusal}."
            raise ValueError(msg)
        values[option.name] = float(value)
    _sdcg.with_options(values)  # max_rel above min_rel, with the namespace's message
    return values["min_rel"], values["max_rel"]


def sdcg(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    k: int,
    max_rel: float,
    min_rel: float = _sdcg.DEFAULT_MIN_REL,
    ties: Ties = "average",
    gain: Gain = "linear",
    doc: Column | None = None,
) -> pl.Expr:
    """SDCG@k of each group, as ir_measures' SDCG(max_rel=...)@k (cwl_eval) and `evaluate`'s
    `sdcg(max_rel=...)@k`: the DCG@k of the scaled gains g' = (min(max(g, min_rel), max_rel) - min_rel) /
    (max_rel - min_rel), divided by the DCG@k of k rows of gain 1, whatever the group's length.

    Parameters
    ----------
    relevance, score, doc
        As for `ndcg`.
    k
        The cut-off, required (the normaliser is the DCG of k positions).
    max_rel
        The greatest relevance level, gain 1 at or above it; required, as in ir_measures.
    min_rel
        The least relevance level, gain 0 at or below it (default 0; not negative).
    ties
        As for `ndcg`; "average" gives the exact expectation over every order of the tied rows.
    gain
        As for `ndcg`, applied before the scaling (min_rel and max_rel then bound the mapped gain).

    Returns
    -------
    pl.Expr
        A Float64 expression named as `evaluate` names the measure: `sdcg(max_rel=4)@10`, with another min_rel
        `sdcg(min_rel=1,max_rel=4)@10`; one value per group (0 for a group without gain above min_rel).

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1], "relevance": [2, 0, 4], "score": [3, 2, 1]})
    >>> df.group_by("query").agg(exprs.sdcg(k=2, max_rel=4))  # (2/4 x 1 + 0) / (1 + 1/log2(3))
    shape: (1, 2)
    ┌───────┬───────────────────┐
    │ query ┆ sdcg(max_rel=4)@2 │
    │ ---   ┆ ---               │
    │ i64   ┆ f64               │
    ╞═══════╪═══════════════════╡
    │ 1     ┆ 0.306574          │
    └───────┴───────────────────┘
    """
    i = _inputs("sdcg", relevance, score, doc, k, ties, gain)
    if i.k is None:
        msg = "exprs.sdcg takes a cut-off k (e.g. k=10), none given: its normaliser is the DCG of k positions."
        raise ValueError(msg)
    low, high = _check_scale(min_rel, max_rel)
    gain_expr = _gain(i)
    scaled = _sdcg.scaled_gain(low, high, gain_expr)
    value = _positional_sum(i, gain_expr, scaled, _discount_weight(2.0)) / _sdcg.ideal_weight(i.k)
    options = [("min_rel", low)] if low != _sdcg.DEFAULT_MIN_REL else []
    name = _column_name(f"sdcg{options_suffix([*options, ('max_rel', high)])}", i.k)
    return _finish(i, name, value, _checks("sdcg", i, gain_expr))
