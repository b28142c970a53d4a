from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("LODESTAR_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data (or $LODESTAR_SHARED_DATA); tests that need it skip cleanly where it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared test data not found at {SHARED_DATA} (set LODESTAR_SHARED_DATA to its folder)")
    return SHARED_DATA


@pytest.fixture(autouse=True)
def _doctest_namespace(doctest_namespace: dict[str, object]) -> None:
    doctest_namespace["pl"] = pl
