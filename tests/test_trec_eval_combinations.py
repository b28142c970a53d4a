"""`lodestar-polars trec_eval` against the real trec_eval 10 binary where its options meet: one property draws
a run and judgments (`tests.cases.run_and_qrels`, some levels widened to 4-12) and a random combination of -q,
-c, -n, -l, -M, -J, -N and one or more -m measure specs with random parameters (cut-offs, recall levels, gain
pairs with zero and negative gains, set_F's beta, utility's coefficients, Rprec_mult's multipliers, relstring's
length, rbp's persistence), or all_trec whole; standard output must be the binary's, byte for byte, and both
must succeed or both fail.

-N is drawn from 0 up, below the number of documents too, or left out (trec_eval then takes 0): utility's count
of documents neither retrieved nor relevant then goes negative, in trec_eval as here.  11pt_avg's recall levels
come in any order, repeats included (trec_eval's walk over them, `cli._eleven_point_walk`).  The files' numbers
are sometimes spelled as trec_eval reads them with C's atol / atof (a relevance "2.5" or "2x" for 2, a score
"0.25x" or "+0.25", any rank field: `respell`); `tests/test_trec_eval_options.py` draws those spellings over
every measure.

Left out on purpose, each a documented refusal of the CLI where trec_eval prints a number: gains less than 1
apart of which one is positive (trec_eval's comparator orders them by chance), a level given two gains,
rbp's gain pairs (each has its own test below, as has rbp's reading of uninitialised memory: trec_eval's
rbp lines are compared as it prints them with rbp alone, `with_rbp_alone`); and queries judged only at negative
levels, at which trec_eval may stop (a test below), or crash even after another query ("free(): invalid
pointer", exit 134: a query "~neg" judged at -2 only after a query "q", both in the run, `-m all_trec`; found
by drawing such queries here)."""

from __future__ import annotations

import random
from pathlib import Path

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from lodestar_polars import cli
from tests.cases import Qrels, Run, run_and_qrels
from tests.helpers import call_ours
from tests.test_trec_eval_binary import write_trec
from tests.trec_eval_binary import TrecEval

PLAIN = [*(measure.name for measure in cli.TREC_MEASURES), "official"]
CUTOFF_MEASURES = ["P", "recall", "map_cut", "ndcg_cut", "relative_P", "success", "unj"]
GAIN_MEASURES = [measure.name for measure in cli.TREC_MEASURES if measure.gains]
# integers, or non-positive gains less than 1 apart from 0: never two gains less than 1 apart, one positive
GAINS = ["3", "2", "-1", "0", "1", "5", "9", "-3", "-0.5", "-1.5", "+4", "12"]
RECALL_LEVELS = [".0", ".1", ".25", "0.5", ".75", "1", "1.0", ".33"]


def _joined(values: list[str]) -> str:
    return ",".join(values)


def _cutoffs() -> st.SearchStrategy[str]:
    return st.lists(st.integers(1, 14), min_size=1, max_size=3, unique=True).map(lambda ks: _joined(map(str, ks)))


@st.composite
def _gain_pairs(draw: st.DrawFn) -> str:
    """Gain pairs, a level maybe spelled with a leading 0 or given twice (with the same gain: two gains for a
    level are refused, `test_a_level_given_two_gains_is_a_usage_error`)."""
    gains = draw(st.dictionaries(st.integers(0, 12), st.sampled_from(GAINS), min_size=1, max_size=4))
    twice = draw(st.lists(st.sampled_from(sorted(gains)), max_size=1))
    levels = draw(st.permutations([*gains, *twice]))
    spelled = [f"{'0' if draw(st.integers(0, 4)) == 0 else ''}{level}={gains[level]}" for level in levels]
    return _joined(spelled)


def _recall_levels(unique: bool) -> st.SearchStrategy[str]:
    """Recall levels in any order: iprec_at_recall's unique (trec_eval refuses a level given twice), 11pt_avg's
    maybe repeated (trec_eval's walk takes them in the order given, repeats included)."""
    if unique:
        return st.lists(st.sampled_from(RECALL_LEVELS), min_size=1, max_size=3, unique_by=float).map(_joined)
    return st.lists(st.sampled_from(RECALL_LEVELS), min_size=1, max_size=4).map(_joined)


MEASURE_SPECS = st.one_of(
    st.sampled_from(PLAIN),
    st.builds("{}.{}".format, st.sampled_from(CUTOFF_MEASURES), _cutoffs()),
    st.builds("{}.{}".format, st.sampled_from(GAIN_MEASURES), _gain_pairs()),
    st.builds("iprec_at_recall.{}".format, _recall_levels(unique=True)),
    st.builds("11pt_avg.{}".format, _recall_levels(unique=False)),
    st.builds("set_F.{}".format, st.sampled_from(["0", "0.5", "1", "2.5", "3"])),
    st.builds(
        "utility.{}".format,
        st.lists(st.sampled_from(["1", "-1", "0", "2", "0.5", "-3"]), min_size=4, max_size=4).map(_joined),
    ),
    st.builds(
        "Rprec_mult.{}".format,
        st.lists(st.sampled_from(["0.2", "0.5", "1", "1.5", "2", "3"]), min_size=1, max_size=3, unique=True).map(
            _joined
        ),
    ),
    st.builds("relstring.{}".format, st.integers(0, 15)),
    st.builds("{}.p={}".format, st.sampled_from(["rbp", "rbp_resid"]), st.sampled_from(["0.5", "0.8", "0.95", ".25"])),
)


@st.composite
def judged_cases(draw: st.DrawFn) -> tuple[Run, Qrels]:
    """`run_and_qrels` with some judged levels raised to 4-12 (relstring's '>' above 9, gain pairs for them)."""
    run, qrels = draw(run_and_qrels())
    for judged in qrels.values():
        for doc in judged:
            if draw(st.integers(0, 5)) == 0:
                judged[doc] = draw(st.sampled_from([4, 9, 10, 12]))
    return run, qrels


# trec_eval 10 crashes (a double free) when two of these are asked for and one has gain pairs: they share one
# parameter list (`tests/test_trec_eval_binary.py::test_dcg_ideal_dcg_and_ndcg_with_gain_pairs_each_take_their_own`)
SHARING_PARAMETERS = ("dcg", "ideal_dcg", "ndcg")


def _share_parameters(measures: list[str]) -> bool:
    names = ["ndcg" if spec == "all_trec" else spec.partition(".")[0] for spec in measures]
    sharing = [spec for spec, name in zip(measures, names, strict=True) if name in SHARING_PARAMETERS]
    return len({name for name in names if name in SHARING_PARAMETERS}) > 1 and any("." in spec for spec in sharing)


@st.composite
def trec_eval_arguments(draw: st.DrawFn) -> list[str]:
    """Options in a random order, then the -m specs (or -m all_trec)."""
    measures = ["all_trec"] if draw(st.integers(0, 5)) == 0 else draw(st.lists(MEASURE_SPECS, min_size=1, max_size=4))
    assume(not _share_parameters(measures))
    options: list[list[str]] = [[flag] for flag in ("-q", "-c", "-J", "-n") if draw(st.booleans())]
    if draw(st.booleans()):
        options.append(["-l", str(draw(st.integers(0, 4) | st.sampled_from([9, 10])))])
    if draw(st.booleans()):
        options.append(["-M", str(draw(st.integers(1, 12)))])
    # -N 0, as its absence, leaves utility's non-relevant documents not retrieved a negative count in trec_eval
    if draw(st.booleans()):
        options.append(["-N", str(draw(st.integers(0, 200)))])
    options = draw(st.permutations(options))
    return [*(argument for option in options for argument in option), *(f"-m{spec}" for spec in measures)]


NON_NUMERIC_TAILS = ["", "x", "abc", "e", "e+", ".", "_7", "%"]
RANK_FIELDS = ["0", "1", "-", "x", "1.5", "rank"]


def respell(qrels_path: Path, run_path: Path, seed: int) -> None:
    """Rewrite the files written by `write_trec` with each number spelled another way C's atol / atof read
    alike (the relevance "2.5", "2x" or "+2" for 2; the score with letters after it or a + sign; any text in
    the rank field, which trec_eval never reads); seed 0 leaves them as written."""
    if seed == 0:
        return
    chance = random.Random(seed)
    qrels_lines = []
    for line in qrels_path.read_text().splitlines():
        query, iteration, doc, level = line.split()
        spellings = [level, f"{level}.{chance.randrange(10)}", level + chance.choice(NON_NUMERIC_TAILS)]
        spellings += [f"+{level}"] if not level.startswith("-") else []
        spellings += ["x", ".9", "-0.5"] if level == "0" else []
        qrels_lines.append(f"{query} {iteration} {doc} {chance.choice(spellings)}\n")
    run_lines = []
    for line in run_path.read_text().splitlines():
        query, q0, doc, _, score, tag = line.split()
        spellings = [score, score + chance.choice(NON_NUMERIC_TAILS)] + ([f"+{score}"] if score[0] != "-" else [])
        run_lines.append(f"{query} {q0} {doc} {chance.choice(RANK_FIELDS)} {chance.choice(spellings)} {tag}\n")
    qrels_path.write_text("".join(qrels_lines))
    run_path.write_text("".join(run_lines))


def ours_or_usage_error(arguments: list[str], qrels: Path, run: Path) -> tuple[int, str, str]:
    try:
        return call_ours(arguments, qrels, run)
    except SystemExit as stopped:  # argparse's usage errors
        return int(stopped.code or 0), "", ""


def written(folder: Path, run: Run, qrels: Qrels, arguments: list[str]) -> tuple[Path, Path]:
    """The TREC files of a case.  trec_eval 10 stops (exit 4) at a judged query missing from the run without -c,
    where the CLI skips it (as trec_eval 9 and pytrec_eval do): without -c the files hold the judgments of the
    run's queries only."""
    if "-c" not in arguments:
        qrels = {query: judged for query, judged in qrels.items() if query in run}
    return write_trec(folder, run, qrels)


def assert_same_as_trec_eval(
    trec_eval: TrecEval, folder: Path, run: Run, qrels: Qrels, arguments: list[str], spelling: int = 0
) -> None:
    qrels_path, run_path = written(folder, run, qrels, arguments)
    respell(qrels_path, run_path, spelling)
    theirs = trec_eval.call(arguments, qrels_path, run_path)
    code, out, err = ours_or_usage_error(arguments, qrels_path, run_path)
    if theirs.returncode != 0:  # no judged query in the run: trec_eval stops, and so does the CLI
        assert code != 0, (theirs.stderr, out)
        return
    assert code == 0, err
    assert out == with_rbp_alone(trec_eval, theirs.stdout, arguments, qrels_path, run_path)


def _is_rbp_line(line: str) -> bool:
    return line.split("\t")[0].strip().partition("_p=")[0] == "rbp"


def with_rbp_alone(trec_eval: TrecEval, output: str, arguments: list[str], qrels: Path, run: Path) -> str:
    """trec_eval's output with its rbp lines as trec_eval prints them when rbp is its only measure.

    m_rbp.c brings the gains into [0, 1] with `min` and `max` it never initialises: they start with what the
    measure computed just before left on the stack, and a greater gain left there divides rbp's gains by it
    (`-m ndcg.1=12 -m rbp` divides them by 12; `test_trec_eval_rbp_reads_the_gains_a_measure_before_it_left`).
    The CLI computes rbp from the query's own gains, as trec_eval does when nothing before it leaves a greater
    one."""
    options = [argument for argument in arguments if not argument.startswith("-m")]
    rbp = [argument for argument in arguments if argument.startswith("-mrbp") and not argument.startswith("-mrbp_")]
    if "-mall_trec" in arguments and "-mrbp" not in rbp:
        rbp.append("-mrbp")
    if not rbp or len(rbp) == sum(argument.startswith("-m") for argument in arguments):
        return output
    alone = iter(line for line in trec_eval.run([*options, *rbp], qrels, run).splitlines(True) if _is_rbp_line(line))
    lines = [next(alone) if _is_rbp_line(line) else line for line in output.splitlines(True)]
    assert next(alone, None) is None
    return "".join(lines)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=judged_cases(), arguments=trec_eval_arguments(), spelling=st.integers(0, 3) | st.integers(0, 2**32))
# trec_eval's rbp after ndcg.1=12 divides the gain by the 12 ndcg left in rbp's uninitialised `max`
@example(
    case=({"Q2": {"a": 3.0, "b": 2.0, "D1": 0.0}}, {"Q2": {"D1": 1}}),
    arguments=["-q", "-mndcg.1=12", "-mrbp"],
    spelling=0,
)
def test_option_combinations_equal_trec_eval(
    trec_eval: TrecEval, tmp_path: Path, case: tuple[Run, Qrels], arguments: list[str], spelling: int
) -> None:
    run, qrels = case
    if run:  # trec_eval refuses an empty run file
        assert_same_as_trec_eval(trec_eval, tmp_path, run, qrels, arguments, spelling)


def test_trec_eval_rbp_reads_the_gains_a_measure_before_it_left(trec_eval: TrecEval, tmp_path: Path) -> None:
    """q retrieves d2 (level 2) first and d1 (level 1) third: rbp brings the gains into [0, 1] by the greatest,
    2, and is 0.1 x (2 / 2 + 0.9^2 x 1 / 2) = 0.1405, as trec_eval prints with rbp alone.  After
    `-m ndcg.1=12`, trec_eval's rbp starts its uninitialised `min` and `max` from what ndcg left on the stack
    (0.0212 in one gcc build; undefined behaviour, so not asserted); the CLI prints 0.1405 either way, with
    rbp's own linear gains (not ndcg's 1=12: 0.0977)."""
    run: Run = {"q": {"d2": 4.0, "b": 3.0, "d1": 2.0}}
    qrels_path, run_path = write_trec(tmp_path, run, {"q": {"d1": 1, "d2": 2}})
    rbp = "rbp                   \t{}\t0.1405\n"
    assert trec_eval.run(["-q", "-mrbp"], qrels_path, run_path) == rbp.format("q") + rbp.format("all")
    ndcg = "ndcg_1=12             \t{}\t0.6032\n"  # (2 + 12 / log2(4)) / (12 + 2 / log2(3))
    after_ndcg = trec_eval.run(["-q", "-mndcg.1=12", "-mrbp"], qrels_path, run_path)
    assert after_ndcg.startswith(ndcg.format("q"))
    # what trec_eval prints for rbp after ndcg is undefined (0.0212 in the gcc build where this was found), so
    # it is not asserted: the oracle of rbp is trec_eval with rbp alone
    code, out, err = call_ours(["-q", "-mndcg.1=12", "-mrbp"], qrels_path, run_path)
    assert code == 0, err
    assert out == ndcg.format("q") + rbp.format("q") + ndcg.format("all") + rbp.format("all")


def test_a_level_given_two_gains_is_a_usage_error(trec_eval: TrecEval, tmp_path: Path) -> None:
    """q retrieves d1 (level 1), d10, d2 (level 2); x (level 1) is not retrieved.  trec_eval keeps both pairs of
    `G.1=5,1=3`: the run's d1 gains 3 (the lesser, first in its table sorted by gain) and the ideal list's two
    level-1 documents 5 (the first pair typed), so it prints 0.1776, neither `G.1=3` nor `G.1=5`.  The CLI took
    the last pair and printed 0.4827 (`G.1=3`); it refuses such pairs, naming the level and its two gains."""
    run: Run = {"q": {"d1": 2.0, "d10": 1.0, "d2": 0.0}}
    qrels: Qrels = {"q": {"d1": 1, "d2": 2, "x": 1}}
    qrels_path, run_path = write_trec(tmp_path, run, qrels)
    printed = {gains: trec_eval.run([f"-mG.{gains}"], qrels_path, run_path) for gains in ("1=5,1=3", "1=3", "1=5")}
    assert printed["1=5,1=3"] == "G_1=5,1=3             \tall\t0.1776\n"
    assert printed["1=3"].endswith("\t0.4827\n")
    assert printed["1=5"].endswith("\t0.4760\n")
    for measure in ("G.1=5,1=3", "ndcg.1=3,01=5", "Rndcg.2=0,2=3"):
        code, out, err = ours_or_usage_error(["-q", f"-m{measure}"], qrels_path, run_path)
        assert (code, out) == (cli.EXIT_USAGE_ERROR, ""), measure
        assert f"measure '{measure}': level " in err
        assert "is given two gains" in err
    assert ours_or_usage_error(["-mG.1=3,01=3"], qrels_path, run_path)[1] == "G_1=3,01=3            \tall\t0.4827\n"


def test_a_query_judged_only_at_negative_levels_stops_trec_eval_when_it_comes_first(
    trec_eval: TrecEval, tmp_path: Path
) -> None:
    """A query whose judgments are all negative has no level >= 0: form_res_rels.c asks for room for 0 levels,
    which te_chk_and_malloc answers with the buffer of an earlier query, or NULL when no query came before it;
    trec_eval then stops ("Can't calculate measure", exit 4).  So it prints the query after another ("z", after
    "q"), and stops at it first ("a").  The CLI prints the query wherever it comes: the lines trec_eval prints
    for "z" (no relevant document, every measure 0 but the counts and relstring), and the same for "a"."""
    for first in ("z", "a"):
        run: Run = {first: {"d1": 2.0, "d2": 1.0}, "q": {"d1": 2.0, "d3": 1.0}}
        qrels: Qrels = {first: {"d1": -1, "d9": -1}, "q": {"d1": 1, "d2": 0}}
        qrels_path, run_path = write_trec(tmp_path, run, qrels)
        arguments = ["-q", "-c", "-mall_trec"]
        theirs = trec_eval.call(arguments, qrels_path, run_path)
        code, out, err = call_ours(arguments, qrels_path, run_path)
        assert code == 0, err
        if first == "z":
            assert theirs.returncode == 0, theirs.stderr
            assert out == theirs.stdout
            z_lines = [line.replace("\tz\t", "\t{}\t") for line in out.splitlines(True) if "\tz\t" in line]
        else:
            assert (theirs.returncode, theirs.stdout) == (4, "")  # trec_eval's own stop
            assert "Can't calculate measure" in theirs.stderr
            assert [line.replace("\ta\t", "\t{}\t") for line in out.splitlines(True) if "\ta\t" in line] == z_lines


# a z-score file's means and standard deviations (0: trec_eval's branch for a constant measure)
Z_MEANS = st.sampled_from(["0", "0.25", "-0.5", "1", "3.5", "0.1234"])
Z_STDDEVS = st.sampled_from(["0", "0.5", "0.25", "1.5", "2"])


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=judged_cases(), arguments=trec_eval_arguments(), data=st.data())
def test_zscores_with_option_combinations_equal_trec_eval(
    trec_eval: TrecEval, tmp_path: Path, case: tuple[Run, Qrels], arguments: list[str], data: st.DataObject
) -> None:
    """-Z over the same random option combinations: the z-score file gives each query a random subset of the
    measure names trec_eval prints for these arguments (read from the binary's own -q output), with means and
    standard deviations including 0.  Every query of the run and the judgments is in the file, and each query's
    entries end with "~", which sorts after every name: trec_eval's binary searches read past the end of a
    query's entries otherwise (`test_zscores_equal_trec_eval`)."""
    run, qrels = case
    if not run:
        return
    qrels_path, run_path = written(tmp_path, run, qrels, arguments)
    listed = trec_eval.call(["-q", *arguments], qrels_path, run_path)
    if listed.returncode != 0:
        return  # no judged query in the run: test_option_combinations_equal_trec_eval compares the refusal
    names = sorted({line.split("\t")[0].strip() for line in listed.stdout.splitlines()} - {"runid", "relstring"})
    zscores = tmp_path / "zscores"
    lines = []
    for query in sorted({*run, *qrels}):
        for name in data.draw(
            st.lists(st.sampled_from(names), unique=True, max_size=len(names)) if names else st.just([])
        ):
            lines.append(f"{query} {name} {data.draw(Z_MEANS)} {data.draw(Z_STDDEVS)}\n")
        lines.append(f"{query} ~ 0 1\n")
    zscores.write_text("".join(lines))
    with_zscores = ["-Z", str(zscores), *arguments]
    theirs = trec_eval.call(with_zscores, qrels_path, run_path)
    code, out, err = ours_or_usage_error(with_zscores, qrels_path, run_path)
    assert theirs.returncode == 0, theirs.stderr
    assert code == 0, err
    assert out == with_rbp_alone(trec_eval, theirs.stdout, with_zscores, qrels_path, run_path)
