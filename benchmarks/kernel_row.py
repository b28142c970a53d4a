"""The default call against the fused numba kernel (`limit_kernel.py`), issue 21's target 2.

    python benchmarks/kernel_row.py             # 100k x 100 and 1M x 10, grouped and shuffled, with and without ties

Data (numpy seed 0): `query` int64, `relevance` int8 uniform in 0..4, `score` float64 uniform in [0, 1) ("none")
or integers 0..4 ("heavy": every query tied).  Grouped rows: each query's rows contiguous (the kernel's input as
is); shuffled rows: the same rows in a seeded random order, where the kernel first needs its rows grouped
(`np.argsort(query, kind="stable")` and a gather, timed with it).  Contenders, alternating in one process after
a warm-up (numba's compilation not timed), median of 3: the kernel `ndcg(query, relevance, score, 10)` and
`df.rank_metrics.ndcg(k=10)` (eager, default engine, all cores).  Both use both cores (the kernel by `prange`).
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable

import numpy as np
import polars as pl
from _timing import cpu_seconds
from limit_kernel import ndcg as kernel_ndcg

import lodestar_polars  # noqa: F401  (registers the namespace)


def _time(call: Callable[[], object], samples: list[tuple[float, float]]) -> None:
    cpu, wall = cpu_seconds(), time.perf_counter()
    call()
    samples.append((time.perf_counter() - wall, cpu_seconds() - cpu))


def _kernel(grouped: bool, query: np.ndarray, relevance: np.ndarray, score: np.ndarray) -> object:
    if grouped:
        return kernel_ndcg(query, relevance, score, 10)
    rows = np.argsort(query, kind="stable")
    return kernel_ndcg(query[rows], relevance[rows], score[rows], 10)


def _package(frame: pl.DataFrame) -> object:
    return frame.rank_metrics.ndcg(k=10)


def main() -> None:
    print(f"polars {pl.__version__}; load average before {os.getloadavg()[0]:.2f}")
    print(
        "| shape | rows | ties | kernel wall s | kernel CPU s | package wall s | package CPU s | wall ratio "
        "| CPU ratio |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for queries, docs in ((100_000, 100), (1_000_000, 10)):
        for order in ("grouped", "shuffled"):
            for ties in ("none", "heavy"):
                rng = np.random.default_rng(0)
                n = queries * docs
                query = np.repeat(np.arange(queries), docs)
                relevance = rng.integers(0, 5, n).astype(np.int8)
                score = rng.integers(0, 5, n).astype(np.float64) if ties == "heavy" else rng.random(n)
                if order == "shuffled":
                    permutation = rng.permutation(n)
                    query, relevance, score = query[permutation], relevance[permutation], score[permutation]
                frame = pl.DataFrame({"query": query, "relevance": relevance, "score": score})

                kernel = functools.partial(_kernel, order == "grouped", query, relevance, score)
                package = functools.partial(_package, frame)
                kernel(), package()
                kernel_samples: list[tuple[float, float]] = []
                package_samples: list[tuple[float, float]] = []
                for _ in range(3):
                    _time(kernel, kernel_samples)
                    _time(package, package_samples)
                kw, kc = (sorted(s[i] for s in kernel_samples)[1] for i in (0, 1))
                pw, pc = (sorted(s[i] for s in package_samples)[1] for i in (0, 1))
                print(
                    f"| {queries:,} x {docs} | {order} | {ties} | {kw:.3f} | {kc:.3f} | {pw:.3f} | {pc:.3f} "
                    f"| {pw / kw:.2f} | {pc / kc:.2f} |"
                )
    print(f"load average after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
