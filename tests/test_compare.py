"""`lodestar_polars.compare` against scipy.stats and statsmodels.

Oracles: `scipy.stats.ttest_rel`, `t.interval`, `permutation_test(permutation_type="samples")`, `wilcoxon`,
`bootstrap(method="percentile")`; `statsmodels.stats.multitest.multipletests`.  Deterministic quantities are
compared to 1e-10; Monte Carlo ones within a stated number of standard errors.
"""

from __future__ import annotations

import copy
import io
import math
import os
import pickle
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import lodestar_polars as lp
from lodestar_polars.compare import Comparison, Correction, Test

stats = pytest.importorskip("scipy.stats")
multitest = pytest.importorskip("statsmodels.stats.multitest")

SYSTEMS = ["bm25", "dense", "hybrid", "rerank"]
SHIFTS = {"bm25": 0.0, "dense": 0.05, "hybrid": 0.12, "rerank": 0.01}


def per_query_frame(n_queries: int, seed: int, *, decimals: int | None = 2) -> pl.DataFrame:
    """Four systems on the same queries; values rounded so that some deltas are 0 and some tie in magnitude."""
    rng = np.random.default_rng(seed)
    base = rng.random(n_queries)
    rows = []
    for name in SYSTEMS:
        values = np.clip(base + SHIFTS[name] + rng.normal(0.0, 0.15, n_queries), 0.0, 1.0)
        if decimals is not None:
            values = np.round(values, decimals)
        rows.append(pl.DataFrame({"model": name, "query": np.arange(n_queries), "ndcg@10": values}))
    frame = pl.concat(rows)
    # rows in a random order: the pairing is by query key, never by position
    return frame.sample(fraction=1.0, shuffle=True, seed=seed)


def values_of(frame: pl.DataFrame, system: str, metric: str = "ndcg@10") -> np.ndarray:
    return frame.filter(pl.col("model") == system).sort("query")[metric].to_numpy()


def row(table: pl.DataFrame, system: object, metric: str = "ndcg@10", column: str = "model") -> dict[str, object]:
    return table.filter((pl.col("metric") == metric) & (pl.col(column) == system)).row(0, named=True)


def assert_no_nan(table: pl.DataFrame) -> None:
    for name, dtype in table.schema.items():
        if dtype.is_float():
            assert not table[name].is_nan().any(), name


# --- the paired t-test: deterministic, to 1e-10 -------------------------------------------------------


@pytest.mark.parametrize("confidence", [0.95, 0.9])
def test_t_test_p_values_intervals_and_effect_sizes_equal_scipy(confidence: float) -> None:
    frame = per_query_frame(40, seed=1)
    table = lp.compare(frame, system="model", baseline="bm25", confidence=confidence)
    baseline = values_of(frame, "bm25")
    n = baseline.size
    for system in SYSTEMS:
        values = values_of(frame, system)
        got = row(table, system)
        assert got["queries"] == n
        assert got["mean"] == pytest.approx(values.mean(), abs=1e-12)
        low, high = stats.t.interval(confidence, n - 1, loc=values.mean(), scale=stats.sem(values))
        assert got["ci_low"] == pytest.approx(low, abs=1e-10)
        assert got["ci_high"] == pytest.approx(high, abs=1e-10)
        if system == "bm25":
            continue
        deltas = values - baseline
        reference = stats.ttest_rel(values, baseline)
        assert got["p_value"] == pytest.approx(reference.pvalue, abs=1e-10)
        assert got["delta"] == pytest.approx(deltas.mean(), abs=1e-12)
        low, high = stats.t.interval(confidence, n - 1, loc=deltas.mean(), scale=stats.sem(deltas))
        assert got["delta_ci_low"] == pytest.approx(low, abs=1e-10)
        assert got["delta_ci_high"] == pytest.approx(high, abs=1e-10)
        # paired Cohen's d = t / sqrt(n)
        assert got["effect_size"] == pytest.approx(reference.statistic / math.sqrt(n), abs=1e-10)
        assert (got["wins"], got["ties"], got["losses"]) == (
            int((deltas > 0).sum()),
            int((deltas == 0).sum()),
            int((deltas < 0).sum()),
        )
    assert_no_nan(table)


def test_wins_ties_losses_by_hand() -> None:
    # deltas of b against a: +0.3, 0, +0.2, -0.1 -> 2 wins, 1 tie, 1 loss (hand derivation)
    frame = pl.DataFrame(
        {"model": ["a"] * 4 + ["b"] * 4, "query": [1, 2, 3, 4] * 2, "m": [0.1, 0.5, 0.2, 0.4, 0.4, 0.5, 0.4, 0.3]}
    )
    got = row(lp.compare(frame, system="model", baseline="a"), "b", metric="m")
    assert (got["wins"], got["ties"], got["losses"]) == (2, 1, 1)


@pytest.mark.parametrize("method", ["holm", "bonferroni"])
@pytest.mark.parametrize("test", ["t", "wilcoxon"])
def test_corrections_equal_statsmodels_multipletests(method: Correction, test: Test) -> None:
    frame = per_query_frame(30, seed=2)
    table = lp.compare(frame, system="model", baseline="bm25", test=test, correction=method)
    compared = table.filter(pl.col("model") != "bm25")
    expected = multitest.multipletests(compared["p_value"].to_numpy(), method=method)[1]
    np.testing.assert_allclose(compared["p_adjusted"].to_numpy(), expected, rtol=0, atol=1e-12)
    # the raw p-values themselves are scipy's
    raw = table.filter(pl.col("model") == "hybrid")["p_value"][0]
    reference = (stats.ttest_rel if test == "t" else stats.wilcoxon)(
        values_of(frame, "hybrid"), values_of(frame, "bm25")
    ).pvalue
    assert raw == pytest.approx(reference, abs=1e-10)


def test_correction_none_leaves_p_values() -> None:
    table = lp.compare(per_query_frame(30, seed=2), system="model", baseline="bm25", correction=None)
    compared = table.filter(pl.col("model") != "bm25")
    assert compared["p_adjusted"].to_list() == compared["p_value"].to_list()


def test_holm_is_corrected_within_each_metric() -> None:
    frame = per_query_frame(30, seed=3).with_columns(other=pl.col("ndcg@10") ** 2)
    table = lp.compare(frame, system="model", baseline="bm25")
    for metric in ["ndcg@10", "other"]:
        compared = table.filter((pl.col("metric") == metric) & (pl.col("model") != "bm25"))
        assert compared.height == 3
        expected = multitest.multipletests(compared["p_value"].to_numpy(), method="holm")[1]
        np.testing.assert_allclose(compared["p_adjusted"].to_numpy(), expected, rtol=0, atol=1e-12)


# --- Wilcoxon: deterministic, to 1e-10 ----------------------------------------------------------------


@pytest.mark.parametrize("n_queries", [12, 80])  # scipy's exact distribution / normal approximation
def test_wilcoxon_p_values_equal_scipy(n_queries: int) -> None:
    frame = per_query_frame(n_queries, seed=4, decimals=None if n_queries == 12 else 1)
    table = lp.compare(frame, system="model", baseline="bm25", test="wilcoxon", seed=0)
    for system in SYSTEMS[1:]:
        expected = stats.wilcoxon(values_of(frame, system), values_of(frame, "bm25")).pvalue
        assert row(table, system)["p_value"] == pytest.approx(expected, abs=1e-10)


# --- Fisher's randomization test ----------------------------------------------------------------------


def mean_difference(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
    return np.mean(x - y, axis=axis)


@pytest.mark.parametrize("seed", [5, 6, 7])
def test_exact_permutation_p_values_equal_scipy(seed: int) -> None:
    # 2**10 = 1024 <= n_resamples: every sign vector is enumerated, as scipy does; rounded values make
    # null statistics tie with the observed one, which exercises the tie tolerance
    frame = per_query_frame(10, seed=seed, decimals=1)
    table = lp.compare(frame, system="model", baseline="bm25", test="permutation", n_resamples=1024, seed=0)
    baseline = values_of(frame, "bm25")
    for system in SYSTEMS[1:]:
        expected = stats.permutation_test(
            (values_of(frame, system), baseline),
            mean_difference,
            permutation_type="samples",
            n_resamples=np.inf,
            vectorized=True,
        ).pvalue
        assert row(table, system)["p_value"] == pytest.approx(expected, abs=1e-10)


def test_monte_carlo_permutation_p_value_within_four_standard_errors_of_exact() -> None:
    n, resamples = 16, 4000  # 2**16 > 4000: Monte Carlo
    rng = np.random.default_rng(8)
    baseline = rng.random(n)
    # deltas chosen so that the exact p-value is moderate (about 0.1-0.3), where the check has power
    system = baseline + rng.normal(0.04, 0.12, n)
    frame = pl.DataFrame({"model": ["a"] * n + ["b"] * n, "query": list(range(n)) * 2, "m": [*baseline, *system]})
    exact = stats.permutation_test(
        (system, baseline), mean_difference, permutation_type="samples", n_resamples=np.inf, vectorized=True
    ).pvalue
    assert 0.02 < exact < 0.9
    # p = 2 * min(one-sided), each one-sided a binomial proportion: SD(p) = sqrt(p (2 - p) / R);
    # the (b + 1) / (R + 1) count adds at most 2 / (R + 1)
    tolerance = 4 * math.sqrt(exact * (2 - exact) / resamples) + 2 / (resamples + 1)
    for seed in range(3):
        got = lp.compare(frame, system="model", baseline="a", test="permutation", n_resamples=resamples, seed=seed)
        assert row(got, "b", metric="m")["p_value"] == pytest.approx(exact, abs=tolerance)


# --- bootstrap intervals and the bootstrap test ------------------------------------------------------


def test_bootstrap_intervals_match_scipy_percentile_bootstrap() -> None:
    frame = per_query_frame(150, seed=9, decimals=None)
    resamples = 20_000
    table = lp.compare(frame, system="model", baseline="bm25", test="bootstrap", n_resamples=resamples, seed=1)
    baseline = values_of(frame, "bm25")
    for system in SYSTEMS:
        values = values_of(frame, system)
        samples = {"ci": values} if system == "bm25" else {"ci": values, "delta_ci": values - baseline}
        for prefix, sample in samples.items():
            reference = stats.bootstrap(
                (sample,), np.mean, method="percentile", n_resamples=resamples, rng=np.random.default_rng(2)
            )
            # Tolerance: the 2.5% quantile of R = 20,000 resamples of a near-normal bootstrap distribution
            # with standard error s has a Monte Carlo SD of sqrt(.025 * .975 / R) / phi(1.96) * s = 0.019 s;
            # the difference of two independent estimates 0.027 s; 0.15 s is more than 5 of those.
            tolerance = 0.15 * reference.standard_error
            got = row(table, system)
            assert got[f"{prefix}_low"] == pytest.approx(reference.confidence_interval.low, abs=tolerance)
            assert got[f"{prefix}_high"] == pytest.approx(reference.confidence_interval.high, abs=tolerance)


def test_bootstrap_p_value_within_four_standard_errors_of_scipys_bootstrap_distribution() -> None:
    rng = np.random.default_rng(10)
    n, resamples = 60, 20_000
    baseline = rng.random(n)
    system = baseline + rng.normal(0.035, 0.12, n)
    frame = pl.DataFrame({"model": ["a"] * n + ["b"] * n, "query": list(range(n)) * 2, "m": [*baseline, *system]})
    deltas = system - baseline
    observed = deltas.mean()
    distribution = stats.bootstrap(
        (deltas,), np.mean, method="percentile", n_resamples=resamples, rng=np.random.default_rng(3)
    ).bootstrap_distribution
    # the paired bootstrap test of the module docstring, from scipy's resampled means
    expected = (np.count_nonzero(np.abs(distribution - observed) >= abs(observed)) + 1) / (resamples + 1)
    assert 0.01 < expected < 0.5
    got = row(
        lp.compare(frame, system="model", baseline="a", test="bootstrap", n_resamples=resamples, seed=4), "b", "m"
    )
    # both are binomial proportions over R resamples: SD of the difference sqrt(2 p (1 - p) / R)
    assert got["p_value"] == pytest.approx(expected, abs=4 * math.sqrt(2 * expected * (1 - expected) / resamples))


@pytest.mark.parametrize("test", ["permutation", "bootstrap", "wilcoxon"])
def test_resampled_intervals_contain_the_observed_mean(test: Test) -> None:
    table = lp.compare(per_query_frame(50, seed=11), system="model", baseline="bm25", test=test, seed=0)
    assert (table["ci_low"] <= table["mean"]).all()
    assert (table["mean"] <= table["ci_high"]).all()
    compared = table.filter(pl.col("model") != "bm25")
    assert (compared["delta_ci_low"] <= compared["delta"]).all()
    assert (compared["delta"] <= compared["delta_ci_high"]).all()


# --- seeds ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("test", ["permutation", "bootstrap", "wilcoxon"])
def test_a_seed_reproduces_the_output_bit_for_bit(test: Test) -> None:
    frame = per_query_frame(200, seed=12).with_columns(other=pl.col("ndcg@10").sqrt())
    first = lp.compare(frame, system="model", test=test, n_resamples=3000, seed=42)
    again = lp.compare(frame.lazy(), system="model", test=test, n_resamples=3000, seed=42)
    assert_frame_equal(first, again, check_exact=True)
    other = lp.compare(frame, system="model", test=test, n_resamples=3000, seed=43)
    assert not first.equals(other)


# --- frames, keys, baselines, output shape -----------------------------------------------------------


def test_lazy_and_eager_input_give_the_same_table() -> None:
    frame = per_query_frame(25, seed=13)
    assert_frame_equal(
        lp.compare(frame, system="model", baseline="dense"), lp.compare(frame.lazy(), system="model", baseline="dense")
    )


def test_output_columns_order_and_baseline_row() -> None:
    frame = per_query_frame(25, seed=14).with_columns(other=1 - pl.col("ndcg@10"))
    table = lp.compare(frame, system="model", metrics=["other", "ndcg@10"], baseline="dense")
    assert table.columns == [
        "metric",
        "model",
        "queries",
        "mean",
        "ci_low",
        "ci_high",
        "delta",
        "delta_ci_low",
        "delta_ci_high",
        "p_value",
        "p_adjusted",
        "effect_size",
        "wins",
        "ties",
        "losses",
    ]
    assert table.schema["queries"] == pl.UInt32
    assert table.schema["wins"] == pl.UInt32
    assert table["metric"].to_list() == ["other"] * 4 + ["ndcg@10"] * 4
    for metric in ["other", "ndcg@10"]:
        means = table.filter(pl.col("metric") == metric)["mean"].to_list()
        assert means == sorted(means, reverse=True)
    base = row(table, "dense")
    comparison_columns = ["delta", "delta_ci_low", "delta_ci_high", "p_value", "p_adjusted", "effect_size"]
    assert all(base[name] is None for name in [*comparison_columns, "wins", "ties", "losses"])
    others = table.filter(pl.col("model") != "dense").select(comparison_columns)
    assert others.null_count().sum_horizontal().item() == 0
    assert_no_nan(table)


def test_system_dtype_and_name_are_kept() -> None:
    frame = per_query_frame(20, seed=15).with_columns(
        run=pl.col("model").replace_strict({name: i for i, name in enumerate(SYSTEMS)}, return_dtype=pl.Int16)
    )
    table = lp.compare(frame.drop("model"), system="run", baseline=0)
    assert table.schema["run"] == pl.Int16
    assert row(table, 0, column="run")["p_value"] is None


def test_default_baseline_is_the_lowest_mean_per_metric() -> None:
    frame = per_query_frame(30, seed=16).with_columns(reversed=1 - pl.col("ndcg@10"))
    table = lp.compare(frame, system="model")
    baselines = []
    for metric in ["ndcg@10", "reversed"]:
        part = table.filter(pl.col("metric") == metric)
        lowest = part.sort("mean")["model"][0]
        assert part.filter(pl.col("p_value").is_null())["model"].to_list() == [lowest]
        baselines.append(lowest)
    assert baselines[0] != baselines[1]


def test_metrics_none_takes_numeric_columns_but_keys_and_weight() -> None:
    frame = per_query_frame(20, seed=17).with_columns(
        other=pl.col("ndcg@10") / 2, traffic=pl.lit(2.0), label=pl.lit("x")
    )
    table = lp.compare(frame, system="model", weight="traffic")
    assert table["metric"].unique(maintain_order=True).to_list() == ["ndcg@10", "other"]


def test_composite_query_keys() -> None:
    frame = per_query_frame(24, seed=18).with_columns(
        topic=pl.col("query") // 6, subquery=(pl.col("query") % 6).cast(pl.String)
    )
    by_pair = lp.compare(frame.drop("query"), system="model", query=["topic", "subquery"], baseline="bm25")
    by_single = lp.compare(frame.drop("topic", "subquery"), system="model", baseline="bm25")
    assert_frame_equal(by_pair, by_single)


def test_drop_keeps_the_queries_every_system_has() -> None:
    frame = per_query_frame(30, seed=19)
    holes = frame.filter(~((pl.col("model") == "dense") & (pl.col("query") < 3)))
    holes = holes.filter(~((pl.col("model") == "rerank") & (pl.col("query") == 29)))
    table = lp.compare(holes, system="model", baseline="bm25", missing="drop")
    assert table["queries"].unique().to_list() == [26]
    kept = frame.filter(pl.col("query").is_between(3, 28))
    for system in SYSTEMS[1:]:
        expected = stats.ttest_rel(values_of(kept, system), values_of(kept, "bm25")).pvalue
        assert row(table, system)["p_value"] == pytest.approx(expected, abs=1e-10)


def test_drop_treats_null_values_as_missing_for_that_metric_only() -> None:
    frame = per_query_frame(20, seed=20).with_columns(other=pl.col("ndcg@10") + 0.5)
    frame = frame.with_columns(
        other=pl.when((pl.col("model") == "hybrid") & (pl.col("query") < 2)).then(None).otherwise(pl.col("other"))
    )
    table = lp.compare(frame, system="model", missing="drop")
    assert row(table, "dense")["queries"] == 20
    assert row(table, "dense", metric="other")["queries"] == 18


@pytest.mark.parametrize("test", ["t", "permutation", "bootstrap", "wilcoxon"])
def test_identical_systems_have_p_one_and_zero_delta(test: Test) -> None:
    frame = per_query_frame(15, seed=21)
    copy = frame.filter(pl.col("model") == "dense").with_columns(model=pl.lit("dense-copy"))
    table = lp.compare(pl.concat([frame, copy]), system="model", baseline="dense", test=test, seed=0)
    got = row(table, "dense-copy")
    assert got["p_value"] == 1.0
    assert (got["delta"], got["delta_ci_low"], got["delta_ci_high"], got["effect_size"]) == (0.0, 0.0, 0.0, 0.0)
    assert (got["wins"], got["ties"], got["losses"]) == (0, 15, 0)
    assert_no_nan(table)


@pytest.mark.parametrize("test", ["permutation", "bootstrap", "wilcoxon"])
def test_constant_nonzero_delta_without_t(test: Test) -> None:
    # every delta is +0.25 (dyadic, so exact in float64): no variance, yet a sign-flip, bootstrap or
    # signed-rank test is defined; 2**8 = 256 sign vectors, only the identity reaches the observed mean
    base = [0.0, 0.25, 0.5, 0.25, 0.5, 0.0, 0.25, 0.5]
    frame = pl.DataFrame(
        {"model": ["a"] * 8 + ["b"] * 8, "query": list(range(8)) * 2, "m": [*base, *(v + 0.25 for v in base)]}
    )
    got = row(lp.compare(frame, system="model", baseline="a", test=test, n_resamples=256, seed=0), "b", "m")
    assert got["effect_size"] == math.inf
    assert got["delta"] == 0.25
    if test == "permutation":
        assert got["p_value"] == pytest.approx(2 / 256, abs=1e-12)  # hand: 2 * (1 / 256)
    elif test == "bootstrap":
        assert got["p_value"] == pytest.approx(1 / 257, abs=1e-12)  # hand: (0 + 1) / (256 + 1)
    else:
        assert got["p_value"] == pytest.approx(stats.wilcoxon([0.25] * 8).pvalue, abs=1e-10)


# --- bad input ---------------------------------------------------------------------------------------


def two_systems(values_a: list[float | None], values_b: list[float | None]) -> pl.DataFrame:
    n = len(values_a)
    return pl.DataFrame(
        {
            "model": ["a"] * n + ["b"] * len(values_b),
            "query": [*range(n), *range(len(values_b))],
            "m": [*values_a, *values_b],
        }
    )


def test_constant_nonzero_delta_is_an_error_for_the_t_test() -> None:
    frame = two_systems([0.1, 0.2, 0.3], [0.35, 0.45, 0.55])
    with pytest.raises(ValueError, match=r"test='t' is undefined for system 'b' on metric 'm'.*standard deviation 0"):
        lp.compare(frame, system="model", baseline="a")


def test_a_system_with_one_query_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"metric 'm': 1 query has a value for every system.*at least 2"):
        lp.compare(two_systems([0.1], [0.2]), system="model")


def test_one_query_left_after_drop_is_an_error() -> None:
    frame = two_systems([0.1, 0.2, 0.3], [0.2])
    with pytest.raises(ValueError, match=r"1 query has a value for every system after missing='drop'"):
        lp.compare(frame, system="model", missing="drop")


def test_missing_queries_are_an_error_naming_the_counts() -> None:
    frame = per_query_frame(10, seed=22).filter(~((pl.col("model") == "dense") & (pl.col("query") < 2)))
    with pytest.raises(ValueError, match=r"2 of 10 queries are missing for some systems \(system 'dense' lacks 2\)"):
        lp.compare(frame, system="model")


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_nan_or_infinite_values_are_an_error(bad: float) -> None:
    frame = two_systems([0.1, 0.2, 0.3], [0.2, bad, 0.4])
    with pytest.raises(
        ValueError, match=r"metric column 'm' has 1 NaN or infinite value\(s\), the first for system 'b', query 1"
    ):
        lp.compare(frame, system="model", missing="drop")


def test_null_values_are_an_error_by_default() -> None:
    frame = two_systems([0.1, None, 0.3], [0.2, 0.3, 0.4])
    with pytest.raises(
        ValueError,
        match=r"metric column 'm' is null for 1 \(system, query\) row\(s\), the first for system 'a', query 1",
    ):
        lp.compare(frame, system="model")


def test_duplicate_system_query_rows_are_an_error() -> None:
    frame = pl.concat([two_systems([0.1, 0.2, 0.3], [0.2, 0.3, 0.5]), two_systems([0.1], [])])
    with pytest.raises(ValueError, match=r"1 \(system, query\) pair\(s\) have several rows: system 'a', query 0 has 2"):
        lp.compare(frame, system="model")


def test_unknown_baseline_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"baseline 'c' is not a value of column 'model' \(systems: 'a', 'b'\)"):
        lp.compare(two_systems([0.1, 0.2, 0.3], [0.2, 0.3, 0.5]), system="model", baseline="c")


def test_a_single_system_is_an_error() -> None:
    frame = pl.DataFrame({"model": ["a"] * 3, "query": [1, 2, 3], "m": [0.1, 0.2, 0.3]})
    with pytest.raises(ValueError, match=r"at least two systems in column 'model'; found 1: 'a'"):
        lp.compare(frame, system="model")


def test_null_keys_are_an_error() -> None:
    frame = two_systems([0.1, 0.2, 0.3], [0.2, 0.3, 0.5]).with_columns(
        query=pl.when(pl.col("query") == 1).then(None).otherwise(pl.col("query"))
    )
    with pytest.raises(ValueError, match=r"query column 'query' has 2 null value"):
        lp.compare(frame, system="model")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"system": "run"}, r"system column 'run' not found"),
        ({"query": "qid"}, r"query column 'qid' not found"),
        ({"metrics": ["ndcg"]}, r"metric column 'ndcg' not found"),
        ({"metrics": "label"}, r"metric column 'label' must be numeric, got String"),
        ({"metrics": []}, r"metrics must name at least one column"),
        ({"metrics": ["query"]}, r"metric column 'query' is also a key column"),
        ({"weight": "w"}, r"weight column 'w' not found"),
        ({"test": "z"}, r"test must be one of \['t', 'permutation', 'bootstrap', 'wilcoxon'\], got 'z'"),
        ({"confidence": 95}, r"confidence must be a number strictly between 0 and 1, got 95"),
        ({"confidence": 1.0}, r"confidence must be a number strictly between 0 and 1"),
        ({"correction": "fdr"}, r"correction must be 'holm', 'bonferroni' or None, got 'fdr'"),
        ({"n_resamples": 0}, r"n_resamples must be a positive integer, got 0"),
        ({"n_resamples": 10.5}, r"n_resamples must be a positive integer"),
        ({"seed": -1}, r"seed must be a non-negative integer or None, got -1"),
        ({"missing": "zero"}, r"missing must be 'error' or 'drop', got 'zero'"),
    ],
)
def test_bad_arguments_are_errors(arguments: dict[str, Any], message: str) -> None:
    frame = two_systems([0.1, 0.2, 0.3], [0.2, 0.3, 0.5]).with_columns(label=pl.lit("x"))
    options: dict[str, Any] = {"system": "model", **arguments}
    with pytest.raises(ValueError, match=message):
        lp.compare(frame, **options)


def test_an_empty_frame_is_an_error() -> None:
    frame = two_systems([0.1, 0.2], [0.3, 0.4]).clear()
    with pytest.raises(ValueError, match=r"the per-query frame has no rows"):
        lp.compare(frame.lazy(), system="model")


def test_no_numeric_metric_column_is_an_error() -> None:
    frame = pl.DataFrame({"model": ["a", "b"], "query": [1, 1], "label": ["x", "y"]})
    with pytest.raises(ValueError, match=r"no metric column"):
        lp.compare(frame, system="model")


def test_missing_scipy_names_the_stats_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "scipy.stats", None)
    frame = two_systems([0.1, 0.2, 0.3], [0.2, 0.3, 0.5])
    with pytest.raises(ImportError, match=r'pip install "lodestar-polars\[stats\]"'):
        lp.compare(frame, system="model")
    # the resampling tests need numpy only
    assert lp.compare(frame, system="model", test="bootstrap", n_resamples=100, seed=0).height == 2


@pytest.mark.parametrize("test", ["t", "permutation", "bootstrap", "wilcoxon"])
def test_same_rankings_in_another_row_order_are_ties(test: Test) -> None:
    """Two systems that rank every query's documents alike, their rows in different orders: the plan sums each
    query's rows in whatever order they arrive, so their values differ in the last bits (asserted below);
    the comparison counts them as equal, as it does identical values."""
    rng = np.random.default_rng(5)
    rows = 4000
    run = pl.DataFrame(
        {
            "query": rng.integers(0, 400, rows),
            "doc": np.arange(rows),
            "relevance": rng.integers(0, 4, rows),
            "score": rng.normal(size=rows).round(1),
        }
    )
    both = pl.concat(
        [
            run.with_columns(model=pl.lit("a")),
            run.sample(fraction=1.0, shuffle=True, seed=3).with_columns(model=pl.lit("b")),
        ]
    )
    per_query = both.rank_metrics.ndcg(k=10, by="model")
    a, b = (per_query.filter(pl.col("model") == m).sort("query")["ndcg@10"].to_numpy() for m in ("a", "b"))
    noise = np.abs(a - b)
    assert noise.max() > 0.0  # the case this test is about
    assert noise.max() < 1e-14
    table = lp.compare(per_query, system="model", baseline="a", test=test, seed=0)
    got = row(table, "b")
    assert got["p_value"] == 1.0
    assert (got["delta"], got["effect_size"]) == (0.0, 0.0)
    assert (got["wins"], got["ties"], got["losses"]) == (0, len(a), 0)


# --- the Comparison it returns: printed whole, its options recorded ----------------------------------------


def four_query_comparison() -> pl.DataFrame:
    """The docstring's example: a = (.2, .4, .5, .3), b = (.5, .6, .5, .7), deltas (.3, .2, 0, .4)."""
    per_query = pl.DataFrame(
        {
            "model": ["a"] * 4 + ["b"] * 4,
            "query": [1, 2, 3, 4] * 2,
            "ndcg@10": [0.2, 0.4, 0.5, 0.3, 0.5, 0.6, 0.5, 0.7],
        }
    )
    return lp.compare(per_query, system="model", baseline="a", test="t", correction="bonferroni")


@pytest.fixture
def default_display(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Polars' default display settings, with no limit set by the environment."""
    for variable in ("POLARS_FMT_MAX_COLS", "POLARS_FMT_MAX_ROWS", "POLARS_TABLE_WIDTH"):
        monkeypatch.delenv(variable, raising=False)
    with pl.Config(restore_defaults=True) as config:
        yield config


def test_a_comparison_prints_every_column(default_display: Any) -> None:
    # by hand, with t = t_{0.975, 3} = 3.182446: a's mean 0.35, sd sqrt(0.05 / 3) = 0.129099, half-width
    # t * sd / 2 = 0.205426; b's mean 0.575, sd sqrt(0.0275 / 3) = 0.095743, half-width 0.152348; the deltas'
    # mean 0.225, sd sqrt(0.0875 / 3) = 0.170783, half-width 0.271753, effect size 0.225 / 0.170783 = 1.317465;
    # T = 0.225 / (0.170783 / 2) = 2.634935 on 3 degrees of freedom, p = 0.077994 (one system: Bonferroni
    # leaves it); wins 3, ties 1 (query 3), losses 0
    expected = """\
shape: (2, 15)
┌─────────┬───────┬─────────┬───────┬──────────┬──────────┬───────┬──────────────┬───────────────┬──────────┬────────────┬─────────────┬──────┬──────┬────────┐
│ metric  ┆ model ┆ queries ┆ mean  ┆ ci_low   ┆ ci_high  ┆ delta ┆ delta_ci_low ┆ delta_ci_high ┆ p_value  ┆ p_adjusted ┆ effect_size ┆ wins ┆ ties ┆ losses │
│ ---     ┆ ---   ┆ ---     ┆ ---   ┆ ---      ┆ ---      ┆ ---   ┆ ---          ┆ ---           ┆ ---      ┆ ---        ┆ ---         ┆ ---  ┆ ---  ┆ ---    │
│ str     ┆ str   ┆ u32     ┆ f64   ┆ f64      ┆ f64      ┆ f64   ┆ f64          ┆ f64           ┆ f64      ┆ f64        ┆ f64         ┆ u32  ┆ u32  ┆ u32    │
╞═════════╪═══════╪═════════╪═══════╪══════════╪══════════╪═══════╪══════════════╪═══════════════╪══════════╪════════════╪═════════════╪══════╪══════╪════════╡
│ ndcg@10 ┆ b     ┆ 4       ┆ 0.575 ┆ 0.422652 ┆ 0.727348 ┆ 0.225 ┆ -0.046753    ┆ 0.496753      ┆ 0.077994 ┆ 0.077994   ┆ 1.317465    ┆ 3    ┆ 1    ┆ 0      │
│ ndcg@10 ┆ a     ┆ 4       ┆ 0.35  ┆ 0.144574 ┆ 0.555426 ┆ null  ┆ null         ┆ null          ┆ null     ┆ null       ┆ null        ┆ null ┆ null ┆ null   │
└─────────┴───────┴─────────┴───────┴──────────┴──────────┴───────┴──────────────┴───────────────┴──────────┴────────────┴─────────────┴──────┴──────┴────────┘"""  # noqa: E501
    table = four_query_comparison()
    assert isinstance(table, pl.DataFrame)
    assert str(table) == expected
    assert repr(table) == expected
    # what a plain frame of the same data shows: some columns only
    assert "┆ …" in str(pl.DataFrame(table))


def printed_rows(table: pl.DataFrame) -> int:
    lines = str(table).splitlines()
    start = next(index for index, line in enumerate(lines) if line.startswith("╞"))
    return sum(line.startswith("│") for line in lines[start:])


def test_a_comparison_prints_every_row_and_keeps_the_users_limits(default_display: Any) -> None:
    frame = per_query_frame(12, seed=21)
    metrics = [f"m{index}" for index in range(3)]
    table = lp.compare(frame.with_columns(pl.col("ndcg@10").alias(name) for name in metrics), system="model")
    assert table.height == 16  # 4 metrics x 4 systems: more than Polars' 8 printed rows and 10 HTML rows
    assert "…" not in str(table)
    assert printed_rows(table) == 16
    html = table._repr_html_()
    body = html.partition("<tbody>")[2]
    assert body.count("<tr>") == 16
    assert body.count("<td>") == 16 * 15
    assert "&hellip;" not in html and "…" not in html
    # limits the user set are the user's
    default_display.set_tbl_cols(4)
    default_display.set_tbl_rows(3)
    header = str(table).splitlines()[2]
    assert [cell.strip() for cell in header.strip("│").split("┆")] == ["metric", "model", "…", "ties", "losses"]
    assert printed_rows(table) == 4  # 3 and the "…" row
    # and the settings are back as they were
    assert "POLARS_FMT_MAX_COLS" in os.environ and os.environ["POLARS_FMT_MAX_COLS"] == "4"
    default_display.set_tbl_cols(None)
    default_display.set_tbl_rows(None)
    str(table)
    assert "POLARS_FMT_MAX_COLS" not in os.environ and "POLARS_TABLE_WIDTH" not in os.environ


def test_a_comparison_records_its_options() -> None:
    frame = per_query_frame(12, seed=22)
    table = lp.compare(
        frame,
        system="model",
        baseline="dense",
        test="permutation",
        correction=None,
        confidence=0.9,
        n_resamples=99,
        seed=3,
    )
    assert (table.test, table.correction, table.baseline) == ("permutation", None, "dense")
    assert (table.confidence, table.n_resamples, table.seed) == (0.9, 99, 3)
    default = lp.compare(frame, system="model")
    assert (default.test, default.correction, default.baseline, default.seed) == ("t", "holm", None, None)


KEEP_ROWS = {
    "filter": lambda t: t.filter(pl.col("model") != "bm25"),
    "sort": lambda t: t.sort("mean"),
    "head": lambda t: t.head(2),
    "tail": lambda t: t.tail(2),
    "slice": lambda t: t.slice(1, 2),
    "limit": lambda t: t.limit(1),
    "clone": lambda t: t.clone(),
    "clear": lambda t: t.clear(),
    "clear(2)": lambda t: t.clear(2),
    "rows of t[...]": lambda t: t[1:3],
    "copy.copy": lambda t: copy.copy(t),
    "copy.deepcopy": lambda t: copy.deepcopy(t),
    "pickle": lambda t: pickle.loads(pickle.dumps(t)),
}
PLAIN = {
    "select": lambda t: t.select("metric", "model", "mean"),
    "with_columns": lambda t: t.with_columns(pl.col("mean") * 2),
    "drop": lambda t: t.drop("wins"),
    "rename": lambda t: t.rename({"wins": "won"}),
    "columns of t[...]": lambda t: t[:, :3],
    "join": lambda t: t.join(t, on=["metric", "model"]),
    "pl.concat": lambda t: pl.concat([t, t]),
    "lazy": lambda t: t.lazy().collect(),
    "group_by": lambda t: t.group_by("model").agg(pl.len()),
    "unique": lambda t: t.unique(),
    "sample": lambda t: t.sample(2, seed=0),
    "transpose": lambda t: t.transpose(),
    "fill_null": lambda t: t.fill_null(0),
    "cast": lambda t: t.cast({"wins": pl.Int64}),
    "Comparison(data)": lambda t: type(t)({"a": [1, 2]}),
    "deserialize": lambda t: type(t).deserialize(io.BytesIO(t.serialize())),
}


@pytest.mark.parametrize("derive", list(KEEP_ROWS.values()), ids=list(KEEP_ROWS))
def test_frames_with_its_columns_and_some_of_its_rows_keep_the_record(derive: Callable[[Any], Any]) -> None:
    table = lp.compare(per_query_frame(12, seed=23), system="model", baseline="bm25", test="wilcoxon")
    derived = derive(table)
    assert isinstance(derived, Comparison)
    assert derived.schema == table.schema
    assert (derived.test, derived.correction, derived.baseline) == ("wilcoxon", "holm", "bm25")
    assert str(derived).startswith(f"shape: ({derived.height}, 15)")
    assert "…" not in str(derived) and "…" not in derived._repr_html_()


@pytest.mark.parametrize("derive", list(PLAIN.values()), ids=list(PLAIN))
def test_other_frames_made_from_it_are_plain_dataframes(derive: Callable[[Any], Any]) -> None:
    table = lp.compare(per_query_frame(12, seed=23), system="model", baseline="bm25", test="wilcoxon")
    derived = derive(table)
    assert type(derived) is pl.DataFrame
    assert str(derived).startswith("shape: (")
    assert derived._repr_html_().startswith("<div>")


# -- measures whose summary is not the mean: compare reports the summary evaluate_mean forms ---------------------


def two_systems_with_judgments(n_queries: int = 30, seed: int = 7) -> tuple[dict[str, dict], dict[str, dict]]:
    """Two TREC runs over the same judged queries (pytrec_eval's dicts), each query retrieving 3..8 documents,
    some queries with no relevant document retrieved (AP 0: the geometric mean's floor)."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    runs: dict[str, dict[str, dict[str, float]]] = {"a": {}, "b": {}}
    for q in range(n_queries):
        query = f"q{q}"
        qrels[query] = {f"d{d}": int(rng.integers(0, 3)) for d in range(10)}
        qrels[query]["d0"] = 1  # every query has a relevant document
        for system in runs:
            docs = rng.choice(10, size=int(rng.integers(3, 9)), replace=False)
            runs[system][query] = {f"d{d}": float(rng.random()) for d in docs}
    return runs, qrels


def per_query_of(runs: dict[str, dict], qrels: dict[str, dict], measures: list[str]) -> pl.DataFrame:
    frame = pl.DataFrame(
        [
            {"model": system, "query": query, "doc": doc, "score": score}
            for system, run in runs.items()
            for query, docs in run.items()
            for doc, score in docs.items()
        ]
    )
    judgments = pl.DataFrame(
        [{"query": q, "doc": d, "relevance": level} for q, docs in qrels.items() for d, level in docs.items()]
    )
    return frame.rank_metrics.evaluate(measures, by="model", doc="doc", ties="doc", qrels=judgments)


def test_a_geometric_mean_measure_is_compared_on_its_logs_and_reported_as_its_geometric_mean() -> None:
    """gm_map: the mean is trec_eval's geometric mean exp(mean(log(max(AP, 1e-5)))), the test is on those logs.
    Oracle: pytrec_eval's per-query gm_map (trec_eval's log(max(AP, 1e-5))), scipy on the logs."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    runs, qrels = two_systems_with_judgments()
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"gm_map"})
    logs = {
        system: np.array([values["gm_map"] for _, values in sorted(evaluator.evaluate(run).items())])
        for system, run in runs.items()
    }
    assert (logs["a"] == math.log(1e-5)).any() or (logs["b"] == math.log(1e-5)).any()  # the floor is reached
    table = lp.compare(per_query_of(runs, qrels, ["gm_map"]), system="model", baseline="a", metrics="gm_map")
    gm = {system: math.exp(values.mean()) for system, values in logs.items()}
    for system in ("a", "b"):
        got = row(table, system, "gm_map")
        interval = stats.t.interval(0.95, len(logs[system]) - 1, loc=logs[system].mean(), scale=stats.sem(logs[system]))
        assert got["mean"] == pytest.approx(gm[system], rel=1e-10)
        assert (got["ci_low"], got["ci_high"]) == pytest.approx(tuple(math.exp(x) for x in interval), rel=1e-10)
    compared = row(table, "b", "gm_map")
    log_delta = logs["b"] - logs["a"]
    assert compared["delta"] == pytest.approx(gm["b"] - gm["a"], rel=1e-10)
    assert compared["p_value"] == pytest.approx(stats.ttest_rel(logs["b"], logs["a"]).pvalue, rel=1e-10)
    assert compared["effect_size"] == pytest.approx(log_delta.mean() / log_delta.std(ddof=1), rel=1e-10)
    ratio = stats.t.interval(0.95, len(log_delta) - 1, loc=log_delta.mean(), scale=stats.sem(log_delta))
    expected = tuple(gm["a"] * (math.exp(x) - 1.0) for x in ratio)
    assert (compared["delta_ci_low"], compared["delta_ci_high"]) == pytest.approx(expected, rel=1e-10)
    assert compared["delta_ci_low"] <= compared["delta"] <= compared["delta_ci_high"]
    assert (compared["wins"], compared["ties"], compared["losses"]) == (
        int((log_delta > 0).sum()),
        int((log_delta == 0).sum()),
        int((log_delta < 0).sum()),
    )
    # the report prints the geometric mean, as trec_eval's gm_map line
    assert f"| a | {gm['a']:.4f}" in lp.report(table).replace("**", "")


def test_a_count_measure_is_reported_as_its_sum_over_the_queries() -> None:
    """num_ret and num_rel_ret: trec_eval's `all` line is the sum over queries; the test is the same as on the
    mean (a sum over the same n queries is n times it).  Oracle: pytrec_eval's per-query counts, scipy."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    runs, qrels = two_systems_with_judgments(seed=11)
    counts = {
        (system, name): np.array(
            [v[name] for _, v in sorted(pytrec_eval.RelevanceEvaluator(qrels, {name}).evaluate(run).items())]
        )
        for system, run in runs.items()
        for name in ("num_ret", "num_rel_ret")
    }
    table = lp.compare(
        per_query_of(runs, qrels, ["num_ret", "num_rel_ret"]), system="model", baseline="a", test="permutation", seed=1
    )
    for metric, theirs in (("num_ret", "num_ret"), ("num_rel_ret", "num_rel_ret")):
        a, b = counts[("a", theirs)], counts[("b", theirs)]
        assert row(table, "a", metric)["mean"] == pytest.approx(a.sum(), rel=1e-12)
        compared = row(table, "b", metric)
        assert compared["mean"] == pytest.approx(b.sum(), rel=1e-12)
        assert compared["delta"] == pytest.approx(b.sum() - a.sum(), rel=1e-12, abs=1e-9)
        assert compared["delta_ci_low"] <= compared["delta"] <= compared["delta_ci_high"]
        assert compared["ci_high"] - compared["ci_low"] > 1.0  # an interval of the sum, not of the mean
    # t on the sum: the same p-value and effect size as on the per-query values
    t_table = lp.compare(per_query_of(runs, qrels, ["num_ret"]), system="model", baseline="a")
    a, b = counts[("a", "num_ret")], counts[("b", "num_ret")]
    compared = row(t_table, "b", "num_ret")
    assert compared["p_value"] == pytest.approx(stats.ttest_rel(b, a).pvalue, rel=1e-10)
    interval = stats.t.interval(0.95, len(a) - 1, loc=(b - a).mean(), scale=stats.sem(b - a))
    assert (compared["delta_ci_low"], compared["delta_ci_high"]) == pytest.approx(
        tuple(x * len(a) for x in interval), rel=1e-10
    )


def test_the_default_baseline_of_a_geometric_mean_measure_is_the_lowest_geometric_mean() -> None:
    """Two systems whose arithmetic and geometric means order them differently: a has the lower arithmetic mean
    (0.5 against 0.55), b the lower geometric mean (a value 0 floored at 1e-5: 0.00316 against 0.5)."""
    frame = pl.DataFrame(
        {
            "model": ["a", "a", "b", "b"],
            "query": [1, 2, 1, 2],
            "gm_map": [0.5, 0.5, 0.0, 1.0],
            "ap": [0.5, 0.5, 0.0, 1.0],
        }
    )
    table = lp.compare(frame, system="model", test="permutation", seed=0)
    assert row(table, "b", "gm_map")["p_value"] is None  # b is gm_map's baseline...
    assert row(table, "b", "gm_map")["mean"] == pytest.approx(math.sqrt(1e-5), rel=1e-12)
    assert row(table, "a", "ap")["p_value"] is None  # ...and a ap's
