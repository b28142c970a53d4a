"""The same measures on Apache Spark DataFrames: a shell over `_plan`, run once per partition.

The frame is repartitioned by the query key, so every query sits whole in one partition (with all its `by`
groups and its judgments); each partition's Arrow batches become one Polars frame, `_plan` evaluates it, and
its per-query rows go back to Spark as Arrow.  Options, column names and dtypes are checked on the driver with
the core's own checks, before any job runs; data checks (NaN scores, duplicated docs, ...) run inside the
partitions and reach the caller wrapped in Spark's `PythonException`, with the core's message in its text.
Because a partition's data checks see only that partition, counts quoted in those messages ("{n} null
value(s)") are per partition.  `ties="input"` and `"reverse"` read the frame's row order as Spark numbers it
(`monotonically_increasing_id` before the shuffle), restored inside each partition.

Only the columns the measures read are shipped, under generated names (so any column name works: dots,
spaces, backticks, `__` prefixes), and renamed back inside the partition; `relevance`, `score` and `weight`
expressions are evaluated there by Polars on the columns they name.

The means are Spark aggregations over the per-query rows (sum(weight * metric), sum(weight), counts per
`by` group); only those sums reach the driver, where `mean_of_sums.finish_means` turns them into the mean frame
and its errors, as for Polars frames.

Needs pyspark 4 with its `sql` extra (pyspark's `mapInArrow` insists on pandas being installed).
"""

from __future__ import annotations

import dataclasses
import importlib.util
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, TypeVar

import polars as pl
import pyarrow as pa

from . import _mean as mean_of_sums
from . import _plan, _spec
from ._docs import FRAME, PARAMETERS, mean_returns, per_query_returns
from ._docs import documented as _documented
from ._spec import Cutoffs, Gain, IntoColumn, Keys, MissingQueries, NoRelevant, Spec, Ties
from .measures._base import GEOMETRIC_FLOOR
from .measures._registry import REGISTRY

_F = TypeVar("_F", bound=Callable[..., object])

if TYPE_CHECKING:
    from pyspark.sql import Column
    from pyspark.sql import DataFrame as SparkDataFrame
    from pyspark.sql.types import StructType

__all__ = [
    "average_precision",
    "average_precision_mean",
    "dcg",
    "dcg_mean",
    "dcg_score",
    "evaluate",
    "evaluate_mean",
    "ndcg",
    "ndcg_mean",
    "ndcg_score",
    "precision",
    "precision_mean",
    "recall",
    "recall_mean",
    "reciprocal_rank",
    "reciprocal_rank_mean",
    "success",
    "success_mean",
]


def documented(
    summary: str, parameters: Sequence[str], returns: str, example: str, *, first: str | None = None
) -> Callable[[_F], _F]:
    """`_docs.documented` with the Spark frame as the first parameter."""
    return _documented(summary, parameters, returns, example, first=first if first is not None else FRAME)


IS_JUDGMENT = "__lodestar_is_judgment"
ROW_ORDER = "__lodestar_row_order"

EXAMPLE_FRAME = """>>> from lodestar_polars import spark as lodestar_spark
>>> judged = spark.createDataFrame(
...     [(1, 2, 0.9), (1, 0, 0.8), (1, 1, 0.1), (2, 0, 0.5), (2, 1, 0.5)], ["query", "relevance", "score"]
... )
"""


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


def _require_spark() -> None:
    # pyspark's mapInArrow checks that pandas is installed, though no pandas code runs here
    missing = [name for name in ("pyspark", "pandas") if importlib.util.find_spec(name) is None]
    if missing:
        msg = f"lodestar_polars.spark needs {' and '.join(missing)}: pip install 'lodestar-polars[spark]'."
        raise ImportError(msg)


def _roots(column: _spec.Column | None) -> list[str]:
    if column is None:
        return []
    return [column.name] if column.is_name else column.expr.meta.root_names()


@dataclasses.dataclass(frozen=True)
class _Shipping:
    """Which user columns travel to the partitions, under which generated names.

    The query and doc keys of the run and of the judgments share their generated names (the union puts them
    in one column, the repartition hashes it); every other column is the run's or the judgments' own."""

    run: dict[str, str]  # user name -> generated name
    judgments: dict[str, str]

    @staticmethod
    def of(spec: Spec, judged: bool) -> _Shipping:
        shared = [*spec.query, *spec.doc]
        run_only = [*spec.by, *_roots(spec.score), *_roots(spec.weight), *([] if judged else _roots(spec.relevance))]
        run = {name: f"__lodestar_c{i}" for i, name in enumerate(dict.fromkeys([*shared, *run_only]))}
        judgments = {name: run[name] for name in shared}
        for index, name in enumerate(dict.fromkeys(_roots(spec.relevance) if judged else [])):
            judgments.setdefault(name, f"__lodestar_j{index}")
        return _Shipping(run, judgments)


def _evaluate_partition(
    spec: Spec, shipping: _Shipping, judged: bool, groups: pl.DataFrame | None, output: pa.Schema
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
        run = frame
        judgments = None
        if judged:
            run = frame.filter(~pl.col(IS_JUDGMENT))
            judgments = frame.filter(pl.col(IS_JUDGMENT)).select(
                pl.col(generated).alias(name) for name, generated in shipping.judgments.items()
            )
        run = run.select(pl.col(generated).alias(name) for name, generated in shipping.run.items())
        per_query = _plan.flagged_plan(
            run.lazy(),
            judgments.lazy() if judgments is not None else None,
            spec,
            groups.lazy() if groups is not None else None,
        ).collect()
        yield from per_query.to_arrow().cast(output).to_batches()

    return evaluate


def _flagged(frame: SparkDataFrame, spec: Spec, qrels: SparkDataFrame | None) -> SparkDataFrame:
    """Every per-query row with the SCORED and UNJUDGED flags, as a Spark DataFrame."""
    from pyspark.sql import DataFrame as SparkDataFrame
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import to_arrow_schema

    _require_spark()
    if spec.exact_sums:
        msg = (
            "exact_sums=True is not available on Spark: its sums add in the order its partitions arrive; "
            "evaluate with the Polars namespace (pl.scan_parquet(...).rank_metrics) for sums exact to the last bit."
        )
        raise ValueError(msg)
    if qrels is not None and not isinstance(qrels, SparkDataFrame):
        msg = f"qrels must be a Spark DataFrame here, got {type(qrels).__name__}."
        raise TypeError(msg)
    run_schema = polars_schema(frame.schema)
    qrels_schema = polars_schema(qrels.schema) if qrels is not None else None
    _spec.check_schema(spec, run_schema, qrels_schema)
    judged = qrels is not None
    shipping = _Shipping.of(spec, judged)
    empty_run = pl.LazyFrame(schema={name: run_schema[name] for name in shipping.run})
    empty_qrels = pl.LazyFrame(schema={n: qrels_schema[n] for n in shipping.judgments}) if qrels_schema else None
    output = spark_schema(_plan.flagged_plan(empty_run, empty_qrels, spec, None).collect_schema())
    rows = frame.select(*(_column(name).alias(generated) for name, generated in shipping.run.items()))
    groups = None
    if qrels is not None:
        judged_rows = qrels.select(*(_column(n).alias(g) for n, g in shipping.judgments.items()))
        rows = rows.withColumn(IS_JUDGMENT, F.lit(False)).unionByName(
            judged_rows.withColumn(IS_JUDGMENT, F.lit(True)), allowMissingColumns=True
        )
        if spec.by and spec.missing_queries == "zero":
            # every judged query missing from a group's run is scored 0 in that group: each partition needs
            # the list of all groups (small), not only those of its own queries
            collected = frame.select(*(_column(name) for name in spec.by)).distinct().toArrow()
            groups = pl.DataFrame(pl.from_arrow(collected))
    if spec.ties in ("input", "reverse"):
        # the shuffle does not keep row order, which these tie modes read: carry it and restore it
        rows = rows.withColumn(ROW_ORDER, F.monotonically_increasing_id())
    # hash partitioning by the query key puts each query (its groups and judgments) whole into one partition
    partitions = rows.repartition(*(F.col(shipping.run[name]) for name in spec.query))
    evaluate = _evaluate_partition(spec, shipping, judged, groups, to_arrow_schema(output))
    return partitions.mapInArrow(evaluate, output)


def _per_query(frame: SparkDataFrame, spec: Spec, qrels: SparkDataFrame | None) -> SparkDataFrame:

    flagged = _flagged(frame, spec, qrels)
    scored, unjudged = _plan.flag_columns(spec)
    return flagged.filter(_column(scored)).drop(scored, unjudged)


def _mean(frame: SparkDataFrame, spec: Spec, qrels: SparkDataFrame | None) -> pl.DataFrame:
    """The mean frame, as the Polars `*_mean` methods return it, from Spark sums per group."""
    from pyspark.sql import functions as F

    flagged = _flagged(frame, spec, qrels)
    weight: Column = _column(spec.weight.name) if spec.weight is not None else F.lit(1.0)
    scored_name, unjudged_name = _plan.flag_columns(spec)
    scored = _column(scored_name)
    sums: list[Column] = []
    summaries = [REGISTRY[measure.kind].summary for measure in spec.measures]
    for index, (measure, summary) in enumerate(zip(spec.measures, summaries, strict=True)):
        metric = _column(measure.column)
        entered = scored & metric.isNotNull()
        # as `_mean.summand`: a geometric mean sums the logs of the values floored at trec_eval's floor
        added = F.log(F.greatest(metric, F.lit(GEOMETRIC_FLOOR))) if summary == "geometric" else metric
        sums.append(F.sum(F.when(entered, weight * added)).alias(mean_of_sums.weighted_sum(index)))
        sums.append(F.sum(F.when(entered, weight)).cast("double").alias(mean_of_sums.weight_sum(index)))
        sums.append(F.count(F.when(entered, F.lit(1))).alias(mean_of_sums.entered_count(index)))
    first = _column(spec.measures[0].column)
    sums.append(F.count(F.when(scored & first.isNotNull(), F.lit(1))).alias(mean_of_sums.QUERIES))
    sums.append(F.count(F.when(_column(unjudged_name), F.lit(1))).alias(mean_of_sums.UNJUDGED))
    group_keys = [f"__lodestar_group_{i}" for i in range(len(spec.by))]
    grouped = flagged.groupBy(*(_column(n).alias(k) for n, k in zip(spec.by, group_keys, strict=True)))
    table = grouped.agg(*sums).toArrow()
    totals = pl.DataFrame(pl.from_arrow(table))
    fill = [pl.col(c).fill_null(0.0) for c in totals.columns if c.startswith("__lodestar_weight")]
    fill += [pl.col(mean_of_sums.entered_count(i)).cast(pl.UInt32) for i in range(len(spec.measures))]
    totals = totals.with_columns(
        *fill, pl.col(mean_of_sums.QUERIES).cast(pl.UInt32), pl.col(mean_of_sums.UNJUDGED).cast(pl.UInt32)
    )
    if not spec.by and totals.height == 0:  # Spark's global aggregation of nothing still gives one row
        totals = pl.DataFrame({c: [0] for c in totals.columns}, schema=totals.schema)
    result = mean_of_sums.finish_means(
        totals.lazy(),
        group_keys,
        list(spec.by),
        spec.metric_columns,
        spec.weight.name if spec.weight is not None else None,
        qrels is not None,
        summaries=summaries,
    )
    return result.collect()


def _score(frame: SparkDataFrame, spec: Spec, qrels: SparkDataFrame | None) -> float:
    return float(_mean(frame, spec, qrels).item(0, 0))


@documented(
    "NDCG per query, as scikit-learn's `ndcg_score` defines it (tie averaging by default).",
    [
        "query",
        "relevance",
        "score",
        "doc",
        "by",
        "k",
        "ties",
        "gain",
        "weight",
        "no_relevant",
        "qrels",
        "missing_queries",
        "max_retrieved",
        "judged_only",
    ],
    per_query_returns(
        "`ndcg` (k None) or `ndcg@{k}`, one per cut-off", "pyspark.sql.DataFrame (rows in no particular order)"
    ),
    EXAMPLE_FRAME + ">>> lodestar_spark.ndcg(judged, k=[1, 3]).orderBy('query').show()\n"
    "+-----+------+------------------+\n"
    "|query|ndcg@1|            ndcg@3|\n"
    "+-----+------+------------------+\n"
    "|    1|   1.0|0.9502344167898358|\n"
    "|    2|   0.5|0.8154648767857287|\n"
    "+-----+------+------------------+\n"
    "<BLANKLINE>",
)
def ndcg(
    frame: SparkDataFrame,
    *,
    query: Keys = "query",
    relevance: IntoColumn = "relevance",
    score: IntoColumn = "score",
    doc: Keys | None = None,
    by: Keys | None = None,
    k: Cutoffs = None,
    ties: Ties = "average",
    gain: Gain = "linear",
    weight: IntoColumn | None = None,
    no_relevant: NoRelevant = 0.0,
    qrels: SparkDataFrame | None = None,
    missing_queries: MissingQueries = "skip",
    max_retrieved: int | None = None,
    judged_only: bool = False,
) -> SparkDataFrame:
    return _per_query(
        frame,
        _spec.ndcg_spec(
            query=query,
            relevance=relevance,
            score=score,
            doc=doc,
            by=by,
            k=k,
            ties=ties,
            gain=gain,
            weight=weight,
            no_relevant=no_relevant,
            missing_queries=missing_queries,
            max_retrieved=max_retrieved,
            judged_only=judged_only,
        ),
        qrels,
    )


@documented(
    "The (weighted) mean of `ndcg` per `by` group, aggregated by Spark.",
    [
        "query",
        "relevance",
        "score",
        "doc",
        "by",
        "k",
        "ties",
        "gain",
        "weight",
        "no_relevant",
        "qrels",
        "missing_queries",
        "max_retrieved",
        "judged_only",
    ],
    mean_returns("polars.DataFrame (small: one row per group)"),
    EXAMPLE_FRAME + ">>> lodestar_spark.ndcg_mean(judged, k=[1, 3])\n"
    "shape: (1, 4)\n"
    "┌────────┬─────────┬─────────┬────────────┐\n"
    "│ ndcg@1 ┆ ndcg@3  ┆ queries ┆ weight_sum │\n"
    "│ ---    ┆ ---     ┆ ---     ┆ ---        │\n"
    "│ f64    ┆ f64     ┆ u32     ┆ f64        │\n"
    "╞════════╪═════════╪═════════╪════════════╡\n"
    "│ 0.75   ┆ 0.88285 ┆ 2       ┆ 2.0        │\n"
    "└────────┴─────────┴─────────┴────────────┘",
)
def ndcg_mean(
    frame: SparkDataFrame,
    *,
    query: Keys = "query",
    relevance: IntoColumn = "relevance",
    score: IntoColumn = "score",
    doc: Keys | None = None,
    by: Keys | None = None,
    k: Cutoffs = None,
    ties: Ties = "average",
    gain: Gain = "linear",
    weight: IntoColumn | None = None,
    no_relevant: NoRelevant = 0.0,
    qrels: SparkDataFrame | None = None,
    missing_queries: MissingQueries = "skip",
    max_retrieved: int | None = None,
    judged_only: bool = False,
) -> pl.DataFrame:
    return _mean(
        frame,
        _spec.ndcg_spec(
            query=query,
            relevance=relevance,
            score=score,
            doc=doc,
            by=by,
            k=k,
            ties=ties,
            gain=gain,
            weight=weight,
            no_relevant=no_relevant,
            missing_queries=missing_queries,
            max_retrieved=max_retrieved,
            judged_only=judged_only,
        ),
        qrels,
    )


@documented(
    "DCG per query, as scikit-learn's `dcg_score` defines it; negative relevance is accepted.",
    [
        "query",
        "relevance",
        "score",
        "doc",
        "by",
        "k",
        "ties",
        "gain",
        "weight",
        "log_base",
        "qrels",
        "missing_queries",
        "max_retrieved",
        "judged_only",
    ],
    per_query_returns("`dcg` / `dcg@{k}`", "pyspark.sql.DataFrame (rows in no particular order)"),
    EXAMPLE_FRAME + ">>> lodestar_spark.dcg(judged, k=3).orderBy('query').show()\n"
    "+-----+------------------+\n"
    "|query|             dcg@3|\n"
    "+-----+------------------+\n"
    "|    1|               2.5|\n"
    "|    2|0.8154648767857287|\n"
    "+-----+------------------+\n"
    "<BLANKLINE>",
)
def dcg(
    frame: SparkDataFrame,
    *,
    query: Keys = "query",
    relevance: IntoColumn = "relevance",
    score: IntoColumn = "score",
    doc: Keys | None = None,
    by: Keys | None = None,
    k: Cutoffs = None,
    ties: Ties = "average",
    gain: Gain = "linear",
    weight: IntoColumn | None = None,
    log_base: float = 2.0,
    qrels: SparkDataFrame | None = None,
    missing_queries: MissingQueries = "skip",
    max_retrieved: int | None = None,
    judged_only: bool = False,
) -> SparkDataFrame:
    return _per_query(
        frame,
        _spec.dcg_spec(
            query=query,
            relevance=relevance,
            score=score,
            doc=doc,
            by=by,
            k=k,
            ties=ties,
            gain=gain,
            weight=weight,
            log_base=log_base,
            missing_queries=missing_queries,
            max_retrieved=max_retrieved,
            judged_only=judged_only,
        ),
        qrels,
    )


@documented(
    "The (weighted) mean of `dcg` per `by` group, aggregated by Spark.",
    [
        "query",
        "relevance",
        "score",
        "doc",
        "by",
        "k",
        "ties",
        "gain",
        "weight",
        "log_base",
        "qrels",
        "missing_queries",
        "max_retrieved",
        "judged_only",
    ],
    mean_returns("polars.DataFrame (small: one row per group)"),
    EXAMPLE_FRAME + ">>> lodestar_spark.dcg_mean(judged, k=3)\n"
    "shape: (1, 3)\n"
    "┌──────────┬─────────┬────────────┐\n"
    "│ dcg@3    ┆ queries ┆ weight_sum │\n"
    "│ ---      ┆ ---     ┆ ---        │\n"
    "│ f64      ┆ u32     ┆ f64        │\n"
    "╞══════════╪═════════╪════════════╡\n"
    "│ 1.657732 ┆ 2       ┆ 2.0        │\n"
    "└──────────┴─────────┴────────────┘",
)
def dcg_mean(
    frame: SparkDataFrame,
    *,
    query: Keys = "query",
    relevance: IntoColumn = "relevance",
    score: IntoColumn = "score",
    doc: Keys | None = None,
    by: Keys | None = None,
    k: Cutoffs = None,
    ties: Ties = "average",
    gain: Gain = "linear",
    weight: IntoColumn | None = None,
    log_base: float = 2.0,
    qrels: SparkDataFrame | None = None,
    missing_queries: MissingQueries = "skip",
    max_retrieved: int | None = None,
    judged_only: bool = False,
) -> pl.DataFrame:
    return _mean(
        frame,
        _spec.dcg_spec(
            query=query,
            relevance=relevance,
            score=score,
            doc=doc,
            by=by,
            k=k,
            ties=ties,
            gain=gain,
            weight=weight,
            log_base=log_base,
            missing_queries=missing_queries,
            max_retrieved=max_retrieved,
            judged_only=judged_only,
        ),
        qrels,
    )


@documented(
    "Reciprocal rank per query: 1 / position of the first relevant document (0 when none is in the top k).",
    [
        "query",
        "relevance",
        "score",
        "doc",
        "by",
        "k",
        "ties",
        "threshold",
        "weight",
        "qrels",
        "missing_queries",
        "max_retrieved",
        "judged_only",
    ],
    per_query_returns(
        "`reciprocal_rank` / `reciprocal_rank@{k}`", "pyspark.sql.DataFrame (rows in no particular order)"
    ),
    EXAMPLE_FRAME + ">>> lodestar_spark.reciprocal_rank(judged).orderBy('query').show()\n"
    "+-----+---------------+\n"
    "|query|reciprocal_rank|\n"
    "+-----+---------------+\n"
    "|    1|            1.0|\n"
    "|    2|           0.75|\n"
    "+-----+---------------+\n"
    "<BLANKLINE>",
)
def reciprocal_rank(
    frame: SparkDataFrame,
    *,
    query: Keys = "query",
    relevance: IntoColumn = "relevance",
    score: IntoColumn = "score",
    doc: Keys | None = None,
    by: Keys | None = None,
    k: Cutoffs = None,
    ties: Ties = "average",
    threshold: float = 0.0,
    weight: IntoColumn | None = None,
    qrels: SparkDataFrame | None = None,
    missing_queries: MissingQueries = "skip",
    max_retrieved: int | None = None,
    judged_only: bool = False,
) -> SparkDataFrame:
    return _per_query(
        frame,
        _spec.threshold_spec(
            "rr",
            "reciprocal_rank",
            query=query,
            relevance=relevance,
            score=score,
            doc=doc,
            by=by,
            k=k,
            ties=ties,
            threshold=threshold,
            weight=weight,
            no_relevant=0.0,
            missing_queries=missing_queries,
            max_retrieved=max_retrieved,
            judged_only=judged_only,
        ),
        qrels,
    )


@documented(
    "The (weighted) mean of `reciprocal_rank` per `by` group, aggregated by Spark.",
    [
        "query",
        "relevance",
        "score",
        "doc",
        "by",
        "k",
        "ties",
        "threshold",
        "weight",
        "qrels",
        "missing_queries",
        "max_retrieved",
        "judged_only",
    ],
    mean_returns("polars.DataFrame (small: one row per group)"),
    EXAMPLE_FRAME + ">>> lodestar_spark.reciprocal_rank_mean(judged)\n"
    "shape: (1, 3)\n"
    "┌─────────────────┬─────────┬────────────┐\n"
    "│ reciprocal_rank ┆ queries ┆ weight_sum │\n"
    "│ ---             ┆ ---     ┆ ---        │\n"
    "│ f64             ┆ u32     ┆ f64        │\n"
    "╞═════════════════╪═════════╪════════════╡\n"
    "│ 0.875           ┆ 2       ┆ 2.0        │\n"
    "└─────────────────┴─────────┴────────────┘",
)
def reciprocal_rank_mean(
    frame: SparkDataFrame,
    *,
    query: Keys = "query",
    relevance: IntoColumn = "relevance",
    score: IntoColumn = "score",
    doc: Keys | None = None,
    by: Keys | None = None,
    k: Cutoffs = None,
    ties: Ties = "average",
    threshold: float = 0.0,
    weight: IntoColumn | None = None,
    qrels: SparkDataFrame | None = None,
    missing_queries: MissingQueries = "skip",
    max_retrieved: int | None = None,
    judged_only: bool = False,
) -> pl.DataFrame:
    return _mean(
        frame,
        _spec.threshold_spec(
            "rr",
            "reciprocal_rank",
            query=query,
            relevance=relevance,
            score=score,
            doc=doc,
            by=by,
            k=k,
            ties=ties,
            threshold=threshold,
            weight=weight,
            no_relevant=0.0,
            missing_queries=missing_queries,
            max_retrieved=max_retrieved,
            judged_only=judged_only,
        ),
        qrels,
    )


@documented(
    "Precision per query: relevant documents in the top k / k (trec_eval's P_k: a shorter list still divides "
    "by k; k None: by the list's length).",
    [
        "query",
        "relevance",
        "score",
        "doc",
        "by",
        "k",
        "ties",
        "threshold",
        "weight",
        "qrels",
        "missing_queries",
        "max_retrieved",
        "judged_only",
    ],
    per_query_returns("`precision` / `precision@{k}`", "pyspark.sql.DataFrame (rows in no particular order)"),
    EXAMPLE_FRAME + ">>> lodestar_spark.precision(judged, k=2).orderBy('query').show()\n"
    "+-----+-----------+\n"
    "|query|precision@2|\n"
    "+-----+-----------+\n"
    "|    1|        0.5|\n"
    "|    2|        0.5|\n"
    "+-----+-----------+\n"
    "<BLANKLINE>",
)
def precision(
    frame: SparkDataFrame,
    *,
    query: Keys = "query",
    relevance: IntoColumn = "relevance",
    score: IntoColumn = "score",
    doc: Keys | None = None,
    by: Keys | None = None,
    k: Cutoffs = None,
    ties: Ties = "average",
    threshold: float = 0.0,
    weight: IntoColumn | None = None,
    qrels: SparkDataFrame | None = None,
    missing_queries: MissingQueries = "skip",
    max_retrieved: int | None = None,
    judged_only: bool = False,
) -> SparkDataFrame:
    return _per_query(
        frame,
        _spec.threshold_spec(
            "p",
            "precision",
            query=query,
            relevance=relevance,
            score=score,
            doc=doc,
            by=by,
            k=k,
            ties=ties,
            threshold=threshold,
            weight=weight,
            no_relevant=0.0,
            missing_queries=missing_queries,
            max_retrieved=max_retrieved,
            judged_only=judged_only,
        ),
        qrels,
    )


@documented(
    "The (weighted) mean of `precision` per `by` group, aggregated by Spark.",
    [
        "query",
        "relevance",
        "score",
        "doc",
        "by",
        "k",
        "ties",
        "threshold",
        "weight",
        "qrels",
        "missing_queries",
        "max_retrieved",
        "judged_only",
    ],
    mean_returns("polars.DataFrame (small: one row per group)"),
    EXAMPLE_FRAME + ">>> lodestar_spark.precision_mean(judged, k=2)\n"
    "shape: (1, 3)\n"
    "┌─────────────┬─────────┬────────────┐\n"
    "│ precision@2 ┆ queries ┆ weight_sum │\n"
    "│ ---         ┆ ---     ┆ ---        │\n"
    "│ f64         ┆ u32     ┆ f64        │\n"
    "╞═════════════╪═════════╪════════════╡\n"
    "│ 0.5         ┆ 2       ┆ 2.0        │\n"
    "└─────────────┴─────────┴────────────┘",
)
def precision_mean(
    frame: SparkDataFrame,
    *,
    query: Keys = "query",
    relevance: IntoColumn = "relevance",
    score: IntoColumn = "score",
    doc: Keys | None = None,
    by: Keys | None = None,
    k: Cutoffs = None,
    ties: Ties = "average",
    threshold: float = 0.0,
    weight: IntoColumn | None = None,
    qrels: SparkDataFrame | None = None,
    missing_queries: MissingQueries = "skip",
    max_retrieved: int | None = None,
    judged_only: bool = False,
) -> pl.DataFrame:
    return _mean(
        frame,
        _spec.threshold_spec(
            "p",
            "precision",
            query=query,
            relevance=relevance,
            score=score,
            doc=doc,
            by=by,
            k=k,
            ties=ties,
            threshold=threshold,
            weight=weight,
            no_relevant=0.0,
            missing_queries=missing_queries,
            max_retrieved=max_retrieved,
            judged_only=judged_only,
        ),
        qrels,
    )


@documented(
    "Recall per query: relevant documents in the top k / relevant documents of the query (with qrels: every "
    "relevant judged document).",
    [
        "query",
        "relevance",
        "score",
        "doc",
        "by",
        "k",
        "ties",
        "threshold",
        "weight",
        "no_relevant",
        "qrels",
        "missing_queries",
        "max_retrieved",
        "judged_only",
    ],
    per_query_returns("`recall` / `recall@{k}`", "pyspark.sql.DataFrame (rows in no particular order)"),
    EXAMPLE_FRAME + ">>> lodestar_spark.recall(judged, k=2).orderBy('query').show()\n"
    "+-----+--------+\n"
    "|query|recall@2|\n"
    "+-----+--------+\n"
    "|    1|     0.5|\n"
    "|    2|     1.0|\n"
    "+-----+--------+\n"
    "<BLANKLINE>",
)
def recall(
    frame: SparkDataFrame,
    *,
    query: Keys = "query",
    relevance: IntoColumn = "relevance",
    score: IntoColumn = "score",
    doc: Keys | None = None,
    by: Keys | None = None,
    k: Cutoffs = None,
    ties: Ties = "average",
    threshold: float = 0.0,
    weight: IntoColumn | None = None,
    no_relevant: NoRelevant = 0.0,
    qrels: SparkDataFrame | None = None,
    missing_queries: MissingQueries = "skip",
    max_retrieved: int | None = None,
    judged_only: bool = False,
) -> SparkDataFrame:
    return _per_query(
        frame,
        _spec.threshold_spec(
            "r",
            "recall",
            query=query,
            relevance=relevance,
            score=score,
            doc=doc,
            by=by,
            k=k,
            ties=ties,
            threshold=threshold,
            weight=weight,
            no_relevant=no_relevant,
            missing_queries=missing_queries,
            max_retrieved=max_retrieved,
            judged_only=judged_only,
        ),
        qrels,
    )


@documented(
    "The (weighted) mean of `recall` per `by` group, aggregated by Spark.",
    [
        "query",
        "relevance",
        "score",
        "doc",
        "by",
        "k",
        "ties",
        "threshold",
        "weight",
        "no_relevant",
        "qrels",
        "missing_queries",
        "max_retrieved",
        "judged_only",
    ],
    mean_returns("polars.DataFrame (small: one row per group)"),
    EXAMPLE_FRAME + ">>> lodestar_spark.recall_mean(judged, k=2)\n"
    "shape: (1, 3)\n"
    "┌──────────┬─────────┬────────────┐\n"
    "│ recall@2 ┆ queries ┆ weight_sum │\n"
    "│ ---      ┆ ---     ┆ ---        │\n"
    "│ f64      ┆ u32     ┆ f64        │\n"
    "╞══════════╪═════════╪════════════╡\n"
    "│ 0.75     ┆ 2       ┆ 2.0        │\n"
    "└──────────┴─────────┴────────────┘",
)
def recall_mean(
    frame: SparkDataFrame,
    *,
    query: Keys = "query",
    relevance: IntoColumn = "relevance",
    score: IntoColumn = "score",
    doc: Keys | None = None,
    by: Keys | None = None,
    k: Cutoffs = None,
    ties: Ties = "average",
    threshold: float = 0.0,
    weight: IntoColumn | None = None,
    no_relevant: NoRelevant = 0.0,
    qrels: SparkDataFrame | None = None,
    missing_queries: MissingQueries = "skip",
    max_retrieved: int | None = None,
    judged_only: bool = False,
) -> pl.DataFrame:
    return _mean(
        frame,
        _spec.threshold_spec(
            "r",
            "recall",
            query=query,
            relevance=relevance,
            score=score,
            doc=doc,
            by=by,
            k=k,
            ties=ties,
            threshold=threshold,
            weight=weight,
            no_relevant=no_relevant,
            missing_queries=missing_queries,
            max_retrieved=max_retrieved,
            judged_only=judged_only,
        ),
        qrels,
    )


@documented(
    "Average precision per query (AP, AP@k): the precision at each relevant document in the top k, summed and "
    "divided by the query's relevant documents (trec_eval's map / map_cut_k).",
    [
        "query",
        "relevance",
        "score",
        "doc",
        "by",
        "k",
        "ties",
        "threshold",
        "weight",
        "no_relevant",
        "qrels",
        "missing_queries",
        "max_retrieved",
        "judged_only",
    ],
    per_query_returns(
        "`average_precision` / `average_precision@{k}`", "pyspark.sql.DataFrame (rows in no particular order)"
    ),
    EXAMPLE_FRAME + ">>> lodestar_spark.average_precision(judged).orderBy('query').show()\n"
    "+-----+------------------+\n"
    "|query| average_precision|\n"
    "+-----+------------------+\n"
    "|    1|0.8333333333333333|\n"
    "|    2|              0.75|\n"
    "+-----+------------------+\n"
    "<BLANKLINE>",
)
def average_precision(
    frame: SparkDataFrame,
    *,
    query: Keys = "query",
    relevance: IntoColumn = "relevance",
    score: IntoColumn = "score",
    doc: Keys | None = None,
    by: Keys | None = None,
    k: Cutoffs = None,
    ties: Ties = "average",
    threshold: float = 0.0,
    weight: IntoColumn | None = None,
    no_relevant: NoRelevant = 0.0,
    qrels: SparkDataFrame | None = None,
    missing_queries: MissingQueries = "skip",
    max_retrieved: int | None = None,
    judged_only: bool = False,
) -> SparkDataFrame:
    return _per_query(
        frame,
        _spec.threshold_spec(
            "ap",
            "average_precision",
            query=query,
            relevance=relevance,
            score=score,
            doc=doc,
            by=by,
            k=k,
            ties=ties,
            threshold=threshold,
            weight=weight,
            no_relevant=no_relevant,
            missing_queries=missing_queries,
            max_retrieved=max_retrieved,
            judged_only=judged_only,
        ),
        qrels,
    )


@documented(
    "The (weighted) mean of `average_precision` per `by` group, aggregated by Spark.",
    [
        "query",
        "relevance",
        "score",
        "doc",
        "by",
        "k",
        "ties",
        "threshold",
        "weight",
        "no_relevant",
        "qrels",
        "missing_queries",
        "max_retrieved",
        "judged_only",
    ],
    mean_returns("polars.DataFrame (small: one row per group)"),
    EXAMPLE_FRAME + ">>> lodestar_spark.average_precision_mean(judged)\n"
    "shape: (1, 3)\n"
    "┌───────────────────┬─────────┬────────────┐\n"
    "│ average_precision ┆ queries ┆ weight_sum │\n"
    "│ ---               ┆ ---     ┆ ---        │\n"
    "│ f64               ┆ u32     ┆ f64        │\n"
    "╞═══════════════════╪═════════╪════════════╡\n"
    "│ 0.791667          ┆ 2       ┆ 2.0        │\n"
    "└───────────────────┴─────────┴────────────┘",
)
def average_precision_mean(
    frame: SparkDataFrame,
    *,
    query: Keys = "query",
    relevance: IntoColumn = "relevance",
    score: IntoColumn = "score",
    doc: Keys | None = None,
    by: Keys | None = None,
    k: Cutoffs = None,
    ties: Ties = "average",
    threshold: float = 0.0,
    weight: IntoColumn | None = None,
    no_relevant: NoRelevant = 0.0,
    qrels: SparkDataFrame | None = None,
    missing_queries: MissingQueries = "skip",
    max_retrieved: int | None = None,
    judged_only: bool = False,
) -> pl.DataFrame:
    return _mean(
        frame,
        _spec.threshold_spec(
            "ap",
            "average_precision",
            query=query,
            relevance=relevance,
            score=score,
            doc=doc,
            by=by,
            k=k,
            ties=ties,
            threshold=threshold,
            weight=weight,
            no_relevant=no_relevant,
            missing_queries=missing_queries,
            max_retrieved=max_retrieved,
            judged_only=judged_only,
        ),
        qrels,
    )


@documented(
    "Success (hit rate) per query: 1 when a relevant document is in the top k, else 0 (with tie averaging, "
    "its probability).",
    [
        "query",
        "relevance",
        "score",
        "doc",
        "by",
        "k",
        "ties",
        "threshold",
        "weight",
        "qrels",
        "missing_queries",
        "max_retrieved",
        "judged_only",
    ],
    per_query_returns("`success` / `success@{k}`", "pyspark.sql.DataFrame (rows in no particular order)"),
    EXAMPLE_FRAME + ">>> lodestar_spark.success(judged, k=1).orderBy('query').show()\n"
    "+-----+---------+\n"
    "|query|success@1|\n"
    "+-----+---------+\n"
    "|    1|      1.0|\n"
    "|    2|      0.5|\n"
    "+-----+---------+\n"
    "<BLANKLINE>",
)
def success(
    frame: SparkDataFrame,
    *,
    query: Keys = "query",
    relevance: IntoColumn = "relevance",
    score: IntoColumn = "score",
    doc: Keys | None = None,
    by: Keys | None = None,
    k: Cutoffs = None,
    ties: Ties = "average",
    threshold: float = 0.0,
    weight: IntoColumn | None = None,
    qrels: SparkDataFrame | None = None,
    missing_queries: MissingQueries = "skip",
    max_retrieved: int | None = None,
    judged_only: bool = False,
) -> SparkDataFrame:
    return _per_query(
        frame,
        _spec.threshold_spec(
            "success",
            "success",
            query=query,
            relevance=relevance,
            score=score,
            doc=doc,
            by=by,
            k=k,
            ties=ties,
            threshold=threshold,
            weight=weight,
            no_relevant=0.0,
            missing_queries=missing_queries,
            max_retrieved=max_retrieved,
            judged_only=judged_only,
        ),
        qrels,
    )


@documented(
    "The (weighted) mean of `success` per `by` group, aggregated by Spark.",
    [
        "query",
        "relevance",
        "score",
        "doc",
        "by",
        "k",
        "ties",
        "threshold",
        "weight",
        "qrels",
        "missing_queries",
        "max_retrieved",
        "judged_only",
    ],
    mean_returns("polars.DataFrame (small: one row per group)"),
    EXAMPLE_FRAME + ">>> lodestar_spark.success_mean(judged, k=1)\n"
    "shape: (1, 3)\n"
    "┌───────────┬─────────┬────────────┐\n"
    "│ success@1 ┆ queries ┆ weight_sum │\n"
    "│ ---       ┆ ---     ┆ ---        │\n"
    "│ f64       ┆ u32     ┆ f64        │\n"
    "╞═══════════╪═════════╪════════════╡\n"
    "│ 0.75      ┆ 2       ┆ 2.0        │\n"
    "└───────────┴─────────┴────────────┘",
)
def success_mean(
    frame: SparkDataFrame,
    *,
    query: Keys = "query",
    relevance: IntoColumn = "relevance",
    score: IntoColumn = "score",
    doc: Keys | None = None,
    by: Keys | None = None,
    k: Cutoffs = None,
    ties: Ties = "average",
    threshold: float = 0.0,
    weight: IntoColumn | None = None,
    qrels: SparkDataFrame | None = None,
    missing_queries: MissingQueries = "skip",
    max_retrieved: int | None = None,
    judged_only: bool = False,
) -> pl.DataFrame:
    return _mean(
        frame,
        _spec.threshold_spec(
            "success",
            "success",
            query=query,
            relevance=relevance,
            score=score,
            doc=doc,
            by=by,
            k=k,
            ties=ties,
            threshold=threshold,
            weight=weight,
            no_relevant=0.0,
            missing_queries=missing_queries,
            max_retrieved=max_retrieved,
            judged_only=judged_only,
        ),
        qrels,
    )


def _refuse_diversity(measures: object, intent: object) -> None:
    """The diversity measures (per-intent judgments) are computed by the Polars namespaces only."""
    if _spec.asks_diversity(measures, intent):
        msg = (
            "the diversity measures (intent=, alpha_ndcg@k, err_ia@k, ...) are not computed on Spark yet: collect "
            "the run and the per-intent judgments to Polars and call df.rank_metrics.evaluate(..., qrels=..., "
            "intent=...)."
        )
        raise ValueError(msg)


@documented(
    "Several measures per query in one plan: the options shared by the measures are given once.",
    [
        "query",
        "relevance",
        "score",
        "doc",
        "by",
        "ties",
        "gain",
        "weight",
        "no_relevant",
        "threshold",
        "log_base",
        "qrels",
        "missing_queries",
        "max_retrieved",
        "judged_only",
        "exact_sums",
        "intent",
    ],
    per_query_returns(
        "one column per measure, named canonically (`ndcg@10`, `p@5`, `ap`, `rr`...)",
        "pyspark.sql.DataFrame (rows in no particular order)",
    ),
    EXAMPLE_FRAME + '>>> lodestar_spark.evaluate(judged, ["ndcg@3", "p@2", "ap", "rr"]).orderBy(\'query\').show()\n'
    "+-----+------------------+---+------------------+----+\n"
    "|query|            ndcg@3|p@2|                ap|  rr|\n"
    "+-----+------------------+---+------------------+----+\n"
    "|    1|0.9502344167898358|0.5|0.8333333333333333| 1.0|\n"
    "|    2|0.8154648767857287|0.5|              0.75|0.75|\n"
    "+-----+------------------+---+------------------+----+\n"
    "<BLANKLINE>",
    first=FRAME + "\n" + PARAMETERS["measures"],
)
def evaluate(
    frame: SparkDataFrame,
    measures: str | Sequence[str],
    *,
    query: Keys = "query",
    relevance: IntoColumn = "relevance",
    score: IntoColumn = "score",
    doc: Keys | None = None,
    by: Keys | None = None,
    ties: Ties = "average",
    gain: Gain = "linear",
    weight: IntoColumn | None = None,
    no_relevant: NoRelevant = 0.0,
    threshold: float = 0.0,
    log_base: float = 2.0,
    qrels: SparkDataFrame | None = None,
    missing_queries: MissingQueries = "skip",
    max_retrieved: int | None = None,
    judged_only: bool = False,
    exact_sums: bool = False,
    intent: str | None = None,
) -> SparkDataFrame:
    _refuse_diversity(measures, intent)
    return _per_query(
        frame,
        _spec.evaluate_spec(
            measures,
            query=query,
            relevance=relevance,
            score=score,
            doc=doc,
            by=by,
            ties=ties,
            gain=gain,
            weight=weight,
            no_relevant=no_relevant,
            threshold=threshold,
            log_base=log_base,
            missing_queries=missing_queries,
            max_retrieved=max_retrieved,
            judged_only=judged_only,
            exact_sums=exact_sums,
        ),
        qrels,
    )


@documented(
    "The (weighted) mean of `evaluate` per `by` group, aggregated by Spark.",
    [
        "query",
        "relevance",
        "score",
        "doc",
        "by",
        "ties",
        "gain",
        "weight",
        "no_relevant",
        "threshold",
        "log_base",
        "qrels",
        "missing_queries",
        "max_retrieved",
        "judged_only",
        "exact_sums",
        "intent",
    ],
    mean_returns("polars.DataFrame (small: one row per group)"),
    EXAMPLE_FRAME + '>>> lodestar_spark.evaluate_mean(judged, ["ndcg@3", "p@2", "ap", "rr"])\n'
    "shape: (1, 6)\n"
    "┌─────────┬─────┬──────────┬───────┬─────────┬────────────┐\n"
    "│ ndcg@3  ┆ p@2 ┆ ap       ┆ rr    ┆ queries ┆ weight_sum │\n"
    "│ ---     ┆ --- ┆ ---      ┆ ---   ┆ ---     ┆ ---        │\n"
    "│ f64     ┆ f64 ┆ f64      ┆ f64   ┆ u32     ┆ f64        │\n"
    "╞═════════╪═════╪══════════╪═══════╪═════════╪════════════╡\n"
    "│ 0.88285 ┆ 0.5 ┆ 0.791667 ┆ 0.875 ┆ 2       ┆ 2.0        │\n"
    "└─────────┴─────┴──────────┴───────┴─────────┴────────────┘",
    first=FRAME + "\n" + PARAMETERS["measures"],
)
def evaluate_mean(
    frame: SparkDataFrame,
    measures: str | Sequence[str],
    *,
    query: Keys = "query",
    relevance: IntoColumn = "relevance",
    score: IntoColumn = "score",
    doc: Keys | None = None,
    by: Keys | None = None,
    ties: Ties = "average",
    gain: Gain = "linear",
    weight: IntoColumn | None = None,
    no_relevant: NoRelevant = 0.0,
    threshold: float = 0.0,
    log_base: float = 2.0,
    qrels: SparkDataFrame | None = None,
    missing_queries: MissingQueries = "skip",
    max_retrieved: int | None = None,
    judged_only: bool = False,
    exact_sums: bool = False,
    intent: str | None = None,
) -> pl.DataFrame:
    _refuse_diversity(measures, intent)
    return _mean(
        frame,
        _spec.evaluate_spec(
            measures,
            query=query,
            relevance=relevance,
            score=score,
            doc=doc,
            by=by,
            ties=ties,
            gain=gain,
            weight=weight,
            no_relevant=no_relevant,
            threshold=threshold,
            log_base=log_base,
            missing_queries=missing_queries,
            max_retrieved=max_retrieved,
            judged_only=judged_only,
            exact_sums=exact_sums,
        ),
        qrels,
    )


@documented(
    "The (weighted) mean NDCG as one float: scikit-learn's `ndcg_score` number.",
    [
        "query",
        "relevance",
        "score",
        "doc",
        "ties",
        "gain",
        "weight",
        "no_relevant",
        "qrels",
        "missing_queries",
        "max_retrieved",
        "judged_only",
    ],
    "float\n    sum(weight * ndcg) / sum(weight) over the queries whose NDCG is not null.",
    EXAMPLE_FRAME + ">>> round(lodestar_spark.ndcg_score(judged, k=3), 6)\n0.88285",
    first=FRAME + "\nk : int or None, default None\n    One cut-off (None: the whole list).",
)
def ndcg_score(
    frame: SparkDataFrame,
    *,
    query: Keys = "query",
    relevance: IntoColumn = "relevance",
    score: IntoColumn = "score",
    doc: Keys | None = None,
    k: int | None = None,
    ties: Ties = "average",
    gain: Gain = "linear",
    weight: IntoColumn | None = None,
    no_relevant: NoRelevant = 0.0,
    qrels: SparkDataFrame | None = None,
    missing_queries: MissingQueries = "skip",
    max_retrieved: int | None = None,
    judged_only: bool = False,
) -> float:
    _spec.check_single_cutoff("ndcg", k)
    return _score(
        frame,
        _spec.ndcg_spec(
            query=query,
            relevance=relevance,
            score=score,
            doc=doc,
            by=None,
            k=k,
            ties=ties,
            gain=gain,
            weight=weight,
            no_relevant=no_relevant,
            missing_queries=missing_queries,
            max_retrieved=max_retrieved,
            judged_only=judged_only,
        ),
        qrels,
    )


@documented(
    "The (weighted) mean DCG as one float: scikit-learn's `dcg_score` number.",
    [
        "query",
        "relevance",
        "score",
        "doc",
        "ties",
        "gain",
        "weight",
        "log_base",
        "qrels",
        "missing_queries",
        "max_retrieved",
        "judged_only",
    ],
    "float\n    sum(weight * dcg) / sum(weight) over the queries.",
    EXAMPLE_FRAME + ">>> round(lodestar_spark.dcg_score(judged, k=3), 6)\n1.657732",
    first=FRAME + "\nk : int or None, default None\n    One cut-off (None: the whole list).",
)
def dcg_score(
    frame: SparkDataFrame,
    *,
    query: Keys = "query",
    relevance: IntoColumn = "relevance",
    score: IntoColumn = "score",
    doc: Keys | None = None,
    k: int | None = None,
    ties: Ties = "average",
    gain: Gain = "linear",
    weight: IntoColumn | None = None,
    log_base: float = 2.0,
    qrels: SparkDataFrame | None = None,
    missing_queries: MissingQueries = "skip",
    max_retrieved: int | None = None,
    judged_only: bool = False,
) -> float:
    _spec.check_single_cutoff("dcg", k)
    return _score(
        frame,
        _spec.dcg_spec(
            query=query,
            relevance=relevance,
            score=score,
            doc=doc,
            by=None,
            k=k,
            ties=ties,
            gain=gain,
            weight=weight,
            log_base=log_base,
            missing_queries=missing_queries,
            max_retrieved=max_retrieved,
            judged_only=judged_only,
        ),
        qrels,
    )
