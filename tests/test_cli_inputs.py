"""The command line on the data people have: ids that look like numbers, runs whose columns are named otherwise,
typed ids against TREC judgments, `evaluate`'s measure names, cut-offs in ASCII digits, trec_eval's nicknames.

Oracles: pytrec_eval-terrier (trec_eval's C code, which reads every id as text), trec_eval's own output file
`out.test.aq` (`-m all_trec`) and its measures.c nickname lists, and values derived by hand (written down).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import pytrec_eval

from lodestar_polars._spec import MEASURE_NAMES
from tests.test_cli import (
    assert_data_error,
    assert_usage_error,
    cli,
    random_run_and_qrels,
    write_trec,
)

EXACT = 1e-12
NDCG_RELEVANT_SECOND = 1 / math.log2(3)  # one relevant document, ranked second


def per_query_frame(tmp_path: Path, *arguments: object) -> pl.DataFrame:
    per_query = tmp_path / "per_query.parquet"
    result = cli("evaluate", *arguments, "--per-query", per_query)
    assert result.returncode == 0, result.stderr
    return pl.read_parquet(per_query)


# --------------------------------------------------------------------------------------------------------
# 1f: a CSV's ids are text, as trec_eval reads them


def write_qrels(path: Path, qrels: dict[str, dict[str, int]]) -> None:
    """TREC qrels, or a CSV file with query, doc, relevance columns (by the extension)."""
    judged = [(q, d, r) for q, docs in qrels.items() for d, r in docs.items()]
    if path.suffix == ".csv":
        pl.DataFrame(judged, schema=["query", "doc", "relevance"], orient="row").write_csv(path)
    else:
        path.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in judged))


def write_csv_run(path: Path, run: dict[str, dict[str, float]]) -> None:
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    pl.DataFrame(rows, schema=["query", "doc", "score"], orient="row").write_csv(path)


@pytest.mark.parametrize("qrels_name", ["qrels.txt", "qrels.csv"])
def test_a_csv_run_reads_number_like_query_ids_as_text(tmp_path: Path, qrels_name: str) -> None:
    """Inferred as numbers (12.0, 1.5), the queries "0012" and "1.50" never joined their judgments: NDCG 0.0
    for both with --missing-queries zero, and exit 0."""
    run = {"0012": {"x": 2.0, "y": 1.0}, "1.50": {"x": 1.0, "y": 2.0}}
    qrels = {"0012": {"x": 1}, "1.50": {"x": 1}}
    write_csv_run(tmp_path / "run.csv", run)
    write_qrels(tmp_path / qrels_name, qrels)
    frame = per_query_frame(
        tmp_path,
        tmp_path / "run.csv",
        *("--qrels", tmp_path / qrels_name, "--doc", "doc", "-m", "ndcg", "--missing-queries", "zero"),
    )
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg"}).evaluate(run)
    assert frame.schema["query"] == pl.String
    assert frame["query"].to_list() == ["0012", "1.50"]
    assert frame["ndcg"].to_list() == pytest.approx([expected[q]["ndcg"] for q in frame["query"]], abs=EXACT)
    assert frame["ndcg"].to_list() == pytest.approx([1.0, NDCG_RELEVANT_SECOND], abs=EXACT)  # by hand


@pytest.mark.parametrize("qrels_name", ["qrels.txt", "qrels.csv"])
def test_a_csv_run_reads_number_like_doc_ids_as_text(tmp_path: Path, qrels_name: str) -> None:
    """Inferred as numbers, the docs "0012" and "12" were one doc 12.0 listed twice (an error)."""
    run = {"q1": {"12": 2.0, "0012": 1.0, "1.50": 0.5}}
    qrels = {"q1": {"0012": 1, "1.5": 1}}
    write_csv_run(tmp_path / "run.csv", run)
    write_qrels(tmp_path / qrels_name, qrels)
    frame = per_query_frame(
        tmp_path, tmp_path / "run.csv", "--qrels", tmp_path / qrels_name, "--doc", "doc", "-m", "ndcg,r"
    )
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg", "recall.1000"}).evaluate(run)["q1"]
    assert frame["ndcg"].item() == pytest.approx(expected["ndcg"], abs=EXACT)
    assert frame["r"].item() == pytest.approx(expected["recall_1000"], abs=EXACT)
    assert frame["r"].item() == 0.5  # by hand: "1.50" is not the judged "1.5"


# --------------------------------------------------------------------------------------------------------
# 3: -m takes evaluate's names; --help lists them


def test_dash_m_takes_every_name_evaluate_takes(tmp_path: Path) -> None:
    run, qrels = random_run_and_qrels(np.random.default_rng(5))
    run_path, qrels_path = write_trec(tmp_path, run, qrels)
    frame = per_query_frame(
        tmp_path,
        run_path,
        "--qrels",
        qrels_path,
        "--ties",
        "doc",
        "-m",
        "mrr,map,recall@10,precision@5,hit_rate@3,Average_Precision@5,recip_rank",
    )
    assert frame.columns == ["query", "rr", "ap", "r@10", "p@5", "success@3", "ap@5"]  # rr and recip_rank: one column
    oracle = {"recip_rank": "rr", "map": "ap", "recall_10": "r@10", "P_5": "p@5", "success_3": "success@3"}
    oracle["map_cut_5"] = "ap@5"
    expected = pytrec_eval.RelevanceEvaluator(
        qrels, {"recip_rank", "map", "recall.10", "P.5", "success.3", "map_cut.5"}
    ).evaluate(run)
    assert frame["query"].to_list() == sorted(expected)
    for measure, column in oracle.items():
        assert frame[column].to_list() == pytest.approx([expected[q][measure] for q in frame["query"]], abs=EXACT)


def test_help_lists_every_measure_name() -> None:
    result = cli("evaluate", "--help")
    assert result.returncode == 0
    words = set(re.findall(r"[a-z0-9_-]+", result.stdout))
    assert set(MEASURE_NAMES) <= words, set(MEASURE_NAMES) - words
    assert "rr (mrr, recip_rank, reciprocal_rank)" in " ".join(result.stdout.split())


def test_an_unknown_measure_close_to_none_lists_the_names(tmp_path: Path) -> None:
    """A name close to a known one gets the closest names instead (tests/test_helpful_errors.py)."""
    (tmp_path / "log.csv").write_text("query,doc,relevance,score\n1,a,1,0.5\n")
    result = cli("evaluate", tmp_path / "log.csv", "-m", "ndcg,xyzzy")
    assert_usage_error(result, "unknown measure 'xyzzy'")
    assert "ap (map, average_precision), success (hit_rate)" in result.stderr


# --------------------------------------------------------------------------------------------------------
# 2: cut-offs take ASCII digits only, in Python and on the command line

# 3 and 10 in Arabic-Indic, fullwidth, NKo and Devanagari digits (str.isdigit() and int() take them all)
NON_ASCII_DIGITS = ["ndcg@\u0663", "ndcg@\uff11\uff10", "rr@\u07c3", "P@\u0969"]


@pytest.mark.parametrize("name", NON_ASCII_DIGITS)
def test_evaluate_refuses_a_cut_off_in_other_digits(name: str) -> None:
    frame = pl.DataFrame({"query": [1, 1], "relevance": [1, 0], "score": [0.2, 0.1]})
    with pytest.raises(ValueError, match="unknown measure"):
        frame.rank_metrics.evaluate([name])


@pytest.mark.parametrize(
    "arguments",
    [
        *(["-m", name] for name in NON_ASCII_DIGITS),
        ["-m", "ndcg", "--k", "\u0663"],
        ["-m", "ndcg", "--k", "5,\uff11\uff10"],
    ],
)
def test_the_command_line_refuses_a_cut_off_in_other_digits(tmp_path: Path, arguments: list[str]) -> None:
    (tmp_path / "log.csv").write_text("query,doc,relevance,score\n1,a,1,0.5\n1,b,0,0.2\n")
    result = cli("evaluate", tmp_path / "log.csv", *arguments)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "ASCII digits" in result.stderr


@pytest.mark.parametrize("measure", ["ndcg_cut.\u0663", "P.5,\uff11\uff10"])
def test_trec_eval_refuses_a_cut_off_in_other_digits(tmp_path: Path, measure: str) -> None:
    (tmp_path / "run.txt").write_text("q Q0 a 1 0.5 tag\n")
    (tmp_path / "qrels.txt").write_text("q 0 a 1\n")
    result = cli("trec_eval", "-m", measure, tmp_path / "qrels.txt", tmp_path / "run.txt")
    assert_usage_error(result, "cut-offs must be integers (ASCII digits)")


# --------------------------------------------------------------------------------------------------------
# 2: TREC files with CR line ends (classic Mac) read as their lines


def test_trec_eval_reads_files_with_cr_line_ends(tmp_path: Path) -> None:
    run, qrels = random_run_and_qrels(np.random.default_rng(2))
    run_path, qrels_path = write_trec(tmp_path, run, qrels)
    for path in (run_path, qrels_path):
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r"))
    result = cli("trec_eval", "-q", "-m", "ndcg", qrels_path, run_path)
    assert result.returncode == 0, result.stderr
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg"}).evaluate(run)
    printed = {line.split("\t")[1]: float(line.split("\t")[2]) for line in result.stdout.splitlines()}
    assert printed.keys() == {*expected, "all"}
    for query, values in expected.items():
        assert printed[query] == pytest.approx(values["ndcg"], abs=5e-5)


# --------------------------------------------------------------------------------------------------------
# 2: trec_eval's nicknames: a measure not computed here is named on stderr, once


@pytest.mark.parametrize("arguments", [[], ["-m", "official"], ["-m", "official", "-m", "ndcg"]])
def test_trec_eval_computes_every_official_measure_and_prints_no_note(tmp_path: Path, arguments: list[str]) -> None:
    """trec_eval 10's measures.c, off_names: runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref
    recip_rank iprec_at_recall P, every one computed here."""
    (tmp_path / "run.txt").write_text("q Q0 a 1 0.5 tag\nq Q0 b 2 0.4 tag\n")
    (tmp_path / "qrels.txt").write_text("q 0 b 1\n")
    result = cli("trec_eval", *arguments, tmp_path / "qrels.txt", tmp_path / "run.txt")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    # by hand: the relevant b is second of 2, R = 1
    for line in [
        "num_ret               \tall\t2\n",
        "num_rel               \tall\t1\n",
        "num_rel_ret           \tall\t1\n",
        "gm_map                \tall\t0.5000\n",
        "Rprec                 \tall\t0.0000\n",
        "bpref                 \tall\t1.0000\n",  # no judged non-relevant document above b
        "recip_rank            \tall\t0.5000\n",
        "iprec_at_recall_1.00  \tall\t0.5000\n",
    ]:
        assert line in result.stdout


def test_trec_eval_computes_every_all_trec_measure(shared_data: Path) -> None:
    """Every measure trec_eval printed in out.test.aq (`-m all_trec -q`) is printed, and no note of measures
    left out is written (the nicknames' measures are all computed)."""
    folder = shared_data / "trec_eval"

    def names(text: str) -> set[str]:
        return {re.sub(r"_[0-9.]+$", "", line.split("\t")[0].strip()) for line in text.splitlines()}

    expected = names((folder / "out.test.aq").read_text())
    result = cli("trec_eval", "-q", "-m", "all_trec", "-m", "official", folder / "qrels.test", folder / "results.test")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert names(result.stdout) == expected


def test_trec_eval_with_named_measures_prints_no_note(tmp_path: Path) -> None:
    (tmp_path / "run.txt").write_text("q Q0 a 1 0.5 tag\n")
    (tmp_path / "qrels.txt").write_text("q 0 a 1\n")
    result = cli("trec_eval", "-m", "ndcg", "-m", "P.5", tmp_path / "qrels.txt", tmp_path / "run.txt")
    assert result.returncode == 0
    assert result.stderr == ""


# --------------------------------------------------------------------------------------------------------
# 3: a run whose columns are named otherwise, against TREC judgments; the run's id dtypes are kept


def test_a_parquet_run_with_its_own_column_names_against_trec_qrels(tmp_path: Path) -> None:
    """The run's --query, --doc and --relevance name its columns; the TREC judgments' columns are the format's."""
    run, qrels = random_run_and_qrels(np.random.default_rng(8))
    _, qrels_path = write_trec(tmp_path, run, qrels)
    rows = [(q, d, s, 0) for q, docs in run.items() for d, s in docs.items()]
    run_frame = pl.DataFrame(rows, schema=["qid", "docno", "pred", "label"], orient="row")
    run_frame.write_parquet(tmp_path / "run.parquet")
    frame = per_query_frame(
        tmp_path,
        tmp_path / "run.parquet",
        "--qrels",
        qrels_path,
        *("--query", "qid", "--doc", "docno", "--score", "pred", "--relevance", "label"),
        *("--ties", "doc", "-m", "ndcg,mrr"),
    )
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg", "recip_rank"}).evaluate(run)
    assert frame.columns == ["qid", "ndcg", "rr"]
    assert frame["qid"].to_list() == sorted(expected)
    assert frame["ndcg"].to_list() == pytest.approx([expected[q]["ndcg"] for q in frame["qid"]], abs=EXACT)
    assert frame["rr"].to_list() == pytest.approx([expected[q]["recip_rank"] for q in frame["qid"]], abs=EXACT)


def test_a_csv_run_with_its_own_column_names_against_trec_qrels(tmp_path: Path) -> None:
    pl.DataFrame({"qid": ["01", "01", "2"], "docno": ["7", "007", "7"], "pred": [0.9, 0.5, 0.1]}).write_csv(
        tmp_path / "run.csv"
    )
    (tmp_path / "qrels.txt").write_text("01 0 007 1\n2 0 7 2\n")
    frame = per_query_frame(
        tmp_path,
        tmp_path / "run.csv",
        *("--qrels", tmp_path / "qrels.txt", "--query", "qid", "--doc", "docno", "--score", "pred"),
    )
    # by hand: in "01" the relevant "007" is second; in "2" the only document is relevant
    assert frame.to_dicts() == [{"qid": "01", "ndcg": pytest.approx(NDCG_RELEVANT_SECOND)}, {"qid": "2", "ndcg": 1.0}]


def integer_run(queries: int = 12) -> pl.DataFrame:
    """Queries 0..queries-1, each with a relevant "a" ranked first and "b" second (NDCG 1, RR 1)."""
    return pl.DataFrame(
        {
            "query": [q for q in range(queries) for _ in range(2)],
            "doc": ["a", "b"] * queries,
            "score": [2.0, 1.0] * queries,
        }
    )


def test_an_integer_query_stays_integer_and_sorts_numerically(tmp_path: Path) -> None:
    integer_run().write_parquet(tmp_path / "run.parquet")
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 a 1\n" for q in range(12)))
    frame = per_query_frame(
        tmp_path, tmp_path / "run.parquet", "--qrels", tmp_path / "qrels.txt", "--doc", "doc", "-m", "rr"
    )
    assert frame.schema["query"] == pl.Int64
    assert frame["query"].to_list() == list(range(12))
    assert frame["rr"].to_list() == [1.0] * 12


def test_judgment_ids_are_read_in_the_run_dtype(tmp_path: Path) -> None:
    """Against an Int64 run, the judgment "0012" is query 12 and "+3" is 3 (read as an Int64 from its text);
    "q7" is no Int64 and matches no run row: a judged query missing from the run, left out by default."""
    integer_run(queries=13).write_parquet(tmp_path / "run.parquet")
    (tmp_path / "qrels.txt").write_text("0012 0 b 1\n+3 0 b 1\nq7 0 a 1\n")
    frame = per_query_frame(
        tmp_path, tmp_path / "run.parquet", "--qrels", tmp_path / "qrels.txt", "--doc", "doc", "-m", "rr"
    )
    assert frame.to_dicts() == [{"query": 3, "rr": 0.5}, {"query": 12, "rr": 0.5}]  # by hand: "b" is second


def test_a_judged_query_the_run_dtype_cannot_hold_is_an_error_with_missing_queries_zero(tmp_path: Path) -> None:
    integer_run().write_parquet(tmp_path / "run.parquet")
    (tmp_path / "qrels.txt").write_text("1 0 a 1\nq7 0 a 1\n")
    result = cli(
        "evaluate",
        tmp_path / "run.parquet",
        *("--qrels", tmp_path / "qrels.txt", "--doc", "doc", "--missing-queries", "zero"),
    )
    assert_data_error(result, "judged query 'q7' (qrels ")
    assert "cannot be read as the Int64 of the run's query column 'query'" in result.stderr


def test_a_judged_doc_the_run_dtype_cannot_hold_still_counts(tmp_path: Path) -> None:
    """Integer doc ids: the judgment "0012" is doc 12; "d9" matches no run row but is a relevant document of
    the query, so R = 2 (trec_eval counts every judged relevant document)."""
    pl.DataFrame({"query": ["1", "1"], "doc": [12, 7], "score": [2.0, 1.0]}).write_parquet(tmp_path / "run.parquet")
    (tmp_path / "qrels.txt").write_text("1 0 0012 1\n1 0 d9 1\n")
    frame = per_query_frame(
        tmp_path, tmp_path / "run.parquet", "--qrels", tmp_path / "qrels.txt", "--doc", "doc", "-m", "r,rr,ndcg"
    )
    # by hand: 12 relevant at 1, 7 unjudged; R = 2; ideal DCG = 1 + 1/log2(3)
    assert frame.to_dicts() == [
        {"query": "1", "r": 0.5, "rr": 1.0, "ndcg": pytest.approx(1 / (1 + NDCG_RELEVANT_SECOND), abs=EXACT)}
    ]


def test_doc_defaults_to_doc_with_qrels(tmp_path: Path) -> None:
    integer_run(queries=2).write_parquet(tmp_path / "run.parquet")
    (tmp_path / "qrels.txt").write_text("0 0 b 1\n1 0 a 1\n")
    frame = per_query_frame(tmp_path, tmp_path / "run.parquet", "--qrels", tmp_path / "qrels.txt", "-m", "rr")
    assert frame["rr"].to_list() == [0.5, 1.0]  # by hand: "a" first, "b" second


def test_a_composite_query_key_against_trec_qrels_is_a_usage_error(tmp_path: Path) -> None:
    pl.DataFrame({"a": [1], "b": [1], "doc": ["x"], "score": [1.0]}).write_parquet(tmp_path / "run.parquet")
    (tmp_path / "qrels.txt").write_text("1 0 x 1\n")
    result = cli(
        "evaluate", tmp_path / "run.parquet", "--qrels", tmp_path / "qrels.txt", "--query", "a,b", "--doc", "doc"
    )
    assert_usage_error(result, "is a TREC file, with one query id column; --query names 2: a, b.")


def test_two_roles_naming_one_column_against_trec_qrels_is_a_usage_error(tmp_path: Path) -> None:
    integer_run(queries=1).write_parquet(tmp_path / "run.parquet")
    (tmp_path / "qrels.txt").write_text("0 0 a 1\n")
    result = cli("evaluate", tmp_path / "run.parquet", "--qrels", tmp_path / "qrels.txt", "--relevance", "query")
    assert_usage_error(result, "--query and --relevance both name column 'query'")
