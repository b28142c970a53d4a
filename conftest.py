"""Doctest support for the package's docstrings: a Spark session for `lodestar_polars.spark`'s examples.

The session starts only when a Spark example runs; without pyspark or Java those examples skip with the
reason, unless LODESTAR_REQUIRE_SPARK=1 (CI), which keeps them so that they fail instead.

The suite runs in parallel (pytest-xdist, `-n logical --dist loadfile` in pyproject.toml): each test file goes
whole to one worker process, so a file's module fixtures are made once. Every test that uses the shared Spark
session (tests/spark_support.py: one per process) goes to one worker too, whatever its file, so that the run
starts one Java process for them, not one per worker. The trec_eval binary (tests/trec_eval_binary.py) is
built by each worker that needs it, in the worker's own temporary folder.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from tests.spark_support import spark_session, spark_unavailable

# the tests that use the shared Spark session: the Spark adapter's, its doctests, and one invariant
SPARK_TESTS = ("tests/test_spark.py", "lodestar_polars/spark.py", "tests/test_invariants.py::test_spark_equals_polars")


class _SparkOnFirstUse:
    """Stands for a SparkSession in the doctest namespace; starts the shared test session when first used."""

    def __getattr__(self, name: str) -> Any:
        return getattr(spark_session(), name)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = spark_unavailable()
    if reason is None or os.environ.get("LODESTAR_REQUIRE_SPARK") == "1":
        return
    for item in items:
        if item.nodeid.startswith("lodestar_polars/spark.py"):
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(autouse=True)
def _spark_in_doctests(doctest_namespace: dict[str, object]) -> None:
    doctest_namespace["spark"] = _SparkOnFirstUse()


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under `--dist loadfile`: a file per worker, and every Spark test on the same worker."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class OneSparkWorker(LoadFileScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return "spark" if nodeid.startswith(SPARK_TESTS) else str(super()._split_scope(nodeid))

    return OneSparkWorker(config, log)
