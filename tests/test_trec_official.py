"""trec_eval's default (`official`) measures: num_ret, num_rel, num_rel_ret, gm_map, Rprec, bpref and
iprec_at_recall against pytrec_eval (trec_eval's own C code) on random runs, hand-derived edge cases, the
refusal of ties="average" where no exact expectation exists, the summaries (sums, geometric mean), and the
CLI against trec_eval 10's expected output files."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings

import lodestar_polars
from tests.cases import Qrels, Run, qrels_frame, run_and_qrels, run_frame
from tests.test_cli import cli

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec_eval is a test dependency")

LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
# (ours, pytrec_eval's) per-query names
PAIRS = [
    ("num_ret", "num_ret"),
    ("num_rel", "num_rel"),
    ("num_rel_ret", "num_rel_ret"),
    ("rprec", "Rprec"),
    ("bpref", "bpref"),
    *((f"iprec@{level!r}", f"iprec_at_recall_{level:.2f}") for level in LEVELS),
]
OURS = [ours for ours, _ in PAIRS] + ["gm_map"]
THEIRS = {"num_ret", "num_rel", "num_rel_ret", "gm_map", "Rprec", "bpref", "iprec_at_recall"}


def _same_rounding(level: float, relevant: float) -> bool:
    """pytrec_eval-terrier bundles trec_eval 9, which turns a recall level into a count of relevant documents
    as (long)(level R + 0.9); trec_eval 10 (m_iprec_at_recall.c), whose outputs the CLI tests reproduce byte for
    byte, rounds: lround(level R).  pytrec_eval is an oracle for iprec where the two agree."""
    return int(level * relevant + 0.9) == math.floor(level * relevant + 0.5)


@settings(max_examples=60, deadline=None)
@given(run_and_qrels())
def test_official_measures_equal_pytrec_eval(case: tuple[Run, Qrels]) -> None:
    run, qrels = case
    expected = pytrec_eval.RelevanceEvaluator(qrels, THEIRS).evaluate(run)
    if not expected:
        return
    options = {"doc": "doc", "ties": "doc", "qrels": qrels_frame(qrels)}
    per_query = run_frame(run).rank_metrics.evaluate(OURS, **options)
    assert sorted(per_query["query"]) == sorted(expected)
    for row in per_query.iter_rows(named=True):
        theirs = expected[row["query"]]
        for ours, name in PAIRS:
            if ours.startswith("iprec@") and not _same_rounding(float(ours[6:]), theirs["num_rel"]):
                continue
            assert row[ours] == pytest.approx(theirs[name], rel=1e-12, abs=1e-12), (row["query"], ours)
        # trec_eval keeps log(max(AP, 1e-5)) per query for gm_map
        assert math.log(max(row["gm_map"], 1e-5)) == pytest.approx(theirs["gm_map"], rel=1e-12, abs=1e-12)
    mean = run_frame(run).rank_metrics.evaluate_mean(OURS, **options)
    for ours, name in PAIRS[:5]:  # trec_eval's `all` line: the sum of the counts, the mean of the others
        values = [theirs[name] for theirs in expected.values()]
        summary = sum(values) if ours.startswith("num_") else sum(values) / len(values)
        assert mean[ours].item() == pytest.approx(summary, rel=1e-12, abs=1e-12), ours
    gm = math.exp(sum(theirs["gm_map"] for theirs in expected.values()) / len(expected))
    assert mean["gm_map"].item() == pytest.approx(gm, rel=1e-12)


def _evaluate(run: list[tuple[str, float]], judged: dict[str, int], names: list[str], **options: object) -> dict:
    frame = pl.DataFrame({"query": "q", "doc": [d for d, _ in run], "score": [s for _, s in run]})
    qrels = pl.DataFrame({"query": "q", "doc": list(judged), "relevance": list(judged.values())})
    result = frame.rank_metrics.evaluate(names, doc="doc", ties="doc", qrels=qrels, **options)
    return result.row(0, named=True)


def test_fewer_documents_than_r_by_hand() -> None:
    """R = 3 (r1, r2, r3), two documents retrieved: r1 then n (judged 0); n2 judged 0 not retrieved."""
    row = _evaluate([("r1", 2.0), ("n", 1.0)], {"r1": 1, "r2": 2, "r3": 1, "n": 0, "n2": 0}, [*OURS])
    assert (row["num_ret"], row["num_rel"], row["num_rel_ret"]) == (2.0, 3.0, 1.0)
    assert row["rprec"] == pytest.approx(1 / 3)  # one hit in the first R = 3 positions (only 2 exist) / 3
    assert row["bpref"] == pytest.approx(1 / 3)  # r1 has no non-relevant above: 1, over R = 3
    assert row["iprec@0.3"] == 1.0  # lround(0.9) = 1 relevant: the best precision from r1 on, 1/1
    assert row["iprec@0.5"] == 0.0  # lround(1.5) = 2 relevant, only 1 retrieved
    assert row["gm_map"] == pytest.approx(1 / 3)  # AP: 1/1 over R = 3


def test_bpref_skips_unjudged_and_negative_levels_by_hand() -> None:
    """Retrieved u (unjudged), n (0), neg (-1: judged unjudged), r (1); judged r2 (2), n2 (0) not retrieved.
    R = 2 (r, r2), N = 2 (n, n2; neg counts in neither): r has 1 non-relevant above, 1 - min(1, 2) / min(2, 2)
    = 0.5, over R = 2: 0.25."""
    judged = {"n": 0, "neg": -1, "r": 1, "r2": 2, "n2": 0}
    row = _evaluate([("u", 4.0), ("n", 3.0), ("neg", 2.0), ("r", 1.0)], judged, ["bpref", "num_rel", "rprec"])
    assert row["bpref"] == pytest.approx(0.25)
    assert row["num_rel"] == 2.0
    assert row["rprec"] == 0.0  # no relevant document in the first 2 positions


def test_no_relevant_document_scores_no_relevant_and_floors_gm_map() -> None:
    names = ["rprec", "bpref", "iprec@0.0", "gm_map", "num_rel"]
    row = _evaluate([("a", 1.0)], {"a": 0}, names)
    assert [row[name] for name in names] == [0.0, 0.0, 0.0, 0.0, 0.0]  # no_relevant=0.0, trec_eval's 0
    row = _evaluate([("a", 1.0)], {"a": 0}, names, no_relevant=None)
    assert [row[name] for name in names] == [None, None, None, None, 0.0]
    frame = pl.DataFrame({"query": ["q", "p"], "doc": ["a", "b"], "score": [1.0, 1.0]})
    qrels = pl.DataFrame({"query": ["q", "p"], "doc": ["a", "b"], "relevance": [0, 1]})
    mean = frame.rank_metrics.evaluate_mean(["gm_map"], doc="doc", ties="doc", qrels=qrels)
    # AP 0 counts as 1e-5: exp((log(1e-5) + log(1)) / 2)
    assert mean["gm_map"].item() == pytest.approx(math.sqrt(1e-5), rel=1e-12)


@pytest.mark.parametrize("name", ["infap", "iprec@0.5", "IPrec_at_recall@.5"])
def test_average_ties_are_refused_when_the_method_is_called(name: str) -> None:
    lazy = pl.LazyFrame({"query": [1], "doc": ["a"], "score": [1.0], "relevance": [1]})
    with pytest.raises(ValueError, match=r"has no exact expectation under ties='average'.*pass ties='doc'"):
        lazy.rank_metrics.evaluate([name], doc="doc")  # not collected: refused at the call


def test_rprec_average_is_the_expectation_over_tied_orders() -> None:
    """Brute force: a query of 5 rows, scores 3, 2, 2, 2, 1, labels 0, 1, 0, 1, 1 (R = 3): every order of
    the tied block, Rprec computed by hand (hits in the first 3 positions / 3), averaged."""
    scores, labels = [3.0, 2.0, 2.0, 2.0, 1.0], [0, 1, 0, 1, 1]
    block = [1, 2, 3]
    values = []
    for order in itertools.permutations(block):
        ranked = [labels[0], *(labels[i] for i in order), labels[4]]
        values.append(sum(ranked[:3]) / 3)
    frame = pl.DataFrame({"query": 1, "score": scores, "relevance": labels})
    result = frame.rank_metrics.evaluate(["rprec"])  # ties="average", the default
    assert result["rprec"].item() == pytest.approx(sum(values) / len(values), rel=1e-12)


def test_measure_names_with_a_wrong_parameter_are_refused() -> None:
    frame = pl.DataFrame({"query": [1], "score": [1.0], "relevance": [1]})
    for name, fragment in [
        ("num_ret@3", "num_ret takes no cut-off"),
        ("iprec", "takes a recall level from 0 to 1"),
        ("iprec@1.5", "got '1.5'"),
        ("p@0.5", "whole number of positions"),
    ]:
        with pytest.raises(ValueError, match=fragment):
            frame.rank_metrics.evaluate([name], ties="doc" if "iprec" in name else "average")


def test_mean_of_a_per_query_frame_follows_each_measures_summary() -> None:
    per_query = pl.DataFrame({"query": [1, 2], "num_ret": [3.0, 4.0], "gm_map": [0.25, 1.0], "ap": [0.25, 1.0]})
    mean = lodestar_polars.mean(per_query)
    assert mean["num_ret"].item() == 7.0
    assert mean["gm_map"].item() == pytest.approx(0.5, rel=1e-12)  # sqrt(0.25 x 1)
    assert mean["ap"].item() == 0.625


# --- the CLI against trec_eval 10's expected output ------------------------------------------------------

OFFICIAL = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref")
OFFICIAL += ("recip_rank", "iprec_at_recall", "P")


def _official_lines(path: Path) -> list[str]:
    """trec_eval's lines of the official measures (with their parameters), in its order."""
    kept = []
    for line in path.read_text().splitlines(keepends=True):
        name = line.split("\t")[0].strip()
        parameter = name.rsplit("_", 1)[-1]
        if name in OFFICIAL or (name.rsplit("_", 1)[0] in OFFICIAL and parameter.replace(".", "", 1).isdigit()):
            kept.append(line)
    return kept


def test_trec_eval_without_m_reproduces_out_test(shared_data: Path) -> None:
    folder = shared_data / "trec_eval"
    result = cli("trec_eval", folder / "qrels.test", folder / "results.test")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout == (folder / "out.test").read_text()


@pytest.mark.parametrize(
    ("flags", "expected", "run"),
    [(["-q"], "out.test.aq", "results.test"), (["-q", "-c"], "out.test.aqc", "results.trunc")],
)
def test_trec_eval_dash_q_reproduces_the_official_lines(
    shared_data: Path, flags: list[str], expected: str, run: str
) -> None:
    """No -q file exists for the official set: the official lines of the `-m all_trec -q` output."""
    folder = shared_data / "trec_eval"
    result = cli("trec_eval", *flags, folder / "qrels.test", folder / run)
    assert result.returncode == 0, result.stderr
    lines = _official_lines(folder / expected)
    assert len(lines) == 3 * (3 + 4 + 11 + 9) + 10 + 11 + 9  # per query no runid, num_q, gm_map
    assert result.stdout.splitlines(keepends=True) == lines


def test_trec_eval_iprec_at_recall_levels_from_m(shared_data: Path) -> None:
    """Command 14's iprec_at_recall levels, given unsorted: printed sorted, as out.test.meas_params."""
    folder = shared_data / "trec_eval"
    result = cli(
        "trec_eval", "-q", "-miprec_at_recall..10,.20,.25,.75,.50", folder / "qrels.test", folder / "results.test"
    )
    assert result.returncode == 0, result.stderr
    expected = [
        line
        for line in (folder / "out.test.meas_params").read_text().splitlines(keepends=True)
        if line.startswith("iprec")
    ]
    assert result.stdout.splitlines(keepends=True) == expected
