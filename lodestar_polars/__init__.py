"""lodestar_polars: exact DCG, NDCG and reciprocal rank per query on Polars frames.

Importing the package registers the `.rank_metrics` namespace on `pl.DataFrame` and `pl.LazyFrame`;
`rank_metrics(frame)` returns the same namespace with its static type.
"""

from __future__ import annotations

from .compare import compare
from .namespace import RankMetricsFrame, RankMetricsLazyFrame, rank_metrics

__all__ = ["RankMetricsFrame", "RankMetricsLazyFrame", "compare", "rank_metrics"]
__version__ = "0.1.0"
