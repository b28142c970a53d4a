"""The ir_measures provider (`lodestar_polars.ir_measures_provider`) against ir_measures itself: its default
pipeline (pytrec_eval, cwl_eval, the judged and msmarco providers, gdeval, each with its own tie order) and its
pytrec_eval provider, per query (`iter_calc`) and on average (`calc_aggregate`), on every measure both compute,
on random runs with heavy ties and judgments at levels -3..3, from each input format ir_measures takes."""

from __future__ import annotations

import importlib
import logging
import math
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pytest

ir_measures = pytest.importorskip("ir_measures", reason="ir-measures is a test dependency (pip install '.[test]')")
pytest.importorskip("cwl", reason="ir_measures computes SDCG with cwl_eval (pip install 'ir-measures[cwl_eval]')")

from lodestar_polars import ir_measures_provider  # noqa: E402  (after the skips)
from lodestar_polars.ir_measures_provider import PIPELINE, PROVIDER, LodestarProvider  # noqa: E402

EXACT = 1e-12
DOC_IDS = ["D1", "D10", "D2", "D9", "d1", "9", "100", "a", "B", "b-3", "b_3", "x10", "x9"]


@pytest.fixture(autouse=True)
def _quiet_cwl_eval() -> Iterator[None]:
    """ir_measures' cwl_eval provider warns whenever the levels seen differ from SDCG's max_rel."""
    logger = logging.getLogger("ir_measures.cwl_eval")
    level = logger.level
    logger.setLevel(logging.ERROR)
    yield
    logger.setLevel(level)


def random_case(
    seed: int, numeric_queries: bool = False
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Judgments at -3..3 (each judged query keeps a level >= 0: pytrec_eval-terrier misbehaves on
    all-negative ones), a run with scores from four values (heavy ties); judged queries missing from the run,
    run queries without judgments, judged documents not retrieved, retrieved documents not judged."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(int(rng.integers(4, 10))):
        query = str(100 + q) if numeric_queries else f"q{q}"
        in_run, judged = [(True, True), (True, True), (True, False), (False, True)][int(rng.integers(0, 4))]
        judged = judged or q == 0
        in_run = in_run or q == 0
        if in_run:
            docs = rng.choice(DOC_IDS, size=int(rng.integers(1, len(DOC_IDS) + 1)), replace=False)
            run[query] = {
                str(d): float(s) for d, s in zip(docs, rng.choice([0.0, 0.5, 1.0, 2.0], len(docs)), strict=True)
            }
        if judged:
            docs = rng.choice(DOC_IDS, size=int(rng.integers(1, 9)), replace=False)
            levels = rng.integers(-3, 4, len(docs))
            levels[0] = max(int(levels[0]), 0)
            qrels[query] = {str(d): int(level) for d, level in zip(docs, levels, strict=True)}
    return qrels, run


# every measure both compute, through the provider ir_measures' default pipeline picks for it
M = ir_measures
BOTH = [
    M.nDCG, M.nDCG @ 1, M.nDCG @ 5, M.nDCG @ 20, M.nDCG(judged_only=True) @ 5,
    M.P @ 1, M.P @ 5, M.P(rel=2) @ 5, M.P(judged_only=True) @ 5, M.R @ 3, M.R(rel=2) @ 10,
    M.AP, M.AP @ 5, M.AP(rel=2), M.RR, M.RR(rel=2), M.RR @ 3, M.RR @ 10, M.Success @ 1, M.Success @ 5,
    M.Rprec, M.Bpref, M.infAP, M.IPrec @ 0.0, M.IPrec @ 0.5, M.IPrec @ 1.0,
    M.NumRet, M.NumRelRet, M.NumRet(rel=2), M.NumRel,
    M.SetP, M.SetRelP, M.SetR, M.SetAP, M.SetF, M.SetF(beta=0.5),
    M.Judged, M.Judged @ 1, M.Judged @ 5, M.Judged @ 50,
    M.SDCG(max_rel=3) @ 5, M.SDCG(max_rel=2) @ 10, M.SDCG(min_rel=1, max_rel=3) @ 5,
    M.NERR8(max_rel=3) @ 5, M.NERR9(min_rel=1, max_rel=3) @ 10, M.BPM(max_rel=3) @ 10, M.BPM(T=2.0, max_rel=2) @ 5,
    M.INSQ(max_rel=3), M.INSQ(T=2.0, min_rel=1, max_rel=3), M.NERR10(max_rel=3), M.NERR10(p=0.5, max_rel=2),
    M.NERR11(max_rel=3), M.NERR11(T=2.0, min_rel=1, max_rel=3), M.INST(max_rel=3), M.INST(T=3.0, max_rel=2),
]  # fmt: skip
# ir_measures' pytrec_eval provider puts NumRet (without rel) into whichever pytrec_eval invocation it built first,
# a judged_only one included (then NumRet counts judged documents only: 0 where none was judged), and which comes
# first varies from one process to the next: the oracle computes the judged_only measures in a call of their own


def oracle_per_query(qrels: Any, run: Any) -> dict[tuple[str, str], float]:
    """ir_measures' default pipeline over BOTH, the judged_only measures apart (above)."""
    judged_only = [m for m in BOTH if m.params.get("judged_only")]
    rest = [m for m in BOTH if m not in judged_only]
    return {
        **per_query(ir_measures.iter_calc(rest, qrels, run)),
        **per_query(ir_measures.iter_calc(judged_only, qrels, run)),
    }


def oracle_aggregate(qrels: Any, run: Any) -> dict[str, float]:
    judged_only = [m for m in BOTH if m.params.get("judged_only")]
    rest = [m for m in BOTH if m not in judged_only]
    parts = (ir_measures.calc_aggregate(rest, qrels, run), ir_measures.calc_aggregate(judged_only, qrels, run))
    return {str(m): float(v) for part in parts for m, v in part.items()}


# pytrec_eval's own measures: its provider, called directly
PYTREC_EVAL = [m for m in BOTH if ir_measures.pytrec_eval.supports(m)]


def per_query(values: Any) -> dict[tuple[str, str], float]:
    return {(metric.query_id, str(metric.measure)): float(metric.value) for metric in values}


def assert_same(ours: dict[Any, float], theirs: dict[Any, float], tolerance: float = EXACT) -> None:
    assert ours.keys() == theirs.keys()
    different = {
        key: (ours[key], value)
        for key, value in theirs.items()
        if not math.isclose(ours[key], value, abs_tol=tolerance)
    }
    assert not different, different


def test_the_measures_are_all_provided_here_and_by_several_of_ir_measures_providers() -> None:
    assert all(PROVIDER.supports(measure) for measure in BOTH)
    assert len(PYTREC_EVAL) >= 25
    routes = {type(ir_measures.DefaultPipeline.evaluator([m], {"q": {"d": 1}})).__name__ for m in BOTH}
    assert {"PytrecEvalEvaluator", "JudgedEvaluator", "CwlEvaluator", "MsMarcoEvaluator"} <= routes


@pytest.mark.parametrize("seed", range(6))
def test_per_query_and_means_equal_ir_measures_default_pipeline(seed: int) -> None:
    """Each measure with the default pipeline's provider's tie order: trec_eval's (pytrec_eval), ascending doc
    id (Judged, RR@k by msmarco), the run's order (SDCG by cwl_eval)."""
    qrels, run = random_case(seed)
    assert_same(per_query(PROVIDER.iter_calc(BOTH, qrels, run)), oracle_per_query(qrels, run))
    ours = PROVIDER.calc_aggregate(BOTH, qrels, run)
    assert_same({str(m): v for m, v in ours.items()}, oracle_aggregate(qrels, run))


@pytest.mark.parametrize("seed", range(3))
def test_equals_ir_measures_pytrec_eval_provider(seed: int) -> None:
    qrels, run = random_case(seed)
    theirs = per_query(ir_measures.pytrec_eval.iter_calc(PYTREC_EVAL, qrels, run))
    assert_same(per_query(PROVIDER.iter_calc(PYTREC_EVAL, qrels, run)), theirs)


@pytest.mark.parametrize("seed", range(3))
def test_err_equals_gdeval_to_its_five_decimals(seed: int) -> None:
    """ERR@k by gdeval (the default pipeline's; numeric query ids, which gdeval needs; ties by descending doc
    id), printed to 5 decimals there.  gdeval leaves out the queries without a level above 0, which ir_measures
    then scores 0 (`measure.DEFAULT`); this package scores them 0 too (ERR of no relevant document)."""
    qrels, run = random_case(seed, numeric_queries=True)
    measures = [ir_measures.ERR @ 1, ir_measures.ERR @ 5, ir_measures.ERR @ 20]
    theirs = per_query(ir_measures.iter_calc(measures, qrels, run))
    assert_same(per_query(PROVIDER.iter_calc(measures, qrels, run)), theirs, tolerance=5.1e-6)


def as_formats(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> Iterator[tuple[Any, Any]]:
    """The same qrels and run as each input ir_measures takes, and as Polars frames, eager and lazy."""
    qrel_rows = [ir_measures.Qrel(q, d, r) for q, docs in qrels.items() for d, r in docs.items()]
    run_rows = [ir_measures.ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    yield qrels, run
    yield iter(qrel_rows), iter(run_rows)
    yield pd.DataFrame(qrel_rows), pd.DataFrame(run_rows)
    yield pl.DataFrame(qrel_rows), pl.DataFrame(run_rows)
    yield pl.DataFrame(qrel_rows).lazy(), pl.DataFrame(run_rows).lazy()


def test_every_input_format_gives_the_same_values() -> None:
    qrels, run = random_case(7)
    expected = oracle_per_query(qrels, run)
    for qrels_in, run_in in as_formats(qrels, run):
        assert_same(per_query(PROVIDER.iter_calc(BOTH, qrels_in, run_in)), expected)


def test_one_plan_collected_once_per_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every measure, over every query, in three tie orders: one collect of one lazy plan (the evaluator
    reads its qrels once when it is built)."""
    qrels, run = random_case(3)
    evaluator = PROVIDER.evaluator(BOTH, qrels)
    collects = []
    original = pl.LazyFrame.collect

    def counted(self: pl.LazyFrame, *args: Any, **kwargs: Any) -> pl.DataFrame:
        collects.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(pl.LazyFrame, "collect", counted)
    values = list(evaluator.iter_calc(run))
    assert len(values) == len(BOTH) * len(qrels)
    assert len(collects) == 1


def test_tie_mode_for_every_measure() -> None:
    """ties="average": the expectation over tied orders, whatever ir_measures' providers do; on a tie-free run
    it equals them."""
    qrels, run = random_case(1)
    tie_free = {q: {d: float(i) for i, d in enumerate(docs)} for q, docs in run.items()}
    measures = [ir_measures.nDCG @ 5, ir_measures.P @ 3, ir_measures.Judged @ 2]
    averaged = LodestarProvider(ties="average")
    assert_same(
        per_query(averaged.iter_calc(measures, qrels, tie_free)),
        per_query(ir_measures.iter_calc(measures, qrels, tie_free)),
    )
    with pytest.raises(ValueError, match="ties must be one of"):
        LodestarProvider(ties="random")


COMPAT = [M.Compat, M.Compat(p=0.8), M.Compat(p=0.9, normalize=False), M.Compat(p=0.5, normalize=True)]


def compat_case(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """`random_case` with its qrels listed by ascending doc id and its scores of 0 moved to -0.5: ir_measures'
    Compat orders the documents of one level that share a score (an unretrieved one scoring 0 there) as its qrels
    list them, this package's as the run ranks them (`lodestar_polars.measures.compat`), and ir_measures' compat
    provider, like this one, breaks the run's ties by ascending doc id."""
    qrels, run = random_case(seed)
    return (
        {query: dict(sorted(docs.items())) for query, docs in qrels.items()},
        {query: {doc: -0.5 if score == 0.0 else score for doc, score in docs.items()} for query, docs in run.items()},
    )


@pytest.mark.parametrize("seed", range(6))
def test_compat_equals_ir_measures_compat_provider(seed: int) -> None:
    """Per query and on average, with heavy ties, negative scores and judged documents not retrieved."""
    qrels, run = compat_case(seed)
    assert all(PROVIDER.supports(measure) for measure in COMPAT)
    routes = {type(ir_measures.DefaultPipeline.evaluator([m], {"q": {"d": 1}})).__name__ for m in COMPAT}
    assert routes == {"CompatEvaluator"}
    assert_same(per_query(PROVIDER.iter_calc(COMPAT, qrels, run)), per_query(ir_measures.iter_calc(COMPAT, qrels, run)))
    ours = PROVIDER.calc_aggregate(COMPAT, qrels, run)
    theirs = ir_measures.calc_aggregate(COMPAT, qrels, run)
    assert_same({str(m): v for m, v in ours.items()}, {str(m): float(v) for m, v in theirs.items()})


def test_a_measure_not_computed_here_is_left_to_ir_measures() -> None:
    """RBP(rel=1) (cwl_eval's binary RBP) and nDCG with a gain mapping are not this package's: the provider
    says so, and PIPELINE hands them to ir_measures' providers."""
    qrels, run = random_case(2)
    assert not PROVIDER.supports(ir_measures.RBP(rel=1))
    assert not PROVIDER.supports(ir_measures.nDCG(gains={0: 0, 1: 5}) @ 5)
    assert not PROVIDER.supports(ir_measures.alpha_nDCG(judged_only=True) @ 5)
    with pytest.raises(ValueError, match=r"lodestar_polars does not compute RBP\(rel=1\)"):
        PROVIDER.evaluator([ir_measures.RBP(rel=1)], qrels)
    measures = [ir_measures.RBP(rel=1), ir_measures.nDCG @ 5]
    assert_same(
        per_query(PIPELINE.iter_calc(measures, qrels, run)), per_query(ir_measures.iter_calc(measures, qrels, run))
    )


def test_registered_under_its_name() -> None:
    assert ir_measures.providers.registry["lodestar_polars"] is PROVIDER


def test_without_ir_measures_the_import_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ir_measures", None)
    monkeypatch.delitem(sys.modules, "lodestar_polars.ir_measures_provider")
    with pytest.raises(ImportError, match=r'pip install "lodestar-polars\[ir-measures\]"'):
        importlib.import_module("lodestar_polars.ir_measures_provider")
    monkeypatch.setitem(sys.modules, "lodestar_polars.ir_measures_provider", ir_measures_provider)


# the value each required parameter of an ir_measures measure takes when the test builds one (a required parameter
# missing here fails the test: it would otherwise be counted as not served)
REQUIRED_PARAMETERS: dict[str, Any] = {"cutoff": 10, "recall": 0.5, "max_rel": 3}
NOT_COMPUTED_HEADING = "## ir_measures' measures not computed here"


def served(name: str) -> bool:
    """Whether the provider computes ir_measures' measure `name` (its registry entry, required parameters set)."""
    measure = ir_measures.measures.registry[name]
    required = [param for param, info in measure.SUPPORTED_PARAMS.items() if info.required]
    unknown = [param for param in required if param not in REQUIRED_PARAMETERS]
    assert not unknown, f"{name} requires {unknown}: give them a value in REQUIRED_PARAMETERS"
    return bool(PROVIDER.supports(measure(**{param: REQUIRED_PARAMETERS[param] for param in required})))


def named_as_not_computed() -> set[str]:
    """The measures the docs' list of ir_measures' measures not computed here names: in backticks, before the
    colon of each bullet (`RBP`: ..., or `NRBP`, `nNRBP`, ...: ...)."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "from-ir-measures.md").read_text(encoding="utf-8")
    section = text[text.index(NOT_COMPUTED_HEADING) :]
    end = section.find("\n## ")
    section = section if end < 0 else section[:end]
    bullets = re.findall(r"^- (.*?):", section, re.MULTILINE | re.DOTALL)
    return {name for bullet in bullets for name in re.findall(r"`([^`]+)`", bullet)}


def test_every_ir_measures_measure_is_computed_here_or_named_in_the_docs_with_its_reason() -> None:
    """ir_measures' list (`ir_measures.measures.registry`, aliases included) against docs/from-ir-measures.md: a
    measure the provider does not compute is named in its list of those not computed here, and one it computes is
    not, so that the page follows both ir_measures and this package."""
    registry = set(ir_measures.measures.registry)
    named = named_as_not_computed()
    assert named <= registry, f"the docs name measures ir_measures does not have: {sorted(named - registry)}"
    missing = sorted(name for name in registry - named if not served(name))
    assert not missing, f"neither computed here nor named in docs/from-ir-measures.md: {missing}"
    computed = sorted(name for name in named if served(name))
    assert not computed, f"computed here, yet named in docs/from-ir-measures.md as not: {computed}"
    assert {"Compat", "nDCG", "AP", "SDCG", "IPrec", "P", "SetRelP", "NumRelRet"} <= registry - named
