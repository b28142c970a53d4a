"""Which run rows count, and with what relevance: the judged level joined onto each row (early, or late onto the
rows that can count), the gain and relevant flag, and the cuts trec_eval makes (`max_retrieved`, `judged_only`)."""

from __future__ import annotations

import polars as pl

from .._checks import non_finite
from .._spec import Spec
from ..measures._base import (
    GAIN,
    POOLED,
    RELEVANCE,
    RELEVANT,
    Quantity,
)
from .inputs import _gain, _qrels_rows
from .keys import JUDGED_DOC, SCORE, WEIGHT, WEIGHT_MAX, WEIGHT_MIN, _doc_value, _Names
from .needs import _needs
from .quantities import _position, _relevant_levels


def _with_judged_relevance(
    rows: pl.LazyFrame, qrels: pl.LazyFrame, spec: Spec, names: _Names, keep_order: bool
) -> pl.LazyFrame:
    """Each run row gets its judged relevance: null when unjudged (or judged at a negative level), which
    `_with_gain_and_relevant` turns into gain 0 and not relevant, as trec_eval does."""
    # without the raw level the select differs from the judgments side's, so Polars caches the judgments'
    # source for both rather than one select's output (3% less CPU and peak memory in a paired probe on 10M
    # judged rows; within noise in ab.py, 2026-12-03: benchmarks/RESULTS.md)
    judged = _qrels_rows(qrels, spec, names, raw_level=False)
    pooled = _needs(spec, Quantity.POOLED_BEFORE)
    if pooled:  # in the qrels at any level, negative ones included
        judged = judged.with_columns(pl.lit(True).alias(POOLED))
    if _needs(spec, Quantity.COMPATIBLE_IDEAL):  # from every judged document, retrieved or not
        judged = judged.with_columns(_relevant_levels(spec, names.query))
    on = [*names.query, *names.docs]
    # keep_order: ties="input" / "reverse" read the run's row order, and a plain join may deal rows out of order
    joined = rows.join(judged, on=on, how="left", maintain_order="left" if keep_order else "none")
    return joined.with_columns(pl.col(POOLED).fill_null(False)) if pooled else joined


def _with_gain_and_relevant(rows: pl.LazyFrame, spec: Spec, judged: bool) -> pl.LazyFrame:
    """The gain and the relevant flag of each row.  With judgments, an unjudged document (null relevance) has
    gain 0 and is never relevant, whatever the gain mapping or the threshold (trec_eval)."""
    derived = []
    relevance = pl.col(RELEVANCE)
    if _needs(spec, Quantity.GAIN):
        gain = _gain(spec, relevance)
        derived.append((pl.when(relevance.is_null()).then(0.0).otherwise(gain) if judged else gain).alias(GAIN))
    if _needs(spec, Quantity.RELEVANT):
        relevant = relevance.cast(pl.Float64) > spec.threshold
        derived.append((relevant.fill_null(False) if judged else relevant).alias(RELEVANT))
    return rows.with_columns(derived) if derived else rows


# --- the retrieved documents that count (max_retrieved, judged_only) ------------------------------------------


def _first_retrieved(rows: pl.LazyFrame, spec: Spec, names: _Names, limit: int) -> pl.LazyFrame:
    """The first `limit` rows of each query in the tie-broken order (trec_eval -M cuts after its sort).  A row
    whose score is null or not finite stays, so that the score check sees it."""
    # max_retrieved comes with an ordered tie mode only, in which the judged flag orders nothing
    position = _position(spec, names, judged=False)
    bad_score = non_finite(SCORE, rows.collect_schema()[SCORE])
    return rows.filter((position <= limit) | bad_score)


def _judged_retrieved(rows: pl.LazyFrame, qrels: pl.LazyFrame, spec: Spec, names: _Names) -> pl.LazyFrame:
    """The rows whose document is judged at a level >= 0 (trec_eval -J), in their order.  A row with a null or
    duplicated doc id stays, so that the doc checks see it."""
    on = [*names.query, *names.docs]
    judged = (
        _qrels_rows(qrels, spec, names)
        .filter(pl.col(RELEVANCE).is_not_null())
        .select(on)
        .unique()
        .with_columns(pl.lit(True).alias(JUDGED_DOC))
    )
    keep_order = spec.ties in ("input", "reverse")
    marked = rows.join(judged, on=on, how="left", maintain_order="left" if keep_order else "none")
    checked_doc = pl.any_horizontal(pl.col(d).is_null() for d in names.docs) | _doc_value(
        names.docs
    ).is_duplicated().over(names.group)
    return marked.filter(pl.col(JUDGED_DOC).is_not_null() | checked_doc).drop(JUDGED_DOC)


def _emptied_queries(retrieved: pl.LazyFrame, per_query: pl.LazyFrame, spec: Spec, names: _Names) -> pl.LazyFrame:
    """The run's queries judged_only left without a row: they retrieved nothing (trec_eval scores them, with
    num_ret 0), keeping their keys and weight."""
    carried = [pl.col(k).first() for k in names.keys] if names.hashed else []
    if spec.weight is not None:
        carried += [pl.col(WEIGHT).min().alias(WEIGHT_MIN), pl.col(WEIGHT).max().alias(WEIGHT_MAX)]
    queries = retrieved.group_by(names.group).agg(carried) if carried else retrieved.select(names.group).unique()
    return queries.join(per_query.select(names.group), on=names.group, how="anti", nulls_equal=True)
