"""trec_eval 10's yaap and ideal_dcg (in its measure table, outside all_trec), from `evaluate` and as
expressions: yaap against hand derivations and every tied order enumerated for its bounds, ideal_dcg against
scikit-learn's `dcg_score` of the ideal order.  Both, and `dcg`, are compared with the trec_eval binary by
`tests/test_trec_eval_binary.py` (each measure of the command line's table on random runs; their gain pairs in
its parameter list), the expressions by `tests/test_exprs_oracles.py`."""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from sklearn.metrics import dcg_score

import lodestar_polars  # noqa: F401  (registers .rank_metrics)
from lodestar_polars import exprs

EXACT = 1e-12


def _yaap(found: float, relevant: float) -> float:
    return math.log((1.0 + found) / (1.0 + relevant - found))


def test_yaap_by_hand() -> None:
    """q1 ranks a, b, c, d with b, c, d relevant (R = 3): S = 1/2 + 2/3 + 3/4 = 23/12, yaap = log((1 + 23/12) /
    (1 + 3 - 23/12)) = log(35/25) = log(1.4).  q2 has no relevant row (R = 0, S = 0): log(1 / 1) = 0, as
    trec_eval computes it.  q3 ranks its two relevant documents first: S = 2, log(3 / 1) = log 3.  q4 ranks its
    relevant document last of three: S = 1/3, log((4/3) / (5/3)) = log(0.8)."""
    frame = pl.DataFrame(
        {
            "query": [1, 1, 1, 1, 2, 2, 3, 3, 3, 4, 4, 4],
            "doc": ["a", "b", "c", "d", "a", "b", "a", "b", "c", "a", "b", "c"],
            "relevance": [0, 2, 1, 1, 0, 0, 1, 3, 0, 0, 0, 2],
            "score": [4.0, 3.0, 2.0, 1.0, 2.0, 1.0, 3.0, 2.0, 1.0, 3.0, 2.0, 1.0],
        }
    )
    result = frame.rank_metrics.evaluate(["yaap"], ties="doc", doc="doc")
    assert result["yaap"].to_list() == pytest.approx(
        [math.log(1.4), 0.0, math.log(3.0), math.log(0.8)], rel=EXACT, abs=EXACT
    )


def test_yaap_with_judgments_counts_relevant_documents_not_retrieved() -> None:
    """With qrels=, R counts every relevant judged document: the run finds d1 first of its two rows, R = 3
    (d1, d7, d9 judged relevant): S = 1, log(2 / 3).  A judged query missing from the run (missing_queries=
    "zero") is an empty ranking, S = 0: log(1 / (1 + R)) with R = 2, the value trec_eval -c prints for it."""
    run = pl.DataFrame({"query": ["q", "q"], "doc": ["d1", "d2"], "score": [2.0, 1.0]})
    qrels = pl.DataFrame(
        {
            "query": ["q", "q", "q", "q", "m", "m"],
            "doc": ["d1", "d2", "d7", "d9", "x", "y"],
            "relevance": [1, 0, 2, 1, 1, 1],
        }
    )
    result = run.rank_metrics.evaluate(["yaap"], qrels=qrels, doc="doc", ties="doc", missing_queries="zero")
    values = dict(zip(result["query"], result["yaap"], strict=True))
    assert values["q"] == pytest.approx(math.log(2.0 / 3.0), rel=EXACT)
    assert values["m"] == pytest.approx(math.log(1.0 / 3.0), rel=EXACT)


def test_yaap_bounds_are_its_greatest_and_least_value_over_every_tied_order() -> None:
    """Every order of the tied rows enumerated (ties="input" on each permutation): the optimistic and
    pessimistic values are the greatest and least yaap among them."""
    rng = np.random.default_rng(5)
    for _ in range(30):
        n = int(rng.integers(2, 7))
        scores = rng.integers(0, 3, n).astype(float).tolist()
        levels = rng.integers(0, 3, n).tolist()
        frame = pl.DataFrame({"query": [1] * n, "doc": [f"d{i}" for i in range(n)], "relevance": levels})
        frame = frame.with_columns(score=pl.Series(scores))
        # every order as its own query of one frame (one plan, not one per order): ties="input" ranks each
        # query's tied rows in their order in the frame
        orders = pl.concat(
            frame[list(order)].with_columns(query=pl.lit(number))
            for number, order in enumerate(itertools.permutations(range(n)))
        )
        values = orders.rank_metrics.evaluate(["yaap"], ties="input")["yaap"].to_list()
        assert len(values) == math.factorial(n)
        for ties, extreme in (("optimistic", max(values)), ("pessimistic", min(values))):
            evaluated = frame.rank_metrics.evaluate(["yaap"], ties=ties)["yaap"].item()
            expressed = frame.select(exprs.yaap(ties=ties)).item()
            assert evaluated == pytest.approx(extreme, rel=EXACT, abs=EXACT), ties
            assert expressed == pytest.approx(extreme, rel=EXACT, abs=EXACT), ties


def test_yaap_refuses_tie_averaging_naming_the_measure() -> None:
    frame = pl.DataFrame({"query": [1, 1], "relevance": [1, 0], "score": [1.0, 1.0]})
    with pytest.raises(ValueError, match=r"yaap has no exact expectation under ties='average'.*ties='doc'"):
        frame.rank_metrics.evaluate(["yaap"])
    with pytest.raises(ValueError, match=r"yaap has no exact expectation under ties='average'.*ties='doc'"):
        exprs.yaap()


@pytest.mark.parametrize("gain", ["linear", "exponential"])
@pytest.mark.parametrize("seed", range(4))
def test_ideal_dcg_is_scikit_learns_dcg_of_the_ideal_order(seed: int, gain: str) -> None:
    """ideal_dcg@k is NDCG's denominator: scikit-learn's dcg_score with the grades as their own scores (ties among
    equal grades cannot change it), on ragged queries with tied scores; every tie mode gives the same value."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 12, 25)
    query = np.repeat(np.arange(len(lengths)), lengths)
    relevance = rng.integers(0, 5, len(query))
    frame = pl.DataFrame({"query": query, "doc": np.arange(len(query)), "relevance": relevance})
    frame = frame.with_columns(score=pl.Series(rng.integers(0, 3, len(query)).astype(float)))
    cutoffs = [1, 3, 5, None]
    names = [f"ideal_dcg@{k}" if k is not None else "ideal_dcg" for k in cutoffs]
    results = {
        ties: frame.rank_metrics.evaluate(names, ties=ties, doc="doc", gain=gain)
        for ties in ("average", "doc", "optimistic", "pessimistic")
    }
    for result in results.values():
        assert_frame_equal(result, results["average"], rel_tol=EXACT, abs_tol=EXACT, check_exact=False)
    expressed = frame.group_by("query", maintain_order=True).agg(
        exprs.ideal_dcg(k=k, gain=gain).alias(name) for k, name in zip(cutoffs, names, strict=True)
    )
    assert_frame_equal(expressed, results["average"], rel_tol=EXACT, abs_tol=EXACT, check_exact=False)
    result = results["average"]
    for q, rows in frame.group_by("query", maintain_order=True):
        grades = rows["relevance"].to_numpy().astype(float)
        gains = grades if gain == "linear" else 2.0**grades - 1.0
        row = result.filter(pl.col("query") == q[0])
        for k, name in zip(cutoffs, names, strict=True):
            # scikit-learn refuses a single document: its ideal DCG is its gain
            expected = gains[0] if len(gains) == 1 else dcg_score([gains], [gains], k=k)
            assert row[name].item() == pytest.approx(expected, rel=EXACT, abs=EXACT), (q, name)
