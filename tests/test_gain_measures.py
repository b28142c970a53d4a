"""rbp, rbp_resid, rprec_mult, bin_g (binG), 11pt_avg, g (G), ndcg_rel and rndcg (Rndcg): hand-derived values
at the edges (no relevant document, fewer documents than the cut-off or than m x R, unjudged and negative-judged
documents, judged queries missing from the run), the exact tie expectation against a brute-force enumeration of
tied orders, trec_eval 10 (the real binary) with their parameters (`-m rbp.p=0.5`, `-m Rprec_mult.5.0,0.2,0.35`,
`-m 11pt_avg..25,.5,.75`) and its own expected outputs, and ir_measures' RBP where trectools or cwl_eval
computes it."""

from __future__ import annotations

import contextlib
import io
import itertools
import math
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lodestar_polars  # noqa: F401  (registers .rank_metrics)
from lodestar_polars import cli
from tests.cases import Qrels, Run, run_and_qrels
from tests.helpers import ours
from tests.trec_eval_binary import TrecEval

# --- hand-derived values ----------------------------------------------------------------------------------


def frame(relevance: list[int], scores: list[float] | None = None, query: str = "q") -> pl.DataFrame:
    n = len(relevance)
    return pl.DataFrame(
        {
            "query": [query] * n,
            "doc": [f"d{i}" for i in range(n)],
            "score": scores if scores is not None else [float(n - i) for i in range(n)],
            "relevance": relevance,
        }
    )


def one(data: pl.DataFrame, measure: str, **options: object) -> float:
    result = data.rank_metrics.evaluate(measure, doc="doc", **options)
    return float(result[result.columns[-1]].item())


def test_rbp_brings_graded_gains_into_zero_one_by_the_greatest_level() -> None:
    # levels 2, 0, 1: the greatest gain 2 divides them (trec_eval): (1 - p)(1 + 0 + p^2 x 1/2)
    assert one(frame([2, 0, 1]), "rbp") == pytest.approx(0.1 * (1 + 0.81 * 0.5), rel=1e-15)
    # binary levels stay as they are: (1 - p)(p + p^2)
    assert one(frame([0, 1, 1]), "rbp(p=0.5)") == pytest.approx(0.5 * (0.5 + 0.25), rel=1e-15)
    # the cut-off keeps positions 1..k; a k past the list keeps them all
    assert one(frame([0, 1, 1]), "rbp(p=0.5)@2") == pytest.approx(0.25, rel=1e-15)
    assert one(frame([0, 1, 1]), "rbp(p=0.5)@10") == pytest.approx(0.375, rel=1e-15)
    # nothing relevant: 0, whatever no_relevant says (RBP divides by nothing of the query)
    assert one(frame([0, 0]), "rbp", no_relevant=None) == 0.0


def trec_eval_rbp_and_residual(levels: list[int | None], p: float) -> tuple[float, float]:
    """trec_eval's te_calc_rbp and te_calc_rbp_resid loops, in the same float operations (levels 0/1 in rank
    order, None unjudged): the weight multiplied by p after every position, the terms added one after another."""
    total = residual = 0.0
    weight = 1.0
    for level in levels:
        if level is None:
            residual += weight
        elif level:
            total += float(level) * weight
        weight = weight * p
    return (1.0 - p) * total, weight + (1 - p) * residual


@pytest.mark.parametrize("p", [0.5, 0.9, 0.95])
@pytest.mark.parametrize("judged", [False, True])
def test_rbp_weights_are_trec_eval_products_to_the_last_bit_also_where_they_settle_below_the_least_normal(
    p: float, judged: bool
) -> None:
    # 16,000 positions: past the ~1,100 (p=0.5) to ~14,500 (p=0.95) after which p^(i-1), multiplied out, is 0 or a
    # subnormal that p rounds back to itself; relevant rows spread over the list, the last ones far past it
    n = 16_000
    relevant = {0, 1, 3, 7, 60, 500, 1_070, 1_080, 7_049, 7_060, 9_000, 14_470, 15_999}
    unjudged = {2, 5, 61, 7_050, 14_466, 15_998} if judged else set()
    levels = [None if i in unjudged else int(i in relevant) for i in range(n)]
    data = frame([level or 0 for level in levels])
    options: dict[str, object] = {}
    if judged:
        options["qrels"] = data.filter(~pl.col("doc").is_in([f"d{i}" for i in unjudged])).drop("score")
        data = data.drop("relevance")
    rbp, residual = trec_eval_rbp_and_residual(levels, p)
    measures = [f"rbp(p={p})", f"rbp_resid(p={p})"]
    result = data.rank_metrics.evaluate(measures, doc="doc", ties="doc", **options).row(0)[1:]
    assert result == (rbp, residual if judged else 0.0)


def test_rbp_weights_past_a_cut_table_are_powers_within_a_few_units_in_the_last_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a p above ~0.9993 needs more than the 2^20 positions kept before its products settle: the weights past the
    # table are its last entry times a power; with the table cut at 16 entries, so for p = 0.8 here
    from lodestar_polars.measures import rbp as rbp_module

    monkeypatch.setattr(rbp_module, "_TABLE_LIMIT", 16)
    rbp_module.weight_table.cache_clear()
    try:
        levels: list[int | None] = [1 if i % 3 == 0 else (None if i % 7 == 0 else 0) for i in range(40)]
        data = frame([level or 0 for level in levels]).drop("relevance")
        qrels = frame([level or 0 for level in levels]).filter(
            pl.col("doc").is_in([f"d{i}" for i, level in enumerate(levels) if level is not None])
        )
        rbp, residual = trec_eval_rbp_and_residual(levels, 0.8)
        measures = ["rbp(p=0.8)", "rbp_resid(p=0.8)"]
        result = data.rank_metrics.evaluate(measures, doc="doc", ties="doc", qrels=qrels).row(0)[1:]
        assert result[0] == pytest.approx(rbp, rel=1e-14, abs=0.0)
        assert result[1] == pytest.approx(residual, rel=1e-14, abs=0.0)
        # within the table, the same bits
        short = levels[:16]
        within = data.head(16).rank_metrics.evaluate(measures, doc="doc", ties="doc", qrels=qrels)
        assert within.row(0)[1:] == trec_eval_rbp_and_residual(short, 0.8)
    finally:
        rbp_module.weight_table.cache_clear()


def test_rbp_with_judgments_takes_the_range_of_every_judged_level_and_gives_unjudged_documents_nothing() -> None:
    run = frame([0, 0, 0]).drop("relevance")
    # d0 judged 1, d1 unjudged, d2 judged 1; the query's greatest judged level is 4 (d9, not retrieved)
    qrels = pl.DataFrame({"query": ["q"] * 3, "doc": ["d0", "d2", "d9"], "relevance": [1, 1, 4]})
    assert one(run, "rbp", qrels=qrels) == pytest.approx(0.1 * (0.25 + 0.81 * 0.25), rel=1e-15)
    # the residual: p^3 + (1 - p) p for the unjudged d1 at position 2
    assert one(run, "rbp_resid", qrels=qrels) == pytest.approx(0.9**3 + 0.1 * 0.9, rel=1e-15)
    # a negative level counts as unjudged; every document judged: no residual
    negative = qrels.with_columns(pl.when(pl.col("doc") == "d9").then(pl.lit("d1")).otherwise("doc").alias("doc"))
    assert one(run, "rbp_resid", qrels=negative.with_columns(relevance=pl.lit(-1))) == pytest.approx(
        0.9**3 + 0.1 * (1 + 0.9 + 0.81), rel=1e-15
    )
    assert one(run, "rbp_resid", qrels=negative) == 0.0
    # with missing_queries="zero", a judged query missing from the run has no row and no residual
    missing = pl.concat([qrels, pl.DataFrame({"query": ["m"], "doc": ["x"], "relevance": [1]})])
    result = run.rank_metrics.evaluate(["rbp", "rbp_resid"], doc="doc", qrels=missing, missing_queries="zero")
    assert result.filter(pl.col("query") == "m").select("rbp", "rbp_resid").row(0) == (0.0, 0.0)


def test_rprec_mult_counts_floor_m_r_plus_0_9_positions_past_the_list_too() -> None:
    data = frame([1, 0, 1, 1, 0])  # R = 3
    # m = 0.2: floor(0.6 + 0.9) = 1 position: P@1 = 1
    assert one(data, "rprec_mult@0.2") == 1.0
    # m = 0.35: floor(1.05 + 0.9) = 1; m = 0.4: floor(1.2 + 0.9) = 2: P@2 = 1/2
    assert one(data, "rprec_mult@0.35") == 1.0
    assert one(data, "rprec_mult@0.4") == 0.5
    # m = 1 is Rprec: P@3 = 2/3; m = 2: floor(6.9) = 6 positions past the 5 rows: 3 / 6
    assert one(data, "rprec_mult@1") == pytest.approx(2 / 3, rel=1e-15)
    assert one(data, "rprec_mult@2") == 0.5
    # R = 1, m = 0.05: floor(0.95) = 0 positions: 0 (trec_eval)
    assert one(frame([1, 0]), "rprec_mult@0.05") == 0.0
    # R = 0: no_relevant
    assert one(frame([0, 0]), "rprec_mult@1", no_relevant=0.25) == 0.25


def test_bin_g_discounts_each_relevant_row_by_the_non_relevant_rows_above_it() -> None:
    # relevant at positions 1, 3, 4 (one non-relevant above the last two), a fourth relevant judged, not retrieved
    run = frame([1, 0, 1, 1]).drop("relevance")
    qrels = pl.DataFrame({"query": ["q"] * 5, "doc": ["d0", "d1", "d2", "d3", "d9"], "relevance": [1, 0, 1, 1, 1]})
    expected = (1 / math.log2(2) + 2 / math.log2(3)) / 4
    assert one(run, "bin_g", qrels=qrels) == pytest.approx(expected, rel=1e-15)
    assert one(frame([0, 0]), "bin_g", no_relevant=0.5) == 0.5


def test_eleven_point_average_is_the_mean_of_iprec_at_the_eleven_levels() -> None:
    # relevant at 1, 3, 4, 5 of 5 (R = 4): iprec is 1 at levels 0..0.3 (x R rounds to at most 1), then 0.8
    data = frame([3, 0, 1, 3, 3])
    assert one(data, "11pt_avg", ties="doc") == pytest.approx((4 * 1.0 + 7 * 0.8) / 11, rel=1e-15)
    with pytest.raises(ValueError, match=r"11pt_avg.*ties='doc'"):
        data.rank_metrics.evaluate("11pt_avg", ties="average")


def test_g_weighs_each_gain_by_how_far_the_gains_above_fall_behind_the_ideal() -> None:
    # gains 2, 0, 1, the ideal 2, 1: costs C = 2, 3, 4 (max(ideal gain, 1) summed), gains above S = 2, 2, 3
    # G = (2 / log2(2 + 2 - 2) + 1 / log2(2 + 4 - 3)) / (2 + 1)
    expected = (2 / math.log2(2) + 1 / math.log2(3)) / 3
    assert one(frame([2, 0, 1]), "g", ties="doc") == pytest.approx(expected, rel=1e-15)
    # nothing gained: no_relevant
    assert one(frame([0, 0]), "g", ties="doc", no_relevant=0.5) == 0.5


def test_g_refuses_its_tie_bounds_because_the_most_gainful_order_is_not_its_greatest() -> None:
    # gains 3, 1 ranked first, then a tie block of gains 2 and 3; the ideal 3, 3, 2, 1 costs C = 3, 6, 8, 9.
    # Block order 2, 3 (ties="input"): S = 3, 4, 6, 9, G = (3/log2(2) + 1/log2(4) + 2/log2(4) + 3/log2(2)) / 9;
    # order 3, 2 (most gainful first, ties="reverse"): S = 3, 4, 7, 9, G = (3 + 1/2 + 3/log2(3) + 2/log2(2)) / 9
    tied = frame([3, 1, 2, 3], scores=[4.0, 3.0, 2.0, 2.0])
    least_gainful_first = (3 / 1 + 1 / 2 + 2 / 2 + 3 / 1) / 9
    most_gainful_first = (3 / 1 + 1 / 2 + 3 / math.log2(3) + 2 / 1) / 9
    assert one(tied, "g", ties="input") == pytest.approx(least_gainful_first, rel=1e-15)  # 0.8333
    assert one(tied, "g", ties="reverse") == pytest.approx(most_gainful_first, rel=1e-15)  # 0.8214
    assert most_gainful_first < least_gainful_first
    # so "optimistic" (most gainful first) would not be G's bound: refused, by name, in every entry point
    for ties in ("optimistic", "pessimistic"):
        message = rf"^g has no ties='{ties}' bound \(a low gain ranked early .*\); pass ties='doc'"
        with pytest.raises(ValueError, match=message):
            tied.rank_metrics.evaluate(["ndcg", "g"], doc="doc", ties=ties)
        with pytest.raises(ValueError, match=message):
            tied.lazy().rank_metrics.evaluate_mean(["g"], doc="doc", ties=ties)
        # binG (binary gains: every relevant row alike) keeps its bounds
        assert one(tied, "bin_g", ties=ties) == one(tied, "bin_g", ties="doc")


def test_ndcg_rel_and_rndcg_average_ndcg_over_relevant_documents_and_r_levels() -> None:
    # run gains 0, 2, 1; judged too: a document of gain 1 not retrieved.  Ideal gains 2, 1, 1 (P = 3)
    run = frame([0, 0, 0]).drop("relevance")
    qrels = pl.DataFrame({"query": ["q"] * 4, "doc": ["d0", "d1", "d2", "d9"], "relevance": [0, 2, 1, 1]})
    dcg_2, dcg_3 = 2 / math.log2(3), 2 / math.log2(3) + 1 / 2
    ideal_1, ideal_2, ideal_3 = 2.0, 2 + 1 / math.log2(3), 2 + 1 / math.log2(3) + 1 / 2
    # ndcg_rel: the relevant rows at 2 and 3, and the one not retrieved at the whole list's NDCG, over P = 3
    expected = (dcg_2 / ideal_2 + dcg_3 / ideal_3 + dcg_3 / ideal_3) / 3
    assert one(run, "ndcg_rel", ties="doc", qrels=qrels) == pytest.approx(expected, rel=1e-15)
    # Rndcg: the R levels end at ideal positions 1 (gain 2) and 3 (gain 1); 3 rows, not P + 2: no implied level
    assert one(run, "rndcg", ties="doc", qrels=qrels) == pytest.approx((0 / ideal_1 + dcg_3 / ideal_3) / 2, rel=1e-15)
    # five rows (P + 2): the implied level at the end of the list adds the whole list's NDCG
    longer = frame([0, 0, 0, 0, 0]).drop("relevance")
    assert one(longer, "rndcg", ties="doc", qrels=qrels) == pytest.approx(
        (0 / ideal_1 + dcg_3 / ideal_3 + dcg_3 / ideal_3) / 3, rel=1e-15
    )
    # nothing relevant: no_relevant
    for name in ("ndcg_rel", "rndcg"):
        assert one(frame([0, 0]), name, ties="doc", no_relevant=0.25) == 0.25
    with pytest.raises(ValueError, match=r"g .*ties='doc'"):
        run.rank_metrics.evaluate("g", doc="doc", qrels=qrels, ties="average")


def test_ndcg_rel_with_judgments_is_the_same_in_a_log_base_below_1() -> None:
    """Its shares are ratios of DCGs, so every log base gives the same value.  Positive gains judged at d2 and d3
    only (P = 2, the ideal list two long): past it, at positions 3 and 4, the ideal is its total, the least of
    its prefixes with a log base below 1 (negative discounts), not the greatest (its first prefix; 0.7153 was
    printed before the fix).  Base 2: (1/log2(4) / I + (1/2 + 1/log2(5)) / I) / 2, I = 1 + 1/log2(3)."""
    run = frame([0, 0, 0, 0]).drop("relevance")
    qrels = pl.DataFrame({"query": ["q", "q"], "doc": ["d2", "d3"], "relevance": [1, 1]})
    ideal = 1 + 1 / math.log2(3)
    expected = (1 / 2 / ideal + (1 / 2 + 1 / math.log2(5)) / ideal) / 2
    for log_base in (2.0, 0.5, 10.0):
        value = one(run, "ndcg_rel", ties="doc", qrels=qrels, log_base=log_base)
        assert value == pytest.approx(expected, rel=1e-14), log_base


def test_their_names_and_options_are_refused_precisely() -> None:
    data = frame([1, 0])
    with pytest.raises(ValueError, match=r"rprec_mult takes a positive multiplier of R after '@'.*none given"):
        data.rank_metrics.evaluate("rprec_mult")
    with pytest.raises(ValueError, match=r"rprec_mult.*got '0'"):
        data.rank_metrics.evaluate("rprec_mult@0")
    with pytest.raises(ValueError, match=r"option p='1.5' is refused: the persistence p lies strictly between"):
        data.rank_metrics.evaluate("rbp(p=1.5)")
    with pytest.raises(ValueError, match=r"rbp_resid takes no cut-off"):
        data.rank_metrics.evaluate("rbp_resid@5")
    # the default persistence is trec_eval's 0.9: the column leaves it out
    assert data.rank_metrics.evaluate(["rbp(p=0.9)", "rbp(p=0.8)@3"]).columns == ["query", "rbp", "rbp(p=0.8)@3"]


# --- ties="average": the expectation over every order of the tied rows --------------------------------------

# scores with blocks of 3 and 2 (and a row alone); graded levels, so that rbp brings them into [0, 1]
TIED_SCORES = [2.0, 1.0, 1.0, 1.0, 0.0, 0.0]
TIED_CASES = [
    [0, 2, 1, 0, 3, 0],
    [1, 0, 0, 1, 0, 1],
    [0, 0, 1, 1, 1, 0],
]
AVERAGED = ["rbp", "rbp(p=0.5)@3", "rbp(p=0.7)@5", "rprec_mult@0.35", "rprec_mult@1", "rprec_mult@2", "bin_g", "rndcg"]


def every_order(relevance: list[int], scores: list[float]) -> pl.DataFrame:
    """One query per order of the rows: ties="input" then takes each order of the tied rows equally often."""
    rows = []
    for number, order in enumerate(itertools.permutations(range(len(relevance)))):
        rows += [(number, f"d{i}", scores[i], relevance[i]) for i in order]
    return pl.DataFrame(rows, schema=["query", "doc", "score", "relevance"], orient="row")


@pytest.mark.parametrize("relevance", TIED_CASES)
def test_tie_averages_are_the_mean_over_every_order_of_the_tied_rows(relevance: list[int]) -> None:
    averaged = frame(relevance, TIED_SCORES).rank_metrics.evaluate(AVERAGED, ties="average")
    orders = every_order(relevance, TIED_SCORES).rank_metrics.evaluate(AVERAGED, ties="input")
    for name in averaged.columns[1:]:
        assert averaged[name].item() == pytest.approx(orders[name].mean(), rel=1e-12, abs=1e-15), name


@pytest.mark.parametrize("relevance", TIED_CASES)
def test_tie_averages_with_judgments_are_the_mean_over_every_order(relevance: list[int]) -> None:
    """Judged d0..d3 (d1 at a negative level), the rest unjudged, and a judged document not retrieved."""
    judged = {f"d{i}": level for i, level in enumerate(relevance[:4])} | {"d1": -1, "d9": 2}
    names = [*AVERAGED, "rbp_resid", "rbp_resid(p=0.5)"]

    def qrels(queries: list[object]) -> pl.DataFrame:
        rows = [(q, d, r) for q in queries for d, r in judged.items()]
        return pl.DataFrame(rows, schema=["query", "doc", "relevance"], orient="row")

    single = frame(relevance, TIED_SCORES).with_columns(query=pl.lit(0, pl.Int64)).drop("relevance")
    averaged = single.rank_metrics.evaluate(names, doc="doc", ties="average", qrels=qrels([0]))
    orders = every_order(relevance, TIED_SCORES).drop("relevance")
    every = orders.rank_metrics.evaluate(
        names, doc="doc", ties="input", qrels=qrels(orders["query"].unique().to_list())
    )
    for name in averaged.columns[1:]:
        assert averaged[name].item() == pytest.approx(every[name].mean(), rel=1e-12, abs=1e-15), name


# --- trec_eval 10 ----------------------------------------------------------------------------------------------


def write_trec(folder: Path, run: Run, qrels: Qrels) -> tuple[Path, Path]:
    run_path, qrels_path = folder / "run.txt", folder / "qrels.txt"
    run_path.write_text("".join(f"{q} Q0 {d} 0 {s!r} t\n" for q, docs in run.items() for d, s in docs.items()))
    qrels_path.write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items()))
    return qrels_path, run_path


PARAMETERS = [
    ["-m", "rbp.p=0.5"],
    ["-m", "rbp_resid.p=0.75"],
    ["-m", "rbp.p=.95", "-m", "rbp_resid"],
    ["-m", "Rprec_mult.5.0,0.2,0.35"],
    ["-m", "11pt_avg..25,.5,.75"],
    ["-m", "11pt_avg.0.1,0.1,0.3"],
    # levels out of order: trec_eval's walk meets a level only below the one met before it
    ["-m", "11pt_avg..5,.25"],
    ["-m", "11pt_avg.1,0,.5,.5,.25"],
    ["-m", "11pt_avg..8,.3,.6,.1,.9"],
    ["-m", "ndcg.1=3,2=9,4=4.5", "-m", "ndcg_cut.5"],
    ["-m", "G.0=2,3=7", "-m", "ndcg_rel.0=2,3=7", "-m", "Rndcg.1=3", "-m", "P.5"],
]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=run_and_qrels(), measures=st.sampled_from(PARAMETERS), flags=st.sampled_from([["-q"], ["-q", "-c"]]))
def test_their_parameters_equal_trec_eval(
    trec_eval: TrecEval, tmp_path: Path, case: tuple[Run, Qrels], measures: list[str], flags: list[str]
) -> None:
    run, qrels = case
    if "-c" not in flags:  # trec_eval 10 stops at a judged query missing from the run
        qrels = {query: judged for query, judged in qrels.items() if query in run}
    if not run or not any(query in run for query in qrels):
        return
    qrels_path, run_path = write_trec(tmp_path, run, qrels)
    arguments = [*flags, *measures]
    assert ours(arguments, qrels_path, run_path) == trec_eval.run(arguments, qrels_path, run_path)


@pytest.mark.parametrize("measures", [["-m", "G", "-m", "ndcg_rel", "-m", "Rndcg"], ["-m", "G.2=0", "-m", "Rndcg.2=0"]])
def test_a_query_judged_without_a_positive_gain_equals_trec_eval(
    trec_eval: TrecEval, tmp_path: Path, measures: list[str]
) -> None:
    """Query a is judged at levels 0 and -1 only (no positive gain: the ideal order's prefixes over the judged rows
    read none of its rows; G, ndcg_rel and Rndcg score it 0 whatever they hold), b has judged rows ranked past
    its ideal order's positive gains (they read its totals), c's gain 2 is mapped to 0 in the second case: each
    line as trec_eval 10 prints it."""
    run = {
        "a": {"a1": 3.0, "a2": 2.0, "a3": 1.0},
        "b": {"b1": 5.0, "b2": 4.0, "b3": 3.0, "b4": 2.0, "b5": 1.0},
        "c": {"c1": 2.0, "c2": 1.0},
    }
    qrels = {
        "a": {"a1": 0, "a2": -1, "a9": 0},
        "b": {"b1": 0, "b2": 1, "b4": 2, "b5": 0, "b9": 1},
        "c": {"c1": 2, "c2": 0},
    }
    qrels_path, run_path = write_trec(tmp_path, run, qrels)
    arguments = ["-q", *measures]
    assert ours(arguments, qrels_path, run_path) == trec_eval.run(arguments, qrels_path, run_path)


def test_trec_evals_expected_lines_for_them(shared_data: Path) -> None:
    """out.test.a (-m all_trec) and out.test.meas_params, the lines of these measures."""
    folder = shared_data / "trec_eval"
    qrels, results = folder / "qrels.test", folder / "results.test"
    names = ("Rprec_mult", "11pt_avg", "binG", "rbp", "rbp_resid")
    expected = [
        line for line in (folder / "out.test.a").read_text().splitlines(True) if line.split()[0].startswith(names)
    ]
    computed = ours(
        ["-m", "Rprec_mult", "-m", "11pt_avg", "-m", "binG", "-m", "rbp", "-m", "rbp_resid"], qrels, results
    )
    assert computed.splitlines(True) == expected
    arguments = ["-q", "-m", "Rprec_mult.5.0,0.2,0.35", "-m", "11pt_avg..25,.5,.75", "-m", "ndcg.1=3,2=9,4=4.5"]
    expected_params = [
        line
        for line in (folder / "out.test.meas_params").read_text().splitlines(True)
        if line.startswith(("Rprec_mult", "11pt_avg", "ndcg_1=3,2=9,4=4.5"))
    ]
    assert ours(arguments, qrels, results).splitlines(True) == expected_params


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ("rbp.2=5", "the only parameter taken here is the persistence"),
        ("rbp.p=1", "strictly between 0 and 1"),
        ("Rprec_mult.0.2,0.2", "duplicate multipliers"),
        ("Rprec_mult.0,1", "multipliers must be positive"),
        ("11pt_avg..5,1.25", "recall levels must lie from 0 to 1"),
        ("11pt_avg..5,-.25", "recall levels must be decimal numbers"),
        ("ndcg.1=3,x=2", "gain pairs are level=gain"),
        ("G.-1=2", "gain pairs are level=gain"),
    ],
)
def test_the_cli_refuses_their_parameters_precisely(tmp_path: Path, argument: str, message: str) -> None:
    qrels_path, run_path = write_trec(tmp_path, {"q": {"d": 1.0}}, {"q": {"d": 1}})
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(["trec_eval", "-m", argument, str(qrels_path), str(run_path)])
    assert code == 2
    assert message in err.getvalue()


# --- ir_measures ---------------------------------------------------------------------------------------------


def binary_judgments(tied: bool) -> pl.DataFrame:
    rows = []
    for q in range(6):
        for i in range(4 + q):
            score = float((i * 7 + q) % 4) if tied else float(20 - i)
            rows.append((f"q{q}", f"d{i}", score, int((i * 5 + q) % 3 == 0)))
    return pl.DataFrame(rows, schema=["query", "doc", "score", "relevance"], orient="row")


def ours_by_query(data: pl.DataFrame, name: str, ties: str) -> dict[str, float]:
    result = data.rank_metrics.evaluate(name, doc="doc", ties=ties, qrels=data.drop("score"))
    return dict(zip(result["query"], result[result.columns[1]], strict=True))


def test_rbp_equals_ir_measures_rbp_from_trectools_on_binary_judgments_with_tie_averaging() -> None:
    """ir_measures' RBP(p=...) as trectools computes it (a provider outside ir_measures' default pipeline):
    it averages the weights of tied documents and sums the raw relevance, so with judgments in {0, 1} it is
    rbp with ties="average".  trectools leaves out a query without relevant retrieved document."""
    ir_measures = pytest.importorskip("ir_measures", reason="ir_measures is a test dependency")
    pytest.importorskip("trectools", reason="ir_measures computes RBP(p=...) with trectools")
    data = binary_judgments(tied=True)
    qrels = [ir_measures.Qrel(q, d, r) for q, d, _, r in data.iter_rows()]
    run = [ir_measures.ScoredDoc(q, d, s) for q, d, s, _ in data.iter_rows()]
    trectools = ir_measures.providers.registry["trectools"]
    for p in (0.5, 0.8, 0.9):
        measure = ir_measures.parse_measure(f"RBP(p={p})")
        theirs = {m.query_id: m.value for m in trectools.evaluator([measure], qrels).iter_calc(run)}
        ours = {q: v for q, v in ours_by_query(data, f"rbp(p={p})", "average").items() if v > 0}
        assert theirs == pytest.approx(ours, rel=1e-12), measure
    # at a cut-off trectools keeps the first k rows of its own order, then averages the ties among them (a tie
    # block cut by k is not averaged over its orders): compared on a tie-free run
    data = binary_judgments(tied=False)
    qrels = [ir_measures.Qrel(q, d, r) for q, d, _, r in data.iter_rows()]
    run = [ir_measures.ScoredDoc(q, d, s) for q, d, s, _ in data.iter_rows()]
    for p, cutoff in ((0.8, 3), (0.9, 5)):
        measure = ir_measures.parse_measure(f"RBP(p={p})@{cutoff}")
        theirs = {m.query_id: m.value for m in trectools.evaluator([measure], qrels).iter_calc(run)}
        ours = {q: v for q, v in ours_by_query(data, f"rbp(p={p})@{cutoff}", "doc").items() if v > 0}
        assert {q: v for q, v in theirs.items() if v > 0} == pytest.approx(ours, rel=1e-12), measure


def test_rbp_equals_ir_measures_binary_rbp_from_cwl_eval_on_binary_judgments() -> None:
    """ir_measures' RBP(p=...,rel=1) (C/W/L's cwl_eval, in its default pipeline) counts relevance >= 1 as
    gain 1: on judgments in {0, 1} and a tie-free run it is rbp."""
    ir_measures = pytest.importorskip("ir_measures", reason="ir_measures is a test dependency")
    pytest.importorskip("cwl", reason="ir_measures computes RBP(rel=1) with cwl_eval")
    data = binary_judgments(tied=False)
    qrels = [ir_measures.Qrel(q, d, r) for q, d, _, r in data.iter_rows()]
    run = [ir_measures.ScoredDoc(q, d, s) for q, d, s, _ in data.iter_rows()]
    for p in (0.5, 0.8, 0.9):
        measure = ir_measures.parse_measure(f"RBP(p={p},rel=1)")
        theirs = {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}
        assert theirs == pytest.approx(ours_by_query(data, f"rbp(p={p})", "doc"), rel=1e-12, abs=1e-15)
