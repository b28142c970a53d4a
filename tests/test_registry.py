"""Every measure of the registry (`lodestar_polars.measures._registry.REGISTRY`) meets the front ends and its own
declarations: its names resolve through evaluate(), its `.rank_metrics` method and its evaluate column agree,
its values lie within its declared bounds, its summary is what evaluate_mean gives, and the names it declares
for trec_eval, ir_measures and ranx are those tools' names for the same numbers.  A measure added to the
registry is checked here without new test code."""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import lodestar_polars
from lodestar_polars._measure_table import measure_table
from lodestar_polars._spec import MEASURE_NAMES, parse_measures
from lodestar_polars.measures._base import Definition
from lodestar_polars.measures._registry import REGISTRY
from tests.conftest import Engine

DEFINITIONS = list(REGISTRY.values())
TIES = ("average", "doc", "optimistic", "pessimistic", "input")
CUTOFF = 3


WITH_METHOD = [definition for definition in DEFINITIONS if definition.method is not None]
LEVELS = (0.0, 0.5, 1.0)
MULTIPLIERS = (0.2, 1.0, 2.0)
# the values `name@x` tries, for each measure whose parameter is required (a recall level or a multiplier)
REQUIRED_PARAMETER = {"recall_level": LEVELS, "multiplier": MULTIPLIERS}


def _ids(definition: Definition) -> str:
    return definition.name


def _evaluated(definition: Definition) -> list[str]:
    """The evaluate() names of a measure over its parameter: whole and cut off, or at recall levels (with its
    required options at their example values: `sdcg(max_rel=4)@3`)."""
    stem = definition.example_stem
    if definition.parameter == "cutoff":
        return [stem, f"{stem}@{CUTOFF}"]
    if definition.parameter == "required_cutoff":
        return [f"{stem}@{CUTOFF}"]
    if definition.parameter in REQUIRED_PARAMETER:
        return [f"{stem}@{level!r}" for level in REQUIRED_PARAMETER[definition.parameter]]
    return [stem]


def _parameters(definition: Definition) -> list[float | None]:
    """The parameters the tool-name tests try: no cut-off and a cut-off, each recall level, or none."""
    if definition.parameter == "cutoff":
        return [None, CUTOFF]
    if definition.parameter == "required_cutoff":
        return [CUTOFF]
    if definition.parameter in REQUIRED_PARAMETER:
        return list(REQUIRED_PARAMETER[definition.parameter])
    return [None]


TOOL_CASES = [(definition, parameter) for definition in DEFINITIONS for parameter in _parameters(definition)]


def named_by(tool: str) -> list[Any]:
    """The (measure, parameter) cases `tool` has a name for (trec_eval, ir_measures or ranx): the others are
    not collected, rather than skipped (each measure's table row says which tools name it)."""
    return [
        pytest.param(definition, parameter, id=f"{definition.name}-{parameter}")
        for definition, parameter in TOOL_CASES
        if getattr(definition, tool).name(parameter, definition.example_options) is not None
    ]


def random_frame(seed: int, *, tied: bool) -> pl.DataFrame:
    """Queries of 1 to 9 rows with graded labels 0..3 (some queries with no relevant row); scores drawn from a
    few values when `tied`, distinct otherwise."""
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(8):
        n = int(rng.integers(1, 10))
        labels = rng.integers(0, 4, n) if q % 3 else np.zeros(n, dtype=np.int64)
        scores = rng.integers(0, 3, n) / 2.0 if tied else rng.permutation(n) / 7.0
        rows += [(f"q{q}", f"d{i}", float(s), int(r)) for i, (s, r) in enumerate(zip(scores, labels, strict=True))]
    return pl.DataFrame(rows, schema=["query", "doc", "score", "relevance"], orient="row")


@pytest.mark.parametrize("definition", DEFINITIONS, ids=_ids)
def test_its_names_resolve_through_evaluate(definition: Definition) -> None:
    cut = f"@{CUTOFF}"
    suffix = {"cutoff": cut, "required_cutoff": cut, "recall_level": "@.5", "multiplier": "@.5", "none": ""}[
        definition.parameter
    ]
    stem = definition.example_stem
    column = {
        "cutoff": f"{stem}@{CUTOFF}",
        "required_cutoff": f"{stem}@{CUTOFF}",
        "recall_level": f"{stem}@0.5",
        "multiplier": f"{stem}@0.5",
    }
    required_options = stem.removeprefix(definition.name)  # `(max_rel=4)`: options without default
    for name in (definition.name, *definition.aliases):
        written = f"{name}{required_options}"
        for spelled in (f"{written}{suffix}", f"{written.upper()}{suffix}", f" {written}{suffix} "):
            (measure,) = parse_measures(spelled)
            assert measure.kind == definition.name
            assert measure.column == column.get(definition.parameter, stem)
        if definition.parameter == "cutoff":
            assert parse_measures(written)[0].column == stem
        else:  # a cut-off, recall level or multiplier is required; a measure without parameter takes no @
            required = definition.parameter in REQUIRED_PARAMETER or definition.parameter == "required_cutoff"
            wrong = written if required else f"{written}@{CUTOFF}"
            with pytest.raises(ValueError, match=definition.name):
                parse_measures(wrong)
        if required_options:
            with pytest.raises(ValueError, match=rf"{definition.name} needs .*: write {re.escape(stem)}"):
                parse_measures(f"{name}{suffix}")
        assert MEASURE_NAMES[name] == definition.name


def test_evaluate_takes_the_names_it_took_before_the_registry() -> None:
    """The evaluate() names as they were spelled out in `_spec.py` before the measure layer."""
    assert MEASURE_NAMES == {
        "ndcg": "ndcg",
        "dcg": "dcg",
        "rr": "rr",
        "mrr": "rr",
        "recip_rank": "rr",
        "reciprocal_rank": "rr",
        "p": "p",
        "precision": "p",
        "r": "r",
        "recall": "r",
        "ap": "ap",
        "map": "ap",
        "average_precision": "ap",
        "success": "success",
        "hit_rate": "success",
        # trec_eval's official set (issue 20)
        "num_ret": "num_ret",
        "num_rel": "num_rel",
        "num_rel_ret": "num_rel_ret",
        "gm_map": "gm_map",
        "gmap": "gm_map",
        "rprec": "rprec",
        "r-precision": "rprec",
        "r_precision": "rprec",
        "bpref": "bpref",
        "iprec": "iprec",
        "iprec_at_recall": "iprec",
        "infap": "infap",
        "inferred_ap": "infap",
        "err": "err",
        "expected_reciprocal_rank": "err",
        "nerr": "nerr",
        # trec_eval's all_trec set measures and others (issue 20)
        "num_nonrel_judged_ret": "num_nonrel_judged_ret",
        "set_p": "set_p",
        "set_precision": "set_p",
        "set_recall": "set_recall",
        "set_r": "set_recall",
        "set_relative_p": "set_relative_p",
        "set_relative_precision": "set_relative_p",
        "set_map": "set_map",
        "set_ap": "set_map",
        "set_f": "set_f",
        "utility": "utility",
        "gm_bpref": "gm_bpref",
        "relative_p": "relative_p",
        "relative_precision": "relative_p",
        "unj": "unj",
        "unjudged": "unj",
        "judged": "judged",
        "f1": "f1",
        "rbp": "rbp",
        "rank_biased_precision": "rbp",
        "rbp_resid": "rbp_resid",
        "rprec_mult": "rprec_mult",
        "bin_g": "bin_g",
        "bing": "bin_g",
        "11pt_avg": "11pt_avg",
        "11pt_average": "11pt_avg",
        "ipavg": "11pt_avg",
        "g": "g",
        "normalized_gain": "g",
        "ndcg_rel": "ndcg_rel",
        "rndcg": "rndcg",
        "sdcg": "sdcg",
        "scaled_dcg": "sdcg",
        # trec_eval measures outside all_trec
        "ideal_dcg": "ideal_dcg",
        "idcg": "ideal_dcg",
        "yaap": "yaap",
        # ir_measures' C/W/L measures (cwl_eval)
        "nerr8": "nerr8",
        "nerr9": "nerr9",
        "bpm": "bpm",
        "insq": "insq",
        "nerr10": "nerr10",
        "nerr11": "nerr11",
        "inst": "inst",
        # ir_measures' Compat (its compat provider)
        "compat": "compat",
        "compatibility": "compat",
    }


@pytest.mark.parametrize("definition", WITH_METHOD, ids=_ids)
def test_its_method_and_its_evaluate_column_agree(definition: Definition, engine: Engine) -> None:
    assert definition.method is not None
    frame = random_frame(1, tied=True)
    single = engine(frame, definition.method, k=[CUTOFF, None])
    assert single.columns == ["query", f"{definition.method}@{CUTOFF}", definition.method]
    names = [f"{definition.name}@{CUTOFF}", definition.name]
    others = [f"{other.name}@2" for other in WITH_METHOD if other is not definition]
    evaluated = engine(frame, "evaluate", [*names, *others])  # beside every other measure
    assert evaluated.columns[:3] == ["query", *names]
    for method_column, name in zip(single.columns[1:], names, strict=True):
        # approx: the in-memory engine sums a query's tie blocks in an order of its own, so two runs of the same
        # plan can differ in the last bit (seen with average precision, before the measure layer too)
        assert single[method_column].to_list() == pytest.approx(evaluated[name].to_list(), rel=1e-14, abs=0), name


@pytest.mark.parametrize("definition", DEFINITIONS, ids=_ids)
def test_its_values_lie_within_its_bounds(definition: Definition, engine: Engine) -> None:
    low, high = definition.bounds
    frame = random_frame(2, tied=True)
    names = _evaluated(definition)
    for ties in TIES:
        # no_relevant=None: a query with nothing to normalise by is null, not a value the user chose
        options: dict[str, Any] = {"doc": "doc", "ties": ties, "no_relevant": None}
        refused = definition.refuses_average if ties == "average" else None
        if ties in ("optimistic", "pessimistic"):
            refused = definition.refuses_bounds
        if refused is not None:
            with pytest.raises(ValueError, match=rf"{definition.name}.*\({re.escape(refused)}\); pass ties='doc'"):
                engine(frame, "evaluate", names, **options)
            continue
        result = engine(frame, "evaluate", names, **options)
        values = pl.concat([result[name] for name in names]).drop_nulls()
        assert values.len() > 0, ties
        assert values.is_finite().all(), ties
        assert (values >= low).all() and (values <= high).all(), (ties, values.min(), values.max())


@pytest.mark.parametrize("definition", DEFINITIONS, ids=_ids)
def test_its_summary_is_what_evaluate_mean_and_mean_give(definition: Definition) -> None:
    frame = random_frame(3, tied=True)
    names = _evaluated(definition)
    ties = "doc" if definition.refuses_average is not None else "average"
    per_query = frame.rank_metrics.evaluate(names, doc="doc", ties=ties)
    means = frame.rank_metrics.evaluate_mean(names, doc="doc", ties=ties)
    again = lodestar_polars.mean(per_query)
    for name in names:
        values = per_query[name].to_list()
        if definition.summary == "sum":
            expected = sum(values)
        elif definition.summary == "geometric":  # trec_eval's gm_map: exp(mean(log(max(value, 1e-5))))
            expected = math.exp(sum(math.log(max(v, 1e-5)) for v in values) / len(values))
        else:
            assert definition.summary == "mean"
            expected = sum(values) / len(values)
        assert means[name].item() == pytest.approx(expected, rel=1e-12, abs=1e-15)
        assert again[name].item() == pytest.approx(expected, rel=1e-12, abs=1e-15)


# --- the names other tools give the same measure, checked on a tie-free run against each tool -----------------


def _judged(frame: pl.DataFrame) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, int]]]:
    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for query, doc, score, relevance in frame.iter_rows():
        run.setdefault(query, {})[doc] = score
        qrels.setdefault(query, {})[doc] = relevance
    return run, qrels


def _tool_frame() -> pl.DataFrame:
    """Tie-free, every query with a relevant row (the tools differ on the others)."""
    frame = random_frame(4, tied=False)
    return frame.filter((pl.col("relevance") > 0).any().over("query"))


def _ours(frame: pl.DataFrame, definition: Definition, cutoff: float | None) -> dict[str, float]:
    stem = definition.example_stem
    if definition.parameter in REQUIRED_PARAMETER:
        name = f"{stem}@{cutoff!r}"
    else:
        name = stem if cutoff is None else f"{stem}@{cutoff}"
    result = frame.rank_metrics.evaluate(name, doc="doc", ties="doc", qrels=frame.drop("score"))
    return dict(zip(result["query"], result[name], strict=True))


# measures whose numbers in pytrec_eval (trec_eval 9) are not trec_eval 10's, and why; the real trec_eval 10
# binary checks them (tests/test_trec_eval_binary.py)
PYTREC_EVAL_DIFFERS = {
    "11pt_avg": "pytrec_eval's 11pt_avg takes trec_eval 9's recall cut-offs, floor(x R + 0.9), where trec_eval 10 "
    "rounds x R as its iprec_at_recall does (a query with R = 4 differs at level 0.3)",
}


@pytest.mark.parametrize(("definition", "cutoff"), named_by("trec_eval"))
def test_its_trec_eval_name_is_pytrec_evals_for_the_same_numbers(definition: Definition, cutoff: float | None) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec_eval is a test dependency")
    spelled = definition.trec_eval.name(cutoff, definition.example_options)
    assert spelled is not None
    if definition.name in PYTREC_EVAL_DIFFERS:
        pytest.skip(PYTREC_EVAL_DIFFERS[definition.name])
    if definition.parameter in REQUIRED_PARAMETER:
        # trec_eval's default levels include 0.0, 0.5 and 1.0, its default multipliers 0.2, 1.0 and 2.0
        requested = spelled.rsplit("_", 1)[0]
    else:
        requested = spelled if cutoff is None else spelled.removesuffix(f"_{cutoff}") + f".{cutoff}"
    if requested.partition(".")[0] not in pytrec_eval.supported_measures:
        # pytrec_eval's trec_eval 9 lacks trec_eval 10's newer measures: tests/test_trec_eval_binary.py checks them
        pytest.skip(f"pytrec_eval has no {requested}")
    frame = _tool_frame()
    run, qrels = _judged(frame)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {requested}).evaluate(run)
    ours = _ours(frame, definition, cutoff)
    if definition.summary == "geometric":  # trec_eval keeps log(max(value, 1e-5)) per query
        ours = {q: math.log(max(value, 1e-5)) for q, value in ours.items()}
    assert {q: values[spelled] for q, values in theirs.items()} == pytest.approx(ours, rel=1e-12, abs=1e-12)


# measures ir_measures computes otherwise on this test's graded judgments, and where they are compared instead
IR_MEASURES_DIFFERS = {
    "rbp": "ir_measures' default pipeline has no provider for RBP(p=...) (trectools, outside it, sums the raw "
    "relevance where trec_eval's rbp brings graded gains into [0, 1]): tests/test_gain_measures.py compares them, "
    "and cwl_eval's RBP(p=...,rel=1), on binary judgments",
}


@pytest.mark.parametrize(("definition", "cutoff"), named_by("ir_measures"))
def test_its_ir_measures_name_is_ir_measures_for_the_same_numbers(definition: Definition, cutoff: float | None) -> None:
    ir_measures = pytest.importorskip("ir_measures", reason="ir_measures is a test dependency")
    spelled = definition.ir_measures.name(cutoff, definition.example_options)
    assert spelled is not None
    if definition.name in IR_MEASURES_DIFFERS:
        pytest.skip(IR_MEASURES_DIFFERS[definition.name])
    frame = _tool_frame()
    measure = ir_measures.parse_measure(spelled)
    # ir_measures computes ERR with gdeval, which takes numeric query ids only and prints 5 decimals
    gdeval = measure.NAME == "ERR"
    if gdeval:
        frame = frame.with_columns(pl.col("query").str.strip_prefix("q"))
    qrels = [ir_measures.Qrel(q, d, r) for q, d, _, r in frame.iter_rows()]
    run = [ir_measures.ScoredDoc(q, d, s) for q, d, s, _ in frame.iter_rows()]
    theirs = {value.query_id: value.value for value in ir_measures.iter_calc([measure], qrels, run)}
    tolerance = 5.1e-6 if gdeval else 1e-12
    assert theirs == pytest.approx(_ours(frame, definition, cutoff), rel=tolerance, abs=tolerance)


@pytest.mark.parametrize(("definition", "cutoff"), named_by("ranx"))
def test_its_ranx_name_is_ranx_for_the_same_numbers(definition: Definition, cutoff: float | None) -> None:
    ranx = pytest.importorskip("ranx", reason="ranx is a test dependency")
    spelled = definition.ranx.name(cutoff, definition.example_options)
    assert spelled is not None
    frame = _tool_frame()
    run, qrels = _judged(frame)
    relevant = {q: {d: r for d, r in docs.items() if r > 0} for q, docs in qrels.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba type-safety warnings inside ranx
        ranx_run = ranx.Run(run)
        values = ranx.evaluate(ranx.Qrels(relevant), ranx_run, spelled, return_mean=False)
    theirs = dict(zip(ranx_run.keys(), (float(v) for v in values), strict=True))
    assert theirs == pytest.approx(_ours(frame, definition, cutoff), rel=1e-12, abs=1e-12)


def test_every_measure_names_what_its_tests_compare_it_with() -> None:
    """The measure tables (docs/measures.md, README.md) print `oracle`: a measure added without it fails here."""
    missing = [name for name, definition in REGISTRY.items() if not definition.oracle.strip()]
    assert not missing, missing


def test_readme_measure_table_is_the_registrys() -> None:
    """README.md holds a copy of the generated measure table between its markers: regenerate it with
    `python -c "from lodestar_polars._measure_table import measure_table; print(measure_table(), end='')"`."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    start, end = "<!-- measure-table: start -->\n", "<!-- measure-table: end -->"
    assert start in readme and end in readme, "README.md lost its measure-table markers"
    copy = readme[readme.index(start) + len(start) : readme.index(end)]
    assert copy == measure_table()
