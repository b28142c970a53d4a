"""LightGBM's and XGBoost's own NDCG@k on given scores: the native anchors of run.py (benchmark helper).

Each library is made to evaluate the scores it is handed, with the code that fills its `evals_result`:

- LightGBM: a `Dataset` (one constant feature, label = relevance, `group` = query lengths, `init_score` =
  score), then a `Booster` with no tree and `is_provide_training_metric`; `Booster.eval_train()` is what
  `lgb.record_evaluation` records, here on init_score + 0 trees = the scores (doubles).  Creating the Booster
  runs the metric's `Init`, which computes every query's ideal DCG, so it is timed as part of the evaluation.
- XGBoost: a `DMatrix` (one constant feature, label, `group`, `base_margin` = score), then a `Booster` with no
  tree; `Booster.eval_set` returns the line `xgb.train` parses into `evals_result`.  With a base margin the
  prediction is the margin, stored as float32.  XGBoost caches its per-query ranking data on the DMatrix (a
  second `eval_set` on the same DMatrix took half the time of the first), so every timed evaluation gets a
  fresh DMatrix and Booster: the first evaluation is the one timed.

Both compute `ndcg(gain="exponential", ties="input", no_relevant=1.0)` of this package (tests/test_lightgbm.py
and tests/test_xgboost.py): gain 2**label - 1, a stable sort on the score (the earlier row first among ties), 1.0
for a query without a relevant document.  Rows must be grouped by query (the callers sort shuffled rows first).
`verify()` (run by run.py before timing, or `python benchmarks/native_eval.py`) checks both helpers against the
`evals_result` of real training runs that leave the scores unchanged, on tied scores and ragged queries.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

THREADS = os.cpu_count() or 1


def _constant_feature(rows: int) -> np.ndarray:
    return np.zeros((rows, 1), dtype=np.float32)


def lightgbm_prepare(relevance: np.ndarray, score: np.ndarray, lengths: np.ndarray) -> Any:
    """The constructed LightGBM Dataset (binning of the constant feature included)."""
    import lightgbm as lgb

    dataset = lgb.Dataset(
        _constant_feature(relevance.size), label=relevance, group=lengths, init_score=score,
        params={"verbose": -1, "num_threads": THREADS}, free_raw_data=True,
    )  # fmt: skip
    return dataset.construct()


def lightgbm_evaluate(dataset: Any, ks: list[int]) -> list[float]:
    """LightGBM's ndcg@k for each k, in order."""
    import lightgbm as lgb

    params = {
        "objective": "regression", "metric": "ndcg", "eval_at": ks, "num_threads": THREADS, "verbose": -1,
        "is_provide_training_metric": True,
    }  # fmt: skip
    booster = lgb.Booster(params, train_set=dataset)
    values = {result[1]: float(result[2]) for result in booster.eval_train()}
    return [values[f"ndcg@{k}"] for k in ks]


def xgboost_prepare(relevance: np.ndarray, score: np.ndarray, lengths: np.ndarray) -> Any:
    """The XGBoost DMatrix with the scores as base margin."""
    import xgboost as xgb

    return xgb.DMatrix(
        _constant_feature(relevance.size), label=relevance, base_margin=score, group=lengths, nthread=THREADS
    )


def xgboost_evaluate(matrix: Any, ks: list[int]) -> list[float]:
    """XGBoost's ndcg@k for each k, in order (parsed from the `eval_set` line, as `xgb.train` does)."""
    import xgboost as xgb

    params = {
        "objective": "rank:ndcg", "eval_metric": [f"ndcg@{k}" for k in ks], "nthread": THREADS,
        "base_score": 0.5,  # given, so no intercept is fitted; the base margin replaces it anyway
    }  # fmt: skip
    booster = xgb.Booster(params, [matrix])
    line = booster.eval_set([(matrix, "data")])
    values = dict(item.removeprefix("data-").split(":") for item in line.split("\t")[1:])
    return [float(values[f"ndcg@{k}"]) for k in ks]


def verify(seed: int = 3) -> float:
    """Largest difference between these helpers and the `evals_result` of a real training run (one round,
    learning rate 1e-30 for LightGBM, which refuses 0, and 0 for XGBoost: the scores stay the given ones) on
    500 ragged queries with many tied scores.  Scores avoid 0 so that a 1e-30 tree output cannot move a tie."""
    import lightgbm as lgb
    import xgboost as xgb

    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 60, 500)
    rows = int(lengths.sum())
    relevance = rng.integers(0, 5, rows).astype(np.int8)
    score = rng.integers(3, 9, rows) / 3.0
    features = rng.random((rows, 3))
    ks = [1, 3, 10]
    recorded: dict[str, dict[str, list[float]]] = {}
    train_set = lgb.Dataset(features, relevance, group=lengths, init_score=score, params={"verbose": -1})
    lgb.train(
        {"objective": "lambdarank", "metric": "ndcg", "eval_at": ks, "learning_rate": 1e-30, "verbose": -1},
        train_set, num_boost_round=1, valid_sets=[train_set], valid_names=["v"],
        callbacks=[lgb.record_evaluation(recorded)],
    )  # fmt: skip
    theirs = [recorded["v"][f"ndcg@{k}"][-1] for k in ks]
    ours = lightgbm_evaluate(lightgbm_prepare(relevance, score, lengths), ks)
    worst = max(abs(a - b) for a, b in zip(ours, theirs, strict=True))
    recorded = {}
    matrix = xgb.DMatrix(features, relevance, base_margin=score, group=lengths)
    xgb.train(
        {"objective": "rank:ndcg", "eval_metric": [f"ndcg@{k}" for k in ks], "eta": 0.0}, matrix,
        num_boost_round=1, evals=[(matrix, "v")], evals_result=recorded, verbose_eval=False,
    )  # fmt: skip
    theirs = [recorded["v"][f"ndcg@{k}"][-1] for k in ks]
    ours = xgboost_evaluate(xgboost_prepare(relevance, score, lengths), ks)
    return max(worst, *(abs(a - b) for a, b in zip(ours, theirs, strict=True)))


if __name__ == "__main__":
    difference = verify()
    print(f"largest |helper - evals_result of a training run| = {difference:.3g}")
    assert difference < 1e-12
