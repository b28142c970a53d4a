"""`exprs.measure(name)`: every in-frame measure as an expression, the hand-written one where the measure has
one that takes the call's options, else derived from the measure's own module (`derived_measure`, which the
tests also call for the measures that have a hand-written expression).

Checked against real tools over a group's own rows (pytrec_eval with the frame as its judgments, ir_measures'
Compat, scikit-learn's tie-averaged ndcg_score), against the hand-written expressions (written apart, on lists),
and against `evaluate` for every measure, tie mode and gain: the derivation replaces the plan's columns with their
values over a group's rows, and that test checks the replacement, measure by measure.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lodestar_polars  # noqa: F401  (registers .rank_metrics)
from lodestar_polars import exprs
from lodestar_polars.exprs._derived import derived_measure
from lodestar_polars.measures._registry import REGISTRY

# one name per registered measure (a cut-off, a recall level, a multiplier or options where it takes them)
NAMES = [
    "num_ret", "num_rel", "num_rel_ret", "ap", "ap@5", "gm_map", "rprec", "bpref", "rr", "rr@5", "iprec@0.3",
    "p", "p@5", "r", "r@5", "infap", "gm_bpref", "rprec_mult@0.5", "utility", "11pt_avg", "bin_g", "g", "ndcg",
    "ndcg@5", "ndcg_rel", "rndcg", "relative_p@5", "success@3", "set_p", "set_relative_p", "set_recall", "set_map",
    "set_f", "num_nonrel_judged_ret", "rbp", "rbp(p=0.8)@10", "rbp_resid", "unj@5", "judged@5", "dcg@5",
    "ideal_dcg", "ideal_dcg@3", "err@5", "nerr", "yaap", "f1@5", "compat", "compat(p=0.8,normalize=False)",
    "sdcg(max_rel=4)@10", "bpm(max_rel=4)@10", "insq(max_rel=4)", "inst(max_rel=4)", "nerr8(max_rel=4)@10",
    "nerr9(max_rel=4)@10", "nerr10(max_rel=4)", "nerr11(max_rel=4)",
]  # fmt: skip
TIES = ["average", "input", "reverse", "doc", "optimistic", "pessimistic"]
CLOSE = 1e-12
# the public function, and the derivation alone
BOTH = pytest.mark.parametrize("build", [exprs.measure, derived_measure], ids=["measure", "derived"])


def tied_frame(seed: int, queries: int = 60, rows: int = 9) -> pl.DataFrame:
    """Ragged groups (1..rows rows) with tied scores, grades 0..3 and distinct doc ids, rows shuffled."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, rows + 1, queries)
    total = int(sizes.sum())
    return pl.DataFrame(
        {
            "query": np.repeat(np.arange(queries), sizes),
            "doc": np.char.add("d", rng.permutation(total).astype(str)),
            "relevance": rng.integers(0, 4, total),
            "score": rng.integers(0, 4, total).astype(float),
        }
    ).sample(fraction=1.0, shuffle=True, seed=seed)


def per_group(frame: pl.DataFrame, expression: pl.Expr) -> dict[object, float]:
    out = frame.group_by("query").agg(expression)
    return dict(zip(out["query"].to_list(), out[out.columns[-1]].to_list(), strict=True))


def close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=CLOSE, abs_tol=CLOSE)


def test_every_registered_measure_has_a_name_here() -> None:
    assert {name.split("@")[0].split("(")[0] for name in NAMES} == set(REGISTRY)


# --- real tools ----------------------------------------------------------------------------------------------

# evaluate name -> pytrec_eval measure and key (not iprec_at_recall nor 11pt_avg: pytrec_eval's trec_eval 9 takes
# the relevant rows a recall level needs as int(level x R + 0.9), trec_eval 10 as lround(level x R), as `evaluate`)
PYTREC = {
    "num_ret": ("num_ret", "num_ret"),
    "num_rel": ("num_rel", "num_rel"),
    "num_rel_ret": ("num_rel_ret", "num_rel_ret"),
    "ap": ("map", "map"),
    "rprec": ("Rprec", "Rprec"),
    "bpref": ("bpref", "bpref"),
    "rr": ("recip_rank", "recip_rank"),
    "p@5": ("P", "P_5"),
    "r@10": ("recall", "recall_10"),
    "infap": ("infAP", "infAP"),
    "rprec_mult@0.2": ("Rprec_mult", "Rprec_mult_0.20"),
    "utility": ("utility", "utility"),
    "bin_g": ("binG", "binG"),
    "g": ("G", "G"),
    "ndcg": ("ndcg", "ndcg"),
    "ndcg@10": ("ndcg_cut", "ndcg_cut_10"),
    "ndcg_rel": ("ndcg_rel", "ndcg_rel"),
    "rndcg": ("Rndcg", "Rndcg"),
    "relative_p@5": ("relative_P", "relative_P_5"),
    "success@5": ("success", "success_5"),
    "set_p": ("set_P", "set_P"),
    "set_relative_p": ("set_relative_P", "set_relative_P"),
    "set_recall": ("set_recall", "set_recall"),
    "set_map": ("set_map", "set_map"),
    "set_f": ("set_F", "set_F"),
    "num_nonrel_judged_ret": ("num_nonrel_judged_ret", "num_nonrel_judged_ret"),
}


@BOTH
@pytest.mark.parametrize("seed", [0, 1])
def test_trec_measures_equal_pytrec_eval_with_the_groups_rows_as_judgments(seed: int, build: Any) -> None:
    """pytrec_eval given each group's rows as its judgments and its run (trec_eval's order of tied documents:
    descending doc id, ties="doc"; at least one relevant row a group, as trec_eval scores a judged query)."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    frame = tied_frame(seed).filter((pl.col("relevance") > 0).any().over("query"))
    qrels = {
        str(q): {d: int(r) for d, r in zip(g["doc"], g["relevance"], strict=True)}
        for (q,), g in frame.group_by("query")
    }
    run = {
        str(q): {d: float(s) for d, s in zip(g["doc"], g["score"], strict=True)} for (q,), g in frame.group_by("query")
    }
    measures = {measure for measure, _ in PYTREC.values()}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    for name, (_, key) in PYTREC.items():
        ours = per_group(frame, build(name, ties="doc", doc="doc"))
        for query, value in ours.items():
            assert close(value, theirs[str(query)][key]), (name, query, value, theirs[str(query)][key])


@BOTH
def test_compat_equals_ir_measures_with_the_groups_rows_as_judgments(build: Any) -> None:
    """ir_measures' Compat given the frame's relevance as its qrels (every document retrieved); its ranking of
    tied scores follows the run's order, ties="input" over rows in descending doc order."""
    ir_measures = pytest.importorskip("ir_measures")
    frame = tied_frame(3).with_columns(score=pl.col("score") + pl.col("doc").str.slice(1).cast(pl.Float64) * 1e-6)
    qrels = [ir_measures.Qrel(str(q), d, int(r)) for q, d, r in frame.select("query", "doc", "relevance").iter_rows()]
    run = [ir_measures.ScoredDoc(str(q), d, float(s)) for q, d, s in frame.select("query", "doc", "score").iter_rows()]
    for name, spelled in (
        ("compat", "Compat(p=0.95)"),
        ("compat(p=0.8,normalize=False)", "Compat(p=0.8,normalize=False)"),
    ):
        measure = ir_measures.parse_measure(spelled)
        theirs = {m.query_id: m.value for m in measure.iter_calc(qrels, run)}
        ours = per_group(frame, build(name, ties="input"))
        for query, value in ours.items():
            expected = theirs.get(str(query), 0.0)
            assert close(value, expected), (name, query, value, expected)


@BOTH
@pytest.mark.parametrize("k", [None, 1, 3, 20])
def test_ndcg_equals_scikit_learns_tie_averaged_ndcg_score(k: int | None, build: Any) -> None:
    """scikit-learn's ndcg_score averages the gain of tied rows: exprs.measure's ties="average" default."""
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    frame = tied_frame(4).filter(pl.len().over("query") > 1)
    name = "ndcg" if k is None else f"ndcg@{k}"
    ours = per_group(frame, build(name))
    for (query,), group in frame.group_by("query"):
        relevance, score = [group["relevance"].to_numpy()], [group["score"].to_numpy()]
        if relevance[0].sum() == 0:
            assert ours[query] == 0.0  # no_relevant=0.0, where scikit-learn also gives 0
            continue
        assert close(ours[query], sklearn_metrics.ndcg_score(relevance, score, k=k)), query


# --- the hand-written expressions (on lists, written apart) --------------------------------------------------

HAND_WRITTEN = [
    ("ndcg@5", lambda ties, doc: exprs.ndcg(k=5, ties=ties, doc=doc), TIES),
    ("dcg", lambda ties, doc: exprs.dcg(ties=ties, doc=doc), TIES),
    ("p@3", lambda ties, doc: exprs.precision(k=3, ties=ties, doc=doc), TIES),
    ("r@3", lambda ties, doc: exprs.recall(k=3, ties=ties, doc=doc), TIES),
    ("ap", lambda ties, doc: exprs.average_precision(ties=ties, doc=doc), TIES),
    ("rr", lambda ties, doc: exprs.reciprocal_rank(ties=ties, doc=doc), TIES),
    ("success@2", lambda ties, doc: exprs.success(k=2, ties=ties, doc=doc), TIES),
    ("rprec", lambda ties, doc: exprs.rprec(ties=ties, doc=doc), TIES),
    ("f1@4", lambda ties, doc: exprs.f1(k=4, ties=ties, doc=doc), TIES),
    ("err@5", lambda ties, doc: exprs.err(k=5, ties=ties, doc=doc), TIES[1:]),
    ("nerr", lambda ties, doc: exprs.nerr(ties=ties, doc=doc), TIES[1:]),
    ("rbp(p=0.8)", lambda ties, doc: exprs.rbp(p=0.8, ties=ties, doc=doc), TIES),
    ("iprec@0.5", lambda ties, doc: exprs.iprec_at_recall(level=0.5, ties=ties, doc=doc), TIES[1:]),
    ("bin_g", lambda ties, doc: exprs.bin_g(ties=ties, doc=doc), TIES),
]


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize(("name", "hand_written", "modes"), HAND_WRITTEN, ids=[case[0] for case in HAND_WRITTEN])
def test_equals_the_hand_written_expression(name: str, hand_written: object, modes: list[str], ties: str) -> None:
    frame = tied_frame(5)
    doc = "doc" if ties == "doc" else None
    if ties not in modes:  # both refuse it, as evaluate does
        with pytest.raises(ValueError, match="has no exact expectation"):
            hand_written(ties, doc)  # type: ignore[operator]
        with pytest.raises(ValueError, match="has no exact expectation"):
            derived_measure(name, ties=ties, doc=doc)  # type: ignore[arg-type]
        return
    theirs = per_group(frame, hand_written(ties, doc))  # type: ignore[operator]
    ours = per_group(frame, derived_measure(name, ties=ties, doc=doc))  # type: ignore[arg-type]
    assert ours.keys() == theirs.keys()
    for query, value in ours.items():
        assert close(value, theirs[query]), (query, value, theirs[query])


# --- the derivation, measure by measure ----------------------------------------------------------------------


def _refusal(name: str, ties: str) -> str | None:
    try:
        tied_frame(0, queries=2).rank_metrics.evaluate([name], ties=ties, doc="doc")
    except ValueError as error:
        return str(error)
    return None


@BOTH
@pytest.mark.parametrize("gain", ["linear", "exponential"])
@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("name", NAMES)
def test_each_measure_is_evaluates_value_for_a_query_of_the_groups_rows(
    name: str, ties: str, gain: str, build: Any
) -> None:
    """What the derivation replaces (the plan's per-row and per-query columns by their values over a group's
    rows) gives `evaluate`'s value, in every tie mode `evaluate` takes for the measure, and the same refusal in
    the others."""
    frame = tied_frame(6)
    options = {"ties": ties, "gain": gain, "doc": "doc"}
    refused = _refusal(name, ties)
    if refused is not None:
        with pytest.raises(ValueError, match="has no"):
            build(name, **options)
        return
    expected = frame.rank_metrics.evaluate([name], **options)  # type: ignore[arg-type]
    expected_by_query = dict(zip(expected["query"].to_list(), expected[expected.columns[-1]].to_list(), strict=True))
    got = frame.group_by("query").agg(build(name, **options))
    assert got.columns[-1] == expected.columns[-1]  # named as evaluate names it
    for query, value in zip(got["query"].to_list(), got[got.columns[-1]].to_list(), strict=True):
        assert close(value, expected_by_query[query]), (query, value, expected_by_query[query])


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), name=st.sampled_from(NAMES), shuffle=st.integers(0, 2**32 - 1))
def test_the_rows_order_changes_no_value_beyond_rounding(seed: int, name: str, shuffle: int) -> None:
    """ties="doc" orders the rows whatever their order in the frame: a shuffle leaves every value (its last bits
    aside: sums in another order)."""
    frame = tied_frame(seed % 1000, queries=20)
    expression = exprs.measure(name, ties="doc", doc="doc")
    before = per_group(frame, expression)
    after = per_group(frame.sample(fraction=1.0, shuffle=True, seed=shuffle % 1000), expression)
    assert before.keys() == after.keys()
    for query, value in before.items():
        assert close(value, after[query]), (query, value, after[query])


def test_works_in_every_context_and_engine() -> None:
    """`group_by().agg()` under both engines, a window `.over()`, and a whole frame in `select`."""
    frame = tied_frame(7, queries=10)
    for name in ("bpref", "compat", "rndcg", "rprec_mult@0.5", "rbp"):
        expression = exprs.measure(name, ties="doc", doc="doc")
        grouped = frame.group_by("query").agg(expression).sort("query")
        streamed = frame.lazy().group_by("query").agg(expression).sort("query").collect(engine="streaming")
        windowed = frame.select("query", expression.over("query")).unique().sort("query")
        first = frame.filter(pl.col("query") == 0).select(expression).item()
        assert grouped.equals(streamed), name
        assert np.allclose(grouped[:, 1].to_numpy(), windowed[:, 1].to_numpy(), rtol=CLOSE, atol=CLOSE), name
        assert close(first, grouped[0, 1]), name


def test_measure_is_the_hand_written_expression_where_it_takes_the_calls_options() -> None:
    """`measure` hands the call to the hand-written expression (the same expression, so the same bits) where one
    takes every option the call sets, and derives the measure where one does not (ndcg's log_base)."""
    frame = tied_frame(8)
    assert str(exprs.measure("ndcg@5")) == str(exprs.ndcg(k=5).alias("ndcg@5"))
    assert str(exprs.measure("rbp(p=0.8)@10", ties="input")) == str(
        exprs.rbp(k=10, p=0.8, ties="input").alias("rbp(p=0.8)@10")
    )
    assert str(exprs.measure("iprec@0.5", ties="doc", doc="doc")) == str(
        exprs.iprec_at_recall(level=0.5, ties="doc", doc="doc").alias("iprec@0.5")
    )
    derived = exprs.measure("ndcg@5", log_base=10.0)
    assert str(derived) == str(derived_measure("ndcg@5", log_base=10.0))
    expected = frame.rank_metrics.evaluate(["ndcg@5"], log_base=10.0)
    got = frame.group_by("query").agg(derived).join(expected, on="query", suffix="_evaluate")
    assert np.allclose(got["ndcg@5"].to_numpy(), got["ndcg@5_evaluate"].to_numpy(), rtol=CLOSE, atol=CLOSE)


# --- errors --------------------------------------------------------------------------------------------------


def test_data_errors_word_the_group_as_the_hand_written_expressions_do() -> None:
    frame = pl.DataFrame(
        {"query": [1, 1, 2, 2], "doc": ["a", "a", "b", "c"], "relevance": [2, 0, -1, 5], "score": [3.0, 2, 1, 4]}
    )
    with pytest.raises(ValueError, match=r"a group lists doc 'a' more than once \(column 'doc'\)"):
        frame.group_by("query").agg(exprs.measure("p@2", doc="doc"))
    with pytest.raises(ValueError, match=r"negative value\(s\) in relevance column 'relevance' \(the least -1\)"):
        frame.group_by("query").agg(exprs.measure("ndcg"))
    with pytest.raises(ValueError, match=r"relevance -1 \(column 'relevance'\) is outside ERR's grades 0..4"):
        frame.group_by("query").agg(exprs.measure("err@2", ties="input"))
    null_score = frame.with_columns(score=pl.Series([1.0, None, 2.0, 3.0]))
    with pytest.raises(ValueError, match=r"a group has 1 null, NaN or infinite value\(s\) in score column 'score'"):
        null_score.group_by("query").agg(exprs.measure("compat", ties="input"))
    nothing = pl.DataFrame({"query": [1, 1], "relevance": [0, 0], "score": [1.0, 2.0]})
    with pytest.raises(ValueError, match=r"a group has no relevant document \(the ideal ranking is empty\)"):
        nothing.group_by("query").agg(exprs.measure("compat", ties="input", no_relevant="error"))


def test_bad_names_and_options_get_evaluates_errors() -> None:
    with pytest.raises(ValueError, match=r"unknown measure 'ndgc@10'; did you mean 'ndcg@10'"):
        exprs.measure("ndgc@10")
    with pytest.raises(ValueError, match="reads subtopic judgments"):
        exprs.measure("alpha_ndcg@10")
    with pytest.raises(TypeError, match="one measure name"):
        exprs.measure(["ndcg"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"iprec@0.5 has no exact expectation under ties='average'"):
        exprs.measure("iprec@0.5")
    with pytest.raises(ValueError, match="ties='doc'"):
        exprs.measure("ndcg", ties="doc")  # no doc column
