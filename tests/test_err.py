"""ERR@k and nERR@k: ir_measures' ERR@k (computed by gdeval) on random runs, hand derivations of the edge
cases, the ideal as the best order by brute force, the grade checks and the tie-mode refusals."""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest

ERR_NAMES = ["err", "err@1", "err@2", "nerr", "nerr@2"]


def stop(grade: float) -> float:
    """Chapelle's stopping probability with gdeval's largest grade 4."""
    return (2.0**grade - 1.0) / 16.0


def err_by_hand(grades: list[float], k: int | None = None) -> float:
    """The cascade, position by position, as gdeval's `err` loop."""
    total, continuation = 0.0, 1.0
    for position, grade in enumerate(grades[:k] if k is not None else grades, start=1):
        total += stop(grade) * continuation / position
        continuation *= 1.0 - stop(grade)
    return total


def random_judged_run(seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Numeric query ids (gdeval takes no others), tied scores, grades -1..4 (some unjudged documents, some
    judged documents not retrieved)."""
    rng = np.random.default_rng(seed)
    run_rows, qrels_rows = [], []
    for q in range(12):
        docs = [f"d{i}" for i in rng.permutation(25)[: rng.integers(1, 20)]]
        run_rows += [(str(q), d, float(rng.integers(0, 6))) for d in docs]
        pool = [*docs, "x1", "x2", "x3"]
        for d in rng.choice(pool, size=min(len(pool), int(rng.integers(1, 15))), replace=False):
            qrels_rows.append((str(q), str(d), int(rng.integers(-1, 5))))
    run = pl.DataFrame(run_rows, schema=["query", "doc", "score"], orient="row")
    qrels = pl.DataFrame(qrels_rows, schema=["query", "doc", "relevance"], orient="row")
    return run, qrels


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", [1, 3, 10, 1000])
def test_err_equals_ir_measures_gdeval(seed: int, k: int) -> None:
    """ir_measures' ERR@k (gdeval: ties by descending docno, as ties='doc'), printed to 5 decimals there."""
    ir_measures = pytest.importorskip("ir_measures", reason="ir_measures is a test dependency")
    run, qrels = random_judged_run(seed)
    measure = ir_measures.parse_measure(f"ERR@{k}")
    judged = [ir_measures.Qrel(q, d, r) for q, d, r in qrels.iter_rows()]
    scored = [ir_measures.ScoredDoc(q, d, s) for q, d, s in run.iter_rows()]
    theirs = {m.query_id: m.value for m in ir_measures.iter_calc([measure], judged, scored)}
    assert len(theirs) >= 6  # gdeval leaves out the queries without a grade above 0
    ours = run.rank_metrics.evaluate(f"err@{k}", doc="doc", ties="doc", qrels=qrels)
    values = dict(zip(ours["query"], ours[f"err@{k}"], strict=True))
    for query, value in theirs.items():
        assert values[query] == pytest.approx(value, abs=5.1e-6), query


def test_err_and_nerr_by_hand() -> None:
    """Grades 0, 4, 2 by descending score: R = 0, 15/16, 3/16.  ERR = 15/16 / 2 + 3/16 / 3 x (1 - 15/16)
    = 0.46875 + 0.00390625; the ideal order 4, 2, 0 gives 15/16 + 3/16 / 2 x 1/16 = 0.943359375.  A query
    whose grades are all 0 has ERR 0 and no nERR (no_relevant)."""
    frame = pl.DataFrame(
        {"query": [1, 1, 1, 2, 2], "doc": list("abcxy"), "score": [3.0, 2, 1, 2, 1], "relevance": [0, 4, 2, 0, 0]}
    )
    result = frame.rank_metrics.evaluate(ERR_NAMES, doc="doc", ties="doc", no_relevant=None)
    assert result.row(0, named=True) == pytest.approx(
        {
            "query": 1,
            "err": 0.47265625,
            "err@1": 0.0,
            "err@2": 0.46875,
            "nerr": 0.47265625 / 0.943359375,
            "nerr@2": 0.46875 / 0.943359375,
        },
        rel=1e-15,
    )
    assert result.row(1) == (2, 0.0, 0.0, 0.0, None, None)


def test_with_judgments_the_ideal_comes_from_every_judged_document() -> None:
    """q1 retrieves a (unjudged), b (grade 1); its qrels also judge z at 3 (not retrieved) and c at -1
    (pooled, not assessed: grade 0).  ERR = 1/16 / 2; the ideal order z, b gives 7/16 + 1/16 / 2 x 9/16.
    q2 is judged but missing from the run: with missing_queries='zero' it scores 0 on both."""
    run = pl.DataFrame({"query": [1, 1], "doc": ["a", "b"], "score": [2.0, 1.0]})
    qrels = pl.DataFrame({"query": [1, 1, 1, 2], "doc": ["b", "z", "c", "q"], "relevance": [1, 3, -1, 2]})
    result = run.rank_metrics.evaluate(
        ["err", "nerr", "err@1"], doc="doc", ties="doc", qrels=qrels, missing_queries="zero"
    )
    ideal = 7 / 16 + (1 / 16) / 2 * (9 / 16)
    assert result.row(0) == pytest.approx((1, 1 / 32, (1 / 32) / ideal, 0.0), rel=1e-15)
    assert result.row(1) == (2, 0.0, 0.0, 0.0)


def test_fewer_documents_than_the_cutoff_score_the_whole_list() -> None:
    frame = pl.DataFrame({"query": [1, 1], "score": [2.0, 1.0], "relevance": [1, 3]})
    result = frame.rank_metrics.evaluate(["err", "err@50", "nerr@50"], ties="input")
    assert result["err"].item() == result["err@50"].item() == pytest.approx(err_by_hand([1, 3]), rel=1e-15)
    assert result["nerr@50"].item() == pytest.approx(err_by_hand([1, 3]) / err_by_hand([3, 1]), rel=1e-15)


@pytest.mark.parametrize("grades", [[0, 1, 2, 3, 4], [2, 2, 0, 4, 1, 1], [3, 0.5, 2.5, 0]])
def test_the_ideal_is_the_best_order_and_the_bounds_are_the_best_and_worst(grades: list[float]) -> None:
    """Over every order of the list (all tied): the largest ERR is the ideal nERR divides by, and
    ties='optimistic' / 'pessimistic' give the largest and smallest (a cut-off of 3 included)."""
    for k in (None, 3):
        values = [err_by_hand(list(order), k) for order in itertools.permutations(grades)]
        frame = pl.DataFrame(
            {"query": [1] * len(grades), "score": [1.0] * len(grades), "relevance": [float(g) for g in grades]}
        )
        name = "err" if k is None else f"err@{k}"
        nerr = "nerr" if k is None else f"nerr@{k}"
        best = frame.rank_metrics.evaluate([name, nerr], ties="optimistic")
        worst = frame.rank_metrics.evaluate([name, nerr], ties="pessimistic")
        assert best[name].item() == pytest.approx(max(values), rel=1e-14)
        assert worst[name].item() == pytest.approx(min(values), rel=1e-14)
        assert best[nerr].item() == pytest.approx(1.0, rel=1e-14)
        assert worst[nerr].item() == pytest.approx(min(values) / max(values), rel=1e-14)


def test_ties_average_is_refused_by_name() -> None:
    frame = pl.DataFrame({"query": [1, 1], "score": [1.0, 1.0], "relevance": [1, 3]})
    for name in ("err@5", "nerr"):
        with pytest.raises(ValueError, match=rf"^{name} has no exact expectation under ties='average'"):
            frame.rank_metrics.evaluate(name)


def test_tie_bounds_with_a_gain_mapping_that_does_not_order_the_grades_are_refused() -> None:
    """The bounds order a tie block by gain: with a mapping where grade 1 gains less than grade 0 (or no more
    than an unjudged document, 0), that is not ERR's best order."""
    frame = pl.DataFrame({"query": [1, 1], "score": [1.0, 1.0], "relevance": [0, 1]})
    for gain in ({0: 2.0, 1: 1.0}, [0.0, 0.0]):
        with pytest.raises(ValueError, match=r"^err@3 orders a tie block by relevance grade, but ties='optimistic'"):
            frame.rank_metrics.evaluate(["ndcg", "err@3"], ties="optimistic", gain=gain)
    # an increasing mapping orders the grades: accepted, and ERR ignores the gains themselves
    accepted = frame.rank_metrics.evaluate(["err"], ties="optimistic", gain={0: 0.5, 1: 7.0})
    assert accepted["err"].item() == pytest.approx(stop(1), rel=1e-15)
    # a deterministic tie mode reads no gain order
    assert frame.rank_metrics.evaluate(["err"], ties="input", gain=[0.0, 0.0])["err"].item() == stop(1) / 2


@pytest.mark.parametrize("grade", [5, -1, 4.5])
def test_grades_outside_0_to_4_are_refused(grade: float) -> None:
    frame = pl.DataFrame({"query": [7, 7], "score": [2.0, 1.0], "relevance": [1.0, grade]})
    with pytest.raises(
        ValueError, match=rf"relevance {grade:g}(\.0)? \(column 'relevance', query 7\) is outside ERR's grades 0..4"
    ):
        frame.rank_metrics.evaluate("err@3", ties="input")


def test_judged_grades_above_4_are_refused_and_negative_ones_are_unjudged() -> None:
    run = pl.DataFrame({"query": [1, 1], "doc": ["a", "b"], "score": [2.0, 1.0]})
    too_high = pl.DataFrame({"query": [1], "doc": ["z"], "relevance": [5]})
    with pytest.raises(ValueError, match=r"qrels relevance 5 \(query 1\) is above ERR's largest grade 4"):
        run.rank_metrics.evaluate("nerr@3", doc="doc", qrels=too_high, ties="doc")
    negative = pl.DataFrame({"query": [1, 1], "doc": ["a", "b"], "relevance": [-2, 2]})
    result = run.rank_metrics.evaluate("err", doc="doc", qrels=negative, ties="doc")
    assert result["err"].item() == pytest.approx(stop(2) / 2, rel=1e-15)
    assert math.isfinite(result["err"].item())


@pytest.mark.parametrize(("grades", "start"), [([0, 1, 2, 4], 0), ([3, 3, 1], 2), ([4, 0, 0, 2, 1], 5)])
def test_the_tie_block_expectation_the_refusal_cites_is_polynomial_but_needs_symmetric_polynomials(
    grades: list[int], start: int
) -> None:
    """The docstring's formula for a tie block at positions start+1..start+n (continuation 1 above it): the
    mean over its n! orders of its ERR part equals sum_t [(n-t+1) e_{t-1} - t e_t] / (n C(n-1, t-1) (s+t)),
    e_j the elementary symmetric polynomials of x_i = 1 - R_i: exact, but no fixed set of block sums gives
    every e_j, so the plan refuses ties='average'."""
    n = len(grades)
    x = [1.0 - stop(g) for g in grades]
    e = [1.0] + [0.0] * n
    for value in x:  # e_j of the x seen so far, highest j first
        for j in range(n, 0, -1):
            e[j] += value * e[j - 1]
    formula = sum(
        ((n - t + 1) * e[t - 1] - t * (e[t] if t <= n else 0.0)) / (n * math.comb(n - 1, t - 1) * (start + t))
        for t in range(1, n + 1)
    )
    orders = list(itertools.permutations(grades))
    brute_force = 0.0
    for order in orders:
        continuation = 1.0
        for offset, grade in enumerate(order, start=1):
            brute_force += stop(grade) * continuation / (start + offset)
            continuation *= 1.0 - stop(grade)
    assert formula == pytest.approx(brute_force / len(orders), rel=1e-12)
