"""Negative gains in a gain mapping (trec_eval's `-m ndcg.1=3,2=-1`: "Gains are allowed to be 0 or negative"):
hand-derived values of ndcg, dcg, g, ndcg_rel and rndcg with and without judgments, the tie bounds against every
order of the tied rows, `lodestar_polars.exprs` against the namespace, what stays refused (rbp's negative gains,
ndcg_rel's tie bounds with a negative gain retrieved, ndcg's negative labels as scikit-learn's ndcg_score), and
the CLI against the real trec_eval binary on hand-made cases (tests/test_trec_eval_binary.py compares random
runs with negative gain pairs byte for byte).

trec_eval's semantics (m_ndcg.c, m_G.c, m_ndcg_rel.c, m_Rndcg.c): the run's DCG sums every gain where it is
retrieved, negative ones included; the ideal walks the gains from the greatest down and stops at the first gain
<= 0, so it takes the positive gains only."""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from sklearn.metrics import dcg_score as sk_dcg_score
from sklearn.metrics import ndcg_score as sk_ndcg_score

import lodestar_polars  # noqa: F401  (registers .rank_metrics)
from lodestar_polars import cli, exprs
from lodestar_polars import sklearn as lp_sklearn
from tests.helpers import call_ours
from tests.trec_eval_binary import TrecEval

LOG2_3 = math.log2(3.0)
GAIN = {0: 0.0, 1: -1.0, 2: 3.0}


def ranked(labels: list[int], query: str = "q") -> pl.DataFrame:
    """One query's rows ranked as listed (scores descending, no ties), docs d0, d1, ..."""
    n = len(labels)
    return pl.DataFrame(
        {"query": [query] * n, "doc": [f"d{i}" for i in range(n)], "score": [float(n - i) for i in range(n)]}
    ).with_columns(relevance=pl.Series(labels, dtype=pl.Int64))


def values(frame: pl.DataFrame, measures: list[str], **options: Any) -> dict[str, list[float | None]]:
    """Each measure's per-query values, eager and on both lazy engines (which must agree)."""
    options = {"doc": "doc", "ties": "doc", **options}
    eager = frame.rank_metrics.evaluate(measures, **options)
    for engine in ("in-memory", "streaming"):
        lazy_options = {k: v.lazy() if isinstance(v, pl.DataFrame) else v for k, v in options.items()}
        lazy = frame.lazy().rank_metrics.evaluate(measures, **lazy_options).collect(engine=engine).sort("query")
        for m in measures:
            assert lazy[m].to_list() == pytest.approx(eager.sort("query")[m].to_list(), rel=1e-15), (engine, m)
    return {m: eager.sort("query")[m].to_list() for m in measures}


MEASURES = ["ndcg", "ndcg@1", "dcg", "g", "ndcg_rel", "rndcg"]


def test_a_negative_gain_counts_in_the_dcg_and_not_in_the_ideal() -> None:
    """Gains 0 -> 0, 1 -> -1, 2 -> 3; query a ranks labels 1, 2, 0 (gains -1, 3, 0), b ranks 1, 1, 2 (gains -1, -1,
    3), c ranks 1, 0 (gains -1, 0).  The ideal takes the positive gains only: [3], ideal DCG 3 at every position
    (the whole gains sorted, [3, 0, -1], would give 3 - 1/2 = 2.5).

    - a: DCG = -1 + 3 / log2(3); ndcg = DCG / 3; ndcg@1 = -1 / 3.  G: costs C = 3, 4, 5 (max(ideal gain, 1)
      summed), gains above S = -1, 2, 2: G = (-1 / log2(2 + 3 + 1) + 3 / log2(2 + 4 - 2)) / 3.  ndcg_rel: P = 1,
      its row at position 2: DCG(1..2) / 3.  Rndcg (R = 2 labels above 0): the R level ends at ideal position 1
      (-1 / 3), and 3 rows >= P + 2 adds the implied level at the end (DCG / 3): their mean.
    - b: DCG = -1 - 1 / log2(3) + 3 / 2 < 0; ndcg = DCG / 3.  G: C = 3, 4, 5, S = -1, -2, 1:
      (-1 / log2(6) - 1 / log2(8) + 3 / log2(6)) / 3.  ndcg_rel: its one share DCG / 3 is negative, and trec_eval
      scores a sum that is not positive 0.  Rndcg: (-1 / 3 + DCG / 3) / 2.
    - c: no positive gain: ideal DCG 0, so ndcg, G, ndcg_rel and Rndcg take no_relevant (0.5 here); DCG = -1.
    """
    frame = pl.concat([ranked([1, 2, 0], "a"), ranked([1, 1, 2], "b"), ranked([1, 0], "c")])
    dcg_a = -1 + 3 / LOG2_3
    dcg_b = -1 - 1 / LOG2_3 + 3 / 2
    expected = {
        "ndcg": [dcg_a / 3, dcg_b / 3, 0.5],
        "ndcg@1": [-1 / 3, -1 / 3, 0.5],
        "dcg": [dcg_a, dcg_b, -1.0],
        "g": [(-1 / math.log2(6) + 3 / math.log2(4)) / 3, (-1 / math.log2(6) - 1 / 3 + 3 / math.log2(6)) / 3, 0.5],
        "ndcg_rel": [dcg_a / 3, 0.0, 0.5],
        "rndcg": [(-1 / 3 + dcg_a / 3) / 2, (-1 / 3 + dcg_b / 3) / 2, 0.5],
    }
    got = values(frame, MEASURES, gain=GAIN, no_relevant=0.5)
    for measure, numbers in expected.items():
        assert got[measure] == pytest.approx(numbers, rel=1e-14, abs=1e-15), measure
    assert dcg_b < 0  # b's ndcg_rel share is negative: the floor at 0 is met


def test_with_judgments_an_unjudged_document_has_gain_0_whatever_label_0_gains() -> None:
    """Gains 0 -> -2, 1 -> 1, 2 -> 4.  The run ranks d0 (unjudged: gain 0), d1 (judged 0: -2), d2 (judged 2: 4);
    the qrels also judge d3 at 1 (not retrieved) and d4 at -1 (unjudged).  Ideal: the positive judged gains
    4, 1 (ideal DCG 4 at position 1, 4 + 1 / log2(3) from position 2 on).

    DCG = -2 / log2(3) + 4 / 2.  G: C = 4, 5, 6, S = 0, -2, 2; row 1 adds nothing (gain 0):
    (-2 / log2(2 + 5 + 2) + 4 / log2(2 + 6 - 2)) / (4 + 1).  ndcg_rel: P = 2, d2's share at position 3 and d3's
    (not retrieved) at the whole list, both DCG / ideal.  Rndcg (R = 2): R levels end at 1 (0 / 4) and 2
    (DCG(1..2) / ideal(1..2)); 3 rows < P + 2: no implied level."""
    run = ranked([0, 0, 0]).drop("relevance")
    qrels = pl.DataFrame(
        {"query": ["q"] * 4, "doc": ["d1", "d2", "d3", "d4"], "relevance": [0, 2, 1, -1]}, schema_overrides={}
    )
    ideal = 4 + 1 / LOG2_3
    dcg = -2 / LOG2_3 + 2.0
    expected = {
        "ndcg": dcg / ideal,
        "ndcg@1": 0.0,
        "dcg": dcg,
        "g": (-2 / math.log2(9) + 4 / math.log2(6)) / 5,
        "ndcg_rel": (dcg / ideal + dcg / ideal) / 2,
        "rndcg": (0 / 4 + (-2 / LOG2_3) / ideal) / 2,
    }
    got = values(run, MEASURES, gain={0: -2.0, 1: 1.0, 2: 4.0}, qrels=qrels)
    for measure, number in expected.items():
        assert got[measure] == pytest.approx([number], rel=1e-14, abs=1e-15), measure


def orders_frame(gains: list[int], scores: list[float]) -> pl.DataFrame:
    """One query per order of the rows (each order's rows in that input order), for ties='input'."""
    frames = []
    for number, order in enumerate(itertools.permutations(range(len(gains)))):
        frames.append(
            pl.DataFrame(
                {
                    "query": [number] * len(gains),
                    "doc": [f"d{i}" for i in order],
                    "score": [scores[i] for i in order],
                    "relevance": [gains[i] for i in order],
                }
            )
        )
    return pl.concat(frames)


@pytest.mark.parametrize(
    ("labels", "scores"),
    [
        ([0, 1, 2, 3, 1], [1.0, 1.0, 1.0, 1.0, 2.0]),
        ([1, 3, 1, 2, 0, 2], [1.0, 1.0, 1.0, 0.5, 0.5, 0.5]),
        ([3, 1, 1, 2, 1], [2.0, 1.0, 1.0, 1.0, 1.0]),
    ],
)
def test_tie_bounds_are_the_least_and_greatest_over_the_tied_orders(labels: list[int], scores: list[float]) -> None:
    """ties='optimistic' / 'pessimistic' order each tie block most / least gainful first: with negative gains
    still the greatest / least value of ndcg, dcg and Rndcg over every order of the tied rows (their DCG sums
    are linear in the gains with weights decreasing with the position), and ties='average' (their exact
    expectation) lies between.  Every order is one query of ties='input'."""
    gain = {0: -1.0, 1: -3.0, 2: 2.0, 3: 5.0}
    measures = ["ndcg", "ndcg@2", "dcg", "dcg@3", "rndcg"]
    every = orders_frame(labels, scores).rank_metrics.evaluate(measures, doc="doc", ties="input", gain=gain)
    one = orders_frame(labels, scores).filter(pl.col("query") == 0)
    for ties in ("optimistic", "pessimistic", "average"):
        bound = one.rank_metrics.evaluate(measures, doc="doc", ties=ties, gain=gain)
        for m in measures:
            low, high, value = every[m].min(), every[m].max(), bound[m].item()
            assert isinstance(low, float) and isinstance(high, float)
            if ties == "optimistic":
                assert value == pytest.approx(high, rel=1e-12, abs=1e-15), m
            elif ties == "pessimistic":
                assert value == pytest.approx(low, rel=1e-12, abs=1e-15), m
            else:
                assert low - 1e-12 <= value <= high + 1e-12, m
                assert value == pytest.approx(every[m].mean(), rel=1e-12, abs=1e-15), m


def test_ndcg_rel_refuses_its_tie_bounds_with_a_negative_gain_retrieved() -> None:
    """ndcg_rel's share at a positive row is DCG(1..p) / ideal DCG(1..p): with a negative DCG above it, the share
    is greater at a later position (larger ideal), so the most gainful first is not always its best order.  Gains
    8, -20 ranked first, then a tie block of gains 2, 0, 1, then 4, 4 (judged: these and one more of gain 2 not
    retrieved): the block most gainful first (2, 1, 0) gives 0.048701, in the order 2, 0, 1 0.048845 (found
    over every order: the DCG above the 1, 8 - 20 / log2(3) + 2 / 2, is negative, and one position later the 1
    divides it by a larger ideal).  So ties='optimistic' / 'pessimistic' raise, naming the query and the gain;
    without a negative gain retrieved (the same mapping) they are taken."""
    mapping = {0: 0.0, 1: 1.0, 2: 2.0, 3: 4.0, 4: 8.0, 5: -20.0}
    labels = [4, 5, 2, 0, 1, 3, 3]
    scores = [9.0, 8.0, 5.0, 5.0, 5.0, 1.0, 0.5]
    run = pl.DataFrame({"query": "q", "doc": [f"d{i}" for i in range(7)], "score": scores})
    qrels = pl.DataFrame({"query": "q", "doc": [f"d{i}" for i in range(8)], "relevance": [*labels, 2]})
    block = [2, 3, 4]  # the tied rows
    shares = {}
    for order in itertools.permutations(block):
        rows = [0, 1, *order, 5, 6]
        reordered = run[rows].with_columns(score=pl.Series([7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0]))
        evaluated = reordered.rank_metrics.evaluate(["ndcg_rel"], doc="doc", ties="doc", gain=mapping, qrels=qrels)
        shares[order] = evaluated.item(0, 1)
    by_gain = shares[(2, 4, 3)]  # gains 2, 1, 0
    assert by_gain == pytest.approx(0.04870142476902125, rel=1e-12)
    assert max(shares.values()) == shares[(2, 3, 4)] == pytest.approx(0.04884508847760999, rel=1e-12)
    for ties, word in (("optimistic", "best"), ("pessimistic", "worst")):
        text = (
            f"ndcg_rel with ties='{ties}': query 'q' retrieves a document of negative gain -20.0, and with one the "
            f"order of a tie block by gain is not always ndcg_rel's {word} order (a share with a negative DCG "
            "above it grows with the ideal DCG of a later position); pass a deterministic tie mode or non-negative "
            "gains."
        )
        with pytest.raises(ValueError) as raised:
            run.rank_metrics.evaluate(["ndcg_rel"], doc="doc", ties=ties, gain=mapping, qrels=qrels)
        assert str(raised.value) == text
        # the mapping's negative gain not retrieved: the bound stands
        kept = run.filter(pl.col("doc") != "d1")
        assert kept.rank_metrics.evaluate(["ndcg_rel"], doc="doc", ties=ties, gain=mapping, qrels=qrels).height == 1


@pytest.mark.parametrize("k", [None, 1, 3])
def test_exprs_ndcg_and_dcg_equal_the_namespace_with_negative_gains(k: int | None) -> None:
    """`lodestar_polars.exprs` takes the same negative gains: its ideal keeps the positive ones, and a group
    without positive gain (c, DCG < 0 under an ideal of 0) takes no_relevant, as the namespace's does."""
    frame = pl.concat([ranked([1, 2, 0, 2], "a"), ranked([1, 1, 2], "b"), ranked([1, 0], "c")]).with_columns(
        score=pl.Series([1.0, 1.0, 0.5, 0.2, 3.0, 2.0, 2.0, 1.0, 1.0])
    )
    for ties in ("average", "optimistic", "pessimistic", "doc"):
        for no_relevant in (0.25, None):
            theirs = frame.rank_metrics.evaluate(
                [f"ndcg@{k}" if k else "ndcg", f"dcg@{k}" if k else "dcg"],
                doc="doc",
                ties=ties,
                gain=GAIN,
                no_relevant=no_relevant,
            ).sort("query")
            ours = (
                frame.group_by("query")
                .agg(
                    exprs.ndcg(k=k, ties=ties, gain=GAIN, no_relevant=no_relevant, doc="doc"),
                    exprs.dcg(k=k, ties=ties, gain=GAIN, doc="doc"),
                )
                .sort("query")
            )
            assert ours.columns == theirs.columns
            for column in ours.columns[1:]:
                got, expected = ours[column].to_list(), theirs[column].to_list()
                assert [v is None for v in got] == [v is None for v in expected], (ties, no_relevant, column)
                got, expected = [v for v in got if v is not None], [v for v in expected if v is not None]
                assert got == pytest.approx(expected, rel=1e-13, abs=1e-15), (ties, no_relevant, column)
    assert ours["ndcg" if k is None else f"ndcg@{k}"].to_list()[2] is None  # c: no positive gain


def test_negative_labels_stay_refused_by_ndcg_as_scikit_learn_refuses_them() -> None:
    """scikit-learn's ndcg_score refuses a negative y_true and its dcg_score sums it; the namespace's ndcg (and
    the scikit-learn drop-ins) refuse a negative label (the drop-ins with scikit-learn's words, the namespace
    naming the column, query and label), whatever the gain mapping, and dcg equals dcg_score.  A negative gain
    comes from a mapping of non-negative labels only."""
    true, score = [[-1.0, 2.0, 0.0]], [[0.3, 0.2, 0.1]]
    with pytest.raises(ValueError, match=r"^ndcg_score should not be used on negative y_true values\.$"):
        sk_ndcg_score(true, score)
    with pytest.raises(ValueError, match=r"^ndcg_score should not be used on negative y_true values\.$"):
        lp_sklearn.ndcg_score(true, score)
    assert lp_sklearn.dcg_score(true, score) == pytest.approx(sk_dcg_score(true, score), rel=1e-15)
    frame = ranked([-1, 2, 0])
    refused = r"negative value\(s\), the first in query 'q' \(its least label -1\); ndcg refuses"
    for gain in ("linear", {-1: 1.0, 0: 0.0, 2: 3.0}):
        with pytest.raises(ValueError, match=refused):
            frame.rank_metrics.ndcg(doc="doc", gain=gain)
    assert frame.rank_metrics.dcg(doc="doc")["dcg"].item() == pytest.approx(sk_dcg_score(true, score), rel=1e-15)


# --- the CLI against the trec_eval binary ----------------------------------------------------------------------


def write(folder: Path, run: str, qrels: str) -> tuple[Path, Path]:
    run_path, qrels_path = folder / "run.txt", folder / "qrels.txt"
    run_path.write_text(run, encoding="ascii")
    qrels_path.write_text(qrels, encoding="ascii")
    return qrels_path, run_path


RUN = "q3 Q0 d6 0 3.0 t\nq3 Q0 d5 0 2.0 t\n"
QRELS = "q3 0 d5 0\nq3 0 d6 1\n"


def test_a_negative_ndcg_is_printed_as_trec_eval_prints_it(trec_eval: TrecEval, tmp_path: Path) -> None:
    """ndcg.0=-1,1=0.4: d6 (level 1, gain 0.4) then d5 (level 0, gain -1): DCG 0.4 - 1 / log2(3) = -0.2309, ideal
    0.4 (the gain -1 ends the ideal list), ndcg -0.5773, which both print."""
    qrels, run = write(tmp_path, RUN, QRELS)
    arguments = ["-q", "-m", "ndcg.0=-1,1=0.4", "-m", "G.0=-1,1=0.4", "-m", "Rndcg.0=-1,1=0.4"]
    expected = trec_eval.run(arguments, qrels, run)
    assert "ndcg_0=-1,1=0.4       \tq3\t-0.5773" in expected.splitlines()
    assert call_ours(arguments, qrels, run) == (0, expected, "")


@pytest.mark.parametrize(
    ("measure", "words"),
    [
        ("ndcg.0=-0.5,1=0.4", "gains -0.5 (level 0) and 0.4 (level 1) are less than 1 apart"),
        ("ndcg.1=0.4,0=-0.5", "gains -0.5 (level 0) and 0.4 (level 1) are less than 1 apart"),
        ("G.0=-0.25,1=0.5", "gains -0.25 (level 0) and 0.5 (level 1) are less than 1 apart"),
    ],
)
def test_a_negative_gain_less_than_1_from_a_positive_one_is_refused(
    trec_eval: TrecEval, tmp_path: Path, measure: str, words: str
) -> None:
    """trec_eval's comparator truncates the difference of two gains to an int: -0.5 and 0.4 compare equal, and
    its sort keeps them in the order the pairs were typed.  ndcg.0=-0.5,1=0.4 puts 0.4 on top (DCG
    0.4 - 0.5 / log2(3), ideal 0.4: 0.2113) and ndcg.1=0.4,0=-0.5 puts -0.5 on top, ending the ideal at once
    (0.0000): one set of gains, two numbers.  The CLI refuses such gains (exit 2) whatever their order."""
    qrels, run = write(tmp_path, RUN, QRELS)
    assert trec_eval.run(["-m", "ndcg.0=-0.5,1=0.4"], qrels, run).endswith("\t0.2113\n")
    assert trec_eval.run(["-m", "ndcg.1=0.4,0=-0.5"], qrels, run).endswith("\t0.0000\n")
    code, out, err = call_ours(["-m", measure], qrels, run)
    assert (code, out) == (cli.EXIT_USAGE_ERROR, "")
    assert words in err


@pytest.mark.parametrize(
    ("measure", "words"),
    [
        # trec_eval's level -1 is a document outside the pool, -2 one judged below 0: gains for them are refused
        ("ndcg.-1=2", "gain pairs are level=gain, a level >= 0 and a gain (a decimal number, negative or 0"),
        ("Rndcg.1=--2", "got '1=--2'"),
        ("G.1=-", "got '1=-'"),
        # ndcg_cut has no gain pairs: trec_eval reads the leading integer 0 as a cut-off and refuses it
        ("ndcg_cut.0=-1,2=5", "cut-offs must be positive (ndcg_cut takes cut-offs, not gain pairs"),
    ],
)
def test_what_stays_refused_in_gain_pairs(tmp_path: Path, measure: str, words: str) -> None:
    qrels, run = write(tmp_path, RUN, QRELS)
    code, out, err = call_ours(["-m", measure], qrels, run)
    assert (code, out) == (cli.EXIT_USAGE_ERROR, "")
    assert words in err


def test_ndcg_cut_reads_a_pair_as_its_leading_cut_off_as_trec_eval(trec_eval: TrecEval, tmp_path: Path) -> None:
    """trec_eval's ndcg_cut.0=-1,2=5 stops ("Negative cutoff detected"), and ndcg_cut.2=5 is ndcg_cut_2 (atol)."""
    qrels, run = write(tmp_path, RUN, QRELS)
    assert trec_eval.call(["-m", "ndcg_cut.0=-1,2=5"], qrels, run).returncode != 0
    expected = trec_eval.run(["-m", "ndcg_cut.2=5"], qrels, run)
    assert expected.startswith("ndcg_cut_2 ")
    assert call_ours(["-m", "ndcg_cut.2=5"], qrels, run) == (0, expected, "")


GAIN_MEASURE_SPELLINGS = {
    "ndcg": "ndcg@3",
    "dcg": "dcg@3",
    "err": "err@3",
    "nerr": "nerr@3",
    "rbp": "rbp",
    "rbp_resid": "rbp_resid",
    "g": "g",
    "ndcg_rel": "ndcg_rel",
    "rndcg": "rndcg",
    "sdcg": "sdcg(max_rel=3)@3",
    "ideal_dcg": "ideal_dcg@3",  # the ideal stops at the first gain <= 0: -1 weighs as 0 there
    # the C/W/L measures clip the gain to [min_rel, max_rel], as sdcg does
    "nerr8": "nerr8(max_rel=3)@3",
    "nerr9": "nerr9(max_rel=3)@3",
    "bpm": "bpm(max_rel=3)@3",
    "insq": "insq(max_rel=3)",
    "nerr10": "nerr10(max_rel=3)",
    "nerr11": "nerr11(max_rel=3)",
    "inst": "inst(max_rel=3)",
}


def test_the_refusal_names_exactly_the_measures_a_negative_gain_changes() -> None:
    """rbp's refusal lists the measures that take negative gains; which those are is found here by behaviour:
    each gain-family measure of the registry scored with label 1 at gain -1 and at gain 0 (the values of the
    ones that take it differ; sdcg clips -1 to its min_rel 0, so its values agree, as its note says)."""
    from lodestar_polars.measures._registry import REGISTRY

    assert {name for name, d in REGISTRY.items() if d.family == "gain"} == set(GAIN_MEASURE_SPELLINGS)
    frame = ranked([1, 0, 2, 1])
    negative, zero = {0: 0.0, 1: -1.0, 2: 3.0}, {0: 0.0, 1: 0.0, 2: 3.0}
    takes, refuses = set(), ""
    for name, spelling in GAIN_MEASURE_SPELLINGS.items():
        try:
            with_negative = frame.rank_metrics.evaluate([spelling], ties="doc", doc="doc", gain=negative)
        except ValueError as error:
            refuses = str(error)
            assert name == "rbp", error
            continue
        with_zero = frame.rank_metrics.evaluate([spelling], ties="doc", doc="doc", gain=zero)
        if with_negative.row(0) != with_zero.row(0):
            takes.add(name)
    assert takes == {"ndcg", "dcg", "g", "ndcg_rel", "rndcg"}
    listed = refuses.split("); ", 1)[1].split(" take negative gains")[0].replace(" and ", ", ").split(", ")
    assert set(listed) == takes
    assert "(sdcg clips them to its min_rel)" in refuses
