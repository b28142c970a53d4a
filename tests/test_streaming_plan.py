"""The plan runs natively in Polars' streaming engine: no in-memory fallback node, Parquet in and out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import lodestar_polars  # noqa: F401  (registers .rank_metrics)

# in the physical graph, "0.0 0.3 1.0" is the fill colour of an in-memory engine fallback node
FALLBACK_MARKERS = ("in-memory-map", 'fillcolor="0.0 0.3 1.0"')

OPTIONS: list[dict[str, Any]] = [
    {},
    {"k": [1, 3, 10], "weight": "w"},
    {"k": 5, "ties": "doc", "doc": "doc"},
    {"k": [2, None], "ties": "reverse", "gain": "exponential", "no_relevant": None},
    {"ties": "optimistic", "gain": {0: 0.0, 1: 1.0, 2: 3.0, 3: 7.0}, "no_relevant": "error"},
    {"ties": "input", "doc": "doc", "weight": "w"},
]


@pytest.fixture(scope="module")
def parquet_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(11)
    n_queries = 300
    lengths = rng.integers(1, 40, n_queries)
    query = np.repeat(np.arange(n_queries), lengths)
    frame = pl.DataFrame(
        {
            "query": query,
            "doc": [f"d{i}" for i in range(len(query))],
            "relevance": rng.integers(0, 4, len(query)),
            "score": rng.integers(0, 6, len(query)).astype(float),
            "w": (query % 5 + 1).astype(float),
        }
    ).with_columns(pl.when(pl.col("query") % 7 == 0).then(0).otherwise(pl.col("relevance")).alias("relevance"))
    frame = frame.with_columns(
        pl.when(pl.col("query") % 7 == 0).then(1).otherwise(pl.col("relevance")).alias("relevance")
    )
    path = tmp_path_factory.mktemp("data") / "eval.parquet"
    frame.sample(fraction=1.0, shuffle=True, seed=1).write_parquet(path, row_group_size=500)
    return path


def fallback_nodes(plan: pl.LazyFrame) -> list[str]:
    graph = plan.show_graph(engine="streaming", plan_stage="physical", raw_output=True, show=False)
    assert isinstance(graph, str)
    return [line for line in graph.splitlines() if any(marker in line for marker in FALLBACK_MARKERS)]


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("method", ["ndcg", "dcg", "ndcg_mean", "dcg_mean", "reciprocal_rank", "reciprocal_rank_mean"])
def test_physical_plan_has_no_in_memory_fallback(parquet_file: Path, method: str, options: dict[str, Any]) -> None:
    if method.startswith("dcg") and "no_relevant" in options:
        options = {k: v for k, v in options.items() if k != "no_relevant"}
    if method.startswith("reciprocal_rank"):
        options = {k: v for k, v in options.items() if k not in ("no_relevant", "gain")}
    plan = getattr(pl.scan_parquet(parquet_file).rank_metrics, method)(**options)
    assert fallback_nodes(plan) == []


def test_the_fallback_detector_sees_a_fallback(parquet_file: Path) -> None:
    """Guard against a detector that can never fire: a non-elementwise Python function is a fallback."""
    plan = pl.scan_parquet(parquet_file).select(pl.col("score").map_batches(lambda s: s, return_dtype=pl.Float64))
    assert fallback_nodes(plan) != []


@pytest.mark.parametrize("options", OPTIONS[:4])
def test_sink_parquet_streams_the_same_numbers(parquet_file: Path, tmp_path: Path, options: dict[str, Any]) -> None:
    eager = pl.read_parquet(parquet_file).rank_metrics.ndcg(**options)
    out = tmp_path / "per_query.parquet"
    pl.scan_parquet(parquet_file).rank_metrics.ndcg(**options).sink_parquet(out, engine="streaming")
    assert_frame_equal(pl.read_parquet(out), eager, rel_tol=1e-12, abs_tol=1e-12)


def test_per_query_frame_and_mean_from_one_lazy_source(parquet_file: Path) -> None:
    source = pl.scan_parquet(parquet_file)
    per_query, mean = pl.collect_all(
        [source.rank_metrics.ndcg(k=[1, 10]), source.rank_metrics.ndcg_mean(k=[1, 10])], engine="streaming"
    )
    assert mean["queries"].item() == per_query.height
    assert mean["ndcg@10"].item() == pytest.approx(per_query["ndcg@10"].mean(), rel=1e-12)
