"""The per-query frame and its mean from one read of the source: collect the per-query plan, average it with
`lodestar_polars.mean`.  Measured as the bytes the process reads (Linux's /proc/self/io `rchar`)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import lodestar_polars

PROC_IO = Path("/proc/self/io")


def bytes_read() -> int:
    for line in PROC_IO.read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


@pytest.fixture(scope="module")
def parquet_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(3)
    rows = 400_000
    frame = pl.DataFrame(
        {
            "query": np.repeat(np.arange(rows // 20), 20),
            "relevance": rng.integers(0, 4, rows),
            "score": rng.integers(0, 6, rows).astype(float),  # ties: the tie-averaged path
        }
    )
    path = tmp_path_factory.mktemp("one_scan") / "eval.parquet"
    frame.write_parquet(path)
    return path


@pytest.mark.skipif(not PROC_IO.exists(), reason="needs Linux's /proc/self/io to count the bytes read")
@pytest.mark.parametrize("engine", ["in-memory", "streaming"])
def test_per_query_frame_and_mean_read_the_source_once(
    parquet_file: Path, engine: Literal["in-memory", "streaming"]
) -> None:
    size = parquet_file.stat().st_size
    source = pl.scan_parquet(parquet_file)
    before = bytes_read()
    per_query = source.rank_metrics.ndcg(k=[5, 10]).collect(engine=engine)
    mean = lodestar_polars.mean(per_query)
    read = bytes_read() - before
    assert read < 1.5 * size, f"read {read / size:.2f}x the file's bytes"
    expected = source.rank_metrics.ndcg_mean(k=[5, 10]).collect()
    assert_frame_equal(mean, expected, rel_tol=1e-12, abs_tol=1e-12)


@pytest.mark.skipif(not PROC_IO.exists(), reason="needs Linux's /proc/self/io to count the bytes read")
def test_the_two_plan_collect_all_reads_it_twice(parquet_file: Path) -> None:
    """What the README warns against: Polars 2.1's collect_all does not share a scan between two plans."""
    size = parquet_file.stat().st_size
    source = pl.scan_parquet(parquet_file)
    before = bytes_read()
    pl.collect_all([source.rank_metrics.ndcg(k=10), source.rank_metrics.ndcg_mean(k=10)])
    assert bytes_read() - before > 1.5 * size
