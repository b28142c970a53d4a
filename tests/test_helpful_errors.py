"""Inputs a new user gets wrong, and what they are told: an empty run file, a cut-off beyond a float's integers,
NaN query ids, a measure spelled as another tool spells it or mistyped, a column under another name, the two
files swapped, ``trec_eval -v``.  trec_eval's own behaviour is read from the real binary where it has one."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import polars as pl
import pytest

from lodestar_polars import cli
from lodestar_polars._measure_table import _PARAMETER
from lodestar_polars._spec import parse_measure
from lodestar_polars.measures._registry import REGISTRY
from tests.trec_eval_binary import TrecEval

QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 c 2\n"
RUN = "q1 Q0 a 1 0.5 tag\nq1 Q0 b 2 0.4 tag\nq2 Q0 c 1 0.9 tag\n"


def call(*arguments: str) -> tuple[int, str, str]:
    """`lodestar-polars ARGUMENTS` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(list(arguments))
        except SystemExit as stopped:  # argparse's own exits (-v, --help, usage)
            code = int(stopped.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(judgments, run, an empty file)."""
    qrels, run, empty = tmp_path / "qrels.txt", tmp_path / "run.txt", tmp_path / "empty.txt"
    qrels.write_text(QRELS)
    run.write_text(RUN)
    empty.write_text("")
    return qrels, run, empty


# --------------------------------------------------------------------------------------------------------
# 1. an empty run file is refused, as trec_eval refuses it


# every -R format with a measure it computes
FORMATS = [
    ["-m", "P.5"],
    ["-R", "qrels_jg", "-m", "qrels_jg"],
    ["-R", "prefs", "-m", "prefs"],
    ["-R", "qrels_prefs", "-m", "prefs"],
]


@pytest.mark.parametrize("complete", [[], ["-c"]], ids=["without -c", "with -c"])
@pytest.mark.parametrize("arguments", FORMATS, ids=lambda a: " ".join(a))
def test_an_empty_run_file_is_refused_as_trec_eval_refuses_it(
    trec_eval: TrecEval, files: tuple[Path, Path, Path], arguments: list[str], complete: list[str]
) -> None:
    qrels, _, empty = files
    if "prefs" in arguments and "qrels_prefs" not in arguments:  # a preference file: qid jg jsg docno level
        qrels.write_text("q1 1 1 a 2\nq1 1 1 b 1\n")
    theirs = trec_eval.call([*complete, *arguments], qrels, empty)
    assert theirs.returncode == 2
    assert f"Cannot read results file '{empty}'" in theirs.stderr
    code, out, err = call("trec_eval", *complete, *arguments, str(qrels), str(empty))
    assert (code, out) == (2, "")
    assert f"Cannot read results file '{empty}'" in err


def test_an_empty_standard_input_is_refused(files: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    qrels, _, _ = files
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"")))
    code, out, err = call("trec_eval", "-c", "-m", "P.5", str(qrels), "-")
    assert (code, out) == (2, "")
    assert "Cannot read results file '-'" in err


def test_a_run_of_comments_alone_is_not_an_empty_file(trec_eval: TrecEval, files: tuple[Path, Path, Path]) -> None:
    """trec_eval refuses a file of zero bytes only: a run of comment lines is read (no query), as here."""
    qrels, run, _ = files
    run.write_text("# nothing retrieved\n")
    theirs = trec_eval.run(["-c", "-m", "P.5"], qrels, run)
    assert call("trec_eval", "-c", "-m", "P.5", str(qrels), str(run))[1] == theirs


# --------------------------------------------------------------------------------------------------------
# 2. cut-offs are the integers the user wrote


@pytest.mark.parametrize("cutoff", ["9007199254740993", "9223372036854775807"])
@pytest.mark.parametrize("measure", ["P", "success", "ndcg_cut", "recall", "map_cut", "relative_P"])
def test_a_cut_off_above_two_to_the_53_is_printed_as_written(
    trec_eval: TrecEval, files: tuple[Path, Path, Path], measure: str, cutoff: str
) -> None:
    """2**53 + 1 has no float: through one it would print as 2**53 (``P_9007199254740992``).  (One cut-off per
    call: trec_eval sorts cut-offs by their difference cast to an int, which orders such large ones wrongly.)"""
    qrels, run, _ = files
    arguments = ["-q", "-m", f"{measure}.{cutoff}"]
    code, out, err = call("trec_eval", *arguments, str(qrels), str(run))
    assert code == 0, err
    assert f"{measure}_{cutoff}" in out.split()
    assert out == trec_eval.run(arguments, qrels, run)


def test_a_judgment_group_cut_off_is_printed_as_written(files: tuple[Path, Path, Path]) -> None:
    qrels, run, _ = files
    code, out, err = call("trec_eval", "-R", "qrels_jg", "-m", "P_avgjg.9007199254740993", str(qrels), str(run))
    assert code == 0, err
    assert out.split()[:2] == ["P_avgjg_9007199254740993", "all"]


def test_a_cut_off_above_a_c_long_is_refused(trec_eval: TrecEval, files: tuple[Path, Path, Path]) -> None:
    """trec_eval reads 2**63 with atol as 2**63 - 1, and prints that: refused here rather than read otherwise."""
    qrels, run, _ = files
    assert "success_9223372036854775807" in trec_eval.run(["-m", "success.9223372036854775808"], qrels, run)
    code, out, err = call("trec_eval", "-m", "success.9223372036854775808", str(qrels), str(run))
    assert (code, out) == (2, "")
    assert "cut-off 9223372036854775808 is above 9223372036854775807, the largest trec_eval reads" in err


# --------------------------------------------------------------------------------------------------------
# 3. NaN query ids are refused, as null ones are


NAN = float("nan")


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
def test_nan_query_ids_are_refused_naming_the_column_and_count(lazy: bool) -> None:
    frame = pl.DataFrame({"qid": [1.0, NAN, NAN, 2.0], "relevance": [1, 0, 1, 1], "score": [0.2, 0.1, 0.3, 0.4]})
    message = "query column 'qid' has 2 NaN value(s)"
    with pytest.raises(ValueError, match=re.escape(message)):
        if lazy:
            frame.lazy().rank_metrics.evaluate(["ndcg@10"], query="qid").collect()
        else:
            frame.rank_metrics.evaluate_mean(["ndcg@10"], query="qid")


def test_nan_query_ids_of_the_judgments_are_refused() -> None:
    run = pl.DataFrame({"query": [1.0, 1.0], "doc": ["a", "b"], "score": [0.2, 0.1]})
    qrels = pl.DataFrame({"query": [1.0, NAN], "doc": ["a", "b"], "relevance": [1, 1]})
    with pytest.raises(ValueError, match=re.escape("qrels query column 'query' has 1 NaN value(s)")):
        run.rank_metrics.evaluate(["ap"], doc="doc", qrels=qrels)


def test_float_query_ids_without_nan_are_evaluated() -> None:
    frame = pl.DataFrame({"query": [1.0, 1.0, 2.0], "relevance": [1, 0, 1], "score": [0.2, 0.1, 0.4]})
    assert frame.rank_metrics.evaluate(["p@1"]).rows() == [(1.0, 1.0), (2.0, 1.0)]


def test_the_command_line_refuses_nan_query_ids(tmp_path: Path) -> None:
    path = tmp_path / "log.parquet"
    pl.DataFrame({"query": [NAN, 1.0], "relevance": [1, 0], "score": [0.2, 0.1]}).write_parquet(path)
    code, _, err = call("evaluate", str(path))
    assert code == cli.EXIT_DATA_ERROR
    assert "query column 'query' has 1 NaN value(s)" in err


# --------------------------------------------------------------------------------------------------------
# 4. one name resolver: every spelling of the measure table, and the closest names to a mistyped one


def table_spellings() -> list[tuple[str, str]]:
    """(a tool's spelling the measure table lists, the package's name for it), for every measure and tool,
    at a sample cut-off (10) or level / multiplier (0.5), as the README's table writes them."""
    pairs = []
    for kind, measure in REGISTRY.items():
        sample = {"recall_level": 0.5, "multiplier": 0.5}.get(measure.parameter, 10)
        for spelling in (measure.trec_eval, measure.ir_measures, measure.ranx):
            options = {option.name: option.default for option in measure.options if option.default is None}
            if options:  # a required option (sdcg's max_rel): the table writes the tool's own syntax with it
                continue
            if spelling.whole is not None and measure.parameter != "required_cutoff":
                pairs.append((spelling.whole.format(), kind))
            if spelling.cut is not None:
                ours = f"{kind}{_PARAMETER[measure.parameter][0]}{sample}"
                pairs.append((spelling.cut.format(k=sample), ours))
    return pairs


@pytest.mark.parametrize(("spelled", "ours"), table_spellings())
def test_each_spelling_of_the_measure_table_is_taken(spelled: str, ours: str) -> None:
    assert parse_measure(spelled) == parse_measure(ours)


@pytest.mark.parametrize(
    ("spelled", "ours"),
    [
        ("ndcg_cut_10", "ndcg@10"),
        ("P_10", "p@10"),
        ("recall_100", "r@100"),
        ("map_cut_10", "ap@10"),
        ("iprec_at_recall_0.50", "iprec@0.5"),
        ("Rprec_mult_0.20", "rprec_mult@0.2"),
        ("NumRelRet", "num_rel_ret"),
        ("SetF", "set_f"),
        ("precision@5", "p@5"),
    ],
)
def test_trec_eval_and_ir_measures_names_give_the_packages_columns(spelled: str, ours: str) -> None:
    frame = pl.DataFrame({"query": [1, 1, 1], "doc": ["a", "b", "c"], "relevance": [1, 0, 2], "score": [3, 2, 1]})
    theirs = frame.rank_metrics.evaluate([spelled], ties="doc", doc="doc")
    assert theirs.equals(frame.rank_metrics.evaluate([ours], ties="doc", doc="doc"))


def test_a_mistyped_name_gets_the_closest_names_in_python() -> None:
    frame = pl.DataFrame({"query": [1], "relevance": [1], "score": [0.5]})
    with pytest.raises(ValueError, match=r"^unknown measure 'ndgc@10'; did you mean 'ndcg@10'") as raised:
        frame.rank_metrics.evaluate(["ndgc@10"])
    assert "rbp" not in str(raised.value)  # not the whole list


def test_a_name_close_to_none_gets_the_whole_list() -> None:
    frame = pl.DataFrame({"query": [1], "relevance": [1], "score": [0.5]})
    with pytest.raises(ValueError, match=r"^unknown measure 'xyzzy'; known measures \(case-insensitive\): ndcg, "):
        frame.rank_metrics.evaluate(["xyzzy"])


def test_a_mistyped_name_gets_the_closest_names_on_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    path.write_text("query,relevance,score\n1,1,0.5\n")
    code, _, err = call("evaluate", str(path), "-m", "ndgc@10")
    assert code == cli.EXIT_USAGE_ERROR
    assert "did you mean 'ndcg@10'" in err
    assert "rbp" not in err
    assert call("evaluate", str(path), "-m", "ndcg_cut_10", "--quiet")[0] == 0


@pytest.mark.parametrize(
    ("measure", "suggestion"),
    [
        ("ndgc_cut.10", "'ndcg_cut.10'"),
        ("P_10", "'P.10'"),
        ("recip_rnak", "'recip_rank'"),
        ("ndcg@10", "'ndcg_cut.10'"),  # evaluate's names, as trec_eval's -m takes them
        ("mrr", "'recip_rank'"),
        ("iprec@0.5", "'iprec_at_recall.0.50'"),
    ],
)
def test_a_mistyped_trec_eval_measure_gets_the_closest_names(
    files: tuple[Path, Path, Path], measure: str, suggestion: str
) -> None:
    qrels, run, _ = files
    code, _, err = call("trec_eval", "-m", measure, str(qrels), str(run))
    assert code == cli.EXIT_USAGE_ERROR
    assert f"trec_eval measure '{measure}' is not supported; did you mean {suggestion}?" in err
    assert call("trec_eval", "-m", suggestion.strip("'"), str(qrels), str(run))[0] == 0  # the suggestion runs


# --------------------------------------------------------------------------------------------------------
# 5. errors that name the fix


def test_a_missing_column_names_the_python_argument() -> None:
    frame = pl.DataFrame({"session_id": [1], "label": [1], "pred": [0.5]})
    with pytest.raises(pl.exceptions.ColumnNotFoundError, match=re.escape("Name the query column with query=.")):
        frame.rank_metrics.evaluate(["ndcg"])


@pytest.mark.parametrize(
    ("options", "missing"),
    [([], "query"), (["--query", "session_id"], "score"), (["--query", "session_id", "--score", "pred"], "relevance")],
)
def test_a_missing_column_names_the_option(tmp_path: Path, options: list[str], missing: str) -> None:
    path = tmp_path / "log.csv"
    path.write_text("session_id,item,label,pred\n1,a,1,0.5\n")
    code, _, err = call("evaluate", str(path), *options)
    assert code == cli.EXIT_DATA_ERROR
    assert f"{missing} column '{missing}' not found in the frame" in err
    assert err.rstrip().endswith(f"Name the {missing} column with --{missing}.")


def test_a_run_given_as_the_judgments_is_pointed_out(files: tuple[Path, Path, Path]) -> None:
    _, run, _ = files
    code, _, err = call("trec_eval", "-m", "map", str(run), str(run))
    assert code == cli.EXIT_DATA_ERROR
    assert "expected 4 whitespace-separated fields, got 6" in err
    assert "It has a run line's fields (qid Q0 docno rank score tag): are the run and the judgments swapped?" in err


def test_judgments_given_as_the_run_are_pointed_out(files: tuple[Path, Path, Path]) -> None:
    qrels, _, _ = files
    code, _, err = call("trec_eval", "-m", "map", str(qrels), str(qrels))
    assert code == cli.EXIT_DATA_ERROR
    assert "It has a qrels line's fields (qid iter docno rel): are the run and the judgments swapped?" in err


def test_swapped_files_are_pointed_out(files: tuple[Path, Path, Path]) -> None:
    """Both files are then wrong: whichever error the plan raises first says they are swapped."""
    qrels, run, _ = files
    code, _, err = call("trec_eval", "-m", "map", str(run), str(qrels))
    assert code == cli.EXIT_DATA_ERROR
    assert err.rstrip().endswith("are the run and the judgments swapped?")


def test_trec_eval_v_prints_the_version_as_trec_eval(trec_eval: TrecEval, files: tuple[Path, Path, Path]) -> None:
    qrels, run, _ = files
    theirs = trec_eval.call(["-v"], qrels, run)
    code, out, err = call("trec_eval", "-v")
    assert (code, out) == (theirs.returncode, theirs.stdout) == (0, "")
    assert err.startswith(theirs.stderr.rstrip("\n"))  # "trec_eval version 10.0-rc3", then ours in parentheses


# --------------------------------------------------------------------------------------------------------
# 6. progress on a terminal, nothing elsewhere


class Terminal(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def show_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Progress shown from the start of a step (by default, only a step longer than a second shows)."""
    monkeypatch.setattr("lodestar_polars._progress.SHOW_AFTER_SECONDS", 0.0)


def call_on_terminal(*arguments: str) -> tuple[int, str, str]:
    """`lodestar-polars ARGUMENTS` with stderr a terminal: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), Terminal()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(arguments))
    return code, out.getvalue(), err.getvalue()


@pytest.mark.usefixtures("show_at_once")
def test_evaluate_shows_its_steps_on_a_terminal(tmp_path: Path) -> None:
    path = tmp_path / "log.parquet"
    pl.DataFrame({"query": [1, 1, 2], "relevance": [1, 0, 1], "score": [0.3, 0.2, 0.1]}).write_parquet(path)
    per_query = tmp_path / "per_query.csv"
    code, out, err = call_on_terminal("evaluate", str(path), "--per-query", str(per_query))
    assert code == 0
    assert re.search(rf"\rlodestar-polars: evaluating 3 rows of {re.escape(str(path))}… [0-9]+ s", err)
    assert re.search(rf"\rlodestar-polars: writing {re.escape(str(per_query))}… [0-9]+ s", err)
    assert out == call("evaluate", str(path))[1]  # the table is unchanged, on stdout


@pytest.mark.usefixtures("show_at_once")
def test_trec_eval_shows_its_step_on_a_terminal(files: tuple[Path, Path, Path]) -> None:
    qrels, run, _ = files
    code, out, err = call_on_terminal("trec_eval", "-m", "map", str(qrels), str(run))
    assert code == 0
    assert f"lodestar-polars: evaluating {run}… " in err
    assert out == call("trec_eval", "-m", "map", str(qrels), str(run))[1]


@pytest.mark.usefixtures("show_at_once")
def test_no_progress_with_quiet_or_off_a_terminal(files: tuple[Path, Path, Path]) -> None:
    qrels, run, _ = files
    assert call_on_terminal("trec_eval", "--quiet", "-m", "map", str(qrels), str(run))[2] == ""
    assert call("trec_eval", "-m", "map", str(qrels), str(run))[2] == ""


def test_a_quick_step_shows_nothing(files: tuple[Path, Path, Path]) -> None:
    """Under a second, the terminal shows the output alone."""
    qrels, run, _ = files
    assert call_on_terminal("trec_eval", "-m", "map", str(qrels), str(run))[2] == ""
