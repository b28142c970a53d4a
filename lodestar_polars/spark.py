"""The same metrics on Apache Spark DataFrames: a shell over `_plan`, run once per partition.

The frame is repartitioned by the query column, so every query sits whole in one partition; each partition's
Arrow batches become one Polars frame, `_plan.per_query_plan` evaluates it, and its per-query rows go back to
Spark as Arrow.  Options, column names and dtypes are checked on the driver with the core's own checks, before
any job runs; data checks (NaN scores, duplicated docs, ...) run inside the partitions and reach the caller
wrapped in Spark's `PythonException`, with the core's message in its text.  Because a partition's data checks
see only that partition, counts quoted in those messages ("{n} null value(s)") are per partition.
`ties="input"` and `"reverse"` read the frame's row order as Spark numbers it (`monotonically_increasing_id`
before the shuffle), restored inside each partition.

The means are Spark aggregations over the per-query rows: sum(weight * metric), sum(weight) and the count of
queries whose metric is not null; only that one row reaches the driver.

Needs pyspark 4 with its `sql` extra (pyspark's `mapInArrow` insists on pandas being installed).
Example, not run as a doctest (it starts a Spark session)::

    from pyspark.sql import SparkSession
    from lodestar_polars import spark as lodestar_spark

    session = SparkSession.builder.getOrCreate()
    judged = session.read.parquet("judged_results.parquet")  # query, relevance, score
    per_query = lodestar_spark.ndcg(judged, k=[5, 10])  # Spark DataFrame: query, ndcg@5, ndcg@10
    mean = lodestar_spark.ndcg_mean(judged, k=10)  # one-row Polars DataFrame: ndcg@10, queries, weight_sum
"""

from __future__ import annotations

import dataclasses
import importlib.util
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Literal

import numpy as np
import polars as pl
import pyarrow as pa

from . import _plan
from ._options import (
    NO_QUERY_MESSAGE,
    ZERO_WEIGHTS_MESSAGE,
    Cutoffs,
    Gain,
    Metric,
    MetricOptions,
    NoRelevant,
    check_schema,
    check_single_cutoff,
    make_options,
)

if TYPE_CHECKING:
    from pyspark.sql import Column
    from pyspark.sql import DataFrame as SparkDataFrame
    from pyspark.sql.types import StructType

__all__ = [
    "dcg",
    "dcg_mean",
    "dcg_score",
    "ndcg",
    "ndcg_mean",
    "ndcg_score",
    "reciprocal_rank",
    "reciprocal_rank_mean",
]

Ties = Literal["average", "reverse", "input", "doc", "optimistic", "pessimistic"]
MissingQueries = Literal["skip", "zero"]

IS_JUDGMENT = "__lodestar_is_judgment"
ROW_ORDER = "__lodestar_row_order"


def _column(name: str) -> Column:
    """A top-level column by its exact name (dots and other characters taken literally)."""
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


def polars_schema(schema: StructType) -> pl.Schema:
    """The Polars schema of the frames the partitions will see: Spark -> Arrow -> Polars, as at run time."""
    from pyspark.sql.pandas.types import to_arrow_schema

    frame = pl.from_arrow(to_arrow_schema(schema).empty_table())
    assert isinstance(frame, pl.DataFrame)
    return frame.schema


def spark_schema(schema: pl.Schema) -> StructType:
    """The Spark schema of a Polars schema, through Arrow (String -> StringType, Float64 -> DoubleType...)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(pl.DataFrame(schema=schema).to_arrow().schema)


@dataclasses.dataclass(frozen=True)
class _Evaluation:
    """What the driver checked and what each partition needs: options and the schemas either side."""

    options: MetricOptions
    run: SparkDataFrame
    judgments: SparkDataFrame | None

    @property
    def run_columns(self) -> list[str]:
        o = self.options
        names = [o.query, o.score, o.doc, o.weight]
        if o.qrels is None:
            names.insert(1, o.relevance)
        return list(dict.fromkeys(name for name in names if name is not None))


def _require_spark() -> None:
    # pyspark's mapInArrow checks that pandas is installed, though no pandas code runs here
    missing = [name for name in ("pyspark", "pandas") if importlib.util.find_spec(name) is None]
    if missing:
        msg = f"lodestar_polars.spark needs {' and '.join(missing)}: pip install 'pyspark[sql]>=4,<5'."
        raise ImportError(msg)


def _evaluation(metric: Metric, frame: SparkDataFrame, arguments: dict[str, object]) -> _Evaluation:
    """Validate everything that does not need the data, on the driver, with the core's checks."""
    _require_spark()
    qrels = arguments.pop("qrels", None)
    judgments: SparkDataFrame | None = None
    if qrels is not None:
        from pyspark.sql import DataFrame as SparkDataFrame

        if not isinstance(qrels, SparkDataFrame):
            msg = f"qrels must be a Spark DataFrame here, got {type(qrels).__name__}."
            raise TypeError(msg)
        judgments = qrels
        # the core checks the judgments' columns and dtypes on an empty frame of the same schema
        arguments["qrels"] = pl.LazyFrame(schema=polars_schema(qrels.schema))
    options = make_options(metric, **arguments)  # type: ignore[arg-type]  # every caller passes the typed keywords
    check_schema(options, polars_schema(frame.schema))
    return _Evaluation(options, frame, judgments)


def _evaluate_partition(
    options: MetricOptions, run_columns: list[str], output: pa.Schema
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function Spark runs once per partition: all its batches -> one Polars frame -> the core."""

    def evaluate(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        received = list(batches)
        if not received:
            return
        frame = pl.from_arrow(pa.Table.from_batches(received))
        assert isinstance(frame, pl.DataFrame)
        if ROW_ORDER in frame.columns:
            frame = frame.sort(ROW_ORDER)
        partition_options = options
        if options.qrels is not None:
            q = options.qrels
            is_judgment = pl.col(IS_JUDGMENT)
            judged = frame.filter(is_judgment).select(q.query, q.doc, q.relevance)
            frame = frame.filter(~is_judgment)
            partition_options = dataclasses.replace(options, qrels=dataclasses.replace(q, frame=judged.lazy()))
        per_query = _plan.per_query_plan(frame.select(run_columns).lazy(), partition_options).collect()
        yield from per_query.to_arrow().cast(output).to_batches()

    return evaluate


def _per_query(evaluation: _Evaluation) -> SparkDataFrame:
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import to_arrow_schema

    o = evaluation.options
    empty_run = pl.LazyFrame(schema=polars_schema(evaluation.run.schema))
    output = spark_schema(_plan.per_query_plan(empty_run, o).collect_schema())
    rows = evaluation.run.select(*(_column(name) for name in evaluation.run_columns))
    if evaluation.judgments is not None and o.qrels is not None:
        q = o.qrels
        judged = evaluation.judgments.select(_column(q.query), _column(q.doc), _column(q.relevance)).withColumn(
            IS_JUDGMENT, F.lit(True)
        )
        rows = rows.withColumn(IS_JUDGMENT, F.lit(False)).unionByName(judged, allowMissingColumns=True)
    if o.ties in ("input", "reverse"):
        # the shuffle does not keep row order, which these tie modes read: carry it and restore it
        rows = rows.withColumn(ROW_ORDER, F.monotonically_increasing_id())
    # hash partitioning by query puts each query (and its judgments) whole into one partition
    partitions = rows.repartition(_column(o.query))
    shipped = o
    if o.qrels is not None:  # the partition supplies its own judgments
        shipped = dataclasses.replace(o, qrels=dataclasses.replace(o.qrels, frame=pl.LazyFrame()))
    evaluate = _evaluate_partition(shipped, evaluation.run_columns, to_arrow_schema(output))
    return partitions.mapInArrow(evaluate, output)


def _mean(evaluation: _Evaluation) -> pl.DataFrame:
    """One row, as the Polars `*_mean` methods return it, from Spark sums over the per-query rows."""
    from pyspark.sql import functions as F

    o = evaluation.options
    per_query = _per_query(evaluation)
    weight: Column = _column(o.weight) if o.weight is not None else F.lit(1.0)
    sums: list[Column] = []
    for name in o.metric_columns:
        metric = _column(name)
        sums.append(F.sum(weight * metric).alias(f"weighted_{name}"))
        sums.append(F.sum(F.when(metric.isNotNull(), weight)).alias(f"weight_{name}"))
    sums.append(F.count(_column(o.metric_columns[0])).alias("queries"))
    totals = per_query.agg(*sums).first()
    assert totals is not None
    queries = int(totals["queries"])
    weight_sum = float(totals[f"weight_{o.metric_columns[0]}"] or 0.0)
    if queries == 0:
        raise ValueError(NO_QUERY_MESSAGE)
    if weight_sum == 0:
        raise ZeroDivisionError(ZERO_WEIGHTS_MESSAGE)
    columns: dict[str, pl.Series] = {}
    with np.errstate(divide="ignore", invalid="ignore"):  # as Polars divides: x / 0.0 is inf or NaN
        for name in o.metric_columns:
            numerator = np.float64(totals[f"weighted_{name}"] or 0.0)
            denominator = np.float64(totals[f"weight_{name}"] or 0.0)
            columns[name] = pl.Series(name, [float(numerator / denominator)], pl.Float64)
    columns["queries"] = pl.Series("queries", [queries], pl.UInt32)
    columns["weight_sum"] = pl.Series("weight_sum", [weight_sum], pl.Float64)
    if evaluation.judgments is not None and o.qrels is not None:
        run_queries = evaluation.run.select(_column(o.query)).distinct()
        judged_queries = evaluation.judgments.select(_column(o.qrels.query)).distinct()
        unjudged = run_queries.join(judged_queries, on=o.query, how="left_anti").count()
        columns["queries_without_judgments"] = pl.Series("queries_without_judgments", [unjudged], pl.UInt32)
    return pl.DataFrame(list(columns.values()))


def _score(metric: Metric, frame: SparkDataFrame, k: int | None, arguments: dict[str, object]) -> float:
    check_single_cutoff(metric, k)
    return float(_mean(_evaluation(metric, frame, {**arguments, "k": k})).item(0, 0))


def ndcg(
    frame: SparkDataFrame,
    *,
    query: str = "query",
    relevance: str = "relevance",
    score: str = "score",
    doc: str | None = None,
    k: Cutoffs = None,
    ties: Ties = "average",
    gain: Gain = "linear",
    weight: str | None = None,
    no_relevant: NoRelevant = 0.0,
    qrels: SparkDataFrame | None = None,
    missing_queries: MissingQueries = "skip",
) -> SparkDataFrame:
    """NDCG per query as a Spark DataFrame: the query column, `ndcg` / `ndcg@{k}`, then the weight.

    Options as `DataFrame.rank_metrics.ndcg`; `qrels` is a Spark DataFrame of judgments (query, doc,
    relevance, under the run's column names).  Rows come in no particular order: `.orderBy(query)` if needed.
    """
    return _per_query(
        _evaluation(
            "ndcg",
            frame,
            {
                "query": query,
                "relevance": relevance,
                "score": score,
                "doc": doc,
                "k": k,
                "ties": ties,
                "gain": gain,
                "weight": weight,
                "no_relevant": no_relevant,
                "qrels": qrels,
                "missing_queries": missing_queries,
            },
        )
    )


def dcg(
    frame: SparkDataFrame,
    *,
    query: str = "query",
    relevance: str = "relevance",
    score: str = "score",
    doc: str | None = None,
    k: Cutoffs = None,
    ties: Ties = "average",
    gain: Gain = "linear",
    weight: str | None = None,
    log_base: float = 2.0,
    qrels: SparkDataFrame | None = None,
    missing_queries: MissingQueries = "skip",
) -> SparkDataFrame:
    """DCG per query as a Spark DataFrame (`dcg` / `dcg@{k}`); options as `ndcg`, plus `log_base`."""
    return _per_query(
        _evaluation(
            "dcg",
            frame,
            {
                "query": query,
                "relevance": relevance,
                "score": score,
                "doc": doc,
                "k": k,
                "ties": ties,
                "gain": gain,
                "weight": weight,
                "log_base": log_base,
                "qrels": qrels,
                "missing_queries": missing_queries,
            },
        )
    )


def reciprocal_rank(
    frame: SparkDataFrame,
    *,
    query: str = "query",
    relevance: str = "relevance",
    score: str = "score",
    doc: str | None = None,
    k: Cutoffs = None,
    ties: Ties = "average",
    threshold: float = 0.0,
    weight: str | None = None,
    qrels: SparkDataFrame | None = None,
    missing_queries: MissingQueries = "skip",
) -> SparkDataFrame:
    """Reciprocal rank per query as a Spark DataFrame (`reciprocal_rank` / `reciprocal_rank@{k}`)."""
    return _per_query(
        _evaluation(
            "reciprocal_rank",
            frame,
            {
                "query": query,
                "relevance": relevance,
                "score": score,
                "doc": doc,
                "k": k,
                "ties": ties,
                "gain": "linear",
                "weight": weight,
                "threshold": threshold,
                "qrels": qrels,
                "missing_queries": missing_queries,
            },
        )
    )


def ndcg_mean(
    frame: SparkDataFrame,
    *,
    query: str = "query",
    relevance: str = "relevance",
    score: str = "score",
    doc: str | None = None,
    k: Cutoffs = None,
    ties: Ties = "average",
    gain: Gain = "linear",
    weight: str | None = None,
    no_relevant: NoRelevant = 0.0,
    qrels: SparkDataFrame | None = None,
    missing_queries: MissingQueries = "skip",
) -> pl.DataFrame:
    """The (weighted) mean NDCG per cut-off as a one-row Polars DataFrame, as `rank_metrics.ndcg_mean` gives.

    Columns: the metric columns, `queries`, `weight_sum` (and `queries_without_judgments` with qrels).
    """
    return _mean(
        _evaluation(
            "ndcg",
            frame,
            {
                "query": query,
                "relevance": relevance,
                "score": score,
                "doc": doc,
                "k": k,
                "ties": ties,
                "gain": gain,
                "weight": weight,
                "no_relevant": no_relevant,
                "qrels": qrels,
                "missing_queries": missing_queries,
            },
        )
    )


def dcg_mean(
    frame: SparkDataFrame,
    *,
    query: str = "query",
    relevance: str = "relevance",
    score: str = "score",
    doc: str | None = None,
    k: Cutoffs = None,
    ties: Ties = "average",
    gain: Gain = "linear",
    weight: str | None = None,
    log_base: float = 2.0,
    qrels: SparkDataFrame | None = None,
    missing_queries: MissingQueries = "skip",
) -> pl.DataFrame:
    """The (weighted) mean DCG per cut-off as a one-row Polars DataFrame (see `ndcg_mean`)."""
    return _mean(
        _evaluation(
            "dcg",
            frame,
            {
                "query": query,
                "relevance": relevance,
                "score": score,
                "doc": doc,
                "k": k,
                "ties": ties,
                "gain": gain,
                "weight": weight,
                "log_base": log_base,
                "qrels": qrels,
                "missing_queries": missing_queries,
            },
        )
    )


def reciprocal_rank_mean(
    frame: SparkDataFrame,
    *,
    query: str = "query",
    relevance: str = "relevance",
    score: str = "score",
    doc: str | None = None,
    k: Cutoffs = None,
    ties: Ties = "average",
    threshold: float = 0.0,
    weight: str | None = None,
    qrels: SparkDataFrame | None = None,
    missing_queries: MissingQueries = "skip",
) -> pl.DataFrame:
    """The (weighted) mean reciprocal rank (MRR) per cut-off as a one-row Polars DataFrame."""
    return _mean(
        _evaluation(
            "reciprocal_rank",
            frame,
            {
                "query": query,
                "relevance": relevance,
                "score": score,
                "doc": doc,
                "k": k,
                "ties": ties,
                "gain": "linear",
                "weight": weight,
                "threshold": threshold,
                "qrels": qrels,
                "missing_queries": missing_queries,
            },
        )
    )


def ndcg_score(
    frame: SparkDataFrame,
    *,
    query: str = "query",
    relevance: str = "relevance",
    score: str = "score",
    doc: str | None = None,
    k: int | None = None,
    ties: Ties = "average",
    gain: Gain = "linear",
    weight: str | None = None,
    no_relevant: NoRelevant = 0.0,
    qrels: SparkDataFrame | None = None,
    missing_queries: MissingQueries = "skip",
) -> float:
    """The (weighted) mean NDCG as one float: scikit-learn's `ndcg_score` number."""
    return _score(
        "ndcg",
        frame,
        k,
        {
            "query": query,
            "relevance": relevance,
            "score": score,
            "doc": doc,
            "ties": ties,
            "gain": gain,
            "weight": weight,
            "no_relevant": no_relevant,
            "qrels": qrels,
            "missing_queries": missing_queries,
        },
    )


def dcg_score(
    frame: SparkDataFrame,
    *,
    query: str = "query",
    relevance: str = "relevance",
    score: str = "score",
    doc: str | None = None,
    k: int | None = None,
    ties: Ties = "average",
    gain: Gain = "linear",
    weight: str | None = None,
    log_base: float = 2.0,
    qrels: SparkDataFrame | None = None,
    missing_queries: MissingQueries = "skip",
) -> float:
    """The (weighted) mean DCG as one float: scikit-learn's `dcg_score` number."""
    return _score(
        "dcg",
        frame,
        k,
        {
            "query": query,
            "relevance": relevance,
            "score": score,
            "doc": doc,
            "ties": ties,
            "gain": gain,
            "weight": weight,
            "log_base": log_base,
            "qrels": qrels,
            "missing_queries": missing_queries,
        },
    )
