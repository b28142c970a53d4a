"""The arguments of an expression, checked up front into `_Inputs`: the columns (a name or an expression, with the
name quoted in error messages), the cut-off, the tie mode and the gain, with the namespace's own checks."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from .. import _spec
from ..measures._registry import REGISTRY

Ties = _spec.Ties
GainName = _spec.GainName
Gain = _spec.Gain
NoRelevant = _spec.NoRelevant
Column = _spec.IntoColumn


# a cut-off at or past this position keeps every row of a group
_LONGEST_CUTOFF = (1 << 32) - 1


def _check_column(argument: str, value: object) -> tuple[pl.Expr, str]:
    """A column name or an expression, and the name quoted in error messages."""
    if isinstance(value, str):
        return pl.col(value), value
    if isinstance(value, pl.Expr):
        return value, value.meta.output_name(raise_if_undetermined=False) or str(value)
    msg = f"`{argument}` must be a column name (str) or a polars expression, got {value!r}."
    raise TypeError(msg)


def _check_cutoff(metric: str, k: object) -> int | None:
    if isinstance(k, (list, tuple)):
        msg = f"exprs.{metric} takes one cut-off: give k as one int or None (one expression per cut-off), not {k!r}."
        raise TypeError(msg)
    return _spec.check_cutoffs(k)[0]


def _check_ties(ties: object, doc: Column | None) -> Ties:
    return _spec.check_ties(ties, doc is not None)


# the namespace's own checks: one home per rule
_check_no_relevant = _spec._check_no_relevant
_check_log_base = _spec._check_log_base
_check_threshold = _spec._check_threshold


@dataclass(frozen=True)
class _Inputs:
    """The validated columns and options of one expression."""

    relevance: pl.Expr
    relevance_name: str
    score: pl.Expr
    score_name: str
    doc: pl.Expr | None
    doc_name: str | None
    k: int | None

    @property
    def cut(self) -> int | None:
        """The position the metric is cut at: k, or `_LONGEST_CUTOFF` for any larger k (a k past the group
        scores the whole group; Polars' row indices are 32-bit)."""
        return None if self.k is None else min(self.k, _LONGEST_CUTOFF)

    ties: Ties
    gain: GainName | tuple[tuple[float, float], ...]


def _inputs(
    metric: str, relevance: object, score: object, doc: object, k: object, ties: object, gain: object
) -> _Inputs:
    relevance_expr, relevance_name = _check_column("relevance", relevance)
    score_expr, score_name = _check_column("score", score)
    doc_expr, doc_name = _check_column("doc", doc) if doc is not None else (None, None)
    return _Inputs(
        relevance=relevance_expr,
        relevance_name=relevance_name,
        score=score_expr,
        score_name=score_name,
        doc=doc_expr,
        doc_name=doc_name,
        k=_check_cutoff(metric, k),
        ties=_check_ties(ties, doc_expr),
        gain=_check_gain(metric, gain),
    )


def _check_gain(metric: str, gain: object) -> GainName | tuple[tuple[float, float], ...]:
    """The gain as the namespace checks it: a negative gain in a mapping is refused by the measures whose
    registry entry refuses one (rbp), with its reason."""
    definition = REGISTRY.get(metric)
    reason = None if definition is None else definition.refuses_negative_gains
    return _spec._check_gain(gain, refusing=None if reason is None else (metric, reason))


def _refuse_tie_modes(kind: str, i: _Inputs) -> None:
    """The namespace's refusals of ties="average" for a measure with no exact expectation over tied orders, and
    of the tie bounds for a measure whose bounds are not its most / least gainful orders."""
    measures = _spec.measures_of(kind, kind, i.k)
    if i.ties == "average":
        _spec._refuse_average(measures)
    _spec.refuse_bounds(measures, i.ties)


def _gain(i: _Inputs) -> pl.Expr:
    relevance = i.relevance.cast(pl.Float64, strict=False)
    if i.gain == "linear":
        return relevance
    if i.gain == "exponential":
        return pl.lit(2.0).pow(relevance) - 1.0
    return pl.coalesce([pl.when(relevance == label).then(pl.lit(value, pl.Float64)) for label, value in i.gain])


def _column_name(metric: str, k: int | None) -> str:
    return metric if k is None else f"{metric}@{k}"
