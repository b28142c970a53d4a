"""trec_eval's set measures (set_P, set_recall, set_relative_P, set_map, set_F), utility,
num_nonrel_judged_ret, gm_bpref, relative_P@k and unj@k, with ir_measures' Judged@k and ranx's f1@k and
hit_rate@k: against ir_measures and ranx on random runs, tie averaging and tie bounds against every order of
the tied rows, and the edge cases derived by hand.  trec_eval's binary checks the trec_eval ones through the
CLI (tests/test_trec_eval_binary.py)."""

from __future__ import annotations

import itertools
import math
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.cases import Qrels, Run, qrels_frame, ranx_values, run_and_qrels, run_frame, tie_free_case

# measures whose value depends on the order within the first k positions
ORDERED = ["unj@1", "unj@2", "unj@4", "unj@9", "judged@1", "judged@2", "judged@9", "relative_p@2", "f1@1", "f1@3"]
# measures of the whole list, whatever its order
ORDER_FREE = ["unj", "judged", "relative_p", "f1", "set_p", "set_recall", "set_relative_p", "set_map", "set_f"]
ORDER_FREE += ["set_f(beta=0.25)", "utility(a=2,c=-0.5)", "num_nonrel_judged_ret"]


@st.composite
def tied_query(draw: st.DrawFn) -> tuple[pl.DataFrame, pl.DataFrame]:
    """One query of 1-5 rows, scores from two values (heavy ties), judgments at -1..2 for some of its docs and
    for docs it did not retrieve."""
    size = draw(st.integers(1, 5))
    docs = [f"d{i}" for i in range(size)]
    scores = [draw(st.sampled_from([0.0, 1.0])) for _ in docs]
    judged = {d: draw(st.integers(-1, 2)) for d in [*docs, "x", "y"] if draw(st.booleans())}
    judged.setdefault("x", 1)  # every judged query keeps a judgment
    run = pl.DataFrame({"query": ["q"] * size, "doc": docs, "score": scores})
    qrels = pl.DataFrame(
        {"query": ["q"] * len(judged), "doc": list(judged), "relevance": list(judged.values())},
        schema={"query": pl.String, "doc": pl.String, "relevance": pl.Int64},
    )
    return run, qrels


def every_order(run: pl.DataFrame, qrels: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The query once per order of its rows, as queries "0", "1", ...; each judged as the query."""
    orders = list(itertools.permutations(range(run.height)))
    runs = [run[list(order)].with_columns(pl.lit(str(i)).alias("query")) for i, order in enumerate(orders)]
    judged = [qrels.with_columns(pl.lit(str(i)).alias("query")) for i in range(len(orders))]
    return pl.concat(runs), pl.concat(judged)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=tied_query())
def test_ties_average_is_the_mean_and_the_bounds_the_extremes_over_every_order(
    case: tuple[pl.DataFrame, pl.DataFrame],
) -> None:
    """ties="input" scores each order of the rows as given; ties="average" is their mean, the bounds their
    least (pessimistic) and largest (optimistic) value: every tied order is one of the orders of the rows."""
    run, qrels = case
    orders, judged = every_order(run, qrels)
    measures = [*ORDERED, *ORDER_FREE]
    by_order = orders.rank_metrics.evaluate(measures, doc="doc", ties="input", qrels=judged, no_relevant=0.0)
    for ties, expected in (("average", pl.mean), ("optimistic", pl.max), ("pessimistic", pl.min)):
        got = run.rank_metrics.evaluate(measures, doc="doc", ties=ties, qrels=qrels, no_relevant=0.0)
        for name in measures:
            value = by_order.select(expected(name)).item()
            assert got[name].item() == pytest.approx(value, rel=1e-12, abs=1e-12), (ties, name)
    for name in ORDER_FREE:
        assert by_order[name].n_unique() == 1, name


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_set_measures_and_judged_equal_ir_measures(seed: int) -> None:
    """SetP, SetR, SetRelP, SetAP, SetF (beta 1 and 0.5) and Judged@k on tie-free runs with judged documents
    not retrieved and unjudged documents retrieved (no negative levels: ir_measures counts those judged)."""
    ir_measures = pytest.importorskip("ir_measures", reason="ir_measures is a test dependency")
    run, qrels = tie_free_case(seed)
    pairs = {
        "set_p": "SetP",
        "set_recall": "SetR",
        "set_relative_p": "SetRelP",
        "set_map": "SetAP",
        "set_f": "SetF",
        "set_f(beta=0.5)": "SetF(beta=0.5)",
        "judged@1": "Judged@1",
        "judged@5": "Judged@5",
        "judged@50": "Judged@50",
        "judged": "Judged",
    }
    ours = run_frame(run).rank_metrics.evaluate(list(pairs), doc="doc", ties="doc", qrels=qrels_frame(qrels))
    measures = [ir_measures.parse_measure(name) for name in pairs.values()]
    theirs: dict[tuple[str, str], float] = {}
    judgments = [ir_measures.Qrel(q, d, r) for q, docs in qrels.items() for d, r in docs.items()]
    scored = [ir_measures.ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    for value in ir_measures.iter_calc(measures, judgments, scored):
        theirs[value.query_id, str(value.measure)] = value.value
    for ours_name, their_name in pairs.items():
        expected = [theirs[query, str(ir_measures.parse_measure(their_name))] for query in ours["query"]]
        assert ours[ours_name].to_list() == pytest.approx(expected, rel=1e-12, abs=1e-12), ours_name


JUDGED_PAIRS = {"judged@1": "Judged@1", "judged@3": "Judged@3", "judged@5": "Judged@5", "judged": "Judged"}
JUDGED_PAIRS["judged@20"] = "Judged@20"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=run_and_qrels())
def test_judged_equals_ir_measures_with_negative_levels_and_ties(case: tuple[Run, Qrels]) -> None:
    """Judged@k as ir_measures computes it (its judged provider, the default for Judged) on judgments at levels
    -3..3: a document judged at a negative level counts as judged.  ir_measures breaks ties by ascending doc
    id: the rows are given in that order with ties="input".  Judged queries missing from the run score 0 in
    both (missing_queries="zero"); per query and the mean."""
    ir_measures = pytest.importorskip("ir_measures", reason="ir_measures is a test dependency")
    run, qrels = case
    if not set(run) & set(qrels):
        return  # no query to score: ir_measures scores only the judged ones missing from the run
    frame = run_frame(run).sort(["query", "score", "doc"], descending=[False, True, False])
    options: dict[str, Any] = {"doc": "doc", "ties": "input", "qrels": qrels_frame(qrels), "missing_queries": "zero"}
    ours = frame.rank_metrics.evaluate(list(JUDGED_PAIRS), **options)
    measures = {ours_name: ir_measures.parse_measure(name) for ours_name, name in JUDGED_PAIRS.items()}
    judgments = [ir_measures.Qrel(q, d, r) for q, docs in qrels.items() for d, r in docs.items()]
    scored = [ir_measures.ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    theirs = {(m.query_id, m.measure): m.value for m in ir_measures.iter_calc(measures.values(), judgments, scored)}
    for ours_name, measure in measures.items():
        expected = [theirs[query, measure] for query in ours["query"]]
        assert ours[ours_name].to_list() == pytest.approx(expected, rel=1e-12, abs=1e-12), ours_name
    means = frame.rank_metrics.evaluate_mean(list(JUDGED_PAIRS), **options)
    aggregate = ir_measures.calc_aggregate(measures.values(), judgments, scored)
    for ours_name, measure in measures.items():
        assert means[ours_name].item() == pytest.approx(aggregate[measure], rel=1e-12, abs=1e-12), ours_name


def test_judged_counts_negative_levels_as_judged_and_unj_as_unjudged() -> None:
    """One query, tie-free: a judged 2, b judged -1, c judged -2, d not in the judgments.  judged@k (ir_measures)
    counts a, b and c: @2 2/2, @3 3/3, @4 3/4; unj@k (trec_eval) counts b, c and d unjudged: @2 1/2, @4 3/4."""
    run = pl.DataFrame({"query": ["q"] * 4, "doc": ["a", "b", "c", "d"], "score": [4.0, 3.0, 2.0, 1.0]})
    qrels = pl.DataFrame({"query": ["q"] * 3, "doc": ["a", "b", "c"], "relevance": [2, -1, -2]})
    measures = ["judged@2", "judged@3", "judged@4", "unj@2", "unj@4"]
    result = run.rank_metrics.evaluate(measures, doc="doc", qrels=qrels, ties="doc")
    assert result.row(0) == ("q", 1.0, 1.0, 3 / 4, 1 / 2, 3 / 4)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_f1_and_hit_rate_equal_ranx(seed: int) -> None:
    """ranx's f1@k (k past the lists too) and f1, and its hit_rate@k, which is success@k (an alias)."""
    run, qrels = tie_free_case(seed)
    metrics = ["f1@1", "f1@3", "f1@10", "f1@100", "f1", "hit_rate@1", "hit_rate@5"]
    theirs = ranx_values(run, qrels, metrics)
    ours = run_frame(run).rank_metrics.evaluate(metrics, doc="doc", ties="doc", qrels=qrels_frame(qrels), no_relevant=0)
    columns = {"hit_rate@1": "success@1", "hit_rate@5": "success@5"}
    for metric in metrics:
        values = dict(zip(ours["query"], ours[columns.get(metric, metric)], strict=True))
        assert values == pytest.approx({q: v[metric] for q, v in theirs.items()}, rel=1e-12, abs=1e-12), metric


def test_hit_rate_is_success() -> None:
    frame = pl.DataFrame({"query": ["q", "q"], "score": [1.0, 0.0], "relevance": [0, 1]})
    result = frame.rank_metrics.evaluate(["hit_rate@1", "hit_rate@2"])
    assert result.columns == ["query", "success@1", "success@2"]
    assert result.row(0) == ("q", 0.0, 1.0)


# --- edge cases derived by hand -------------------------------------------------------------------------------

EDGE_RUN: Run = {
    # a 2 (relevant), b 0 (judged non-relevant), c -1 (judged unjudged), d unjudged; scores 4 > 3 = 3 > 1
    "q1": {"a": 4.0, "b": 3.0, "c": 3.0, "d": 1.0},
    # nothing relevant retrieved or judged: its judgments are all 0
    "q2": {"e": 1.0, "f": 0.5},
}
EDGE_QRELS: Qrels = {
    "q1": {"a": 2, "b": 0, "c": -1, "g": 1, "h": 1},  # R = 3 (a, g, h), judged non-relevant: b
    "q2": {"e": 0, "z": 0},  # R = 0
    "q3": {"k": 1, "m": 0},  # missing from the run, R = 1
}


def edge(measures: list[str], **options: Any) -> dict[str, dict[str, float | None]]:
    result = run_frame(EDGE_RUN).rank_metrics.evaluate(
        measures, doc="doc", qrels=qrels_frame(EDGE_QRELS), **({"ties": "doc", "no_relevant": 0.0} | options)
    )
    return {row.pop("query"): row for row in result.iter_rows(named=True)}


def test_the_set_measures_by_hand() -> None:
    """q1: n = 4 rows, h = 1 (a), R = 3: set_P 1/4, set_recall 1/3, set_relative_P 1 / min(4, 3) = 1/3,
    set_map 1 / (4 x 3) = 1/12, set_F = (1 + beta) P R / (beta P + R) = (1 + beta) h / (beta R + n) = 2/7,
    set_F(beta=0.5) = 1.5 / (1.5 + 4) = 3/11,
    num_nonrel_judged_ret 1 (b; c judged -1 and d unjudged count for nothing).  q2: R = 0: no_relevant for
    those divided by R (0.5 here), set_P 0 / 2, num_nonrel_judged_ret 1 (e; f is unjudged).
    q3 (missing_queries="zero"): no row, R = 1: set_P 0 (no row), the others 0, num_nonrel_judged_ret 0."""
    measures = ["set_p", "set_recall", "set_relative_p", "set_map", "set_f", "set_f(beta=0.5)"]
    measures.append("num_nonrel_judged_ret")
    values = edge(measures, missing_queries="zero", no_relevant=0.5)
    q1 = [1 / 4, 1 / 3, 1 / 3, 1 / 12, 2 / 7, 3 / 11, 1.0]
    assert values["q1"] == pytest.approx(dict(zip(measures, q1, strict=True))), values
    assert values["q2"] == dict(zip(measures, [0.0, 0.5, 0.5, 0.5, 0.5, 0.5, 1.0], strict=True)), values
    assert values["q3"] == dict(zip(measures, [0.0] * 7, strict=True)), values


def test_utility_by_hand() -> None:
    """utility(a, b, c, d, collection) = a h + b (n - h) + c (R - h) + d (collection - n - R + h).  q1: h 1,
    n 4, R 3: default (1, -1, 0, 0): 1 - 3 = -2; (2, -1, -0.5, 0.01, 100): 2 - 3 - 1 + 0.01 x 94 = -1.06.  q2:
    h 0, n 2, R 0: -2; 0 - 2 - 0 + 0.01 x 98 = -1.02.  q3, missing (missing_queries="zero"): 0, as trec_eval -c
    sets it, whatever the coefficients."""
    given = "utility(a=2,b=-1,c=-0.5,d=0.01,collection=100)"
    values = edge(["utility", given], missing_queries="zero")
    column = "utility(a=2,c=-0.5,d=0.01,collection=100)"
    assert values["q1"] == pytest.approx({"utility": -2.0, column: -1.06})
    assert values["q2"] == pytest.approx({"utility": -2.0, column: -1.02})
    assert values["q3"] == {"utility": 0.0, column: 0.0}


def test_relative_precision_unj_judged_and_f1_by_hand() -> None:
    """ties="doc" orders b and c (tied) as trec_eval does, by descending doc id: a, c, b, d.
    relative_P@k = hits@k / min(k, R): q1 (R 3): @1 1/1, @2 1/2, @10 1/3; without a cut-off 1/3 (recall).
    unj@k = unjudged within k / k (c judged -1 is unjudged, and d): @1 0, @2 1/2, @10 2/10; unj 2/4.
    judged@k = judged within k / min(k, n), c judged -1 counting as judged (ir_measures): @2 2/2, @10 3/4.
    f1@k = 2 hits / (k + R): @1 2/4, @10 2/13.
    q2 (R 0; e judged 0 first, f unjudged): relative_P and f1 no_relevant (null here), unj@1 0, unj@2 1/2,
    unj@10 1/10, unj 1/2, judged@2 and judged@10 1/2.
    q3 (missing): relative_P@k 0 (R 1, no hit), unj 0 (trec_eval -c zeroes it), judged 0 (no row), f1 0."""
    measures = ["relative_p@1", "relative_p@2", "relative_p@10", "relative_p", "unj@1", "unj@2", "unj@10", "unj"]
    measures += ["judged@2", "judged@10", "f1@1", "f1@10"]
    values = edge(measures, missing_queries="zero", no_relevant=None)
    q1 = [1.0, 1 / 2, 1 / 3, 1 / 3, 0.0, 1 / 2, 2 / 10, 2 / 4, 1.0, 3 / 4, 2 / 4, 2 / 13]
    assert values["q1"] == pytest.approx(dict(zip(measures, q1, strict=True))), values
    q2 = [None] * 4 + [0.0, 1 / 2, 1 / 10, 1 / 2] + [1 / 2, 1 / 2, None, None]
    assert values["q2"] == dict(zip(measures, q2, strict=True)), values
    assert values["q3"] == dict(zip(measures, [0.0] * 12, strict=True)), values


def test_gm_bpref_is_the_geometric_mean_of_bpref_with_trec_evals_floor() -> None:
    """bpref q1: relevant a first, no judged non-relevant above it: 1, over R = 3: 1/3.  q2: R = 0: bpref 0
    (no_relevant=0), floored at 1e-5.  gm_bpref's summary: exp((log(1/3) + log(1e-5)) / 2)."""
    result = run_frame(EDGE_RUN).rank_metrics.evaluate_mean(
        ["gm_bpref", "bpref"], doc="doc", ties="doc", qrels=qrels_frame(EDGE_QRELS), no_relevant=0.0
    )
    assert result["bpref"].item() == pytest.approx((1 / 3 + 0) / 2)
    assert result["gm_bpref"].item() == pytest.approx(math.exp((math.log(1 / 3) + math.log(1e-5)) / 2))


def test_without_judgments_every_row_is_judged() -> None:
    """Without qrels= unj is 0 and judged 1 (a query with rows), num_nonrel_judged_ret counts the rows not
    above the threshold."""
    frame = pl.DataFrame({"query": ["q"] * 3, "score": [1.0, 1.0, 0.0], "relevance": [1, 0, 0]})
    result = frame.rank_metrics.evaluate(["unj@2", "unj", "judged@5", "num_nonrel_judged_ret"], ties="optimistic")
    assert result.row(0) == ("q", 0.0, 0.0, 1.0, 2.0)


def test_refused_options_name_the_measure_and_the_option() -> None:
    frame = pl.DataFrame({"query": ["q"], "score": [1.0], "relevance": [1]})
    with pytest.raises(ValueError, match=r"utility: d=0.5 .*collection="):
        frame.rank_metrics.evaluate("utility(d=0.5)")
    with pytest.raises(ValueError, match=r"option collection='2.5' is refused: .*whole number"):
        frame.rank_metrics.evaluate("utility(collection=2.5)")
    with pytest.raises(ValueError, match=r"option beta='-1' is refused"):
        frame.rank_metrics.evaluate("set_f(beta=-1)")
    with pytest.raises(ValueError, match=r"set_p takes no cut-off"):
        frame.rank_metrics.evaluate("set_p@3")
