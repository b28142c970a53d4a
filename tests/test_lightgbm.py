"""LightGBM's `ndcg@k` is `ndcg_mean(gain="exponential", ties="input", no_relevant=1.0)`.

LightGBM ranks each query with a stable sort on the score (the earlier row first among ties), gains
2**label - 1, and scores a query without a relevant document 1.0.  The oracle is the metric LightGBM
records while training, compared with this package's number on the model's predictions.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from lodestar_polars import rank_metrics

lgb = pytest.importorskip("lightgbm")

CUTOFFS = [1, 3, 5, 10]
PARAMS: dict[str, Any] = {
    "objective": "lambdarank",
    "metric": "ndcg",
    "eval_at": CUTOFFS,
    "num_threads": 1,
    "deterministic": True,
    "seed": 1,
    "verbose": -1,
}
SMALL_TREES = {"num_leaves": 7, "min_data_in_leaf": 5}


@dataclass(frozen=True)
class Ranking:
    features: np.ndarray
    labels: np.ndarray
    group_sizes: np.ndarray

    @property
    def query(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.group_sizes)), self.group_sizes)

    def frame(self, score: np.ndarray, weight: np.ndarray | None = None) -> pl.DataFrame:
        columns = {"query": self.query, "relevance": self.labels, "score": score}
        return pl.DataFrame(columns if weight is None else {**columns, "weight": weight})


def make_ranking(rng: np.random.Generator, n_queries: int) -> Ranking:
    """Queries of 5-40 documents, labels 0-4 (a sixth of the queries all 0), features noisy copies of the label;
    one feature rounded to integers so that shallow models tie."""
    sizes = rng.integers(5, 41, n_queries)
    query = np.repeat(np.arange(n_queries), sizes)
    labels = rng.integers(0, 5, len(query))
    labels[np.isin(query, rng.choice(n_queries, n_queries // 6, replace=False))] = 0
    features = labels[:, None] + rng.normal(0.0, 1.5, (len(query), 6))
    features[:, 3] = np.round(features[:, 3])
    return Ranking(features, labels, sizes)


@pytest.fixture(scope="module")
def rankings() -> tuple[Ranking, Ranking]:
    rng = np.random.default_rng(7)
    return make_ranking(rng, 60), make_ranking(rng, 40)


def train(
    train_set: Ranking, valid_set: Ranking, rounds: int, valid_weight: np.ndarray | None = None
) -> tuple[Any, dict[str, float]]:
    """The booster and LightGBM's ndcg@k on the valid set after the last round."""
    train_data = lgb.Dataset(train_set.features, train_set.labels, group=train_set.group_sizes)
    valid_data = lgb.Dataset(
        valid_set.features, valid_set.labels, group=valid_set.group_sizes, weight=valid_weight, reference=train_data
    )
    recorded: dict[str, dict[str, list[float]]] = {}
    booster = lgb.train(
        {**PARAMS, **SMALL_TREES},
        train_data,
        num_boost_round=rounds,
        valid_sets=[valid_data],
        valid_names=["valid"],
        callbacks=[lgb.record_evaluation(recorded)],
    )
    return booster, {name: values[-1] for name, values in recorded["valid"].items()}


def lightgbm_ndcg(frame: pl.DataFrame, ties: str = "input", weight: str | None = None) -> dict[str, float]:
    means = rank_metrics(frame).ndcg_mean(
        k=CUTOFFS,
        gain="exponential",
        ties=ties,  # type: ignore[arg-type]  # a Ties literal, parametrised
        no_relevant=1.0,
        weight=weight,
    )
    return {f"ndcg@{k}": means.item(0, f"ndcg@{k}") for k in CUTOFFS}


def tied_score_groups(frame: pl.DataFrame) -> int:
    return frame.group_by("query", "score").len().filter(pl.col("len") > 1).height


def assert_close(ours: dict[str, float], theirs: dict[str, float], tolerance: float = 1e-9) -> None:
    assert ours.keys() == theirs.keys()
    for name in ours:
        assert ours[name] == pytest.approx(theirs[name], rel=tolerance, abs=tolerance), name


def test_the_valid_set_has_queries_without_relevant_documents(rankings: tuple[Ranking, Ranking]) -> None:
    valid = rankings[1]
    zero_queries = valid.frame(np.zeros(len(valid.labels))).group_by("query").agg(pl.col("relevance").max() == 0)
    assert zero_queries["relevance"].sum() >= 3


def test_matches_lightgbm_ndcg_at_k(rankings: tuple[Ranking, Ranking]) -> None:
    train_set, valid_set = rankings
    booster, theirs = train(train_set, valid_set, rounds=10)
    assert_close(lightgbm_ndcg(valid_set.frame(booster.predict(valid_set.features))), theirs)


def test_matches_lightgbm_when_predictions_tie(rankings: tuple[Ranking, Ranking]) -> None:
    train_set, valid_set = rankings
    booster, theirs = train(train_set, valid_set, rounds=1)
    frame = valid_set.frame(booster.predict(valid_set.features))
    assert tied_score_groups(frame) > 50
    assert_close(lightgbm_ndcg(frame), theirs)


def test_tie_averaging_would_not_match_lightgbm(rankings: tuple[Ranking, Ranking]) -> None:
    train_set, valid_set = rankings
    booster, theirs = train(train_set, valid_set, rounds=1)
    frame = valid_set.frame(booster.predict(valid_set.features))
    for ties in ("average", "reverse"):
        ours = lightgbm_ndcg(frame, ties=ties)
        assert max(abs(ours[name] - theirs[name]) for name in ours) > 1e-3, ties


def test_weighted_mean_matches_lightgbm_when_every_query_has_a_relevant_document(
    rankings: tuple[Ranking, Ranking],
) -> None:
    train_set, valid_set = rankings
    relevant = np.flatnonzero(
        valid_set.frame(valid_set.labels)
        .group_by("query", maintain_order=True)
        .agg(pl.col("relevance").max() > 0)["relevance"]
        .to_numpy()
    )
    keep = np.isin(valid_set.query, relevant)
    subset = Ranking(valid_set.features[keep], valid_set.labels[keep], valid_set.group_sizes[relevant])
    query_weight = np.random.default_rng(3).integers(1, 12, len(relevant)) / 4  # exact in LightGBM's float32
    row_weight = np.repeat(query_weight, subset.group_sizes)
    booster, theirs = train(train_set, subset, rounds=5, valid_weight=row_weight)
    frame = subset.frame(booster.predict(subset.features), weight=row_weight)
    assert_close(lightgbm_ndcg(frame, weight="weight"), theirs)


def test_weighted_mean_differs_from_lightgbm_on_queries_without_relevant_documents(
    rankings: tuple[Ranking, Ranking],
) -> None:
    # LightGBM adds an unweighted 1.0 for such a query but divides by the sum of all query weights;
    # here every query, all-zero or not, enters sum(weight * ndcg) / sum(weight)
    train_set, valid_set = rankings
    query_weight = np.random.default_rng(3).integers(1, 12, len(valid_set.group_sizes)) / 4
    row_weight = np.repeat(query_weight, valid_set.group_sizes)
    booster, theirs = train(train_set, valid_set, rounds=5, valid_weight=row_weight)
    frame = valid_set.frame(booster.predict(valid_set.features), weight=row_weight)
    ours = lightgbm_ndcg(frame, weight="weight")
    assert all(abs(ours[name] - theirs[name]) > 1e-3 for name in ours)
    per_query = rank_metrics(frame).ndcg(k=CUTOFFS, gain="exponential", ties="input", no_relevant=None, weight="weight")
    for name in ours:
        lightgbm_formula = per_query.select(
            (pl.col(name) * pl.col("weight")).fill_null(1.0).sum() / pl.col("weight").sum()
        ).item()
        assert lightgbm_formula == pytest.approx(theirs[name], rel=1e-9, abs=1e-9)


# --- LightGBM's lambdarank example (../shared/data/lightgbm, see its NOTICE.md) ---------------------------


@pytest.mark.parametrize("rounds", [3, 20])
def test_lightgbm_example_predictions_match_lightgbm_ndcg(shared_data: Path, rounds: int) -> None:
    folder = shared_data / "lightgbm"
    frame = pl.read_parquet(folder / f"rank_test_pred_{rounds}.parquet").sort("query", "doc")
    train_data = lgb.Dataset(str(folder / "rank.train"), params={"verbose": -1})
    test_data = lgb.Dataset(str(folder / "rank.test"), reference=train_data, params={"verbose": -1})
    recorded: dict[str, dict[str, list[float]]] = {}
    booster = lgb.train(
        PARAMS,
        train_data,
        num_boost_round=rounds,
        valid_sets=[test_data],
        valid_names=["test"],
        callbacks=[lgb.record_evaluation(recorded)],
    )
    # the parquet file holds this very model's predictions, in file order
    np.testing.assert_array_equal(booster.predict(str(folder / "rank.test")), frame["score"].to_numpy())
    theirs = {name: values[-1] for name, values in recorded["test"].items()}
    assert_close(lightgbm_ndcg(frame), theirs)
    averaged = lightgbm_ndcg(frame, ties="average")
    if rounds == 3:  # 75 tied groups: the order of ties changes ndcg@3, @5 and @10
        assert tied_score_groups(frame) == 75
        assert max(abs(averaged[name] - theirs[name]) for name in averaged) > 1e-4
    else:  # the 4 tied groups of the 20-round model do not move any cut-off
        assert_close(averaged, theirs)
