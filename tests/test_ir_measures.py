"""ir_measures' `nDCG`, `nDCG@k` and `RR` (its pytrec_eval provider) against this package, run directly.

Found by running ir_measures 0.4: it scores every judged query, and a judged query missing from the run
scores 0 (trec_eval's `-c`); run queries without judgments are left out.  So it matches
`missing_queries="zero"` with trec_eval's options (`qrels=`, `doc=`, `ties="doc"`, linear gain), not the
default, which leaves missing queries out of the mean.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import lodestar_polars  # noqa: F401  (registers .rank_metrics)

ir_measures = pytest.importorskip("ir_measures", reason="ir-measures is a test dependency (pip install '.[test]')")

CUTOFFS = [1, 3, 5, 10]
EXACT = 1e-12
# doc ids whose text order differs from their numeric or case-folded order (trec_eval compares strings)
DOC_IDS = ["D1", "D10", "D2", "D9", "d1", "9", "100", "a", "B", "b-3", "b_3", "x10", "x9"]


def random_case(seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A run with tied scores and judgments: judged queries missing from the run, run queries without
    judgments, judged documents not retrieved, retrieved documents not judged, queries without a relevant
    document.  Every judged query keeps a level >= 0 (pytrec_eval-terrier misbehaves on all-negative ones)."""
    rng = np.random.default_rng(seed)
    run_rows, qrels_rows = [], []
    for q in range(int(rng.integers(3, 9))):
        query = f"q{q}"
        in_run, judged = [(True, True), (True, True), (True, False), (False, True)][int(rng.integers(0, 4))]
        judged = judged or q == 0  # at least one judged query (see test_no_judged_query)
        if in_run:
            docs = rng.choice(DOC_IDS, size=int(rng.integers(1, len(DOC_IDS) + 1)), replace=False)
            scores = rng.choice([0.0, 0.5, 1.0, 1.5, 2.0, -1.0], size=len(docs))
            run_rows += [(query, str(doc), float(score)) for doc, score in zip(docs, scores, strict=True)]
        if judged:
            docs = rng.choice(DOC_IDS, size=int(rng.integers(1, 8)), replace=False)
            levels = rng.integers(-1, 4, len(docs))
            levels[0] = max(levels[0], 0)
            qrels_rows += [(query, str(doc), int(level)) for doc, level in zip(docs, levels, strict=True)]
    run = pl.DataFrame(run_rows, schema=["query", "doc", "score"], orient="row")
    qrels = pl.DataFrame(qrels_rows, schema={"query": pl.String, "doc": pl.String, "relevance": pl.Int64}, orient="row")
    return run, qrels


def measures() -> list[object]:
    return [ir_measures.nDCG, *(ir_measures.nDCG @ k for k in CUTOFFS), ir_measures.RR]


def our_name(measure: object) -> str:
    return {"nDCG": "ndcg", "RR": "reciprocal_rank"}.get(str(measure), str(measure).replace("nDCG", "ndcg"))


def theirs(run: pl.DataFrame, qrels: pl.DataFrame) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """ir_measures' per-query values {query: {our name: value}} and its means {our name: value}."""
    qrels_list = [ir_measures.Qrel(q, d, r) for q, d, r in qrels.iter_rows()]
    run_list = [ir_measures.ScoredDoc(q, d, s) for q, d, s in run.iter_rows()]
    per_query: dict[str, dict[str, float]] = {}
    for value in ir_measures.iter_calc(measures(), qrels_list, run_list):
        per_query.setdefault(value.query_id, {})[our_name(value.measure)] = value.value
    means = {our_name(m): v for m, v in ir_measures.calc_aggregate(measures(), qrels_list, run_list).items()}
    return per_query, means


def ours_ndcg_and_rr(
    run: pl.DataFrame, qrels: pl.DataFrame, missing: str
) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    options = {"doc": "doc", "ties": "doc", "qrels": qrels, "missing_queries": missing}
    ndcg = run.rank_metrics.ndcg(k=[None, *CUTOFFS], **options)  # type: ignore[arg-type]
    rr = run.rank_metrics.reciprocal_rank(threshold=0, **options)  # type: ignore[arg-type]
    per_query = {
        row["query"]: {**{name: row[name] for name in row if name.startswith("ndcg")}, "reciprocal_rank": rr_row}
        for row, rr_row in zip(ndcg.iter_rows(named=True), rr["reciprocal_rank"], strict=True)
    }
    assert ndcg["query"].to_list() == rr["query"].to_list()
    ndcg_mean = run.rank_metrics.ndcg_mean(k=[None, *CUTOFFS], **options)  # type: ignore[arg-type]
    rr_mean = run.rank_metrics.reciprocal_rank_mean(threshold=0, **options)  # type: ignore[arg-type]
    means = {name: ndcg_mean.item(0, name) for name in ndcg_mean.columns if name.startswith("ndcg")}
    means["reciprocal_rank"] = rr_mean.item(0, "reciprocal_rank")
    return per_query, means


def judged_missing(run: pl.DataFrame, qrels: pl.DataFrame) -> set[str]:
    return set(qrels["query"]) - set(run["query"])


@pytest.mark.parametrize("seed", range(40))
def test_ir_measures_is_missing_queries_zero(seed: int) -> None:
    run, qrels = random_case(seed)
    expected_per_query, expected_means = theirs(run, qrels)
    per_query, means = ours_ndcg_and_rr(run, qrels, "zero")
    assert per_query.keys() == expected_per_query.keys() == set(qrels["query"])
    for query, values in per_query.items():
        assert values == pytest.approx(expected_per_query[query], rel=EXACT, abs=EXACT), query
    assert means == pytest.approx(expected_means, rel=EXACT, abs=EXACT)


def test_the_cases_have_missing_queries_unjudged_queries_and_ties() -> None:
    cases = [random_case(seed) for seed in range(40)]
    assert sum(bool(judged_missing(run, qrels)) for run, qrels in cases) >= 10
    assert sum(bool(set(run["query"]) - set(qrels["query"])) for run, qrels in cases) >= 10
    tied = [run.group_by("query", "score").len()["len"].max() for run, _ in cases if run.height]
    assert sum(count > 1 for count in tied) >= 30


def test_the_default_skips_the_missing_queries_ir_measures_counts() -> None:
    run = pl.DataFrame({"query": ["1", "1", "2"], "doc": ["a", "b", "a"], "score": [1.0, 1.0, 0.5]})
    qrels = pl.DataFrame({"query": ["1", "1", "3"], "doc": ["a", "z", "x"], "relevance": [1, 2, 1]})
    _, expected = theirs(run, qrels)
    _, zero = ours_ndcg_and_rr(run, qrels, "zero")
    _, skip = ours_ndcg_and_rr(run, qrels, "skip")
    assert zero == pytest.approx(expected, rel=EXACT, abs=EXACT)
    # query 3 is judged, not in the run: 0 for ir_measures, left out by "skip" (query 1 alone)
    assert skip["ndcg"] == pytest.approx(2 * expected["ndcg"], rel=EXACT)
    default = run.rank_metrics.ndcg_mean(doc="doc", ties="doc", qrels=qrels)
    assert default.item(0, "ndcg") == pytest.approx(skip["ndcg"], rel=EXACT)


def test_no_judged_query() -> None:
    # ir_measures' means are NaN; here the mean raises rather than return NaN
    run = pl.DataFrame({"query": ["1"], "doc": ["a"], "score": [1.0]})
    qrels = pl.DataFrame({"query": ["2"], "doc": ["a"], "relevance": [1]}).clear()
    _, expected = theirs(run, qrels)
    assert np.isnan(expected["ndcg"])
    with pytest.raises(ValueError, match="no query to average"):
        run.rank_metrics.ndcg_mean(doc="doc", ties="doc", qrels=qrels, missing_queries="zero")
