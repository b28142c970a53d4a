"""`exprs.err`, `nerr`, `rbp`, `rprec`, `f1`, `hit_rate`, `iprec_at_recall`, `eleven_point_average` and
`relative_precision` against the real tools and every tied order.

Oracles, the judgments being the group's own rows:
- ir_measures' ERR@k (computed by gdeval, ties by descending doc id: ties="doc"); nERR@k as gdeval's ERR@k
  of the run over gdeval's ERR@k of the ideal run (the documents ordered by grade);
- the trec_eval binary's rbp (graded levels brought into [0, 1], ties="doc") and ir_measures' RBP(p=...)
  from trectools (raw relevance, ties averaged: ties="average" on binary judgments);
- pytrec_eval's Rprec (ties="doc"); the trec_eval binary's iprec_at_recall, 11pt_avg and relative_P (ties="doc");
- ranx's f1@k, f1 and hit_rate@k (untied scores: ranx has no tie rule);
- plain Python below, written from the definitions: the mean over every order of the tied rows
  (`measures_reference.tied_sequences`) for ties="average", their greatest and least value for the bounds;
- the namespace's `evaluate` on the same frame (the property in tests/test_invariants.py draws these
  measures too), in `group_by().agg()` and `.over()`, eager, lazy in-memory and streaming.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import lodestar_polars  # noqa: F401  (registers .rank_metrics)
from lodestar_polars import exprs
from tests import measures_reference as reference
from tests.test_exprs import ENGINES, SETTINGS, TIES, TOLERANCE, aggregate, broadcast, ragged_frames
from tests.test_exprs_measures import small_tied_frames
from tests.trec_eval_binary import TrecEval


def random_tied_frame(seed: int, queries: int = 60, rows: int = 900, grades: int = 5) -> pl.DataFrame:
    """Ragged queries (numeric ids, as gdeval needs), tied integer scores, relevance 0..grades-1."""
    rng = np.random.default_rng(seed)
    return pl.DataFrame(
        {
            "query": rng.integers(0, queries, rows),
            "doc": [f"d{i}" for i in rng.permutation(rows)],
            "relevance": rng.integers(0, grades, rows),
            "score": rng.integers(0, 6, rows).astype(float),
        }
    )


def by_query(result: pl.DataFrame, column: str) -> dict[Any, float]:
    return dict(zip(result["query"].to_list(), result[column].to_list(), strict=True))


# --- ERR and nERR: gdeval through ir_measures ----------------------------------------------------------------


def gdeval_err(frame: pl.DataFrame, k: int, score: str = "score") -> dict[int, float]:
    ir_measures = pytest.importorskip("ir_measures", reason="ir_measures is a test dependency")
    qrels = [ir_measures.Qrel(str(q), d, int(r)) for q, d, r in frame.select("query", "doc", "relevance").iter_rows()]
    run = [ir_measures.ScoredDoc(str(q), d, float(s)) for q, d, s in frame.select("query", "doc", score).iter_rows()]
    gdeval = ir_measures.providers.registry["gdeval"]
    measure = ir_measures.parse_measure(f"ERR@{k}")
    return {int(m.query_id): m.value for m in gdeval.evaluator([measure], qrels).iter_calc(run)}


@pytest.mark.parametrize("k", [1, 3, 10, 1000])
def test_err_and_nerr_equal_gdeval(k: int) -> None:
    """gdeval prints 5 decimals and leaves out a group without a grade above 0 (its ERR is 0 here, its nERR
    no_relevant).  The ideal run scores each document by its grade."""
    frame = random_tied_frame(seed=k)
    theirs = gdeval_err(frame, k)
    ideal = gdeval_err(frame.with_columns(pl.col("relevance").cast(pl.Float64).alias("ideal")), k, "ideal")
    assert len(theirs) >= 40
    ours = frame.group_by("query").agg(exprs.err(k=k, ties="doc", doc="doc"), exprs.nerr(k=k, ties="doc", doc="doc"))
    err, nerr = by_query(ours, f"err@{k}"), by_query(ours, f"nerr@{k}")
    for query, value in theirs.items():
        assert err[query] == pytest.approx(value, abs=5.1e-6), query
        # a ratio of two 5-decimal values: its error is at most 5e-6 (1 + nERR) / ideal
        assert nerr[query] == pytest.approx(value / ideal[query], abs=5.1e-6 * (1 + nerr[query]) / ideal[query])
    for query in set(err) - set(theirs):
        assert err[query] == 0.0
        assert nerr[query] == 0.0  # no_relevant=0.0


def cascade(grades: Sequence[float], k: int | None) -> float:
    """ERR by its definition: the user stops at position p with probability R(g_p) = (2**g - 1) / 16, having
    passed every position above."""
    total, passed = 0.0, 1.0
    for position, grade in enumerate(grades[:k] if k is not None else grades, start=1):
        stop = (2.0**grade - 1.0) / 16.0
        total += passed * stop / position
        passed *= 1.0 - stop
    return total


def err_reference(relevance: list[int], score: list[float], doc: list[str], ties: str, k: int | None) -> float:
    if ties in ("optimistic", "pessimistic"):  # the bounds: ERR's greatest and least value over the tied orders
        values = [cascade(sequence, k) for sequence in reference.tied_sequences(relevance, score)]
        return max(values) if ties == "optimistic" else min(values)
    order = reference.deterministic_order(relevance, score, doc, ties)
    return cascade([relevance[i] for i in order], k)


@SETTINGS
@given(frame=small_tied_frames(), k=st.one_of(st.none(), st.integers(1, 10)))
def test_err_and_nerr_in_every_deterministic_tie_mode(frame: pl.DataFrame, k: int | None) -> None:
    """Input order, its reverse, doc ids as text, and the bounds: the greatest and least ERR over every order
    of the tied rows.  nERR divides by the ERR of the grades sorted descending."""
    for ties in ("input", "reverse", "doc", "optimistic", "pessimistic"):
        result = frame.group_by("query").agg(
            exprs.err(k=k, ties=ties, doc="doc"), exprs.nerr(k=k, ties=ties, doc="doc", no_relevant=None)
        )
        for row in result.iter_rows(named=True):
            rows = frame.filter(pl.col("query") == row["query"])
            relevance, score, doc = rows["relevance"].to_list(), rows["score"].to_list(), rows["doc"].to_list()
            expected = err_reference(relevance, score, doc, ties, k)
            ideal = cascade(sorted(relevance, reverse=True), k)
            assert row[result.columns[1]] == pytest.approx(expected, rel=1e-12, abs=1e-15), (ties, row)
            expected_nerr = None if ideal == 0 else pytest.approx(expected / ideal, rel=1e-12, abs=1e-15)
            assert row[result.columns[2]] == expected_nerr, (ties, row)


def test_err_and_nerr_refuse_ties_average_with_the_namespaces_message() -> None:
    frame = random_tied_frame(seed=0, queries=3, rows=20)
    for name, build in (("err@5", lambda: exprs.err(k=5)), ("nerr", lambda: exprs.nerr())):
        with pytest.raises(ValueError) as namespace_error:
            frame.rank_metrics.evaluate([name])
        with pytest.raises(ValueError, match=r"has no exact expectation under ties='average'") as expression_error:
            build()
        assert str(expression_error.value) == str(namespace_error.value)


def test_a_grade_outside_zero_to_four_is_refused_with_the_namespaces_words() -> None:
    frame = pl.DataFrame({"query": [1, 1, 2, 3], "relevance": [0, 5, 6, 2], "score": [2.0, 1.0, 1.0, 1.0]})
    with pytest.raises(ValueError) as namespace_error:
        frame.rank_metrics.evaluate(["err"], ties="input")
    with pytest.raises(ValueError) as expression_error:
        frame.group_by("query", maintain_order=True).agg(exprs.nerr(ties="input"))
    # the namespace names the first query; the expression, which does not see it, words the first failing group
    words = str(namespace_error.value).replace(", query 1)", ")")
    assert str(expression_error.value).splitlines()[0] == words


def test_nerr_no_relevant_error_words_a_group_without_a_grade_above_zero() -> None:
    frame = pl.DataFrame({"query": [1, 1, 2, 3], "relevance": [0, 2, 0, 0], "score": [2.0, 1.0, 1.0, 1.0]})
    expected = r"^a group has no document of grade above 0 \(ideal ERR is 0\); pass no_relevant"
    with pytest.raises(ValueError, match=expected):
        frame.group_by("query").agg(exprs.nerr(ties="input", no_relevant="error"))


# --- RBP: the trec_eval binary and trectools ----------------------------------------------------------------


def test_rbp_equals_trec_eval_on_graded_tied_runs(trec_eval: TrecEval, tmp_path: Path) -> None:
    """trec_eval's rbp (and rbp.p=0.5): ties by descending docno (ties="doc"), levels 0..3 divided by the
    query's greatest, the whole list; printed to 4 decimals."""
    frame = random_tied_frame(seed=7, grades=4)
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text(
        "".join(f"{q} 0 {d} {r}\n" for q, d, r in frame.select("query", "doc", "relevance").iter_rows())
    )
    run_path.write_text(
        "".join(f"{q} Q0 {d} 0 {s} tag\n" for q, d, s in frame.select("query", "doc", "score").iter_rows())
    )
    ours = frame.group_by("query").agg(exprs.rbp(ties="doc", doc="doc"), exprs.rbp(p=0.5, ties="doc", doc="doc"))
    for argument, column in (("rbp", "rbp"), ("rbp.p=0.5", "rbp(p=0.5)")):
        output = trec_eval.run(["-q", "-m", argument], qrels_path, run_path)
        theirs = {int(q): float(v) for _, q, v in (line.split() for line in output.splitlines()) if q != "all"}
        values = by_query(ours, column)
        assert len(theirs) == len(values) == 60
        for query, value in theirs.items():
            assert values[query] == pytest.approx(value, abs=5.1e-5), (column, query)


def test_rbp_equals_ir_measures_trectools_on_binary_judgments_with_tie_averaging() -> None:
    """trectools' RBP(p=...) sums the raw relevance with the weights of tied documents averaged: on binary
    judgments, rbp with ties="average" over the whole list (it leaves out a query without a relevant row)."""
    ir_measures = pytest.importorskip("ir_measures", reason="ir_measures is a test dependency")
    pytest.importorskip("trectools", reason="ir_measures computes RBP(p=...) with trectools")
    frame = random_tied_frame(seed=3, grades=2)
    qrels = [ir_measures.Qrel(str(q), d, int(r)) for q, d, r in frame.select("query", "doc", "relevance").iter_rows()]
    run = [ir_measures.ScoredDoc(str(q), d, float(s)) for q, d, s in frame.select("query", "doc", "score").iter_rows()]
    trectools = ir_measures.providers.registry["trectools"]
    for p in (0.5, 0.8, 0.9):
        measure = ir_measures.parse_measure(f"RBP(p={p})")
        theirs = {int(m.query_id): m.value for m in trectools.evaluator([measure], qrels).iter_calc(run)}
        ours = by_query(frame.group_by("query").agg(exprs.rbp(p=p).alias("rbp")), "rbp")
        assert len(theirs) >= 50
        assert theirs == pytest.approx({q: v for q, v in ours.items() if q in theirs}, rel=1e-12), p
        assert all(v == 0.0 for q, v in ours.items() if q not in theirs)


def test_rbp_refuses_a_persistence_outside_zero_one_as_evaluate_does() -> None:
    frame = random_tied_frame(seed=0, queries=2, rows=10)
    for p in (0.0, 1.0, 1.5, -0.2):
        with pytest.raises(ValueError) as namespace_error:
            frame.rank_metrics.evaluate([f"rbp(p={p})"])
        reason = str(namespace_error.value).split(" is refused: ")[1]
        with pytest.raises(ValueError, match=rf"^option p={re.escape(repr(p))} is refused: {re.escape(reason)}$"):
            exprs.rbp(p=p)
    with pytest.raises(ValueError, match=r"^option p=nan is refused: the persistence p lies strictly between 0 and 1"):
        exprs.rbp(p=math.nan)  # evaluate reads "nan" as no decimal number
    with pytest.raises(TypeError, match=r"^p must be a float, got '0.5'\.$"):
        exprs.rbp(p="0.5")  # type: ignore[arg-type]  # the wrong type on purpose
    with pytest.raises(ValueError, match=r"negative gain -1.0"):
        exprs.rbp(gain={0: -1.0, 1: 1.0})


# --- R-precision: pytrec_eval ---------------------------------------------------------------------------------


def test_rprec_equals_pytrec_eval_on_a_random_tied_run() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    frame = random_tied_frame(seed=11, queries=150, rows=3000, grades=3)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for query, doc, relevance, score in frame.iter_rows():
        qrels.setdefault(str(query), {})[doc] = relevance
        run.setdefault(str(query), {})[doc] = score
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"Rprec"}).evaluate(run)
    ours = by_query(frame.group_by("query").agg(exprs.rprec(ties="doc", doc="doc")), "rprec")
    assert len(ours) == len(theirs) == 150
    for query, value in ours.items():
        assert value == pytest.approx(theirs[str(query)]["Rprec"], abs=1e-12), query


# --- interpolated precision: the trec_eval binary ---------------------------------------------------------------


def as_trec_files(frame: pl.DataFrame, folder: Path) -> tuple[Path, Path]:
    """The frame's rows as trec_eval's judgments (every row judged) and run."""
    qrels_path, run_path = folder / "qrels", folder / "run"
    judgments = frame.select("query", "doc", "relevance").iter_rows()
    qrels_path.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in judgments))
    run_path.write_text(
        "".join(f"{q} Q0 {d} 0 {s} tag\n" for q, d, s in frame.select("query", "doc", "score").iter_rows())
    )
    return qrels_path, run_path


def test_iprec_at_recall_and_11pt_avg_equal_trec_eval(trec_eval: TrecEval, tmp_path: Path) -> None:
    """trec_eval's iprec_at_recall at its 11 levels and 11pt_avg, ties by descending docno; 4 decimals."""
    frame = random_tied_frame(seed=13, queries=80, rows=1200, grades=3)
    qrels_path, run_path = as_trec_files(frame, tmp_path)
    output = trec_eval.run(["-q", "-m", "iprec_at_recall", "-m", "11pt_avg"], qrels_path, run_path)
    theirs: dict[tuple[str, int], float] = {}
    for line in output.splitlines():
        name, query, value = line.split()
        if query != "all":
            theirs[name, int(query)] = float(value)
    levels = [i / 10 for i in range(11)]
    ours = frame.group_by("query").agg(
        *(exprs.iprec_at_recall(level=level, ties="doc", doc="doc") for level in levels),
        exprs.eleven_point_average(ties="doc", doc="doc"),
    )
    columns = {f"iprec@{level!r}": f"iprec_at_recall_{level:.2f}" for level in levels} | {"11pt_avg": "11pt_avg"}
    assert len(theirs) == len(columns) * ours.height == len(columns) * 80
    for row in ours.iter_rows(named=True):
        for column, name in columns.items():
            assert row[column] == pytest.approx(theirs[name, row["query"]], abs=5.1e-5), (column, row["query"])


def test_relative_precision_equals_trec_eval(trec_eval: TrecEval, tmp_path: Path) -> None:
    """trec_eval's relative_P at its nine cut-offs and -l 2 (relevant: level >= 2), ties by descending docno."""
    frame = random_tied_frame(seed=17, queries=80, rows=1200, grades=3)
    qrels_path, run_path = as_trec_files(frame, tmp_path)
    cutoffs = [5, 10, 15, 20, 30, 100, 200, 500, 1000]
    for level, threshold in ((1, 0.0), (2, 1.0)):
        output = trec_eval.run(["-q", f"-l{level}", "-m", "relative_P"], qrels_path, run_path)
        theirs = {(name, query): float(value) for name, query, value in map(str.split, output.splitlines())}
        ours = frame.group_by("query").agg(
            exprs.relative_precision(k=k, ties="doc", doc="doc", threshold=threshold) for k in cutoffs
        )
        assert len(theirs) == len(cutoffs) * (ours.height + 1)
        for row in ours.iter_rows(named=True):
            for k in cutoffs:
                expected = theirs[f"relative_P_{k}", str(row["query"])]
                assert row[f"relative_p@{k}"] == pytest.approx(expected, abs=5.1e-5), (k, row["query"])


def test_yaap_and_ideal_dcg_equal_trec_eval(trec_eval: TrecEval, tmp_path: Path) -> None:
    """trec_eval's yaap (-l 1 and -l 2) and ideal_dcg (linear gains: the judged levels), ties by descending
    docno; 4 decimals."""
    frame = random_tied_frame(seed=19, queries=80, rows=1200, grades=3)
    qrels_path, run_path = as_trec_files(frame, tmp_path)
    for level, threshold in ((1, 0.0), (2, 1.0)):
        output = trec_eval.run(["-q", f"-l{level}", "-m", "yaap", "-m", "ideal_dcg"], qrels_path, run_path)
        theirs = {(name, query): float(value) for name, query, value in map(str.split, output.splitlines())}
        ours = frame.group_by("query").agg(
            exprs.yaap(ties="doc", doc="doc", threshold=threshold), exprs.ideal_dcg(ties="doc", doc="doc")
        )
        assert len(theirs) == 2 * (ours.height + 1)
        for row in ours.iter_rows(named=True):
            for column in ("yaap", "ideal_dcg"):
                expected = theirs[column, str(row["query"])]
                assert row[column] == pytest.approx(expected, abs=5.1e-5), (column, row["query"])


def interpolated_of(flags: Sequence[int], level: float) -> float:
    """The greatest precision at a relevant row whose count reaches max(level R rounded half up, 1)."""
    total = sum(flags)
    needed = max(math.floor(level * total + 0.5), 1)
    count, best = 0, 0.0
    for position, flag in enumerate(flags, start=1):
        count += flag
        if flag and count >= needed:
            best = max(best, count / position)
    return best


@pytest.mark.parametrize("ties", ["optimistic", "pessimistic", "input", "reverse", "doc"])
@SETTINGS
@given(frame=small_tied_frames(), level=st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.7, 1.0]))
def test_interpolated_precision_in_every_deterministic_tie_mode(frame: pl.DataFrame, level: float, ties: str) -> None:
    """The bounds are the greatest and least value over every order of the tied rows; 11pt_avg the mean
    over the 11 levels; a group without a relevant row scores no_relevant."""
    result = frame.group_by("query").agg(
        exprs.iprec_at_recall(level=level, ties=ties, doc="doc", no_relevant=None).alias("iprec"),
        exprs.eleven_point_average(ties=ties, doc="doc", no_relevant=None).alias("eleven"),
    )
    for row in result.iter_rows(named=True):
        rows = frame.filter(pl.col("query") == row["query"])
        relevance, score, doc = rows["relevance"].to_list(), rows["score"].to_list(), rows["doc"].to_list()
        flags = [1 if r > 0 else 0 for r in relevance]
        if not any(flags):
            assert row["iprec"] is None and row["eleven"] is None
            continue

        def eleven_of(sequence: Sequence[int]) -> float:
            return math.fsum(interpolated_of(sequence, i / 10) for i in range(11)) / 11

        if ties in ("optimistic", "pessimistic"):
            pick = max if ties == "optimistic" else min
            sequences = list(reference.tied_sequences(flags, score))
            expected = pick(interpolated_of(sequence, level) for sequence in sequences)
            expected_eleven = pick(eleven_of(sequence) for sequence in sequences)
        else:
            ranked = [flags[i] for i in reference.deterministic_order(relevance, score, doc, ties)]
            expected, expected_eleven = interpolated_of(ranked, level), eleven_of(ranked)
        assert row["iprec"] == pytest.approx(expected, rel=1e-12, abs=1e-15), row
        assert row["eleven"] == pytest.approx(expected_eleven, rel=1e-12, abs=1e-15), row


def test_interpolated_precision_refuses_ties_average_and_a_level_outside_zero_one() -> None:
    frame = random_tied_frame(seed=0, queries=3, rows=20)
    for name, build in (
        ("iprec@0.5", lambda: exprs.iprec_at_recall(level=0.5)),
        ("11pt_avg", lambda: exprs.eleven_point_average()),
    ):
        with pytest.raises(ValueError) as namespace_error:
            frame.rank_metrics.evaluate([name])
        with pytest.raises(ValueError, match=r"has no exact expectation under ties='average'") as expression_error:
            build()
        assert str(expression_error.value) == str(namespace_error.value)
    with pytest.raises(ValueError, match=r"^level must be a recall level from 0 to 1, got 1.5\.$"):
        exprs.iprec_at_recall(level=1.5, ties="input")
    with pytest.raises(TypeError, match=r"^level must be a recall level \(a float from 0 to 1\), got '0.5'\.$"):
        exprs.iprec_at_recall(level="0.5", ties="input")  # type: ignore[arg-type]  # the wrong type on purpose


# --- f1 and hit_rate: ranx ----------------------------------------------------------------------------------


def test_f1_and_hit_rate_equal_ranx_on_untied_runs() -> None:
    """ranx's f1@k, f1 (k the run's length) and hit_rate@k; it counts relevance above 0 as relevant and
    scores a query without a relevant document 0."""
    ranx = pytest.importorskip("ranx", reason="ranx is a test dependency")
    rng = np.random.default_rng(5)
    rows = 1500
    frame = pl.DataFrame(
        {
            "query": rng.integers(0, 80, rows),
            "doc": [f"d{i}" for i in range(rows)],
            "relevance": rng.integers(0, 3, rows) * (rng.random(rows) < 0.4),
            "score": rng.permutation(rows) / 7.0,  # untied
        }
    )
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for query, doc, relevance, score in frame.iter_rows():
        run.setdefault(str(query), {})[doc] = score
        qrels.setdefault(str(query), {})
        if relevance > 0:
            qrels[str(query)][doc] = relevance
    metrics = ["f1", "f1@1", "f1@5", "f1@100", "hit_rate@1", "hit_rate@5"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba type-safety warnings inside ranx
        ranx_run = ranx.Run(run)
        scores = ranx.evaluate(ranx.Qrels(qrels), ranx_run, metrics, return_mean=False, make_comparable=True)
    ours = frame.group_by("query").agg(
        exprs.f1(),
        *(exprs.f1(k=k) for k in (1, 5, 100)),
        *(exprs.hit_rate(k=k).alias(f"hit_rate@{k}") for k in (1, 5)),
    )
    for metric in metrics:
        values = by_query(ours, metric)
        theirs = {int(q): float(v) for q, v in zip(ranx_run.keys(), scores[metric], strict=True)}
        assert len(theirs) == 80
        assert values == pytest.approx(theirs, abs=1e-12), metric


# --- every tied order: ties="average" and the bounds -------------------------------------------------------------


def rbp_of(gains: Sequence[float], k: int | None, p: float) -> float:
    return (1 - p) * sum(p**i * g for i, g in enumerate(gains[:k] if k is not None else gains))


def reference_value(measure: str, relevance: list[int], score: list[float], options: dict[str, Any]) -> float | None:
    """The measure by its definition: the mean over every order of the tied rows (ties="average"), or its
    greatest / least value (the bounds)."""
    ties, k = options["ties"], options.get("k")
    relevant = [1 if r > options.get("threshold", 0.0) else 0 for r in relevance]
    total = sum(relevant)
    measure_of: Callable[[Sequence[float]], float]
    if measure == "rbp":
        gains = [float(r) if options["gain"] == "linear" else 2.0**r - 1.0 for r in relevance]
        high = max([*gains, 0.0])
        values = [g / high if high > 1 else g for g in gains]

        def measure_of(sequence: Sequence[float]) -> float:
            return rbp_of(sequence, k, options["p"])

    else:
        if total == 0 and measure != "hit_rate":
            return options["no_relevant"]
        values = [float(flag) for flag in relevant]
        length = len(relevance) if k is None else k

        def measure_of(sequence: Sequence[float]) -> float:
            if measure == "rprec":
                return sum(sequence[:total]) / total
            hits = sum(sequence[:k] if k is not None else sequence)
            if measure == "f1":
                return 2 * hits / (length + total)
            if measure == "relative_precision":  # trec_eval's relative_P: hits / min(k, R)
                return hits / (total if k is None else min(k, total))
            return float(hits > 0)  # hit_rate

    outcomes = [measure_of(sequence) for sequence in reference.tied_sequences(values, score)]
    if ties == "average":
        return math.fsum(outcomes) / len(outcomes)
    return max(outcomes) if ties == "optimistic" else min(outcomes)


@st.composite
def averaged_options(draw: st.DrawFn, measure: str) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if measure != "rprec":
        options["k"] = draw(st.one_of(st.none(), st.integers(1, 12)))
    if measure == "rbp":
        options["gain"] = draw(st.sampled_from(["linear", "exponential"]))
        options["p"] = draw(st.sampled_from([0.9, 0.5, 0.8]))
    else:
        options["threshold"] = draw(st.sampled_from([0.0, 1.5]))
    if measure in ("rprec", "f1", "relative_precision"):
        options["no_relevant"] = draw(st.sampled_from([0.0, 1.0, None]))
    return options


@pytest.mark.parametrize("ties", ["average", "optimistic", "pessimistic"])
@pytest.mark.parametrize("measure", ["rbp", "rprec", "f1", "hit_rate", "relative_precision"])
@SETTINGS
@given(frame=small_tied_frames(), data=st.data())
def test_the_mean_and_the_bounds_over_every_tied_order(
    frame: pl.DataFrame, data: st.DataObject, measure: str, ties: str
) -> None:
    options = {"ties": ties, **data.draw(averaged_options(measure))}
    result = frame.group_by("query").agg(getattr(exprs, measure)(**options).alias("value"))
    for row in result.iter_rows(named=True):
        rows = frame.filter(pl.col("query") == row["query"])
        expected = reference_value(measure, rows["relevance"].to_list(), rows["score"].to_list(), options)
        assert row["value"] == (None if expected is None else pytest.approx(expected, rel=1e-12, abs=1e-15)), row


# --- the namespace, in every engine and tie mode --------------------------------------------------------------

NEW_MEASURES = [
    *("err", "nerr", "rbp", "rprec", "f1", "hit_rate", "iprec_at_recall", "eleven_point_average"),
    *("relative_precision", "yaap", "ideal_dcg"),
]
REFUSING_AVERAGE = ("err", "nerr", "iprec_at_recall", "eleven_point_average", "yaap")


@st.composite
def namespace_calls(draw: st.DrawFn) -> tuple[str, str, dict[str, Any], dict[str, Any]]:
    """A measure, its `evaluate` name, the expression's options and evaluate's."""
    measure = draw(st.sampled_from(NEW_MEASURES))
    ties = draw(st.sampled_from([t for t in TIES if t != "average" or measure not in REFUSING_AVERAGE]))
    without_cutoff = ("rprec", "iprec_at_recall", "eleven_point_average", "yaap")
    k = None if measure in without_cutoff else draw(st.one_of(st.none(), st.integers(1, 45)))
    options: dict[str, Any] = {"ties": ties, "doc": "doc"}
    evaluate_options: dict[str, Any] = {"ties": ties, "doc": "doc"}
    stem = {"hit_rate": "success", "eleven_point_average": "11pt_avg", "relative_precision": "relative_p"}.get(
        measure, measure
    )
    if measure not in without_cutoff:
        options["k"] = k
    if measure == "iprec_at_recall":
        options["level"] = draw(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.7, 1.0]))
        stem = f"iprec@{options['level']!r}"
    if measure == "rbp":
        p = draw(st.sampled_from([0.9, 0.5, 0.95]))
        options["p"] = p
        options["gain"] = evaluate_options["gain"] = draw(
            st.sampled_from(["linear", "exponential", {0: 0.5, 1: 1.0, 2: 3.0, 3: 0.0, 4: 2.0}])
        )
        stem = "rbp" if p == 0.9 else f"rbp(p={p})"
    if measure == "ideal_dcg":
        options["gain"] = evaluate_options["gain"] = draw(
            st.sampled_from(["linear", "exponential", {0: 0.5, 1: 1.0, 2: 3.0, 3: -1.0, 4: 2.0}])
        )
    if measure in ("rprec", "f1", "hit_rate", "relative_precision", *without_cutoff):
        options["threshold"] = evaluate_options["threshold"] = draw(st.sampled_from([0.0, 1.5, 3.0]))
    if measure in ("rprec", "f1", "nerr", "relative_precision", "iprec_at_recall", "eleven_point_average"):
        options["no_relevant"] = evaluate_options["no_relevant"] = draw(st.sampled_from([0.0, 1.0, None]))
    return measure, stem if k is None else f"{stem}@{k}", options, evaluate_options


@pytest.mark.parametrize("engine", ENGINES)
@SETTINGS
@given(frame=ragged_frames(), call=namespace_calls())
def test_group_by_agg_and_over_match_evaluate(
    frame: pl.DataFrame, call: tuple[str, str, dict[str, Any], dict[str, Any]], engine: str
) -> None:
    """ragged_frames' relevance is 0..4: ERR's grades."""
    measure, name, options, evaluate_options = call
    expected = frame.rank_metrics.evaluate([name], **evaluate_options).sort("query")
    expression = getattr(exprs, measure)(**options).alias(name)
    assert_frame_equal(aggregate(frame, engine, expression), expected, **TOLERANCE)
    broadcast_expected = frame.join(expected, on="query", how="left", maintain_order="left")
    assert_frame_equal(broadcast(frame, engine, expression), broadcast_expected, **TOLERANCE)


def test_their_names_are_evaluates_columns() -> None:
    frame = random_tied_frame(seed=1, queries=3, rows=30)
    built = [
        exprs.err(k=5, ties="input"),
        exprs.nerr(ties="input"),
        exprs.rbp(),
        exprs.rbp(k=3, p=0.8),
        exprs.rprec(),
        exprs.f1(k=10),
        exprs.hit_rate(k=2),
        exprs.relative_precision(k=4),
    ]
    names = ["err@5", "nerr", "rbp", "rbp(p=0.8)@3", "rprec", "f1@10", "hit_rate@2", "relative_precision@4"]
    assert frame.group_by("query").agg(built).columns[1:] == [
        "err@5",
        "nerr",
        "rbp",
        "rbp(p=0.8)@3",
        "rprec",
        "f1@10",
        "success@2",
        "relative_p@4",
    ]
    assert (
        frame.rank_metrics.evaluate(names, ties="input").columns[1:] == frame.group_by("query").agg(built).columns[1:]
    )
