"""nERR@k (`evaluate`'s "nerr@k" and `exprs.nerr`) against two real implementations.

pyNTCIREVAL (the Python port of Sakai's NTCIREVAL), `metrics.nERR(xrelnum, grades, cutoff)`, read from its
source (metrics/metric.py, grade_metric.py, normalized_metric.py, nerr.py, labeler.py):
- `compute` walks the labelled ranked list it is given, in that order, adding gain(p) x discount(p) with
  gain = `_err_grade` = grades[level - 1] / (grades[-1] + 1) (0 at level 0 or unjudged: `Labeler.label` gives
  a retrieved document without a judgment the level None, read as 0) and discount = 1 / rank x the product of
  (1 - gain) over the ranks above: Chapelle's cascade.  With grades = [1, 3, 7, 15], the gain values 2**l - 1
  of levels 1..4 (so grades[-1] + 1 = 16 = 2**4 whatever the query's largest level), the stopping probability
  of level l is (2**l - 1) / 2**4: ours (gdeval's convention, `measures/_base.stopping_probability`).
- It stops after rank `cutoff` (`if self.cutoff and rank >= cutoff: break`), None being the whole list, and
  the ideal (`NormalizedMetric.get_ideal_ranked_list`) is every judged document (xrelnum counts the judged
  documents of each level, level 0 included, retrieved or not) sorted by level descending, cut at the same
  cutoff, as ours.  nERR = ERR / ideal ERR; a query without a level above 0 divides 0 by 0 (numpy's NaN):
  we score it `no_relevant` (None here), checked separately.
- Levels are integers 0..4: NTCIREVAL has no negative level, so a document judged -1 (ours: grade 0, R = 0) is
  handed to it at level 0.  It takes a ranked list, not scores: the list given is the run sorted by score
  descending, ties by doc id descending, the order ties="doc" defines (trec_eval's, checked elsewhere against
  the binary and gdeval); untied scores leave no choice at all.  So the two compute the same formula on every
  input here, and agree to rounding.

pyndeval (ndeval.c, TREC Web track's diversity evaluation), nERR-IA@k with a single subtopic, read from
src/ndeval.c: judgments are binary (`relevance >= relevance_level` -> 1); `computeERR` adds, at rank i, for
each subtopic the document is relevant to, subtopicGain (starting at 1, multiplied by (1 - alpha) after each
relevant document) over i: with one subtopic, sum over relevant ranks p <= k of (1 - alpha)**(relevant above p)
/ p, Chapelle's ERR with stopping probability alpha at a relevant document and 0 elsewhere, divided by alpha.
Its "ideal ideal" division scales the run's and the ideal's ERR@k alike, and `renormalize` divides by the ERR
of the ideal list `idealResult` builds from every judged document (greedy; with one subtopic the relevant ones
first), so nERR-IA@k = ERR@k / ideal ERR@k with R = alpha: ours on grades {0, g} when alpha = (2**g - 1) / 16.
It ranks by score descending (doc id ascending on ties: untied scores here) and computes k <= 20 only.  It
matches only this binary subset: one stopping probability per query, not per grade.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import polars as pl
import pytest

import lodestar_polars  # noqa: F401  (registers .rank_metrics)
from lodestar_polars import exprs

NTCIREVAL_GRADES = [1, 3, 7, 15]  # gain values 2**l - 1 of levels 1..4: stopping probability gain / 16


def random_run(seed: int, tied: bool) -> tuple[pl.DataFrame, pl.DataFrame]:
    """40 ragged queries: a run of 1..24 documents, some unjudged; judgments -1..4 of some retrieved documents
    and some not retrieved.  Scores tied integers 0..5 or untied."""
    rng = np.random.default_rng(seed)
    run_rows, qrels_rows = [], []
    for q in range(40):
        docs = [f"d{i:02d}" for i in rng.permutation(30)[: rng.integers(1, 25)]]
        scores = rng.integers(0, 6, len(docs)).astype(float) if tied else rng.permutation(len(docs)) + 0.5
        run_rows += [(f"q{q}", d, float(s)) for d, s in zip(docs, scores, strict=True)]
        pool = [*docs, "x1", "x2", "x3", "x4"]
        for d in rng.choice(pool, size=int(rng.integers(1, len(pool) + 1)), replace=False):
            qrels_rows.append((f"q{q}", str(d), int(rng.integers(-1, 5))))
    run = pl.DataFrame(run_rows, schema=["query", "doc", "score"], orient="row")
    qrels = pl.DataFrame(qrels_rows, schema=["query", "doc", "relevance"], orient="row")
    return run, qrels


def ranked_docs(run: pl.DataFrame) -> Iterator[tuple[Any, list[str]]]:
    """Each query's documents in ties="doc" order: score descending, then doc id descending."""
    ordered = run.sort(["query", "score", "doc"], descending=[False, True, True], maintain_order=True)
    for (query,), rows in ordered.group_by("query", maintain_order=True):
        yield query, rows["doc"].to_list()


def ntcireval_nerr(run: pl.DataFrame, qrels: pl.DataFrame, k: int | None) -> dict[Any, float | None]:
    """pyNTCIREVAL's nERR@k per query; None where it divides 0 by an ideal ERR of 0 (NaN)."""
    ntcireval = pytest.importorskip("pyNTCIREVAL", reason="pyNTCIREVAL is a test dependency")
    metrics = pytest.importorskip("pyNTCIREVAL.metrics", reason="pyNTCIREVAL is a test dependency")
    judged: dict[Any, dict[str, int]] = {}
    for query, doc, level in qrels.iter_rows():
        judged.setdefault(query, {})[doc] = max(level, 0)  # NTCIREVAL has no negative level
    values: dict[Any, float | None] = {}
    for query, docs in ranked_docs(run):
        labeler = ntcireval.Labeler(judged.get(query, {}))
        xrelnum = labeler.compute_per_level_doc_num(len(NTCIREVAL_GRADES) + 1)
        measure = metrics.nERR(xrelnum, NTCIREVAL_GRADES, k)
        with np.errstate(invalid="ignore"):  # its numpy 0 / 0 where no level is above 0
            value = float(measure.compute(labeler.label(docs)))
        values[query] = None if np.isnan(value) else value
    return values


def assert_equal_values(ours: dict[Any, float | None], theirs: dict[Any, float | None]) -> None:
    assert ours.keys() == theirs.keys()
    assert sum(value is None for value in theirs.values()) < len(theirs) // 2  # most queries are compared
    for query, value in theirs.items():
        expected = None if value is None else pytest.approx(value, rel=1e-12, abs=1e-15)
        assert ours[query] == expected, query


@pytest.mark.parametrize("tied", [False, True], ids=["untied", "ties-doc"])
@pytest.mark.parametrize("k", [1, 3, 10, None])
def test_nerr_with_judgments_equals_ntcireval(k: int | None, tied: bool) -> None:
    """evaluate's nerr@k with qrels= (the ideal from every judged document) against pyNTCIREVAL's nERR@k."""
    run, qrels = random_run(seed=(k or 0) + 100 * tied, tied=tied)
    name = "nerr" if k is None else f"nerr@{k}"
    result = run.rank_metrics.evaluate(name, doc="doc", ties="doc", qrels=qrels, no_relevant=None)
    ours = dict(zip(result["query"], result[name], strict=True))
    assert_equal_values(ours, ntcireval_nerr(run, qrels, k))


@pytest.mark.parametrize("tied", [False, True], ids=["untied", "ties-doc"])
@pytest.mark.parametrize("k", [1, 2, 5, None])
def test_exprs_nerr_equals_ntcireval(k: int | None, tied: bool) -> None:
    """exprs.nerr in group_by().agg(), the group's rows being its judgments (grades 0..4), against
    pyNTCIREVAL's nERR@k with those rows as the qrels."""
    run, qrels = random_run(seed=7 + (k or 0) + 100 * tied, tied=tied)
    frame = run.join(qrels, on=["query", "doc"], how="left").with_columns(
        pl.col("relevance").clip(0, None).fill_null(0)
    )
    result = frame.group_by("query").agg(exprs.nerr(k=k, ties="doc", doc="doc", no_relevant=None))
    ours = dict(zip(result["query"], result.to_series(1), strict=True))
    assert_equal_values(ours, ntcireval_nerr(run, frame.select("query", "doc", "relevance"), k))


def binary_run(seed: int, grade: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Untied scores; judgments 0 or `grade`, about half relevant."""
    run, qrels = random_run(seed, tied=False)
    rng = np.random.default_rng(seed + 1)
    return run, qrels.with_columns(pl.Series("relevance", np.where(rng.random(qrels.height) < 0.5, grade, 0)))


def ndeval_nerr_ia(run: pl.DataFrame, qrels: pl.DataFrame, k: int, alpha: float) -> dict[Any, float]:
    pyndeval = pytest.importorskip("pyndeval", reason="pyndeval is a test dependency")
    subtopic_qrels = [pyndeval.SubtopicQrel(q, "1", d, int(r)) for q, d, r in qrels.iter_rows()]
    scored = [pyndeval.ScoredDoc(q, d, s) for q, d, s in run.sort("query", maintain_order=True).iter_rows()]
    measure = f"nERR-IA@{k}"
    return {q: m[measure] for q, m in pyndeval.ndeval(subtopic_qrels, scored, [measure], alpha=alpha).items()}


@pytest.mark.parametrize("grade", [1, 2, 3, 4])
@pytest.mark.parametrize("k", [1, 4, 20])
def test_nerr_on_binary_grades_equals_ndeval_nerr_ia_with_one_subtopic(k: int, grade: int) -> None:
    """Grades 0 / `grade`, one subtopic, alpha = (2**grade - 1) / 16: ndeval's nERR-IA@k is our nERR@k (0
    where no document is relevant, which is our no_relevant=0.0), with qrels= and in exprs.nerr."""
    run, qrels = binary_run(seed=10 * k + grade, grade=grade)
    theirs = ndeval_nerr_ia(run, qrels, k, alpha=(2.0**grade - 1.0) / 16.0)
    values = list(theirs.values())
    assert sum(value > 0 for value in values) >= 5 and sum(0 < value < 1 for value in values) >= (5 if k > 1 else 0)
    result = run.rank_metrics.evaluate(f"nerr@{k}", doc="doc", ties="doc", qrels=qrels)
    ours = dict(zip(result["query"], result[f"nerr@{k}"], strict=True))
    assert ours.keys() == theirs.keys()
    for query, value in theirs.items():
        assert ours[query] == pytest.approx(value, rel=1e-12, abs=1e-15), query
    # exprs.nerr: the group's rows are its judgments, so the qrels handed to ndeval are the run's rows
    frame = run.join(qrels, on=["query", "doc"], how="left").with_columns(pl.col("relevance").fill_null(0))
    result = frame.group_by("query").agg(exprs.nerr(k=k, ties="doc", doc="doc"))
    ours = dict(zip(result["query"], result.to_series(1), strict=True))
    theirs = ndeval_nerr_ia(run, frame.select("query", "doc", "relevance"), k, alpha=(2.0**grade - 1.0) / 16.0)
    assert ours.keys() == theirs.keys()
    for query, value in theirs.items():
        assert ours[query] == pytest.approx(value, rel=1e-12, abs=1e-15), query
