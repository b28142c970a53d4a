"""trec_eval's preference measures (`lodestar_polars.preferences`, `trec_eval -R prefs / -R qrels_prefs`):
against the real trec_eval 10 binary on random judgments and runs, byte for byte; hand-derived cases for
each measure family; the errors."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lodestar_polars import cli
from lodestar_polars.preferences import ALL_PREFS, evaluate
from tests.trec_eval_binary import TrecEval

DOCS = [f"d{i}" for i in range(8)]
FLAGS = [["-q"], ["-q", "-c"], [], ["-q", "-M", "3"], ["-q", "-c", "-M", "2"], ["-q", "-n"], ["-q", "-J", "-l", "2"]]

Prefs = list[tuple[str, str, str, str, float]]  # query, jg, jsg, doc, level
RunRows = list[tuple[str, str, float]]  # query, doc, score


@st.composite
def judgment_groups(draw: st.DrawFn, query: str, jg: str) -> Prefs:
    """One JG: each doc has a hidden level (ties likely, 0 = non-relevant); each sub-group judges some docs at a
    non-decreasing map of it that keeps 0 at 0, so the sub-groups never contradict each other."""
    docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=6, unique=True))
    hidden = {doc: draw(st.integers(0, 3)) for doc in docs}
    rows: Prefs = []
    for jsg in range(draw(st.integers(1, 3))):
        steps = [draw(st.sampled_from([0.0, 0.5, 1.0])) for _ in range(3)]
        level = {0: 0.0, 1: 1.0, 2: 1.0 + steps[0], 3: 1.0 + steps[0] + steps[1]}
        judged = draw(st.lists(st.sampled_from(docs), min_size=1, max_size=len(docs), unique=True))
        rows += [(query, jg, f"s{jsg}", doc, level[hidden[doc]]) for doc in judged]
    return rows


@st.composite
def prefs_and_runs(draw: st.DrawFn) -> tuple[Prefs, RunRows]:
    prefs: Prefs = []
    for query in draw(st.lists(st.sampled_from(["q1", "q2", "q3"]), min_size=1, max_size=3, unique=True)):
        for jg in draw(st.lists(st.sampled_from(["g1", "g2", "g3"]), min_size=1, max_size=3, unique=True)):
            prefs += draw(judgment_groups(query, jg))
    run: RunRows = []
    for query in draw(st.lists(st.sampled_from(["q1", "q2", "q3", "q4"]), min_size=1, max_size=4, unique=True)):
        docs = draw(st.lists(st.sampled_from([*DOCS, "u1", "u2"]), min_size=1, max_size=8, unique=True))
        run += [(query, doc, draw(st.sampled_from([0.5, 1.0, 2.0, 3.0]))) for doc in docs]
    return prefs, run


def write(folder: Path, prefs: Prefs, run: RunRows) -> tuple[Path, Path]:
    prefs_path, run_path = folder / "prefs.txt", folder / "run.txt"
    prefs_path.write_text("".join(f"{q} {g} {s} {d} {level}\n" for q, g, s, d, level in prefs))
    run_path.write_text("".join(f"{q} Q0 {d} 0 {score} tag\n" for q, d, score in run))
    return prefs_path, run_path


def call_ours(arguments: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["trec_eval", *arguments])
    return code, out.getvalue(), err.getvalue()


def ours(arguments: list[str]) -> str:
    code, out, err = call_ours(arguments)
    assert code == 0, err
    return out


def theirs(trec_eval: TrecEval, arguments: list[str], prefs: Prefs, run: RunRows, folder: Path) -> str:
    """trec_eval's output; without -c on the judged queries the run has (it stops at a missing one, where
    lodestar-polars skips it, as for qrels)."""
    if "-c" not in arguments:
        queries = {query for query, _, _ in run}
        prefs = [row for row in prefs if row[0] in queries]
    prefs_path, run_path = write(folder / "theirs", prefs, run)
    return trec_eval.run(arguments, prefs_path, run_path)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=prefs_and_runs(), flags=st.sampled_from(FLAGS))
def test_prefs_equal_trec_eval(trec_eval: TrecEval, tmp_path: Path, case: tuple[Prefs, RunRows], flags: list[str]) -> None:
    prefs, run = case
    (tmp_path / "theirs").mkdir(exist_ok=True)
    if "-c" not in flags and not {q for q, *_ in prefs} & {q for q, *_ in run}:
        return  # nothing to evaluate: both stop (tested below)
    prefs_path, run_path = write(tmp_path, prefs, run)
    arguments = [*flags, "-m", "all_prefs", "-R", "prefs"]
    assert ours([*arguments, str(prefs_path), str(run_path)]) == theirs(trec_eval, arguments, prefs, run, tmp_path)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=prefs_and_runs(), flags=st.sampled_from(FLAGS))
def test_qrels_prefs_equal_trec_eval(
    trec_eval: TrecEval, tmp_path: Path, case: tuple[Prefs, RunRows], flags: list[str]
) -> None:
    """The qrels read as preferences: the iteration field is the JG (several here), one doc once per JG."""
    prefs, run = case
    (tmp_path / "theirs").mkdir(exist_ok=True)
    qrels = {(q, g, d): int(level) for q, g, _, d, level in prefs}  # one sub-group: a doc's last level
    if "-c" not in flags and not {q for q, *_ in qrels} & {q for q, *_ in run}:
        return
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    queries = {q for q, *_ in run}
    lines = {
        mine: "".join(f"{q} {g} {d} {level}\n" for (q, g, d), level in qrels.items() if mine or q in queries)
        for mine in (True, False)
    }
    qrels_path.write_text(lines[True])
    run_path.write_text("".join(f"{q} Q0 {d} 0 {score} tag\n" for q, d, score in run))
    arguments = [*flags, "-m", "all_prefs", "-R", "qrels_prefs"]
    if "-c" not in flags:
        (tmp_path / "theirs" / "qrels.txt").write_text(lines[False])
        expected = trec_eval.run(arguments, tmp_path / "theirs" / "qrels.txt", run_path)
    else:
        expected = trec_eval.run(arguments, qrels_path, run_path)
    assert ours([*arguments, str(qrels_path), str(run_path)]) == expected
