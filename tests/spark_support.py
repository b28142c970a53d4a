"""One local Spark session (`local[2]`) per test process, shared by the Spark tests and doctests (conftest.py sends
them all to one pytest-xdist worker, so a run starts one)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from typing import TYPE_CHECKING, NoReturn

import pytest

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


def skip_or_fail(reason: str) -> NoReturn:
    """Skip a Spark test with the reason; fail it instead under LODESTAR_REQUIRE_SPARK=1 (CI)."""
    if os.environ.get("LODESTAR_REQUIRE_SPARK") == "1":
        pytest.fail(f"LODESTAR_REQUIRE_SPARK=1 but the Spark tests cannot run: {reason}")
    pytest.skip(reason)


def required_spark_session() -> SparkSession:
    """The shared session, or a skip (a failure in CI) saying why Spark cannot run."""
    reason = spark_unavailable()
    if reason is not None:
        skip_or_fail(reason)
    return spark_session()
