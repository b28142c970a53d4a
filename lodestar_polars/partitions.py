"""Evaluating data of any size in bounded memory, one query-disjoint partition at a time.

Polars' streaming engine holds the whole input of a `rank().over(query)` window, so one plan over a whole
dataset needs memory in proportion to the dataset (measured: 100M rows, 1.6 GB of raw columns, 6.3 GB peak).
Split into partitions that each hold whole queries, every partition is an independent evaluation needing
memory in proportion to the partition, and the per-partition results combine exactly: the per-query rows
are simply the union, and each mean is a weighted mean, so sum(weight * metric) and sum(weight) add up.

`sink` does all of it: one streaming pass writes the source into `partitions` hash buckets of the query key
(the judgments too, with `qrels=`), then each bucket is evaluated on its own, its per-query rows written and
its sums kept; the means come out as the single plan's to rounding (1e-12).

>>> import tempfile
>>> from pathlib import Path
>>> import polars as pl
>>> from lodestar_polars import partitions
>>> frame = pl.LazyFrame({"query": [1, 1, 2, 2], "relevance": [1, 0, 0, 1], "score": [0.9, 0.1, 0.9, 0.1]})
>>> with tempfile.TemporaryDirectory() as folder:
...     mean = partitions.sink(frame, Path(folder) / "ndcg", metric="ndcg", partitions=2, k=[1, None])
...     per_query = pl.read_parquet(Path(folder) / "ndcg").sort("query")
>>> mean.select("ndcg@1", pl.col("ndcg").round(4), "queries").row(0)
(0.5, 0.8155, 2)
>>> per_query["ndcg@1"].to_list()
[1.0, 0.0]

`combine_means` combines mean frames computed separately over disjoint sets of queries (your own partitions):

>>> import lodestar_polars
>>> eager = frame.collect()
>>> parts = [eager.filter(pl.col("query") == q) for q in (1, 2)]
>>> partitions.combine_means([part.rank_metrics.ndcg_mean() for part in parts])["ndcg"].round(4).to_list()
[0.8155]
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from ._mean import QUERIES, UNJUDGED, finish_means, sum_aggregations, summand, summary_of
from ._spec import ZERO_WEIGHTS_MESSAGE
from .namespace import RankMetricsLazyFrame, rank_metrics

__all__ = ["combine_means", "sink"]

COUNT_COLUMNS = ("queries", "weight_sum", "queries_without_judgments")
_PARTITION = "__lodestar_partition"
_UNJUDGED = "queries_without_judgments"
# the option keywords that name columns of the source; anything else the methods take is a setting
_COLUMN_OPTIONS = ("query", "relevance", "score", "doc", "weight", "by")
_DEFAULT_COLUMNS = {"query": "query", "relevance": "relevance", "score": "score"}
# the options that take a column or an expression evaluated on each row
_VALUE_OPTIONS = ("score", "relevance", "weight")


def sink(
    source: pl.LazyFrame | pl.DataFrame,
    path: str | Path,
    *,
    metric: str = "ndcg",
    partitions: int,
    progress: bool = False,
    **options: Any,
) -> pl.DataFrame:
    """Evaluate `metric` over a frame of any size in bounded memory, write the per-query rows to `path`,
    and return the mean frame.

    One streaming pass writes `source` into `partitions` buckets by a hash of the query key (a temporary
    folder next to `path`); each bucket is then evaluated on its own, so peak memory follows the largest
    bucket, not the data.  The per-query rows are those of `source.rank_metrics.<metric>(**options)` and the
    returned frame is that of `<metric>_mean(**options)`, the same numbers as the single plan (summed in
    another order: equal to about 1e-15).

    Parameters
    ----------
    source
        The rows to evaluate (a LazyFrame of any size, e.g. `pl.scan_parquet(...)`; a DataFrame works too).
        It is read exactly once.
    path
        Where the per-query rows go: a path ending in ``.parquet`` gets one file; any other path becomes a
        folder with one file per partition (``part-00000.parquet``, ...).  Rows are sorted by (by..., query)
        within each partition, not across them.  The path must not exist.  Writing is atomic: everything is
        written into a temporary folder beside `path` (it needs room for a copy of the source's columns) and
        renamed on success, so an error leaves nothing at `path`.
    metric
        The `.rank_metrics` method: "ndcg", "dcg", "reciprocal_rank", or any other method that has a
        `_mean` form.
    partitions
        How many hash buckets of the query key.  Peak memory is about that of a single plan over
        1 / `partitions` of the data (a query is never split: a bucket holds at least the largest query).
    progress
        Show a progress bar over the partitions (needs tqdm: the `progress` extra).
    **options
        Every option of the metric method (`k`, `ties`, `weight`, `qrels`, `missing_queries`, `by`, ...).
        They are checked against the source's schema before anything is read.  With `qrels=`, each bucket
        gets the judgments of its own queries (the judgments are bucketed by the same hash).  With `by=`,
        the buckets still split by the query key only, so a query stays in one bucket whatever its groups
        (and with `missing_queries="zero"` a judged query is scored in every group of the whole run).
        Expression inputs (`score=`, `relevance=`, `weight=`) are evaluated over the whole source in the
        pass that writes the buckets (the relevance over the whole judgments with `qrels=`), as the single
        plan evaluates them, so an aggregate or a window (`pl.col("score") - pl.col("score").mean()`,
        `pl.col("score").median().over("model")`) gives the single plan's values; that pass holds what the
        expression needs in memory (a window over the whole source holds its input).

    Returns
    -------
    pl.DataFrame
        The frame `<metric>_mean(**options)` returns: one mean column per cut-off, `queries`,
        `weight_sum` (and `queries_without_judgments` with qrels); one row per by group with `by=`.

    Raises
    ------
    ValueError, TypeError
        For a bad `metric`, `partitions` or option, before reading the data; for bad data (the errors of
        the metric, raised from the first partition holding the fault), and the mean's errors: "no query
        to average" and ZeroDivisionError "Weights sum to zero, can't be normalized".
    FileExistsError
        When `path` exists.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import polars as pl
    >>> from lodestar_polars.partitions import sink
    >>> runs = pl.LazyFrame(
    ...     {"query": [1, 1, 1, 2, 2], "relevance": [3, 0, 1, 0, 2], "score": [0.2, 0.9, 0.5, 0.1, 0.7]}
    ... )
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     mean = sink(runs, Path(folder) / "rr.parquet", metric="reciprocal_rank", partitions=4)
    ...     per_query = pl.read_parquet(Path(folder) / "rr.parquet").sort("query")
    >>> mean
    shape: (1, 3)
    ┌─────────────────┬─────────┬────────────┐
    │ reciprocal_rank ┆ queries ┆ weight_sum │
    │ ---             ┆ ---     ┆ ---        │
    │ f64             ┆ u32     ┆ f64        │
    ╞═════════════════╪═════════╪════════════╡
    │ 0.75            ┆ 2       ┆ 2.0        │
    └─────────────────┴─────────┴────────────┘
    >>> per_query["reciprocal_rank"].to_list()  # query 1: first relevant doc at position 2; query 2: at 1
    [0.5, 1.0]
    """
    if isinstance(source, pl.DataFrame):
        source = source.lazy()
    if not isinstance(source, pl.LazyFrame):
        msg = f"sink takes a polars LazyFrame or DataFrame as source, got {type(source).__name__}."
        raise TypeError(msg)
    if isinstance(partitions, bool) or not isinstance(partitions, int):
        msg = f"partitions must be a positive int, got {partitions!r} ({type(partitions).__name__})."
        raise TypeError(msg)
    if partitions < 1:
        msg = f"partitions must be at least 1, got {partitions}."
        raise ValueError(msg)
    path = Path(path)
    if path.exists():
        msg = f"{str(path)!r} exists; sink writes a new file or folder, so remove it or pick another path."
        raise FileExistsError(msg)
    if not path.parent.is_dir():
        msg = f"the folder {str(path.parent)!r} of path does not exist."
        raise FileNotFoundError(msg)
    _check_metric(metric)
    # every option and column error raises here, before any data is read
    per_query_schema = _method(source, metric)(**options).collect_schema()
    mean_schema = _method(source, metric + "_mean")(**options).collect_schema()
    bar = _progress_bar(partitions) if progress else None

    query = _names(options.get("query", "query"))
    by = _names(options.get("by"))
    qrels = options.get("qrels")
    metric_columns = [name for name in mean_schema.names() if name not in (*by, *COUNT_COLUMNS)]
    weight = [name for name in per_query_schema.names() if name not in (*by, *query, *metric_columns)]

    source, qrels, options = _store_expression_inputs(source, qrels, options)
    work = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent))
    try:
        projected = _needed_columns(source, metric, options)
        rows_folder = _write_buckets(projected, query, partitions, work / "rows")
        if qrels is not None:
            qrels_folder = _write_buckets(qrels, query, partitions, work / "qrels")
        output = work / "per_query"
        output.mkdir()
        every_group = None
        if qrels is not None and by and options.get("missing_queries") == "zero":
            every_group = pl.scan_parquet(rows_folder / "**" / "*.parquet").select(by).unique().collect()
        sums = []
        for index in range(partitions):
            rows = _bucket(rows_folder, index)
            judged = _bucket(qrels_folder, index) if qrels is not None else None
            if rows is not None or judged is not None:  # a bucket with judgments only can score queries 0
                run = projected.clear() if rows is None else rows
                if qrels is not None and judged is None:
                    judged = qrels.clear()
                per_query, partial = _evaluate(run, judged, metric, options, every_group)
                per_query.write_parquet(output / f"part-{index:05d}.parquet")
                sums.append(_partial_sums(per_query, metric_columns, weight, by, partial))
            if bar is not None:
                bar.update(1)
        if not sums:  # no row and no judgment at all: the single plan's answer on an empty frame
            empty_qrels = qrels.clear() if qrels is not None else None
            per_query, partial = _evaluate(projected.clear(), empty_qrels, metric, options, None)
            per_query.write_parquet(output / "part-00000.parquet")
            sums.append(_partial_sums(per_query, metric_columns, weight, by, partial))
        mean = _mean_from_sums(sums, metric_columns, by, weight, mean_schema)
        if path.suffix == ".parquet":
            single = work / "per_query.parquet"
            pl.scan_parquet(output / "*.parquet").sink_parquet(single)
            single.rename(path)
        else:
            output.rename(path)
    finally:
        if bar is not None:
            bar.close()
        shutil.rmtree(work, ignore_errors=True)
    return mean


def _store_expression_inputs(
    source: pl.LazyFrame, qrels: pl.DataFrame | pl.LazyFrame | None, options: dict[str, Any]
) -> tuple[pl.LazyFrame, pl.LazyFrame | None, dict[str, Any]]:
    """The source (and judgments) with each expression input (score, relevance, weight) evaluated into a
    column of its own, and the options reading those columns under the expressions' names.

    The expressions are evaluated over the whole source in the pass that writes the buckets, as the single
    plan evaluates them: an aggregate or window (`pl.col("score").mean()`, `.over("model")`) sees every
    row, not one bucket's.  The relevance expression is evaluated over the judgments when there are some.
    """
    taken = set(source.collect_schema().names())
    qrels_frame = qrels.lazy() if qrels is not None else None
    if qrels_frame is not None:
        taken |= set(qrels_frame.collect_schema().names())
    on_source: list[pl.Expr] = []
    on_qrels: list[pl.Expr] = []
    stored_options = dict(options)
    for role in _VALUE_OPTIONS:
        value = options.get(role)
        if not isinstance(value, pl.Expr):
            continue
        stored = f"__lodestar_sink_{role}"
        while stored in taken:
            stored += "_"
        taken.add(stored)
        # the name `_spec` gives an expression input, so the outputs and messages keep it
        name = value.meta.output_name(raise_if_undetermined=False) or str(value)
        stored_options[role] = pl.col(stored).alias(name)
        judged_relevance = role == "relevance" and qrels_frame is not None
        (on_qrels if judged_relevance else on_source).append(value.alias(stored))
    if on_source:
        source = source.with_columns(on_source)
    if qrels_frame is not None:
        if on_qrels:
            qrels_frame = qrels_frame.with_columns(on_qrels)
        stored_options["qrels"] = qrels_frame
    return source, qrels_frame, stored_options


def _evaluate(
    run: pl.LazyFrame,
    judged: pl.LazyFrame | None,
    metric: str,
    options: dict[str, Any],
    every_group: pl.DataFrame | None,
) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """One bucket: its per-query rows (sorted by keys) and, with qrels, its run queries without judgments."""
    if judged is None:
        return _method(run, metric)(**options).collect(engine="streaming"), None
    query = _names(options.get("query", "query"))
    by = _names(options.get("by"))
    plans = [_method(run, metric)(**{**options, "qrels": judged}), _unjudged(run, judged, query, by)]
    per_query, unjudged = pl.collect_all(plans, engine="streaming")
    if every_group is not None:
        per_query = _score_missing_in_other_groups(per_query, run, judged, metric, options, every_group)
    return per_query, unjudged


def _score_missing_in_other_groups(
    per_query: pl.DataFrame,
    run: pl.LazyFrame,
    judged: pl.LazyFrame,
    metric: str,
    options: dict[str, Any],
    every_group: pl.DataFrame,
) -> pl.DataFrame:
    """With by= and missing_queries="zero", the single plan scores every judged query missing from a group's
    run in that group, for every group of the whole run; a bucket only knows its own groups.  A missing query
    retrieved nothing, so its row does not depend on the group: score the bucket's judged queries against an
    empty run once (without by) and give those rows to each group absent from the bucket."""
    by = _names(options["by"])
    query = _names(options.get("query", "query"))
    absent = every_group.join(per_query.select(by).unique(), on=by, how="anti", nulls_equal=True)
    if absent.height == 0:
        return per_query
    without_by = {key: value for key, value in options.items() if key != "by"}
    missing = _method(run.clear(), metric)(**{**without_by, "qrels": judged}).collect(engine="streaming")
    extra = absent.join(missing, how="cross").select(per_query.columns)
    return pl.concat([per_query, extra.cast(per_query.schema)]).sort([*by, *query], nulls_last=True)


def _names(value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, pl.Expr):
        return value.meta.root_names()
    if isinstance(value, Iterable):
        return [name for item in value for name in _names(item)]
    return []


def _namespace_methods() -> list[str]:
    namespace = RankMetricsLazyFrame
    return sorted(name for name in dir(namespace) if not name.startswith("_") and hasattr(namespace, name + "_mean"))


def _check_metric(metric: object) -> None:
    known = _namespace_methods()
    if metric not in known:
        msg = f"metric must be a .rank_metrics method with a _mean form, one of {', '.join(known)}; got {metric!r}."
        raise ValueError(msg)


def _method(frame: pl.LazyFrame, name: str) -> Any:
    return getattr(rank_metrics(frame), name)


def _needed_columns(source: pl.LazyFrame, metric: str, options: dict[str, Any]) -> pl.LazyFrame:
    """The source reduced to the columns the options name, so the buckets hold no unused column; the whole
    source when the method would not run on the reduced one (a column named some other way)."""
    names = {name for key in _COLUMN_OPTIONS for name in _names(options.get(key, _DEFAULT_COLUMNS.get(key)))}
    schema = source.collect_schema()
    kept = [name for name in schema.names() if name in names]
    reduced = source.select(kept)
    try:
        _method(reduced, metric)(**options).collect_schema()
    except pl.exceptions.ColumnNotFoundError:
        return source
    return reduced


def _partition_key(query: list[str]) -> pl.Expr:
    key = pl.col(query[0]) if len(query) == 1 else pl.struct(query)
    return key.hash()


def _write_buckets(frame: pl.LazyFrame, query: list[str], partitions: int, folder: Path) -> Path:
    """One streaming pass writing the rows into `folder/<partition>=<i>/`, row order kept within a bucket
    (ties="input" and "reverse" depend on it)."""
    target = pl.PartitionBy(
        folder,
        key={_PARTITION: _partition_key(query) % partitions},
        include_key=False,
        approximate_bytes_per_file=None,
    )
    frame.sink_parquet(target, compression="lz4", mkdir=True, maintain_order=True, engine="streaming")
    return folder


def _bucket(folder: Path, index: int) -> pl.LazyFrame | None:
    bucket = folder / f"{_PARTITION}={index}"
    files = sorted(bucket.glob("*.parquet"))
    return pl.scan_parquet(files) if files else None


def _unjudged(run: pl.LazyFrame, qrels: pl.LazyFrame, query: list[str], by: list[str]) -> pl.LazyFrame:
    """Run queries (per by group) with no judgment at all: the mean's `queries_without_judgments`."""
    judged = qrels.select(query).unique()
    unjudged = run.select(*by, *query).unique().join(judged, on=query, how="anti")
    return unjudged.group_by(by).agg(pl.len().alias(_UNJUDGED)) if by else unjudged.select(pl.len().alias(_UNJUDGED))


def _partial_sums(
    per_query: pl.DataFrame,
    metric_columns: list[str],
    weight: list[str],
    by: list[str],
    unjudged: pl.DataFrame | None,
) -> pl.DataFrame:
    """Per by group, the sums the mean is made of (`_mean.sum_aggregations`): they add up across buckets."""
    w = pl.col(weight[0]).cast(pl.Float64) if weight else pl.lit(1.0, pl.Float64)
    aggregations = sum_aggregations(metric_columns, w, pl.lit(True))
    sums = per_query.group_by(by).agg(aggregations) if by else per_query.select(aggregations)
    sums = sums.with_columns(pl.col(QUERIES).cast(pl.Int64))
    if unjudged is None:
        return sums
    unjudged = unjudged.select(*by, pl.col(_UNJUDGED).cast(pl.Int64).alias(UNJUDGED))
    if not by:
        return pl.concat([sums, unjudged], how="horizontal")
    joined = sums.join(unjudged, on=by, how="full", coalesce=True, nulls_equal=True)
    return joined.with_columns(pl.all().exclude(by).fill_null(0))


def _mean_from_sums(
    sums: Sequence[pl.DataFrame], metric_columns: list[str], by: list[str], weight: list[str], schema: pl.Schema
) -> pl.DataFrame:
    """The mean frame from the buckets' sums, by the single plan's rules and errors (`_mean.finish_means`)."""
    stacked = pl.concat(sums, how="diagonal_relaxed")
    totals = [pl.all().exclude(by).sum()]
    combined = stacked.group_by(by).agg(totals) if by else stacked.select(totals)
    combined = combined.with_columns(pl.col(QUERIES).cast(pl.UInt32))
    with_unjudged = UNJUDGED in combined.columns
    weight_name = weight[0] if weight else None
    mean = finish_means(combined.lazy(), by, by, metric_columns, weight_name, with_unjudged).collect()
    return mean.select(pl.col(name).cast(dtype) for name, dtype in schema.items())


def _progress_bar(total: int) -> Any:
    try:
        from tqdm.auto import tqdm
    except ImportError as error:
        msg = "progress=True needs tqdm: pip install 'lodestar-polars[progress]' (or pip install tqdm)."
        raise ImportError(msg) from error
    return tqdm(total=total, desc="partitions", unit="partition")


def combine_means(means: Sequence[pl.DataFrame], by: str | Sequence[str] | None = None) -> pl.DataFrame:
    """Combine mean frames computed over disjoint sets of queries into the frame the whole would give.

    Each mean is weighted by its `weight_sum` and the counts (`queries`, `weight_sum`,
    `queries_without_judgments`) are added.  A measure whose summary is not the mean is combined as its own:
    a geometric mean (gm_map, gm_bpref) as exp of the `weight_sum`-weighted mean of the parts' logs, a sum
    (num_ret, num_rel, ...) as the sum of the parts.  A null mean (a part without query) adds nothing to its
    column; `queries` and `weight_sum` count the first mean's queries, so a part whose first mean is null
    adds nothing to them either.  The frames must not share a query (each must hold whole queries).  Exact
    for the mean columns whose queries are those counted in `weight_sum`: always, unless `no_relevant=None`
    leaves out different queries at different cut-offs (`sink` is exact even then).

    Parameters
    ----------
    means
        Frames of the `*_mean` methods, all with the same columns: one row each without `by`; with `by`,
        at most one row per by group each (a group may be missing from some frames).
    by
        The by column(s) the means were computed with; groups are combined separately and the result is
        sorted by them.

    Returns
    -------
    pl.DataFrame
        One row (one per by group with `by`), the columns and types of the inputs.

    Raises
    ------
    ValueError
        Frames of different columns, a repeated by group, a NaN or infinite mean, a negative or non-integer
        count, a weight_sum that is not a finite non-negative number (naming the frame, column and group);
        a first mean null in every frame (no query to average).
    ZeroDivisionError
        Weights summing to zero.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars.partitions import combine_means
    >>> first = pl.DataFrame({"ndcg": [0.5], "queries": [2], "weight_sum": [2.0]})
    >>> second = pl.DataFrame({"ndcg": [0.8], "queries": [1], "weight_sum": [1.0]})
    >>> combine_means([first, second]).row(0)
    (0.6, 3, 3.0)
    >>> a = pl.DataFrame({"group": ["x", "y"], "ndcg": [0.5, 1.0], "queries": [1, 1], "weight_sum": [1.0, 1.0]})
    >>> b = pl.DataFrame({"group": ["x"], "ndcg": [0.0], "queries": [1], "weight_sum": [3.0]})
    >>> combine_means([a, b], by="group").rows()
    [('x', 0.125, 2, 4.0), ('y', 1.0, 1, 1.0)]
    """
    if not means:
        msg = "combine_means needs at least one mean frame."
        raise ValueError(msg)
    groups = _names(by)
    columns = means[0].columns
    for frame in means:
        if frame.columns != columns or (not groups and frame.height != 1):
            expected = "frames with the same columns" if groups else "one-row frames with the same columns"
            msg = f"combine_means takes {expected}, got {frame.columns} ({frame.height} rows)."
            raise ValueError(msg)
    if "weight_sum" not in columns:
        msg = f"combine_means takes the frames of the *_mean methods (with 'weight_sum'), got columns {columns}."
        raise ValueError(msg)
    missing = [name for name in groups if name not in columns]
    if missing:
        msg = f"by column {missing[0]!r} is not a column of the mean frames {columns}."
        raise ValueError(msg)
    for frame in means:
        repeated = frame.filter(pl.struct(groups).is_duplicated()) if groups else frame.clear()
        if repeated.height:
            group = repeated.select(groups).row(0)
            msg = f"combine_means takes one row per by group in each frame; group {group} repeats."
            raise ValueError(msg)
    values = [name for name in columns if name not in groups]
    if all(name in COUNT_COLUMNS for name in values):
        msg = f"combine_means takes the frames of the *_mean methods (with a mean column), got columns {columns}."
        raise ValueError(msg)
    for index, frame in enumerate(means):
        _check_mean_frame(index, frame, groups, values)
    stacked = pl.concat(means)
    averaged = [name for name in values if name not in COUNT_COLUMNS]
    # queries and weight_sum count the queries of the first mean: a part without one adds nothing to them
    entered = pl.col(averaged[0]).is_not_null()
    combined_columns = [
        _combined_mean(name)
        if name in averaged
        else pl.col(name).filter(entered).sum()
        if name in ("queries", "weight_sum")
        else pl.col(name).sum()
        for name in values
    ]
    if groups:
        combined = stacked.group_by(groups).agg(combined_columns).sort(groups, nulls_last=True)
    else:
        combined = stacked.select(combined_columns)
    without_query = combined.filter(pl.col(averaged[0]).is_null())
    if without_query.height:
        in_group = f" in group {without_query.select(groups).row(0)}" if groups else ""
        msg = f"no query to average{in_group}: the mean {averaged[0]!r} is null in every frame."
        raise ValueError(msg)
    zero_weight = pl.any_horizontal(pl.col("weight_sum") == 0, *(pl.col(name).is_nan() for name in averaged))
    if combined.select(zero_weight.any()).item():
        raise ZeroDivisionError(ZERO_WEIGHTS_MESSAGE)
    return combined.select(pl.col(name).cast(stacked.schema[name]) for name in columns)


def _combined_mean(name: str) -> pl.Expr:
    """The parts' summaries combined as the column's measure forms its summary (`_mean.summary_of`): means
    weighted by their weight_sum; geometric means (gm_map) as exp of the weighted mean of their logs (each
    part's log is its weighted mean of logs); sums (num_ret) added.  A part whose value is null (no query) adds
    nothing."""
    summary = summary_of(name)
    present = pl.col(name).is_not_null()
    if summary == "sum":
        return pl.when(present.any()).then(pl.col(name).filter(present).sum()).alias(name)
    weighted = (summand(pl.col(name), summary) * pl.col("weight_sum")).filter(present).sum()
    mean = weighted / pl.col("weight_sum").filter(present).sum()
    return pl.when(present.any()).then(mean.exp() if summary == "geometric" else mean).alias(name)


def _check_mean_frame(index: int, frame: pl.DataFrame, groups: list[str], values: list[str]) -> None:
    """The values a mean frame can hold: finite means (or null: no query), counts that are non-negative
    integers, a finite non-negative weight_sum."""
    for name in values:
        dtype = frame.schema[name]
        if name in ("queries", _UNJUDGED):
            kind = "a non-negative integer"
            accepted = dtype.is_integer()
            bad = pl.col(name).is_null() | (pl.col(name) < 0)
        elif name == "weight_sum":
            kind = "a finite non-negative number"
            accepted = dtype.is_numeric()
            bad = pl.col(name).is_null() | ~pl.col(name).is_finite() | (pl.col(name) < 0)
        else:
            kind = "a finite number or null (no query)"
            accepted = dtype.is_numeric()
            bad = ~pl.col(name).is_finite()
        if not accepted:
            msg = f"combine_means: column {name!r} of means[{index}] has dtype {dtype}; each value must be {kind}."
            raise ValueError(msg)
        offending = frame.filter(bad.fill_null(False))
        if offending.height:
            row = offending.row(0, named=True)
            group = f" (group {tuple(row[key] for key in groups)})" if groups else ""
            msg = f"combine_means: column {name!r} of means[{index}]{group} is {row[name]!r}; it must be {kind}."
            raise ValueError(msg)
