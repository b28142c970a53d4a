"""trec_eval's relstring in the CLI's trec_eval mode: each query's judged levels of its first N retrieved
documents, written by hand here and compared with the real binary (random runs: tests/test_trec_eval_binary.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lodestar_polars import cli
from tests.helpers import call_ours, ours
from tests.trec_eval_binary import TrecEval

# query 1 by trec_eval's order: score descending, then doc id descending as text ("b" before "a" at 2.0)
RUN = """1 Q0 a 0 2.0 tag
1 Q0 b 0 2.0 tag
1 Q0 c 0 1.5 tag
1 Q0 d 0 1.0 tag
1 Q0 e 0 0.5 tag
1 Q0 f 0 0.25 tag
2 Q0 a 0 1.0 tag
"""
# b: 12 ('>'), a: 3, c: not judged ('-'), d: -1 and e: -3 (pooled, not assessed: '.'), f: 0; query 3 is judged
# but not in the run
QRELS = """1 0 a 3
1 0 b 12
1 0 d -1
1 0 e -3
1 0 f 0
2 0 a 1
3 0 z 1
"""


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text(QRELS, encoding="ascii")
    run.write_text(RUN, encoding="ascii")
    return qrels, run


def line(name: str, query: str, text: str) -> str:
    return f"{name:<22}\t{query}\t'{text}'\n"


def test_relstring_by_hand(files: tuple[Path, Path]) -> None:
    qrels, run = files
    assert ours(["-q", "-m", "relstring"], qrels, run) == line("relstring", "1", ">3-..0") + line("relstring", "2", "1")
    assert ours(["-q", "-m", "relstring.3"], qrels, run) == line("relstring_3", "1", ">3-") + line(
        "relstring_3", "2", "1"
    )
    # -c: a judged query missing from the run: trec_eval ranks one made-up unjudged document ('-') and clears
    # the string of `relstring`, not of `relstring_N`
    assert ours(["-q", "-c", "-m", "relstring"], qrels, run).endswith(line("relstring", "3", ""))
    assert ours(["-q", "-c", "-m", "relstring.2"], qrels, run).endswith(line("relstring_2", "3", "-"))
    assert ours(["-q", "-c", "-m", "relstring.0"], qrels, run).endswith(line("relstring_0", "3", ""))
    # no summary line, so nothing at all without -q
    assert ours(["-m", "relstring"], qrels, run) == ""
    # between P and recall, as trec_eval prints it
    printed = ours(["-q", "-m", "recall.5", "-m", "relstring.1", "-m", "P.5"], qrels, run).splitlines()
    assert [text.split("\t")[0].strip() for text in printed[:3]] == ["P_5", "relstring_1", "recall_5"]


def test_relstring_equals_trec_eval(trec_eval: TrecEval, files: tuple[Path, Path]) -> None:
    qrels, run = files
    # with -c: trec_eval 10 stops at the judged query 3, missing from the run, without it
    for arguments in (["-q", "-c", "-m", "relstring"], ["-q", "-c", "-m", "relstring.4"]):
        assert ours(arguments, qrels, run) == trec_eval.run(arguments, qrels, run)
    # all_trec: the relstring lines (the other measures are compared in tests/test_trec_eval_binary.py)
    arguments = ["-q", "-c", "-m", "all_trec"]
    theirs = [text for text in trec_eval.run(arguments, qrels, run).splitlines() if text.startswith("relstring")]
    assert [text for text in ours(arguments, qrels, run).splitlines() if text.startswith("relstring")] == theirs


def test_relstring_of_trec_eval_test_files(shared_data: Path) -> None:
    """QUICKTEST 8 (`-m all_trec -mrelstring.20 -q -l2`): relstring does not read -l, so its lines of
    out.test.aql are those of -m relstring.20 alone."""
    folder = shared_data / "trec_eval"
    expected = [
        text for text in (folder / "out.test.aql").read_text().splitlines(keepends=True) if text.startswith("relstring")
    ]
    assert ours(["-q", "-m", "relstring.20"], folder / "qrels.rel_level", folder / "results.test") == "".join(expected)


@pytest.mark.parametrize("text", ["relstring.abc", "relstring.-1", "relstring."])
def test_a_bad_length_is_a_usage_error(files: tuple[Path, Path], text: str) -> None:
    qrels, run = files
    code, _, err = call_ours(["-q", "-m", text], qrels, run)
    assert code == cli.EXIT_USAGE_ERROR
    assert "the length must be a non-negative number" in err
