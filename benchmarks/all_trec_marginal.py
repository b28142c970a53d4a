"""What each measure of trec_eval's `all_trec` set adds to `evaluate(all_trec)`: the whole call, then the call
without one measure's columns (its marginal cost) and that measure's columns alone, CPU seconds, median of
`repeats`, in one process (issue 20's speed target: the whole set <= 3x `ndcg(k=10)`).

    python benchmarks/all_trec_marginal.py [--queries 100000] [--docs 10] [--repeats 3]

Data and options as benchmarks/all_trec_row.py (ties="doc", doc="doc", no_relevant=0; scores rounded to 2
decimals).  The marginal costs do not add up to the whole: measures share quantities (positions, the ideal
order, the relevant rows above), which the call without one of them still computes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

from all_trec_row import all_trec_measures, frame

import lodestar_polars  # noqa: F401  registers .rank_metrics
from lodestar_polars._spec import parse_measure


def cpu(function: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.process_time()
        function()
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--docs", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    measures, _ = all_trec_measures()
    df = frame(args.queries, args.docs)
    options = {"doc": "doc", "ties": "doc", "no_relevant": 0.0}
    kinds: dict[str, list[str]] = {}
    for measure in measures:
        kinds.setdefault(parse_measure(measure).kind, []).append(measure)
    print(f"{args.queries:,} queries x {args.docs} docs; {len(measures)} columns of {len(kinds)} measures")
    print(f"load average at the start: {os.getloadavg()[0]:.2f}")
    base = cpu(lambda: df.rank_metrics.ndcg(k=10), args.repeats)
    whole = cpu(lambda: df.rank_metrics.evaluate(measures, **options), args.repeats)
    print(f"ndcg(k=10) {base:.3f} s CPU; evaluate(all_trec) {whole:.3f} s CPU ({whole / base:.2f}x)")
    print(f"{'measure':24s} {'columns':>7s} {'marginal s':>11s} {'alone s':>8s}")
    rows = []
    for kind, columns in kinds.items():
        rest = [measure for measure in measures if measure not in columns]
        without = cpu(lambda rest=rest: df.rank_metrics.evaluate(rest, **options), args.repeats)
        alone = cpu(lambda columns=columns: df.rank_metrics.evaluate(columns, **options), args.repeats)
        rows.append((whole - without, kind, len(columns), alone))
    for marginal, kind, count, alone in sorted(rows, reverse=True):
        print(f"{kind:24s} {count:7d} {marginal:+11.3f} {alone:8.3f}")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
