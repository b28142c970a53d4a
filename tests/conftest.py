from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import polars as pl
import pytest

import lodestar_polars  # noqa: F401  (registers .rank_metrics)

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("LODESTAR_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))

EngineName = Literal["eager", "lazy-in-memory", "lazy-streaming"]
ENGINES: tuple[EngineName, ...] = ("eager", "lazy-in-memory", "lazy-streaming")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data (or $LODESTAR_SHARED_DATA); tests that need it skip cleanly where it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared test data not found at {SHARED_DATA} (set LODESTAR_SHARED_DATA to its folder)")
    return SHARED_DATA


@pytest.fixture(autouse=True)
def _doctest_namespace(doctest_namespace: dict[str, object]) -> None:
    doctest_namespace["pl"] = pl


class Engine:
    """Runs a `.rank_metrics` method by name on a DataFrame the way one engine does, and returns a DataFrame.

    - "eager": the DataFrame namespace (`frame.rank_metrics.ndcg(...)`);
    - "lazy-in-memory": the LazyFrame namespace, collected with Polars' in-memory engine;
    - "lazy-streaming": the LazyFrame namespace, collected with the streaming engine.

    A `qrels` frame is handed over as given (a DataFrame), so the lazy engines also see eager judgments, as
    a user mixing the two would.  Narwhals' `constructor` fixture is the model: a test written once against
    `engine(frame, "ndcg", k=3)` documents the same behaviour for all three.
    """

    def __init__(self, name: EngineName) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Engine({self.name!r})"

    @property
    def lazy(self) -> bool:
        return self.name != "eager"

    def method(self, frame: pl.DataFrame, method: str) -> Callable[..., Any]:
        """The bound method of the namespace this engine uses (the lazy ones return a LazyFrame)."""
        namespace = frame.lazy().rank_metrics if self.lazy else frame.rank_metrics
        bound: Callable[..., Any] = getattr(namespace, method)
        return bound

    def collect(self, result: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
        if self.name == "eager":
            assert isinstance(result, pl.DataFrame), f"the DataFrame namespace returned {type(result).__name__}"
            return result
        assert isinstance(result, pl.LazyFrame), f"the LazyFrame namespace returned {type(result).__name__}"
        return result.collect(engine="in-memory" if self.name == "lazy-in-memory" else "streaming")

    def __call__(self, frame: pl.DataFrame, method: str, /, *args: Any, **kwargs: Any) -> pl.DataFrame:
        """`frame.rank_metrics.<method>(*args, **kwargs)` through this engine, as a DataFrame.

        Errors raised when the method is called (options, schema) and when the plan is collected (data
        checks) both surface here, so `pytest.raises` around the call covers both."""
        return self.collect(self.method(frame, method)(*args, **kwargs))


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> Engine:
    """Each test using it runs once per engine: eager, lazy in-memory, lazy streaming."""
    return Engine(request.param)


from tests.trec_eval_binary import trec_eval  # noqa: E402,F401  (the real trec_eval binary, as a fixture)
