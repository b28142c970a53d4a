"""XGBoost's `ndcg@k` / `ndcg@k-` / bare `ndcg` against this package, from XGBoost's own `evals_result`.

Found by running XGBoost 3.2 (and checked here on every run):

- `ndcg@k` is `ndcg_mean(k=k, gain="exponential", ties="input", no_relevant=1.0)` on the model's predictions
  in row order (a stable sort: the earlier row first among tied predictions); `ndcg@k-` is the same with
  `no_relevant=0.0`.
- The bare `ndcg` (and `ndcg-`) is cut at 32 positions: it equals `k=32`, not `k=None`.
- With query weights, `ndcg@k-` is the weighted mean sum(w * ndcg) / sum(w).  `ndcg@k` is not: a query
  without a relevant document adds an unweighted 1.0 to the weight-normalised sum (LightGBM's quirk), and
  when that pushes the mean above 1.0 (beyond a 1e-6 rounding allowance) XGBoost raises
  "Invalid output score" instead of returning a number.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from lodestar_polars import rank_metrics

xgb = pytest.importorskip("xgboost")

METRICS = ["ndcg@3", "ndcg@3-", "ndcg@10", "ndcg@10-", "ndcg", "ndcg-"]
PARAMS: dict[str, Any] = {"objective": "rank:ndcg", "eval_metric": METRICS, "nthread": 1, "max_depth": 2, "seed": 1}
BARE_CUT = 32  # XGBoost's default truncation for a metric named without @k
EXACT = 1e-12


@dataclass(frozen=True)
class Ranking:
    features: np.ndarray
    labels: np.ndarray
    group_sizes: np.ndarray

    @property
    def query(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.group_sizes)), self.group_sizes)

    def matrix(self, query_weight: np.ndarray | None = None) -> Any:
        matrix = xgb.DMatrix(self.features, self.labels)
        matrix.set_group(self.group_sizes)
        if query_weight is not None:
            matrix.set_weight(query_weight)  # one weight per query group for ranking
        return matrix

    def frame(self, score: np.ndarray, query_weight: np.ndarray | None = None) -> pl.DataFrame:
        columns = {"query": self.query, "relevance": self.labels, "score": score.astype(np.float64)}
        if query_weight is not None:
            columns["weight"] = np.repeat(query_weight, self.group_sizes)
        return pl.DataFrame(columns)

    def zero_queries(self) -> int:
        return int((np.bincount(self.query, weights=self.labels) == 0).sum())


def make_ranking(rng: np.random.Generator, n_queries: int) -> Ranking:
    """Queries of 5-60 documents (many longer than 32), labels 0-4, a sixth of the queries all 0; features
    are noisy copies of the label, one rounded to integers so that shallow models tie."""
    sizes = rng.integers(5, 61, n_queries)
    query = np.repeat(np.arange(n_queries), sizes)
    labels = rng.integers(0, 5, len(query))
    labels[np.isin(query, rng.choice(n_queries, n_queries // 6, replace=False))] = 0
    features = labels[:, None] + rng.normal(0.0, 1.5, (len(query), 6))
    features[:, 3] = np.round(features[:, 3])
    return Ranking(features, labels, sizes)


@pytest.fixture(scope="module")
def generated() -> tuple[Ranking, Ranking]:
    rng = np.random.default_rng(7)
    return make_ranking(rng, 60), make_ranking(rng, 40)


def load_lightgbm_example(folder: Path, name: str) -> Ranking:
    from sklearn.datasets import load_svmlight_file

    features, labels = load_svmlight_file(str(folder / name), n_features=300)
    sizes = np.loadtxt(folder / f"{name}.query", dtype=np.int64)
    return Ranking(features.toarray(), labels.astype(np.int64), sizes)


@pytest.fixture(scope="module")
def lightgbm_example(shared_data: Path) -> tuple[Ranking, Ranking]:
    folder = shared_data / "lightgbm"
    return load_lightgbm_example(folder, "rank.train"), load_lightgbm_example(folder, "rank.test")


def train(
    train_set: Ranking, valid_set: Ranking, rounds: int, query_weight: np.ndarray | None = None
) -> tuple[np.ndarray, dict[str, float]]:
    """The model's predictions on the valid set and XGBoost's own metrics there after the last round."""
    recorded: dict[str, dict[str, list[float]]] = {}
    valid = valid_set.matrix(query_weight)
    booster = xgb.train(
        PARAMS,
        train_set.matrix(),
        num_boost_round=rounds,
        evals=[(valid, "valid")],
        evals_result=recorded,
        verbose_eval=False,
    )
    return booster.predict(valid), {name: values[-1] for name, values in recorded["valid"].items()}


def cut_and_no_relevant(metric: str) -> tuple[int, float]:
    """`ndcg@k-` -> (k, 0.0); bare `ndcg` -> (32, 1.0)."""
    name = metric.rstrip("-")
    k = int(name.split("@")[1]) if "@" in name else BARE_CUT
    return k, 0.0 if metric.endswith("-") else 1.0


def ours_ndcg_mean(
    frame: pl.DataFrame, metric: str, *, ties: str = "input", weight: str | None = None, k: Any = "xgb"
) -> float:
    cut, no_relevant = cut_and_no_relevant(metric)
    cut = cut if k == "xgb" else k
    means = rank_metrics(frame).ndcg_mean(
        k=cut,
        gain="exponential",
        ties=ties,  # type: ignore[arg-type]  # a Ties literal, parametrised
        no_relevant=no_relevant,
        weight=weight,
    )
    return float(means.item(0, "ndcg" if cut is None else f"ndcg@{cut}"))


def tied_score_groups(frame: pl.DataFrame) -> int:
    return frame.group_by("query", "score").len().filter(pl.col("len") > 1).height


def quirk_formula(frame: pl.DataFrame, metric: str) -> float:
    """XGBoost's (and LightGBM's) weighted mean, written out: sum over queries with a relevant document of
    w * ndcg, plus 1.0 (0.0 for `-`) per query without one, unweighted, divided by the sum of all weights."""
    k, no_relevant = cut_and_no_relevant(metric)
    per_query = rank_metrics(frame).ndcg(k=k, gain="exponential", ties="input", no_relevant=None, weight="weight")
    column = pl.col(f"ndcg@{k}")
    return float(
        per_query.select((column * pl.col("weight")).fill_null(no_relevant).sum() / pl.col("weight").sum()).item()
    )


# --- generated data: ties, queries longer than 32, queries without a relevant document --------------------


def test_the_generated_data_has_what_the_tests_need(generated: tuple[Ranking, Ranking]) -> None:
    valid = generated[1]
    assert valid.zero_queries() >= 3
    assert (valid.group_sizes > BARE_CUT).sum() >= 10


@pytest.mark.parametrize("rounds", [1, 5])
def test_matches_xgboost_unweighted(generated: tuple[Ranking, Ranking], rounds: int) -> None:
    train_set, valid_set = generated
    predictions, theirs = train(train_set, valid_set, rounds)
    frame = valid_set.frame(predictions)
    assert tied_score_groups(frame) > 50  # shallow trees tie: the order of ties matters
    for metric in METRICS:
        assert ours_ndcg_mean(frame, metric) == pytest.approx(theirs[metric], rel=EXACT, abs=EXACT), metric


def test_bare_ndcg_is_cut_at_32_not_the_whole_list(generated: tuple[Ranking, Ranking]) -> None:
    train_set, valid_set = generated
    predictions, theirs = train(train_set, valid_set, 3)
    frame = valid_set.frame(predictions)
    for metric in ("ndcg", "ndcg-"):
        assert ours_ndcg_mean(frame, metric, k=BARE_CUT) == pytest.approx(theirs[metric], rel=EXACT, abs=EXACT)
        assert abs(ours_ndcg_mean(frame, metric, k=None) - theirs[metric]) > 1e-4


def test_no_relevant_document_scores_one_or_zero_with_the_minus(generated: tuple[Ranking, Ranking]) -> None:
    train_set, valid_set = generated
    predictions, theirs = train(train_set, valid_set, 3)
    frame = valid_set.frame(predictions)
    # the plain and "-" metrics differ by exactly (queries without a relevant document) / (queries)
    expected_gap = valid_set.zero_queries() / len(valid_set.group_sizes)
    assert theirs["ndcg@3"] - theirs["ndcg@3-"] == pytest.approx(expected_gap, rel=1e-9)
    for metric in ("ndcg@3", "ndcg@3-"):
        assert ours_ndcg_mean(frame, metric) == pytest.approx(theirs[metric], rel=EXACT, abs=EXACT)


def test_tie_averaging_would_not_match_xgboost(generated: tuple[Ranking, Ranking]) -> None:
    train_set, valid_set = generated
    predictions, theirs = train(train_set, valid_set, 1)
    frame = valid_set.frame(predictions)
    for ties in ("average", "reverse"):
        assert max(abs(ours_ndcg_mean(frame, metric, ties=ties) - theirs[metric]) for metric in METRICS) > 1e-3, ties


def query_weights(valid_set: Ranking, scale: float) -> np.ndarray:
    return np.random.default_rng(3).integers(1, 12, len(valid_set.group_sizes)) / 4 * scale


@pytest.mark.parametrize("scale", [1.0, 4.0])
def test_weighted_minus_metrics_are_the_weighted_mean(generated: tuple[Ranking, Ranking], scale: float) -> None:
    train_set, valid_set = generated
    weight = query_weights(valid_set, scale)
    predictions, theirs = train(train_set, valid_set, 3, query_weight=weight)
    frame = valid_set.frame(predictions, weight)
    for metric in ("ndcg@3-", "ndcg@10-", "ndcg-"):
        assert ours_ndcg_mean(frame, metric, weight="weight") == pytest.approx(theirs[metric], rel=EXACT, abs=EXACT), (
            metric
        )


@pytest.mark.parametrize("scale", [1.0, 4.0])
def test_weighted_mean_has_lightgbms_quirk(generated: tuple[Ranking, Ranking], scale: float) -> None:
    train_set, valid_set = generated
    weight = query_weights(valid_set, scale)
    predictions, theirs = train(train_set, valid_set, 3, query_weight=weight)
    frame = valid_set.frame(predictions, weight)
    for metric in ("ndcg@3", "ndcg@10", "ndcg"):
        assert quirk_formula(frame, metric) == pytest.approx(theirs[metric], rel=EXACT, abs=EXACT), metric
        # so the package's weighted mean (every query weighted) does not match it
        assert abs(ours_ndcg_mean(frame, metric, weight="weight") - theirs[metric]) > 1e-3, metric


def test_a_weighted_mean_above_one_is_refused_by_xgboost(generated: tuple[Ranking, Ranking]) -> None:
    # weights well below 1: the unweighted 1.0 of each query without a relevant document outweighs the rest
    train_set, valid_set = generated
    weight = query_weights(valid_set, 0.1)
    predictions, _ = train(train_set, valid_set, 3)  # the same model, evaluated below with the small weights
    assert quirk_formula(valid_set.frame(predictions, weight), "ndcg@3") > 1.0 + 1e-3
    with pytest.raises(xgb.core.XGBoostError, match="Invalid output score"):
        train(train_set, valid_set, 3, query_weight=weight)


# --- LightGBM's lambdarank example (../shared/data/lightgbm): every query has a relevant document ---------


@pytest.mark.parametrize("rounds", [1, 10])
def test_lightgbm_example_matches_xgboost(lightgbm_example: tuple[Ranking, Ranking], rounds: int) -> None:
    train_set, test_set = lightgbm_example
    predictions, theirs = train(train_set, test_set, rounds)
    frame = test_set.frame(predictions)
    assert tied_score_groups(frame) > 50
    for metric in METRICS:
        assert ours_ndcg_mean(frame, metric) == pytest.approx(theirs[metric], rel=EXACT, abs=EXACT), metric


def test_lightgbm_example_weighted_matches_xgboost(lightgbm_example: tuple[Ranking, Ranking]) -> None:
    # no query without a relevant document, so the quirk does not show: the plain weighted mean matches
    train_set, test_set = lightgbm_example
    assert test_set.zero_queries() == 0
    weight = query_weights(test_set, 1.0)
    predictions, theirs = train(train_set, test_set, 10, query_weight=weight)
    frame = test_set.frame(predictions, weight)
    for metric in METRICS:
        assert ours_ndcg_mean(frame, metric, weight="weight") == pytest.approx(theirs[metric], rel=EXACT, abs=EXACT), (
            metric
        )
        assert quirk_formula(frame, metric) == pytest.approx(theirs[metric], rel=EXACT, abs=EXACT), metric
