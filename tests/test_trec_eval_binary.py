"""`lodestar-polars trec_eval` against the real trec_eval 10 binary (built from its source by the `trec_eval`
fixture), byte for byte: each measure of the CLI's trec_eval table on random runs with tied scores, graded
judgments with negative levels, judged queries missing from the run and run queries without judgments, with
and without -q and -c.  A measure added to the CLI's table is compared here without a change to this file."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lodestar_polars import cli
from tests.cases import Qrels, Run, run_and_qrels
from tests.helpers import call_ours, ours
from tests.trec_eval_binary import TrecEval

COMPUTED = [measure.name for measure in cli.TREC_MEASURES if measure.name not in ("runid",)]


def write_trec(folder: Path, run: Run, qrels: Qrels) -> tuple[Path, Path]:
    """The run and judgments as TREC files (rank 0 for every line: trec_eval orders by score, then docno)."""
    run_path, qrels_path = folder / "run.txt", folder / "qrels.txt"
    run_path.write_text(
        "".join(f"{q} Q0 {d} 0 {s!r} tag\n" for q, docs in run.items() for d, s in docs.items()), encoding="ascii"
    )
    qrels_path.write_text(
        "".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items()), encoding="ascii"
    )
    return qrels_path, run_path


@pytest.mark.parametrize("measure", COMPUTED)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=run_and_qrels(), flags=st.sampled_from([["-q"], ["-q", "-c"], []]))
def test_each_measure_equals_trec_eval(
    trec_eval: TrecEval, tmp_path: Path, measure: str, case: tuple[Run, Qrels], flags: list[str]
) -> None:
    run, qrels = case
    if not run:
        return  # trec_eval refuses an empty run file
    arguments = [*flags, "-m", measure]
    qrels_path, run_path = write_trec(tmp_path, run, qrels)
    code, out, err = call_ours(arguments, qrels_path, run_path)
    if "-c" not in flags:
        # trec_eval 10 stops (exit 4, "result qid ... not found") at a judged query missing from the run, where
        # trec_eval 9 and pytrec_eval skip it, as the CLI does: the oracle is the binary on the other queries
        qrels = {query: judged for query, judged in qrels.items() if query in run}
        qrels_path, run_path = write_trec(tmp_path, run, qrels)
    theirs = trec_eval.call(arguments, qrels_path, run_path)
    if theirs.returncode != 0:  # no judged query in the run: trec_eval stops
        assert code != 0, (theirs.stderr, out)
        return
    assert code == 0, err
    assert out == theirs.stdout


def test_quicktest_official_equals_trec_eval(trec_eval: TrecEval, shared_data: Path) -> None:
    """The binary built here reproduces trec_eval's own expected file, and so does the CLI."""
    folder = shared_data / "trec_eval"
    expected = (folder / "out.test").read_text()
    assert trec_eval.run([], folder / "qrels.test", folder / "results.test") == expected
    assert ours([], folder / "qrels.test", folder / "results.test") == expected


def test_summary_is_added_in_trec_eval_order(trec_eval: TrecEval, tmp_path: Path) -> None:
    """P_200's mean over four queries, 0.00875, lies on a rounding boundary of %6.4f: trec_eval adds the
    per-query values one by one in query order and prints 0.0088; a tree-shaped sum printed 0.0087."""
    run: Run = {"Q1": {"D1": 0.0}, "Q2": {"D1": 0.0}, "Q3": dict.fromkeys(("D1", "D10", "D2", "D9"), 0.0)}
    run["Q4"] = {"D1": 0.0, "D10": 0.0}
    qrels: Qrels = {"Q1": {"D1": 0}, "Q2": {"D1": 1, "D10": 0}, "Q3": dict.fromkeys(("D1", "D10", "D2", "D9"), 1)}
    qrels["Q4"] = {"D1": 1, "D10": 1}
    qrels_path, run_path = write_trec(tmp_path, run, qrels)
    expected = trec_eval.run(["-m", "P.200"], qrels_path, run_path)
    assert expected == "P_200                 \tall\t0.0088\n"
    assert ours(["-m", "P.200"], qrels_path, run_path) == expected


# parameters that are not the defaults: set_F's beta, utility's coefficients with -N (and trec_eval -c's stand-in
# list for a missing query, which keeps b + c R + d (N - 1 - R) when coefficients are given), cut-offs
PARAMETERS = [
    ["-m", "set_F.0.5"],
    ["-m", "set_F.2.5,7"],
    ["-m", "utility.2,-1,0.5,0"],
    ["-m", "utility.1,-1,-2,0.25", "-N", "40"],
    ["-m", "utility", "-N", "40"],
    # d != 0 without -N or with -N 0: trec_eval counts N = 0 (a negative count of documents not retrieved)
    ["-m", "utility.1,-1,0,1"],
    ["-m", "utility.0.5,-2,1,-0.25", "-N", "0"],
    ["-m", "unj.1,3,7,1000"],
    ["-m", "relative_P.1,2,4,1000"],
    # gains of 0: Rndcg is 0 / 0 (-nan) for a query with relevant documents none of which has a positive gain
    ["-m", "Rndcg.1=0,2=0", "-m", "ndcg.1=0", "-m", "G.0=2,3=0", "-m", "ndcg_rel.1=0,2=0,3=0", "-m", "P.5"],
    ["-m", "Rndcg.0=5,1=0,2=0,3=0", "-m", "ndcg.2=0,3=0", "-m", "ndcg_cut.5"],
    # negative gains (trec_eval: "Gains are allowed to be 0 or negative"): the DCG sums them where retrieved, the
    # ideal stops at the first gain <= 0; ndcg_rel floors a negative sum at 0, Rndcg and G do not
    ["-m", "ndcg.1=3,2=-1", "-m", "G.1=3,2=-1", "-m", "ndcg_rel.1=3,2=-1", "-m", "Rndcg.1=3,2=-1"],
    ["-m", "ndcg.0=-2,3=-4", "-m", "G.0=-2,3=-4", "-m", "ndcg_rel.0=-2,3=-4", "-m", "Rndcg.0=-2,3=-4"],
    ["-m", "ndcg.0=-1,1=-3,2=-2,3=-1.5", "-m", "G.0=-1,1=-3,2=-2,3=-1.5", "-m", "Rndcg.0=-1,1=-3,2=-2,3=-1.5"],
    ["-m", "ndcg_rel.0=-1,1=-3,2=-2,3=-1.5", "-m", "P.5"],
    # gains <= 0 less than 1 apart (trec_eval's comparator calls them equal): they end the ideal list either way
    ["-m", "ndcg.0=-0.5,1=0,3=7", "-m", "G.0=-0.5,1=0,3=7", "-m", "ndcg_rel.1=-0.25", "-m", "Rndcg.0=-0.5,1=0"],
    ["-m", "ndcg.0=+2,1=-7,2=4.5", "-m", "Rndcg.0=2,1=-7,2=4.5", "-m", "G.0=2,1=-7.,2=4.5", "-m", "ndcg_cut.3"],
    # trec_eval 10's measures outside all_trec; dcg reads no ideal order, so any gains (less than 1 apart too);
    # one of dcg, ideal_dcg and ndcg at a time when one has gain pairs (`test_dcg_ideal_dcg_and_ndcg_...` below)
    ["-m", "dcg.1=3,2=-1", "-m", "yaap", "-m", "G.1=3,2=-1", "-m", "Rndcg.1=3,2=-1"],
    ["-m", "ideal_dcg.0=2,3=7", "-m", "ndcg_rel.0=2,3=7"],
    ["-m", "dcg.0=0.3,1=0.6,2=-0.2", "-m", "P.5"],
]


@pytest.mark.parametrize("arguments", PARAMETERS, ids=[" ".join(a) for a in PARAMETERS])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=run_and_qrels(), flags=st.sampled_from([["-q"], ["-q", "-c"]]))
def test_measure_parameters_equal_trec_eval(
    trec_eval: TrecEval, tmp_path: Path, arguments: list[str], case: tuple[Run, Qrels], flags: list[str]
) -> None:
    run, qrels = case
    if not run:
        return
    if "-c" not in flags:
        qrels = {query: judged for query, judged in qrels.items() if query in run}
    qrels_path, run_path = write_trec(tmp_path, run, qrels)
    theirs = trec_eval.call([*flags, *arguments], qrels_path, run_path)
    code, out, err = call_ours([*flags, *arguments], qrels_path, run_path)
    if theirs.returncode != 0:
        assert code != 0, (theirs.stderr, out)
        return
    assert code == 0, err
    assert signless_zeros(out) == signless_zeros(theirs.stdout)


def signless_zeros(output: str) -> str:
    """trec_eval's output with `-0.0000` printed as `0.0000`.  With negative gains a sum can cancel to zero in
    exact arithmetic (G.0=2,1=-7,2=4.5: -7 / log2(13.5) + 3 / log2(...) + ... = 0); both tools then print a
    value within a few units of 1e-16 of zero, whose sign depends on how each rounds its terms (trec_eval divides
    by log2, the package multiplies by ln 2 / ln), so trec_eval may print `-0.0000` where the package prints
    `0.0000` (docs/trec-eval.md).  Every other character is compared as printed."""
    return output.replace("\t-0.0000\n", "\t0.0000\n")


@pytest.mark.parametrize("flags", [[], ["-N", "0"], ["-c"]])
def test_utility_weighing_documents_not_retrieved_without_the_collection(
    trec_eval: TrecEval, tmp_path: Path, flags: list[str]
) -> None:
    """Without -N (or with -N 0) trec_eval counts the non-relevant documents not retrieved as 0 + h - n - R, a
    negative number, and prints that utility; so does the CLI.  q: n = 3, h = 1, R = 2 (d2 judged, not
    retrieved): utility.1,-1,0,2 = 1 - 2 + 0 + 2 x (1 - 3 - 2) = -9, by hand; with -c, q2 (judged, not in the
    run) is trec_eval's stand-in list of one unjudged document: -1 + 2 x (0 - 1 - 1) = -5."""
    run: Run = {"q": {"d1": 3.0, "d3": 2.0, "d4": 1.0}}
    qrels: Qrels = {"q": {"d1": 1, "d2": 1, "d3": 0}}
    if "-c" in flags:
        qrels["q2"] = {"d9": 1}
    qrels_path, run_path = write_trec(tmp_path, run, qrels)
    arguments = ["-q", *flags, "-m", "utility.1,-1,0,2"]
    expected = trec_eval.run(arguments, qrels_path, run_path)
    assert ours(arguments, qrels_path, run_path) == expected
    assert expected.splitlines()[0] == "utility_1,-1,0,2      \tq\t-9.0000"
    if "-c" in flags:
        assert expected.splitlines()[1] == "utility_1,-1,0,2      \tq2\t-5.0000"


def test_eleven_point_average_with_levels_out_of_order(trec_eval: TrecEval, tmp_path: Path) -> None:
    """q: relevant at positions 1, 3, 4, 6 (R = 4, h = 4); precision there 1, 2/3, 3/4, 4/6, interpolated
    (the greatest at or below): 1, 3/4, 3/4, 2/3.  11pt_avg.0.5,0.25: trec_eval walks up from the last level,
    0.25 (c = 1: met, iprec 1), then 0.5 (c = 2, above the count 1 where it met the last level: not met, so it
    adds the interpolated precision at the first relevant document, 1): (1 + 1) / 2 = 1, by hand, where the
    ascending order gives (3/4 + 1) / 2 = 0.875."""
    run: Run = {"q": {f"d{i}": float(10 - i) for i in range(1, 7)}}
    qrels: Qrels = {"q": {"d1": 1, "d2": 0, "d3": 1, "d4": 1, "d5": 0, "d6": 1}}
    qrels_path, run_path = write_trec(tmp_path, run, qrels)
    for levels, value in ((".5,.25", "1.0000"), (".25,.5", "0.8750")):
        arguments = ["-q", "-m", f"11pt_avg.{levels}"]
        expected = trec_eval.run(arguments, qrels_path, run_path)
        assert expected.splitlines()[0].split("\t")[-1] == value
        assert ours(arguments, qrels_path, run_path) == expected


@pytest.mark.parametrize(
    "measures", [["dcg.1=3", "ndcg"], ["dcg.2=5", "ndcg.1=3"], ["ideal_dcg.0=2,3=7", "ndcg.1=3,2=-1", "dcg"]]
)
def test_dcg_ideal_dcg_and_ndcg_with_gain_pairs_each_take_their_own(
    trec_eval: TrecEval, tmp_path: Path, measures: list[str]
) -> None:
    """trec_eval 10's dcg, ideal_dcg and ndcg share one parameter list (m_ndcg.c: `&default_ndcg_gains` for all
    three): asked for together, one of them with gain pairs, it crashes ("double free", exit 134) or prints
    nothing.  The CLI computes each with its own parameters: the lines trec_eval prints for each alone, in its
    order (dcg, ideal_dcg, ndcg)."""
    run: Run = {"q1": {"d1": 3.0, "d9": 2.0, "d3": 1.0, "d4": 0.5}, "q2": {"d7": 3.0, "d1": 2.0}}
    qrels: Qrels = {"q1": {"d1": 1, "d2": 2, "d3": 3, "d4": 0}, "q2": {"d1": 1, "d4": 0, "d7": 2}}
    qrels_path, run_path = write_trec(tmp_path, run, qrels)
    together = [argument for measure in measures for argument in ("-m", measure)]
    assert trec_eval.call(together, qrels_path, run_path).returncode != 0
    order = ["dcg", "ideal_dcg", "ndcg"]
    alone = [
        trec_eval.run(["-m", measure], qrels_path, run_path)
        for measure in sorted(measures, key=lambda measure: order.index(measure.partition(".")[0]))
    ]
    assert ours(together, qrels_path, run_path) == "".join(alone)


def test_rndcg_with_gain_pairs_is_nan_without_a_positive_gain(trec_eval: TrecEval, tmp_path: Path) -> None:
    """Under Rndcg.1=0, q2's one relevant document (level 1) has gain 0 and its other judgment is at level 0:
    its ideal DCG never rises above 0, no R-level point is averaged, and trec_eval prints 0 / 0 as -nan (and
    so the mean).  q1 and q3 keep their level-2 document (gain 2): a number."""
    run: Run = {"q1": {"d1": 3.0, "d9": 2.0, "d3": 1.0}, "q2": {"d7": 3.0, "d1": 2.0}, "q3": {"d6": 3.0, "d5": 2.0}}
    qrels: Qrels = {"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"d1": 1, "d4": 0}, "q3": {"d5": 2, "d6": 1}}
    qrels_path, run_path = write_trec(tmp_path, run, qrels)
    expected = trec_eval.run(["-q", "-m", "Rndcg.1=0"], qrels_path, run_path)
    got = ours(["-q", "-m", "Rndcg.1=0"], qrels_path, run_path)
    assert got == expected
    assert got.splitlines()[1] == "Rndcg_1=0             \tq2\t  -nan"
    assert got.splitlines()[3] == "Rndcg_1=0             \tall\t  -nan"


@pytest.mark.parametrize(
    ("measure", "words"),
    [
        ("ndcg.1=0.5", "gains 0 (level 0) and 0.5 (level 1) are less than 1 apart"),
        ("G.1=2.5", "gains 2 (level 2) and 2.5 (level 1) are less than 1 apart"),
        ("Rndcg.2=1.5", "gains 1 (level 1) and 1.5 (level 2) are less than 1 apart"),
        ("Rndcg.0=-0.5,1=0.4", "gains -0.5 (level 0) and 0.4 (level 1) are less than 1 apart"),
    ],
)
def test_gain_pairs_trec_eval_orders_by_chance_are_usage_errors(
    trec_eval: TrecEval, tmp_path: Path, measure: str, words: str
) -> None:
    """trec_eval sorts the gain table with a comparator returning their difference cast to an integer: gains
    less than 1 apart compare equal and keep the C library's order.  With ndcg.1=2.5, q3 (d6 at level 1 first,
    then d5 at level 2) has DCG 2.5 + 2 / log2(3) = 3.7619 and ideal DCG the same (2.5 then 2), ndcg 1; trec_eval
    keeps level 2's gain first in its table and prints 3.7619 / (2 + 2.5 / log2(3)) = 1.0516, above 1.  The CLI
    refuses such gains (exit 2) naming them, rather than printing another number; a negative gain less than 1
    below a positive one too (tests/test_negative_gains.py shows trec_eval's two numbers for one such set)."""
    run: Run = {"q3": {"d6": 3.0, "d5": 2.0}}
    qrels: Qrels = {"q3": {"d5": 2, "d6": 1}}
    qrels_path, run_path = write_trec(tmp_path, run, qrels)
    assert trec_eval.run(["-q", "-m", "ndcg.1=2.5"], qrels_path, run_path).splitlines()[0].endswith("\t1.0516")
    code, out, err = call_ours(["-m", measure], qrels_path, run_path)
    assert (code, out) == (cli.EXIT_USAGE_ERROR, "")
    assert words in err


@pytest.mark.parametrize(
    "arguments",
    [
        ["-m", "P", "-m", "P.5"],
        ["-m", "P.5", "-m", "P.7"],
        ["-m", "official", "-m", "P.3"],
        ["-q", "-m", "all_trec", "-m", "relstring.20"],
    ],
)
def test_a_measure_takes_its_first_explicit_parameters(
    trec_eval: TrecEval, shared_data: Path, arguments: list[str]
) -> None:
    """trec_eval reads a measure's parameters from the first `-m name.parameters`, even when a nickname or a
    plain `-m name` requested it earlier (the CLI kept the first request's defaults: relstring printed 10
    documents where QUICKTEST's `-m all_trec -mrelstring.20` prints 20)."""
    folder = shared_data / "trec_eval"
    qrels, run = folder / "qrels.test", folder / "results.test"
    expected = trec_eval.run(arguments, qrels, run)
    lines = set(ours(arguments, qrels, run).splitlines())
    computed = [line for line in expected.splitlines() if line.split()[0] in {line.split()[0] for line in lines}]
    assert computed, expected
    assert lines == set(computed)


def test_unj_at_a_rounding_boundary_equals_trec_eval(trec_eval: TrecEval, tmp_path: Path) -> None:
    """unj_20 of a query with 3 unjudged documents in its top 20 is trec_eval's 3.0 / 20 = 0.15; Polars 2.1
    divides a column by the constant 20 as a product with 1 / 20 (0.15000000000000002), and the mean over eight
    queries, seven of them 0, then printed 0.0188 where the binary prints 0.0187."""
    run = {f"q{k}": {f"d{i}": float(10 - i) for i in range(5)} for k in range(1, 9)}
    # q1-q7 judge every retrieved document; q8 leaves d0-d2 unjudged
    qrels: Qrels = {f"q{k}": {f"d{i}": 0 for i in range(5)} for k in range(1, 8)}
    qrels["q8"] = {"d3": 1, "d4": 0}
    qrels_path, run_path = write_trec(tmp_path, run, qrels)
    expected = trec_eval.run(["-m", "unj.20"], qrels_path, run_path)
    assert expected == "unj_20                \tall\t0.0187\n"
    assert ours(["-m", "unj.20"], qrels_path, run_path) == expected
