"""Partition-wise evaluation: `partitions.sink` and `combine_means` give the whole dataset's numbers.

The oracle is the single plan over the whole frame (itself checked against scikit-learn, trec_eval and
LightGBM in the other test modules), plus scikit-learn directly for one mean.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from sklearn.metrics import ndcg_score

import lodestar_polars  # also registers .rank_metrics
from lodestar_polars.partitions import combine_means, sink

REPO_ROOT = Path(__file__).resolve().parents[1]


def ragged_run(seed: int, queries: int = 300, max_length: int = 25) -> pl.DataFrame:
    """Ragged queries (1..max_length docs), shuffled rows, integer scores (many ties), a weight per query."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, max_length, queries)
    query = np.repeat(rng.permutation(10 * queries)[:queries], lengths)
    frame = pl.DataFrame(
        {
            "query": query,
            "doc": np.concatenate([rng.permutation(100)[:n] for n in lengths]),
            "relevance": rng.integers(0, 4, len(query)),
            "score": rng.integers(0, 6, len(query)).astype(float),
            "w": (query % 5 + 1).astype(float),
            "extra": rng.random(len(query)),
        }
    )
    return frame.sample(fraction=1.0, shuffle=True, seed=seed)


def per_query_at(path: Path, by: list[str] | None = None) -> pl.DataFrame:
    return pl.read_parquet(path).sort([*(by or []), "query"])


CASES: list[tuple[str, dict[str, Any]]] = [
    ("ndcg", {}),
    ("ndcg", {"k": [1, 3, 10, None], "weight": "w"}),
    ("ndcg", {"k": 5, "ties": "input", "gain": "exponential"}),
    ("ndcg", {"k": [2, 20], "ties": "reverse", "no_relevant": None}),
    ("ndcg", {"ties": "doc", "doc": "doc", "no_relevant": 1.0, "weight": "w"}),
    ("ndcg", {"ties": "pessimistic", "gain": {0: 0.0, 1: 1.0, 2: 5.0, 3: 7.0}}),
    ("dcg", {"k": [1, 4], "log_base": 10.0, "ties": "optimistic"}),
    ("reciprocal_rank", {"k": [1, 3, None], "threshold": 1.0, "weight": "w"}),
    ("reciprocal_rank", {"ties": "input", "doc": "doc"}),
    ("precision", {"k": [1, 5]}),
    ("recall", {"k": 10, "no_relevant": None, "weight": "w"}),
    ("average_precision", {"ties": "input", "threshold": 1.0}),
    ("success", {"k": [1, 3]}),
    ("evaluate", {"measures": ["ndcg@10", "p@5", "r@20", "ap", "rr", "success@1"], "weight": "w"}),
]


@pytest.mark.parametrize(("metric", "options"), CASES, ids=[f"{m}-{sorted(o)}" for m, o in CASES])
@pytest.mark.parametrize("partitions", [1, 7])
def test_sink_equals_the_single_plan(tmp_path: Path, metric: str, options: dict[str, Any], partitions: int) -> None:
    frame = ragged_run(seed=partitions)
    path = tmp_path / "out"
    mean = sink(frame.lazy(), path, metric=metric, partitions=partitions, **options)
    whole = getattr(frame.rank_metrics, metric)(**options)
    assert_frame_equal(per_query_at(path), whole, rel_tol=1e-12, abs_tol=1e-12)
    assert_frame_equal(mean, getattr(frame.rank_metrics, metric + "_mean")(**options), rel_tol=1e-12, abs_tol=1e-12)
    assert len(list(path.glob("*.parquet"))) <= partitions


def test_sink_mean_matches_scikit_learn(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    relevance, scores = rng.integers(0, 4, (200, 12)), rng.integers(0, 5, (200, 12)).astype(float)
    frame = pl.DataFrame(
        {"query": np.repeat(np.arange(200), 12), "relevance": relevance.ravel(), "score": scores.ravel()}
    )
    mean = sink(frame, tmp_path / "ndcg.parquet", partitions=5, k=[3, None])  # a DataFrame source works too
    assert mean["ndcg@3"].item() == pytest.approx(ndcg_score(relevance, scores, k=3), rel=1e-12)
    assert mean["ndcg"].item() == pytest.approx(ndcg_score(relevance, scores), rel=1e-12)


def test_sink_writes_one_file_for_a_parquet_path(tmp_path: Path) -> None:
    frame = ragged_run(seed=3)
    path = tmp_path / "ndcg.parquet"
    sink(frame.lazy(), path, partitions=4, k=10)
    assert path.is_file()
    assert_frame_equal(per_query_at(path), frame.rank_metrics.ndcg(k=10), rel_tol=1e-12)


def test_sink_reads_from_parquet_and_keeps_unused_columns_out(tmp_path: Path) -> None:
    frame = ragged_run(seed=4)
    frame.write_parquet(tmp_path / "run.parquet")
    mean = sink(pl.scan_parquet(tmp_path / "run.parquet"), tmp_path / "out", partitions=3, weight="w", k=[1, 5])
    assert_frame_equal(mean, frame.rank_metrics.ndcg_mean(weight="w", k=[1, 5]), rel_tol=1e-12)
    assert pl.read_parquet(tmp_path / "out").columns == ["query", "ndcg@1", "ndcg@5", "w"]


@pytest.fixture
def run_and_qrels() -> tuple[pl.DataFrame, pl.DataFrame]:
    """A run and judgments that overlap partly: run queries without judgments, judged queries not in the run,
    judged documents the run did not retrieve."""
    rng = np.random.default_rng(8)
    run = ragged_run(seed=8, queries=120).drop("relevance", "w")
    run_queries = run["query"].unique().to_numpy()
    judged_queries = np.concatenate([run_queries[:90], np.arange(5000, 5030)])
    qrels = pl.DataFrame(
        {
            "query": np.repeat(judged_queries, 15),
            "doc": np.concatenate([rng.permutation(120)[:15] for _ in judged_queries]),
            "relevance": rng.integers(-1, 4, 15 * len(judged_queries)),
        }
    )
    return run, qrels


@pytest.mark.parametrize("missing_queries", ["skip", "zero"])
@pytest.mark.parametrize(("metric", "options"), [("ndcg", {"k": [3, None]}), ("reciprocal_rank", {"k": 5})])
@pytest.mark.parametrize("partitions", [1, 16])
def test_sink_with_qrels_equals_the_single_plan(
    tmp_path: Path,
    run_and_qrels: tuple[pl.DataFrame, pl.DataFrame],
    metric: str,
    options: dict[str, Any],
    missing_queries: str,
    partitions: int,
) -> None:
    run, qrels = run_and_qrels
    options = {**options, "doc": "doc", "qrels": qrels.lazy(), "missing_queries": missing_queries}
    path = tmp_path / "out"
    mean = sink(run.lazy(), path, metric=metric, partitions=partitions, **options)
    whole_mean = getattr(run.rank_metrics, metric + "_mean")(**options)
    assert_frame_equal(mean, whole_mean, rel_tol=1e-12, abs_tol=1e-12)
    assert whole_mean["queries_without_judgments"].item() > 0
    whole = getattr(run.rank_metrics, metric)(**options)
    assert_frame_equal(per_query_at(path), whole, rel_tol=1e-12, abs_tol=1e-12)
    if missing_queries == "zero":  # the judged queries with no run row are scored, in their own buckets
        assert per_query_at(path)["query"].is_in(list(range(5000, 5030))).sum() == 30


def test_sink_scores_a_judged_query_whose_bucket_has_no_run_row(tmp_path: Path) -> None:
    run = pl.DataFrame({"query": [1, 1], "doc": ["a", "b"], "score": [0.5, 0.2]})
    qrels = pl.DataFrame({"query": [1, 2, 3, 4, 5, 6], "doc": ["a"] * 6, "relevance": [1] * 6})
    options: dict[str, Any] = {"doc": "doc", "qrels": qrels, "missing_queries": "zero"}
    mean = sink(run.lazy(), tmp_path / "out", partitions=8, **options)
    assert_frame_equal(mean, run.rank_metrics.ndcg_mean(**options))
    assert mean["queries"].item() == 6  # query 1 scores 1.0, the five judged queries without run rows 0.0


# Expression inputs that are not elementwise: the single plan evaluates them over the whole frame, so must sink
# (a bucket's own mean, median or window would give other values, hence other rankings and weights).
NOT_ELEMENTWISE: list[tuple[str, dict[str, Any]]] = [
    ("ndcg", {"score": (pl.col("score") - pl.col("score").mean()).abs()}),
    ("ndcg", {"score": (pl.col("score") - pl.col("score").median().over("model")).abs(), "k": [1, 5]}),
    ("reciprocal_rank", {"score": pl.col("extra").mean().over("doc"), "ties": "input", "k": [1, None]}),
    ("dcg", {"relevance": pl.col("relevance") + pl.col("extra").mean().over("doc"), "k": [2, None]}),
    ("ndcg", {"weight": pl.col("w") / pl.col("w").sum(), "k": 3}),
    ("evaluate", {"measures": ["ndcg@3", "ap"], "weight": pl.col("w").max().over("model") - pl.col("w") + 1}),
    ("precision", {"score": -pl.col("score"), "weight": pl.col("w") * 2, "k": 2}),  # elementwise still works
]


@pytest.mark.parametrize(("metric", "options"), NOT_ELEMENTWISE, ids=[str(i) for i in range(len(NOT_ELEMENTWISE))])
def test_sink_evaluates_expression_inputs_over_the_whole_source(
    tmp_path: Path, metric: str, options: dict[str, Any]
) -> None:
    frame = ragged_run(seed=11).with_columns(model=(pl.col("query") % 3).cast(pl.String))
    path = tmp_path / "out"
    mean = sink(frame.lazy(), path, metric=metric, partitions=6, **options)
    whole = getattr(frame.rank_metrics, metric)(**options)
    assert_frame_equal(per_query_at(path), whole, rel_tol=1e-12, abs_tol=1e-12)
    assert_frame_equal(mean, getattr(frame.rank_metrics, metric + "_mean")(**options), rel_tol=1e-12, abs_tol=1e-12)


def test_sink_evaluates_a_relevance_expression_over_the_whole_judgments(
    tmp_path: Path, run_and_qrels: tuple[pl.DataFrame, pl.DataFrame]
) -> None:
    run, qrels = run_and_qrels
    # relevant: judged above the judgments' median label, a number of the whole judgments only
    options = {
        "doc": "doc",
        "qrels": qrels.lazy(),
        "relevance": pl.col("relevance") > pl.col("relevance").median(),
        "score": pl.col("score") - pl.col("score").mean(),
        "k": [3, None],
    }
    assert qrels["relevance"].median() not in (qrels["relevance"].min(), qrels["relevance"].max())
    path = tmp_path / "out"
    mean = sink(run.lazy(), path, metric="average_precision", partitions=16, **options)
    whole = run.rank_metrics.average_precision(**options)
    assert_frame_equal(per_query_at(path), whole, rel_tol=1e-12, abs_tol=1e-12)
    assert_frame_equal(mean, run.rank_metrics.average_precision_mean(**options), rel_tol=1e-12, abs_tol=1e-12)


# -- errors and atomicity ------------------------------------------------------------------------------------


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_data_error_leaves_nothing_at_path(tmp_path: Path) -> None:
    frame = ragged_run(seed=2)
    bad_query = frame["query"][17]
    frame = frame.with_columns(
        pl.when(pl.col("query") == bad_query).then(float("nan")).otherwise(pl.col("score")).alias("score")
    )
    folder = tmp_path / "results"
    folder.mkdir()
    for path in (folder / "out", folder / "out.parquet"):
        with pytest.raises(ValueError, match=f"score column 'score' has .* the first in query {bad_query}"):
            sink(frame.lazy(), path, partitions=6)
    assert leftovers(folder) == []


def test_a_mean_error_leaves_nothing_at_path(tmp_path: Path) -> None:
    frame = ragged_run(seed=2).with_columns(w=pl.lit(0.0))
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero, can't be normalized"):
        sink(frame.lazy(), tmp_path / "out", partitions=3, weight="w")
    with pytest.raises(ZeroDivisionError):
        frame.rank_metrics.ndcg_mean(weight="w")  # the single plan agrees
    assert leftovers(tmp_path) == []


def test_a_partition_without_query_does_not_fail_when_the_whole_has_some(tmp_path: Path) -> None:
    # no_relevant=None: queries without a relevant document are left out of the mean; in most buckets that
    # is every query, which alone would raise "no query to average"
    frame = ragged_run(seed=9).with_columns(
        relevance=pl.when(pl.col("query") == pl.col("query").min()).then(pl.col("relevance")).otherwise(0)
    )
    mean = sink(frame.lazy(), tmp_path / "out", partitions=5, no_relevant=None)
    assert_frame_equal(mean, frame.rank_metrics.ndcg_mean(no_relevant=None), rel_tol=1e-12)
    assert mean["queries"].item() == 1


def test_no_query_at_all_raises_like_the_single_plan(tmp_path: Path) -> None:
    empty = ragged_run(seed=1).clear()
    with pytest.raises(ValueError, match="no query to average"):
        sink(empty.lazy(), tmp_path / "out", partitions=3)
    with pytest.raises(ValueError, match="no query to average"):
        empty.rank_metrics.ndcg_mean()
    assert leftovers(tmp_path) == []


def test_options_are_checked_before_any_data_is_read(tmp_path: Path) -> None:
    reads = []

    def record(batch: pl.Series) -> pl.Series:
        reads.append(len(batch))
        return batch

    frame = ragged_run(seed=1).lazy().with_columns(pl.col("score").map_batches(record, return_dtype=pl.Float64))
    with pytest.raises(ValueError, match="k must be at least 1, got 0"):
        sink(frame, tmp_path / "out", partitions=2, k=0)
    with pytest.raises(ValueError, match="ties must be one of"):
        sink(frame, tmp_path / "out", partitions=2, ties="random")
    with pytest.raises(TypeError, match="unexpected keyword argument 'topk'"):
        sink(frame, tmp_path / "out", partitions=2, topk=3)
    with pytest.raises(pl.exceptions.ColumnNotFoundError, match="weight column 'traffic' not found"):
        sink(frame, tmp_path / "out", partitions=2, weight="traffic")
    with pytest.raises(ValueError, match="log_base"):
        sink(frame, tmp_path / "out", metric="dcg", partitions=2, log_base=1.0)
    assert reads == []
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("metric", ["ndcg_mean", "ndcg_score", "mrr", "_mean", 3])
def test_an_unknown_metric_is_refused(tmp_path: Path, metric: object) -> None:
    with pytest.raises(ValueError, match=r"metric must be a \.rank_metrics method with a _mean form, one of .*ndcg"):
        sink(ragged_run(seed=1).lazy(), tmp_path / "out", metric=metric, partitions=2)  # type: ignore[arg-type]  # the wrong value is the point


@pytest.mark.parametrize(
    ("partitions", "error"), [(0, ValueError), (-2, ValueError), (2.0, TypeError), (True, TypeError)]
)
def test_a_bad_partitions_value_is_refused(tmp_path: Path, partitions: object, error: type[Exception]) -> None:
    with pytest.raises(error, match="partitions must be"):
        sink(ragged_run(seed=1).lazy(), tmp_path / "out", partitions=partitions)  # type: ignore[arg-type]  # the wrong value is the point


def test_an_existing_path_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "out.parquet"
    path.write_text("keep me")
    with pytest.raises(FileExistsError, match=r"out\.parquet' exists"):
        sink(ragged_run(seed=1).lazy(), path, partitions=2)
    assert path.read_text() == "keep me"


def test_progress_bar_counts_the_partitions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("tqdm")
    frame = ragged_run(seed=1)
    mean = sink(frame.lazy(), tmp_path / "out", partitions=3, progress=True)
    assert_frame_equal(mean, frame.rank_metrics.ndcg_mean(), rel_tol=1e-12)
    assert "3/3" in capsys.readouterr().err


def test_progress_without_tqdm_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # makes `from tqdm.auto import tqdm` raise ImportError
    with pytest.raises(ImportError, match=r"lodestar-polars\[progress\]"):
        sink(ragged_run(seed=1).lazy(), tmp_path / "out", partitions=2, progress=True)
    assert leftovers(tmp_path) == []


# -- bounded memory --------------------------------------------------------------------------------------------

MEMORY_CHILD = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    import polars as pl
    from lodestar_polars.partitions import sink

    def peak_kib():
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])

    source, out, partitions = sys.argv[1], sys.argv[2], int(sys.argv[3])
    pl.scan_parquet(source).head(1000).collect()  # the engine's own start-up memory, before the baseline
    before = peak_kib()
    mean = sink(pl.scan_parquet(source), out, partitions=partitions, k=10)
    print(json.dumps({"before": before, "after": peak_kib(), "mean": mean["ndcg@10"].item()}))
    """
)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc (Linux)")
def test_peak_memory_follows_the_partition_not_the_data(tmp_path: Path) -> None:
    rows, per_query = 6_000_000, 50
    rng = np.random.default_rng(0)
    pl.DataFrame(
        {
            "query": np.repeat(np.arange(rows // per_query, dtype=np.int64), per_query),
            "relevance": rng.integers(0, 5, rows).astype(np.int8),
            "score": rng.random(rows),
        }
    ).write_parquet(tmp_path / "run.parquet")
    env = {**os.environ, "POLARS_MAX_THREADS": "2", "PYTHONPATH": str(REPO_ROOT)}

    def growth(partitions: int) -> tuple[int, float]:
        command = [sys.executable, "-c", MEMORY_CHILD, str(tmp_path / "run.parquet"), str(tmp_path / f"o{partitions}")]
        done = subprocess.run([*command, str(partitions)], capture_output=True, text=True, env=env, check=True)
        report = json.loads(done.stdout)
        return report["after"] - report["before"], report["mean"]

    whole, whole_mean = growth(1)
    split, split_mean = growth(16)
    assert split_mean == pytest.approx(whole_mean, rel=1e-12)
    # measured here (6M rows): one bucket (the whole data in the windows) grows the peak by ~450 MB, 16 buckets
    # by ~90 MB (writer buffers and allocator arenas on top of 1/16 of the windows): assert half, for margin
    assert whole > 200_000, f"the whole-data run grew only {whole} KiB: the test no longer measures the windows"
    assert split < 0.5 * whole, f"peak growth {split} KiB with 16 partitions vs {whole} KiB with 1"


# -- combine_means ---------------------------------------------------------------------------------------------


def test_combine_means_equals_the_whole(tmp_path: Path) -> None:
    frame = ragged_run(seed=6)
    parts = [frame.filter(pl.col("query") % 4 == bucket) for bucket in range(4)]
    options: dict[str, Any] = {"k": [1, 5, None], "weight": "w"}
    combined = combine_means([part.rank_metrics.ndcg_mean(**options) for part in parts])
    assert_frame_equal(combined, frame.rank_metrics.ndcg_mean(**options), rel_tol=1e-12)


def test_combine_means_by_group_equals_each_group_whole() -> None:
    # mean frames with a group column, one row per group present in the partition, computed group by group
    frame = ragged_run(seed=7).with_columns(group=pl.col("query") % 3, bucket=pl.col("query") % 5)

    def group_means(part: pl.DataFrame) -> pl.DataFrame:
        rows = [
            pl.DataFrame({"group": [group]}).hstack(
                part.filter(pl.col("group") == group).rank_metrics.ndcg_mean(k=[1, 3], weight="w")
            )
            for group in sorted(part["group"].unique())
        ]
        return pl.concat(rows)

    parts = [group_means(frame.filter(pl.col("bucket") == b)) for b in range(5)]
    parts[0] = parts[0].filter(pl.col("group") != 2)  # a group may be missing from a partition...
    kept = frame.filter(~((pl.col("bucket") == 0) & (pl.col("group") == 2)))  # ...as if it had no query there
    combined = combine_means(parts, by="group")
    assert_frame_equal(combined, group_means(kept), rel_tol=1e-12)


def test_combine_means_combines_a_geometric_mean_and_a_sum_as_their_measures_summarise() -> None:
    """gm_map's parts combine into trec_eval's geometric mean over every query, exp(mean(log(max(AP, 1e-5)))),
    and num_ret's into the sum over every query (not their weighted arithmetic means).  Oracle: pytrec_eval's
    per-query gm_map (trec_eval's log(max(AP, 1e-5))) and num_ret, summarised by hand."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = np.random.default_rng(3)
    qrels = {f"q{q}": {f"d{d}": int(rng.integers(0, 2)) for d in range(8)} | {"d0": 1} for q in range(12)}
    run = {
        query: {f"d{d}": float(rng.random()) for d in rng.choice(8, size=int(rng.integers(2, 8)), replace=False)}
        for query in qrels
    }
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"gm_map", "num_ret"}).evaluate(run)
    frame = pl.DataFrame([{"query": q, "doc": d, "score": s} for q, docs in run.items() for d, s in docs.items()])
    judgments = pl.DataFrame(
        [{"query": q, "doc": d, "relevance": r} for q, docs in qrels.items() for d, r in docs.items()]
    )
    part = pl.col("query").str.slice(1).cast(pl.Int64) % 3
    parts = [
        frame.filter(part == index).rank_metrics.evaluate_mean(
            ["gm_map", "num_ret", "ap"], doc="doc", ties="doc", qrels=judgments.filter(part == index)
        )
        for index in range(3)
    ]
    combined = combine_means(parts)
    logs = [values["gm_map"] for values in theirs.values()]
    assert combined["gm_map"].item() == pytest.approx(np.exp(np.mean(logs)), rel=1e-12)
    assert combined["num_ret"].item() == sum(values["num_ret"] for values in theirs.values())
    assert combined["queries"].item() == len(qrels)


def test_combine_means_refuses_mismatched_frames() -> None:
    frame = ragged_run(seed=1)
    with pytest.raises(ValueError, match="combine_means takes one-row frames with the same columns"):
        combine_means([frame.rank_metrics.ndcg_mean(k=1), frame.rank_metrics.ndcg_mean(k=2)])
    two_rows = pl.concat([frame.rank_metrics.ndcg_mean()] * 2)
    with pytest.raises(ValueError, match="one-row frames"):
        combine_means([two_rows])
    with pytest.raises(ValueError, match="needs at least one"):
        combine_means([])
    with pytest.raises(ValueError, match="with 'weight_sum'"):
        combine_means([frame.rank_metrics.ndcg().head(1)])


def test_combine_means_by_refuses_a_repeated_group_or_a_missing_column() -> None:
    mean = pl.DataFrame({"group": [1, 1], "ndcg": [0.5, 0.7], "queries": [1, 1], "weight_sum": [1.0, 1.0]})
    with pytest.raises(ValueError, match=r"one row per by group in each frame; group \(1,\) repeats"):
        combine_means([mean], by="group")
    with pytest.raises(ValueError, match="by column 'market' is not a column"):
        combine_means([mean], by="market")


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"ndcg": [float("nan")]}, r"column 'ndcg' of means\[1\] is nan; it must be a finite number or null"),
        ({"ndcg": [float("inf")]}, r"column 'ndcg' of means\[1\] is inf; it must be a finite number or null"),
        ({"queries": [-1]}, r"column 'queries' of means\[1\] is -1; it must be a non-negative integer"),
        ({"queries": [1.0]}, r"column 'queries' of means\[1\] has dtype Float64; each value must be a non-negative"),
        ({"weight_sum": ["1.0"]}, r"column 'weight_sum' of means\[1\] has dtype String; each value must be a finite"),
        ({"weight_sum": [-1.0]}, r"column 'weight_sum' of means\[1\] is -1.0; it must be a finite non-negative"),
        ({"weight_sum": [float("nan")]}, r"column 'weight_sum' of means\[1\] is nan"),
    ],
)
def test_combine_means_refuses_values_no_mean_frame_holds(bad: dict[str, list[Any]], message: str) -> None:
    good = pl.DataFrame({"ndcg": [0.5], "queries": [2], "weight_sum": [2.0]})
    with pytest.raises(ValueError, match=f"^combine_means: {message}"):
        combine_means([good, pl.DataFrame({**good.to_dict(as_series=False), **bad})])


def test_combine_means_names_the_group_of_a_bad_value() -> None:
    good = pl.DataFrame({"group": ["x", "y"], "ndcg": [0.5, 0.5], "queries": [1, 1], "weight_sum": [1.0, 1.0]})
    bad = good.with_columns(ndcg=pl.Series([0.5, float("nan")]))
    with pytest.raises(ValueError, match=r"column 'ndcg' of means\[1\] \(group \('y',\)\) is nan"):
        combine_means([good, bad], by="group")


def test_combine_means_a_part_whose_mean_is_null_adds_nothing() -> None:
    """A part with no query (null mean) used to enter the denominator with its weight_sum: 1.0 / 5.0."""
    first = pl.DataFrame({"ndcg": [0.5], "p@1": [1.0], "queries": [2], "weight_sum": [2.0]})
    empty = pl.DataFrame(
        {"ndcg": [None], "p@1": [None], "queries": [0], "weight_sum": [3.0]},
        schema_overrides={"ndcg": pl.Float64, "p@1": pl.Float64},
    )
    assert combine_means([first, empty]).row(0) == (0.5, 1.0, 2, 2.0)
    # only the second mean null: it is weighted over the parts that have it; the counts follow the first
    partly = pl.DataFrame({"ndcg": [0.8], "p@1": [None], "queries": [1], "weight_sum": [2.0]}).cast({"p@1": pl.Float64})
    assert combine_means([first, partly]).row(0) == pytest.approx(((0.5 * 2 + 0.8 * 2) / 4, 1.0, 3, 4.0))
    with pytest.raises(ValueError, match=r"^no query to average: the mean 'ndcg' is null in every frame"):
        combine_means([empty, empty])


def test_combine_means_zero_weight_sum_raises() -> None:
    mean = pl.DataFrame({"ndcg": [0.5], "queries": [1], "weight_sum": [0.0]})
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
        combine_means([mean, mean])


# -- by= (needs the by= core on main; fails on a branch without it) ------------------------------------------


@pytest.mark.parametrize(("metric", "options"), [("ndcg", {"k": [1, 5], "weight": "w"}), ("reciprocal_rank", {})])
def test_sink_by_equals_the_single_plan(tmp_path: Path, metric: str, options: dict[str, Any]) -> None:
    # a query appears in several groups (its rows split by "device"), so the buckets must follow the query only
    frame = ragged_run(seed=12).with_columns(
        device=pl.when(pl.col("doc") % 2 == 0).then(pl.lit("a")).otherwise(pl.lit("b"))
    )
    options = {**options, "by": "device"}
    path = tmp_path / "out"
    mean = sink(frame.lazy(), path, metric=metric, partitions=6, **options)
    assert_frame_equal(mean, getattr(frame.rank_metrics, metric + "_mean")(**options), rel_tol=1e-12)
    whole = getattr(frame.rank_metrics, metric)(**options)
    assert_frame_equal(per_query_at(path, by=["device"]), whole, rel_tol=1e-12)


@pytest.mark.parametrize("missing_queries", ["skip", "zero"])
def test_sink_by_with_qrels_equals_the_single_plan(
    tmp_path: Path, run_and_qrels: tuple[pl.DataFrame, pl.DataFrame], missing_queries: str
) -> None:
    run, qrels = run_and_qrels
    # device "c" holds one query only, so most buckets lack it; with missing_queries="zero" the single plan
    # still scores every judged query missing from c's run in group c
    device = pl.when(pl.col("doc") % 3 == 0).then(pl.lit("a")).otherwise(pl.lit("b"))
    run = run.with_columns(device=pl.when(pl.col("query") == pl.col("query").min()).then(pl.lit("c")).otherwise(device))
    options: dict[str, Any] = {"doc": "doc", "qrels": qrels, "by": "device", "k": 5, "missing_queries": missing_queries}
    path = tmp_path / "out"
    mean = sink(run.lazy(), path, partitions=8, **options)
    assert_frame_equal(mean, run.rank_metrics.ndcg_mean(**options), rel_tol=1e-12)
    whole = run.rank_metrics.ndcg(**options)
    assert_frame_equal(per_query_at(path, by=["device"]), whole, rel_tol=1e-12)


def test_sink_by_on_an_empty_frame_gives_the_single_plan_answer(tmp_path: Path) -> None:
    empty = ragged_run(seed=1).clear().with_columns(device=pl.lit("a"))
    mean = sink(empty.lazy(), tmp_path / "out", partitions=3, by="device")
    assert_frame_equal(mean, empty.rank_metrics.ndcg_mean(by="device"))
    assert mean.height == 0


def _group_by_group(metric: str) -> tuple[Any, Any]:
    """A by-capable metric built from the single plan run on each group's rows: the oracle for how `sink`
    buckets and combines by groups, independent of the core's own by= support."""

    def per_query(self: Any, *, by: str, **options: Any) -> pl.LazyFrame:
        frame = self._frame
        empty = getattr(frame.rank_metrics, metric)(**options).select(pl.lit(None, pl.String).alias(by), pl.all())
        groups = frame.select(by).unique().collect()[by].sort().to_list()
        parts = [
            getattr(frame.filter(pl.col(by) == g).rank_metrics, metric)(**options).select(pl.lit(g).alias(by), pl.all())
            for g in groups
        ]
        return pl.concat([empty.clear(), *parts])

    def mean(self: Any, *, by: str, **options: Any) -> pl.LazyFrame:
        frame = self._frame
        empty = getattr(frame.rank_metrics, f"{metric}_mean")(**options).select(
            pl.lit(None, pl.String).alias(by), pl.all()
        )
        groups = frame.select(by).unique().collect()[by].sort().to_list()
        parts = [
            getattr(frame.filter(pl.col(by) == g).rank_metrics, f"{metric}_mean")(**options).select(
                pl.lit(g).alias(by), pl.all()
            )
            for g in groups
        ]
        return pl.concat([empty.clear(), *parts])

    return per_query, mean


@pytest.mark.parametrize("with_qrels", [False, True])
def test_sink_by_combines_groups_like_one_plan_per_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_and_qrels: tuple[pl.DataFrame, pl.DataFrame], with_qrels: bool
) -> None:
    per_query, mean = _group_by_group("ndcg")
    monkeypatch.setattr(lodestar_polars.RankMetricsLazyFrame, "grouped_ndcg", per_query, raising=False)
    monkeypatch.setattr(lodestar_polars.RankMetricsLazyFrame, "grouped_ndcg_mean", mean, raising=False)
    if with_qrels:
        frame, qrels = run_and_qrels
        options: dict[str, Any] = {"doc": "doc", "qrels": qrels, "k": 5}
    else:
        frame, options = ragged_run(seed=12), {"k": [1, 5], "weight": "w"}
    # a query's rows split between devices: the buckets must follow the query, not (device, query)
    frame = frame.with_columns(device=pl.when(pl.col("doc") % 3 == 0).then(pl.lit("a")).otherwise(pl.lit("b")))
    path = tmp_path / "out"
    got = sink(frame.lazy(), path, metric="grouped_ndcg", partitions=8, by="device", **options)
    expected = mean(lodestar_polars.rank_metrics(frame.lazy()), by="device", **options).collect()
    assert_frame_equal(got, expected, rel_tol=1e-12, abs_tol=1e-12)
    if with_qrels:
        assert expected["queries_without_judgments"].min() > 0
    whole = per_query(lodestar_polars.rank_metrics(frame.lazy()), by="device", **options).collect()
    assert_frame_equal(per_query_at(path, by=["device"]), whole, rel_tol=1e-12, abs_tol=1e-12)
