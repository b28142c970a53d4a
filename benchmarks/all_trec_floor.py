"""How far below `evaluate(all_trec)` a Polars plan can go: a lower bound for any plan of Polars expressions that
computes trec_eval's `all_trec` columns, against issue 20's target (<= 3x `ndcg(k=10)`).

    python benchmarks/all_trec_floor.py [--queries 1000000] [--docs 10] [--repeats 3]

Data and options as benchmarks/all_trec_row.py.  Timed, CPU seconds, median of `repeats`, the contenders
alternating in each round:
- `ndcg(k=10)` with the defaults (the target's unit) and `evaluate(all_trec)` as the CLI calls it (ties="doc");
- the aggregation floor: one group-by by query of the input frame with as many aggregations as `all_trec` has
  columns, each the plainest there is (a sum of the score times a constant; distinct, so that none is shared),
  the least a plan reducing the rows to those per-query columns in one Polars group-by pays;
- the window floor: the three per-row quantities no plan of `all_trec` does without, as windows over the query:
  the position in trec_eval's order (by score, then by docno as text, descending), the ideal position (by
  relevance) and one running sum in position order (the relevant rows above, the DCG over 1..p, ...).
The floor is the sum of the two: a plan made of nothing else would cost that much.  It is not a plan that
computes the measures (their own expressions cost more than a plain sum, and they read more running sums).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

import polars as pl
from all_trec_row import all_trec_measures, frame

import lodestar_polars  # noqa: F401  registers .rank_metrics


def cpu(function: Callable[[], object]) -> float:
    start = time.process_time()
    function()
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--queries", type=int, default=1_000_000)
    parser.add_argument("--docs", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    measures, _ = all_trec_measures()
    df = frame(args.queries, args.docs)
    columns = len(measures)

    def aggregation_floor() -> object:
        sums = [(pl.col("score") * float(i + 1)).sum().alias(f"sum_{i}") for i in range(columns)]
        return df.lazy().group_by("query").agg(sums).collect()

    def window_floor() -> object:
        position = pl.struct("score", pl.col("doc").cast(pl.String)).rank("ordinal", descending=True)
        ideal = pl.col("relevance").rank("ordinal", descending=True)
        ranked = df.lazy().with_columns(
            position.over("query").alias("position"), ideal.over("query").alias("ideal_position")
        )
        running = pl.col("relevance").cast(pl.Float64).cum_sum().over("query", order_by="position")
        return ranked.select(running.alias("running"), "ideal_position").collect()

    contenders: dict[str, Callable[[], object]] = {
        "ndcg(k=10)": lambda: df.rank_metrics.ndcg(k=10),
        "evaluate(all_trec)": lambda: df.rank_metrics.evaluate(measures, doc="doc", ties="doc", no_relevant=0.0),
        f"aggregation floor ({columns} sums)": aggregation_floor,
        "window floor (3 windows)": window_floor,
    }
    print(f"{args.queries:,} queries x {args.docs} docs; all_trec: {columns} columns")
    print(f"load average at the start: {os.getloadavg()[0]:.2f}")
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(args.repeats):
        for name, function in contenders.items():
            times[name].append(cpu(function))
    median = {name: statistics.median(values) for name, values in times.items()}
    unit = median["ndcg(k=10)"]
    for name, value in median.items():
        print(f"{name:36s} {value:8.3f} s CPU  {value / unit:6.2f}x ndcg(k=10)")
    floor = median[f"aggregation floor ({columns} sums)"] + median["window floor (3 windows)"]
    print(f"{'floor (aggregation + windows)':36s} {floor:8.3f} s CPU  {floor / unit:6.2f}x ndcg(k=10)")
    print(f"{'target (3x ndcg(k=10))':36s} {3 * unit:8.3f} s CPU")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
