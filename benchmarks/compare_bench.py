"""Benchmark `lodestar_polars.compare` (every test) and ranx's `compare` on the same per-query values.

    python benchmarks/compare_bench.py                       # 20 systems x 100k queries x 10,000 resamples
    python benchmarks/compare_bench.py --queries 10000       # a quick run

(with the package installed, or `PYTHONPATH=.` from the repository root; needs scipy, ranx for its rows.)

Data: one metric column ("ndcg@10"), per-query values in [0, 1] rounded to 4 decimals (so some deltas
are 0), system s = a shared per-query base + a shift of 0.0005 s + noise; numpy seed 0.

Timing: wall time of one call, after one warm-up call on 1,000 queries (imports, numba compilation);
the input is an eager DataFrame (the LazyFrame path adds one collect of the small per-query frame).
`compare` compares the 19 systems with the baseline (the lowest mean) and computes the intervals of all
20; with every test but "t" those are percentile bootstrap intervals from n_resamples resamples.

ranx (0.3.21) `compare` evaluates runs against qrels and then tests every ordered pair of runs
(20 x 19 = 380 calls; a pair's result is stored once).  To feed it the same per-query values, its module's
`evaluate` is replaced by a lookup of those values, so everything ranx `compare` does after evaluation
(the tests, wins/ties/losses, the Report) runs unchanged:
- `stat_test="student"` (scipy's ttest_rel per pair): timed in full;
- `stat_test="fisher"` (numba randomization test): 10,000 permutations of 100k queries per pair do not
  finish in reasonable time for 380 pairs, so one pair is timed with `--ranx-permutations` permutations
  (default 1,000) and the per-pair time is scaled linearly to 10,000 permutations, then to 380 pairs (what
  ranx's compare runs) and to 19 pairs (the comparisons with one baseline that lodestar makes).  The
  scaled figures are estimates and printed as such.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import types
from collections.abc import Callable
from functools import partial

import numpy as np
import polars as pl

import lodestar_polars as lp
from lodestar_polars.compare import Test

TESTS: tuple[Test, ...] = ("t", "permutation", "bootstrap", "wilcoxon")


def per_query_values(n_systems: int, n_queries: int, seed: int = 0) -> np.ndarray:
    """(systems x queries) per-query metric values."""
    rng = np.random.default_rng(seed)
    base = rng.beta(2.0, 2.0, n_queries)
    shifts = 0.0005 * np.arange(n_systems)[:, None]
    return np.round(np.clip(base + shifts + rng.normal(0.0, 0.15, (n_systems, n_queries)), 0.0, 1.0), 4)


def as_frame(values: np.ndarray) -> pl.DataFrame:
    n_systems, n_queries = values.shape
    return pl.DataFrame(
        {
            "model": np.repeat([f"system-{s:02d}" for s in range(n_systems)], n_queries),
            "query": np.tile(np.arange(n_queries, dtype=np.int64), n_systems),
            "ndcg@10": values.ravel(),
        }
    )


def timed(function: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def run_lodestar(frame: pl.DataFrame, resamples: int) -> dict[str, float]:
    times = {}
    for test in TESTS:
        seconds, table = timed(partial(lp.compare, frame, system="model", test=test, n_resamples=resamples, seed=0))
        assert isinstance(table, pl.DataFrame)
        times[test] = seconds
        significant = int((table["p_adjusted"] < 0.05).sum())
        print(f"lodestar compare test={test!r:14} {seconds:8.2f} s   ({significant} of 19 significant after Holm)")
    return times


def ranx_compare_on(values: np.ndarray, stat_test: str, n_permutations: int) -> object:
    """ranx.compare with its evaluation step replaced by the given per-query values."""
    import ranx

    compare_module = sys.modules["ranx.meta.compare"]
    names = [f"system-{s:02d}" for s in range(values.shape[0])]
    scores = dict(zip(names, values, strict=True))
    original = getattr(compare_module, "evaluate")  # noqa: B009  (a module attribute mypy does not know)
    setattr(compare_module, "evaluate", lambda qrels, run, metrics, **_: scores[run.name])  # noqa: B010
    try:
        runs = [types.SimpleNamespace(name=name) for name in names]
        return ranx.compare(
            qrels=None, runs=runs, metrics=["ndcg@10"], stat_test=stat_test, n_permutations=n_permutations
        )
    finally:
        setattr(compare_module, "evaluate", original)  # noqa: B010


def run_ranx(values: np.ndarray, resamples: int, ranx_permutations: int) -> None:
    try:
        from ranx.statistical_tests import fisher_randomization_test
    except ImportError as error:
        print(f"ranx not importable ({error}); ranx rows skipped")
        return
    n_systems = values.shape[0]
    ordered_pairs = n_systems * (n_systems - 1)
    ranx_compare_on(values[:2, :1000], "student", 10)  # warm-up
    seconds, _ = timed(lambda: ranx_compare_on(values, "student", resamples))
    print(f"ranx compare stat_test='student'   {seconds:8.2f} s   ({ordered_pairs} ordered pairs, measured)")

    fisher_randomization_test(values[0, :1000], values[1, :1000], 10, 0.01, 42)  # numba compilation
    pair_seconds, _ = timed(lambda: fisher_randomization_test(values[1], values[0], ranx_permutations, 0.01, 42))
    per_pair = pair_seconds * resamples / ranx_permutations
    print(
        f"ranx fisher, one pair, {ranx_permutations:,} permutations: {pair_seconds:.2f} s measured -> "
        f"{per_pair:.1f} s per pair at {resamples:,} (estimate)"
    )
    print(
        f"ranx compare stat_test='fisher'    ~{per_pair * ordered_pairs:,.0f} s for its {ordered_pairs} ordered pairs, "
        f"~{per_pair * (n_systems - 1):,.0f} s for {n_systems - 1} pairs with one baseline (estimates)"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--ranx-permutations", type=int, default=1_000)
    parser.add_argument("--skip-ranx", action="store_true")
    args = parser.parse_args(argv)

    print(
        f"{args.systems} systems x {args.queries:,} queries x {args.resamples:,} resamples; "
        f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f} at start"
    )
    values = per_query_values(args.systems, args.queries)
    frame = as_frame(values)
    lp.compare(as_frame(values[:, :1000]), system="model", test="wilcoxon", n_resamples=100, seed=0)  # warm-up
    run_lodestar(frame, args.resamples)
    if not args.skip_ranx:
        run_ranx(values, args.resamples, args.ranx_permutations)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
