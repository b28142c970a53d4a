"""The C/W/L measures NERR8@k, NERR9@k, NERR10(p), NERR11(T), BPM(T)@K, INSQ(T) and INST(T) against cwl_eval
(ir_measures' cwl_eval provider), per query and on average, on random runs with ties and judgments at levels -2..5
(below min_rel and above max_rel), the edge cases derived by hand, and INSQ's tie modes against every order of
the tied rows."""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lodestar_polars  # noqa: F401  (registers .rank_metrics)
from lodestar_polars.measures.inst import trigamma
from lodestar_polars.measures.nerr9 import harmonic

ir_measures = pytest.importorskip("ir_measures", reason="ir-measures is a test dependency (pip install '.[test]')")
pytest.importorskip("cwl", reason="ir_measures computes the C/W/L measures with cwl_eval (pip install cwl-eval)")

EXACT = 1e-12
DOC_IDS = [f"d{i}" for i in range(40)]


@pytest.fixture(autouse=True)
def _quiet_cwl_eval() -> Iterator[None]:
    """ir_measures' cwl_eval provider warns whenever the levels seen differ from max_rel."""
    logger = logging.getLogger("ir_measures.cwl_eval")
    level = logger.level
    logger.setLevel(logging.ERROR)
    yield
    logger.setLevel(level)


def random_case(seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Runs of 1-40 rows with scores from five values (ties), judgments at -2..5: judged queries missing from
    the run, run queries without judgments, unjudged retrieved documents, judged documents not retrieved."""
    rng = np.random.default_rng(seed)
    run_rows, qrels_rows = [], []
    for q in range(int(rng.integers(3, 9))):
        query = f"q{q}"
        in_run, judged = [(True, True), (True, True), (True, False), (False, True)][int(rng.integers(0, 4))]
        judged = judged or q == 0
        if in_run:
            docs = rng.choice(DOC_IDS, size=int(rng.integers(1, len(DOC_IDS) + 1)), replace=False)
            scores = rng.choice([0.0, 0.5, 1.0, 1.5, 2.0], size=len(docs))
            run_rows += [(query, str(doc), float(score)) for doc, score in zip(docs, scores, strict=True)]
        if judged:
            docs = rng.choice(DOC_IDS, size=int(rng.integers(1, 30)), replace=False)
            levels = rng.integers(-2, 6, len(docs))
            qrels_rows += [(query, str(doc), int(level)) for doc, level in zip(docs, levels, strict=True)]
    run = pl.DataFrame(run_rows, schema={"query": pl.String, "doc": pl.String, "score": pl.Float64}, orient="row")
    qrels = pl.DataFrame(qrels_rows, schema={"query": pl.String, "doc": pl.String, "relevance": pl.Int64}, orient="row")
    return run, qrels


# our name -> ir_measures' measure
M = ir_measures
MEASURES: dict[str, Any] = {
    "nerr8(max_rel=4)@1": M.NERR8(max_rel=4) @ 1,
    "nerr8(max_rel=4)@5": M.NERR8(max_rel=4) @ 5,
    "nerr8(max_rel=1)@20": M.NERR8(max_rel=1) @ 20,
    "nerr8(min_rel=1,max_rel=3)@10": M.NERR8(min_rel=1, max_rel=3) @ 10,
    "nerr8(max_rel=5)@1000": M.NERR8(max_rel=5) @ 1000,
    "nerr9(max_rel=4)@1": M.NERR9(max_rel=4) @ 1,
    "nerr9(max_rel=4)@5": M.NERR9(max_rel=4) @ 5,
    "nerr9(max_rel=1)@20": M.NERR9(max_rel=1) @ 20,
    "nerr9(min_rel=1,max_rel=3)@10": M.NERR9(min_rel=1, max_rel=3) @ 10,
    "nerr9(max_rel=5)@1000": M.NERR9(max_rel=5) @ 1000,
    "bpm(max_rel=4)@1": M.BPM(max_rel=4) @ 1,
    "bpm(max_rel=4)@10": M.BPM(max_rel=4) @ 10,
    "bpm(t=2,max_rel=2)@20": M.BPM(T=2.0, max_rel=2) @ 20,
    "bpm(t=0.5,min_rel=1,max_rel=3)@5": M.BPM(T=0.5, min_rel=1, max_rel=3) @ 5,
    "bpm(t=3.5,max_rel=1)@1000": M.BPM(T=3.5, max_rel=1) @ 1000,
    "insq(max_rel=4)": M.INSQ(max_rel=4),
    "insq(t=2,max_rel=2)": M.INSQ(T=2.0, max_rel=2),
    "insq(t=0.25,min_rel=1,max_rel=3)": M.INSQ(T=0.25, min_rel=1, max_rel=3),
    "nerr10(max_rel=4)": M.NERR10(max_rel=4),
    "nerr10(p=0.5,max_rel=1)": M.NERR10(p=0.5, max_rel=1),
    "nerr10(p=0.99,min_rel=1,max_rel=3)": M.NERR10(p=0.99, min_rel=1, max_rel=3),
    "nerr11(max_rel=4)": M.NERR11(max_rel=4),
    "nerr11(t=2,max_rel=2)": M.NERR11(T=2.0, max_rel=2),
    "nerr11(t=0.25,min_rel=1,max_rel=3)": M.NERR11(T=0.25, min_rel=1, max_rel=3),
    "inst(max_rel=4)": M.INST(max_rel=4),
    "inst(t=2,max_rel=2)": M.INST(T=2.0, max_rel=2),
    "inst(t=0.25,min_rel=1,max_rel=3)": M.INST(T=0.25, min_rel=1, max_rel=3),
    "inst(t=6,max_rel=1)": M.INST(T=6.0, max_rel=1),
}


def cwl_eval(run: pl.DataFrame, qrels: pl.DataFrame) -> dict[str, dict[str, float]]:
    """cwl_eval's per-query values {our column: {query: value}}; it keeps tied documents in the order given,
    which ties="input" reads too."""
    judged = [ir_measures.Qrel(q, d, r) for q, d, r in qrels.iter_rows()]
    scored = [ir_measures.ScoredDoc(q, d, s) for q, d, s in run.iter_rows()]
    ours_by_theirs = {measure: column for column, measure in MEASURES.items()}
    values: dict[str, dict[str, float]] = {column: {} for column in MEASURES}
    for metric in ir_measures.cwl_eval.iter_calc(list(MEASURES.values()), judged, scored):
        values[ours_by_theirs[metric.measure]][metric.query_id] = metric.value
    return values


@pytest.mark.parametrize("seed", range(12))
def test_equal_cwl_eval_per_query_and_on_average(seed: int) -> None:
    run, qrels = random_case(seed)
    expected = cwl_eval(run, qrels)
    options: dict[str, Any] = {"doc": "doc", "ties": "input", "qrels": qrels, "missing_queries": "zero"}
    result = run.rank_metrics.evaluate(list(MEASURES), **options)
    for column in MEASURES:
        got = dict(zip(result["query"], result[column], strict=True))
        assert got.keys() == expected[column].keys(), column
        assert got == pytest.approx(expected[column], rel=EXACT, abs=EXACT), column
    means = run.rank_metrics.evaluate_mean(list(MEASURES), **options).row(0, named=True)
    for column in MEASURES:
        assert means[column] == pytest.approx(np.mean(list(expected[column].values())), rel=EXACT, abs=EXACT)


def test_the_random_cases_hold_ties_short_lists_and_every_level() -> None:
    cases = [random_case(seed) for seed in range(12)]
    assert sum(run.group_by("query", "score").len()["len"].max() > 1 for run, _ in cases) >= 10
    assert all(set(range(-2, 6)) <= set(qrels["relevance"]) for _, qrels in cases[:3])
    lengths = pl.concat([run.group_by("query").len() for run, _ in cases])["len"]
    assert (lengths < 5).sum() >= 3 and (lengths > 20).sum() >= 10


ONE_QUERY = pl.DataFrame({"query": ["q"] * 3, "score": [3.0, 2.0, 1.0], "relevance": [2, 0, 4]})


def test_nerr8_and_nerr9_by_hand_with_the_positions_past_the_list() -> None:
    """max_rel=4: g' = 1/2, 0, 1.  NERR8@5: P = 1, 1/2, 1/2, then the product over the list, 0, at positions 4
    and 5: (1/2 + 0 + 1/2) / (1 + 1/2 + 1/2) = 1/2.  NERR9@5: weights P/p = 1, 1/4, 1/6, 0, 0: (1/2 + 1/6) /
    (1 + 1/4 + 1/6) = 8/17.  With the last row at level 0 instead (g' 1/2, 0, 0), the list's product is 1/2:
    NERR8@5 = 1/2 / (1 + 1/2 + 1/2 + 2 x 1/2) = 1/6; NERR9@5 = 1/2 / (1 + 1/4 + 1/6 + 1/2 x (1/4 + 1/5)) =
    60/197."""
    names = ["nerr8(max_rel=4)@5", "nerr9(max_rel=4)@5"]
    assert ONE_QUERY.rank_metrics.evaluate(names, ties="input").row(0) == pytest.approx(("q", 1 / 2, 8 / 17))
    last_unrelated = ONE_QUERY.with_columns(relevance=pl.Series([2, 0, 0]))
    assert last_unrelated.rank_metrics.evaluate(names, ties="input").row(0) == pytest.approx(("q", 1 / 6, 60 / 197))


def test_nerr10_and_nerr11_by_hand_with_the_positions_past_the_list() -> None:
    """max_rel=4: g' = 1/2, 0, 1, so Q (the product of 1 - g' above) = 1, 1/2, 1/2 and 0 past the list.
    NERR10(p=0.5): weights 0.5^(p - 1) Q = 1, 1/4, 1/8: (1/2 + 1/8) / (1 + 1/4 + 1/8) = 5/11.  NERR11 (T=1):
    weights (2 / (p + 1))^2 Q = 1, 2/9, 1/8: (1/2 + 1/8) / (97/72) = 45/97.  With the last row at level 0
    instead (g' = 1/2, 0, 0; Q past the list 1/2): NERR10 = 1/2 / (11/8 + 1/2 x (0.5^3 + ... + 0.5^999)) = 1/3
    (to 1e-300); NERR11 = 1/2 / (97/72 + 1/2 x 4 x (1/5^2 + ... + 1/1001^2))."""
    names = ["nerr10(p=0.5,max_rel=4)", "nerr11(max_rel=4)"]
    assert ONE_QUERY.rank_metrics.evaluate(names, ties="input").row(0) == pytest.approx(("q", 5 / 11, 45 / 97))
    tail = 2 * sum((Fraction(1, n * n) for n in range(5, 1002)), Fraction(0))
    last_unrelated = ONE_QUERY.with_columns(relevance=pl.Series([2, 0, 0]))
    expected = (1 / 3, float(Fraction(1, 2) / (Fraction(97, 72) + tail)))
    assert last_unrelated.rank_metrics.evaluate(names, ties="input").row(0)[1:] == pytest.approx(expected, rel=EXACT)


def test_bpm_by_hand() -> None:
    """max_rel=4: g' = 1/2, 0, 1.  T=1, K=10: the gain gathered reaches 1 at position 3 (1/2 + 0 + 1): 3/2 over
    3 documents = 1/2.  T=1, K=2: stops at K: 1/2 over 2.  T=2, K=5: never reached, the list padded with gain
    0 to K: 3/2 over 5.  T=0.5: reached at once: 1/2 over 1."""
    names = ["bpm(max_rel=4)@10", "bpm(max_rel=4)@2", "bpm(t=2,max_rel=4)@5", "bpm(t=0.5,max_rel=4)@10"]
    assert ONE_QUERY.rank_metrics.evaluate(names, ties="input").row(0) == pytest.approx(
        ("q", 1 / 2, 1 / 4, 3 / 10, 1 / 2)
    )


def test_insq_by_hand() -> None:
    """max_rel=4: g' = 1/2, 0, 1; T=1: weights (2 / (p + 1))^2 = 1, 4/9, 1/4, normalised by their sum over
    cwl_eval's 1000 positions, 4 x (1/2^2 + ... + 1/1001^2): (1/2 + 1/4) / that."""
    normaliser = 4 * sum((Fraction(1, n * n) for n in range(2, 1002)), Fraction(0))
    got = ONE_QUERY.rank_metrics.evaluate(["insq(max_rel=4)"], ties="input").item(0, 1)
    assert got == pytest.approx(float(Fraction(3, 4) / normaliser), rel=EXACT)


@st.composite
def tied_query(draw: st.DrawFn) -> pl.DataFrame:
    """One query of 1-6 rows, scores from two values (heavy ties), levels -1..5."""
    size = draw(st.integers(1, 6))
    return pl.DataFrame(
        {
            "query": ["q"] * size,
            "score": [draw(st.sampled_from([0.0, 1.0])) for _ in range(size)],
            "relevance": [draw(st.integers(-1, 5)) for _ in range(size)],
        }
    )


@settings(max_examples=60, deadline=None)
@given(frame=tied_query())
def test_insq_tie_modes_are_the_mean_and_extremes_over_every_order(frame: pl.DataFrame) -> None:
    """ties="average" is the mean of ties="input" over every order of the rows, the bounds its least and
    greatest values."""
    names = ["insq(max_rel=4)", "insq(t=0.5,min_rel=1,max_rel=3)"]
    orders = list(itertools.permutations(range(frame.height)))
    every = pl.concat(frame[list(order)].with_columns(query=pl.lit(str(i))) for i, order in enumerate(orders))
    by_order = every.rank_metrics.evaluate(names, ties="input")
    for ties, expected in (("average", pl.mean), ("optimistic", pl.max), ("pessimistic", pl.min)):
        got = frame.rank_metrics.evaluate(names, ties=ties)
        for name in names:
            assert got[name].item() == pytest.approx(by_order.select(expected(name)).item(), rel=EXACT, abs=EXACT)


def test_inst_by_hand() -> None:
    """max_rel=4, T=1: g' = 1/2, 0, 1, gathered G = 1/2, 1/2, 3/2; x = p + 2 - G = 5/2, 7/2, 7/2, so C = 9/25,
    25/49, 25/49 and the weights P = 1, 9/25, 9/25 x 25/49 = 9/49; past the list (a = 2 - 3/2 = 1/2, m = 3)
    P(q) = (9/49 x 25/49) (7/2)^2 / (q - 1/2)^2 for q = 4..1000.  INST = (1/2 + 9/49) / (1 + 9/25 + 9/49 + that
    sum)."""
    past = (
        Fraction(9 * 25, 49 * 49)
        * Fraction(49, 4)
        * sum((1 / (Fraction(q) - Fraction(1, 2)) ** 2 for q in range(4, 1001)), Fraction(0))
    )
    expected = (Fraction(1, 2) + Fraction(9, 49)) / (1 + Fraction(9, 25) + Fraction(9, 49) + past)
    got = ONE_QUERY.rank_metrics.evaluate(["inst(max_rel=4)"], ties="input").item(0, 1)
    assert got == pytest.approx(float(expected), rel=EXACT)


def test_trigamma_against_exact_fractions() -> None:
    """INST's weights past the list, trigamma(x) - trigamma(x + n) = the sum over i < n of 1 / (x + i)^2."""
    cases = [(0.5, 999), (1.0, 1000), (2.75, 10), (0.25, 3), (37.5, 963), (998.5, 1)]
    frame = pl.DataFrame({"x": [x for x, _ in cases], "n": [float(n) for _, n in cases]})
    got = frame.select(trigamma(pl.col("x")) - trigamma(pl.col("x") + pl.col("n"))).to_series().to_list()
    for (x, n), value in zip(cases, got, strict=True):
        exact = sum((1 / (Fraction(x) + i) ** 2 for i in range(n)), Fraction(0))
        assert math.isclose(value, float(exact), rel_tol=1e-14, abs_tol=1e-17), (x, n)


def test_harmonic_numbers_against_exact_fractions() -> None:
    """NERR9's weights past the list, H(k) - H(m): H(n) by digamma's series, within 2e-15 of the exact sums."""
    ns = [*range(0, 60), 99, 100, 999, 1000, 4096]
    got = pl.DataFrame({"n": ns}).select(harmonic(pl.col("n")))["n"].to_list()
    for n, value in zip(ns, got, strict=True):
        exact = sum((Fraction(1, p) for p in range(1, n + 1)), Fraction(0))
        assert math.isclose(value, float(exact), rel_tol=0, abs_tol=2e-15), n


def test_options_are_checked() -> None:
    with pytest.raises(ValueError, match=r"nerr8: max_rel=1 must exceed min_rel=2"):
        ONE_QUERY.rank_metrics.evaluate("nerr8(min_rel=2,max_rel=1)@5", ties="input")
    with pytest.raises(ValueError, match=r"T must be at least 1/4"):
        ONE_QUERY.rank_metrics.evaluate("inst(t=0.2,max_rel=4)", ties="input")
    with pytest.raises(ValueError, match=r"T, the gain the user wants, must be positive"):
        ONE_QUERY.rank_metrics.evaluate("bpm(t=0,max_rel=4)@5", ties="input")
    with pytest.raises(ValueError, match=r"nerr9"):
        ONE_QUERY.rank_metrics.evaluate("nerr9@5", ties="input")
    with pytest.raises(ValueError, match=r"ties='average'"):
        ONE_QUERY.rank_metrics.evaluate("bpm(max_rel=4)@5", ties="average")
