"""One local Spark session (`local[2]`) for the whole test run, shared by the Spark tests and doctests."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_session: list[SparkSession] = []


def spark_unavailable() -> str | None:
    """Why Spark cannot run here, or None."""
    if importlib.util.find_spec("pyspark") is None:
        return "pyspark is not installed (pip install 'lodestar-polars[spark]')"
    if importlib.util.find_spec("pandas") is None:
        return "pandas is not installed, and pyspark's mapInArrow requires it (pip install 'pyspark[sql]')"
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "no Java runtime for Spark (java is not on PATH and JAVA_HOME is unset)"
    return None


def spark_session() -> SparkSession:
    if not _session:
        from pyspark.sql import SparkSession

        os.environ["PYSPARK_PYTHON"] = sys.executable
        os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
        session = (
            SparkSession.builder.master("local[2]")
            .appName("lodestar-polars tests")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.sql.shuffle.partitions", "4")
            .config("spark.sql.execution.arrow.pyspark.enabled", "true")
            .getOrCreate()
        )
        session.sparkContext.setLogLevel("ERROR")
        _session.append(session)
    return _session[0]
