"""The Spark adapter gives the Polars path's numbers and errors, evaluated partition by partition.

One local Spark session (`local[2]`) serves the whole run.  Without pyspark or Java the tests skip, unless
LODESTAR_REQUIRE_SPARK=1, which turns that skip into a failure so CI cannot pass without running them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl
import pyarrow as pa
import pytest
from polars.testing import assert_frame_equal

from lodestar_polars import _spec, rank_metrics
from lodestar_polars import spark as lodestar_spark
from tests.cases import SUMMARY_MEASURES, pytrec_eval_per_query
from tests.spark_support import required_spark_session, skip_or_fail

if TYPE_CHECKING:
    from pyspark.sql import DataFrame as SparkDataFrame
    from pyspark.sql import SparkSession

TOLERANCE = 1e-12


@pytest.fixture(scope="session")
def spark() -> SparkSession:
    return required_spark_session()


def _ragged_judgments(seed: int, queries: int = 300) -> pl.DataFrame:
    """Queries of 1 to 40 documents, scores on a coarse grid (many ties), one weight per query."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 41, queries)
    query = np.repeat(np.arange(queries), sizes)
    rows = len(query)
    return pl.DataFrame(
        {
            "query": query,
            "doc": rng.permutation(rows),
            "relevance": rng.integers(0, 4, rows) * (rng.random(rows) < 0.6),
            "score": rng.integers(0, 8, rows) / 4.0,
            "weight": np.repeat(rng.uniform(0.5, 2.0, queries), sizes),
        }
    )


@pytest.fixture(scope="module")
def judged() -> pl.DataFrame:
    return _ragged_judgments(seed=7)


def _to_spark(spark: SparkSession, frame: pl.DataFrame) -> SparkDataFrame:
    return spark.createDataFrame(frame.to_arrow())


def _collect(frame: SparkDataFrame, query: str = "query") -> pl.DataFrame:
    collected = pl.from_arrow(frame.toArrow())
    assert isinstance(collected, pl.DataFrame)
    return collected.sort(query)


def _assert_same_numbers(got: pl.DataFrame, expected: pl.DataFrame) -> None:
    assert_frame_equal(got, expected, rel_tol=0.0, abs_tol=TOLERANCE)


PER_QUERY_CASES: dict[str, dict[str, Any]] = {
    "ndcg": {"gain": "exponential", "no_relevant": None},
    "dcg": {"log_base": 3.0},
    "reciprocal_rank": {"threshold": 1.0},
}


@pytest.mark.parametrize("ties", ["average", "input", "reverse", "doc", "pessimistic"])
@pytest.mark.parametrize("metric", sorted(PER_QUERY_CASES))
def test_per_query_metrics_match_the_polars_path(
    spark: SparkSession, judged: pl.DataFrame, metric: str, ties: str
) -> None:
    options = {"doc": "doc", "k": [None, 1, 3, 10], "ties": ties, "weight": "weight", **PER_QUERY_CASES[metric]}
    expected = getattr(rank_metrics(judged), metric)(**options)
    got = getattr(lodestar_spark, metric)(_to_spark(spark, judged), **options)
    _assert_same_numbers(_collect(got), expected)


@pytest.mark.parametrize("metric", sorted(PER_QUERY_CASES))
def test_weighted_means_match_the_polars_path(spark: SparkSession, judged: pl.DataFrame, metric: str) -> None:
    options = {"k": [None, 5], "weight": "weight", **PER_QUERY_CASES[metric]}
    expected = getattr(rank_metrics(judged), f"{metric}_mean")(**options)
    got = getattr(lodestar_spark, f"{metric}_mean")(_to_spark(spark, judged), **options)
    _assert_same_numbers(got, expected)


def test_ndcg_score_is_the_polars_number(spark: SparkSession, judged: pl.DataFrame) -> None:
    expected = rank_metrics(judged).ndcg_score(k=10, weight="weight")
    assert lodestar_spark.ndcg_score(_to_spark(spark, judged), k=10, weight="weight") == pytest.approx(
        expected, rel=0, abs=TOLERANCE
    )


def test_dcg_score_rejects_a_list_of_cutoffs(spark: SparkSession, judged: pl.DataFrame) -> None:
    with pytest.raises(TypeError, match="returns one number"):
        lodestar_spark.dcg_score(_to_spark(spark, judged), k=[1, 2])  # type: ignore[arg-type]  # the error under test


def test_output_keeps_the_query_type_and_metrics_are_double(spark: SparkSession) -> None:
    from pyspark.sql.types import DoubleType, IntegerType, StringType, StructField, StructType

    frame = pl.DataFrame(
        {"query": ["b", "a", "a"], "id": pl.Series([2, 1, 1], dtype=pl.Int32), "relevance": [1, 0, 1]}
    ).with_columns(score=pl.lit(0.5), w=pl.lit(2.0))
    by_name = lodestar_spark.ndcg(_to_spark(spark, frame), k=[None, 2], weight="w")
    by_id = lodestar_spark.reciprocal_rank(_to_spark(spark, frame), query="id")
    assert by_name.schema == StructType(
        [
            StructField("query", StringType()),
            StructField("ndcg", DoubleType()),
            StructField("ndcg@2", DoubleType()),
            StructField("w", DoubleType()),
        ]
    )
    assert by_id.schema == StructType([StructField("id", IntegerType()), StructField("reciprocal_rank", DoubleType())])
    _assert_same_numbers(_collect(by_name), rank_metrics(frame).ndcg(k=[None, 2], weight="w"))


def test_a_partition_restores_input_order_for_the_order_reading_tie_modes() -> None:
    # local mode happens to shuffle rows in order; a cluster need not, so feed a partition reversed rows

    frame = pl.DataFrame({"query": [1, 1, 1, 1], "relevance": [0, 0, 1, 0], "score": [0.5, 0.5, 0.5, 0.5]})
    expected = rank_metrics(frame).reciprocal_rank(ties="input")
    spec = _spec.threshold_spec(
        "rr",
        "reciprocal_rank",
        query="query",
        relevance="relevance",
        score="score",
        doc=None,
        by=None,
        k=None,
        ties="input",
        threshold=0.0,
        weight=None,
        no_relevant=0.0,
        missing_queries="skip",
    )
    shipping = lodestar_spark._Shipping.of(spec, judged=False)
    shipped = frame.select(pl.col(name).alias(generated) for name, generated in shipping.run.items())
    flagged_schema = (
        expected.with_columns(pl.lit(True).alias("__lodestar_scored"), pl.lit(False).alias("__lodestar_unjudged"))
        .to_arrow()
        .schema
    )
    evaluate = lodestar_spark._evaluate_partition(spec, shipping, False, None, flagged_schema)
    delivered = shipped.with_row_index(lodestar_spark.ROW_ORDER).reverse().to_arrow().to_batches(max_chunksize=1)
    got = pl.from_arrow(pa.Table.from_batches(list(evaluate(iter(delivered)))))
    assert isinstance(got, pl.DataFrame)
    got = got.drop("__lodestar_scored", "__lodestar_unjudged")
    assert got["reciprocal_rank"].to_list() == [1 / 3]
    assert_frame_equal(got, expected)


def test_queries_fewer_than_partitions_leave_empty_partitions_harmless(spark: SparkSession) -> None:
    frame = pl.DataFrame({"query": [5, 5, 5], "relevance": [0, 2, 1], "score": [0.3, 0.1, 0.2]})
    _assert_same_numbers(_collect(lodestar_spark.dcg(_to_spark(spark, frame))), rank_metrics(frame).dcg())


@pytest.fixture(scope="module")
def run_and_qrels() -> tuple[pl.DataFrame, pl.DataFrame]:
    """A run (query, doc, score) and judgments (query, doc, relevance) that overlap only in part."""
    rng = np.random.default_rng(11)
    judged = _ragged_judgments(seed=3, queries=120)
    run = judged.filter(pl.col("query") < 100).select("query", "doc", "score")
    qrels = judged.filter((pl.col("query") >= 10) & pl.Series(rng.random(judged.height) < 0.7))
    return run, qrels.select("query", "doc", "relevance")


@pytest.mark.parametrize("missing_queries", ["skip", "zero"])
def test_runs_with_qrels_match_the_polars_path(
    spark: SparkSession, run_and_qrels: tuple[pl.DataFrame, pl.DataFrame], missing_queries: str
) -> None:
    run, qrels = run_and_qrels
    options: dict[str, Any] = {"doc": "doc", "k": [None, 5], "missing_queries": missing_queries}
    expected = rank_metrics(run).ndcg(qrels=qrels, **options)
    got = lodestar_spark.ndcg(_to_spark(spark, run), qrels=_to_spark(spark, qrels), **options)
    _assert_same_numbers(_collect(got), expected)


@pytest.mark.parametrize("judged_only", [False, True])
def test_max_retrieved_and_judged_only_match_the_polars_path(
    spark: SparkSession, run_and_qrels: tuple[pl.DataFrame, pl.DataFrame], judged_only: bool
) -> None:
    """trec_eval's -M and -J as options: each partition keeps a query's first documents and its judged ones as
    the single plan does, so every measure (counts, set measures, ranked measures) and mean agrees."""
    run, qrels = run_and_qrels
    measures = ["num_ret", "ndcg@5", "p@3", "ap", "set_f", "bpref", "unj@5", "rprec"]
    options: dict[str, Any] = {
        "doc": "doc",
        "ties": "doc",
        "max_retrieved": 7,
        "judged_only": judged_only,
        "missing_queries": "zero",
    }
    expected = rank_metrics(run).evaluate(measures, qrels=qrels, **options)
    unlimited = rank_metrics(run).evaluate(measures, qrels=qrels, **{**options, "max_retrieved": None})
    assert not expected.equals(unlimited)  # the options change the numbers of this data
    spark_run, spark_qrels = _to_spark(spark, run), _to_spark(spark, qrels)
    got = lodestar_spark.evaluate(spark_run, measures, qrels=spark_qrels, **options)
    _assert_same_numbers(_collect(got), expected)
    expected_mean = rank_metrics(run).evaluate_mean(measures, qrels=qrels, **options)
    got_mean = lodestar_spark.evaluate_mean(spark_run, measures, qrels=spark_qrels, **options)
    _assert_same_numbers(got_mean, expected_mean)


def test_max_retrieved_without_qrels_still_counts_the_cut_rows_as_judgments(spark: SparkSession) -> None:
    """Query q: d0 (score 3, relevance 1) retrieved, d1 (2, 1) cut at M = 1: R = 2, so recall 1/2 and ndcg
    1 / (1 + 1/log2(3)) (the ideal over both); query r: its only relevant row d2 (1, 3) ranks below d3 (3, 0):
    recall and ndcg 0, not the null of a query without relevant rows."""
    frame = pl.DataFrame(
        {
            "query": ["q", "q", "r", "r"],
            "doc": ["d0", "d1", "d2", "d3"],
            "score": [3.0, 2.0, 1.0, 3.0],
            "relevance": [1, 1, 3, 0],
        }
    )
    options: dict[str, Any] = {"doc": "doc", "ties": "doc", "max_retrieved": 1, "no_relevant": None}
    got = _collect(lodestar_spark.evaluate(_to_spark(spark, frame), ["recall", "ndcg"], **options))
    ideal = 1 + 1 / np.log2(3)
    expected = pl.DataFrame({"query": ["q", "r"], "r": [0.5, 0.0], "ndcg": [1 / ideal, 0.0]})
    _assert_same_numbers(got, expected)


def test_qrels_mean_counts_run_queries_without_judgments(
    spark: SparkSession, run_and_qrels: tuple[pl.DataFrame, pl.DataFrame]
) -> None:
    run, qrels = run_and_qrels
    expected = rank_metrics(run).reciprocal_rank_mean(qrels=qrels, doc="doc", k=3)
    got = lodestar_spark.reciprocal_rank_mean(_to_spark(spark, run), qrels=_to_spark(spark, qrels), doc="doc", k=3)
    assert got["queries_without_judgments"].item() == 10
    _assert_same_numbers(got, expected)


def _polars_error(call: Callable[[], object]) -> BaseException:
    with pytest.raises(Exception) as raised:  # any error: the test compares it with Spark's
        call()
    return raised.value


def _core_message(error: BaseException) -> str:
    """The message the core raised, without the expression Polars appends to errors raised at collect time."""
    return str(error).partition("\n\nThis error occurred in the following expression")[0]


DRIVER_ERRORS: dict[str, dict[str, Any]] = {
    "missing column": {"score": "model_score"},
    "string score": {"score": "label"},
    "bad cut-off": {"k": 0},
    "unknown ties": {"ties": "random"},
    "ties by doc without doc": {"ties": "doc"},
    "empty gain mapping": {"gain": {}},
}


@pytest.mark.parametrize("arguments", DRIVER_ERRORS.values(), ids=DRIVER_ERRORS.keys())
def test_option_and_schema_errors_raise_on_the_driver_with_the_core_message(
    spark: SparkSession, arguments: dict[str, Any]
) -> None:
    frame = pl.DataFrame({"query": [1, 1], "relevance": [1, 2], "score": [0.5, 0.4], "label": ["x", "y"]})
    expected = _polars_error(lambda: rank_metrics(frame).ndcg(**arguments))
    with pytest.raises(type(expected)) as raised:
        lodestar_spark.ndcg(_to_spark(spark, frame), **arguments)
    assert str(raised.value) == str(expected)


def test_qrels_must_be_a_spark_frame(spark: SparkSession) -> None:
    frame = pl.DataFrame({"query": [1], "doc": [1], "score": [0.5]})
    with pytest.raises(TypeError, match="qrels must be a Spark DataFrame"):
        lodestar_spark.ndcg(_to_spark(spark, frame), doc="doc", qrels=frame)  # type: ignore[arg-type]  # under test


def test_qrels_dtype_mismatch_raises_on_the_driver(spark: SparkSession) -> None:
    run = pl.DataFrame({"query": [1], "doc": [1], "score": [0.5]})
    qrels = pl.DataFrame({"query": ["1"], "doc": [1], "relevance": [1]})
    expected = _polars_error(lambda: rank_metrics(run).ndcg(doc="doc", qrels=qrels))
    with pytest.raises(type(expected)) as raised:
        lodestar_spark.ndcg(_to_spark(spark, run), doc="doc", qrels=_to_spark(spark, qrels))
    assert str(raised.value) == str(expected)


DATA_ERRORS: dict[str, tuple[pl.DataFrame, dict[str, Any]]] = {
    "duplicated doc": (
        pl.DataFrame({"query": [1, 1, 1], "doc": [4, 4, 5], "relevance": [1, 0, 1], "score": [0.1, 0.2, 0.3]}),
        {"doc": "doc"},
    ),
    "NaN score": (pl.DataFrame({"query": [2, 2], "relevance": [1, 0], "score": [float("nan"), 0.2]}), {}),
    "unmapped gain label": (
        pl.DataFrame({"query": [3, 3], "relevance": [1, 7], "score": [0.1, 0.2]}),
        {"gain": {0: 0.0, 1: 1.0}},
    ),
    "no relevant document": (
        pl.DataFrame({"query": [4, 4], "relevance": [0, 0], "score": [0.1, 0.2]}),
        {"no_relevant": "error"},
    ),
}


@pytest.mark.parametrize("case", DATA_ERRORS.values(), ids=DATA_ERRORS.keys())
def test_data_errors_reach_the_caller_with_the_core_message(
    spark: SparkSession, case: tuple[pl.DataFrame, dict[str, Any]]
) -> None:
    frame, arguments = case
    expected = _polars_error(lambda: rank_metrics(frame).ndcg(**arguments))
    per_query = lodestar_spark.ndcg(_to_spark(spark, frame), **arguments)
    with pytest.raises(Exception) as raised:  # Spark wraps it in its PythonException
        per_query.collect()
    assert _core_message(expected) in str(raised.value)


def test_weights_summing_to_zero_raise_as_in_polars(spark: SparkSession) -> None:
    frame = pl.DataFrame({"query": [1, 2], "relevance": [1, 1], "score": [0.5, 0.5], "w": [1.0, -1.0]})
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
        rank_metrics(frame).ndcg_mean(weight="w")
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
        lodestar_spark.ndcg_mean(_to_spark(spark, frame), weight="w")


def test_mean_of_no_query_raises_as_in_polars(spark: SparkSession) -> None:
    frame = pl.DataFrame({"query": [1], "relevance": [0], "score": [0.5]}).clear()
    expected = _polars_error(lambda: rank_metrics(frame).ndcg_mean())
    with pytest.raises(type(expected)) as raised:
        lodestar_spark.ndcg_mean(_to_spark(spark, frame))
    assert str(raised.value) == _core_message(expected)


def test_required_spark_turns_the_skip_into_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LODESTAR_REQUIRE_SPARK", "1")
    with pytest.raises(pytest.fail.Exception, match="no Java"):
        skip_or_fail("no Java runtime")
    monkeypatch.delenv("LODESTAR_REQUIRE_SPARK")
    with pytest.raises(pytest.skip.Exception, match="no Java"):
        skip_or_fail("no Java runtime")


# --- by= ------------------------------------------------------------------------------------------------


def _collect_by(frame: SparkDataFrame, keys: list[str]) -> pl.DataFrame:
    collected = pl.from_arrow(frame.toArrow())
    assert isinstance(collected, pl.DataFrame)
    return collected.sort(keys, nulls_last=True)


BY_MEASURES = ["ndcg@5", "dcg", "p@3", "r", "ap", "rr", "success@1"]


def test_by_per_query_and_means_match_the_polars_path(spark: SparkSession, judged: pl.DataFrame) -> None:
    # every query split over three models (one of them null): the groups of a query share its partition
    rng = np.random.default_rng(5)
    frame = judged.with_columns(model=pl.Series(rng.choice(["a", "b", "c"], judged.height))).with_columns(
        model=pl.when(pl.col("model") == "c").then(None).otherwise(pl.col("model"))
    )
    frame = frame.with_columns(weight=pl.col("weight") * (pl.col("model") == "a").fill_null(False).cast(pl.Float64) + 1)
    options: dict[str, Any] = {"by": ["model"], "doc": "doc", "ties": "input", "weight": "weight"}
    expected = rank_metrics(frame).evaluate(BY_MEASURES, **options)
    got = lodestar_spark.evaluate(_to_spark(spark, frame), BY_MEASURES, **options)
    _assert_same_numbers(_collect_by(got, ["model", "query"]), expected)
    expected_mean = rank_metrics(frame).evaluate_mean(BY_MEASURES, **options)
    _assert_same_numbers(lodestar_spark.evaluate_mean(_to_spark(spark, frame), BY_MEASURES, **options), expected_mean)
    assert expected_mean["model"].to_list() == ["a", "b", None]
    with pytest.raises(TypeError, match="by"):
        lodestar_spark.ndcg_score(_to_spark(spark, frame), by="model")  # type: ignore[call-arg]  # the error under test


def test_by_with_qrels_and_missing_queries_zero_matches_the_polars_path(
    spark: SparkSession, run_and_qrels: tuple[pl.DataFrame, pl.DataFrame]
) -> None:
    # system y ran a third of system x's queries: every other judged query is a 0 in y's group, and the
    # groups of a partition that holds none of y's rows must still learn that y exists
    run, qrels = run_and_qrels
    systems = pl.concat(
        [run.with_columns(system=pl.lit("x")), run.filter(pl.col("query") % 3 == 0).with_columns(system=pl.lit("y"))]
    )
    options: dict[str, Any] = {"by": "system", "doc": "doc", "k": [None, 5], "missing_queries": "zero"}
    expected = rank_metrics(systems).ndcg(qrels=qrels, **options)
    got = lodestar_spark.ndcg(_to_spark(spark, systems), qrels=_to_spark(spark, qrels), **options)
    _assert_same_numbers(_collect_by(got, ["system", "query"]), expected)
    expected_mean = rank_metrics(systems).recall_mean(qrels=qrels, **options)
    got_mean = lodestar_spark.recall_mean(_to_spark(spark, systems), qrels=_to_spark(spark, qrels), **options)
    _assert_same_numbers(got_mean, expected_mean)
    assert got_mean["queries"].to_list() == [expected.filter(pl.col("system") == s).height for s in ("x", "y")]


def test_column_names_with_dots_spaces_and_the_internal_prefix(spark: SparkSession) -> None:
    frame = pl.DataFrame(
        {
            "model.name": ["m", "m", "m", "n", "n"],
            "query id": [1, 1, 2, 1, 1],
            "__lodestar_key_0": [0.5, 0.1, 0.3, 0.2, 0.9],  # the score, under the core's internal key name
            "rel.v": [1, 0, 1, 1, 0],
            "w w": [2.0, 2.0, 1.0, 3.0, 3.0],
        }
    )
    options: dict[str, Any] = {
        "by": "model.name",
        "query": "query id",
        "score": "__lodestar_key_0",
        "relevance": "rel.v",
        "weight": "w w",
        "k": [1, None],
    }
    expected = rank_metrics(frame).ndcg(**options)
    assert expected.columns == ["model.name", "query id", "ndcg@1", "ndcg", "w w"]
    got = lodestar_spark.ndcg(_to_spark(spark, frame), **options)
    _assert_same_numbers(_collect_by(got, ["model.name", "query id"]), expected)
    _assert_same_numbers(
        lodestar_spark.ndcg_mean(_to_spark(spark, frame), **options), rank_metrics(frame).ndcg_mean(**options)
    )


# issue 8, item 10: column names Spark would parse (dots, spaces, backticks) work in every function
ODD_NAMES = {
    "query": "query.id",
    "doc": "doc id",
    "relevance": "rel.level `x`",
    "score": "model score.v2",
    "weight": "w.1",
    "by": "by group",
}


def test_column_names_with_dots_and_spaces_work_in_every_function(
    spark: SparkSession, run_and_qrels: tuple[pl.DataFrame, pl.DataFrame]
) -> None:
    plain = _ragged_judgments(seed=5, queries=40).with_columns(by=pl.col("query") % 2)
    odd = plain.rename(ODD_NAMES)
    options = dict(ODD_NAMES)
    plain_options = {role: role for role in ODD_NAMES}
    back = {ODD_NAMES[role]: role for role in ("query", "weight", "by")}
    odd_spark = _to_spark(spark, odd)

    def per_query(got: SparkDataFrame) -> pl.DataFrame:
        return _collect(got, ODD_NAMES["query"]).rename(back, strict=False).sort("by", "query")

    # every per-query and mean function: one Spark job each, so keep the frames small
    for metric in ("ndcg", "dcg", "reciprocal_rank", "precision", "recall", "average_precision", "success"):
        expected = getattr(rank_metrics(plain), metric)(k=[None, 3], **plain_options)
        got = getattr(lodestar_spark, metric)(odd_spark, k=[None, 3], **options)
        _assert_same_numbers(per_query(got), expected.sort("by", "query"))
        expected_mean = getattr(rank_metrics(plain), f"{metric}_mean")(k=3, **plain_options)
        got_mean = getattr(lodestar_spark, f"{metric}_mean")(odd_spark, k=3, **options)
        _assert_same_numbers(got_mean.rename(back, strict=False), expected_mean)
    measures = ["ndcg@3", "dcg", "rr", "p@2", "r", "ap", "success@1"]
    expected = rank_metrics(plain).evaluate(measures, **plain_options)
    _assert_same_numbers(
        per_query(lodestar_spark.evaluate(odd_spark, measures, **options)), expected.sort("by", "query")
    )
    expected_mean = rank_metrics(plain).evaluate_mean(measures, **plain_options)
    got_mean = lodestar_spark.evaluate_mean(odd_spark, measures, **options)
    _assert_same_numbers(got_mean.rename(back, strict=False), expected_mean)
    no_by = {role: name for role, name in options.items() if role != "by"}
    plain_no_by = {role: role for role in no_by}
    for score in ("ndcg_score", "dcg_score"):
        expected_score = getattr(rank_metrics(plain), score)(k=3, **plain_no_by)
        assert getattr(lodestar_spark, score)(odd_spark, k=3, **no_by) == pytest.approx(expected_score, abs=TOLERANCE)
    # judgments under odd names too
    run, qrels = run_and_qrels
    rename = {"query": ODD_NAMES["query"], "doc": ODD_NAMES["doc"], "relevance": ODD_NAMES["relevance"]}
    run_options = {"query": ODD_NAMES["query"], "doc": ODD_NAMES["doc"], "relevance": ODD_NAMES["relevance"]}
    got = lodestar_spark.ndcg(
        _to_spark(spark, run.rename(rename, strict=False)),
        qrels=_to_spark(spark, qrels.rename(rename)),
        k=[None, 5],
        **run_options,
    )
    expected = rank_metrics(run).ndcg(qrels=qrels, doc="doc", k=[None, 5])
    _assert_same_numbers(_collect(got, ODD_NAMES["query"]).rename({ODD_NAMES["query"]: "query"}), expected)


def test_integer_ids_of_different_widths_join_as_in_polars(spark: SparkSession) -> None:
    """An IntegerType run against LongType judgments: the union widens the keys, each partition joins them,
    and the output keeps the run's query dtype, as the Polars path does (the numbers by hand in
    tests/test_qrels_path.py: AP 0.25, 1 and 0 for the judged query missing from the run)."""
    run = pl.DataFrame(
        {"query": pl.Series([1, 1, 2, 2], dtype=pl.Int32), "doc": pl.Series([10, 11, 20, 21], dtype=pl.Int32)}
    ).with_columns(score=pl.Series([0.9, 0.5, 0.3, 0.2]))
    qrels = pl.DataFrame({"query": [1, 1, 2, 3], "doc": [11, 12, 20, 30], "relevance": [1, 1, 2, 1]})
    options: dict[str, Any] = {"doc": "doc", "ties": "doc", "missing_queries": "zero"}
    expected = rank_metrics(run).evaluate(["ap", "num_rel"], qrels=qrels, **options)
    assert expected.rows() == [(1, 0.25, 2.0), (2, 1.0, 1.0), (3, 0.0, 1.0)]
    got = _collect(
        lodestar_spark.evaluate(_to_spark(spark, run), ["ap", "num_rel"], qrels=_to_spark(spark, qrels), **options)
    )
    assert_frame_equal(got, expected)


@pytest.mark.parametrize("judgments", [False, True], ids=["relevance column", "qrels"])
def test_evaluate_mean_summarises_each_measure_as_it_declares(spark: SparkSession, judgments: bool) -> None:
    """Per `by` group and weighted: gm_map and gm_bpref as trec_eval's geometric mean (floor 1e-5), num_ret and
    num_rel_ret as the sum, ap as the mean.  Oracle: pytrec_eval's per-query values (its gm_* are trec_eval's
    log(max(x, 1e-5))), summarised by hand with the weights."""
    rng = np.random.default_rng(9)
    rows = [
        {"query": f"q{q}", "doc": f"d{d}", "relevance": int(rng.integers(0, 3)), "score": float(rng.random())}
        for q in range(12)
        for d in rng.choice(10, size=int(rng.integers(2, 8)), replace=False)
    ]
    # q11 retrieves no relevant document: AP 0, the geometric mean's floor
    run = pl.DataFrame(rows).filter((pl.col("query") != "q11") | (pl.col("relevance") == 0))
    run = run.with_columns(
        group=pl.col("query").str.slice(1).cast(pl.Int64) % 2, weight=1.0 + pl.col("query").str.slice(1).cast(pl.Int64)
    )
    qrels, per_query = pytrec_eval_per_query(run, unretrieved_relevant=judgments)
    theirs = SUMMARY_MEASURES
    assert any(values["num_rel_ret"] == 0 for values in per_query.values())
    options: dict[str, Any] = {"doc": "doc", "ties": "doc", "by": "group", "weight": "weight"}
    if judgments:
        table = [{"query": q, "doc": d, "relevance": r} for q, docs in qrels.items() for d, r in docs.items()]
        options["qrels"] = _to_spark(spark, pl.DataFrame(table))
    frame = run.drop("relevance") if judgments else run
    got = lodestar_spark.evaluate_mean(_to_spark(spark, frame), list(theirs), **options).sort("group")
    weights = dict(run.select("query", "weight").unique().iter_rows())
    for row in got.iter_rows(named=True):
        queries = [q for q in per_query if int(q[1:]) % 2 == row["group"]]
        w = np.array([weights[q] for q in queries])
        for ours, name in theirs.items():
            values = np.array([per_query[q][name] for q in queries])
            expected = {
                "gm_map": np.exp(np.sum(w * values) / w.sum()),
                "gm_bpref": np.exp(np.sum(w * values) / w.sum()),
                "num_ret": np.sum(w * values),
                "num_rel_ret": np.sum(w * values),
                "ap": np.sum(w * values) / w.sum(),
            }[ours]
            assert row[ours] == pytest.approx(expected, rel=1e-9), (row["group"], ours)
