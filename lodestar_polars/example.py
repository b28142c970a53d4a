"""The built-in example: `python -m lodestar_polars.example [--queries N] [--out DIR]`.

Writes a synthetic evaluation log to Parquet (one row per query and document: relevance, model score,
a per-query weight), then evaluates it lazily with `scan_parquet` and the streaming engine, printing the
per-query NDCG and the weighted mean at several cut-offs (from one read of the log: the mean comes from the
per-query frame).  Then it evaluates three models side by side (`example_systems`): several measures per
model in one plan (`by="model"`), and which differences are real (`compare`, when scipy is installed).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
import polars as pl

from lodestar_polars import mean, rank_metrics

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


# how strongly each model's score follows the relevance: bm25 is the weakest, hybrid the strongest
SYSTEM_SIGNAL = {"bm25": 0.45, "dense": 0.55, "hybrid": 0.7}


def example_systems(n_queries: int = 200, seed: int = 11) -> pl.DataFrame:
    """Three retrieval models scoring the same judged candidates: the built-in data for `compare` and the plots.

    Each query has 5-30 candidate documents (ragged) with graded relevance 0-3 and a per-query difficulty;
    every model scores every candidate as `signal * difficulty * relevance + noise`, rounded to one decimal
    (so scores tie), with the model's signal from `SYSTEM_SIGNAL`: "bm25" < "dense" < "hybrid".
    Deterministic for a given `n_queries` and `seed`.

    Parameters
    ----------
    n_queries
        Number of queries.
    seed
        Seed of numpy's random generator.

    Returns
    -------
    pl.DataFrame
        Columns `model` (String), `query_id` (Int64), `doc_id` (String), `relevance` (Int8), `score`
        (Float64); one row per (model, query, document), sorted by model then query.

    Examples
    --------
    >>> from lodestar_polars.example import example_systems
    >>> systems = example_systems(n_queries=50)
    >>> systems.group_by("model").agg(pl.col("query_id").n_unique()).sort("model")
    shape: (3, 2)
    ┌────────┬──────────┐
    │ model  ┆ query_id │
    │ ---    ┆ ---      │
    │ str    ┆ u32      │
    ╞════════╪══════════╡
    │ bm25   ┆ 50       │
    │ dense  ┆ 50       │
    │ hybrid ┆ 50       │
    └────────┴──────────┘
    """
    rng = np.random.default_rng(seed)
    lengths = rng.integers(5, 31, n_queries)
    query = np.repeat(np.arange(n_queries, dtype=np.int64), lengths)
    position = np.arange(len(query)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    relevance = rng.choice(4, size=len(query), p=[0.55, 0.25, 0.12, 0.08]).astype(np.int8)
    difficulty = np.repeat(rng.uniform(0.2, 1.0, n_queries), lengths)
    doc_id = [f"doc-{i}" for i in position]
    frames = []
    for model, signal in SYSTEM_SIGNAL.items():
        score = np.round(signal * difficulty * relevance + rng.normal(0.0, 0.6, len(query)), 1)
        frames.append(
            pl.DataFrame({"model": model, "query_id": query, "doc_id": doc_id, "relevance": relevance, "score": score})
        )
    return pl.concat(frames)


def format_p_value(p_value: float) -> str:
    """A p-value as the comparison table prints it: 4 decimals, or `< 1e-4` below that (never `0.0000`).

    Parameters
    ----------
    p_value
        A p-value in [0, 1].

    Returns
    -------
    str
        `"< 1e-4"` below 1e-4, the value with 4 decimals otherwise.

    Examples
    --------
    >>> from lodestar_polars.example import format_p_value
    >>> [format_p_value(p) for p in (3.2e-9, 0.00081, 0.0826)]
    ['< 1e-4', '0.0008', '0.0826']
    """
    return "< 1e-4" if p_value < 1e-4 else f"{p_value:.4f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--queries", type=int, default=1000, help="number of queries to generate")
    parser.add_argument(
        "--out", type=Path, default=None, help="folder for the Parquet files (default: a temp dir, removed at exit)"
    )
    args = parser.parse_args(argv)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        run_example(args.out, args.queries)
        return
    with tempfile.TemporaryDirectory(prefix="lodestar-example-") as folder:
        run_example(Path(folder), args.queries)


def run_example(folder: Path, n_queries: int) -> None:
    """Write the example's files to `folder` and print what the module docstring says."""
    log = folder / "evaluation_log.parquet"
    rows = write_example_log(log, n_queries)
    print(f"wrote {rows:,} rows for {n_queries:,} queries to {log}\n")

    # the same as pl.scan_parquet(log).rank_metrics.ndcg(...), through the typed accessor
    metrics = rank_metrics(pl.scan_parquet(log))
    per_query_plan = metrics.ndcg(query="query_id", doc="doc_id", k=CUTOFFS, weight="traffic_weight")
    per_query = per_query_plan.collect(engine="streaming")
    means = mean(per_query, weight="traffic_weight")  # from the per-query frame: the log is read once

    with pl.Config(tbl_rows=12, tbl_cols=12, float_precision=4):
        print("per-query NDCG (tie-averaged, as scikit-learn's ndcg_score):")
        print(per_query)
        print("\nweighted mean over queries:")
        print(means)
    out = folder / "ndcg_per_query.parquet"
    per_query_plan.sink_parquet(out)
    print(f"\nper-query results also written with sink_parquet to {out}")

    systems_log = folder / "three_models.parquet"
    example_systems(n_queries=200).write_parquet(systems_log)
    models = rank_metrics(pl.scan_parquet(systems_log))
    measures = ["ndcg@10", "p@5", "r@10", "ap", "rr", "success@1"]
    per_model_query = models.evaluate(measures, by="model", query="query_id", doc="doc_id").collect()
    with pl.Config(tbl_cols=12, float_precision=4):
        print(f"\nthree models on 200 queries ({systems_log}), several measures per model in one plan:")
        print(mean(per_model_query, by="model"))
    try:
        from lodestar_polars import compare

        table = compare(per_model_query, system="model", query="query_id", metrics=["ndcg@10", "ap"], baseline="bm25")
    except ImportError as error:  # compare's t-test needs scipy (the `stats` extra)
        print(f"\n(skipping the comparison: {error})")
        return
    with pl.Config(tbl_cols=8, float_precision=4):
        print("\nagainst bm25 (paired t-test over queries, Holm-corrected):")
        p_adjusted = pl.Series("p_adjusted", [None if p is None else format_p_value(p) for p in table["p_adjusted"]])
        print(
            table.with_columns(p_adjusted).select(
                "metric", "model", "mean", "delta", "p_adjusted", "wins", "ties", "losses"
            )
        )


if __name__ == "__main__":
    main()
