"""Doctest support for the package's docstrings: a Spark session for `lodestar_polars.spark`'s examples.

The session starts only when a Spark example runs; without pyspark or Java those examples skip with the
reason, unless LODESTAR_REQUIRE_SPARK=1 (CI), which keeps them so that they fail instead.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from tests.spark_support import spark_session, spark_unavailable


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
