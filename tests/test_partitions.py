"""Partition-wise evaluation (the bounded-memory layout) gives the whole dataset's numbers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import lodestar_polars  # noqa: F401  (registers .rank_metrics)
from lodestar_polars.partitions import combine_means


@pytest.fixture
def hive_dataset(tmp_path: Path) -> tuple[pl.DataFrame, Path]:
    rng = np.random.default_rng(5)
    lengths = rng.integers(1, 30, 400)
    query = np.repeat(np.arange(400), lengths)
    frame = pl.DataFrame(
        {
            "query": query,
            "relevance": rng.integers(0, 4, len(query)),
            "score": rng.integers(0, 8, len(query)).astype(float),
            "w": (query % 3 + 1).astype(float),
        }
    )
    root = tmp_path / "logs"
    frame.with_columns(bucket=pl.col("query") % 4).write_parquet(root, partition_by="bucket")
    return frame, root


def test_partition_wise_evaluation_equals_the_whole(hive_dataset: tuple[pl.DataFrame, Path], tmp_path: Path) -> None:
    frame, root = hive_dataset
    out = tmp_path / "out"
    out.mkdir()
    means = []
    for index, part in enumerate(sorted(root.glob("bucket=*"))):
        source = pl.scan_parquet(part)
        per_query = source.rank_metrics.ndcg(k=[1, 5, None], weight="w").sink_parquet(
            out / f"{index}.parquet", lazy=True
        )
        mean = source.rank_metrics.ndcg_mean(k=[1, 5, None], weight="w")
        _, mean_frame = pl.collect_all([per_query, mean], engine="streaming")
        means.append(mean_frame)
    whole = frame.rank_metrics.ndcg(k=[1, 5, None], weight="w")
    assert_frame_equal(pl.read_parquet(out).sort("query"), whole, rel_tol=1e-12, abs_tol=1e-12)
    assert_frame_equal(combine_means(means), frame.rank_metrics.ndcg_mean(k=[1, 5, None], weight="w"), rel_tol=1e-12)


def test_combine_means_refuses_mismatched_frames(hive_dataset: tuple[pl.DataFrame, Path]) -> None:
    frame, _ = hive_dataset
    with pytest.raises(ValueError, match="combine_means takes one-row frames with the same columns"):
        combine_means([frame.rank_metrics.ndcg_mean(k=1), frame.rank_metrics.ndcg_mean(k=2)])
    with pytest.raises(ValueError, match="needs at least one"):
        combine_means([])
