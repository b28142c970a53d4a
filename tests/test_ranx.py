"""ranx's `ndcg`, `ndcg_burges` and `mrr` reproduced with qrels= on tie-free runs.

ranx has no tie handling: tied documents come out of its (numba, unstable) sort in an order of its own, so
no option reproduces it on tied scores; the last test shows that difference.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import polars as pl
import pytest

import lodestar_polars  # noqa: F401  (registers .rank_metrics)
from tests.cases import Qrels, Run, ranx_values

ranx = pytest.importorskip("ranx", reason="ranx is a test dependency (pip install '.[test]')")

CUTOFFS = [1, 3, 5, 10]


def random_case(seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A tie-free run and judgments over the same queries (unjudged, judged-but-unretrieved and all-zero)."""
    rng = np.random.default_rng(seed)
    run_rows, qrels_rows = [], []
    for q in range(12):
        query = f"q{q}"
        docs = [f"d{i}" for i in rng.permutation(40)[: rng.integers(1, 30)]]
        scores = rng.permutation(len(docs)) / 7.0
        run_rows += [(query, doc, float(score)) for doc, score in zip(docs, scores, strict=True)]
        pool = docs + [f"x{i}" for i in range(5)]
        judged = rng.choice(pool, size=min(len(pool), int(rng.integers(1, 10))), replace=False)
        levels = rng.integers(0 if q % 4 else 1, 4, len(judged))  # every 4th query has a relevant document
        qrels_rows += [(query, str(doc), int(level)) for doc, level in zip(judged, levels, strict=True)]
    run = pl.DataFrame(run_rows, schema=["query", "doc", "score"], orient="row")
    qrels = pl.DataFrame(qrels_rows, schema=["query", "doc", "relevance"], orient="row")
    return run, qrels


def ranx_scores(run: pl.DataFrame, qrels: pl.DataFrame, metrics: list[str]) -> dict[str, np.ndarray]:
    run_dict: Run = {}
    for query, doc, score in run.iter_rows():
        run_dict.setdefault(query, {})[doc] = score
    qrels_dict: Qrels = {}
    for query, doc, level in qrels.iter_rows():
        qrels_dict.setdefault(query, {})[doc] = level
    values = ranx_values(run_dict, qrels_dict, metrics)
    queries = sorted(values)  # the package sorts by query
    return {name: np.array([values[query][name] for query in queries]) for name in metrics}


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(("ranx_name", "gain"), [("ndcg", "linear"), ("ndcg_burges", "exponential")])
def test_ranx_ndcg_is_ndcg_with_qrels(seed: int, ranx_name: str, gain: str) -> None:
    run, qrels = random_case(seed)
    expected = ranx_scores(run, qrels, [ranx_name] + [f"{ranx_name}@{k}" for k in CUTOFFS])
    ours = run.rank_metrics.ndcg(doc="doc", ties="input", gain=gain, qrels=qrels, k=[None, *CUTOFFS])  # type: ignore[arg-type]
    np.testing.assert_allclose(ours["ndcg"].to_numpy(), expected[ranx_name], rtol=1e-12, atol=1e-12)
    for k in CUTOFFS:
        np.testing.assert_allclose(ours[f"ndcg@{k}"].to_numpy(), expected[f"{ranx_name}@{k}"], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_ranx_mrr_is_reciprocal_rank_with_qrels(seed: int) -> None:
    run, qrels = random_case(seed)
    expected = ranx_scores(run, qrels, ["mrr"] + [f"mrr@{k}" for k in CUTOFFS])
    ours = run.rank_metrics.reciprocal_rank(doc="doc", ties="input", qrels=qrels, k=[None, *CUTOFFS])
    np.testing.assert_allclose(ours["reciprocal_rank"].to_numpy(), expected["mrr"], rtol=1e-12, atol=1e-12)
    for k in CUTOFFS:
        np.testing.assert_allclose(
            ours[f"reciprocal_rank@{k}"].to_numpy(), expected[f"mrr@{k}"], rtol=1e-12, atol=1e-12
        )


def test_ranx_ignores_ties_so_row_order_changes_its_number() -> None:
    """The difference nothing can remove: ranx scores tied documents in an order of its own sort."""
    qrels = pl.DataFrame({"query": ["q"], "doc": ["b"], "relevance": [1]})
    first = pl.DataFrame({"query": ["q", "q"], "doc": ["a", "b"], "score": [0.5, 0.5]})
    second = first.reverse()
    a, b = (ranx_scores(run, qrels, ["ndcg"])["ndcg"][0] for run in (first, second))
    assert a != b  # the same run, another insertion order: another number
    orders = {
        round(first.rank_metrics.ndcg(doc="doc", ties=ties, qrels=qrels)["ndcg"].item(), 12)
        for ties in ("optimistic", "pessimistic")
    }
    assert {round(a, 12), round(b, 12)} == orders
    averaged = first.rank_metrics.ndcg(doc="doc", qrels=qrels)["ndcg"].item()
    assert averaged == pytest.approx((a + b) / 2, abs=1e-12)


def _differing_queries(seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """random_case with one judged query dropped from the run and one unjudged query added to it."""
    run, qrels = random_case(seed)
    dropped = f"q{seed % 12}"
    extra = pl.DataFrame({"query": ["extra", "extra"], "doc": ["d1", "d2"], "score": [1.0, 0.5]})
    return pl.concat([run.filter(pl.col("query") != dropped), extra]), qrels


def _ranx_dicts(run: pl.DataFrame, qrels: pl.DataFrame) -> tuple[Any, Any]:
    run_dict: dict[str, dict[str, float]] = {}
    for query, doc, score in run.iter_rows():
        run_dict.setdefault(query, {})[doc] = score
    qrels_dict: dict[str, dict[str, int]] = {}
    for query, doc, level in qrels.iter_rows():
        qrels_dict.setdefault(query, {})[doc] = level
    return ranx.Run(run_dict), ranx.Qrels(qrels_dict)


@pytest.mark.parametrize("seed", range(6))
def test_ranx_make_comparable_is_missing_queries_zero(seed: int) -> None:
    # ranx refuses run and qrels over different queries unless make_comparable=True, which scores a judged
    # query missing from the run 0 and drops run queries without judgments: missing_queries="zero"
    run, qrels = _differing_queries(seed)
    metrics = ["ndcg", "ndcg@3", "ndcg_burges@5", "mrr", "mrr@3"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba type-safety warnings inside ranx
        with pytest.raises(AssertionError, match="make_comparable=True"):
            ranx.evaluate(*reversed(_ranx_dicts(run, qrels)), metrics)
        expected = ranx.evaluate(*reversed(_ranx_dicts(run, qrels)), metrics, make_comparable=True)
    options: dict[str, Any] = {"doc": "doc", "ties": "input", "qrels": qrels}
    for missing, matches in (("zero", True), ("skip", False)):
        linear = run.rank_metrics.ndcg_mean(k=[None, 3], missing_queries=missing, **options)
        exponential = run.rank_metrics.ndcg_mean(k=5, gain="exponential", missing_queries=missing, **options)
        rr = run.rank_metrics.reciprocal_rank_mean(k=[None, 3], missing_queries=missing, **options)
        ours = {
            "ndcg": linear.item(0, "ndcg"),
            "ndcg@3": linear.item(0, "ndcg@3"),
            "ndcg_burges@5": exponential.item(0, "ndcg@5"),
            "mrr": rr.item(0, "reciprocal_rank"),
            "mrr@3": rr.item(0, "reciprocal_rank@3"),
        }
        if matches:
            assert ours == pytest.approx({name: float(value) for name, value in expected.items()}, rel=1e-12, abs=1e-12)
        else:
            assert ours["ndcg"] != pytest.approx(float(expected["ndcg"]), rel=1e-6)
