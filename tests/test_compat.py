"""`compat(p=..., normalize=...)` against ir_measures' own Compat (its compat provider, the one ir_measures has),
per query (`iter_calc`) and on average (`calc_aggregate`), on seeded random runs with ties, negative scores,
graded judgments at -1..3, judged documents not retrieved, retrieved documents not judged, judged queries missing
from the run and queries without a relevant document; and by hand where the two differ.

ir_measures ranks the run by descending score, ties by ascending doc id: the run is sorted by doc id and read
with ties="input".  Its ideal ranking orders the documents of one level that share a score as its qrels list
them; the random qrels list them by ascending doc id, the run's tie order, and no relevant document is scored 0
(ir_measures scores an unretrieved one 0): there the two ideals are one (the module docstring of
`lodestar_polars.measures.compat` says why they differ otherwise, and `test_ties_of_one_level_follow_the_run`
shows it).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl
import pytest

import lodestar_polars  # noqa: F401  (registers .rank_metrics)
from lodestar_polars._spec import parse_measure
from lodestar_polars.measures import compat

ir_measures = pytest.importorskip("ir_measures", reason="ir-measures is a test dependency (pip install '.[test]')")

EXACT = 1e-12
DOC_IDS = [f"d{i:02d}" for i in range(16)]
# ir_measures' Compat at each setting, and our name for it
SETTINGS = [
    (ir_measures.Compat, "compat"),
    (ir_measures.Compat(p=0.8), "compat(p=0.8)"),
    (ir_measures.Compat(p=0.5), "compat(p=0.5)"),
    (ir_measures.Compat(p=0.99), "compat(p=0.99)"),
    (ir_measures.Compat(normalize=False), "compat(normalize=False)"),
    (ir_measures.Compat(p=0.7, normalize=False), "compat(p=0.7,normalize=0)"),
]


def random_case(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Qrels listed by ascending doc id (see the module docstring); a run scored from five values, two of them
    negative (heavy ties, none at 0)."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(int(rng.integers(3, 9))):
        query = f"q{q}"
        in_run, judged = [(True, True), (True, True), (True, False), (False, True)][int(rng.integers(0, 4))]
        if in_run or q == 0:
            docs = rng.choice(DOC_IDS, size=int(rng.integers(1, len(DOC_IDS) + 1)), replace=False)
            scores = rng.choice([-1.0, -0.5, 0.5, 1.0, 2.0], len(docs))
            run[query] = {str(d): float(s) for d, s in zip(docs, scores, strict=True)}
        if judged or q == 0:
            docs = sorted(rng.choice(DOC_IDS, size=int(rng.integers(1, 12)), replace=False))
            qrels[query] = {str(d): int(level) for d, level in zip(docs, rng.integers(-1, 4, len(docs)), strict=True)}
    return qrels, run


def frames(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> tuple[pl.DataFrame, pl.DataFrame]:
    judged = pl.DataFrame(
        [(q, d, r) for q, docs in qrels.items() for d, r in docs.items()],
        schema={"query": pl.String, "doc": pl.String, "relevance": pl.Int64},
        orient="row",
    )
    ranked = pl.DataFrame(
        [(q, d, s) for q, docs in run.items() for d, s in docs.items()],
        schema={"query": pl.String, "doc": pl.String, "score": pl.Float64},
        orient="row",
    )
    return judged, ranked.sort("query", "doc")


def ours(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], mean: bool = False) -> Any:
    """Every setting's per-query values (query -> name -> value), or their means, with ir_measures' conventions:
    its tie order, a judged query missing from the run scored 0."""
    judged, ranked = frames(qrels, run)
    names = [name for _, name in SETTINGS]
    options: dict[str, Any] = {"doc": "doc", "ties": "input", "qrels": judged, "missing_queries": "zero"}
    if mean:
        means = ranked.rank_metrics.evaluate_mean(names, **options)
        columns = [parse_measure(name).column for name in names]
        return {name: means.item(0, column) for name, column in zip(names, columns, strict=True)}
    per_query = ranked.rank_metrics.evaluate(names, **options)
    assert per_query.columns[1:] == [parse_measure(name).column for name in names]
    return {row[0]: dict(zip(names, row[1:], strict=True)) for row in per_query.iter_rows()}


def theirs(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    values: dict[str, dict[str, float]] = {}
    for measure, name in SETTINGS:
        for metric in ir_measures.iter_calc([measure], qrels, run):
            values.setdefault(metric.query_id, {})[name] = float(metric.value)
    return values


@pytest.mark.parametrize("seed", range(12))
def test_per_query_values_equal_ir_measures_compat(seed: int) -> None:
    qrels, run = random_case(seed)
    expected = theirs(qrels, run)
    got = ours(qrels, run)
    assert got.keys() == expected.keys()
    for query, values in expected.items():
        for name, value in values.items():
            assert math.isclose(got[query][name], value, abs_tol=EXACT), (query, name, got[query][name], value)


@pytest.mark.parametrize("seed", range(4))
def test_means_equal_ir_measures_calc_aggregate(seed: int) -> None:
    qrels, run = random_case(100 + seed)
    got = ours(qrels, run, mean=True)
    for measure, name in SETTINGS:
        value = ir_measures.calc_aggregate([measure], qrels, run)[measure]
        assert math.isclose(got[name], value, abs_tol=EXACT), (name, got[name], value)


@pytest.mark.parametrize("p", [0.95, 0.99, 0.5])
def test_long_rankings_past_the_partial_sums_table_equal_ir_measures(p: float) -> None:
    """3000 retrieved documents, 400 judged relevant at three levels, 100 of them not retrieved: depths far past
    the table of H at p = 0.95 and 0.5 (the tail there is below 2^-60), within it at 0.99."""
    rng = np.random.default_rng(7)
    docs = [f"doc{i:05d}" for i in range(3100)]
    retrieved = docs[:3000]
    scores = rng.normal(size=len(retrieved)).round(1)  # ties, negative scores, and a few at 0: none relevant
    relevant = sorted(rng.choice(docs[1:], size=400, replace=False))
    run = {"q": {d: float(s) for d, s in zip(retrieved, scores, strict=True) if s != 0.0 or d not in relevant}}
    qrels = {"q": {d: int(rng.integers(1, 4)) for d in relevant}}
    for normalize in (True, False):
        measure = ir_measures.Compat(p=p, normalize=normalize)
        expected = next(iter(ir_measures.iter_calc([measure], qrels, run))).value
        judged, ranked = frames(qrels, run)
        name = f"compat(p={p},normalize={normalize})"
        got = ranked.rank_metrics.evaluate([name], doc="doc", ties="input", qrels=judged).item(0, 1)
        assert math.isclose(got, expected, abs_tol=EXACT), (normalize, got, expected)


def test_in_frame_relevance_equals_ir_measures_with_the_frame_as_qrels() -> None:
    """Without qrels= the ideal is the frame's own relevant rows: ir_measures given the frame's relevance as its
    qrels (every document retrieved)."""
    rng = np.random.default_rng(3)
    rows = [
        (f"q{q}", doc, float(rng.choice([-1.0, 0.5, 1.0, 2.0])), int(rng.integers(0, 4)))
        for q in range(6)
        for doc in sorted(rng.choice(DOC_IDS, size=int(rng.integers(1, 12)), replace=False))
    ]
    frame = pl.DataFrame(rows, schema=["query", "doc", "score", "relevance"], orient="row")
    qrels = {q: {d: r for q2, d, _, r in rows if q2 == q} for q, *_ in rows}
    run = {q: {d: s for q2, d, s, _ in rows if q2 == q} for q, *_ in rows}
    names = [name for _, name in SETTINGS]
    got = frame.rank_metrics.evaluate(names, doc="doc", ties="input")
    expected = theirs(qrels, run)
    for row in got.iter_rows():
        for name, value in zip(names, row[1:], strict=True):
            assert math.isclose(value, expected[row[0]][name], abs_tol=EXACT), (row[0], name)


def test_ties_of_one_level_follow_the_run() -> None:
    """a and b, both relevant at level 1, tie at the top of the run (ranked a, b).  The ideal most compatible with
    the run is a, b: O(1) = 1, O(2) = 2, Compat = 1.  ir_measures orders them as its qrels list them (b, a):
    O(1) = 0, O(2) = 2, RBO = p x 2/2 over the ideal's 1 + p, so 1/3 at p = 0.5, and 1 with the qrels listed
    a, b."""
    run = {"q": {"a": 1.0, "b": 1.0}}
    measure = ir_measures.Compat(p=0.5)
    assert ir_measures.calc_aggregate([measure], {"q": {"b": 1, "a": 1}}, run)[measure] == pytest.approx(1 / 3)
    assert ir_measures.calc_aggregate([measure], {"q": {"a": 1, "b": 1}}, run)[measure] == pytest.approx(1.0)
    for qrels in ({"q": {"b": 1, "a": 1}}, {"q": {"a": 1, "b": 1}}):
        judged, ranked = frames(qrels, run)
        got = ranked.rank_metrics.evaluate(["compat(p=0.5)"], doc="doc", ties="input", qrels=judged)
        assert got.item(0, 1) == pytest.approx(1.0, abs=EXACT)


@pytest.mark.parametrize(("score", "expected"), [(-1.0, 1 / 6), (1.0, 5 / 6)])
def test_a_retrieved_document_scored_below_0_follows_the_unretrieved_documents_of_its_level(
    score: float, expected: float
) -> None:
    """Relevant documents a (retrieved alone) and u (not retrieved), both at level 1; D = max(1, 2) = 2.  As
    ir_measures orders the ideal (an unretrieved document scored 0), a scored -1 comes after u: ideal u, a,
    O(1) = 0, O(2) = 1, RBO sum p / 2, over the ideal's own 1 + p: 1/6 at p = 0.5.  Scored 1, a comes first:
    O(1) = O(2) = 1, (1 + p / 2) / (1 + p) = 5/6."""
    qrels = {"q": {"a": 1, "u": 1}}
    run = {"q": {"a": score}}
    measure = ir_measures.Compat(p=0.5)
    assert ir_measures.calc_aggregate([measure], qrels, run)[measure] == pytest.approx(expected)
    judged, ranked = frames(qrels, run)
    got = ranked.rank_metrics.evaluate(["compat(p=0.5)"], doc="doc", ties="input", qrels=judged)
    assert got.item(0, 1) == pytest.approx(expected, abs=EXACT)


def test_a_query_without_a_relevant_document_scores_no_relevant_when_normalised() -> None:
    """ir_measures scores it 0; normalised, nothing divides it here (`no_relevant`, default 0); not normalised,
    its overlap is 0."""
    frame = pl.DataFrame({"query": ["q", "q"], "score": [1.0, 0.5], "relevance": [0, 0]})
    names = ["compat", "compat(normalize=False)"]
    assert frame.rank_metrics.evaluate(names, ties="input").row(0) == ("q", 0.0, 0.0)
    assert frame.rank_metrics.evaluate(names, ties="input", no_relevant=None).row(0) == ("q", None, 0.0)
    with pytest.raises(ValueError, match=r"no relevant document \(the ideal ranking is empty\)"):
        frame.rank_metrics.evaluate(["compat"], ties="input", no_relevant="error")


def test_normalize_is_written_as_ir_measures_writes_it_or_as_0_and_1() -> None:
    frame = pl.DataFrame({"query": ["q"] * 3, "score": [3.0, 2.0, 1.0], "relevance": [0, 1, 2]})
    spelled = frame.rank_metrics.evaluate(["compat(normalize=False)", "Compat(p=0.8,normalize=True)"], ties="input")
    numbers = frame.rank_metrics.evaluate(["compat(normalize=0)", "compat(p=0.8,normalize=1)"], ties="input")
    assert spelled.columns == ["query", "compat(normalize=0)", "compat(p=0.8)"]
    assert spelled.rows() == numbers.rows()


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("compat(p=1)", "strictly between 0 and 1"),
        ("compat(p=0.99999)", "p is at most 0.9999"),
        ("compat(normalize=2)", r"normalize is 1 \(True"),
        ("compat(normalize=yes)", "it is not a decimal number"),
        ("rbp(p=true)", "it is not a decimal number"),  # only a flag takes True / False
    ],
)
def test_option_values_outside_their_range_are_refused(name: str, message: str) -> None:
    frame = pl.DataFrame({"query": ["q"], "score": [1.0], "relevance": [1]})
    with pytest.raises(ValueError, match=message):
        frame.rank_metrics.evaluate([name], ties="input")


def test_the_partial_sums_table_ends_where_its_tail_no_longer_counts() -> None:
    """H(m) = sum of p^(d-1) / d over d <= m, against exact fractions at p = 1/2 (each entry within an ulp or
    two: the terms are rounded before they are summed); its limit is -ln(1 - p) / p (the series of -ln(1 - p))."""
    from fractions import Fraction

    table = compat.partial_sum_table(0.5)
    exact = Fraction(0)
    for m in range(1, len(table)):
        exact += Fraction(1, 2 ** (m - 1) * m)
        assert table[m] == pytest.approx(float(exact), rel=5e-16, abs=0), m
    for p in (0.5, 0.95, 0.99):
        assert compat.partial_sum_table(p)[-1] == pytest.approx(-math.log1p(-p) / p, rel=1e-15, abs=0)
