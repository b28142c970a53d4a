"""The plan runs natively in Polars' streaming engine: no in-memory fallback node, Parquet in and out."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import lodestar_polars  # noqa: F401  (registers .rank_metrics)
from lodestar_polars import RankMetricsLazyFrame

# in the physical graph, "0.0 0.3 1.0" is the fill colour of an in-memory engine fallback node
FALLBACK_MARKERS = ("in-memory-map", 'fillcolor="0.0 0.3 1.0"')

OPTIONS: list[dict[str, Any]] = [
    {},
    {"k": [1, 3, 10], "weight": "w"},
    {"k": 5, "ties": "doc", "doc": "doc"},
    {"k": [2, None], "ties": "reverse", "gain": "exponential", "no_relevant": None},
    {"ties": "optimistic", "gain": {0: 0.0, 1: 1.0, 2: 3.0, 3: 7.0}, "no_relevant": "error"},
    {"ties": "input", "doc": "doc", "weight": "w"},
]


@pytest.fixture(scope="module")
def parquet_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(11)
    n_queries = 300
    lengths = rng.integers(1, 40, n_queries)
    query = np.repeat(np.arange(n_queries), lengths)
    frame = pl.DataFrame(
        {
            "query": query,
            "doc": [f"d{i}" for i in range(len(query))],
            "relevance": rng.integers(0, 4, len(query)),
            "score": rng.integers(0, 6, len(query)).astype(float),
            "w": (query % 5 + 1).astype(float),
        }
    ).with_columns(pl.when(pl.col("query") % 7 == 0).then(0).otherwise(pl.col("relevance")).alias("relevance"))
    frame = frame.with_columns(
        pl.when(pl.col("query") % 7 == 0).then(1).otherwise(pl.col("relevance")).alias("relevance")
    )
    # by columns, a second query key, a second doc key, and inputs for expressions
    frame = frame.with_columns(
        system=pl.Series(rng.choice(["bm25", "dense", "hybrid"], len(query))),
        locale=pl.Series(rng.integers(0, 3, len(query)), dtype=pl.Int8),
        session=pl.Series(query % 3),
        site=pl.Series(rng.choice(["a", "b"], len(query))),
        distance=-pl.col("score"),
    )
    path = tmp_path_factory.mktemp("data") / "eval.parquet"
    frame.sample(fraction=1.0, shuffle=True, seed=1).write_parquet(path, row_group_size=500)
    return path


def fallback_nodes(plan: pl.LazyFrame) -> list[str]:
    graph = plan.show_graph(engine="streaming", plan_stage="physical", raw_output=True, show=False)
    assert isinstance(graph, str)
    return [line for line in graph.splitlines() if any(marker in line for marker in FALLBACK_MARKERS)]


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("method", ["ndcg", "dcg", "ndcg_mean", "dcg_mean", "reciprocal_rank", "reciprocal_rank_mean"])
def test_physical_plan_has_no_in_memory_fallback(parquet_file: Path, method: str, options: dict[str, Any]) -> None:
    if method.startswith("dcg") and "no_relevant" in options:
        options = {k: v for k, v in options.items() if k != "no_relevant"}
    if method.startswith("reciprocal_rank"):
        options = {k: v for k, v in options.items() if k not in ("no_relevant", "gain")}
    plan = getattr(pl.scan_parquet(parquet_file).rank_metrics, method)(**options)
    assert fallback_nodes(plan) == []


@pytest.mark.parametrize("judged", [False, True])
def test_compat_plan_has_no_in_memory_fallback(parquet_file: Path, judged: bool) -> None:
    """compat reads a table of partial sums by `gather`, row by row before the per-query aggregation: inside it,
    the streaming engine would fall back to memory."""
    scan = pl.scan_parquet(parquet_file)
    run, options = scan, {}
    if judged:
        run, options = scan.drop("relevance"), {"qrels": scan.select("query", "doc", "relevance")}
    names = ["compat", "compat(p=0.8,normalize=False)"]
    plan = run.rank_metrics.evaluate(names, doc="doc", ties="doc", **options)
    assert fallback_nodes(plan) == []


@pytest.mark.parametrize("judged", [False, True], ids=["in-frame relevance", "qrels"])
def test_tie_averaged_ndcg_rel_and_bpref_have_no_in_memory_fallback(parquet_file: Path, judged: bool) -> None:
    """Their block expectations read block sums (sums, least and greatest values) and ordered windows only."""
    source = pl.scan_parquet(parquet_file)
    qrels = source.select("query", "doc", "relevance") if judged else None
    plan = source.rank_metrics.evaluate(["ndcg_rel", "bpref", "gm_bpref"], doc="doc", ties="average", qrels=qrels)
    assert fallback_nodes(plan) == []


def test_the_fallback_detector_sees_a_fallback(parquet_file: Path) -> None:
    """Guard against a detector that can never fire: a non-elementwise Python function is a fallback."""
    plan = pl.scan_parquet(parquet_file).select(pl.col("score").map_batches(lambda s: s, return_dtype=pl.Float64))
    assert fallback_nodes(plan) != []


@pytest.mark.parametrize("options", OPTIONS[:4])
def test_sink_parquet_streams_the_same_numbers(parquet_file: Path, tmp_path: Path, options: dict[str, Any]) -> None:
    eager = pl.read_parquet(parquet_file).rank_metrics.ndcg(**options)
    out = tmp_path / "per_query.parquet"
    pl.scan_parquet(parquet_file).rank_metrics.ndcg(**options).sink_parquet(out, engine="streaming")
    assert_frame_equal(pl.read_parquet(out), eager, rel_tol=1e-12, abs_tol=1e-12)


def test_per_query_frame_and_mean_from_one_lazy_source(parquet_file: Path) -> None:
    source = pl.scan_parquet(parquet_file)
    per_query, mean = pl.collect_all(
        [source.rank_metrics.ndcg(k=[1, 10]), source.rank_metrics.ndcg_mean(k=[1, 10])], engine="streaming"
    )
    assert mean["queries"].item() == per_query.height
    assert mean["ndcg@10"].item() == pytest.approx(per_query["ndcg@10"].mean(), rel=1e-12)


# --- by=, composite keys, expression inputs, judgments, several measures --------------------------------

BASES = ["ndcg", "dcg", "reciprocal_rank", "precision", "recall", "average_precision", "success", "evaluate"]
ALL_METHODS = [method for base in BASES for method in (base, f"{base}_mean")]
MEASURES = ["ndcg@10", "dcg", "p@5", "r", "ap@10", "rr", "success@1"]
QRELS = "<the judgments of the run, scanned from Parquet>"

BY_OPTIONS: dict[str, dict[str, Any]] = {
    "one by column": {"by": "system"},
    "two by columns, cut-offs, weight": {"by": ["system", "locale"], "k": [1, 5, None], "weight": "w"},
    "composite query and doc keys": {
        "by": "system",
        "query": ["session", "query"],
        "doc": ["site", "doc"],
        "ties": "doc",
        "k": 10,
    },
    "expression inputs": {
        "by": ["locale", "system"],
        "score": -pl.col("distance"),
        "relevance": pl.col("relevance").cast(pl.Int8),
        "weight": pl.col("w") * 2,
        "ties": "pessimistic",
    },
    "qrels, missing queries zero, by": {
        "by": ["system", "locale"],
        "doc": "doc",
        "qrels": QRELS,
        "missing_queries": "zero",
        "ties": "input",
        "k": [3, 10],
    },
    # every measure cut off (evaluate's list apart): the judgments are joined after the positions
    "qrels joined late, tie averaging": {"by": "system", "doc": "doc", "qrels": QRELS, "k": [5, 10]},
    # the rows past max_retrieved still judge: the terms come from the first rows, R and the ideals from all
    "in-frame relevance, max_retrieved": {"by": "system", "doc": "doc", "max_retrieved": 7, "ties": "doc"},
    "qrels, judged_only, max_retrieved, weight": {
        "by": "system",
        "doc": "doc",
        "qrels": QRELS,
        "judged_only": True,
        "max_retrieved": 7,
        "ties": "doc",
        "weight": "w",
    },
}


@pytest.fixture(scope="module")
def qrels_file(parquet_file: Path) -> Path:
    path = parquet_file.with_name("qrels.parquet")
    pl.read_parquet(parquet_file).select("query", "doc", "relevance").write_parquet(path)
    return path


@pytest.mark.parametrize("options", BY_OPTIONS.values(), ids=BY_OPTIONS.keys())
@pytest.mark.parametrize("method", ALL_METHODS)
def test_by_keys_expressions_and_qrels_have_no_in_memory_fallback(
    parquet_file: Path, qrels_file: Path, method: str, options: dict[str, Any]
) -> None:
    accepted = inspect.signature(getattr(RankMetricsLazyFrame, method)).parameters
    options = {name: value for name, value in options.items() if name in accepted}
    if options.get("qrels") == QRELS:
        options["qrels"] = pl.scan_parquet(qrels_file)
    arguments = [MEASURES] if method.startswith("evaluate") else []
    plan = getattr(pl.scan_parquet(parquet_file).rank_metrics, method)(*arguments, **options)
    assert fallback_nodes(plan) == []


def test_by_with_qrels_sinks_the_numbers_of_the_eager_call(
    parquet_file: Path, qrels_file: Path, tmp_path: Path
) -> None:
    """The streamed by= plan is not only fallback-free: it writes what the eager call returns."""
    options: dict[str, Any] = {"by": ["system", "locale"], "doc": "doc", "missing_queries": "zero"}
    eager = pl.read_parquet(parquet_file).rank_metrics.evaluate(MEASURES, qrels=pl.read_parquet(qrels_file), **options)
    out = tmp_path / "by.parquet"
    source = pl.scan_parquet(parquet_file).rank_metrics
    source.evaluate(MEASURES, qrels=pl.scan_parquet(qrels_file), **options).sink_parquet(out, engine="streaming")
    assert_frame_equal(pl.read_parquet(out), eager, rel_tol=1e-12, abs_tol=1e-12)
