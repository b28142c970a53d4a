"""Which run rows count, and with what relevance: the judged level joined onto each row (early, or late onto the
rows that can count), the gain and relevant flag, and the cuts trec_eval makes (`max_retrieved`, `judged_only`)."""

from __future__ import annotations

import polars as pl

from .._checks import non_finite
from .._spec import Spec
from ..measures._base import (
    RELEVANCE,
)
from .inputs import _qrels_rows
from .keys import JUDGED_DOC, SCORE, WEIGHT, WEIGHT_MAX, WEIGHT_MIN, _doc_value, _Names
from .quantities import _position
from .registry import Build, with_expressions


def _with_judged_relevance(rows: pl.LazyFrame, build: Build, keep_order: bool) -> pl.LazyFrame:
    """Each run row gets its judged relevance: null when unjudged (or judged at a negative level), which
    `_with_gain_and_relevant` turns into gain 0 and not relevant, as trec_eval does; and the columns the needed
    quantities take from the judged documents (`QuantityPlan.judged_side`)."""
    spec, names = build.spec, build.names
    # without the raw level the select differs from the judgments side's, so Polars caches the judgments'
    # source for both rather than one select's output (3% less CPU and peak memory in a paired probe on 10M
    # judged rows; within noise in ab.py, 2026-12-03: benchmarks/RESULTS.md)
    judged = _qrels_rows(build.qrels_frame(), spec, names, raw_level=False)
    judged = with_expressions(build, judged, lambda plan: plan.judged_side)
    on = [*names.query, *names.docs]
    # keep_order: ties="input" / "reverse" read the run's row order, and a plain join may deal rows out of order
    joined = rows.join(judged, on=on, how="left", maintain_order="left" if keep_order else "none")
    return with_expressions(build, joined, lambda plan: plan.after_judged_join)


def _with_gain_and_relevant(rows: pl.LazyFrame, build: Build) -> pl.LazyFrame:
    """The per-row values of the relevance the call needs (`QuantityPlan.row_values`: the gain, the relevant
    flag).  With judgments, an unjudged document (null relevance) has gain 0 and is never relevant, whatever the
    gain mapping or the threshold (trec_eval)."""
    return with_expressions(build, rows, lambda plan: plan.row_values)


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
