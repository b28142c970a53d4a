"""trec_eval's options and input conventions (-l, -M, -J, -Z, '-' for standard input, '#' comment lines), in
the CLI's trec_eval mode and as the Python options `threshold`, `max_retrieved` and `judged_only`, each against
the real trec_eval 10 binary on random runs with tied scores (`tests.cases.run_and_qrels`)."""

from __future__ import annotations

import contextlib
import io
import math
import re
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lodestar_polars import cli, preferences
from lodestar_polars.io import scan_trec_qrels, scan_trec_run
from tests.cases import Qrels, Run, qrels_frame, run_and_qrels, run_frame
from tests.helpers import call_our_trec_eval, our_trec_eval
from tests.trec_eval_binary import TrecEval

# every measure but yaap: trec_eval computes yaap just before rbp, whose uninitialised `min` and `max`
# (m_rbp.c) then start with what yaap left on the stack, and its rbp lines change (0.2442 -> 0.2064 on one
# query); tests/test_trec_eval_combinations.py draws yaap with these options and reads rbp's lines as trec_eval
# prints them with rbp alone (`with_rbp_alone`)
EVERY_MEASURE = [argument for m in cli.TREC_MEASURES if m.name != "yaap" for argument in ("-m", m.name)]
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
# trec_eval stops without a judged query in the run, or with an empty file (as the CLI does: not compared)
REFUSALS = ("No queries with both results and relevance info", "Cannot read")


def refused(stderr: str) -> bool:
    return any(refusal in stderr for refusal in REFUSALS)


def write_trec(folder: Path, run: Run, qrels: Qrels) -> tuple[Path, Path]:
    run_path, qrels_path = folder / "run.txt", folder / "qrels.txt"
    run_path.write_text("".join(f"{q} Q0 {d} 0 {s!r} tag\n" for q, docs in run.items() for d, s in docs.items()))
    qrels_path.write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items()))
    return qrels_path, run_path


def comparable(run: Run, qrels: Qrels) -> Qrels:
    """trec_eval 10 stops (exit 4) at a judged query missing from the run without -c, where the CLI skips it
    (as trec_eval 9 and pytrec_eval do): the oracle gets the judgments of the run's queries only."""
    return {query: judged for query, judged in qrels.items() if query in run}


def assert_same_as_trec_eval(trec_eval: TrecEval, folder: Path, run: Run, qrels: Qrels, options: list[str]) -> str:
    qrels_path, run_path = write_trec(folder, run, qrels if "-c" in options else comparable(run, qrels))
    arguments = ["-q", *options, *EVERY_MEASURE]
    theirs = trec_eval.call(arguments, qrels_path, run_path)
    code, out, err = call_our_trec_eval([*arguments, str(qrels_path), str(run_path)])
    if refused(theirs.stderr):
        assert code != 0, (theirs.stderr, out)
        return ""
    assert theirs.returncode == 0, theirs.stderr
    assert code == 0, err
    assert out == theirs.stdout
    return out


# --- the CLI ---------------------------------------------------------------------------------------------


@SETTINGS
@given(case=run_and_qrels(), limit=st.integers(1, 6))
def test_max_retrieved_equals_trec_eval(
    trec_eval: TrecEval, tmp_path: Path, case: tuple[Run, Qrels], limit: int
) -> None:
    run, qrels = case
    if run:
        assert_same_as_trec_eval(trec_eval, tmp_path, run, qrels, [f"-M{limit}"])


@SETTINGS
@given(case=run_and_qrels(), limit=st.sampled_from([[], ["-M", "3"]]), complete=st.booleans())
def test_judged_only_equals_trec_eval(
    trec_eval: TrecEval, tmp_path: Path, case: tuple[Run, Qrels], limit: list[str], complete: bool
) -> None:
    run, qrels = case
    if run:
        assert_same_as_trec_eval(trec_eval, tmp_path, run, qrels, ["-J", *limit, *(["-c"] if complete else [])])


# parameters whose value on -c's stand-in list (one unjudged document) is not 0, and which -J, removing that
# document, must not keep: utility with coefficients, rbp_resid with p, relstring with a length
JUDGED_ONLY_PARAMETERS = [
    ["-m", "utility.2,-1,0,0"],
    ["-m", "utility.1,-1,-3,0.5", "-N", "100"],
    ["-m", "rbp_resid.p=0.75", "-m", "relstring.3"],
]


@pytest.mark.parametrize("parameters", JUDGED_ONLY_PARAMETERS, ids=[" ".join(p) for p in JUDGED_ONLY_PARAMETERS])
@SETTINGS
@given(case=run_and_qrels(), complete=st.booleans())
def test_judged_only_with_parameters_equals_trec_eval(
    trec_eval: TrecEval, tmp_path: Path, parameters: list[str], case: tuple[Run, Qrels], complete: bool
) -> None:
    run, qrels = case
    if run:
        assert_same_as_trec_eval(trec_eval, tmp_path, run, qrels, ["-J", *(["-c"] if complete else []), *parameters])


def test_judged_only_removes_the_stand_in_document_of_a_missing_query(trec_eval: TrecEval, tmp_path: Path) -> None:
    """q2 retrieves only unjudged documents and q3 is judged but not in the run: under -c -J both retrieve
    nothing, so utility.a,b,c,d is c R + d (N - R) = -3 x 1 + 0.5 x 99 = 46.5 for each (not the stand-in's
    b + c R + d (N - 1 - R) = 45), rbp_resid_p=0.75 is 0 (not the stand-in's 1) and relstring_3 is empty (not
    '-'); without -c, q2 alone is printed, with the same values."""
    run = {"q1": {"d1": 3.0, "d9": 2.0}, "q2": {"d7": 3.0, "d8": 2.0, "d10": 1.0}}
    qrels = {"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"d1": 1, "d4": 0}, "q3": {"d5": 1, "d6": 0}}
    measures = ["-m", "utility.1,-1,-3,0.5", "-N", "100", "-m", "rbp_resid.p=0.75", "-m", "relstring.3"]
    for complete in (["-c"], []):
        qrels_path, run_path = write_trec(tmp_path, run, qrels if complete else comparable(run, qrels))
        arguments = ["-q", "-J", *complete, *measures]
        expected = trec_eval.run(arguments, qrels_path, run_path)
        got = our_trec_eval([*arguments, str(qrels_path), str(run_path)])
        assert got == expected
        for query in ("q2", "q3") if complete else ("q2",):
            assert f"utility_1,-1,-3,0.5   \t{query}\t46.5000\n" in got
            assert f"rbp_resid_p=0.75      \t{query}\t0.0000\n" in got
            assert f"relstring_3           \t{query}\t''\n" in got


@SETTINGS
@given(case=run_and_qrels(), level=st.integers(0, 4), complete=st.booleans())
def test_relevance_level_equals_trec_eval(
    trec_eval: TrecEval, tmp_path: Path, case: tuple[Run, Qrels], level: int, complete: bool
) -> None:
    """With -c, trec_eval's num_rel summary counts the judgments above 0 whatever the level: so here too."""
    run, qrels = case
    if run:
        assert_same_as_trec_eval(trec_eval, tmp_path, run, qrels, ["-l", str(level), *(["-c"] if complete else [])])


def test_options_parse_attached_and_separate_as_getopt_does(trec_eval: TrecEval, tmp_path: Path) -> None:
    run = {"q1": {"a": 1.0, "b": 1.0, "c": 0.5, "d": 0.2}}
    qrels = {"q1": {"a": 2, "b": 1, "d": 3, "e": 1}}
    qrels_path, run_path = write_trec(tmp_path, run, qrels)
    files = [str(qrels_path), str(run_path)]
    for attached, separate in ((["-M2"], ["-M", "2"]), (["-l2"], ["-l", "2"]), (["-qJ"], ["-q", "-J"])):
        expected = trec_eval.run([*attached, *EVERY_MEASURE], qrels_path, run_path)
        assert our_trec_eval([*attached, *EVERY_MEASURE, *files]) == expected
        assert our_trec_eval([*separate, *EVERY_MEASURE, *files]) == expected
    assert our_trec_eval(["--Max_retrieved_per_topic", "2", *EVERY_MEASURE, *files]) == our_trec_eval(
        ["-M2", *EVERY_MEASURE, *files]
    )


@pytest.mark.parametrize(
    ("option", "value"),
    [
        *(("-M", "0"), ("-M", "2.5"), ("-M", "x"), ("-l", "-1"), ("-l", "1.5"), ("-l", "x")),
        # trec_eval reads -N with atol: -5 as -5 (a negative count of documents), 2.5 as 2, x and 1e3 as 0 and 1
        *(("-N", "-5"), ("-N", "2.5"), ("-N", "x"), ("-N", "1e3")),
    ],
)
def test_bad_option_values_are_usage_errors(tmp_path: Path, option: str, value: str) -> None:
    qrels_path, run_path = write_trec(tmp_path, {"q": {"d": 1.0}}, {"q": {"d": 1}})
    with pytest.raises(SystemExit) as stopped, contextlib.redirect_stderr(io.StringIO()) as err:
        cli.main(["trec_eval", option, value, "-m", "utility.1,-1,0,0.5", str(qrels_path), str(run_path)])
    assert stopped.value.code == cli.EXIT_USAGE_ERROR
    assert repr(value) in err.getvalue()
    assert "integer" in err.getvalue()


@SETTINGS
@given(case=run_and_qrels())
def test_run_from_standard_input_equals_trec_eval(trec_eval: TrecEval, tmp_path: Path, case: tuple[Run, Qrels]) -> None:
    run, qrels = case
    if not run:
        return
    qrels_path, run_path = write_trec(tmp_path, run, comparable(run, qrels))
    text = run_path.read_text()
    theirs = trec_eval.call(["-q", *EVERY_MEASURE], qrels_path, "-", stdin=text)
    assert theirs.returncode == 0 or refused(theirs.stderr), theirs.stderr
    if theirs.returncode == 0:
        assert our_trec_eval(["-q", *EVERY_MEASURE, str(qrels_path), "-"], stdin=text.encode()) == theirs.stdout


def test_a_malformed_line_on_standard_input_is_named_so(tmp_path: Path) -> None:
    qrels_path, _ = write_trec(tmp_path, {}, {"q": {"d": 1}})
    code, _, err = call_our_trec_eval([str(qrels_path), "-"], stdin=b"q Q0 d 1 0.5 tag\nq Q0 e one 0.5\n")
    assert code == cli.EXIT_DATA_ERROR
    assert "(standard input, line 2)" in err


COMMENT_TEXT = st.sampled_from(["#", "# a comment", "#q1 Q0 d1 1 1.0 tag", "# 1 2 3", "#x\t y"])


@st.composite
def commented(draw: st.DrawFn, lines: list[str], leading_space: bool) -> str:
    """`lines` with comment lines between them.  trec_eval's qrels reader skips one comment line in a row and
    crashes on a comment as the last line: the qrels get neither (`leading_space` False), the runs both."""
    out: list[str] = []
    for line in lines:
        if draw(st.booleans()):
            indent = draw(st.sampled_from(["", " ", "\t "])) if leading_space else ""
            out.append(indent + draw(COMMENT_TEXT) + "\n")
            if leading_space and draw(st.booleans()):
                out.append(draw(COMMENT_TEXT) + "\n")
        out.append(line)
    if leading_space and draw(st.booleans()):
        out.append(draw(COMMENT_TEXT) + "\n")
    return "".join(out)


@SETTINGS
@given(case=run_and_qrels(), data=st.data())
def test_comment_lines_are_read_as_trec_eval_reads_them(
    trec_eval: TrecEval, tmp_path: Path, case: tuple[Run, Qrels], data: st.DataObject
) -> None:
    run, qrels = case
    if not run:
        return
    qrels_path, run_path = write_trec(tmp_path, run, comparable(run, qrels))
    qrels_path.write_text(data.draw(commented(qrels_path.read_text().splitlines(keepends=True), leading_space=False)))
    run_path.write_text(data.draw(commented(run_path.read_text().splitlines(keepends=True), leading_space=True)))
    theirs = trec_eval.call(["-q", *EVERY_MEASURE], qrels_path, run_path)
    assert theirs.returncode == 0 or refused(theirs.stderr), theirs.stderr
    if theirs.returncode == 0:
        assert our_trec_eval(["-q", *EVERY_MEASURE, str(qrels_path), str(run_path)]) == theirs.stdout


def test_an_indented_hash_in_qrels_is_data_as_in_trec_eval(tmp_path: Path) -> None:
    """get_qrels.c skips a line only when '#' is its first character: "  # 0 d 1" judges doc d for query "#"."""
    path = tmp_path / "qrels.txt"
    path.write_text("# a comment\nq 0 d1 1\n  # 0 d2 1\n")
    assert scan_trec_qrels(path).collect().rows() == [("q", "0", "d1", 1), ("#", "0", "d2", 1)]


def test_a_hash_inside_a_field_is_data(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("q Q0 doc#4 1 0.5 tag\n  # comment\nq Q0 doc#5 2 0.25 tag#1\n")
    assert scan_trec_run(path).collect()["doc"].to_list() == ["doc#4", "doc#5"]


def test_a_malformed_line_after_comments_keeps_its_line_number(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text("# one\nq 0 d1 1\n# two\nq 0 d2 x\n")
    with pytest.raises(ValueError, match=r"line 4\)"):
        scan_trec_qrels(path).collect()


# --- trec_eval's number reading (C's atol / atof, the rank field never read) ------------------------------

# suffixes that end C's number prefix without changing it ("e" and "e+" are an exponent without digits)
NON_NUMERIC_TAIL = st.sampled_from(["", "x", "abc", "e", "e+", ".", "_7", "%"])


@st.composite
def lenient_relevance(draw: st.DrawFn, level: int) -> str:
    """A spelling of `level` that C's atol reads as `level`: a fraction or letters after it, a + sign; and for
    level 0 also text with no digits first or a negative fraction above -1."""
    spellings = [f"{level}", f"+{level}", f"{level}.{draw(st.integers(0, 99))}", f"{level}{draw(NON_NUMERIC_TAIL)}"]
    if level == 0:
        spellings += ["x", "-0.5", "rel", ".9"]
    return draw(st.sampled_from(spellings))


@st.composite
def lenient_score(draw: st.DrawFn, score: float) -> str:
    """A spelling of `score` that C's atof reads as `score`: letters after it, a + sign, .5 for 0.5."""
    text = repr(score)
    spellings = [text, f"{text}{draw(NON_NUMERIC_TAIL)}"]
    if not text.startswith("-"):
        spellings.append("+" + text)
    if text.startswith("0."):
        spellings.append(text[1:] + draw(NON_NUMERIC_TAIL))
    if score == 0:
        spellings += ["zero", "-", "."]
    return draw(st.sampled_from(spellings))


RANK_FIELD = st.sampled_from(["1", "0", "-", "x", "1.5", "rank", "99999999999999999999999"])


@SETTINGS
@given(case=run_and_qrels(), data=st.data())
def test_numbers_are_read_as_trec_eval_reads_them(
    trec_eval: TrecEval, tmp_path: Path, case: tuple[Run, Qrels], data: st.DataObject
) -> None:
    """A relevance is what C's atol reads ("1.5" is 1, "x" 0), a score what atof reads ("0.5x" is 0.5, "x"
    0), the rank field is not read: random runs written so, against trec_eval on the same files."""
    run, qrels = case
    if not run:
        return
    qrels = comparable(run, qrels)
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels_path.write_text(
        "".join(f"{q} 0 {d} {data.draw(lenient_relevance(r))}\n" for q, docs in qrels.items() for d, r in docs.items())
    )
    run_path.write_text(
        "".join(
            f"{q} Q0 {d} {data.draw(RANK_FIELD)} {data.draw(lenient_score(s))} tag\n"
            for q, docs in run.items()
            for d, s in docs.items()
        )
    )
    arguments = ["-q", *EVERY_MEASURE]
    theirs = trec_eval.call(arguments, qrels_path, run_path)
    code, out, err = call_our_trec_eval([*arguments, str(qrels_path), str(run_path)])
    if refused(theirs.stderr):
        assert code != 0, (theirs.stderr, out)
        return
    assert theirs.returncode == 0, theirs.stderr
    assert code == 0, err
    assert out == theirs.stdout


def test_preference_levels_are_read_as_trec_eval_reads_them(trec_eval: TrecEval, tmp_path: Path) -> None:
    """get_prefs.c and get_qrels_prefs.c read a level with atof: "1.5x" is 1.5, "x" 0, ".5" 0.5;
    get_qrels_jg.c a relevance with atol ("1.5x" is 1)."""
    prefs, qrels, run = tmp_path / "prefs.txt", tmp_path / "qrels.txt", tmp_path / "run.txt"
    prefs.write_text("q1 a 0 d1 1.5x\nq1 a 0 d2 x\nq1 a 0 d3 .5\nq1 a 0 d5 2\nq1 b 0 d2 1e0z\nq1 b 0 d4 0\n")
    qrels.write_text("q1 0 d1 1.5x\nq1 0 d2 x\nq1 0 d3 .5\nq1 1 d4 +1\nq1 1 d5 2\n")
    run.write_text("q1 Q0 d1 x 1.5abc t\nq1 Q0 d2 1.0 abc t\nq1 Q0 d3 3 .5 t\nq1 Q0 d4 - 1e2x t\nq1 Q0 d5 5 -3 t\n")
    for format_name, judgments, measures in (
        ("prefs", prefs, "all_prefs"),
        ("qrels_prefs", qrels, "all_prefs"),
        ("qrels_jg", qrels, "qrels_jg"),  # get_qrels_jg.c: the relevance with atol, as in qrels
    ):
        arguments = ["-q", "-R", format_name, "-m", measures]
        expected = trec_eval.run(arguments, judgments, run)
        assert "prefs_simp" in expected or "map_avgjg" in expected
        assert our_trec_eval([*arguments, str(judgments), str(run)]) == expected


def test_lenient_readers_read_numbers_as_c_does(tmp_path: Path) -> None:
    """Hand-derived from C's atol / atof: the number a field starts with, 0 where none; the rank not read."""
    qrels_path, run_path, prefs_path = tmp_path / "qrels.txt", tmp_path / "run.txt", tmp_path / "prefs.txt"
    qrels_path.write_text("q 0 a 1.5\nq 0 b -0.5\nq 0 c 2x\nq 0 d x\nq 0 e +3\nq 0 f -2.9\n")
    run_path.write_text(
        "q Q0 a x 1.5abc t\nq Q0 b 7 abc t\nq Q0 c 1.0 .5 t\nq Q0 d - 1e2x t\nq Q0 e 2 1e t\n"
        "q Q0 f 3 -INF t\nq Q0 g 4 +.25e-1. t\n"
    )
    prefs_path.write_text("q a 0 d1 2x\nq a 0 d2 .\n")
    assert scan_trec_qrels(qrels_path, lenient=True).collect()["relevance"].to_list() == [1, 0, 2, 0, 3, -2]
    run = scan_trec_run(run_path, lenient=True).collect()
    assert run["score"].to_list() == [1.5, 0.0, 0.5, 100.0, 1.0, -math.inf, 0.025]
    assert run["rank"].to_list() == [None, 7, None, None, 2, 3, 4]
    assert preferences.scan_trec_prefs(prefs_path, lenient=True).collect()["level"].to_list() == [2.0, 0.0]
    for scan, path in ((scan_trec_qrels, qrels_path), (scan_trec_run, run_path)):
        with pytest.raises(ValueError, match=r"line 1\).* is not"):
            scan(path).collect()  # strictly, each file's first line is malformed


@pytest.mark.parametrize(
    ("kind", "line", "words"),
    [
        ("qrels", "q 0 a 99999999999999999999x", "relevance field '99999999999999999999x' is an integer too large"),
        ("run", "q Q0 a 1 0x1p3 t", "score field '0x1p3' is a hexadecimal number"),
        ("run", "q Q0 a 1 -0X.8 t", "score field '-0X.8' is a hexadecimal number"),
        ("run", "q Q0 a", "expected at least 6 whitespace-separated fields, got 3"),
    ],
)
def test_lenient_readers_still_refuse_what_c_would_misread(tmp_path: Path, kind: str, line: str, words: str) -> None:
    path = tmp_path / "file.txt"
    path.write_text(f"q 0 z 1\n{line}\n" if kind == "qrels" else f"q Q0 z 1 0.5 t\n{line}\n")
    scan = scan_trec_qrels if kind == "qrels" else scan_trec_run
    with pytest.raises(ValueError, match=rf"line 2\): {re.escape(words)}"):
        scan(path, lenient=True).collect()


# --- -Z ------------------------------------------------------------------------------------------------------


def test_zscores_equal_trec_eval(trec_eval: TrecEval, tmp_path: Path) -> None:
    """Every branch of convert_zscores.c: a (query, measure) with a mean and stddev, with stddev 0 and the value
    equal to the mean or not, a measure the file lacks, a query the file lacks (every value -1000000); the
    summary accumulates the z-scores (the mean, the sum for counts, exp of the mean for gm_map).

    trec_eval's binary searches read one entry past the end of a query's entries (and of the file): a query
    missing from the file that sorts after all of its queries crashes it, and a measure missing from a query's
    entries that sorts after all of them is compared with the next query's first entry.  The file avoids both:
    the missing query "a0" sorts first, and each query ends with an entry "~", which sorts after every name."""
    run = {
        "q1": {"a": 1.0, "b": 0.5, "c": 0.25},
        "q2": {"a": 0.5, "d": 0.5, "e": 0.1},
        "a0": {"b": 1.0},
    }
    qrels = {"q1": {"a": 1, "c": 2, "x": 1}, "q2": {"d": 1, "e": 0}, "a0": {"b": 0, "y": 1}}
    qrels_path, run_path = write_trec(tmp_path, run, qrels)
    zscores = tmp_path / "zscores"
    entries = {
        "q1": ["map 0.3 0.2", "num_ret 2 1.5", "P_5 0.2 0", "recip_rank 1 0", "gm_map -3 2"],
        "q2": [
            "map 0.5 0.25",
            "num_rel_ret 1 0.5",
            "P_5 0.1 0.05",
            "ndcg_cut_10 0.4 0.3",
            "iprec_at_recall_0.50 0.6 0.2",
        ],
    }
    zscores.write_text("".join(f"{query} {entry}\n" for query, lines in entries.items() for entry in [*lines, "~ 0 1"]))
    for options in (["-q"], [], ["-q", "-c"], ["-q", "-n"]):
        arguments = [*options, "-Z", str(zscores), *EVERY_MEASURE]
        expected = trec_eval.run(arguments, qrels_path, run_path)
        assert our_trec_eval([*arguments, str(qrels_path), str(run_path)]) == expected
    assert "-1000000.0000" in expected


def test_a_malformed_zscores_line_is_a_data_error(tmp_path: Path) -> None:
    qrels_path, run_path = write_trec(tmp_path, {"q": {"d": 1.0}}, {"q": {"d": 1}})
    zscores = tmp_path / "zscores"
    zscores.write_text("q map 0.5 0.1\nq P_5 x 0.1\n")
    code, _, err = call_our_trec_eval(["-Z", str(zscores), str(qrels_path), str(run_path)])
    assert code == cli.EXIT_DATA_ERROR
    assert f"({zscores}, line 2)" in err


# --- the Python options --------------------------------------------------------------------------------------

# trec_eval's -m argument, the name it prints, the package's measure
PYTHON_MEASURES = [
    ("num_ret", "num_ret", "num_ret"),
    ("map", "map", "ap"),
    ("P.5", "P_5", "p@5"),
    ("recip_rank", "recip_rank", "rr"),
    ("ndcg", "ndcg", "ndcg"),
    ("bpref", "bpref", "bpref"),
    ("iprec_at_recall.0.5", "iprec_at_recall_0.50", "iprec@0.5"),
]


def trec_eval_values(output: str) -> dict[tuple[str, str], float]:
    values = {}
    for line in output.splitlines():
        name, query, value = line.split("\t")
        if query != "all":
            values[(name.strip(), query)] = float(value)
    return values


def python_values(run: Run, qrels: Qrels, **options: object) -> dict[tuple[str, str], float]:
    measures = [column for _, _, column in PYTHON_MEASURES]
    frame = (
        run_frame(run)
        .lazy()
        .rank_metrics.evaluate(measures, doc="doc", ties="doc", qrels=qrels_frame(qrels), **options)
    )
    values = {}
    for row in frame.collect(engine="streaming").iter_rows(named=True):
        for _, printed, column in PYTHON_MEASURES:
            values[(printed, row["query"])] = row[column]
    return values


def assert_python_equals_trec_eval(
    trec_eval: TrecEval, folder: Path, run: Run, qrels: Qrels, options: list[str], **python: object
) -> None:
    qrels_path, run_path = write_trec(folder, run, comparable(run, qrels))
    measures = [argument for name, _, _ in PYTHON_MEASURES for argument in ("-m", name)]
    theirs = trec_eval.call(["-q", *options, *measures], qrels_path, run_path)
    if refused(theirs.stderr):
        return
    assert theirs.returncode == 0, theirs.stderr
    expected = trec_eval_values(theirs.stdout)
    got = python_values(run, comparable(run, qrels), **python)
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        if math.isnan(value):  # trec_eval's 0 / 0: the iprec of a query -J left with nothing retrieved
            assert "-J" in options and got[("num_ret", key[1])] == 0 and got[key] == 0.0, (key, got[key])
        else:
            assert math.isclose(got[key], value, abs_tol=5e-5), (key, got[key], value)


@SETTINGS
@given(case=run_and_qrels(), limit=st.integers(1, 6))
def test_python_max_retrieved_equals_trec_eval_M(
    trec_eval: TrecEval, tmp_path: Path, case: tuple[Run, Qrels], limit: int
) -> None:
    run, qrels = case
    if run:
        assert_python_equals_trec_eval(trec_eval, tmp_path, run, qrels, [f"-M{limit}"], max_retrieved=limit)


@SETTINGS
@given(case=run_and_qrels(), limit=st.sampled_from([None, 3]))
def test_python_judged_only_equals_trec_eval_J(
    trec_eval: TrecEval, tmp_path: Path, case: tuple[Run, Qrels], limit: int | None
) -> None:
    run, qrels = case
    if run:
        options = ["-J", *([f"-M{limit}"] if limit else [])]
        assert_python_equals_trec_eval(trec_eval, tmp_path, run, qrels, options, judged_only=True, max_retrieved=limit)


def test_max_retrieved_keeps_the_first_documents_in_each_tie_order() -> None:
    """Two documents tie at the top: which one is kept follows `ties` (doc id descending, row order, reversed)."""
    frame = pl.DataFrame({"query": ["q"] * 3, "doc": ["a", "b", "c"], "relevance": [1, 0, 0], "score": [1.0, 1.0, 0.5]})
    kept = {
        ties: frame.rank_metrics.evaluate(["p@1"], doc="doc", ties=ties, max_retrieved=1)["p@1"].item()
        for ties in ("doc", "input", "reverse")
    }
    assert kept == {"doc": 0.0, "input": 1.0, "reverse": 0.0}


def test_max_retrieved_keeps_a_bad_score_for_its_error() -> None:
    frame = pl.DataFrame(
        {"query": ["q"] * 3, "doc": ["a", "b", "c"], "relevance": [1, 0, 0], "score": [1.0, 0.5, None]}
    )
    with pytest.raises(ValueError, match="score"):
        frame.rank_metrics.evaluate(["p@1"], doc="doc", ties="doc", max_retrieved=1)


def test_judged_only_keeps_a_duplicated_doc_for_its_error() -> None:
    run = pl.DataFrame({"query": ["q"] * 3, "doc": ["a", "x", "x"], "score": [1.0, 0.5, 0.25]})
    qrels = pl.DataFrame({"query": ["q"], "doc": ["a"], "relevance": [1]})
    with pytest.raises(ValueError, match="more than once"):
        run.rank_metrics.evaluate(["p@1"], doc="doc", ties="doc", qrels=qrels, judged_only=True)


def test_judged_only_keeps_a_query_left_empty_with_its_weight() -> None:
    run = pl.DataFrame({"query": ["q", "r"], "doc": ["a", "x"], "score": [1.0, 0.5], "w": [1.0, 3.0]})
    qrels = pl.DataFrame({"query": ["q", "r"], "doc": ["a", "y"], "relevance": [1, 1]})
    per_query = run.rank_metrics.evaluate(
        ["num_ret", "ap"], doc="doc", ties="doc", qrels=qrels, judged_only=True, weight="w"
    )
    assert per_query.rows() == [("q", 1.0, 1.0, 1.0), ("r", 0.0, 0.0, 3.0)]
    mean = run.rank_metrics.evaluate_mean(["ap"], doc="doc", ties="doc", qrels=qrels, judged_only=True, weight="w")
    assert mean["ap"].item() == pytest.approx(0.25)


@pytest.mark.parametrize(
    ("options", "error", "words"),
    [
        ({"max_retrieved": 0}, ValueError, "max_retrieved must be at least 1, got 0."),
        ({"max_retrieved": 2.0}, TypeError, "max_retrieved must be a positive int or None, got 2.0 (float)."),
        ({"max_retrieved": True}, TypeError, "max_retrieved must be a positive int or None, got True (bool)."),
        ({"max_retrieved": 5, "ties": "average"}, ValueError, "ties='average' fixes none"),
        ({"max_retrieved": 5, "ties": "optimistic"}, ValueError, "ties='optimistic' fixes none"),
        ({"judged_only": 1}, TypeError, "judged_only must be True or False, got 1."),
        ({"judged_only": True, "qrels": None}, ValueError, "judged_only=True removes"),
    ],
)
def test_bad_options_are_refused_when_called(options: dict[str, object], error: type[Exception], words: str) -> None:
    run = pl.DataFrame({"query": ["q"], "doc": ["a"], "score": [1.0], "relevance": [1]})
    qrels = pl.DataFrame({"query": ["q"], "doc": ["a"], "relevance": [1]})
    arguments: dict[str, object] = {"doc": "doc", "ties": "doc", "qrels": qrels, **options}
    with pytest.raises(error, match=words.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        run.lazy().rank_metrics.evaluate(["ap"], **arguments)  # type: ignore[arg-type]  # bad values on purpose
