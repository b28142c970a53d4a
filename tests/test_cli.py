"""The `lodestar-polars` console script, run as a subprocess the way a scheduler runs it.

Oracles: scikit-learn's `ndcg_score` / `dcg_score` (evaluate), reciprocal ranks derived by hand in plain
Python on tie-free scores, trec_eval's own output files (../shared/data/trec_eval) and pytrec_eval-terrier
(trec_eval's C code) on random runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import pytrec_eval
from polars.testing import assert_frame_equal
from sklearn.metrics import dcg_score, ndcg_score

import lodestar_polars
from lodestar_polars import cli as command_line
from tests.cases import SUMMARY_MEASURES, pytrec_eval_per_query

SCRIPT = Path(sys.executable).parent / "lodestar-polars"
PRINTED = 5e-5  # trec_eval prints 4 decimals
EXACT = 1e-12


def cli(*args: object, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run the installed console script."""
    if not SCRIPT.exists():
        pytest.fail(f"console script not found at {SCRIPT}: install the package (pip install .) into this Python.")
    return subprocess.run(
        [str(SCRIPT), *(str(arg) for arg in args)], capture_output=True, text=True, cwd=cwd, timeout=600, check=False
    )


def assert_data_error(result: subprocess.CompletedProcess[str], fragment: str) -> None:
    """Exit code 1, one line on stderr naming the problem, no traceback, nothing on stdout."""
    assert result.returncode == 1, result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert fragment in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def assert_usage_error(result: subprocess.CompletedProcess[str], fragment: str) -> None:
    assert result.returncode == 2, result.stderr
    assert fragment in result.stderr
    assert "Traceback" not in result.stderr


# --------------------------------------------------------------------------------------------------------
# test data: an evaluation log, each (model, query) with 3-6 documents, scores with ties


def evaluation_log(seed: int = 7, models: tuple[str, ...] = ("bm25",), queries: int = 12) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for model in models:
        for query in range(queries):
            for d in range(int(rng.integers(3, 7))):
                rows.append((model, query, f"d{d}", int(rng.integers(0, 4)), float(rng.integers(0, 5)) / 4))
    return pl.DataFrame(rows, schema=["model", "query", "doc", "relevance", "score"], orient="row")


def sklearn_per_query(log: pl.DataFrame, keys: list[str], k: int | None, metric: str = "ndcg") -> dict[tuple, float]:
    score = ndcg_score if metric == "ndcg" else dcg_score
    values = {}
    for key, group in log.group_by(keys, maintain_order=True):
        values[tuple(key)] = float(score([group["relevance"].to_list()], [group["score"].to_list()], k=k))
    return values


def reciprocal_rank_by_hand(relevance: list[int], scores: list[float]) -> float:
    """1 / position of the first relevant document, scores sorted descending (they must not tie)."""
    assert len(set(scores)) == len(scores)
    ranked = sorted(zip(scores, relevance, strict=True), reverse=True)
    return next((1 / (i + 1) for i, (_, rel) in enumerate(ranked) if rel > 0), 0.0)


@pytest.fixture
def log_parquet(tmp_path: Path) -> tuple[pl.DataFrame, Path]:
    log = evaluation_log()
    path = tmp_path / "log.parquet"
    log.write_parquet(path)
    return log, path


# --------------------------------------------------------------------------------------------------------
# entry points, help, version


def test_version() -> None:
    result = cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"lodestar-polars {lodestar_polars.__version__}"


@pytest.mark.parametrize("command", [[], ["evaluate"], ["trec_eval"]])
def test_help_on_every_command(command: list[str]) -> None:
    result = cli(*command, "--help")
    assert result.returncode == 0
    assert result.stdout.startswith(f"usage: lodestar-polars {' '.join(command)}".rstrip())
    assert result.stderr == ""


def test_python_dash_m_runs_the_same_command() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "lodestar_polars", "--version"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0
    assert result.stdout == cli("--version").stdout


def test_no_command_is_a_usage_error() -> None:
    assert_usage_error(cli(), "required")


# --------------------------------------------------------------------------------------------------------
# evaluate: inputs


def test_parquet_in_per_query_parquet_and_json_summary_out(tmp_path: Path, log_parquet: tuple) -> None:
    log, path = log_parquet
    per_query, summary = tmp_path / "per_query.parquet", tmp_path / "summary.json"
    result = cli("evaluate", path, "-m", "ndcg@5,ndcg", "--per-query", per_query, "--summary", summary)
    assert result.returncode == 0, result.stderr
    frame = pl.read_parquet(per_query)
    assert frame.columns == ["query", "ndcg@5", "ndcg"]
    for column, k in (("ndcg@5", 5), ("ndcg", None)):
        expected = sklearn_per_query(log, ["query"], k)
        assert frame[column].to_list() == pytest.approx([expected[(q,)] for q in frame["query"]], abs=EXACT)
    rows = json.loads(summary.read_text())
    assert len(rows) == 1
    assert rows[0]["ndcg@5"] == pytest.approx(np.mean(list(sklearn_per_query(log, ["query"], 5).values())), abs=EXACT)
    assert rows[0]["queries"] == log["query"].n_unique()
    assert rows[0]["weight_sum"] == log["query"].n_unique()


def test_the_mean_table_is_printed(log_parquet: tuple) -> None:
    log, path = log_parquet
    result = cli("evaluate", path, "-m", "ndcg@10")
    assert result.returncode == 0, result.stderr
    header, _rule, row = result.stdout.splitlines()
    assert [cell.strip() for cell in header.strip("|").split("|")] == ["ndcg@10", "queries", "weight_sum"]
    mean = np.mean(list(sklearn_per_query(log, ["query"], 10).values()))
    assert [cell.strip() for cell in row.strip("|").split("|")][:2] == [f"{mean:.4f}", str(log["query"].n_unique())]


def test_quiet_prints_nothing(log_parquet: tuple) -> None:
    result = cli("evaluate", log_parquet[1], "--quiet")
    assert result.returncode == 0
    assert result.stdout == ""


def test_csv_in_csv_out_and_k_applies_to_bare_names(tmp_path: Path) -> None:
    log = evaluation_log()
    log.write_csv(tmp_path / "log.csv")
    per_query, summary = tmp_path / "per_query.csv", tmp_path / "summary.csv"
    result = cli(
        "evaluate",
        tmp_path / "log.csv",
        "-m",
        "ndcg",
        "-m",
        "DCG",
        "--k",
        "3,5",
        "--per-query",
        per_query,
        "--summary",
        summary,
    )
    assert result.returncode == 0, result.stderr
    frame = pl.read_csv(per_query)
    assert frame.columns == ["query", "ndcg@3", "ndcg@5", "dcg@3", "dcg@5"]
    for metric in ("ndcg", "dcg"):
        for k in (3, 5):
            expected = sklearn_per_query(log, ["query"], k, metric)
            assert frame[f"{metric}@{k}"].to_list() == pytest.approx([expected[(q,)] for q in frame["query"]], abs=1e-9)
    means = pl.read_csv(summary)
    assert means.columns == ["ndcg@3", "ndcg@5", "dcg@3", "dcg@5", "queries", "weight_sum"]
    assert means["dcg@5"].item() == pytest.approx(frame["dcg@5"].mean(), abs=1e-9)


def test_k_applies_to_a_measure_computed_only_at_a_cutoff(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`-m "sdcg(max_rel=4)" --k 2,5` gives sdcg(max_rel=4)@2 and @5, as `-m ndcg --k 2,5` gives ndcg@2 and @5
    (in process: the console script imports the installed package).  Query a, in score order, levels 4, 0, 2:
    @2: 1 / (1 + 1/log2 3); @5: (1 + (2/4) / 2) / (sum over p = 1..5 of 1 / log2(p + 1))."""
    log = pl.DataFrame({"query": ["a"] * 3, "score": [3.0, 2.0, 1.0], "relevance": [4, 0, 2]})
    log.write_csv(tmp_path / "log.csv")
    per_query = tmp_path / "per_query.csv"
    arguments = ["evaluate", str(tmp_path / "log.csv"), "-m", "sdcg(max_rel=4),ndcg", "--k", "2,5"]
    assert command_line.main([*arguments, "--per-query", str(per_query), "--quiet"]) == 0
    frame = pl.read_csv(per_query)
    assert frame.columns == ["query", "sdcg(max_rel=4)@2", "sdcg(max_rel=4)@5", "ndcg@2", "ndcg@5"]
    five = sum(1 / np.log2(p + 1) for p in range(1, 6))
    assert frame.row(0)[1:3] == pytest.approx((1 / (1 + 1 / np.log2(3)), 1.25 / five), rel=1e-12)
    capsys.readouterr()
    # without --k it needs its @k; without max_rel it names it
    for measure, fragment in (
        ("sdcg(max_rel=4)", "sdcg takes a cut-off after '@' (e.g. 'sdcg(max_rel=4)@10'), none given"),
        ("sdcg", "sdcg needs max_rel, the greatest relevance level"),
    ):
        assert command_line.main(["evaluate", str(tmp_path / "log.csv"), "-m", measure]) == 2
        assert fragment in capsys.readouterr().err
    assert command_line.main(["evaluate", str(tmp_path / "log.csv"), "-m", "sdcg", "--k", "3"]) == 2
    assert "measure 'sdcg@3': sdcg needs max_rel" in capsys.readouterr().err


def test_reciprocal_rank_columns_are_named_rr(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    rows = [(q, int(rng.integers(0, 2)), float(s)) for q in range(20) for s in rng.permutation(8)[:5]]
    log = pl.DataFrame(rows, schema=["query", "relevance", "score"], orient="row")
    log.write_parquet(tmp_path / "log.parquet")
    per_query = tmp_path / "rr.parquet"
    result = cli("evaluate", tmp_path / "log.parquet", "-m", "rr,RR@2", "--per-query", per_query)
    assert result.returncode == 0, result.stderr
    frame = pl.read_parquet(per_query)
    assert frame.columns == ["query", "rr", "rr@2"]
    for row in frame.iter_rows(named=True):
        group = log.filter(pl.col("query") == row["query"])
        expected = reciprocal_rank_by_hand(group["relevance"].to_list(), group["score"].to_list())
        assert row["rr"] == pytest.approx(expected, abs=EXACT)
        assert row["rr@2"] == pytest.approx(expected if expected >= 1 / 2 else 0.0, abs=EXACT)


def test_markdown_summary(tmp_path: Path, log_parquet: tuple) -> None:
    log, path = log_parquet
    summary = tmp_path / "summary.md"
    result = cli("evaluate", path, "-m", "ndcg@3", "--summary", summary, "--quiet")
    assert result.returncode == 0, result.stderr
    lines = summary.read_text().splitlines()
    assert lines[0].split("|")[1].strip() == "ndcg@3"
    assert set(lines[1]) <= {"|", "-", ":"}
    mean = np.mean(list(sklearn_per_query(log, ["query"], 3).values()))
    assert lines[2].split("|")[1].strip() == f"{mean:.4f}"


def summary_of(path: Path, folder: Path, *options: object) -> dict:
    """The one-row JSON summary of `-m ndcg@5,rr`."""
    summary = folder / "summary.json"
    result = cli("evaluate", path, "-m", "ndcg@5,rr", *options, "--quiet", "--summary", summary)
    assert result.returncode == 0, result.stderr
    rows: list[dict] = json.loads(summary.read_text())
    assert len(rows) == 1
    return rows[0]


def test_hive_folder_glob_and_single_file_agree(tmp_path: Path) -> None:
    log = evaluation_log(models=("a", "b"))
    log = log.with_columns(pl.format("{}-{}", "model", "query").alias("query"))  # query ids unique across models
    log.write_parquet(tmp_path / "log.parquet")
    log.write_parquet(tmp_path / "hive", partition_by="model")
    assert sorted(os.listdir(tmp_path / "hive")) == ["model=a", "model=b"]
    single = summary_of(tmp_path / "log.parquet", tmp_path)
    assert summary_of(tmp_path / "hive", tmp_path) == single
    assert summary_of(tmp_path / "hive" / "*" / "*.parquet", tmp_path) == single
    expected = np.mean(list(sklearn_per_query(log, ["query"], 5).values()))
    assert single["ndcg@5"] == pytest.approx(expected, abs=EXACT)


def test_an_output_that_is_not_a_regular_file_is_refused(log_parquet: tuple, tmp_path: Path) -> None:
    (tmp_path / "summary.json").mkdir()
    assert_usage_error(cli("evaluate", log_parquet[1], "--summary", tmp_path / "summary.json"), "not a regular file")


# --------------------------------------------------------------------------------------------------------
# evaluate: the metric options reach the package


def per_query_of(path: Path, folder: Path, *options: object) -> pl.DataFrame:
    out = folder / "per_query.parquet"
    result = cli("evaluate", path, *options, "--quiet", "--per-query", out)
    assert result.returncode == 0, result.stderr
    return pl.read_parquet(out)


def test_gain_exponential(tmp_path: Path, log_parquet: tuple) -> None:
    log, path = log_parquet
    frame = per_query_of(path, tmp_path, "-m", "ndcg@5", "--gain", "exponential")
    exponential = log.with_columns((2 ** pl.col("relevance") - 1).alias("relevance"))  # sklearn takes gains
    expected = sklearn_per_query(exponential, ["query"], 5)
    assert frame["ndcg@5"].to_list() == pytest.approx([expected[(q,)] for q in frame["query"]], abs=EXACT)


def test_gain_mapping(tmp_path: Path, log_parquet: tuple) -> None:
    log, path = log_parquet
    frame = per_query_of(path, tmp_path, "-m", "dcg", "--gain", "0:0,1:1,2:5,3:10")
    mapped = log.with_columns(pl.col("relevance").replace_strict({0: 0, 1: 1, 2: 5, 3: 10}))
    expected = sklearn_per_query(mapped, ["query"], None, "dcg")
    assert frame["dcg"].to_list() == pytest.approx([expected[(q,)] for q in frame["query"]], abs=1e-9)


@pytest.mark.parametrize("spelling", [("--gain", "-1,0,2,5"), ("--gain=-1,0,2,5",)])
def test_gain_list_starting_with_a_negative_gain(tmp_path: Path, log_parquet: tuple, spelling: tuple) -> None:
    """A LightGBM-style gain list whose first gain is negative, after `--gain` or attached with `=`: dcg sums the
    mapped gains as scikit-learn's dcg_score sums a negative y_true."""
    log, path = log_parquet
    frame = per_query_of(path, tmp_path, "-m", "dcg", *spelling)
    mapped = log.with_columns(pl.col("relevance").replace_strict({0: -1, 1: 0, 2: 2, 3: 5}))
    expected = sklearn_per_query(mapped, ["query"], None, "dcg")
    assert frame["dcg"].to_list() == pytest.approx([expected[(q,)] for q in frame["query"]], abs=1e-9)


def test_log_base(tmp_path: Path, log_parquet: tuple) -> None:
    log, path = log_parquet
    frame = per_query_of(path, tmp_path, "-m", "dcg@3", "--log-base", "10")
    expected = {
        q: dcg_score([g["relevance"].to_list()], [g["score"].to_list()], k=3, log_base=10)
        for (q,), g in log.group_by(["query"])
    }
    assert frame["dcg@3"].to_list() == pytest.approx([expected[q] for q in frame["query"]], abs=1e-9)


def test_weight_and_no_relevant_none(tmp_path: Path) -> None:
    log = evaluation_log()
    log = log.with_columns(
        pl.when(pl.col("query") == 0).then(0).otherwise(pl.col("relevance")).alias("relevance"),  # nothing relevant
        (pl.col("query") % 3 + 1).cast(pl.Float64).alias("w"),
    )
    log.write_parquet(tmp_path / "log.parquet")
    summary = tmp_path / "summary.json"
    result = cli(
        "evaluate",
        tmp_path / "log.parquet",
        "-m",
        "ndcg@5",
        "--weight",
        "w",
        "--no-relevant",
        "none",
        "--summary",
        summary,
        "--quiet",
    )
    assert result.returncode == 0, result.stderr
    expected = sklearn_per_query(log.filter(pl.col("query") != 0), ["query"], 5)  # query 0 left out
    weights = [q % 3 + 1 for (q,) in expected]
    row = json.loads(summary.read_text())[0]
    assert row["ndcg@5"] == pytest.approx(np.average(list(expected.values()), weights=weights), abs=EXACT)
    assert (row["queries"], row["weight_sum"]) == (len(expected), sum(weights))


def test_threshold(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    rows = [(q, int(rng.integers(0, 4)), float(s)) for q in range(15) for s in rng.permutation(9)[:6]]
    log = pl.DataFrame(rows, schema=["query", "relevance", "score"], orient="row")
    log.write_parquet(tmp_path / "log.parquet")
    frame = per_query_of(tmp_path / "log.parquet", tmp_path, "-m", "rr", "--threshold", "1")
    for row in frame.iter_rows(named=True):
        group = log.filter(pl.col("query") == row["query"])
        above_one = [int(r > 1) for r in group["relevance"]]  # relevant means relevance above the threshold
        assert row["rr"] == pytest.approx(reciprocal_rank_by_hand(above_one, group["score"].to_list()), abs=EXACT)


def test_parquet_qrels_and_missing_queries_zero(tmp_path: Path) -> None:
    run, qrels = random_run_and_qrels(np.random.default_rng(21))
    assert set(qrels) - set(run), "the seed must give a judged query missing from the run"
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    pl.DataFrame(rows, schema=["query", "doc", "score"], orient="row").write_parquet(tmp_path / "run.parquet")
    judged = [(q, d, r) for q, docs in qrels.items() for d, r in docs.items()]
    pl.DataFrame(judged, schema=["query", "doc", "relevance"], orient="row").write_parquet(tmp_path / "qrels.parquet")
    frame = per_query_of(
        tmp_path / "run.parquet",
        tmp_path,
        "--qrels",
        tmp_path / "qrels.parquet",
        "--doc",
        "doc",
        "--ties",
        "doc",
        "-m",
        "ndcg",
        "--missing-queries",
        "zero",
    )
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg"}).evaluate(run)
    expected.update({q: {"ndcg": 0.0} for q in qrels if q not in run})  # zero: judged, not retrieved
    assert frame["query"].to_list() == sorted(expected)
    assert frame["ndcg"].to_list() == pytest.approx([expected[q]["ndcg"] for q in frame["query"]], abs=EXACT)


# --------------------------------------------------------------------------------------------------------
# evaluate: TREC files, and the options that need the new core (by=, composite query=)


def write_trec(tmp_path: Path, run: dict[str, dict[str, float]], qrels: dict[str, dict[str, int]]) -> tuple[Path, Path]:
    run_path, qrels_path = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run_path.write_text(
        "".join(f"{q} Q0 {d} {i} {s} tag\n" for q, docs in run.items() for i, (d, s) in enumerate(docs.items()))
    )
    qrels_path.write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items()))
    return run_path, qrels_path


def test_trec_run_and_qrels_in_evaluate(tmp_path: Path) -> None:
    run, qrels = random_run_and_qrels(np.random.default_rng(11))
    run_path, qrels_path = write_trec(tmp_path, run, qrels)
    per_query = tmp_path / "per_query.parquet"
    result = cli(
        "evaluate", run_path, "--qrels", qrels_path, "--ties", "doc", "-m", "ndcg@5,rr", "--per-query", per_query
    )
    assert result.returncode == 0, result.stderr
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.5", "recip_rank"}).evaluate(run)
    frame = pl.read_parquet(per_query)
    assert frame["query"].to_list() == sorted(expected)
    assert frame["ndcg@5"].to_list() == pytest.approx([expected[q]["ndcg_cut_5"] for q in frame["query"]], abs=EXACT)
    assert frame["rr"].to_list() == pytest.approx([expected[q]["recip_rank"] for q in frame["query"]], abs=EXACT)


def test_csv_run_with_integer_ids_against_trec_qrels(tmp_path: Path) -> None:
    """A CSV run's query ids read as integers join the TREC qrels' string ids."""
    pl.DataFrame({"query": [1, 1, 2, 2], "doc": ["a", "b", "a", "b"], "score": [0.9, 0.1, 0.2, 0.8]}).write_csv(
        tmp_path / "run.csv"
    )
    (tmp_path / "qrels.txt").write_text("1 0 a 1\n1 0 b 0\n2 0 a 1\n2 0 b 0\n")
    summary = summary_of(tmp_path / "run.csv", tmp_path, "--qrels", tmp_path / "qrels.txt", "--doc", "doc")
    assert summary["rr"] == pytest.approx((1 + 1 / 2) / 2)  # by hand: in query 2, the relevant a is second


def test_a_trec_run_without_qrels_is_a_usage_error(tmp_path: Path) -> None:
    run_path, _ = write_trec(tmp_path, {"q": {"a": 1.0}}, {"q": {"a": 1}})
    assert_usage_error(cli("evaluate", run_path), "--qrels")


def test_by_model(tmp_path: Path) -> None:
    """Needs the core's by= (planned API): metrics per (model, query), means per model."""
    log = evaluation_log(models=("bm25", "rerank"))
    log.write_parquet(tmp_path / "log.parquet")
    per_query, summary = tmp_path / "per_query.parquet", tmp_path / "summary.json"
    result = cli(
        "evaluate",
        tmp_path / "log.parquet",
        "--by",
        "model",
        "-m",
        "ndcg@5",
        "--per-query",
        per_query,
        "--summary",
        summary,
    )
    assert result.returncode == 0, result.stderr
    frame = pl.read_parquet(per_query)
    assert frame.columns == ["model", "query", "ndcg@5"]
    expected = sklearn_per_query(log, ["model", "query"], 5)
    assert frame["ndcg@5"].to_list() == pytest.approx(
        [expected[key] for key in frame.select("model", "query").iter_rows()]
    )
    rows = json.loads(summary.read_text())
    assert [row["model"] for row in rows] == ["bm25", "rerank"]
    for row in rows:
        mean = np.mean([value for (model, _), value in expected.items() if model == row["model"]])
        assert row["ndcg@5"] == pytest.approx(mean, abs=EXACT)
    assert "bm25" in result.stdout and "rerank" in result.stdout


def test_composite_query_key(tmp_path: Path) -> None:
    """Needs the core's composite query= (planned API): --query model,query is one key of two columns."""
    log = evaluation_log(models=("bm25", "rerank"))
    log.write_parquet(tmp_path / "log.parquet")
    per_query = tmp_path / "per_query.csv"
    result = cli("evaluate", tmp_path / "log.parquet", "--query", "model,query", "-m", "ndcg", "--per-query", per_query)
    assert result.returncode == 0, result.stderr
    frame = pl.read_csv(per_query)
    assert frame.columns[:3] == ["model", "query", "ndcg"]
    expected = sklearn_per_query(log, ["model", "query"], None)
    assert frame["ndcg"].to_list() == pytest.approx(
        [expected[key] for key in frame.select("model", "query").iter_rows()]
    )


def test_partitions(tmp_path: Path, log_parquet: tuple) -> None:
    """--partitions evaluates through lodestar_polars.partitions.sink: the same summary and per-query rows."""
    _, path = log_parquet
    assert summary_of(path, tmp_path, "--partitions", "3") == pytest.approx(summary_of(path, tmp_path))
    for suffix in ("parquet", "csv"):
        whole, parted = tmp_path / f"whole.{suffix}", tmp_path / f"parted.{suffix}"
        for target, extra in ((whole, ()), (parted, ("--partitions", "3"))):
            result = cli("evaluate", path, "-m", "ndcg@5,ap", "--quiet", "--per-query", target, *extra)
            assert result.returncode == 0, result.stderr
        read = pl.read_parquet if suffix == "parquet" else pl.read_csv
        assert_frame_equal(read(parted).sort("query"), read(whole), rel_tol=1e-12, abs_tol=1e-12)
    assert not [name for name in os.listdir(tmp_path) if name.startswith(".")]  # no scratch folder left


# --------------------------------------------------------------------------------------------------------
# evaluate: failures, for a scheduler


def test_bad_values_exit_1_and_leave_no_output(tmp_path: Path) -> None:
    (tmp_path / "log.csv").write_text("query,doc,relevance,score\n1,a,1,0.5\n1,b,0,\n")
    summary, per_query = tmp_path / "summary.json", tmp_path / "per_query.parquet"
    summary.write_text("yesterday's summary\n")
    result = cli("evaluate", tmp_path / "log.csv", "--summary", summary, "--per-query", per_query)
    # a CSV's query ids are text (as trec_eval reads ids), so the message quotes the id
    assert_data_error(result, "score column 'score' has 1 null, NaN or infinite value(s), the first in query '1'.")
    assert summary.read_text() == "yesterday's summary\n"  # untouched
    assert sorted(os.listdir(tmp_path)) == ["log.csv", "summary.json"]  # no partial file, no temporary left


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    (tmp_path / "log.csv").write_text("query,doc,relevance,score\n1,a,1,0.5\n1,b,0,\n")
    result = cli("evaluate", tmp_path / "log.csv", "--debug")
    assert result.returncode == 1
    assert "Traceback (most recent call last)" in result.stderr
    assert result.stderr.splitlines()[-1].startswith("lodestar-polars: error: score column 'score'")


def test_duplicate_documents_exit_1(tmp_path: Path) -> None:
    evaluation_log().vstack(evaluation_log().head(1)).write_parquet(tmp_path / "log.parquet")
    result = cli("evaluate", tmp_path / "log.parquet", "--doc", "doc", "--per-query", tmp_path / "out.parquet")
    assert_data_error(result, "duplicate")
    assert not (tmp_path / "out.parquet").exists()


def test_missing_column_exit_1(log_parquet: tuple) -> None:
    assert_data_error(cli("evaluate", log_parquet[1], "--score", "prediction"), "score column 'prediction' not found")


def test_missing_file_exit_1(tmp_path: Path) -> None:
    assert_data_error(cli("evaluate", tmp_path / "nope.parquet"), "run file not found")


def test_glob_matching_nothing_exit_1(tmp_path: Path) -> None:
    assert_data_error(cli("evaluate", tmp_path / "*.parquet"), "no file matches")


def test_unreadable_parquet_exit_1(tmp_path: Path) -> None:
    (tmp_path / "log.parquet").write_bytes(b"not parquet at all")
    assert_data_error(cli("evaluate", tmp_path / "log.parquet", "--summary", tmp_path / "s.json"), "parquet")
    assert not (tmp_path / "s.json").exists()


def test_weights_summing_to_zero_exit_1(tmp_path: Path) -> None:
    evaluation_log().with_columns(pl.lit(0.0).alias("w")).write_parquet(tmp_path / "log.parquet")
    assert_data_error(cli("evaluate", tmp_path / "log.parquet", "--weight", "w"), "Weights sum to zero")


def test_output_file_mode_follows_the_umask(log_parquet: tuple, tmp_path: Path) -> None:
    summary = tmp_path / "summary.json"
    assert cli("evaluate", log_parquet[1], "--summary", summary, "--quiet").returncode == 0
    mask = os.umask(0)
    os.umask(mask)
    assert summary.stat().st_mode & 0o777 == 0o666 & ~mask  # not the 0600 of a bare temporary file


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        (["-m", "ndcg@10,mrrr"], "unknown measure 'mrrr'; known measures (case-insensitive, each optionally @k"),
        (["-m", "ndcg@0"], "the cut-off must be at least 1"),
        (["--k", "0"], "cut-offs must be at least 1"),
        (["--ties", "random"], "invalid choice: 'random'"),
        (["--summary", "summary.txt"], "--summary summary.txt: the extension must be one of .json, .csv, .md"),
        (["--per-query", "out.json"], "the extension must be one of .parquet, .pq, .csv"),
        (["--per-query", "no/such/folder/out.parquet"], "does not exist"),
        (["--per-query", "out.csv", "--summary", "out.csv"], "name the same file"),
        (["--missing-queries", "zero"], "give --qrels too"),
        (["--ties", "doc"], "ties='doc' breaks ties by the doc column"),
        (["--no-relevant", "often"], "expected a number, 'none' or 'error'"),
    ],
)
def test_usage_errors_exit_2(log_parquet: tuple, tmp_path: Path, arguments: list[str], fragment: str) -> None:
    result = cli("evaluate", log_parquet[1], *arguments, cwd=tmp_path)
    assert_usage_error(result, fragment)
    assert os.listdir(tmp_path) == ["log.parquet"]


# --------------------------------------------------------------------------------------------------------
# trec_eval mode

SUPPORTED = ("runid", "num_q", "recip_rank", "ndcg", "ndcg_cut")
SUPPORTED_ARGS = [arg for name in SUPPORTED for arg in ("-m", name)]


def lines_of(path: Path, measures: tuple[str, ...]) -> list[str]:
    """trec_eval's output lines for these measures (cut-off variants included), in its order."""
    kept = []
    for line in path.read_text().splitlines(keepends=True):
        name = line.split("\t")[0].strip()
        if name in measures or any(name.startswith(f"{m}_") and name[len(m) + 1 :].isdigit() for m in measures):
            kept.append(line)
    return kept


def test_trec_eval_reproduces_out_test_aq(shared_data: Path) -> None:
    folder = shared_data / "trec_eval"
    result = cli("trec_eval", "-q", *SUPPORTED_ARGS, folder / "qrels.test", folder / "results.test")
    assert result.returncode == 0, result.stderr
    expected = lines_of(folder / "out.test.aq", SUPPORTED)
    assert len(expected) == 3 * (1 + 1 + 9) + 2 + 1 + 1 + 9
    assert result.stdout.splitlines(keepends=True) == expected


def test_trec_eval_dash_c_reproduces_out_test_aqc(shared_data: Path) -> None:
    folder = shared_data / "trec_eval"
    result = cli("trec_eval", "-q", "-c", *SUPPORTED_ARGS, folder / "qrels.test", folder / "results.trunc")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines(keepends=True) == lines_of(folder / "out.test.aqc", SUPPORTED)


def test_trec_eval_without_q_prints_the_all_lines_only(shared_data: Path) -> None:
    folder = shared_data / "trec_eval"
    result = cli("trec_eval", "-m", "ndcg_cut.10,5", "-m", "ndcg", folder / "qrels.test", folder / "results.test")
    assert result.returncode == 0, result.stderr
    # values from out.test.aq; cut-offs printed ascending as trec_eval sorts them
    assert result.stdout.splitlines() == [
        "ndcg                  \tall\t0.4021",
        "ndcg_cut_5            \tall\t0.2768",
        "ndcg_cut_10           \tall\t0.3016",
    ]


ISSUE_12_MEASURES = ("map", "P", "recall", "map_cut", "success")


def test_trec_eval_reproduces_out_test_aq_for_the_issue_12_measures(shared_data: Path) -> None:
    """Needs the core's precision / recall / average precision / success (planned API)."""
    folder = shared_data / "trec_eval"
    arguments = [arg for name in ISSUE_12_MEASURES for arg in ("-m", name)]
    result = cli("trec_eval", "-q", *arguments, folder / "qrels.test", folder / "results.test")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines(keepends=True) == lines_of(folder / "out.test.aq", ISSUE_12_MEASURES)


def test_trec_eval_dash_n_drops_the_summary(shared_data: Path) -> None:
    folder = shared_data / "trec_eval"
    result = cli("trec_eval", "-q", "-n", "-m", "ndcg", folder / "qrels.test", folder / "results.test")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines(keepends=True) == [
        line for line in lines_of(folder / "out.test.aq", ("ndcg",)) if "\tall\t" not in line
    ]


Run = dict[str, dict[str, float]]
Qrels = dict[str, dict[str, int]]
# doc ids whose byte order differs from their natural order: trec_eval breaks score ties with strcmp
DOC_IDS = ["D1", "D10", "D2", "D9", "d1", "a", "B", "b-3", "b_3", "Z", "x10", "x9"]


def random_run_and_qrels(rng: np.random.Generator) -> tuple[Run, Qrels]:
    """Judged queries missing from the run, run queries without judgments, unjudged retrieved docs, tied
    scores, levels -1..3.  Every judged query keeps a judgment >= 0 (pytrec_eval-terrier 0.5.11 crashes on a
    query judged only below 0)."""
    run: Run = {}
    qrels: Qrels = {}
    for q in range(int(rng.integers(3, 9))):
        query = f"q{q}" if q % 3 else str(q * 7)  # mixed ids: "0" < "14" < "7" < "q1" in strcmp order
        kind = rng.integers(0, 5)
        if kind != 4:
            docs = rng.choice(DOC_IDS, size=int(rng.integers(1, 11)), replace=False)
            run[query] = {str(d): float(rng.integers(0, 4)) / 2 for d in docs}
        if kind != 3:
            docs = rng.choice(DOC_IDS, size=int(rng.integers(1, 11)), replace=False)
            qrels[query] = {str(d): int(rng.integers(-1, 4)) for d in docs}
            qrels[query][str(docs[0])] = max(qrels[query][str(docs[0])], 0)
    if not set(run) & set(qrels):  # at least one query to evaluate
        run.setdefault(next(iter(qrels)), {"a": 1.0})
    return run, qrels


def parse_trec_output(text: str) -> dict[str, dict[str, str]]:
    values: dict[str, dict[str, str]] = {}
    for line in text.splitlines():
        name, query, value = line.split("\t")
        assert len(name) >= 22 and name == f"{name.strip():<22}"
        values.setdefault(query, {})[name.strip()] = value
    return values


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("complete", [False, True])
def test_trec_eval_matches_pytrec_eval_on_random_runs(tmp_path: Path, seed: int, complete: bool) -> None:
    run, qrels = random_run_and_qrels(np.random.default_rng(seed))
    run_path, qrels_path = write_trec(tmp_path, run, qrels)
    flags = ["-q", *(["-c"] if complete else [])]
    result = cli(
        "trec_eval",
        *flags,
        "-m",
        "ndcg",
        "-m",
        "ndcg_cut.1,3,10",
        "-m",
        "recip_rank",
        "-m",
        "num_q",
        qrels_path,
        run_path,
    )
    assert result.returncode == 0, result.stderr
    measures = ["recip_rank", "ndcg", "ndcg_cut_1", "ndcg_cut_3", "ndcg_cut_10"]
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg", "ndcg_cut.1,3,10", "recip_rank"}).evaluate(run)
    if complete:  # trec_eval -c: judged queries missing from the run score 0 (pytrec_eval has no -c)
        expected.update({q: dict.fromkeys(measures, 0.0) for q in qrels if q not in expected})
    printed = parse_trec_output(result.stdout)
    assert list(printed) == [*sorted(expected), "all"]  # strcmp order, then the summary
    for query, values in expected.items():
        assert list(printed[query]) == measures  # trec_eval's measure order
        for measure in measures:
            assert float(printed[query][measure]) == pytest.approx(values[measure], abs=PRINTED)
            assert printed[query][measure] == f"{float(printed[query][measure]):6.4f}"
    assert printed["all"]["num_q"] == str(len(expected))
    for measure in measures:
        mean = np.mean([values[measure] for values in expected.values()])
        assert float(printed["all"][measure]) == pytest.approx(mean, abs=PRINTED)


def test_trec_eval_duplicate_docs_exit_1(tmp_path: Path) -> None:
    (tmp_path / "run.txt").write_text("q Q0 a 1 0.5 tag\nq Q0 a 2 0.4 tag\n")
    (tmp_path / "qrels.txt").write_text("q 0 a 1\n")
    assert_data_error(cli("trec_eval", "-m", "ndcg", tmp_path / "qrels.txt", tmp_path / "run.txt"), "duplicate")


def test_trec_eval_malformed_line_exit_1(tmp_path: Path) -> None:
    """A run line with five fields (trec_eval: "Malformed line"); a score "high" is not malformed there, as
    trec_eval's atof reads it as 0 (tests/test_trec_eval_options.py)."""
    (tmp_path / "run.txt").write_text("q Q0 a 1 0.5\n")
    (tmp_path / "qrels.txt").write_text("q 0 a 1\n")
    result = cli("trec_eval", "-m", "ndcg", tmp_path / "qrels.txt", tmp_path / "run.txt")
    assert_data_error(result, "line 1): expected at least 6 whitespace-separated fields, got 5")


@pytest.mark.parametrize(
    ("measure", "fragment"),
    [
        ("ndcg_p", "trec_eval measure 'ndcg_p' is not supported"),  # trec_eval: "illegal measure" too
        ("iprec_at_recall.2", "recall levels must lie from 0 to 1"),
        ("iprec_at_recall..5,.50", "duplicate recall levels"),
        ("iprec_at_recall.x", "recall levels must be decimal numbers"),
        ("ndcg_cut.5,5", "duplicate cut-offs"),
        ("ndcg_cut.0", "cut-offs must be positive"),
        ("recip_rank.5", "takes no parameters"),
    ],
)
def test_trec_eval_usage_errors_exit_2(tmp_path: Path, measure: str, fragment: str) -> None:
    (tmp_path / "run.txt").write_text("q Q0 a 1 0.5 tag\n")
    (tmp_path / "qrels.txt").write_text("q 0 a 1\n")
    assert_usage_error(cli("trec_eval", "-m", measure, tmp_path / "qrels.txt", tmp_path / "run.txt"), fragment)


def test_trec_eval_needs_two_files() -> None:
    assert_usage_error(cli("trec_eval", "-q", "qrels.txt"), "the following arguments are required: RUN")


@pytest.mark.parametrize("judged", [False, True], ids=["relevance column", "qrels"])
@pytest.mark.parametrize("route", [[], ["--per-query", "per_query.parquet"], ["--partitions", "2"]])
def test_evaluate_summarises_each_measure_as_it_declares(tmp_path: Path, judged: bool, route: list[str]) -> None:
    """The summary of gm_map and gm_bpref is trec_eval's geometric mean (floor 1e-5), of num_ret and num_rel_ret
    the sum over queries, of ap the mean: through the single plan, the per-query route (the mean taken from the
    per-query rows) and the partitions.  Oracle: pytrec_eval's per-query values (its gm_* are trec_eval's
    log(max(x, 1e-5))), summarised by hand."""
    rng = np.random.default_rng(5)
    rows = [
        {"query": f"q{q}", "doc": f"d{d}", "relevance": int(rng.integers(0, 3)), "score": float(rng.random())}
        for q in range(9)
        for d in rng.choice(12, size=int(rng.integers(2, 8)), replace=False)
    ]
    run = pl.DataFrame(rows).filter((pl.col("query") != "q8") | (pl.col("relevance") == 0))  # q8: AP 0 (floor)
    qrels, per_query = pytrec_eval_per_query(run, unretrieved_relevant=judged)
    measures = {"gm_map": "geometric", "gm_bpref": "geometric", "num_ret": "sum", "num_rel_ret": "sum", "ap": "mean"}
    theirs = SUMMARY_MEASURES
    assert any(values["num_rel_ret"] == 0 for values in per_query.values())  # an AP of 0: the floor
    run.write_parquet(tmp_path / "run.parquet")
    arguments: list[object] = ["evaluate", "run.parquet", "-m", ",".join(measures), "--ties", "doc", "--doc", "doc"]
    if judged:
        judgments = [{"query": q, "doc": d, "relevance": r} for q, docs in qrels.items() for d, r in docs.items()]
        pl.DataFrame(judgments).write_parquet(tmp_path / "qrels.parquet")
        arguments += ["--qrels", "qrels.parquet"]
    result = cli(*arguments, *route, "--summary", "summary.json", "--quiet", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())[0]
    for ours, kind in measures.items():
        values = [per_query[query][theirs[ours]] for query in sorted(per_query)]
        expected = {"geometric": np.exp(np.mean(values)), "sum": np.sum(values), "mean": np.mean(values)}[kind]
        assert summary[ours] == pytest.approx(expected, rel=1e-9), ours
