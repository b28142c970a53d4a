"""torchmetrics' `retrieval_normalized_dcg` / `RetrievalNormalizedDCG` against this package.

torchmetrics ports scikit-learn's tie-averaged NDCG (linear gain) and computes it in float32, so it equals
`ndcg(ties="average")` to float32 precision (about 3e-7 here), on float32-representable scores (it casts
scores to float32, where distinct float64 scores may tie).  The class's `empty_target_action` for a query
without a relevant document maps to `no_relevant`: "neg" -> 0.0, "pos" -> 1.0, "skip" -> None (left out of
the mean), "error" -> "error".

Runs only where torchmetrics is installed: torch is too heavy for the CI's test extra.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest

import lodestar_polars  # noqa: F401  (registers .rank_metrics)

torch = pytest.importorskip("torch", reason="torch is too heavy for CI: install torch and torchmetrics to run")
torchmetrics = pytest.importorskip("torchmetrics", reason="torchmetrics is not in the test extra (needs torch)")
from torchmetrics.functional.retrieval import retrieval_normalized_dcg  # noqa: E402
from torchmetrics.retrieval import RetrievalNormalizedDCG  # noqa: E402

FLOAT32 = 3e-7  # torchmetrics' float32 arithmetic against the package's float64
CUTOFFS: list[int | None] = [None, 1, 3, 5, 10]
NO_RELEVANT = {"neg": 0.0, "pos": 1.0, "skip": None}


def random_frame(seed: int, *, tied: bool) -> pl.DataFrame:
    """Queries of 1-30 documents, labels 0-3 (some queries all 0), float32-exact scores, tied or not."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 31, 25)
    query = np.repeat(np.arange(len(sizes)), sizes)
    relevance = rng.integers(0, 4, len(query))
    relevance[np.isin(query, rng.choice(len(sizes), 5, replace=False))] = 0
    if tied:
        score = rng.choice(np.array([-1.0, 0.0, 0.25, 0.5, 2.0]), len(query))
    else:
        score = rng.normal(size=len(query)).astype(np.float32).astype(np.float64)
    return pl.DataFrame({"query": query, "relevance": relevance, "score": score})


def per_query_torchmetrics(frame: pl.DataFrame, k: int | None) -> list[float]:
    values = []
    for group in frame.partition_by("query", maintain_order=True):
        preds = torch.tensor(group["score"].to_numpy(), dtype=torch.float32)
        target = torch.tensor(group["relevance"].to_numpy(), dtype=torch.long)
        values.append(float(retrieval_normalized_dcg(preds, target, top_k=k)))
    return values


@pytest.mark.parametrize("tied", [False, True], ids=["distinct", "tied"])
@pytest.mark.parametrize("seed", range(4))
def test_functional_ndcg_is_ties_average(seed: int, tied: bool) -> None:
    frame = random_frame(seed, tied=tied)
    ours = frame.rank_metrics.ndcg(ties="average", k=CUTOFFS, no_relevant=0.0)
    for k in CUTOFFS:
        name = "ndcg" if k is None else f"ndcg@{k}"
        expected = per_query_torchmetrics(frame, k)
        np.testing.assert_allclose(ours[name].to_numpy(), expected, rtol=0, atol=FLOAT32)


def test_tie_order_input_would_not_match_on_ties() -> None:
    frame = random_frame(0, tied=True)
    expected = per_query_torchmetrics(frame, 3)
    ours = frame.rank_metrics.ndcg(ties="input", k=3, no_relevant=0.0)["ndcg@3"].to_numpy()
    assert np.abs(ours - expected).max() > 1e-3


def class_mean(frame: pl.DataFrame, k: int | None, action: str) -> float:
    metric = RetrievalNormalizedDCG(empty_target_action=action, top_k=k)
    preds = torch.tensor(frame["score"].to_numpy(), dtype=torch.float32)
    target = torch.tensor(frame["relevance"].to_numpy(), dtype=torch.long)
    indexes = torch.tensor(frame["query"].to_numpy(), dtype=torch.long)
    return float(metric(preds, target, indexes=indexes))


@pytest.mark.parametrize("action", ["neg", "pos", "skip"])
@pytest.mark.parametrize("tied", [False, True], ids=["distinct", "tied"])
def test_empty_target_action_is_no_relevant(action: str, tied: bool) -> None:
    frame = random_frame(11, tied=tied)
    for k in CUTOFFS:
        means: Any = frame.rank_metrics.ndcg_mean(ties="average", k=k, no_relevant=NO_RELEVANT[action])
        ours = means.item(0, "ndcg" if k is None else f"ndcg@{k}")
        assert ours == pytest.approx(class_mean(frame, k, action), rel=0, abs=FLOAT32), (action, k)


def test_empty_target_action_error_is_no_relevant_error() -> None:
    frame = random_frame(11, tied=False)
    with pytest.raises(ValueError, match="no positive target"):
        class_mean(frame, None, "error")
    with pytest.raises(ValueError, match="relevant"):
        frame.rank_metrics.ndcg_mean(ties="average", no_relevant="error")


def test_the_actions_differ_on_these_queries() -> None:
    frame = random_frame(11, tied=False)
    assert len({round(class_mean(frame, None, action), 6) for action in NO_RELEVANT}) == 3
