"""`exprs.measure(name)` (a measure derived from its module, over each group's rows) against `evaluate` of the
same measure on the same rows, and against the measure's hand-written expression where it has one.

    python benchmarks/exprs_measure_row.py [--queries 300000] [--docs 10] [--repeats 3] [--ties input]
                                           [--measures compat,rndcg,bpref,...]

Data (numpy seed 0): `queries` x `docs` rows, grades 0..3, scores rounded to 2 decimals (some ties), rows
shuffled.  Each contender runs `group_by("query").agg(...)` (or `evaluate`) and collects; the contenders of a
measure alternate in one process; wall and CPU seconds, median of `repeats`.  The values are compared too (the
largest difference is printed).
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

import lodestar_polars  # noqa: F401  registers .rank_metrics
from lodestar_polars import exprs

# the hand-written expression of a measure name, where there is one
HAND_WRITTEN: dict[str, Callable[[str], pl.Expr]] = {
    "ndcg@10": lambda ties: exprs.ndcg(k=10, ties=ties),  # type: ignore[arg-type]
    "p@10": lambda ties: exprs.precision(k=10, ties=ties),  # type: ignore[arg-type]
    "ap": lambda ties: exprs.average_precision(ties=ties),  # type: ignore[arg-type]
    "rr": lambda ties: exprs.reciprocal_rank(ties=ties),  # type: ignore[arg-type]
    "rbp": lambda ties: exprs.rbp(ties=ties),  # type: ignore[arg-type]
    "err@10": lambda ties: exprs.err(k=10, ties=ties),  # type: ignore[arg-type]
}
DEFAULT = "compat,rndcg,bpref,rprec_mult@0.5,insq(max_rel=4),num_ret,ndcg@10,p@10,ap,rr,rbp,err@10"


def frame(queries: int, docs: int) -> pl.DataFrame:
    rng = np.random.default_rng(0)
    rows = queries * docs
    return pl.DataFrame(
        {
            "query": np.repeat(np.arange(queries), docs),
            "relevance": rng.integers(0, 4, rows),
            "score": rng.random(rows).round(2),
        }
    ).sample(fraction=1.0, shuffle=True, seed=0)


def timed(run: Callable[[], pl.DataFrame]) -> tuple[float, float, pl.DataFrame]:
    wall, cpu = time.perf_counter(), cpu_seconds()
    out = run()
    return time.perf_counter() - wall, cpu_seconds() - cpu, out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=300_000)
    parser.add_argument("--docs", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ties", default="input")
    parser.add_argument("--measures", default=DEFAULT)
    args = parser.parse_args()
    df = frame(args.queries, args.docs)
    print(f"{args.queries:,} queries x {args.docs} rows, ties={args.ties!r}, median of {args.repeats}")
    load = [os.getloadavg()[0]]
    for name in args.measures.split(","):
        try:
            exprs.measure(name, ties=args.ties)
        except ValueError as refusal:  # a tie mode the measure refuses, as evaluate refuses it
            print(f"{name:24s} refused: {str(refusal).split(';')[0]}")
            continue
        contenders: dict[str, Callable[[], pl.DataFrame]] = {
            "exprs.measure": lambda name=name: (
                df.lazy().group_by("query").agg(exprs.measure(name, ties=args.ties)).sort("query").collect()
            ),
            "evaluate": lambda name=name: (
                df.lazy().rank_metrics.evaluate([name], ties=args.ties).sort("query").collect()
            ),
        }
        if name in HAND_WRITTEN:
            contenders["hand-written"] = lambda name=name: (
                df.lazy().group_by("query").agg(HAND_WRITTEN[name](args.ties)).sort("query").collect()
            )
        times: dict[str, list[tuple[float, float]]] = {contender: [] for contender in contenders}
        outputs: dict[str, pl.DataFrame] = {}
        for _ in range(args.repeats):
            for contender, run in contenders.items():
                wall, cpu, outputs[contender] = timed(run)
                times[contender].append((wall, cpu))
        load.append(os.getloadavg()[0])
        values = {c: out[:, -1].to_numpy() for c, out in outputs.items()}
        difference = max(float(np.nanmax(np.abs(v - values["evaluate"]))) for v in values.values())
        medians = {
            c: (statistics.median(w for w, _ in t), statistics.median(c_ for _, c_ in t)) for c, t in times.items()
        }
        base_wall, base_cpu = medians["evaluate"]
        cells = "  ".join(
            f"{c} {w:.3f} s ({w / base_wall:.2f}x) CPU {cpu:.3f} s ({cpu / base_cpu:.2f}x)"
            for c, (w, cpu) in medians.items()
        )
        print(f"{name:24s} {cells}  largest difference {difference:.1e}")
    print(f"load {min(load):.1f}-{max(load):.1f}")


if __name__ == "__main__":
    main()
