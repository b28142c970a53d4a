"""lodestar_polars: exact ranking measures per query on Polars frames (NDCG, DCG, reciprocal rank, precision,
recall, average precision, success), eager, lazy and streaming.

Importing the package registers the `.rank_metrics` namespace on `pl.DataFrame` and `pl.LazyFrame`;
`rank_metrics(frame)` returns the same namespace with its static type; `mean(per_query)` averages a per-query
frame as the `*_mean` methods do; `compare(per_query, ...)` tests systems against a baseline and
`report(comparison, ...)` prints that comparison as a paper's table (Markdown, LaTeX or HTML).
"""

from __future__ import annotations

from ._mean import mean
from .compare import compare
from .namespace import RankMetricsFrame, RankMetricsLazyFrame, rank_metrics
from .report import report

__all__ = ["RankMetricsFrame", "RankMetricsLazyFrame", "compare", "mean", "rank_metrics", "report"]
__version__ = "0.3.0"
