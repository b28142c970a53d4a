"""DataFrame vs LazyFrame paths in both orders (is the benchmark's 5-12% gap an ordering artefact?).

`python benchmarks/order_check.py`: 100k queries x 100 docs, k=10, median of 4 per order.
"""

import time

import numpy as np
import polars as pl

import lodestar_polars  # noqa: F401  (registers .rank_metrics)

rng = np.random.default_rng(0)
nq, nd = 100_000, 100
df = pl.DataFrame(
    {
        "query": np.repeat(np.arange(nq), nd),
        "relevance": rng.integers(0, 5, nq * nd).astype(np.int8),
        "score": rng.random(nq * nd),
    }
)
res = {"lazy first": [], "df second": [], "df first": [], "lazy second": []}
for _ in range(4):
    t = time.perf_counter()
    df.lazy().rank_metrics.ndcg(k=10).collect()
    res["lazy first"].append(time.perf_counter() - t)
    t = time.perf_counter()
    df.rank_metrics.ndcg(k=10)
    res["df second"].append(time.perf_counter() - t)
for _ in range(4):
    t = time.perf_counter()
    df.rank_metrics.ndcg(k=10)
    res["df first"].append(time.perf_counter() - t)
    t = time.perf_counter()
    df.lazy().rank_metrics.ndcg(k=10).collect()
    res["lazy second"].append(time.perf_counter() - t)
for k, v in res.items():
    print(k, round(float(np.median(v)), 3))
