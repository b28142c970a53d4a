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
