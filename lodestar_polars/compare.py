"""Which differences are real: paired comparison of systems over queries.

`compare` reads a per-query frame (one row per (system, query), one column per metric, as `ndcg(by=...)`
produces) and, for every metric, compares each system with a baseline over the queries they share.

Notation: for one metric, n paired queries, x_s the per-query values of system s, b the baseline and
d = x_s - x_b the per-query deltas (computed in float64).

- **Means and intervals.** `mean` is the unweighted mean of x_s over the n queries (every query counts
  once, whatever weight column the frame carries).  With `test="t"` the intervals are Student-t intervals,
  `mean +- t_{(1+c)/2, n-1} * sd / sqrt(n)` (sd with ddof=1), as `scipy.stats.t.interval` gives them;
  `delta_ci_*` is the same on d.  With any other test they are percentile bootstrap intervals: R resamples
  of the n queries with replacement (the same query draws for every system, so the pairing is kept), the
  resampled means of x_s and of d, and their (1-c)/2 and (1+c)/2 quantiles (numpy's linear interpolation),
  as `scipy.stats.bootstrap(..., method="percentile")` defines them.
- **Tests** (two-sided, H0: the mean delta is 0):
  - `"t"`: paired Student's t, T = mean(d) / (sd(d) / sqrt(n)) on n - 1 degrees of freedom, the p-value of
    `scipy.stats.ttest_rel`.  Undefined when d is the same non-zero value on every query (sd 0): an error.
  - `"permutation"`: Fisher's paired randomization test.  Under H0 each delta's sign is a fair coin; the
    statistic is mean(d).  When 2**n <= R every one of the 2**n sign vectors is enumerated (exact);
    otherwise R random sign vectors give the Monte Carlo estimate with counts b+1 over R+1.  The two-sided
    p-value is the one `scipy.stats.permutation_test(..., permutation_type="samples")` returns: twice the
    smaller one-sided p-value, capped at 1, with its relative tolerance of 100 machine epsilons for null
    statistics equal to the observed one.
  - `"bootstrap"`: the paired bootstrap test of the mean delta (Efron & Tibshirani 1993, section 16.4;
    Smucker, Allan & Carterette, CIKM 2007): the bootstrap distribution of mean(d*) - mean(d) stands for
    the distribution of the mean delta under H0, and p = (#{|mean(d*) - mean(d)| >= |mean(d)|} + 1) / (R + 1),
    from the same R resamples as the intervals.
  - `"wilcoxon"`: `scipy.stats.wilcoxon` on d with its defaults (zero deltas dropped, exact distribution for
    small samples without ties, normal approximation otherwise).
  When every delta is 0 the p-value is 1.0 for every test.
- **Correction.** Within each metric, over the systems compared with the baseline: Holm's step-down or
  Bonferroni, as `statsmodels.stats.multitest.multipletests` computes them; `correction=None` copies the
  p-value.
- **Effect size.** Paired Cohen's d (d_z): mean(d) / sd(d) with ddof=1; 0.0 when every delta is 0 and
  +-inf when d is a non-zero constant.
- **wins / ties / losses**: the number of queries where x_s > x_b, x_s == x_b, x_s < x_b.
- **Measures not summarised by their mean.**  A metric column named as `evaluate` names a measure takes that
  measure's summary (`Definition.summary`, the one `evaluate_mean` and `lodestar_polars.mean` form; any other
  column, the mean).  A count (num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret: trec_eval's `all` line
  is their sum) is compared as above, then `mean`, its interval, `delta` and its interval are multiplied by n:
  sums over the n queries (the tests, effect size and counts of a sum are those of the mean).  A geometric
  mean (gm_map, gm_bpref: exp of the mean of log(max(x, 1e-5)), trec_eval's floor) is compared on
  y = log(max(x, 1e-5)): every test, the effect size and the wins / ties / losses are those of y (a test of
  the ratio of the geometric means; two values below the floor tie); `mean` and its interval are exp of
  those of y, the geometric mean and its interval; `delta` is the difference of the geometric means,
  GM_b * (r - 1) for their ratio r = exp(mean(y_s - y_b)), and its interval the same of r's interval.
- **Equal values.** x_s and x_b within 1e-12 of each other (relative to the larger, or absolute below 1) count
  as equal: their delta is 0 for every test, interval and count above.  Two systems that rank a query's
  documents alike get values that differ in the last bits when their rows came in different orders (the
  plan sums each query's rows in the order they arrive).

Resampling is numpy, vectorised: the resamples are drawn in chunks of rows, as a count matrix (how often
each query is drawn) or a 0/1 sign-flip matrix, multiplied with the matrix of every system's values
(every metric sharing the same queries at once).  All systems and metrics share the same draws; each
system's test and interval, taken on its own, is exactly the method above.  The chunks run on a few
threads (numpy's generators, `bincount` and BLAS release the GIL); each chunk draws from its own
generator, seeded from `numpy.random.SeedSequence(seed)` by its index, and the chunking depends only on
the number of queries and resamples, so a seed makes the output reproducible bit for bit (same machine
and library versions) whatever the scheduling.

The result is a `Comparison`: a `pl.DataFrame` that prints every column and row (a terminal would cut its 15
columns to a few) and records the options it was computed with, so `report` needs no test or correction.
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, get_args

import numpy as np
import polars as pl

from ._mean import summary_of
from .measures._base import GEOMETRIC_FLOOR, Summary

if TYPE_CHECKING:
    from types import ModuleType

    from numpy.typing import NDArray

    FloatArray = NDArray[np.float64]

Test = Literal["t", "permutation", "bootstrap", "wilcoxon"]
Correction = Literal["holm", "bonferroni"] | None
Missing = Literal["error", "drop"]

# elements (resamples x queries) of one chunk of the count or sign matrix: 32 MB as float64
_CHUNK_ELEMENTS = 1 << 22
# threads for the resampling chunks
_THREADS = min(4, os.cpu_count() or 1)
# scipy.stats.permutation_test's relative tolerance for null statistics equal to the observed one
_TIE_TOLERANCE = float(np.finfo(np.float64).eps) * 100
# deltas whose spread is within a few units in the last place of the values are constant
_CONSTANT_TOLERANCE = float(np.finfo(np.float64).eps) * 4

COLUMNS = (
    "metric",
    "system",
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
)


@dataclass(frozen=True)
class _Options:
    system: str
    query: tuple[str, ...]
    metrics: tuple[str, ...] | None
    baseline: object
    test: Test
    confidence: float
    correction: Correction
    n_resamples: int
    seed: int | None
    missing: Missing
    weight: str | None


class Comparison(pl.DataFrame):
    """The table `compare` returns: a `pl.DataFrame` that prints whole and records how it was computed.

    Printed (`print`, `repr`, a notebook's HTML) it shows every column and every row, without a width limit,
    where a plain frame shows about ten of its 15 columns; a column, row or width limit set with `pl.Config`
    (or its environment variables) is kept.  `test`, `correction`, `baseline`, `confidence`, `n_resamples` and
    `seed` are the options `compare` was called with; `report(comparison)` reads the test and the correction.

    Frames that keep its columns and take some of its rows (`filter`, `sort`, `head`, `tail`, `slice`,
    `limit`, `clone`, `clear`, the row slices of `df[...]`) are Comparisons with the same record; every other
    frame made from it (`select`, `with_columns`, `join`, `pl.concat`, ...) is a plain `pl.DataFrame`, and
    so is `Comparison(data)`: only `compare` makes one.
    """

    _options: _Options

    def __new__(cls, *args: Any, **kwargs: Any) -> pl.DataFrame:  # type: ignore[misc]
        # Polars builds some derived frames with `df.__class__(columns)`
        return pl.DataFrame(*args, **kwargs)

    @classmethod
    def _of(cls, table: pl.DataFrame, options: _Options) -> Comparison:
        comparison = object.__new__(cls)
        comparison._df = table._df
        comparison._options = options
        return comparison

    @property
    def test(self) -> Test:
        """The paired test `compare` ran."""
        return self._options.test

    @property
    def correction(self) -> Correction:
        """The multiple-testing correction of `p_adjusted` (None: none)."""
        return self._options.correction

    @property
    def baseline(self) -> object:
        """The baseline given to `compare`; None: per metric, the system with the lowest mean."""
        return self._options.baseline

    @property
    def confidence(self) -> float:
        """The level of the intervals."""
        return self._options.confidence

    @property
    def n_resamples(self) -> int:
        """The resamples and random sign flips (every test but "t")."""
        return self._options.n_resamples

    @property
    def seed(self) -> int | None:
        """The seed of the resampling."""
        return self._options.seed

    @classmethod
    def _from_pydf(cls, py_df: Any) -> pl.DataFrame:
        # Polars builds derived frames with `cls`: they would be Comparisons without a record
        return pl.DataFrame._from_pydf(py_df)

    def _same_record(self, frame: pl.DataFrame) -> pl.DataFrame:
        return Comparison._of(frame, self._options) if frame.schema == self.schema else frame

    def filter(self, *predicates: Any, **constraints: Any) -> pl.DataFrame:
        return self._same_record(super().filter(*predicates, **constraints))

    def sort(self, *by: Any, **options: Any) -> pl.DataFrame:
        return self._same_record(super().sort(*by, **options))

    def head(self, n: int = 5) -> pl.DataFrame:
        return self._same_record(super().head(n))

    def tail(self, n: int = 5) -> pl.DataFrame:
        return self._same_record(super().tail(n))

    def slice(self, offset: int, length: int | None = None) -> pl.DataFrame:
        return self._same_record(super().slice(offset, length))

    def clone(self) -> pl.DataFrame:
        return self._same_record(super().clone())

    def clear(self, n: int = 0) -> pl.DataFrame:
        return self._same_record(super().clear(n))

    def __reduce__(self) -> tuple[Callable[[bytes, _Options], Comparison], tuple[bytes, _Options]]:
        return _unpickle_comparison, (self.serialize(), self._options)

    def __str__(self) -> str:
        with _show_everything():
            return super().__str__()

    def __repr__(self) -> str:
        return self.__str__()

    def _repr_html_(self, *, _from_series: bool = False) -> str:
        with _show_everything():
            return super()._repr_html_(_from_series=_from_series)


def _unpickle_comparison(serialized: bytes, options: _Options) -> Comparison:
    return Comparison._of(pl.DataFrame.deserialize(io.BytesIO(serialized)), options)


@contextmanager
def _show_everything() -> Iterator[None]:
    """Every column and row, no width limit, but for the limits the user has set with `pl.Config`."""
    with pl.Config() as config:
        if "POLARS_FMT_MAX_COLS" not in os.environ:
            config.set_tbl_cols(-1)
        if "POLARS_FMT_MAX_ROWS" not in os.environ:
            config.set_tbl_rows(-1)
        if "POLARS_TABLE_WIDTH" not in os.environ:
            config.set_tbl_width_chars(-1)
        yield


@dataclass(frozen=True)
class _MetricResult:
    """One metric's comparison; arrays are indexed by system (the sorted system values)."""

    metric: str
    queries: int
    baseline: int
    mean: FloatArray
    ci_low: FloatArray
    ci_high: FloatArray
    delta: FloatArray
    delta_ci_low: FloatArray
    delta_ci_high: FloatArray
    p_value: FloatArray
    p_adjusted: FloatArray
    effect_size: FloatArray
    wins: NDArray[np.int64]
    ties: NDArray[np.int64]
    losses: NDArray[np.int64]


def compare(
    per_query: pl.DataFrame | pl.LazyFrame,
    *,
    system: str,
    query: str | Sequence[str] = "query",
    metrics: str | Sequence[str] | None = None,
    baseline: object = None,
    test: Test = "t",
    confidence: float = 0.95,
    correction: Correction = "holm",
    n_resamples: int = 10_000,
    seed: int | None = None,
    missing: Missing = "error",
    weight: str | None = None,
) -> Comparison:
    """Compare systems with a baseline over paired queries: means, intervals, paired tests, effect sizes.

    The methods (formulas, the scipy/statsmodels functions each one equals) are in the module docstring of
    `lodestar_polars.compare`.

    Parameters
    ----------
    per_query
        DataFrame or LazyFrame with one row per (system, query) and one or more metric columns, such as
        `ndcg(by="model", ...)` returns.  Only the needed columns are collected, once.
    system
        Column naming the system (model, run); its name and dtype are kept in the output.
    query
        Query key column, or several for a composite key.
    metrics
        Metric column(s) to compare.  None: every numeric column other than `system`, `query` and `weight`.
    baseline
        The system every other one is compared with (a value of the `system` column).  None: per metric,
        the system with the lowest mean (as the table reports it: the geometric mean for gm_map; the first in
        sort order on a tie).
    test
        "t" (paired Student's t), "permutation" (Fisher's paired randomization test), "bootstrap" (paired
        bootstrap test of the mean delta) or "wilcoxon" (Wilcoxon signed-rank).
    confidence
        Level of the intervals, in (0, 1).
    correction
        "holm", "bonferroni" or None: the multiple-testing correction of `p_adjusted`, over the systems
        compared with the baseline within each metric.
    n_resamples
        Bootstrap resamples and random sign flips (every test but "t"; the intervals of every test but "t").
    seed
        Seed of numpy's random generator; the same seed gives the same output bit for bit.
    missing
        Queries present for some systems and not others, or with a null metric value: "error" raises with
        the counts; "drop" leaves them out of every system of that metric (`queries` shows how many remain).
    weight
        A weight column of the frame, left out of `metrics=None`.  The comparison itself is unweighted.

    Returns
    -------
    Comparison
        A `pl.DataFrame` that prints every column and records `test`, `correction` and the other options
        (see `Comparison`).  One row per (metric, system), metrics in the given (column) order, systems by
        mean descending:
        `metric`, the system column, `queries`, `mean` (for a measure whose summary is not the mean, its
        summary: the sum for num_ret and the other counts, the geometric mean for gm_map and gm_bpref, as
        `evaluate_mean` gives it; see the module docstring), `ci_low`, `ci_high`, and against the baseline
        `delta` (mean of system - baseline), `delta_ci_low`, `delta_ci_high`, `p_value`, `p_adjusted`,
        `effect_size` (paired Cohen's d), `wins`, `ties`, `losses`.  The baseline's own row has nulls in
        the comparison columns.

    Raises
    ------
    ValueError
        Bad options; a missing or non-numeric column; null keys; NaN or infinite metric values; duplicate
        (system, query) rows; queries missing for some systems or null values (with `missing="error"`);
        fewer than two systems or two paired queries; an unknown baseline; `test="t"` with a constant
        non-zero delta.
    ImportError
        `test="t"` or `"wilcoxon"` without scipy (the `stats` extra).

    Examples
    --------
    >>> import lodestar_polars as lp
    >>> per_query = pl.DataFrame(
    ...     {
    ...         "model": ["a"] * 4 + ["b"] * 4,
    ...         "query": [1, 2, 3, 4] * 2,
    ...         "ndcg@10": [0.2, 0.4, 0.5, 0.3, 0.5, 0.6, 0.5, 0.7],
    ...     }
    ... )
    >>> table = lp.compare(per_query, system="model", baseline="a")
    >>> table.select("model", "mean", "delta", "p_value", "wins", "ties", "losses")
    shape: (2, 7)
    ┌───────┬───────┬───────┬──────────┬──────┬──────┬────────┐
    │ model ┆ mean  ┆ delta ┆ p_value  ┆ wins ┆ ties ┆ losses │
    │ ---   ┆ ---   ┆ ---   ┆ ---      ┆ ---  ┆ ---  ┆ ---    │
    │ str   ┆ f64   ┆ f64   ┆ f64      ┆ u32  ┆ u32  ┆ u32    │
    ╞═══════╪═══════╪═══════╪══════════╪══════╪══════╪════════╡
    │ b     ┆ 0.575 ┆ 0.225 ┆ 0.077994 ┆ 3    ┆ 1    ┆ 0      │
    │ a     ┆ 0.35  ┆ null  ┆ null     ┆ null ┆ null ┆ null   │
    └───────┴───────┴───────┴──────────┴──────┴──────┴────────┘

    The p-value is `scipy.stats.ttest_rel([.5, .6, .5, .7], [.2, .4, .5, .3]).pvalue`.
    """
    options = _validate_options(
        system=system,
        query=query,
        metrics=metrics,
        baseline=baseline,
        test=test,
        confidence=confidence,
        correction=correction,
        n_resamples=n_resamples,
        seed=seed,
        missing=missing,
        weight=weight,
    )
    if not isinstance(per_query, pl.DataFrame | pl.LazyFrame):
        msg = f"per_query must be a polars DataFrame or LazyFrame, got {type(per_query).__name__}"
        raise TypeError(msg)
    stats = _scipy_stats() if options.test in ("t", "wilcoxon") else None
    metric_names = _metric_columns(per_query.collect_schema(), options)
    needed = [options.system, *options.query, *metric_names]
    frame = per_query.select(needed) if isinstance(per_query, pl.DataFrame) else per_query.select(needed).collect()
    if frame.height == 0:
        msg = "the per-query frame has no rows"
        raise ValueError(msg)
    _check_frame(frame, options, metric_names)
    systems, values, present = _pivot(frame, options, metric_names)
    if systems.len() < 2:
        msg = (
            f"compare needs at least two systems in column {options.system!r}; "
            f"found {systems.len()}: {_describe_values(systems.to_list())}"
        )
        raise ValueError(msg)
    if options.missing == "error":
        _check_complete(frame, options, systems, present)
    kept = {metric: _kept_queries(metric, values[metric], options) for metric in metric_names}
    # a geometric-mean measure (gm_map) is compared on the log of its floored values (`_on_summary_scale`), and
    # its default baseline is the system of the lowest geometric mean
    summaries = {metric: summary_of(metric) for metric in metric_names}
    for metric, summary in summaries.items():
        if summary == "geometric":
            values[metric] = np.log(np.maximum(values[metric], GEOMETRIC_FLOOR))
    baselines = {
        metric: _baseline_index(metric, values[metric][kept[metric]], systems, options) for metric in metric_names
    }

    seeds = np.random.SeedSequence(options.seed)
    results: dict[str, _MetricResult] = {}
    # metrics kept on the same queries share one resampling pass
    groups: dict[bytes, list[str]] = {}
    for metric in metric_names:
        groups.setdefault(np.packbits(kept[metric]).tobytes(), []).append(metric)
    for group in groups.values():
        matrices = [values[metric][kept[metric]] for metric in group]
        for result in _compare_group(group, matrices, [baselines[m] for m in group], systems, options, seeds, stats):
            results[result.metric] = _on_summary_scale(result, summaries[result.metric])
    return _table([results[metric] for metric in metric_names], systems, options)


def _validate_options(
    *,
    system: object,
    query: object,
    metrics: object,
    baseline: object,
    test: object,
    confidence: object,
    correction: object,
    n_resamples: object,
    seed: object,
    missing: object,
    weight: object,
) -> _Options:
    if not isinstance(system, str):
        msg = f"system must be a column name (str), got {system!r}"
        raise TypeError(msg)
    query_columns = _names("query", query, allow_none=False)
    assert query_columns is not None
    if not query_columns:
        msg = "query must name at least one column"
        raise ValueError(msg)
    metric_columns = _names("metrics", metrics, allow_none=True)
    if metric_columns is not None and not metric_columns:
        msg = "metrics must name at least one column (or be None for every numeric column)"
        raise ValueError(msg)
    if weight is not None and not isinstance(weight, str):
        msg = f"weight must be a column name (str) or None, got {weight!r}"
        raise TypeError(msg)
    keys = [system, *query_columns]
    if system in COLUMNS and system != "system":
        msg = f"system column {system!r} has the name of an output column; rename it (e.g. to 'system')"
        raise ValueError(msg)
    if len(set(keys)) != len(keys):
        msg = f"system and query columns must be distinct, got system={system!r}, query={list(query_columns)!r}"
        raise ValueError(msg)
    for metric in metric_columns or ():
        if metric in keys:
            msg = f"metric column {metric!r} is also a key column (system or query)"
            raise ValueError(msg)
    if test not in get_args(Test):
        msg = f"test must be one of {list(get_args(Test))}, got {test!r}"
        raise ValueError(msg)
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0 < confidence < 1:
        msg = f"confidence must be a number strictly between 0 and 1, got {confidence!r}"
        raise ValueError(msg)
    if correction not in ("holm", "bonferroni", None):
        msg = f"correction must be 'holm', 'bonferroni' or None, got {correction!r}"
        raise ValueError(msg)
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int | np.integer) or n_resamples < 1:
        msg = f"n_resamples must be a positive integer, got {n_resamples!r}"
        raise ValueError(msg)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0):
        msg = f"seed must be a non-negative integer or None, got {seed!r}"
        raise ValueError(msg)
    if missing not in get_args(Missing):
        msg = f"missing must be 'error' or 'drop', got {missing!r}"
        raise ValueError(msg)
    return _Options(
        system=system,
        query=query_columns,
        metrics=metric_columns,
        baseline=baseline,
        test=test,  # type: ignore[arg-type]  # checked against get_args(Test) above
        confidence=float(confidence),
        correction=correction,
        n_resamples=int(n_resamples),
        seed=None if seed is None else int(seed),
        missing=missing,  # type: ignore[arg-type]  # checked against get_args(Missing) above
        weight=weight,
    )


def _names(option: str, value: object, *, allow_none: bool) -> tuple[str, ...] | None:
    if value is None and allow_none:
        return None
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Sequence) and all(isinstance(name, str) for name in value):
        names = tuple(value)
        if len(set(names)) != len(names):
            msg = f"{option} lists a column twice: {list(names)!r}"
            raise ValueError(msg)
        return names
    msg = f"{option} must be a column name or a sequence of column names, got {value!r}"
    raise TypeError(msg)


def _scipy_stats() -> ModuleType:
    try:
        import scipy.stats
    except ImportError as error:
        msg = 'compare(test="t" or "wilcoxon") needs scipy: pip install "lodestar-polars[stats]"'
        raise ImportError(msg) from error
    module: ModuleType = scipy.stats
    return module


def _metric_columns(schema: pl.Schema, options: _Options) -> list[str]:
    for role, column in [("system", options.system), *(("query", name) for name in options.query)]:
        if column not in schema:
            msg = f"{role} column {column!r} not found; columns: {schema.names()}"
            raise ValueError(msg)
    if options.weight is not None and options.weight not in schema:
        msg = f"weight column {options.weight!r} not found; columns: {schema.names()}"
        raise ValueError(msg)
    if options.metrics is None:
        excluded = {options.system, *options.query, options.weight}
        chosen = [name for name, dtype in schema.items() if name not in excluded and dtype.is_numeric()]
        if not chosen:
            msg = (
                f"no metric column: no numeric column besides the keys {[options.system, *options.query]} "
                f"(columns: {schema.names()}); pass metrics=[...]"
            )
            raise ValueError(msg)
        return chosen
    for metric in options.metrics:
        if metric not in schema:
            msg = f"metric column {metric!r} not found; columns: {schema.names()}"
            raise ValueError(msg)
        if not schema[metric].is_numeric():
            msg = f"metric column {metric!r} must be numeric, got {schema[metric]}"
            raise ValueError(msg)
    return list(options.metrics)


def _describe(value: object) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def _describe_values(values: Sequence[object], limit: int = 5) -> str:
    shown = ", ".join(_describe(value) for value in values[:limit])
    return shown + (f", ... ({len(values)} in all)" if len(values) > limit else "")


def _describe_query(row: dict[str, Any], options: _Options) -> str:
    return _describe_key(row, options.query)


def _describe_key(row: dict[str, Any], query: Sequence[str]) -> str:
    if len(query) == 1:
        return _describe(row[query[0]])
    return "(" + ", ".join(f"{name}={_describe(row[name])}" for name in query) + ")"


def _require_finite(
    frame: pl.DataFrame, metrics: Sequence[str], system: str | None, query: Sequence[str], role: str = "metric"
) -> None:
    """No NaN or infinite value in the float `metrics` columns; the message names the first row by its system
    and query (those given).  Shared with `plot`."""
    keys = [*([system] if system is not None else []), *query]
    for metric in metrics:
        if not frame.schema[metric].is_float():
            continue
        not_finite = pl.col(metric).is_nan() | pl.col(metric).is_infinite()
        if frame.select(not_finite.any()).item():
            bad = frame.filter(not_finite).sort(keys) if keys else frame.filter(not_finite)
            first = bad.row(0, named=True)
            where = [f"system {_describe(first[system])}"] if system is not None else []
            where += [f"query {_describe_key(first, query)}"] if query else []
            msg = f"{role} column {metric!r} has {bad.height} NaN or infinite value(s)"
            msg += f", the first for {', '.join(where)}" if where else ""
            raise ValueError(msg)


def _repeated_pairs_message(
    pairs: int, first: dict[str, Any], count: int, system: str, query: Sequence[str], caller: str
) -> str:
    return (
        f"{pairs} (system, query) pair(s) have several rows: system {_describe(first[system])}, query "
        f"{_describe_key(first, query)} has {count}; {caller} needs one row per system and query"
    )


def _require_one_row_per_pair(frame: pl.DataFrame, system: str, query: Sequence[str], caller: str) -> None:
    """Each (system, query) pair on one row, as `compare` requires (`_pivot` checks it on its codes).  Shared
    with `plot`."""
    keys = [system, *query]
    counts = frame.group_by(keys).len("__lodestar_rows").filter(pl.col("__lodestar_rows") > 1)
    if counts.height:
        first = counts.sort(keys).row(0, named=True)
        raise ValueError(_repeated_pairs_message(counts.height, first, first["__lodestar_rows"], system, query, caller))


def _check_frame(frame: pl.DataFrame, options: _Options, metrics: list[str]) -> None:
    for role, column in [("system", options.system), *(("query", name) for name in options.query)]:
        nulls = frame[column].null_count()
        if nulls:
            msg = f"{role} column {column!r} has {nulls} null value(s)"
            raise ValueError(msg)
    keys = [options.system, *options.query]
    _require_finite(frame, metrics, options.system, options.query)
    if options.missing == "error":
        for metric in metrics:
            if not frame[metric].null_count():
                continue
            null_rows = frame.filter(pl.col(metric).is_null()).sort(keys)
            first = null_rows.row(0, named=True)
            msg = (
                f"metric column {metric!r} is null for {null_rows.height} (system, query) row(s), the first for "
                f"system {_describe(first[options.system])}, query {_describe_query(first, options)}; "
                "pass missing='drop' to leave those queries out of that metric for every system"
            )
            raise ValueError(msg)


def _pivot(
    frame: pl.DataFrame, options: _Options, metrics: list[str]
) -> tuple[pl.Series, dict[str, FloatArray], NDArray[np.bool_]]:
    """Sorted systems, one (queries x systems) float64 matrix per metric (NaN: no row or null), row presence.

    Raises on duplicate (system, query) rows.
    """
    query_key = pl.col(options.query[0]) if len(options.query) == 1 else pl.struct(options.query)
    codes = frame.select(
        system=pl.col(options.system).rank("dense").cast(pl.Int64) - 1,
        query=query_key.rank("dense").cast(pl.Int64) - 1,
    )
    columns = codes["system"].to_numpy()
    rows = codes["query"].to_numpy()
    n_systems, n_queries = int(columns.max()) + 1, int(rows.max()) + 1
    _, first_rows = np.unique(columns, return_index=True)
    systems = frame[options.system].gather(first_rows)
    cells = rows * n_systems + columns
    repeated = np.bincount(cells, minlength=n_queries * n_systems) > 1
    if repeated.any():
        first = frame.row(int(np.flatnonzero(repeated[cells])[0]), named=True)
        count = int((cells == cells[np.flatnonzero(repeated[cells])[0]]).sum())
        msg = _repeated_pairs_message(int(repeated.sum()), first, count, options.system, options.query, "compare")
        raise ValueError(msg)
    shape = (n_queries, n_systems)
    present = np.zeros(shape, dtype=bool)
    present[rows, columns] = True
    values: dict[str, FloatArray] = {}
    for metric in metrics:
        matrix = np.full(shape, np.nan)
        matrix[rows, columns] = frame[metric].cast(pl.Float64).to_numpy()
        values[metric] = matrix
    return systems, values, present


def _check_complete(frame: pl.DataFrame, options: _Options, systems: pl.Series, present: NDArray[np.bool_]) -> None:
    incomplete = ~present.all(axis=1)
    if not incomplete.any():
        return
    lacking = (~present).sum(axis=0)
    per_system = ", ".join(
        f"system {_describe(name)} lacks {count}"
        for name, count in zip(systems.to_list(), lacking, strict=True)
        if count
    )
    msg = (
        f"queries differ between systems: {int(incomplete.sum())} of {present.shape[0]} queries are missing for "
        f"some systems ({per_system}); pass missing='drop' to compare every system on the queries they all have"
    )
    raise ValueError(msg)


def _kept_queries(metric: str, matrix: FloatArray, options: _Options) -> NDArray[np.bool_]:
    kept: NDArray[np.bool_] = np.asarray(~np.isnan(matrix).any(axis=1), dtype=np.bool_)
    count = int(kept.sum())
    if count < 2:
        where = " after missing='drop'" if options.missing == "drop" and count < matrix.shape[0] else ""
        msg = (
            f"metric {metric!r}: {count} {'query has' if count == 1 else 'queries have'} a value for every "
            f"system{where}; "
            "a paired comparison needs at least 2 queries per system"
        )
        raise ValueError(msg)
    return kept


def _baseline_index(metric: str, matrix: FloatArray, systems: pl.Series, options: _Options) -> int:
    if options.baseline is None:
        return int(np.argmin(matrix.mean(axis=0)))
    names = systems.to_list()
    for index, name in enumerate(names):
        if name == options.baseline:
            return index
    msg = (
        f"baseline {options.baseline!r} is not a value of column {options.system!r} "
        f"(systems: {_describe_values(names, limit=10)})"
    )
    raise ValueError(msg)


# values equal up to this relative difference are equal: two systems that rank a query's documents alike get
# the same value up to the order in which the plan summed the query's rows (a few ulps: 3e-16 for NDCG)
_EQUAL_WITHIN = 1e-12


def _paired_deltas(compared: FloatArray, baseline: FloatArray) -> FloatArray:
    """x_s - x_b per query (rows) and system (columns), 0 where the two are equal within `_EQUAL_WITHIN`."""
    delta = compared - baseline
    scale = np.maximum(1.0, np.maximum(np.abs(compared), np.abs(baseline)))
    delta[np.abs(delta) <= _EQUAL_WITHIN * scale] = 0.0
    return delta


def _compare_group(
    metrics: list[str],
    matrices: list[FloatArray],
    baselines: list[int],
    systems: pl.Series,
    options: _Options,
    seeds: np.random.SeedSequence,
    stats: ModuleType | None,
) -> list[_MetricResult]:
    """Every metric of one group (same kept queries): shared resamples, one result per metric."""
    n, n_systems = matrices[0].shape
    others = [np.array([s for s in range(n_systems) if s != base]) for base in baselines]
    deltas = [
        _paired_deltas(matrix[:, rest], matrix[:, [base]])
        for matrix, rest, base in zip(matrices, others, baselines, strict=True)
    ]
    means = [matrix.mean(axis=0) for matrix in matrices]
    mean_deltas = [delta.mean(axis=0) for delta in deltas]
    all_zero = [(delta == 0).all(axis=0) for delta in deltas]
    # constant up to the rounding of the inputs: 0.35 - 0.1 and 0.45 - 0.2 differ in the last bit
    constant = [
        delta.max(axis=0) - delta.min(axis=0)
        <= _CONSTANT_TOLERANCE * np.maximum(np.abs(matrix[:, rest]).max(axis=0), np.abs(matrix[:, base]).max())
        for delta, matrix, rest, base in zip(deltas, matrices, others, baselines, strict=True)
    ]
    alpha = 1.0 - options.confidence

    if options.test == "t":
        assert stats is not None
        quantile = float(stats.t.ppf((1.0 + options.confidence) / 2.0, n - 1))
        for metric, delta, rest, is_constant, is_zero in zip(metrics, deltas, others, constant, all_zero, strict=True):
            bad = np.flatnonzero(is_constant & ~is_zero)
            if bad.size:
                name = systems[int(rest[bad[0]])]
                msg = (
                    f"test='t' is undefined for system {_describe(name)} on metric {metric!r}: its delta with the "
                    f"baseline is {float(delta[0, bad[0]])!r} on every query (standard deviation 0); "
                    "use test='permutation', 'bootstrap' or 'wilcoxon'"
                )
                raise ValueError(msg)
        mean_intervals = [_t_interval(matrix, mean, quantile) for matrix, mean in zip(matrices, means, strict=True)]
        delta_intervals = [_t_interval(delta, mean, quantile) for delta, mean in zip(deltas, mean_deltas, strict=True)]
        p_values = [
            _t_test_p(delta, mean, is_zero, stats)
            for delta, mean, is_zero in zip(deltas, mean_deltas, all_zero, strict=True)
        ]
    else:
        boot_seeds, permutation_seeds = seeds.spawn(2)
        boot_means = _bootstrap_means(np.hstack(matrices), options.n_resamples, boot_seeds)
        mean_intervals, delta_intervals, boot_deltas = [], [], []
        start = 0
        for rest, base, is_zero in zip(others, baselines, all_zero, strict=True):
            block = boot_means[:, start : start + n_systems]
            start += n_systems
            boot_delta = block[:, rest] - block[:, [base]]
            # identical systems: resampled means of identical columns may differ in the last bit
            boot_delta[:, is_zero] = 0.0
            boot_deltas.append(boot_delta)
            mean_intervals.append(_percentile_interval(block, alpha))
            delta_intervals.append(_percentile_interval(boot_delta, alpha))
        if options.test == "bootstrap":
            p_values = [_bootstrap_p(boot, mean) for boot, mean in zip(boot_deltas, mean_deltas, strict=True)]
        elif options.test == "permutation":
            p_values = _permutation_p(deltas, options.n_resamples, permutation_seeds)
        else:
            assert stats is not None
            p_values = [_wilcoxon_p(delta, is_zero, stats) for delta, is_zero in zip(deltas, all_zero, strict=True)]

    results = []
    for j, metric in enumerate(metrics):
        delta, rest, base = deltas[j], others[j], baselines[j]
        p_value = np.where(all_zero[j], 1.0, p_values[j])
        sd = np.where(constant[j], 1.0, delta.std(axis=0, ddof=1))
        infinite = np.where(mean_deltas[j] > 0, np.inf, -np.inf)
        effect = np.where(all_zero[j], 0.0, np.where(constant[j], infinite, mean_deltas[j] / sd))

        def by_system(compared: FloatArray, rest: NDArray[np.int64] = rest) -> FloatArray:
            full = np.full(n_systems, np.nan)
            full[rest] = compared
            return full

        def counts(compared: NDArray[np.int64], rest: NDArray[np.int64] = rest) -> NDArray[np.int64]:
            full = np.zeros(n_systems, dtype=np.int64)
            full[rest] = compared
            return full

        results.append(
            _MetricResult(
                metric=metric,
                queries=n,
                baseline=base,
                mean=means[j],
                ci_low=mean_intervals[j][0],
                ci_high=mean_intervals[j][1],
                delta=by_system(mean_deltas[j]),
                delta_ci_low=by_system(delta_intervals[j][0]),
                delta_ci_high=by_system(delta_intervals[j][1]),
                p_value=by_system(p_value),
                p_adjusted=by_system(_adjust(p_value, options.correction)),
                effect_size=by_system(effect),
                wins=counts((delta > 0).sum(axis=0)),
                ties=counts((delta == 0).sum(axis=0)),
                losses=counts((delta < 0).sum(axis=0)),
            )
        )
    return results


def _on_summary_scale(result: _MetricResult, summary: Summary) -> _MetricResult:
    """A metric's result with its means as `evaluate_mean` summarises the measure (`Definition.summary`).

    "mean": as computed.  "sum" (num_ret, num_rel...): the means, intervals and deltas times the n queries,
    sums over them (every test, effect size and count is the same for a sum as for the mean).  "geometric"
    (gm_map, gm_bpref): the comparison ran on y = log(max(x, 1e-5)); the mean and its interval are exp of
    those of y, the geometric means, and the delta is the difference of the geometric means, GM_b * (r - 1)
    for the ratio r = GM_s / GM_b = exp(mean(y_s - y_b)), its interval the same of the interval of r.
    """
    if summary == "sum":
        n = float(result.queries)
        return replace(
            result,
            mean=result.mean * n,
            ci_low=result.ci_low * n,
            ci_high=result.ci_high * n,
            delta=result.delta * n,
            delta_ci_low=result.delta_ci_low * n,
            delta_ci_high=result.delta_ci_high * n,
        )
    if summary == "geometric":
        baseline = float(np.exp(result.mean[result.baseline]))
        return replace(
            result,
            mean=np.exp(result.mean),
            ci_low=np.exp(result.ci_low),
            ci_high=np.exp(result.ci_high),
            delta=baseline * np.expm1(result.delta),
            delta_ci_low=baseline * np.expm1(result.delta_ci_low),
            delta_ci_high=baseline * np.expm1(result.delta_ci_high),
        )
    return result


def _t_interval(samples: FloatArray, mean: FloatArray, quantile: float) -> tuple[FloatArray, FloatArray]:
    half_width = quantile * samples.std(axis=0, ddof=1) / math.sqrt(samples.shape[0])
    return mean - half_width, mean + half_width


def _t_test_p(delta: FloatArray, mean: FloatArray, all_zero: NDArray[np.bool_], stats: ModuleType) -> FloatArray:
    n = delta.shape[0]
    sd = delta.std(axis=0, ddof=1)
    statistic = mean / np.where(all_zero, 1.0, sd) * math.sqrt(n)
    p: FloatArray = np.minimum(2.0 * stats.t.sf(np.abs(statistic), n - 1), 1.0)
    return p


def _wilcoxon_p(delta: FloatArray, all_zero: NDArray[np.bool_], stats: ModuleType) -> FloatArray:
    return np.array(
        [1.0 if zero else float(stats.wilcoxon(column).pvalue) for column, zero in zip(delta.T, all_zero, strict=True)]
    )


def _percentile_interval(samples: FloatArray, alpha: float) -> tuple[FloatArray, FloatArray]:
    low, high = np.quantile(samples, [alpha / 2.0, 1.0 - alpha / 2.0], axis=0)
    return low, high


def _chunks(n: int, total: int) -> list[tuple[int, int]]:
    """(start, size) of the row chunks of a (total x n) resampling matrix: a function of n and total only."""
    rows = max(1, min(total, _CHUNK_ELEMENTS // n))
    return [(start, min(rows, total - start)) for start in range(0, total, rows)]


def _map_chunks(
    work: Callable[[int, int, np.random.SeedSequence], None],
    chunks: list[tuple[int, int]],
    seeds: np.random.SeedSequence,
) -> None:
    """Run `work(start, size, seed)` on every chunk, on a few threads (numpy's generators, bincount and BLAS
    release the GIL).  Each chunk draws from its own generator, seeded from `seeds` by its index, and
    writes its own rows, so the result does not depend on the scheduling."""
    chunk_seeds = seeds.spawn(len(chunks))
    workers = min(_THREADS, len(chunks))
    if workers <= 1:
        for (start, size), seed in zip(chunks, chunk_seeds, strict=True):
            work(start, size, seed)
        return
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(
            pool.map(
                lambda args: work(*args), [(*chunk, seed) for chunk, seed in zip(chunks, chunk_seeds, strict=True)]
            )
        )


def _bootstrap_means(values: FloatArray, n_resamples: int, seeds: np.random.SeedSequence) -> FloatArray:
    """Means of every column over `n_resamples` resamples of the rows with replacement (rows drawn jointly)."""
    n = values.shape[0]
    sums = np.empty((n_resamples, values.shape[1]))

    def work(start: int, size: int, seed: np.random.SeedSequence) -> None:
        draws = np.random.default_rng(seed).integers(0, n, size=(size, n), dtype=np.int64)
        counts = np.empty((size, n))
        for row in range(size):
            counts[row] = np.bincount(draws[row], minlength=n)
        sums[start : start + size] = counts @ values

    _map_chunks(work, _chunks(n, n_resamples), seeds)
    means: FloatArray = sums / n
    return means


def _bootstrap_p(boot_delta: FloatArray, observed: FloatArray) -> FloatArray:
    tolerance = _TIE_TOLERANCE * np.abs(observed)
    extreme = np.abs(boot_delta - observed) >= np.abs(observed) - tolerance
    p: FloatArray = np.minimum((extreme.sum(axis=0) + 1.0) / (boot_delta.shape[0] + 1.0), 1.0)
    return p


def _permutation_p(deltas: list[FloatArray], n_resamples: int, seeds: np.random.SeedSequence) -> list[FloatArray]:
    """Fisher's sign-flip test for every column of every delta matrix, sharing the sign vectors."""
    stacked = np.hstack(deltas)
    n = stacked.shape[0]
    totals = stacked.sum(axis=0)
    observed = totals / n
    tolerance = _TIE_TOLERANCE * np.abs(observed)
    exact = n <= n_resamples.bit_length() - 1  # 2**n <= n_resamples
    total = 1 << n if exact else n_resamples
    chunks = _chunks(n, total)
    less = np.zeros((len(chunks), stacked.shape[1]), dtype=np.int64)
    greater = np.zeros((len(chunks), stacked.shape[1]), dtype=np.int64)
    chunk_index = {start: index for index, (start, _) in enumerate(chunks)}
    bit_positions = np.arange(n, dtype=np.int64)

    def work(start: int, size: int, seed: np.random.SeedSequence) -> None:
        if exact:
            # every sign vector once: bit i of the vector's number flips query i
            flips = ((np.arange(start, start + size, dtype=np.int64)[:, None] >> bit_positions) & 1).astype(np.float64)
        else:
            random_bytes = np.random.default_rng(seed).integers(0, 256, size=(size, (n + 7) // 8), dtype=np.uint8)
            flips = np.unpackbits(random_bytes, axis=1, count=n).astype(np.float64)
        # flipping the signs of the set F turns the sum of d into sum(d) - 2 * (sum of d over F)
        null = (totals - 2.0 * (flips @ stacked)) / n
        index = chunk_index[start]
        less[index] = (null <= observed + tolerance).sum(axis=0)
        greater[index] = (null >= observed - tolerance).sum(axis=0)

    _map_chunks(work, chunks, seeds)
    adjustment = 0 if exact else 1
    smaller = np.minimum(less.sum(axis=0), greater.sum(axis=0)) + adjustment
    p = np.minimum(2.0 * smaller / (total + adjustment), 1.0)
    split = np.cumsum([delta.shape[1] for delta in deltas])[:-1]
    return list(np.split(p, split))


def _adjust(p_values: FloatArray, correction: Correction) -> FloatArray:
    """Holm or Bonferroni over the systems compared with the baseline, as statsmodels' multipletests."""
    m = p_values.size
    if correction is None or m == 0:
        return p_values.copy()
    if correction == "bonferroni":
        bonferroni: FloatArray = np.minimum(p_values * m, 1.0)
        return bonferroni
    order = np.argsort(p_values, kind="stable")
    stepped = np.minimum(np.maximum.accumulate(p_values[order] * np.arange(m, 0, -1)), 1.0)
    holm = np.empty(m)
    holm[order] = stepped
    return holm


def _table(results: list[_MetricResult], systems: pl.Series, options: _Options) -> Comparison:
    columns: dict[str, list[Any]] = {name: [] for name in COLUMNS if name != "system"}
    system_rows: list[int] = []
    float_columns = ("delta", "delta_ci_low", "delta_ci_high", "p_value", "p_adjusted", "effect_size")
    count_columns = ("wins", "ties", "losses")
    for result in results:
        order = sorted(range(len(result.mean)), key=lambda s: -result.mean[s])
        for s in order:
            is_baseline = s == result.baseline
            system_rows.append(s)
            columns["metric"].append(result.metric)
            columns["queries"].append(result.queries)
            columns["mean"].append(float(result.mean[s]))
            columns["ci_low"].append(float(result.ci_low[s]))
            columns["ci_high"].append(float(result.ci_high[s]))
            for name in float_columns:
                columns[name].append(None if is_baseline else float(getattr(result, name)[s]))
            for name in count_columns:
                columns[name].append(None if is_baseline else int(getattr(result, name)[s]))
    numbers = [
        value for name in ("mean", "ci_low", "ci_high", *float_columns) for value in columns[name] if value is not None
    ]
    if any(math.isnan(value) for value in numbers):  # pragma: no cover - a bug, not a data error
        msg = "internal error: compare produced NaN"
        raise RuntimeError(msg)
    dtypes = {"metric": pl.String, "queries": pl.UInt32, **dict.fromkeys(count_columns, pl.UInt32)}
    table = pl.DataFrame(
        {name: pl.Series(name, data, dtype=dtypes.get(name, pl.Float64)) for name, data in columns.items()}
    )
    system_column = systems.gather(system_rows).alias(options.system)
    return Comparison._of(table.insert_column(1, system_column), options)
