"""The "limit" kernel: tie-averaged NDCG@k in one fused numba pass over data already grouped by query.

Benchmark-only (needs numba).  The input is what a hand-written kernel would get for free when the data
is already laid out by query: contiguous `relevance` and `score` arrays and `offsets` (query i owns rows
offsets[i]:offsets[i + 1]).  Each query is sorted on its own (np.argsort inside njit) and scored with
scikit-learn's tie averaging: a block of equal scores earns (mean gain of the block) x (sum of the
discounts of the positions it covers), positions past k weighing 0.  Queries run in parallel (prange), so
the kernel uses every core, as Polars does.

This is the bound the package is measured against, not a product: no checks, no nulls, no ragged edge
cases beyond empty queries.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True)
def _query_ndcg(gain: np.ndarray, score: np.ndarray, ks: np.ndarray, discount: np.ndarray, out: np.ndarray) -> None:
    n = gain.shape[0]
    if n == 0:
        for c in range(ks.shape[0]):
            out[c] = 0.0
        return
    order = np.argsort(-score, kind="quicksort")  # any order within a tie block gives the same block sums
    ideal_gain = np.sort(gain)[::-1]
    for c in range(ks.shape[0]):
        k = min(ks[c], n)
        ideal = 0.0
        for i in range(k):
            ideal += ideal_gain[i] * discount[i]
        if ideal == 0.0:
            out[c] = 0.0
            continue
        dcg = 0.0
        start = 0
        while start < k:
            block_score = score[order[start]]
            end = start
            gain_sum = 0.0
            while end < n and score[order[end]] == block_score:
                gain_sum += gain[order[end]]
                end += 1
            discount_sum = 0.0
            for i in range(start, min(end, k)):
                discount_sum += discount[i]
            dcg += gain_sum / (end - start) * discount_sum
            start = end
        out[c] = dcg / ideal


@njit(parallel=True, cache=True)
def ndcg_grouped(offsets: np.ndarray, relevance: np.ndarray, score: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """NDCG@k per query (rows) and cut-off (columns); linear gain, log2 discount, tie-averaged."""
    n_queries = offsets.shape[0] - 1
    max_k = 1
    for c in range(ks.shape[0]):
        max_k = max(max_k, ks[c])
    discount = 1.0 / np.log2(np.arange(max_k, dtype=np.float64) + 2.0)
    out = np.empty((n_queries, ks.shape[0]), dtype=np.float64)
    for q in prange(n_queries):
        lo, hi = offsets[q], offsets[q + 1]
        _query_ndcg(relevance[lo:hi].astype(np.float64), score[lo:hi].astype(np.float64), ks, discount, out[q])
    return out


def offsets_from_sorted_query(query: np.ndarray) -> np.ndarray:
    """Group boundaries of a query column whose equal values are contiguous."""
    starts = np.flatnonzero(query[1:] != query[:-1]) + 1
    return np.concatenate(([0], starts, [query.shape[0]])).astype(np.int64)


def ndcg(query: np.ndarray, relevance: np.ndarray, score: np.ndarray, k: int | list[int]) -> np.ndarray:
    ks = np.asarray([k] if isinstance(k, int) else k, dtype=np.int64)
    return ndcg_grouped(offsets_from_sorted_query(query), relevance, score, ks)


def verify(seed: int = 0) -> float:
    """Compare with scikit-learn on small tied and untied cases; return the largest absolute difference."""
    from sklearn.metrics import ndcg_score

    rng = np.random.default_rng(seed)
    worst = 0.0
    for n_queries, n_docs, tied in [(200, 7, False), (200, 12, True), (50, 40, True), (1, 5, True)]:
        relevance = rng.integers(0, 5, (n_queries, n_docs))
        score = rng.integers(0, 4, (n_queries, n_docs)).astype(np.float64) if tied else rng.random((n_queries, n_docs))
        query = np.repeat(np.arange(n_queries), n_docs)
        for k in (1, 3, 5, 10, 20):
            ours = ndcg(query, relevance.ravel(), score.ravel(), [k])[:, 0]
            expected = [ndcg_score(relevance[i : i + 1], score[i : i + 1], k=k) for i in range(n_queries)]
            worst = max(worst, float(np.max(np.abs(ours - np.asarray(expected)))))
    known = ndcg(np.zeros(5, np.int64), np.array([10, 0, 0, 1, 5]), np.array([1.0, 0, 0, 0, 1]), [1])[0, 0]
    worst = max(worst, abs(known - 0.75))
    return worst


if __name__ == "__main__":
    difference = verify()
    print(f"largest |limit kernel - scikit-learn| = {difference:.3g}")
    assert difference < 1e-12
