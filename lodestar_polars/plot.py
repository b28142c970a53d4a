"""Standard pictures of a system comparison, as Altair charts (the `plot` extra: altair, vl-convert-python).

Each function takes one of the package's frames (a mean frame, a per-query frame or the table of
`lodestar_polars.compare`), reduces it in Polars to what the picture shows, and returns an Altair chart;
`chart.save("name.png")` (or `.svg`) writes it through vl-convert, and `chart.save("name.html", inline=True)` a
web page that renders with no network (Vega, Vega-Lite and vega-embed inlined from vl-convert; without
`inline=True`, Altair's page loads them from a CDN and is blank offline).  The data embedded in the chart is small
whatever the number of queries: summaries (quantiles, means) or at most `max_points` sorted deltas per
system, so Altair's 5,000-row limit never applies and no global Altair setting is changed.

- `cutoff_curve(means, by=...)`: the metric against the cut-off k, one line per system.
- `means(comparison)`: each system's mean and interval; the baseline and significant differences marked.
- `per_query_delta(per_query, system=..., baseline=..., metric=...)`: the per-query differences with the
  baseline, sorted (the wins / ties / losses picture).
- `distribution(per_query, system=..., metric=...)`: box plots of the per-query values per system.

Inputs are checked as `compare` checks its own, with its messages: one row per (system, query) in
`per_query_delta`, no NaN or infinite value, one role per column, and a mean frame (one row per system) for
`cutoff_curve`.  The charts' data use their own column names, so any system or metric column name works.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from ._mean import summary_of
from .compare import COLUMNS as COMPARE_COLUMNS
from .compare import _paired_deltas, _require_finite, _require_one_row_per_pair

if TYPE_CHECKING:
    import altair as alt

OUTCOME_COLORS = {"win": "#1a9850", "tie": "#9e9e9e", "loss": "#d73027"}
STATUS_COLORS = {"baseline": "#636363", "better": "#1a9850", "worse": "#d73027", "not significant": "#4c78a8"}
_CUTOFF_COLUMN = re.compile(r"^(?P<metric>.+)@(?P<k>\d+)$")
# a measure at a recall level or a multiplier (iprec@0.5, rprec_mult@0.2): not a cut-off
_LEVEL_COLUMN = re.compile(r"^.+@\d*\.\d+$")
_SUMMARY_WORDS = {"mean": "mean", "sum": "sum over queries", "geometric": "geometric mean"}


def _require_altair() -> None:
    try:
        import altair  # noqa: F401
    except ImportError as error:
        msg = (
            "lodestar_polars.plot needs altair (and vl-convert-python to save PNG/SVG): "
            'pip install "lodestar-polars[plot]"'
        )
        raise ImportError(msg) from error


def _schema(frame: object, role: str) -> pl.Schema:
    if not isinstance(frame, pl.DataFrame | pl.LazyFrame):
        msg = f"the {role} frame must be a polars DataFrame or LazyFrame, got {type(frame).__name__}"
        raise TypeError(msg)
    return frame.collect_schema()


def _collect(frame: pl.DataFrame | pl.LazyFrame, columns: Sequence[str], role: str) -> pl.DataFrame:
    schema = _schema(frame, role)
    for column in columns:
        if column not in schema:
            msg = f"column {column!r} not found in the {role} frame; columns: {schema.names()}"
            raise ValueError(msg)
    selected = frame.select(columns)
    return selected if isinstance(selected, pl.DataFrame) else selected.collect()


def _require_distinct_roles(roles: Sequence[tuple[str, str]]) -> None:
    """Each column has one role (system, query, metric), as `compare` requires."""
    seen: dict[str, str] = {}
    for role, name in roles:
        if name in seen:
            msg = (
                f"column {name!r} is both the {seen[name]} column and a {role} column; a column can have one role only"
            )
            raise ValueError(msg)
        seen[name] = role


def _require_query_columns(schema: pl.Schema, keys: Sequence[str], other_roles: Sequence[str]) -> None:
    """A query key the frame lacks: the error says to pass `query=`, naming the frame's columns that can be
    keys (not float, not the system or the metric), as `compare`'s own frame names its query column (`topic`,
    `query_id`, ...)."""
    missing = [key for key in keys if key not in schema]
    if not missing:
        return
    candidates = [
        name for name, dtype in schema.items() if name not in other_roles and not dtype.is_float() and name not in keys
    ]
    hint = ""
    if len(candidates) == 1:
        hint = f" (here: query={candidates[0]!r})"
    elif candidates:
        hint = f" (the frame's key columns: {candidates})"
    msg = (
        f"query column {missing[0]!r} not found in the per-query frame; columns: {schema.names()}. Pass query= naming "
        f"the column(s) the systems are paired on, as given to compare{hint}."
    )
    raise ValueError(msg)


def _inline(frame: pl.DataFrame) -> alt.InlineData:
    """The rows as inline Vega-Lite data (already reduced to a few rows per system)."""
    import altair as alt

    return alt.InlineData(values=frame.to_dicts())


def _query_columns(query: str | Sequence[str]) -> list[str]:
    return [query] if isinstance(query, str) else list(query)


def cutoff_curve(means: pl.DataFrame | pl.LazyFrame, *, by: str | None = None, metric: str | None = None) -> alt.Chart:
    """The mean metric against the cut-off k, one line per system.

    Parameters
    ----------
    means
        A mean frame with several cut-offs, such as `ndcg_mean(k=[1, 3, 5, 10], by="model")` returns:
        columns `{metric}@{k}` (a column without `@k`, the whole list, is left out).
    by
        The column naming the system (one line each); None for a single line.
    metric
        The metric name before `@` (e.g. "ndcg"); None: the only one in the frame.

    Returns
    -------
    altair.Chart
        Lines with points: x the cut-off k, y the mean, colour the system.

    Examples
    --------
    >>> from lodestar_polars import plot
    >>> means = pl.DataFrame({"model": ["a", "b"], "ndcg@5": [0.5, 0.6], "ndcg@10": [0.55, 0.64], "queries": [9, 9]})
    >>> chart = plot.cutoff_curve(means, by="model")
    >>> encoding = chart.to_dict()["encoding"]
    >>> encoding["x"]["field"], encoding["y"]["field"], encoding["color"]["field"]
    ('k', 'value', 'system')
    """
    _require_altair()
    import altair as alt

    schema = _schema(means, "means")
    matches = {name: _CUTOFF_COLUMN.match(name) for name in schema.names()}
    found = {match["metric"] for match in matches.values() if match}
    if metric is None:
        if len(found) != 1:
            at_levels = [name for name in schema.names() if _LEVEL_COLUMN.match(name)]
            msg = (
                f"cutoff_curve needs columns named metric@k for one metric; found {sorted(found) or 'none'} "
                f"in {schema.names()}"
                + ("; pass metric=" if len(found) > 1 else "")
                + (
                    f"; {', '.join(at_levels)}: at a recall level or a multiplier of R (name@x, x a decimal), "
                    "not a cut-off k"
                    if at_levels and not found
                    else ""
                )
            )
            raise ValueError(msg)
        metric = found.pop()
    columns = [name for name, match in matches.items() if match and match["metric"] == metric]
    if not columns:
        msg = f"no column {metric}@k in the mean frame; columns: {schema.names()}"
        raise ValueError(msg)
    keys = [] if by is None else [by]
    frame = _collect(means, [*keys, *columns], "means")
    _require_one_row_per_system(frame, by)
    _require_finite(frame, columns, by, (), role="mean")
    # the system under the chart's own name before unpivoting, so a by column named "k" or "value" is no clash
    system = [] if by is None else ["system"]
    long = (
        frame.select(*(pl.col(key).cast(pl.String).alias("system") for key in keys), *columns)
        .unpivot(index=system, on=columns, variable_name="column", value_name="value")
        .with_columns(k=pl.col("column").str.extract(r"@(\d+)$").cast(pl.Int64))
    )
    encoding: dict[str, Any] = {
        "x": alt.X("k:Q", title="cut-off k", scale=alt.Scale(zero=False)),
        "y": alt.Y("value:Q", title=f"mean {metric}", scale=alt.Scale(zero=False)),
        "tooltip": [alt.Tooltip("column:N", title="metric"), alt.Tooltip("value:Q", format=".4f")],
    }
    if by is not None:
        encoding["color"] = alt.Color("system:N", title=by)
        encoding["tooltip"].insert(0, alt.Tooltip("system:N", title=by))
    chart: alt.Chart = (
        alt.Chart(_inline(long.sort([*system, "k"]).select(*system, "column", "k", "value")))
        .mark_line(point=True)
        .encode(**encoding)
        .properties(title=f"{metric} by cut-off", width=420, height=260)
    )
    return chart


def _require_one_row_per_system(means: pl.DataFrame, by: str | None) -> None:
    """A mean frame has one row per system (one row without `by`): a per-query frame would draw one point per
    query under the label "mean"."""
    if by is None:
        if means.height != 1:
            msg = (
                f"cutoff_curve takes a mean frame: one row without by=, got {means.height} rows (a per-query "
                "frame? pass the frame ndcg_mean(k=[...]) returns, or by= naming the system column)"
            )
            raise ValueError(msg)
        return
    repeated = means.group_by(by).len("__lodestar_rows").filter(pl.col("__lodestar_rows") > 1)
    if repeated.height:
        first = repeated.sort(by).row(0, named=True)
        msg = (
            f"cutoff_curve takes a mean frame, one row per system: {by} {first[by]!r} has "
            f"{first['__lodestar_rows']} rows (a per-query frame? pass the frame ndcg_mean(k=[...], by=...) returns)"
        )
        raise ValueError(msg)


def means(comparison: pl.DataFrame, *, alpha: float = 0.05) -> alt.LayerChart | alt.FacetChart:
    """Each system's mean with its interval, the baseline and the significant differences marked.

    Parameters
    ----------
    comparison
        The table `lodestar_polars.compare` returns (its system column is the second column).
    alpha
        A difference is significant when `p_adjusted < alpha`.

    Returns
    -------
    altair.LayerChart or altair.FacetChart
        A rule from `ci_low` to `ci_high` and a point at the mean per system, coloured "baseline",
        "better", "worse" or "not significant"; one row of panels per metric when there are several.

    Examples
    --------
    >>> import lodestar_polars as lp
    >>> from lodestar_polars import plot
    >>> per_query = pl.DataFrame(
    ...     {"model": ["a"] * 4 + ["b"] * 4, "query": [1, 2, 3, 4] * 2, "m": [0.2, 0.4, 0.5, 0.3, 0.5, 0.6, 0.5, 0.7]}
    ... )
    >>> chart = plot.means(lp.compare(per_query, system="model", baseline="a"))
    >>> [layer["mark"]["type"] for layer in chart.to_dict()["layer"]]
    ['rule', 'point']
    """
    _require_altair()
    import altair as alt

    if not isinstance(comparison, pl.DataFrame) or len(comparison.columns) != len(COMPARE_COLUMNS):
        msg = "means() takes the DataFrame lodestar_polars.compare returns"
        raise ValueError(msg)
    system = comparison.columns[1]
    expected = [name for name in COMPARE_COLUMNS if name != "system"]
    if [name for name in comparison.columns if name != system] != expected:
        msg = f"means() takes the DataFrame lodestar_polars.compare returns; got columns {comparison.columns}"
        raise ValueError(msg)
    if not 0 < alpha < 1:
        msg = f"alpha must be strictly between 0 and 1, got {alpha!r}"
        raise ValueError(msg)
    significant = pl.col("p_adjusted") < alpha
    data = comparison.with_columns(
        system=pl.col(system).cast(pl.String),
        status=pl.when(pl.col("p_value").is_null())
        .then(pl.lit("baseline"))
        .when(significant & (pl.col("delta") > 0))
        .then(pl.lit("better"))
        .when(significant & (pl.col("delta") < 0))
        .then(pl.lit("worse"))
        .otherwise(pl.lit("not significant")),
    ).select("metric", "system", "mean", "ci_low", "ci_high", "delta", "p_value", "p_adjusted", "status")
    metrics = data["metric"].unique(maintain_order=True).to_list()
    y = alt.Y("system:N", title=system, sort=alt.EncodingSortField(field="mean", order="descending"))
    # counts are compared by their sums, gm_map / gm_bpref by their geometric means (compare's "mean" column)
    summaries = {_SUMMARY_WORDS[summary_of(metric)] for metric in metrics}
    summary_words = summaries.pop() if len(summaries) == 1 else "summary over queries"
    x_title = metrics[0] if len(metrics) == 1 else summary_words
    base = alt.Chart(_inline(data)) if len(metrics) == 1 else alt.Chart()
    interval = base.mark_rule(strokeWidth=2).encode(
        y=y, x=alt.X("ci_low:Q", title=x_title, scale=alt.Scale(zero=False)), x2="ci_high:Q", color=_status_color()
    )
    point = base.mark_point(filled=True, size=90).encode(
        y=y,
        x="mean:Q",
        color=_status_color(),
        tooltip=[
            "system:N",
            alt.Tooltip("mean:Q", format=".4f"),
            alt.Tooltip("ci_low:Q", format=".4f"),
            alt.Tooltip("ci_high:Q", format=".4f"),
            alt.Tooltip("delta:Q", format="+.4f"),
            alt.Tooltip("p_adjusted:Q", format=".3g"),
        ],
    )
    title = f"{summary_words} and interval; significant: p_adjusted < {alpha:g}"
    if len(metrics) == 1:
        layered: alt.LayerChart = alt.LayerChart(layer=[interval, point]).properties(title=title, width=420)
        return layered
    faceted: alt.FacetChart = (
        alt.LayerChart(layer=[interval, point], data=_inline(data))
        .properties(width=420)
        .facet(row=alt.Row("metric:N", sort=metrics, title=None))
        .properties(title=title)
    )
    return faceted


def _status_color() -> alt.Color:
    import altair as alt

    return alt.Color(
        "status:N",
        title=None,
        scale=alt.Scale(domain=list(STATUS_COLORS), range=list(STATUS_COLORS.values())),
    )


def per_query_delta(
    per_query: pl.DataFrame | pl.LazyFrame,
    *,
    system: str,
    baseline: object,
    metric: str,
    query: str | Sequence[str] = "query",
    max_points: int = 1000,
) -> alt.Chart:
    """The per-query differences with the baseline, sorted: one bar per query, green wins, red losses.

    Parameters
    ----------
    per_query
        A per-query frame with one row per (system, query).
    system, baseline
        The system column and the baseline's value in it; every other system gets a row of the chart.
    metric
        The metric column.
    query
        The query key column(s): systems are paired on them (queries without both values are left out).
    max_points
        At most this many bars per system: beyond it the sorted deltas are sampled at evenly spaced ranks
        (the shape of the sorted curve is kept; the counts in the row titles are over every query).

    Returns
    -------
    altair.Chart
        Bars at x = rank of the query by delta (descending), y = delta, colour win / tie / loss, one row
        per system titled with its wins, ties and losses.

    Examples
    --------
    >>> from lodestar_polars import plot
    >>> per_query = pl.DataFrame(
    ...     {"model": ["a"] * 4 + ["b"] * 4, "query": [1, 2, 3, 4] * 2, "m": [0.2, 0.4, 0.5, 0.3, 0.5, 0.6, 0.5, 0.7]}
    ... )
    >>> chart = plot.per_query_delta(per_query, system="model", baseline="a", metric="m")
    >>> sorted(chart.to_dict()["encoding"])
    ['color', 'row', 'tooltip', 'x', 'y']
    """
    _require_altair()
    import altair as alt

    if isinstance(max_points, bool) or not isinstance(max_points, int) or max_points < 2:
        msg = f"max_points must be an integer >= 2, got {max_points!r}"
        raise ValueError(msg)
    keys = _query_columns(query)
    _require_distinct_roles([("system", system), *(("query", key) for key in keys), ("metric", metric)])
    _require_query_columns(_schema(per_query, "per-query"), keys, [system, metric])
    frame = _collect(per_query, [system, *keys, metric], "per-query")
    if baseline not in frame[system].unique().to_list():
        msg = f"baseline {baseline!r} is not a value of column {system!r}"
        raise ValueError(msg)
    _require_one_row_per_pair(frame, system, keys, "per_query_delta")
    _require_finite(frame, [metric], system, keys)
    # under the chart's own names: a user column named "system", "__value"... is no clash
    query_keys = [f"__lodestar_query_{index}" for index in range(len(keys))]
    renamed = frame.select(
        pl.col(system).alias("__lodestar_system"),
        *(pl.col(key).alias(name) for key, name in zip(keys, query_keys, strict=True)),
        pl.col(metric).alias("__value"),
    )
    is_baseline = pl.col("__lodestar_system").eq(baseline)
    base_values = renamed.filter(is_baseline).select(*query_keys, pl.col("__value").alias("__baseline"))
    paired = (
        renamed.filter(~is_baseline)
        .join(base_values, on=query_keys, how="inner")
        .select(pl.col("__lodestar_system").cast(pl.String).alias("system"), "__value", "__baseline")
        .drop_nulls()
    )
    if paired.is_empty():
        msg = f"no query has {metric!r} for both the baseline {baseline!r} and another system"
        raise ValueError(msg)
    rows = []
    for (name,), group in paired.sort("system").group_by("system", maintain_order=True):
        # equal within 1e-12 counts as a tie, as in `compare`
        values, base = group["__value"].to_numpy(), group["__baseline"].to_numpy()
        deltas = np.sort(_paired_deltas(values, base))[::-1]
        wins, ties, losses = int((deltas > 0).sum()), int((deltas == 0).sum()), int((deltas < 0).sum())
        ranks = np.arange(deltas.size)
        if deltas.size > max_points:
            ranks = np.unique(np.linspace(0, deltas.size - 1, max_points).round().astype(np.int64))
        label = f"{name}: {wins} wins, {ties} ties, {losses} losses (of {deltas.size})"
        rows.append(pl.DataFrame({"system": label, "rank": ranks + 1, "delta": deltas[ranks]}))
    data = pl.concat(rows).with_columns(
        outcome=pl.when(pl.col("delta") > 0)
        .then(pl.lit("win"))
        .when(pl.col("delta") < 0)
        .then(pl.lit("loss"))
        .otherwise(pl.lit("tie"))
    )
    chart: alt.Chart = (
        alt.Chart(_inline(data))
        .mark_bar()
        .encode(
            x=alt.X("rank:O", title="queries, sorted by delta", axis=alt.Axis(labels=False, ticks=False)),
            y=alt.Y("delta:Q", title=f"{metric} - {baseline}"),
            color=alt.Color(
                "outcome:N",
                title=None,
                scale=alt.Scale(domain=list(OUTCOME_COLORS), range=list(OUTCOME_COLORS.values())),
            ),
            row=alt.Row("system:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left")),
            tooltip=["system:N", "rank:O", alt.Tooltip("delta:Q", format="+.4f")],
        )
        .properties(width=480, height=120, title=f"per-query {metric} against {baseline}")
    )
    return chart


def distribution(per_query: pl.DataFrame | pl.LazyFrame, *, system: str, metric: str) -> alt.LayerChart:
    """Box plots of the per-query values of each system, with the mean.

    Parameters
    ----------
    per_query
        A per-query frame with one row per (system, query).
    system
        The system column.
    metric
        The metric column (nulls are left out).

    Returns
    -------
    altair.LayerChart
        Per system: a box from the first to the third quartile (linear interpolation), a tick at the
        median, whiskers to the most extreme values within 1.5 interquartile ranges of the box (Tukey's
        rule, as Vega-Lite's box plot), a diamond at the mean.

    Examples
    --------
    >>> from lodestar_polars import plot
    >>> per_query = pl.DataFrame({"model": ["a"] * 4 + ["b"] * 4, "m": [0.2, 0.4, 0.5, 0.3, 0.5, 0.6, 0.5, 0.7]})
    >>> chart = plot.distribution(per_query, system="model", metric="m")
    >>> [layer["mark"]["type"] for layer in chart.to_dict()["layer"]]
    ['rule', 'bar', 'tick', 'point']
    """
    _require_altair()
    import altair as alt

    _require_distinct_roles([("system", system), ("metric", metric)])
    collected = _collect(per_query, [system, metric], "per-query").drop_nulls(metric)
    if collected.is_empty():
        msg = f"no value in column {metric!r}"
        raise ValueError(msg)
    _require_finite(collected, [metric], system, ())
    # under the chart's own names: a system column named "median", "mean"... is no clash
    frame = collected.select(pl.col(system).alias("system"), pl.col(metric).alias("value"))
    value = pl.col("value")
    quartiles = frame.group_by("system").agg(
        q1=value.quantile(0.25, "linear"),
        median=value.median(),
        q3=value.quantile(0.75, "linear"),
        mean=value.mean(),
        queries=value.len(),
    )
    fences = frame.join(quartiles, on="system").with_columns(
        inside=value.is_between(
            pl.col("q1") - 1.5 * (pl.col("q3") - pl.col("q1")), pl.col("q3") + 1.5 * (pl.col("q3") - pl.col("q1"))
        )
    )
    whiskers = fences.filter("inside").group_by("system").agg(whisker_low=value.min(), whisker_high=value.max())
    data = (
        quartiles.join(whiskers, on="system")
        .with_columns(system=pl.col("system").cast(pl.String))
        .select("system", "q1", "median", "q3", "mean", "whisker_low", "whisker_high", "queries")
        .sort("median", "system", descending=[True, False])
    )
    y = alt.Y("system:N", title=system, sort=data["system"].to_list())
    base = alt.Chart(_inline(data)).encode(y=y)
    tooltip = [
        "system:N",
        "queries:Q",
        *(alt.Tooltip(f"{name}:Q", format=".4f") for name in ("q1", "median", "q3", "mean")),
    ]
    whisker = base.mark_rule().encode(x=alt.X("whisker_low:Q", title=metric), x2="whisker_high:Q")
    box = base.mark_bar(size=16).encode(x="q1:Q", x2="q3:Q", color=alt.Color("system:N", legend=None), tooltip=tooltip)
    median = base.mark_tick(color="white", size=16, thickness=2).encode(x="median:Q")
    mean = base.mark_point(shape="diamond", filled=True, color="black", size=50).encode(x="mean:Q", tooltip=tooltip)
    chart: alt.LayerChart = alt.LayerChart(layer=[whisker, box, median, mean]).properties(
        title=f"per-query {metric}: quartiles, whiskers at 1.5 IQR, mean (diamond)", width=420
    )
    return chart
