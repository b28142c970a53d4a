"""Measures averaged over judgment groups: trec_eval's ``-R qrels_jg`` (map_avgjg, P_avgjg, Rprec_mult_avgjg).

In trec_eval's qrels_jg format each judgment carries a judgment group (a user, an assessor) in the field
where a qrels line has its iteration: ``qid group docno rel``.  A measure "averaged over judgment groups" is
the plain measure computed against each group's judgments alone, then averaged over the query's groups, every
group counting (one without a relevant document scores as any query without one: 0 by default).

`evaluate` builds that from the package's own plan, with no arithmetic of its own but the average: the run is
joined to each of its query's groups, `rank_metrics.evaluate` computes every measure per (query, group) as if
the pair were a composite query id (R, -J's judged documents and the ideal orders are each group's), and a
group-by averages each query's groups, adding them in group id order as trec_eval does.  It stays one lazy
plan; run queries without judgments are dropped, as `evaluate` drops them.

>>> import polars as pl
>>> from lodestar_polars import judgment_groups
>>> run = pl.DataFrame({"query": ["q1"] * 3, "doc": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
>>> qrels = pl.DataFrame(
...     {"query": ["q1"] * 4, "group": ["u1", "u1", "u2", "u2"], "doc": ["a", "c", "b", "c"], "relevance": [1, 1, 0, 1]}
... )
>>> judgment_groups.evaluate(run, qrels, ["ap", "p@2"], ties="doc").rows()
[('q1', 0.5833333333333333, 0.25)]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TypeVar

import polars as pl

from ._spec import Gain, MissingQueries, NoRelevant, Ties, evaluate_spec, parse_measure
from .namespace import rank_metrics

__all__ = ["TREC_EVAL_MEASURES", "evaluate"]

FrameT = TypeVar("FrameT", pl.DataFrame, pl.LazyFrame)

# trec_eval's judgment-group measures -> the `evaluate` measure each averages (P_avgjg at its cut-offs,
# Rprec_mult_avgjg at its multipliers), in trec_eval's print order (measures.c)
TREC_EVAL_MEASURES = {"map_avgjg": "ap", "P_avgjg": "p", "Rprec_mult_avgjg": "rprec_mult"}


def evaluate(
    run: FrameT,
    qrels: pl.DataFrame | pl.LazyFrame,
    measures: str | Sequence[str],
    *,
    query: str = "query",
    group: str = "group",
    doc: str = "doc",
    score: str = "score",
    relevance: str = "relevance",
    ties: Ties = "average",
    gain: Gain = "linear",
    no_relevant: NoRelevant = 0.0,
    threshold: float = 0.0,
    log_base: float = 2.0,
    missing_queries: MissingQueries = "skip",
    max_retrieved: int | None = None,
    judged_only: bool = False,
) -> FrameT:
    """Each measure per query, computed against each judgment group's judgments and averaged over the groups.

    trec_eval ``-R qrels_jg``'s ``map_avgjg``, ``P_avgjg_k`` and ``Rprec_mult_avgjg_m`` are ``ap``, ``p@k`` and
    ``rprec_mult@m`` here, with ``ties="doc"`` (``threshold=l - 1`` for ``-l l``, ``max_retrieved`` for ``-M``,
    ``judged_only`` for ``-J``, ``missing_queries="zero"`` for ``-c``).  Any other measure `evaluate` takes is
    averaged the same way.

    Parameters
    ----------
    run
        The run: `query`, `doc` and `score` columns (no `group` column).
    qrels
        The judgments: `query`, `group`, `doc` and `relevance` columns, each (query, group, doc) once.
    measures
        Measure names as `rank_metrics.evaluate` takes them (``["ap", "p@5", "rprec_mult@0.2"]``).
    query, group, doc, score, relevance
        Column names: `group` (in `qrels` only) is the judgment group id.
    ties, gain, no_relevant, threshold, log_base, missing_queries, max_retrieved, judged_only
        As `rank_metrics.evaluate` takes them, applied per (query, group).  A group whose value is null
        (``no_relevant=None`` and no relevant document) is left out of its query's average; a query all of
        whose groups are, is null.

    Returns
    -------
    DataFrame or LazyFrame (as `run`)
        One row per query, sorted by it: the query column, then one column per measure (canonical names).

    Raises
    ------
    ValueError
        At once, when `group` is missing from `qrels` or also names a column of `run`, or when the query
        columns of `run` and `qrels` differ in dtype; at collect time, for what `rank_metrics.evaluate`
        refuses (a (query, group, doc) judged twice, a doc retrieved twice for a query...).  A run's error is
        found in its rows joined to each group: its message names the (query, group) of the query's first
        group and counts each bad run row once.  A run query that the judgments do not have is checked too (its
        message names it with a null group), then skipped, as trec_eval skips it.
    """
    names = [measures] if isinstance(measures, str) else list(measures)
    columns = [parse_measure(name).column for name in names]
    run_schema, qrels_schema = run.lazy().collect_schema(), qrels.lazy().collect_schema()
    if group not in qrels_schema:
        msg = f"judgment group column {group!r} not found in qrels; its columns are: {', '.join(qrels_schema)}."
        raise ValueError(msg)
    if group in run_schema:
        msg = f"judgment group column {group!r} is in the run too: the groups come from the qrels; rename it."
        raise ValueError(msg)
    if query in run_schema and query in qrels_schema and run_schema[query] != qrels_schema[query]:
        msg = (
            f"query column {query!r} is {run_schema[query]} in the run and {qrels_schema[query]} in the qrels: "
            "give both the same dtype."
        )
        raise ValueError(msg)
    judgments = qrels.lazy()
    groups = judgments.select(query, group).unique()
    spec = evaluate_spec(
        names,
        query=[query, group],
        doc=doc,
        score=score,
        relevance=relevance,
        ties=ties,
        gain=gain,
        no_relevant=no_relevant,
        threshold=threshold,
        log_base=log_base,
        missing_queries=missing_queries,
        max_retrieved=max_retrieved,
        judged_only=judged_only,
        weight=None,
        by=None,
    )
    # each run row is in every group of its query: a run-side error counts it once (in the query's first group);
    # a run query without judgments keeps its rows under a null group, so that they are checked, then skipped
    spec = dataclasses.replace(spec, repeated_over=group)
    per_group = rank_metrics(run.lazy().join(groups, on=query, how="left"))._per_query(spec, judgments)
    # trec_eval adds a query's groups one by one in group id order (strcmp), then divides by their number:
    # a running sum in that order, whose last value is the total, added the same way
    averaged = [pl.col(c).sort_by(group).drop_nulls().cum_sum().last() / pl.col(c).count() for c in columns]
    per_query = per_group.group_by(query).agg(averaged).sort(query)
    return per_query if isinstance(run, pl.LazyFrame) else per_query.collect()
