"""The built-in example: `python -m lodestar_polars.example [--queries N] [--out DIR]`.

Writes a synthetic evaluation log to Parquet (one row per query and document: relevance, model score,
a per-query weight), then evaluates it lazily with `scan_parquet` and the streaming engine, printing the
per-query NDCG and the weighted mean at several cut-offs.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
import polars as pl

from lodestar_polars import rank_metrics

CUTOFFS: list[int | None] = [1, 3, 5, 10, None]


def write_example_log(path: Path, n_queries: int, seed: int = 7) -> int:
    """A deterministic log: 1-50 documents per query, graded relevance 0-3, scores rounded (so some tie)."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 51, n_queries)
    query = np.repeat(np.arange(n_queries), lengths)
    relevance = rng.choice(4, size=len(query), p=[0.6, 0.25, 0.1, 0.05])
    score = np.round(relevance * 0.4 + rng.normal(0.0, 0.6, len(query)), 1)
    weight = np.repeat(rng.choice([1.0, 2.0, 5.0], n_queries), lengths)
    pl.DataFrame(
        {
            "query_id": query.astype(np.int64),
            "doc_id": [f"doc-{i}" for i in range(len(query))],
            "relevance": relevance.astype(np.int8),
            "score": score,
            "traffic_weight": weight,
        }
    ).write_parquet(path)
    return len(query)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--queries", type=int, default=1000, help="number of queries to generate")
    parser.add_argument("--out", type=Path, default=None, help="folder for the Parquet files (default: a temp dir)")
    args = parser.parse_args(argv)
    folder = args.out or Path(tempfile.mkdtemp(prefix="lodestar-example-"))
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "evaluation_log.parquet"
    rows = write_example_log(log, args.queries)
    print(f"wrote {rows:,} rows for {args.queries:,} queries to {log}\n")

    # the same as pl.scan_parquet(log).rank_metrics.ndcg(...), through the typed accessor
    metrics = rank_metrics(pl.scan_parquet(log))
    per_query_plan = metrics.ndcg(query="query_id", doc="doc_id", k=CUTOFFS, weight="traffic_weight")
    mean_plan = metrics.ndcg_mean(query="query_id", doc="doc_id", k=CUTOFFS, weight="traffic_weight")
    per_query, mean = pl.collect_all([per_query_plan, mean_plan], engine="streaming")

    with pl.Config(tbl_rows=12, tbl_cols=12, float_precision=4):
        print("per-query NDCG (tie-averaged, as scikit-learn's ndcg_score):")
        print(per_query)
        print("\nweighted mean over queries:")
        print(mean)
    out = folder / "ndcg_per_query.parquet"
    per_query_plan.sink_parquet(out)
    print(f"\nper-query results also written with sink_parquet to {out}")


if __name__ == "__main__":
    main()
