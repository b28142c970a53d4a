"""The user's run and judgments as the plan reads them: one `select` each renaming every column read to an
internal name (`_run_rows`, `_qrels_rows`), the gain of a relevance level, and a judged level (a negative one is
unjudged)."""

from __future__ import annotations

import polars as pl

from .._spec import Spec
from ..measures._base import (
    RELEVANCE,
)
from .keys import GROUP, RAW_RELEVANCE, SCORE, WEIGHT, _key_hash, _Names, _packed_group

# --- reading the rows ---------------------------------------------------------------------------------------


def _gain(spec: Spec, relevance: pl.Expr) -> pl.Expr:
    relevance = relevance.cast(pl.Float64)
    if spec.gain == "linear":
        return relevance
    if spec.gain == "exponential":
        return pl.lit(2.0).pow(relevance) - 1.0
    # when/then per label, not replace_strict: that one falls back to the in-memory engine
    return pl.coalesce([pl.when(relevance == label).then(pl.lit(value, pl.Float64)) for label, value in spec.gain])


def _judged_relevance(relevance: pl.Expr) -> pl.Expr:
    """Judged levels as trec_eval reads them: a negative level marks a document judged unjudged (in the pool,
    not assessed), null here as an unjudged document's is."""
    relevance = relevance.cast(pl.Float64)
    return pl.when(relevance >= 0).then(relevance)


def _run_rows(run: pl.LazyFrame, spec: Spec, names: _Names, with_relevance: bool) -> pl.LazyFrame:
    """The input reduced to internal columns: keys (and the group), docs, score, weight, and the relevance
    when the run holds it."""
    columns = [names.joined(name).alias(internal) for name, internal in zip(spec.keys, names.keys, strict=True)]
    columns += [names.joined(name).alias(internal) for name, internal in zip(spec.doc, names.docs, strict=True)]
    score = spec.score.expr
    if run.select(score).collect_schema().dtypes()[0].is_float():
        score = score + 0.0  # -0.0 + 0.0 == +0.0: -0.0 ties with 0.0, as in scikit-learn
    # in the select, not a later with_columns: the windows over the score then share one context (and the
    # groups Polars computes for it) with those over the relevance
    columns.append(score.alias(SCORE))
    if with_relevance:
        columns.append(spec.relevance.expr.alias(RELEVANCE))
    if spec.weight is not None:
        columns.append(spec.weight.expr.cast(pl.Float64).alias(WEIGHT))
    rows = run.select(columns)
    if names.packed:
        rows = rows.with_columns(_packed_group(names.keys, names.dtypes).alias(GROUP))
    elif names.hashed:
        rows = rows.with_columns(_key_hash(names.keys).alias(GROUP))
    return rows


def _qrels_rows(qrels: pl.LazyFrame, spec: Spec, names: _Names, raw_level: bool = True) -> pl.LazyFrame:
    """Judgments as (query keys, docs, relevance), with the raw level for the checks unless told not to."""
    columns = [names.joined(name).alias(internal) for name, internal in zip(spec.query, names.query, strict=True)]
    columns += [names.joined(name).alias(internal) for name, internal in zip(spec.doc, names.docs, strict=True)]
    raw = spec.relevance.expr
    columns.append(_judged_relevance(raw).alias(RELEVANCE))
    if raw_level:
        columns.append(raw.alias(RAW_RELEVANCE))
    return qrels.select(columns)
