"""Random runs and judgments shared by the tests that compare the package with trec_eval and ranx."""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import strategies as st

Run = dict[str, dict[str, float]]
Qrels = dict[str, dict[str, int]]

# doc ids whose string order differs from any numeric or case-folded order (trec_eval sorts docnos as strings)
DOC_IDS = ["D1", "D10", "D2", "D9", "d1", "a", "B", "b-3", "b_3", "Z", "x10", "x9"]
SCORES = [0.0, 0.25, 0.5, 1.0, 1.5, -1.0]


def run_frame(run: Run) -> pl.DataFrame:
    """A run as the long frame the package takes: query, doc, score."""
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    return pl.DataFrame(rows, schema={"query": pl.String, "doc": pl.String, "score": pl.Float64}, orient="row")


def qrels_frame(qrels: Qrels) -> pl.DataFrame:
    """Judgments as a frame: query, doc, relevance."""
    rows = [(q, d, r) for q, docs in qrels.items() for d, r in docs.items()]
    return pl.DataFrame(rows, schema={"query": pl.String, "doc": pl.String, "relevance": pl.Int64}, orient="row")


@st.composite
def run_and_qrels(draw: st.DrawFn, max_run_docs: int = 10) -> tuple[Run, Qrels]:
    """A run and judgments over 1-5 queries: levels -3..3, unjudged retrieved docs, judged docs not
    retrieved, judged queries missing from the run, run queries without judgments, tied scores.

    Every judged query keeps one judgment >= 0: pytrec_eval-terrier 0.5.11 hangs or segfaults, some
    evaluations later, after qrels where a query's judgments are all negative (the tests of all-negative
    judgments build those queries themselves)."""
    run: Run = {}
    qrels: Qrels = {}
    for q in range(draw(st.integers(1, 5))):
        query = f"Q{q}"
        in_run, judged = draw(st.sampled_from([(True, True), (True, True), (True, False), (False, True)]))
        if in_run:
            docs = draw(st.lists(st.sampled_from(DOC_IDS), min_size=1, max_size=max_run_docs, unique=True))
            run[query] = {d: draw(st.sampled_from(SCORES)) for d in docs}
        if judged:
            docs = draw(st.lists(st.sampled_from(DOC_IDS), min_size=1, max_size=10, unique=True))
            qrels[query] = {d: draw(st.integers(-3, 3)) for d in docs}
            if max(qrels[query].values()) < 0:
                qrels[query][docs[0]] = draw(st.integers(0, 3))
    return run, qrels


def tie_free_case(seed: int) -> tuple[Run, Qrels]:
    """Tie-free runs over 12 queries, the same queries judged; judged-but-unretrieved docs; every 4th query
    has a relevant document, the others may have none."""
    rng = np.random.default_rng(seed)
    run: Run = {}
    qrels: Qrels = {}
    for q in range(12):
        docs = [f"d{i}" for i in rng.permutation(40)[: rng.integers(1, 30)]]
        scores = rng.permutation(len(docs)) / 7.0
        run[f"q{q:02d}"] = {d: float(s) for d, s in zip(docs, scores, strict=True)}
        pool = docs + [f"x{i}" for i in range(5)]
        judged = rng.choice(pool, size=min(len(pool), int(rng.integers(1, 10))), replace=False)
        levels = rng.integers(0 if q % 4 else 1, 4, len(judged))
        qrels[f"q{q:02d}"] = {str(d): int(level) for d, level in zip(judged, levels, strict=True)}
    return run, qrels


def ranx_values(run: Run, qrels: Qrels, metrics: list[str]) -> dict[str, dict[str, float]]:
    """ranx's per-query values: {query: {metric: value}} (skips where ranx is not installed)."""
    ranx = pytest.importorskip("ranx", reason="ranx is a test dependency (pip install '.[test]')")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba type-safety warnings inside ranx
        ranx_run = ranx.Run(run)
        scores = ranx.evaluate(ranx.Qrels(qrels), ranx_run, metrics, return_mean=False)
    if not isinstance(scores, dict):  # one metric: ranx returns the bare array
        scores = {metrics[0]: scores}
    return {
        query: {name: float(values[i]) for name, values in scores.items()} for i, query in enumerate(ranx_run.keys())
    }


# the measures whose summary is not the mean, with AP's (mean) beside them: our names -> pytrec_eval's
SUMMARY_MEASURES = {"gm_map": "gm_map", "gm_bpref": "gm_bpref", "num_ret": "num_ret", "num_rel_ret": "num_rel_ret"}
SUMMARY_MEASURES["ap"] = "map"


def pytrec_eval_per_query(run: pl.DataFrame, unretrieved_relevant: bool) -> tuple[Qrels, dict[str, dict[str, float]]]:
    """The judgments of a (query, doc, relevance, score) frame, each query with one relevant document it does
    not retrieve when `unretrieved_relevant`, and pytrec_eval's per-query values of `SUMMARY_MEASURES` on them
    (its gm_* per query are trec_eval's log(max(AP, 1e-5)))."""
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec_eval-terrier is a test dependency")
    qrels: Qrels = {q: {} for q in run["query"]}
    for row in run.iter_rows(named=True):
        qrels[row["query"]][row["doc"]] = row["relevance"]
    if unretrieved_relevant:  # judgments of documents the run did not retrieve count in R
        for query in qrels:
            qrels[query]["unretrieved"] = 1
    per_query = pytrec_eval.RelevanceEvaluator(qrels, set(SUMMARY_MEASURES.values())).evaluate(
        {q: dict(zip(part["doc"], part["score"], strict=True)) for (q,), part in run.group_by("query")}
    )
    return qrels, per_query
