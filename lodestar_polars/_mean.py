"""The weighted mean of per-query metrics and its errors: one home, used by the plan, `mean`, Spark and the
scikit-learn drop-ins.

mean = sum(w * m) / sum(w) over the queries whose metric is not null, per `by` group.  A measure declares its
summary (`measures._base.Summary`): the arithmetic mean above; "geometric", trec_eval's geometric mean
exp(sum(w * log(max(m, 1e-5))) / sum(w)) (gm_map); or "sum", sum(w * m) (trec_eval's counts: num_ret,
num_rel, num_rel_ret, whose `all` line is the sum over queries).  The sums are
aggregations any engine can compute (Polars here, Spark in `spark.py`); `finish_means` turns them into the
mean frame and raises the two errors of a mean (no query to average, weights summing to zero), plus a
third that scikit-learn leaves as NaN: sums that overflow Float64.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import polars as pl

from ._checks import DataCheck, apply_checks, describe, message, non_finite, quoted
from ._exact_sum import sum_parts, with_exact_totals
from ._spec import DIVERSITY_NAMES, MEASURE_NAMES, MEASURE_PATTERN, NO_QUERY_MESSAGE, ZERO_WEIGHTS_MESSAGE
from .measures._base import GEOMETRIC_FLOOR, Summary
from .measures._registry import REGISTRY

QUERIES = "__lodestar_queries"
UNJUDGED = "__lodestar_queries_without_judgments"
_NO_QUERIES = "__lodestar_no_queries"
_ZERO_WEIGHT = "__lodestar_zero_weight"
_NOT_FINITE = "__lodestar_mean_not_finite"
_WEIGHT = "__lodestar_weight"
_BAD_WEIGHTS = "__lodestar_bad_weights"
_BAD_METRIC = "__lodestar_bad_metric"

# the metric columns the package writes: ndcg, ndcg@10, p@5, reciprocal_rank@3, num_ret, iprec@0.5, ...
_METRIC_NAME = re.compile(
    "^("
    + "|".join(
        re.escape(name)
        for name in sorted({*MEASURE_NAMES, *DIVERSITY_NAMES, *(d.method for d in REGISTRY.values() if d.method)})
    )
    + r")(\([^()]*\))?(@\d+|@\d*\.\d+)?$",
    re.IGNORECASE,
)


def summary_of(column: str) -> Summary:
    """The summary a metric column takes: its measure's (`Definition.summary`) when it is named as evaluate()
    names it (`gm_map`, `num_ret`...), else the arithmetic mean."""
    match = MEASURE_PATTERN.fullmatch(column)
    kind = MEASURE_NAMES.get(match.group(1).lower()) if match else None
    return REGISTRY[kind].summary if kind is not None else "mean"


def summand(metric: pl.Expr, summary: Summary) -> pl.Expr:
    """What a query adds (times its weight) to its group's sum: its value, or for a geometric mean the log of
    its value floored at `GEOMETRIC_FLOOR`."""
    if summary == "geometric":
        return pl.max_horizontal(metric, pl.lit(GEOMETRIC_FLOOR)).log()
    return metric


def summarised(weighted: pl.Expr, weights: pl.Expr, summary: Summary) -> pl.Expr:
    """The summary from sum(w * summand) and sum(w)."""
    if summary == "sum":
        return weighted
    mean = weighted / weights
    return mean.exp() if summary == "geometric" else mean


def positive_zero(value: pl.Expr) -> pl.Expr:
    """-0.0 (an empty or cancelling sum, a negative weight times 0) as 0.0: no output holds -0.0.  Not `+ 0.0`,
    which Polars' optimiser may drop."""
    return pl.when(value == 0).then(0.0).otherwise(value)


def entered_count(index: int) -> str:
    return f"__lodestar_entered_{index}"


def weighted_sum(index: int) -> str:
    return f"__lodestar_weighted_sum_{index}"


def weight_sum(index: int) -> str:
    return f"__lodestar_weight_sum_{index}"


def sum_aggregations(
    metrics: Sequence[str],
    weight: pl.Expr,
    scored: pl.Expr,
    summaries: Sequence[Summary] | None = None,
    exact: bool = False,
) -> list[pl.Expr]:
    """Per group: sum(w * m) (m as `summand` takes it) and sum(w) over the scored queries whose metric is not
    null, and how many they are, for each metric; and the number of queries that entered the first metric's
    mean.  `summaries`: one
    per metric (None: `summary_of` each metric's name)."""
    kinds = list(summaries) if summaries is not None else [summary_of(metric) for metric in metrics]
    aggregations: list[pl.Expr] = []
    for index, (metric, summary) in enumerate(zip(metrics, kinds, strict=True)):
        entered = scored & pl.col(metric).is_not_null()
        added = weight * summand(pl.col(metric), summary)
        aggregations += sum_parts(pl.when(entered).then(added), weighted_sum(index), exact)
        aggregations += sum_parts(pl.when(entered).then(weight.cast(pl.Float64)), weight_sum(index), exact)
        aggregations.append(entered.sum().cast(pl.UInt32).alias(entered_count(index)))
    first_entered = scored & pl.col(metrics[0]).is_not_null()
    aggregations.append(first_entered.sum().cast(pl.UInt32).alias(QUERIES))
    return aggregations


def describe_group(names: Sequence[str]) -> Callable[[dict[str, object]], str]:
    """`model='bm25', locale='fr'` from the internal key struct of a group (keys in the order of `names`)."""

    def where(keys: dict[str, object]) -> str:
        values = list(keys.values())
        return ", ".join(f"{name}={describe(value)}" for name, value in zip(names, values, strict=False))

    return where


def finish_means(
    sums: pl.LazyFrame,
    group_keys: Sequence[str],
    group_names: Sequence[str],
    metrics: Sequence[str],
    weight_name: str | None,
    with_unjudged: bool,
    checks: Sequence[DataCheck] = (),
    summaries: Sequence[Summary] | None = None,
) -> pl.LazyFrame:
    """The mean frame from the per-group sums: the group columns (renamed to `group_names`), one summary per
    metric (its mean, geometric mean or sum: `summaries`, None: `summary_of` each name), `queries`,
    `weight_sum` (and `queries_without_judgments`), sorted by group; checked (`checks` first: counters the
    sums already hold, per group)."""
    kinds = list(summaries) if summaries is not None else [summary_of(metric) for metric in metrics]
    means = [
        positive_zero(summarised(pl.col(weighted_sum(i)), pl.col(weight_sum(i)), summary)).alias(metric)
        for i, (metric, summary) in enumerate(zip(metrics, kinds, strict=True))
    ]
    finite = pl.all_horizontal(
        *(pl.col(metric).is_finite() | pl.col(weight_sum(i)).eq(0) for i, metric in enumerate(metrics)),
        *(pl.col(weight_sum(i)).is_finite() for i in range(len(metrics))),
    )
    zero_weight = pl.any_horizontal(*(pl.col(weight_sum(i)) == 0 for i in range(len(metrics))))
    # no query to average: none entered the first metric's mean, or (where the sums count them) another's
    nothing_entered = pl.col(QUERIES) == 0
    schema = sums.collect_schema()
    entered = [entered_count(i) for i in range(len(metrics)) if entered_count(i) in schema]
    if entered:
        nothing_entered = nothing_entered | pl.any_horizontal(*(pl.col(name) == 0 for name in entered))
    frame = sums.with_columns(means).with_columns(
        nothing_entered.cast(pl.UInt32).alias(_NO_QUERIES),
        (~nothing_entered & zero_weight).cast(pl.UInt32).alias(_ZERO_WEIGHT),
        (~nothing_entered & ~zero_weight & ~finite).cast(pl.UInt32).alias(_NOT_FINITE),
    )
    if group_keys:
        frame = frame.sort(group_keys, nulls_last=True)
        no_query = message(
            ValueError,
            "no query to average in group {query}: every query's metric is null (or, with qrels, no query of the "
            "group was judged).",
        )
    else:
        no_query = message(ValueError, NO_QUERY_MESSAGE)
    overflow = (
        f"the sums of weight x metric or of the weights ({quoted(weight_name)}) overflow Float64"
        if weight_name is not None
        else "the sum of the metric values overflows Float64"
    )
    in_group = " in group {query}" if group_keys else ""
    # the counters are the columns computed just above, so each check's own expression is a placeholder
    checks = [
        *checks,
        DataCheck(_NO_QUERIES, pl.lit(0), no_query),
        DataCheck(_ZERO_WEIGHT, pl.lit(0), message(ZeroDivisionError, ZERO_WEIGHTS_MESSAGE)),
        DataCheck(_NOT_FINITE, pl.lit(0), message(ValueError, f"a mean is not finite{in_group}: {overflow}.")),
    ]
    output = [*group_keys, *metrics, QUERIES, weight_sum(0), *([UNJUDGED] if with_unjudged else [])]
    checked = apply_checks(frame, describe_group(group_names), group_keys, output, checks)
    renames = [pl.col(key).alias(name) for key, name in zip(group_keys, group_names, strict=True)]
    renames += [pl.col(metric) for metric in metrics]
    renames += [pl.col(QUERIES).alias("queries"), positive_zero(pl.col(weight_sum(0))).alias("weight_sum")]
    if with_unjudged:
        renames.append(pl.col(UNJUDGED).cast(pl.UInt32).alias("queries_without_judgments"))
    return checked.select(renames)


def means(
    per_query: pl.LazyFrame,
    group_keys: Sequence[str],
    group_names: Sequence[str],
    metrics: Sequence[str],
    weight: str | None,
    weight_name: str | None,
    scored: pl.Expr,
    unjudged: pl.Expr | None = None,
    checks: Sequence[DataCheck] = (),
    summaries: Sequence[Summary] | None = None,
    exact: bool = False,
) -> pl.LazyFrame:
    """The mean frame of a per-query frame (columns under internal or user names, as given); `checks` count
    over each group's rows; `summaries` as `finish_means` takes them."""
    weight_expr = pl.col(weight) if weight is not None else pl.lit(1.0)
    aggregations = sum_aggregations(metrics, weight_expr, scored, summaries, exact)
    if unjudged is not None:
        aggregations.append(unjudged.sum().cast(pl.UInt32).alias(UNJUDGED))
    aggregations += [expression for check in checks for expression in check.aggregations()]
    sums = per_query.group_by(group_keys).agg(aggregations) if group_keys else per_query.select(aggregations)
    sums = with_exact_totals(sums) if exact else sums  # the exact sums' partial totals added up
    return finish_means(sums, group_keys, group_names, metrics, weight_name, unjudged is not None, checks, summaries)


def _as_names(argument: str, value: str | Sequence[str] | None) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, Sequence) and all(isinstance(name, str) for name in value):
        return list(value)
    msg = f"`{argument}` must be a column name (str), a list of them, or None; got {value!r}."
    raise TypeError(msg)


def _value_checks(
    groups: Sequence[str], weight: str | None, metrics: Sequence[str], internal: Sequence[str]
) -> list[DataCheck]:
    """A null, NaN or infinite weight, as the methods refuse it; a NaN or infinite metric value (a null one
    is left out of the mean).  Counted per group over the rows of the per-query frame."""
    first = ", the first in group {query}" if groups else ""
    checks = []
    if weight is not None:
        bad_weight = message(
            ValueError, f"weight column {quoted(weight)} has {{total}} null, NaN or infinite value(s){first}."
        )
        checks.append(DataCheck(_BAD_WEIGHTS, non_finite(_WEIGHT, pl.Float64()).sum(), bad_weight))
    for index, (name, column) in enumerate(zip(metrics, internal, strict=True)):
        not_finite = (pl.col(column).is_nan() | pl.col(column).is_infinite()).fill_null(False)
        bad_metric = message(ValueError, f"metric column {quoted(name)} has {{total}} NaN or infinite value(s){first}.")
        checks.append(DataCheck(f"{_BAD_METRIC}_{index}", not_finite.sum(), bad_metric))
    return checks


def _require_distinct(groups: Sequence[str], metrics: Sequence[str]) -> None:
    for argument, names in (("by", groups), ("metrics", metrics)):
        repeated = sorted({name for name in names if list(names).count(name) > 1})
        if repeated:
            msg = f"`{argument}` lists column {repeated[0]!r} twice."
            raise ValueError(msg)
    both = [name for name in metrics if name in groups]
    if both:
        msg = f"column {both[0]!r} is both a `by` column and a metric; a column can have one role only."
        raise ValueError(msg)


def mean(
    per_query: pl.DataFrame | pl.LazyFrame,
    *,
    by: str | Sequence[str] | None = None,
    weight: str | None = None,
    metrics: str | Sequence[str] | None = None,
) -> pl.DataFrame | pl.LazyFrame:
    """The weighted mean of a per-query frame: what the `*_mean` methods return, from their per-query frame.

    Computing the per-query frame once and its mean from it reads the data once.

    Parameters
    ----------
    per_query
        One row per query (per `by` group and query), as the per-query methods return it.
    by
        Group columns: one mean row per group, sorted by them.  None: one row.
    weight
        The weight column; None for the plain mean.
    metrics
        The metric columns to average; None: every column named like a metric (`ndcg`, `ndcg@10`, `p@5`,
        `reciprocal_rank@3`, ...) other than the by and weight columns.

    Returns
    -------
    DataFrame or LazyFrame (as given)
        The `by` columns, one mean per metric, `queries` (the queries that entered the first metric's mean)
        and `weight_sum` (their weight).  A mean is sum(weight * metric) / sum(weight) over the queries whose
        metric is not null; a column named as a measure with another summary takes that one, as evaluate_mean
        does: `gm_map`, the geometric mean exp(sum(weight * log(max(metric, 1e-5))) / sum(weight)) (trec_eval's
        gm_map), and the counts `num_ret`, `num_rel`, `num_rel_ret`, the sum sum(weight * metric).

    Raises
    ------
    ValueError
        A by column or metric listed twice, a column both a by column and a metric; a null, NaN or
        infinite weight; a NaN or infinite metric value (a null one is left out); no query to average
        (naming the group), or sums that overflow Float64.
    ZeroDivisionError
        Weights summing to zero.

    Examples
    --------
    >>> import lodestar_polars
    >>> df = pl.DataFrame(
    ...     {"query": [1, 1, 2, 2], "relevance": [1, 0, 0, 1], "score": [0.9, 0.1, 0.9, 0.1], "w": [1.0, 1.0, 3.0, 3.0]}
    ... )
    >>> per_query = df.rank_metrics.ndcg(weight="w")
    >>> lodestar_polars.mean(per_query, weight="w")
    shape: (1, 3)
    ┌──────────┬─────────┬────────────┐
    │ ndcg     ┆ queries ┆ weight_sum │
    │ ---      ┆ ---     ┆ ---        │
    │ f64      ┆ u32     ┆ f64        │
    ╞══════════╪═════════╪════════════╡
    │ 0.723197 ┆ 2       ┆ 4.0        │
    └──────────┴─────────┴────────────┘
    """
    if not isinstance(per_query, (pl.DataFrame, pl.LazyFrame)):
        msg = f"mean() takes a polars DataFrame or LazyFrame, got {type(per_query).__name__}."
        raise TypeError(msg)
    schema = per_query.collect_schema()
    groups = _as_names("by", by)
    weights = _as_names("weight", weight)
    if len(weights) > 1:
        msg = f"`weight` names one column, got {weight!r}."
        raise TypeError(msg)
    if metrics is None:
        chosen = [name for name in schema.names() if _METRIC_NAME.match(name) and name not in (*groups, *weights)]
        if not chosen:
            msg = f"no metric column found (columns named like ndcg@10, p@5, ap...); columns: {schema.names()}."
            raise ValueError(msg)
    else:
        chosen = _as_names("metrics", metrics)
    _require_distinct(groups, chosen)
    for role, names in (("by", groups), ("weight", weights), ("metric", chosen)):
        for name in names:
            if name not in schema:
                msg = f"{role} column {name!r} not found in the per-query frame; its columns are: {schema.names()}."
                raise pl.exceptions.ColumnNotFoundError(msg)
    for name in [*chosen, *weights]:
        if not schema[name].is_numeric():
            msg = f"column {name!r} must be numeric to be averaged, got dtype {schema[name]}."
            raise pl.exceptions.SchemaError(msg)
    keys = [f"__lodestar_group_{i}" for i in range(len(groups))]
    internal = [f"__lodestar_metric_{i}" for i in range(len(chosen))]
    columns = [pl.col(name).alias(key) for name, key in zip(groups, keys, strict=True)]
    columns += [pl.col(name).cast(pl.Float64).alias(key) for name, key in zip(chosen, internal, strict=True)]
    if weights:
        columns.append(pl.col(weights[0]).cast(pl.Float64).alias(_WEIGHT))
    frame = per_query.lazy().select(columns)
    result = means(
        frame,
        keys,
        groups,
        internal,
        _WEIGHT if weights else None,
        weights[0] if weights else None,
        pl.lit(True),
        checks=_value_checks(groups, weights[0] if weights else None, chosen, internal),
        summaries=[summary_of(name) for name in chosen],
    ).rename(dict(zip(internal, chosen, strict=True)))
    return result.collect() if isinstance(per_query, pl.DataFrame) else result
