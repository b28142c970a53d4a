"""Evaluating a dataset one partition at a time, for bounded memory, and combining the means exactly.

Polars' streaming engine holds the whole input of a `rank().over(query)` window, so one plan over a whole
dataset needs memory in proportion to the dataset.  When the data is split into partitions that each hold
whole queries (hive partitions by a hash or bucket of the query id, or files written query-contiguous),
evaluating each partition as its own query needs memory in proportion to the largest partition, and the
per-partition means combine exactly:

>>> import polars as pl

from ._spec import ZERO_WEIGHTS_MESSAGE
>>> import lodestar_polars
>>> from lodestar_polars.partitions import combine_means
>>> frame = pl.DataFrame({"query": [1, 1, 2, 2], "relevance": [1, 0, 0, 1], "score": [0.9, 0.1, 0.9, 0.1]})
>>> parts = [frame.filter(pl.col("query") == q).lazy() for q in (1, 2)]
>>> combine_means([part.rank_metrics.ndcg_mean().collect() for part in parts])["ndcg"].round(4).to_list()
[0.8155]
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from ._spec import ZERO_WEIGHTS_MESSAGE

COUNT_COLUMNS = ("queries", "weight_sum", "queries_without_judgments")


def combine_means(means: Sequence[pl.DataFrame]) -> pl.DataFrame:
    """Combine the one-row frames of `ndcg_mean` / `dcg_mean` / `reciprocal_rank_mean` over disjoint sets of
    queries into the frame the whole dataset would give: each mean weighted by its `weight_sum`, the counts
    added.  The partitions must not share a query (each must hold whole queries)."""
    if not means:
        msg = "combine_means needs at least one mean frame."
        raise ValueError(msg)
    columns = means[0].columns
    for frame in means:
        if frame.columns != columns or frame.height != 1:
            msg = (
                f"combine_means takes one-row frames with the same columns, got {frame.columns} ({frame.height} rows)."
            )
            raise ValueError(msg)
    if "weight_sum" not in columns:
        msg = f"combine_means takes the frames of the *_mean methods (with 'weight_sum'), got columns {columns}."
        raise ValueError(msg)
    stacked = pl.concat(means)
    weight_sum = pl.col("weight_sum").sum()
    if stacked["weight_sum"].sum() == 0:
        raise ZeroDivisionError(ZERO_WEIGHTS_MESSAGE)
    combined = [
        pl.col(name).sum() if name in COUNT_COLUMNS else ((pl.col(name) * pl.col("weight_sum")).sum() / weight_sum)
        for name in columns
    ]
    return stacked.select(combined).select(pl.col(name).cast(stacked.schema[name]) for name in columns)
