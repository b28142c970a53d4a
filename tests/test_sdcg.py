"""sdcg@k against ir_measures' SDCG(max_rel=...)@k (its cwl_eval provider), run directly, and against hand
derivations: ir_measures scores every judged query (a judged query missing from the run scores 0) and leaves
out the run queries without judgments, so it matches `missing_queries="zero"` with `qrels=`, `doc=` and
`ties="doc"` (its run is handed over in that order: cwl_eval keeps the order of tied documents as given)."""

from __future__ import annotations

import itertools
import logging
import math
import re
from typing import Any

import numpy as np
import polars as pl
import pytest

import lodestar_polars  # noqa: F401  (registers .rank_metrics)
from lodestar_polars.measures import sdcg

ir_measures = pytest.importorskip("ir_measures", reason="ir-measures is a test dependency (pip install '.[test]')")
pytest.importorskip("cwl", reason="ir_measures computes SDCG with cwl_eval (pip install 'ir-measures[cwl_eval]')")

EXACT = 1e-12
CUTOFFS = (1, 2, 3, 5, 10, 20)
# (min_rel, max_rel): ir_measures' default min_rel, a max_rel below the greatest level drawn (4: clipped) and
# one above it, and a min_rel above 0 (levels at or below 1 score 0)
SCALES = ((0, 1), (0, 3), (0, 5), (1, 3))
DOC_IDS = ["D1", "D10", "D2", "D9", "d1", "9", "100", "a", "B", "b-3", "b_3", "x10", "x9"]
LOG2 = math.log(2.0)


@pytest.fixture(autouse=True)
def _quiet_cwl_eval() -> Any:
    """ir_measures' cwl_eval provider warns on every call whose levels exceed or fall short of max_rel."""
    logger = logging.getLogger("ir_measures.cwl_eval")
    level = logger.level
    logger.setLevel(logging.ERROR)
    yield
    logger.setLevel(level)


def random_case(seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A run with tied scores and graded judgments -1..4: judged queries missing from the run, run queries
    without judgments, judged documents not retrieved, retrieved documents not judged, queries without a
    relevant document, queries judged at -1 only, lists shorter and longer than the cut-offs."""
    rng = np.random.default_rng(seed)
    run_rows, qrels_rows = [], []
    for q in range(int(rng.integers(3, 9))):
        query = f"q{q}"
        in_run, judged = [(True, True), (True, True), (True, False), (False, True)][int(rng.integers(0, 4))]
        judged = judged or q == 0
        if in_run:
            docs = rng.choice(DOC_IDS, size=int(rng.integers(1, len(DOC_IDS) + 1)), replace=False)
            scores = rng.choice([0.0, 0.5, 1.0, 1.5, 2.0, -1.0], size=len(docs))
            run_rows += [(query, str(doc), float(score)) for doc, score in zip(docs, scores, strict=True)]
        if judged:
            docs = rng.choice(DOC_IDS, size=int(rng.integers(1, 9)), replace=False)
            levels = rng.integers(-1, 5, len(docs))
            if q == 1 and rng.random() < 0.5:
                levels[:] = -1  # a query judged, at -1 only: ir_measures scores it (0)
            qrels_rows += [(query, str(doc), int(level)) for doc, level in zip(docs, levels, strict=True)]
    run = pl.DataFrame(run_rows, schema={"query": pl.String, "doc": pl.String, "score": pl.Float64}, orient="row")
    qrels = pl.DataFrame(qrels_rows, schema={"query": pl.String, "doc": pl.String, "relevance": pl.Int64}, orient="row")
    return run, qrels


def name(min_rel: int, max_rel: int, k: int) -> str:
    """evaluate()'s column: min_rel left out at its default 0, max_rel (required) always shown."""
    return f"sdcg({'' if min_rel == 0 else f'min_rel={min_rel},'}max_rel={max_rel})@{k}"


def theirs(run: pl.DataFrame, qrels: pl.DataFrame, measures: dict[str, Any]) -> dict[str, dict[str, float]]:
    """ir_measures' per-query values {our column: {query: value}}, its run in ties="doc" order (score
    descending, then doc id descending)."""
    ordered = run.sort(["query", "score", "doc"], descending=[False, True, True])
    qrels_list = [ir_measures.Qrel(q, d, r) for q, d, r in qrels.iter_rows()]
    run_list = [ir_measures.ScoredDoc(q, d, s) for q, d, s in ordered.iter_rows()]
    ours_by_theirs = {measure: column for column, measure in measures.items()}
    values: dict[str, dict[str, float]] = {column: {} for column in measures}
    for metric in ir_measures.iter_calc(list(measures.values()), qrels_list, run_list):
        values[ours_by_theirs[metric.measure]][metric.query_id] = metric.value
    return values


def ours_by_column(
    run: pl.DataFrame, qrels: pl.DataFrame, columns: list[str], **options: Any
) -> dict[str, dict[str, float]]:
    options = {"doc": "doc", "ties": "doc", "qrels": qrels, "missing_queries": "zero"} | options
    result = run.rank_metrics.evaluate(columns, **options)
    return {column: dict(zip(result["query"], result[column], strict=True)) for column in columns}


def ir_measure(min_rel: int, max_rel: int, k: int) -> Any:
    return ir_measures.SDCG(min_rel=min_rel, max_rel=max_rel) @ k


@pytest.mark.parametrize("seed", range(30))
def test_ir_measures_sdcg_on_random_tied_runs(seed: int) -> None:
    run, qrels = random_case(seed)
    measures = {name(lo, hi, k): ir_measure(lo, hi, k) for lo, hi in SCALES for k in CUTOFFS}
    expected = theirs(run, qrels, measures)
    got = ours_by_column(run, qrels, list(measures))
    for column in measures:
        assert got[column].keys() == expected[column].keys() == set(qrels["query"]), column
        assert got[column] == pytest.approx(expected[column], rel=EXACT, abs=EXACT), column
    means = run.rank_metrics.evaluate_mean(
        list(measures), doc="doc", ties="doc", qrels=qrels, missing_queries="zero"
    ).row(0, named=True)
    for column in measures:
        assert means[column] == pytest.approx(np.mean(list(expected[column].values())), rel=EXACT, abs=EXACT)


def test_the_random_cases_hold_what_ir_measures_treats_apart() -> None:
    cases = [random_case(seed) for seed in range(30)]
    assert sum(bool(set(qrels["query"]) - set(run["query"])) for run, qrels in cases) >= 8  # judged, not in run
    assert sum(bool(set(run["query"]) - set(qrels["query"])) for run, qrels in cases) >= 8  # run, not judged
    tied = [run.group_by("query", "score").len()["len"].max() for run, _ in cases if run.height]
    assert sum(count > 1 for count in tied) >= 25
    assert all((qrels["relevance"] == -1).any() and (qrels["relevance"] == 4).any() for _, qrels in cases[:5])
    only_negative = [
        q
        for run, qrels in cases
        for q, levels in qrels.group_by("query").agg("relevance").iter_rows()
        if max(levels) <= 0 and q in set(run["query"])
    ]
    assert only_negative  # judged queries with no relevant document, retrieved
    judged_at_minus_1 = [
        q
        for run, qrels in cases
        for q, levels in qrels.group_by("query").agg("relevance").iter_rows()
        if max(levels) == -1 and q in set(run["query"])
    ]
    assert len(judged_at_minus_1) >= 3


def test_an_exponential_gain_is_scaled_as_ir_measures_scales_the_mapped_levels() -> None:
    """gain="exponential" maps level r to 2**r - 1 before the scaling: ir_measures on qrels so relabelled."""
    run, qrels = random_case(3)
    mapped = qrels.with_columns(
        pl.when(pl.col("relevance") > 0)
        # the exponent clipped at 0: Polars evaluates the branch on every row, and 2.2 refuses 2 ** -1 on integers
        .then(2 ** pl.col("relevance").clip(lower_bound=0) - 1)
        .otherwise(pl.col("relevance"))
        .alias("relevance")
    )
    measures = {name(lo, hi, k): ir_measure(lo, hi, k) for lo, hi in ((0, 7), (1, 15)) for k in (3, 10)}
    expected = theirs(run, mapped, measures)
    got = ours_by_column(run, qrels, list(measures), gain="exponential")
    for column in measures:
        assert got[column] == pytest.approx(expected[column], rel=EXACT, abs=EXACT), column


def test_a_hand_derived_case() -> None:
    """Query q, ties="doc": a (4.0, level 2), then c and b tied at 3.0 (c first: doc ids descending), then d
    (level 3); e judged 3, not retrieved (it does not enter the normaliser); z retrieved, unjudged.
    sdcg(max_rel=3)@3: gains 2/3, 1/3 (c, level 1), 0 (b, level 0) over discounts 1, 1/log2 3, 1/2:
      (2/3 + (1/3) / log2 3) / (1 + 1/log2 3 + 1/2)
    sdcg(max_rel=1)@3 (every level >= 1 is gain 1): (1 + 1/log2 3) / (1 + 1/log2 3 + 1/2)
    sdcg(max_rel=3)@6: d at 4 (gain 1), z at 5 (0); six positions in the normaliser, the list has five:
      (2/3 + (1/3) / log2 3 + 1 / log2 5) / (sum over p = 1..6 of 1 / log2(p + 1))
    sdcg(min_rel=1,max_rel=3)@3: levels 2, 1, 0 scale to 1/2, 0, 0: (1/2) / (1 + 1/log2 3 + 1/2)
    Query r: one document, judged 0: 0 (no relevant document; the normaliser is not 0)."""
    run = pl.DataFrame(
        {
            "query": ["q"] * 5 + ["r"],
            "doc": ["a", "b", "c", "d", "z", "a"],
            "score": [4.0, 3.0, 3.0, 1.0, 0.5, 1.0],
        }
    )
    qrels = pl.DataFrame(
        {"query": ["q"] * 5 + ["r"], "doc": ["a", "b", "c", "d", "e", "a"], "relevance": [2, 0, 1, 3, 3, 0]}
    )
    log2_3, log2_5 = math.log2(3), math.log2(5)
    three = 1 + 1 / log2_3 + 1 / 2
    six = sum(1 / math.log2(p + 1) for p in range(1, 7))
    expected = {
        "sdcg(max_rel=3)@3": (2 / 3 + 1 / 3 / log2_3) / three,
        "sdcg(max_rel=1)@3": (1 + 1 / log2_3) / three,
        "sdcg(max_rel=3)@6": (2 / 3 + 1 / 3 / log2_3 + 1 / log2_5) / six,
        "sdcg(min_rel=1,max_rel=3)@3": (1 / 2) / three,
    }
    got = ours_by_column(run, qrels, list(expected))
    for column, value in expected.items():
        assert got[column] == pytest.approx({"q": value, "r": 0.0}, rel=EXACT, abs=0), column


def test_without_judgments_the_levels_of_the_frame_are_scaled() -> None:
    """Levels in the frame: -1 and 0 score 0 (clipped to min_rel 0), 5 counts as max_rel 3 (gain 1).
    Order b (5), a (-1), c (2): (1 + 0 + (2/3) / 2) / (1 + 1/log2 3 + 1/2)."""
    frame = pl.DataFrame(
        {"query": ["q"] * 3, "doc": ["a", "b", "c"], "score": [2.0, 3.0, 1.0], "relevance": [-1, 5, 2]}
    )
    result = frame.rank_metrics.evaluate(["sdcg(max_rel=3)@3"], doc="doc")
    expected = (1 + (2 / 3) / 2) / (1 + 1 / math.log2(3) + 1 / 2)
    assert result.item(0, "sdcg(max_rel=3)@3") == pytest.approx(expected, rel=EXACT)


def test_no_relevant_document_and_a_list_shorter_than_k() -> None:
    """No relevant document: 0, whatever no_relevant says (the normaliser is never 0).  One document of the
    greatest level, alone in its list: 1 at k = 1, 1 / (sum over p <= k of 1 / log2(p + 1)) at k = 4 (the
    normaliser counts every one of the k positions), not nDCG's 1."""
    frame = pl.DataFrame({"query": ["none", "one"], "doc": ["a", "a"], "score": [1.0, 1.0], "relevance": [0, 2]})
    result = frame.rank_metrics.evaluate(["sdcg(max_rel=2)@1", "sdcg(max_rel=2)@4", "ndcg@4"], no_relevant=None)
    four = 1 + 1 / math.log2(3) + 1 / 2 + 1 / math.log2(5)
    assert result["sdcg(max_rel=2)@1"].to_list() == [0.0, 1.0]
    assert result["sdcg(max_rel=2)@4"].to_list() == pytest.approx([0.0, 1 / four], rel=EXACT, abs=0)
    assert result["ndcg@4"].to_list() == [None, 1.0]


def test_past_1000_positions_the_normaliser_counts_every_position_unlike_ir_measures() -> None:
    """A deliberate difference: cwl_eval (ir_measures' provider) keeps 1000 positions, so its SDCG@1001 is its
    SDCG@1000; here the normaliser of k = 1001 counts 1001 positions."""
    run = pl.DataFrame({"query": ["q"], "doc": ["a"], "score": [1.0]})
    qrels = pl.DataFrame({"query": ["q"], "doc": ["a"], "relevance": [1]})
    measures = {"sdcg(max_rel=1)@1000": ir_measure(0, 1, 1000), "sdcg(max_rel=1)@1001": ir_measure(0, 1, 1001)}
    expected = theirs(run, qrels, measures)
    got = ours_by_column(run, qrels, list(measures))
    weights = [1 / math.log2(p + 1) for p in range(1, 1002)]
    assert got["sdcg(max_rel=1)@1000"]["q"] == pytest.approx(expected["sdcg(max_rel=1)@1000"]["q"], rel=EXACT)
    assert got["sdcg(max_rel=1)@1001"]["q"] == pytest.approx(1 / math.fsum(weights), rel=EXACT)
    assert expected["sdcg(max_rel=1)@1001"]["q"] == pytest.approx(1 / math.fsum(weights[:1000]), rel=EXACT)


@pytest.mark.parametrize("k", [2**16, 2**16 + 1, 2**16 + 7, 300_000, 2_000_000])
def test_the_normaliser_past_the_summed_positions_is_the_sum(k: int) -> None:
    """Past 2**16 positions the normaliser is the Euler-Maclaurin formula: the sum itself, to a few ulps."""
    weights = LOG2 / np.log(np.arange(2, k + 2, dtype=np.float64))
    assert sdcg.ideal_weight(k) == pytest.approx(math.fsum(weights), rel=1e-14)


def test_a_huge_cutoff_scores_a_tiny_positive_value() -> None:
    """k = 2**64: one relevant document at position 1 over the normaliser, about ln 2 li(k), li's asymptotic
    series x / L (1 + 1/L + 2/L**2) (L = ln x) to within its next term's 6/L**3 (7e-5 here)."""
    frame = pl.DataFrame({"query": ["q", "q"], "doc": ["a", "b"], "score": [1.0, 0.0], "relevance": [1, 0]})
    value = frame.rank_metrics.evaluate(["sdcg(max_rel=1)@18446744073709551616"]).item(0, 1)
    normaliser = sdcg.ideal_weight(2**64)
    assert value == pytest.approx(1 / normaliser, rel=EXACT)
    x, ln_x = 2.0**64, 64 * LOG2
    assert normaliser == pytest.approx(LOG2 * x / ln_x * (1 + 1 / ln_x + 2 / ln_x**2), rel=1e-4)
    assert sdcg.ideal_weight(2**64) < sdcg.ideal_weight(2**64 + 2**50)


def test_past_2_to_the_1000_positions_it_is_0() -> None:
    """The normaliser past k = 2**1000 exceeds 1e298 (about k / 1000): SDCG is taken as 0 there, and is still
    positive at k = 2**1000 (its normaliser within li's asymptotic series, as at 2**64)."""
    frame = pl.DataFrame({"query": ["q"], "doc": ["a"], "score": [1.0], "relevance": [1]})
    at, past = f"sdcg(max_rel=1)@{2**1000}", f"sdcg(max_rel=1)@{2**1000 + 1}"
    result = frame.rank_metrics.evaluate([at, past])
    x, ln_x = 2.0**1000, 1000 * LOG2
    normaliser = LOG2 * x / ln_x * (1 + 1 / ln_x + 2 / ln_x**2)
    assert result.item(0, at) == pytest.approx(1 / normaliser, rel=1e-6)
    assert result.item(0, past) == 0.0


# one query, tie blocks of several sizes: graded levels to scale at max_rel 2, and one past it
TIED_LEVELS = [3, 0, 1, 2, 0, 1]
TIED_SCORES = [2.0, 1.0, 1.0, 1.0, 1.0, 0.0]


def every_order(levels: list[int], scores: list[float]) -> pl.DataFrame:
    """One query per order of the rows (the tie blocks' rows in every order)."""
    rows = []
    for number, order in enumerate(itertools.permutations(range(len(levels)))):
        rows += [(number, f"d{i}", scores[i], levels[i]) for i in order]
    return pl.DataFrame(rows, schema=["query", "doc", "score", "relevance"], orient="row")


@pytest.mark.parametrize("k", [1, 2, 3, 4, 6, 8])
def test_tie_averages_are_the_mean_over_every_order_of_the_tied_rows(k: int) -> None:
    names = [f"sdcg(max_rel=2)@{k}", f"sdcg(min_rel=1,max_rel=3)@{k}", f"sdcg(max_rel=1)@{k}"]
    frame = pl.DataFrame(
        {"query": [0] * 6, "doc": [f"d{i}" for i in range(6)], "score": TIED_SCORES, "relevance": TIED_LEVELS}
    )
    averaged = frame.rank_metrics.evaluate(names, ties="average")
    orders = every_order(TIED_LEVELS, TIED_SCORES).rank_metrics.evaluate(names, ties="input")
    for column in names:
        assert averaged[column].item() == pytest.approx(orders[column].mean(), rel=1e-12, abs=1e-15), column
    # the bounds are the best and worst of the orders
    for ties, extreme in (("optimistic", "max"), ("pessimistic", "min")):
        bound = frame.rank_metrics.evaluate(names, ties=ties)
        for column in names:
            assert bound[column].item() == pytest.approx(getattr(orders[column], extreme)(), rel=1e-12), column


def test_judged_tie_averages_are_the_mean_over_every_order() -> None:
    """With qrels: an unjudged and a -1-judged document in the tie block weigh gain 0."""
    docs = ["a", "b", "c", "d", "e"]
    scores = [1.0, 1.0, 1.0, 1.0, 2.0]
    qrels = pl.DataFrame({"query": [0] * 4, "doc": ["a", "b", "c", "e"], "relevance": [3, -1, 1, 2]})
    names = ["sdcg(max_rel=3)@2", "sdcg(max_rel=3)@4"]
    frame = pl.DataFrame({"query": [0] * 5, "doc": docs, "score": scores})
    averaged = frame.rank_metrics.evaluate(names, ties="average", qrels=qrels, doc="doc")
    rows = [(n, docs[i], scores[i]) for n, order in enumerate(itertools.permutations(range(5))) for i in order]
    orders = pl.DataFrame(rows, schema=["query", "doc", "score"], orient="row")
    every_qrels = pl.concat([qrels.with_columns(pl.lit(n, pl.Int64).alias("query")) for n in range(math.factorial(5))])
    by_order = orders.rank_metrics.evaluate(names, ties="input", qrels=every_qrels, doc="doc")
    for column in names:
        assert averaged[column].item() == pytest.approx(by_order[column].mean(), rel=1e-12), column


def test_the_log_base_does_not_change_it() -> None:
    """The discounts of the DCG and of the normaliser scale alike with the base: their ratio does not."""
    run, qrels = random_case(5)
    columns = ["sdcg(max_rel=3)@3", "sdcg(max_rel=3)@10"]
    for ties in ("doc", "average"):
        base2 = ours_by_column(run, qrels, columns, ties=ties)
        base10 = ours_by_column(run, qrels, columns, ties=ties, log_base=10)
        assert any(value > 0 for value in base2[columns[1]].values())
        for column in columns:
            assert base10[column] == pytest.approx(base2[column], rel=EXACT, abs=EXACT), (ties, column)


@pytest.mark.parametrize(
    ("measure", "message"),
    [
        (
            "sdcg(max_rel=3)",
            r"measure 'sdcg\(max_rel=3\)': sdcg takes a cut-off after '@' \(e.g. 'sdcg\(max_rel=3\)@10'\)",
        ),
        ("sdcg(min_rel=-1,max_rel=3)@5", r"option min_rel='-1' is refused: min_rel must not be negative"),
        ("sdcg(max_rel=0)@5", r"option max_rel='0' is refused: max_rel, the greatest relevance level, must be"),
        ("sdcg(min_rel=3,max_rel=2)@5", r"sdcg: max_rel=2 must exceed min_rel=3"),
        ("sdcg(min_rel=1,max_rel=1)@5", r"sdcg: max_rel=1 must exceed min_rel=1"),
        (
            "sdcg(p=0.5)@5",
            r"'p=0.5' is not an option of sdcg; its options: min_rel \(.*, default 0\), max_rel \(.*, required\)",
        ),
    ],
)
def test_refusals_name_the_measure_and_the_value(measure: str, message: str) -> None:
    frame = pl.DataFrame({"query": ["q"], "doc": ["a"], "score": [1.0], "relevance": [1]})
    with pytest.raises(ValueError, match=message):
        frame.rank_metrics.evaluate([measure])


@pytest.mark.parametrize(
    ("measure", "completed"),
    [
        ("sdcg@10", "sdcg(max_rel=4)@10"),
        ("SDCG@3", "sdcg(max_rel=4)@3"),
        ("scaled_dcg@5", "sdcg(max_rel=4)@5"),
        ("sdcg", "sdcg(max_rel=4)@10"),
        ("sdcg(min_rel=1)@5", "sdcg(min_rel=1,max_rel=4)@5"),
        ("sdcg(min_rel=0)@5", "sdcg(max_rel=4)@5"),
    ],
)
def test_max_rel_is_required_as_ir_measures_requires_it(measure: str, completed: str) -> None:
    """No default max_rel: with graded labels 0..4 a default of 1 would silently score every level >= 1 as 1,
    a binary measure nobody asked for.  The error names the measure and max_rel, and writes the name completed."""
    frame = pl.DataFrame({"query": ["q"] * 2, "doc": ["a", "b"], "score": [2.0, 1.0], "relevance": [1, 4]})
    message = (
        f"measure '{measure}': sdcg needs max_rel, the greatest relevance level, gain 1 at or above it "
        f"(ir_measures requires it too): write {completed}."
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        frame.rank_metrics.evaluate([measure])
    with pytest.raises(ValueError, match=re.escape(message)):
        frame.lazy().rank_metrics.evaluate_mean([measure])


def test_the_column_always_shows_max_rel() -> None:
    """max_rel is in every column, at 1 too; min_rel only away from its default 0.  Order b (4), a (1) at
    max_rel=4: (1 + (1/4) / log2 3) / (1 + 1/log2 3); at max_rel=1 both are gain 1: 1."""
    frame = pl.DataFrame({"query": ["q"] * 2, "doc": ["a", "b"], "score": [1.0, 2.0], "relevance": [1, 4]})
    names = ["SDCG(min_rel=0,MAX_REL=4.0)@2", "sdcg(max_rel=1)@2", "sdcg(min_rel=1,max_rel=4)@2"]
    result = frame.rank_metrics.evaluate(names)
    assert result.columns == ["query", "sdcg(max_rel=4)@2", "sdcg(max_rel=1)@2", "sdcg(min_rel=1,max_rel=4)@2"]
    log2_3 = math.log2(3)
    assert result.row(0) == pytest.approx(("q", (1 + 0.25 / log2_3) / (1 + 1 / log2_3), 1.0, 1 / (1 + 1 / log2_3)))
