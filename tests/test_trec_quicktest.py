"""trec_eval 10's own quicktest (its QUICKTEST.md, commands 1-15: every command) run through
`lodestar-polars trec_eval`, each compared byte for byte with the expected file trec_eval ships: comments,
-q, -c, -M100, -l2, -Z, measure parameters, every measure of all_trec, every measure of all_prefs with -R prefs
and -R qrels_prefs, and -R qrels_jg's judgment-group measures."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import our_trec_eval


@dataclass(frozen=True)
class Command:
    number: int
    arguments: tuple[str, ...]  # as QUICKTEST.md writes them, files under "test/"
    expected: str


QUICKTEST = [
    Command(1, ("test/qrels.test", "test/results.test"), "out.test"),
    Command(2, ("test/qrels.test.with-comments", "test/results.test"), "out.test"),
    Command(3, ("test/qrels.comment.test", "test/results.comment.test"), "out.comment.test"),
    Command(4, ("-m", "all_trec", "test/qrels.test", "test/results.test"), "out.test.a"),
    Command(5, ("-m", "all_trec", "-q", "test/qrels.test", "test/results.test"), "out.test.aq"),
    Command(6, ("-m", "all_trec", "-q", "-c", "test/qrels.test", "test/results.trunc"), "out.test.aqc"),
    Command(7, ("-m", "all_trec", "-q", "-c", "-M100", "test/qrels.test", "test/results.trunc"), "out.test.aqcM"),
    Command(
        8,
        ("-m", "all_trec", "-mrelstring.20", "-q", "-l2", "test/qrels.rel_level", "test/results.test"),
        "out.test.aql",
    ),
    Command(12, ("-m", "qrels_jg", "-q", "-R", "qrels_jg", "test/qrels.123", "test/results.test"), "out.test.qrels_jg"),
    Command(
        13,
        ("-m", "qrels_jg", "-q", "-R", "qrels_jg", "test/qrels.comments.123", "test/results.test"),
        "out.test.qrels_jg",
    ),
    Command(
        9, ("-m", "all_prefs", "-q", "-R", "prefs", "test/prefs.test", "test/prefs.results.test"), "out.test.prefs"
    ),
    Command(
        10,
        ("-m", "all_prefs", "-q", "-R", "prefs", "test/prefs.comment.test", "test/prefs.results.test"),
        "out.test.prefs",
    ),
    Command(
        11,
        ("-m", "all_prefs", "-q", "-R", "qrels_prefs", "test/qrels.test", "test/results.test"),
        "out.test.qrels_prefs",
    ),
    Command(
        14,
        (
            *("-q", "-miprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3", "-m", "recall.20,2000"),
            *("-m", "Rprec_mult.5.0,0.2,0.35", "-mutility.2,-1,0,0", "-m", "11pt_avg..25,.5,.75"),
            *("-mndcg.1=3,2=9,4=4.5", "-mndcg_cut.10,20,23.4", "-msuccess.2,5,20"),
            *("test/qrels.test", "test/results.test"),
        ),
        "out.test.meas_params",
    ),
    Command(
        15, ("-q", "-m", "all_trec", "-Z", "test/zscores_file", "test/qrels.test", "test/results.test"), "out.test.aqZ"
    ),
]


def _in(folder: Path, arguments: list[str] | tuple[str, ...]) -> list[str]:
    return [
        str(folder / argument[len("test/") :]) if argument.startswith("test/") else argument for argument in arguments
    ]


@pytest.mark.parametrize("command", [pytest.param(command, id=str(command.number)) for command in QUICKTEST])
def test_quicktest_output_is_trec_evals(shared_data: Path, command: Command) -> None:
    folder = shared_data / "trec_eval"
    assert our_trec_eval(_in(folder, command.arguments)) == (folder / command.expected).read_text()
