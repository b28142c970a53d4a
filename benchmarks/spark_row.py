"""The Spark row of the benchmark table: NDCG@k on Apache Spark in local mode, through `lodestar_polars.spark`.

The data (queries x docs rows: int64 query, int64 relevance 0-4, float64 score) is written to Parquet first,
so the timed part is what a user runs: read the Parquet file, repartition by query, run the Polars core once
per partition, and aggregate the weighted mean to the driver.  Session start-up and data generation are not
timed; one untimed warm-up run on a small file starts the Python workers.

    python benchmarks/spark_row.py                      # 10M rows: 100k queries x 100 docs, k=10
    python benchmarks/spark_row.py --queries 10000      # 1M rows
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from lodestar_polars import spark as lodestar_spark

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def write_judgments(path: Path, queries: int, docs: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    rows = queries * docs
    pl.DataFrame(
        {
            "query": np.repeat(np.arange(queries, dtype=np.int64), docs),
            "relevance": rng.integers(0, 5, rows),
            "score": rng.random(rows),
        }
    ).write_parquet(path)


def spark_session(cores: int | None, driver_memory: str) -> SparkSession:
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    master = f"local[{cores}]" if cores else "local[*]"
    session = (
        SparkSession.builder.master(master)
        .appName("lodestar-polars benchmark")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.memory", driver_memory)
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    return session


def time_spark(
    queries: int = 100_000, docs: int = 100, k: int = 10, cores: int | None = None, driver_memory: str = "4g"
) -> tuple[float, float]:
    """Seconds for `ndcg_mean(k=k)` on queries x docs rows in Spark local mode, and the mean it returned."""
    session = spark_session(cores, driver_memory)
    with tempfile.TemporaryDirectory() as folder:
        warm_up, data = Path(folder) / "warm_up.parquet", Path(folder) / "judgments.parquet"
        write_judgments(warm_up, queries=100, docs=10)
        write_judgments(data, queries=queries, docs=docs)
        lodestar_spark.ndcg_mean(session.read.parquet(str(warm_up)), k=k)
        start = time.perf_counter()
        mean = lodestar_spark.ndcg_mean(session.read.parquet(str(data)), k=k)
        seconds = time.perf_counter() - start
    return seconds, float(mean.item(0, 0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--cores", type=int, default=None, help="local[N]; all cores by default")
    parser.add_argument("--driver-memory", default="4g")
    arguments = parser.parse_args()
    seconds, mean = time_spark(arguments.queries, arguments.docs, arguments.k, arguments.cores, arguments.driver_memory)
    rows = arguments.queries * arguments.docs
    print(f"spark local: {rows:,} rows ({arguments.queries:,} queries x {arguments.docs}), ndcg@{arguments.k}")
    print(f"mean ndcg@{arguments.k} = {mean:.6f}")
    print(f"seconds: {seconds:.2f}")


if __name__ == "__main__":
    main()
