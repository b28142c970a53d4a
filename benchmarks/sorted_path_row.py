"""The sorted path issue 21 suggests, against the window context the default `ndcg(k=10)` plan uses.

    python benchmarks/sorted_path_row.py [--queries 1000000] [--docs 10] [--repeats 5]

Data (numpy seed 0): `query` int64 with each query's rows contiguous, `relevance` int8 uniform in 0..4, `score`
float64 uniform in [0, 1).  Only the step that gives each row its positions is timed, eager, all cores, variants
alternating in one process, medians:

- `windows`: the plan's window context: the ordinal rank of the score and of the relevance over the query, and
  the per-query tie flag (`n_unique` of the score below the row count);
- `windows_no_tie_flag`: the two ranks alone;
- `sorted_score`: one sort by (query, score descending), the position from the row index less the index where
  the query starts (a `cum_max`, no window and no groups), and a tied-row flag from `shift`;
- `sorted_both`: that, then a second sort by (query, relevance descending) for the ideal positions.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

import numpy as np
import polars as pl
from _timing import cpu_seconds

QUERY = pl.col("query")


def _position(name: str) -> pl.Expr:
    index = pl.int_range(pl.len(), dtype=pl.UInt32)
    starts = (QUERY.shift(1) != QUERY).fill_null(True)
    return (index - pl.when(starts).then(index).otherwise(0).cum_max() + 1).alias(name)


def _tied_row() -> pl.Expr:
    return ((pl.col("score") == pl.col("score").shift(1)) & (QUERY.shift(1) == QUERY)).fill_null(False)


def _variants(frame: pl.DataFrame) -> dict[str, Callable[[], pl.DataFrame]]:
    position = pl.col("score").rank("ordinal", descending=True).over(QUERY).alias("position")
    ideal = pl.col("relevance").rank("ordinal", descending=True).over(QUERY).alias("ideal_position")
    tie_flag = (
        pl.when(pl.col("score").n_unique() < pl.len()).then(pl.len() <= 10).otherwise(None).over(QUERY).alias("tied")
    )

    def sorted_score() -> pl.LazyFrame:
        by_score = frame.lazy().sort("query", "score", descending=[False, True])
        return by_score.with_columns(_position("position"), _tied_row().alias("tied_row"))

    return {
        "windows": lambda: frame.with_columns(position, ideal, tie_flag),
        "windows_no_tie_flag": lambda: frame.with_columns(position, ideal),
        "sorted_score": lambda: sorted_score().collect(),
        "sorted_both": lambda: (
            sorted_score()
            .sort("query", "relevance", descending=[False, True])
            .with_columns(_position("ideal_position"))
            .collect()
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=1_000_000)
    parser.add_argument("--docs", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    rows = args.queries * args.docs
    frame = pl.DataFrame(
        {
            "query": np.repeat(np.arange(args.queries), args.docs),
            "relevance": rng.integers(0, 5, rows).astype(np.int8),
            "score": rng.random(rows),
        }
    )
    variants = _variants(frame)
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    print(f"polars {pl.__version__}; {args.queries} x {args.docs}; load average before {os.getloadavg()[0]:.2f}")
    for call in variants.values():  # warm-up, not timed
        call()
    for _ in range(args.repeats):
        for name, call in variants.items():
            cpu, wall = cpu_seconds(), time.perf_counter()
            call()
            samples[name].append((time.perf_counter() - wall, cpu_seconds() - cpu))
    base = statistics.median(cpu for _, cpu in samples["windows"])
    print("| variant | wall s | CPU s | CPU / windows |")
    print("|---|---|---|---|")
    for name, timings in samples.items():
        wall = statistics.median(wall for wall, _ in timings)
        cpu = statistics.median(cpu for _, cpu in timings)
        print(f"| {name} | {wall:.3f} | {cpu:.3f} | {cpu / base:.2f} |")
    print(f"load average after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
