"""The diversity (intent-aware) measures against ndeval itself (pyndeval wraps ndeval.c), per query and on
average, on random runs with tied scores and judgments of several intents per query at levels 0..2; ndeval's
two orders of a run (pyndeval's doc id ascending within a score, -traditional's descending); the quirks
derived by hand; and the errors of a call that cannot be computed."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import lodestar_polars  # registers .rank_metrics
from lodestar_polars import _spec
from lodestar_polars._measure_names import closest_names
from lodestar_polars._measure_table import diversity_table
from lodestar_polars.measures.diversity import DIVERSITY

pyndeval = pytest.importorskip("pyndeval", reason="pyndeval (ndeval.c) is a test dependency (pip install '.[test]')")

EXACT = 1e-12
CUTOFFS = (1, 2, 3, 5, 10, 20)

# our name stem -> ndeval's measure name
CUTOFF_MEASURES = {
    "alpha_dcg": "alpha-DCG",
    "alpha_ndcg": "alpha-nDCG",
    "err_ia": "ERR-IA",
    "nerr_ia": "nERR-IA",
    "p_ia": "P-IA",
    "st_recall": "strec",
}
WHOLE_LIST_MEASURES = {"ap_ia": "MAP-IA", "nrbp": "NRBP", "nnrbp": "nNRBP"}


def random_case(seed: int, levels: int = 3) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Up to 8 queries: runs of 1-25 rows with scores from four values (ties), unjudged documents among them,
    judgments of 1-5 intents per query at levels 0..levels-1 (a document judged for some intents only), judged
    queries missing from the run and run queries without judgments."""
    rng = np.random.default_rng(seed)
    run_rows: list[tuple[str, str, float]] = []
    qrels_rows: list[tuple[str, str, str, int]] = []
    for q in range(int(rng.integers(1, 9))):
        query = f"q{q}"
        pool = [f"d{i:02d}" for i in rng.choice(40, size=int(rng.integers(2, 20)), replace=False)]
        in_run, judged = [(True, True), (True, True), (True, True), (True, False), (False, True)][
            int(rng.integers(0, 5))
        ]
        judged = judged or q == 0
        in_run = in_run or q == 0
        if judged:
            for intent in range(int(rng.integers(1, 6))):
                for doc in rng.choice(pool, size=int(rng.integers(1, len(pool) + 1)), replace=False):
                    qrels_rows.append((query, f"{query}-{intent}", str(doc), int(rng.integers(0, levels))))
        if in_run:
            others = [f"u{i:02d}" for i in range(10)]
            docs = rng.choice(pool + others, size=int(rng.integers(1, min(25, len(pool) + 10) + 1)), replace=False)
            scores = rng.choice([0.0, 0.5, 1.0, 2.0], size=len(docs))
            run_rows += [(query, str(doc), float(score)) for doc, score in zip(docs, scores, strict=True)]
    run = pl.DataFrame(run_rows, schema={"query": pl.String, "doc": pl.String, "score": pl.Float64}, orient="row")
    qrels = pl.DataFrame(
        qrels_rows,
        schema={"query": pl.String, "intent": pl.String, "doc": pl.String, "relevance": pl.Int64},
        orient="row",
    )
    return run, qrels


def ndeval(
    run: pl.DataFrame,
    qrels: pl.DataFrame,
    measures: list[str],
    *,
    rel: int = 1,
    alpha: float = 0.5,
    beta: float = 0.5,
) -> dict[str, dict[str, float]]:
    """pyndeval's values per query (the queries both in the run and in the judgments), the run in pyndeval's
    order: score descending, then doc id ascending."""
    evaluator = pyndeval.RelevanceEvaluator(
        list(qrels.iter_rows()), measures, relevance_level=rel, alpha=alpha, beta=beta
    )
    return evaluator.evaluate(list(run.sort("query").iter_rows()))


def traditional_order(run: pl.DataFrame) -> pl.DataFrame:
    """The run re-scored in ndeval -traditional's order (resultCompareByScore: score descending, then doc id
    descending), without ties, so that pyndeval keeps that order."""
    ordered = run.sort(["query", "score", "doc"], descending=[False, True, True])
    return ordered.with_columns((-pl.int_range(pl.len()).over("query")).cast(pl.Float64).alias("score"))


def ours(
    run: pl.DataFrame, qrels: pl.DataFrame, names: list[str], ties: str, missing_queries: str = "skip"
) -> dict[str, dict[str, float]]:
    """Our values per query, under the names as given (a column leaves out an option at its default)."""
    frame = run.rank_metrics.evaluate(
        names, qrels=qrels, intent="intent", doc="doc", ties=ties, missing_queries=missing_queries
    )
    return {row[0]: dict(zip(names, row[1:], strict=True)) for row in frame.iter_rows()}


def assert_per_query(
    expected: dict[str, dict[str, float]], got: dict[str, dict[str, float]], names: dict[str, str]
) -> None:
    assert sorted(got) == sorted(expected)
    for query, values in expected.items():
        for name, theirs in names.items():
            value = values[theirs]
            if math.isnan(value):  # ndeval's nNRBP of a query without relevant intent: 0 / 0; here 0
                assert theirs == "nNRBP" and got[query][name] == 0.0, (query, name)
                continue
            assert got[query][name] == pytest.approx(value, rel=EXACT, abs=EXACT), (query, name)


def measure_names(options: str = "") -> dict[str, str]:
    """Our names -> ndeval's, at every cut-off, and the whole-list measures."""
    names = {f"{ours}{options}@{k}": f"{theirs}@{k}" for ours, theirs in CUTOFF_MEASURES.items() for k in CUTOFFS}
    return names | {f"{ours}{options}": theirs for ours, theirs in WHOLE_LIST_MEASURES.items()}


def with_options(names: dict[str, str], options: dict[str, str]) -> dict[str, str]:
    """Each of our names with the options its measure takes (`alpha_ndcg(alpha=0.3)@5`, `p_ia(rel=2)@5`)."""
    renamed = {}
    for ours, theirs in names.items():
        stem, _, cutoff = ours.partition("@")
        taken = [f"{name}={value}" for name, value in options.items() if name in _option_names(stem)]
        written = stem + (f"({','.join(taken)})" if taken else "") + (f"@{cutoff}" if cutoff else "")
        renamed[written] = theirs
    return renamed


def _option_names(stem: str) -> set[str]:
    return {option.name for option in DIVERSITY[stem].options}


@pytest.mark.parametrize("seed", range(40))
def test_every_measure_equals_ndeval_per_query_in_pyndevals_order(seed: int) -> None:
    """pyndeval's order (doc id ascending within a score) is ties='input' over a frame sorted by doc."""
    run, qrels = random_case(seed)
    names = measure_names()
    expected = ndeval(run, qrels, list(names.values()))
    assert_per_query(expected, ours(run.sort("doc"), qrels, list(names), "input"), names)


@pytest.mark.parametrize("seed", range(20))
def test_ties_doc_is_ndeval_traditional_order(seed: int) -> None:
    run, qrels = random_case(seed)
    names = measure_names()
    expected = ndeval(traditional_order(run), qrels, list(names.values()))
    assert_per_query(expected, ours(run, qrels, list(names), "doc"), names)


@pytest.mark.parametrize("seed", range(20))
def test_ties_reverse_puts_the_later_row_first(seed: int) -> None:
    run, qrels = random_case(seed)
    names = measure_names()
    expected = ndeval(run, qrels, list(names.values()))
    assert_per_query(expected, ours(run.sort("doc", descending=True), qrels, list(names), "reverse"), names)


@pytest.mark.parametrize(
    ("rel", "alpha", "beta"), [(2, 0.5, 0.5), (1, 0.25, 0.8), (1, 0.0, 0.5), (1, 1.0, 0.5), (2, 0.75, 0.2)]
)
@pytest.mark.parametrize("seed", range(8))
def test_the_options_are_ndevals_parameters(seed: int, rel: int, alpha: float, beta: float) -> None:
    run, qrels = random_case(seed + 100)
    names = with_options(measure_names(), {"rel": str(rel), "alpha": str(alpha), "beta": str(beta)})
    expected = ndeval(run, qrels, list(names.values()), rel=rel, alpha=alpha, beta=beta)
    assert_per_query(expected, ours(run.sort("doc"), qrels, list(names), "input"), names)


@pytest.mark.parametrize("seed", range(10))
def test_the_mean_is_the_mean_of_ndevals_values(seed: int) -> None:
    run, qrels = random_case(seed + 200)
    names = measure_names()
    expected = ndeval(run, qrels, list(names.values()))
    mean = run.sort("doc").rank_metrics.evaluate_mean(
        list(names), qrels=qrels, intent="intent", doc="doc", ties="input"
    )
    judged = set(qrels["query"])
    assert mean["queries"].item() == len(expected)
    assert mean["queries_without_judgments"].item() == len(set(run["query"]) - judged)
    for name, theirs in names.items():
        average = sum(values[theirs] for values in expected.values()) / len(expected)
        assert mean[name].item() == pytest.approx(average, rel=EXACT, abs=EXACT), name


def test_a_lazy_frame_gives_the_same_frame() -> None:
    run, qrels = random_case(3)
    names = list(measure_names())
    eager = run.sort("doc").rank_metrics.evaluate(names, qrels=qrels, intent="intent", doc="doc", ties="input")
    lazy = (
        run.sort("doc")
        .lazy()
        .rank_metrics.evaluate(names, qrels=qrels.lazy(), intent="intent", doc="doc", ties="input")
    )
    assert isinstance(lazy, pl.LazyFrame)
    # a float sum adds in the order the rows arrive: the two may differ in the last place (exact_sums is refused)
    assert_frame_equal(lazy.collect(), eager, rel_tol=EXACT, abs_tol=EXACT)


def test_judged_queries_missing_from_the_run_score_zero_with_missing_queries_zero() -> None:
    run = pl.DataFrame({"query": ["a"], "doc": ["x"], "score": [1.0]})
    qrels = pl.DataFrame(
        {"query": ["a", "a", "b"], "intent": ["1", "2", "1"], "doc": ["x", "y", "z"], "relevance": [1, 1, 1]}
    )
    frame = run.rank_metrics.evaluate(
        ["alpha_ndcg@5", "st_recall@5"], qrels=qrels, intent="intent", doc="doc", ties="doc", missing_queries="zero"
    )
    # query a: x covers intent 1 of 2 (strec 1/2); the greedy ideal places x (ties to the greater id: y) then
    # the other, so alpha-nDCG@5 = 1 / (1 + 1 / log2(3))
    assert frame.to_dicts() == [
        {"query": "a", "alpha_ndcg@5": pytest.approx(1 / (1 + 1 / math.log2(3)), rel=EXACT), "st_recall@5": 0.5},
        {"query": "b", "alpha_ndcg@5": 0.0, "st_recall@5": 0.0},
    ]


def test_by_groups_share_the_judgments() -> None:
    run, qrels = random_case(5)
    names = list(measure_names())
    both = pl.concat([run.with_columns(pl.lit(m).alias("model")) for m in ("x", "y")])
    grouped = both.sort("doc").rank_metrics.evaluate(
        names, qrels=qrels, intent="intent", doc="doc", ties="input", by="model"
    )
    alone = run.sort("doc").rank_metrics.evaluate(names, qrels=qrels, intent="intent", doc="doc", ties="input")
    for model in ("x", "y"):
        assert_frame_equal(grouped.filter(pl.col("model") == model).drop("model"), alone, rel_tol=EXACT, abs_tol=EXACT)


def test_by_means_leave_out_judged_queries_missing_from_the_run() -> None:
    """`evaluate_mean(by=...)` with judgments of a query no model retrieved: each model's mean over its judged
    queries, as without by= (it raised "no query to average in group model=None")."""
    run, qrels = random_case(5)
    qrels = pl.concat([qrels, pl.DataFrame({"query": "absent", "intent": "i", "doc": "d", "relevance": 1})])
    names = ["alpha_ndcg@5", "p_ia@3", "ap_ia"]
    both = pl.concat([run.with_columns(pl.lit(m).alias("model")) for m in ("x", "y")])
    options: dict[str, Any] = {"qrels": qrels, "intent": "intent", "doc": "doc", "ties": "doc"}
    grouped = both.rank_metrics.evaluate_mean(names, by="model", **options)
    alone = run.rank_metrics.evaluate_mean(names, **options)
    assert grouped["model"].to_list() == ["x", "y"]
    for model in ("x", "y"):
        assert_frame_equal(grouped.filter(pl.col("model") == model).drop("model"), alone, rel_tol=EXACT, abs_tol=EXACT)


# --- ndeval's quirks, derived by hand ---------------------------------------------------------------------------

QRELS = pl.DataFrame(
    {
        "query": ["q"] * 5,
        "intent": ["a", "b", "b", "c", "a"],
        "doc": ["A", "B", "D", "C", "D"],
        "relevance": [1, 1, 1, 1, 1],
    }
)
RUN = pl.DataFrame({"query": ["q"] * 4, "doc": ["A", "D", "E", "B"], "score": [9.3, 8.4, 8.1, 7.6]})


def test_first_position_is_not_normalised_by_ndeval() -> None:
    """ndeval divides alpha-DCG@k and ERR-IA@k by the "ideal ideal" from the second position on: at k = 1 they
    are A's raw gain, 1 (one intent of three)."""
    frame = RUN.rank_metrics.evaluate(
        ["alpha_dcg@1", "err_ia@1", "err_ia@2"], qrels=QRELS, intent="intent", doc="doc", ties="doc"
    )
    # err_ia@2: A adds 1, D adds (0.5 for a, 1 for b) / 2; the ideal ideal adds 3 and 3 x 0.5 / 2
    assert frame.row(0) == ("q", 1.0, 1.0, pytest.approx((1 + 1.5 / 2) / (3 + 1.5 / 2), rel=EXACT))


def test_the_greedy_ideal_breaks_equal_gains_by_the_greater_doc_id() -> None:
    """Ideal: D (2 intents), C (1), then B and A (0.5 each): B first.  nERR-IA@5 = 1.875 / (2 + 1/2 + 0.5/3 +
    0.5/4), the run adding 1 (A), 1.5 / 2 (D) and 0.5 / 4 (B)."""
    frame = RUN.rank_metrics.evaluate(["nerr_ia@5"], qrels=QRELS, intent="intent", doc="doc", ties="doc")
    assert frame["nerr_ia@5"].item() == pytest.approx(1.875 / (2 + 1 / 2 + 0.5 / 3 + 0.5 / 4), rel=EXACT)


def test_a_query_without_relevant_intent_scores_zero() -> None:
    qrels = QRELS.with_columns(pl.lit(0).alias("relevance"))
    names = ["alpha_ndcg@5", "alpha_dcg@1", "nerr_ia@5", "p_ia@5", "st_recall@5", "ap_ia", "nrbp", "nnrbp"]
    frame = RUN.rank_metrics.evaluate(names, qrels=qrels, intent="intent", doc="doc", ties="doc")
    assert frame.row(0) == ("q", *([0.0] * len(names)))


def test_ir_measures_and_ndeval_spellings_are_taken() -> None:
    names = ["alpha-nDCG@5", "ERR-IA@5", "StRecall@5", "MAP-IA", "NRBP", "P-IA@5", "alpha_DCG@3", "nERR_IA@2"]
    frame = RUN.rank_metrics.evaluate(names, qrels=QRELS, intent="intent", doc="doc", ties="doc")
    expected = ["alpha_ndcg@5", "err_ia@5", "st_recall@5", "ap_ia", "nrbp", "p_ia@5", "alpha_dcg@3", "nerr_ia@2"]
    assert frame.columns == ["query", *expected]
    assert _call("alpha_ndcg@5").columns == ["query", "alpha_ndcg@5"]  # one name as a string, as evaluate takes
    with pytest.raises(ValueError, match="measures list 'st_recall@5' more than once"):
        _call(["strec@5", "StRecall@5"])


def long_judgments(documents: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """One query, `documents` documents relevant to one of three intents each, the run retrieving every other."""
    docs = [f"d{i:03d}" for i in range(documents)]
    qrels = pl.DataFrame({"query": "q", "intent": [str(i % 3) for i in range(documents)], "doc": docs, "relevance": 1})
    run = pl.DataFrame({"query": "q", "doc": docs[::2], "score": [float(i) for i in range(len(docs[::2]))]})
    return run, qrels


def test_nnrbp_with_more_relevant_documents_than_its_greedy_depth_is_ndevals_where_the_rest_is_negligible() -> None:
    """150 relevant documents, the ideal built to 61 positions at beta = 0.5: the 89 left out weigh less than
    2^-60 of it, so the value is ndeval's, whose ideal places all 150."""
    run, qrels = long_judgments(150)
    expected = ndeval(run, qrels, ["nNRBP"])
    assert ours(run, qrels, ["nnrbp"], "doc")["q"]["nnrbp"] == pytest.approx(expected["q"]["nNRBP"], rel=EXACT)


def test_nnrbp_refuses_a_query_whose_left_out_positions_weigh() -> None:
    run, qrels = long_judgments(150)
    with pytest.raises(ValueError, match=r"nnrbp\(alpha=0.5,beta=0.99,rel=1\): query 'q' has 150 documents relevant"):
        ours(run, qrels, ["nnrbp(beta=0.99)"], "doc")
    few_run, few = long_judgments(90)  # fewer than the 100 positions: its ideal is whole, whatever beta
    expected = ndeval(few_run, few, ["nNRBP"], beta=0.99)
    got = ours(few_run, few, ["nnrbp(beta=0.99)"], "doc")["q"]["nnrbp(beta=0.99)"]
    assert got == pytest.approx(expected["q"]["nNRBP"], rel=EXACT)


# --- errors ------------------------------------------------------------------------------------------------------


def _call(measures: Any, **options: Any) -> pl.DataFrame:
    arguments: dict[str, Any] = {"qrels": QRELS, "intent": "intent", "doc": "doc", "ties": "doc"} | options
    return RUN.rank_metrics.evaluate(measures, **arguments)


def test_a_diversity_measure_without_intent_is_refused() -> None:
    with pytest.raises(ValueError, match=r"'alpha_ndcg@20': alpha_ndcg is a diversity .* intent='<its intent column>'"):
        _call(["alpha_ndcg@20"], intent=None)


def test_a_diversity_measure_without_judgments_is_refused() -> None:
    with pytest.raises(ValueError, match=r"alpha_ndcg is a diversity .* pass qrels=<frame with query, intent, doc"):
        _call(["alpha_ndcg@20"], qrels=None)


def test_mixing_diversity_and_other_measures_is_refused_with_the_way_to_do_it() -> None:
    with pytest.raises(
        ValueError, match=r"\('alpha_ndcg@20'\) from per-intent .* \('ndcg@10'\) .* join the two frames"
    ):
        _call(["alpha_ndcg@20", "ndcg@10"])


def test_intent_with_other_measures_only_is_refused() -> None:
    with pytest.raises(ValueError, match="'ndcg@10' reads judgments per document: leave intent= out"):
        _call(["ndcg@10"])


def test_the_intent_column_must_exist() -> None:
    with pytest.raises(
        pl.exceptions.ColumnNotFoundError,
        match=r"intent column 'subtopic' not found in qrels; .* Name the intent column with intent=",
    ):
        _call(["alpha_ndcg@20"], intent="subtopic")


@pytest.mark.parametrize("ties", ["average", "optimistic", "pessimistic"])
def test_tie_modes_without_an_ndeval_order_are_refused(ties: str) -> None:
    with pytest.raises(ValueError, match=rf"ties='{ties}' is refused for alpha_ndcg@5: .* ties='doc' .* ties='input'"):
        _call(["alpha_ndcg@5"], ties=ties)


@pytest.mark.parametrize(
    ("option", "value"),
    [("gain", "exponential"), ("threshold", 1.0), ("log_base", 10.0), ("exact_sums", True), ("max_retrieved", 5)],
)
def test_options_that_do_not_apply_are_refused(option: str, value: object) -> None:
    with pytest.raises(ValueError, match=f"{option}={value!r} does not apply to the diversity measures"):
        _call(["alpha_ndcg@5"], **{option: value})


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("alpha_ndcg", r"takes a whole number of positions after '@' \(e.g. 'alpha_ndcg@20'\), none given"),
        ("ap_ia@5", "ap_ia takes no cut-off after '@'"),
        ("alpha_ndcg@101", "takes a cut-off of at most 100"),
        (
            "alpha_ndcg(alpha=1.5)@5",
            r"option alpha='1.5' is refused: alpha, the redundancy intolerance, lies in \[0, 1\]",
        ),
        ("p_ia(alpha=0.3)@5", "'alpha=0.3' is not an option of p_ia"),
    ],
)
def test_bad_names_are_refused(name: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _call([name])


def test_a_duplicated_judgment_is_refused() -> None:
    qrels = pl.concat([QRELS, QRELS.head(1)])
    with pytest.raises(ValueError, match=r"qrels judge doc 'A' twice for one intent of query 'q'"):
        _call(["alpha_ndcg@5"], qrels=qrels)


def test_a_null_intent_is_refused() -> None:
    qrels = QRELS.with_columns(pl.when(pl.col("doc") == "C").then(None).otherwise(pl.col("intent")).alias("intent"))
    with pytest.raises(ValueError, match="qrels intent column 'intent' has 1 null value"):
        _call(["alpha_ndcg@5"], qrels=qrels)


def test_a_duplicated_run_doc_is_refused() -> None:
    run = pl.concat([RUN, RUN.head(1)])
    with pytest.raises(ValueError, match="query 'q' lists doc 'A' more than once"):
        run.rank_metrics.evaluate(["alpha_ndcg@5"], qrels=QRELS, intent="intent", doc="doc", ties="doc")


def test_an_ordinary_entry_point_names_the_missing_intents() -> None:
    with pytest.raises(ValueError, match="alpha_ndcg is a diversity"):
        RUN.rank_metrics.evaluate(["alpha_nDCG@5"], doc="doc", ties="doc", qrels=QRELS.drop("intent"), intent=None)
    assert "alpha_ndcg@5" in closest_names("alpha_ndgc@5")


@pytest.mark.parametrize(
    ("measures", "intent"), [(["alpha_ndcg@5"], "intent"), (["ERR-IA@5"], None), (["ap"], "intent")]
)
def test_spark_refuses_the_diversity_measures_before_reading_the_frame(measures: list[str], intent: str | None) -> None:
    from lodestar_polars import spark as lodestar_spark

    for function in (lodestar_spark.evaluate, lodestar_spark.evaluate_mean):
        with pytest.raises(ValueError, match=r"the diversity measures .* are not computed on Spark yet"):
            function(None, measures, intent=intent)  # type: ignore[arg-type]  # refused before the frame is read


def test_readme_diversity_table_is_the_familys() -> None:
    """README.md holds a copy of the generated diversity table between its markers: regenerate it with
    `python -c "from lodestar_polars._measure_table import diversity_table; print(diversity_table(), end='')"`."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    start, end = "<!-- diversity-table: start -->\n", "<!-- diversity-table: end -->"
    assert start in readme and end in readme, "README.md lost its diversity-table markers"
    assert readme[readme.index(start) + len(start) : readme.index(end)] == diversity_table()


def test_no_diversity_name_is_another_measures() -> None:
    assert not set(_spec.DIVERSITY_NAMES) & set(_spec.MEASURE_NAMES)


@pytest.mark.parametrize("seed", range(3))
def test_ir_measures_gives_the_same_numbers_through_its_pyndeval_provider(seed: int) -> None:
    ir_measures = pytest.importorskip("ir_measures", reason="ir-measures is a test dependency (pip install '.[test]')")
    pytest.importorskip("pandas", reason="ir_measures takes the judgments' iteration column from a pandas frame")
    run, qrels = random_case(seed + 300)
    names = {
        "alpha_dcg@20": "alpha_DCG@20",
        "alpha_ndcg@10": "alpha_nDCG@10",
        "err_ia@5": "ERR_IA@5",
        "nerr_ia@20": "nERR_IA@20",
        "p_ia@5": "P_IA@5",
        "st_recall@10": "StRecall@10",
        "ap_ia": "AP_IA",
        "nrbp": "NRBP",
    }
    wanted = {ir_measures.parse_measure(theirs): ours for ours, theirs in names.items()}
    judgments = qrels.rename({"query": "query_id", "intent": "iteration", "doc": "doc_id"}).to_pandas()
    scored = run.rename({"query": "query_id", "doc": "doc_id"}).to_pandas()
    expected: dict[str, dict[str, float]] = {}
    for metric in ir_measures.iter_calc(list(wanted), judgments, scored):
        expected.setdefault(metric.query_id, {})[wanted[metric.measure]] = metric.value
    # ir_measures scores a judged query missing from the run 0, as missing_queries="zero" does
    got = ours(run.sort("doc"), qrels, list(names), "input", missing_queries="zero")
    assert_per_query(expected, got, {name: name for name in names})


# ir_measures' diversity measures with default parameters (one ndeval invocation), then each with its own: ir_measures
# 0.4 computes a second invocation (another alpha, beta or rel) in one call as 0, so each of those is called alone
PROVIDER_DEFAULTS = ["alpha_DCG@20", "alpha_nDCG@10", "ERR_IA@5", "nERR_IA@20", "P_IA@5", "StRecall@10", "AP_IA"]
PROVIDER_ALONE = ["NRBP", "nNRBP", "alpha_nDCG(alpha=0.25)@5", "nERR_IA(rel=2)@10", "nNRBP(alpha=0.75,beta=0.8)"]


@pytest.mark.parametrize("seed", range(6))
def test_the_ir_measures_provider_gives_ir_measures_numbers_for_the_diversity_family(seed: int) -> None:
    """`lodestar_polars.ir_measures_provider.PROVIDER` computes the family from the qrels' `iteration` (the
    subtopic, as ir_measures' pyndeval provider reads it), ties by ascending doc id, judged queries missing from
    the run scored 0: ir_measures' own numbers, per query and on average."""
    ir_measures = pytest.importorskip("ir_measures", reason="ir-measures is a test dependency (pip install '.[test]')")
    pytest.importorskip("pandas", reason="ir_measures takes the judgments' iteration column from a pandas frame")
    from lodestar_polars.ir_measures_provider import PROVIDER

    run, qrels = random_case(seed + 500)
    judgments = qrels.rename({"query": "query_id", "intent": "iteration", "doc": "doc_id"}).to_pandas()
    scored = run.rename({"query": "query_id", "doc": "doc_id"}).to_pandas()
    calls = [PROVIDER_DEFAULTS] + [[name] for name in PROVIDER_ALONE]
    for names in calls:
        measures = [ir_measures.parse_measure(name) for name in names]
        assert all(PROVIDER.supports(measure) for measure in measures)
        theirs = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(measures, judgments, scored)}
        ours = {(m.query_id, str(m.measure)): m.value for m in PROVIDER.iter_calc(measures, judgments, scored)}
        assert ours.keys() == theirs.keys()
        assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-12), names
        their_means = ir_measures.calc_aggregate(measures, judgments, scored)
        assert PROVIDER.calc_aggregate(measures, judgments, scored) == pytest.approx(their_means, rel=1e-12, abs=1e-12)


def test_the_provider_leaves_judged_only_diversity_measures_to_ir_measures() -> None:
    """ir_measures 0.4 fails on judged_only=True for this family; the provider does not claim it."""
    ir_measures = pytest.importorskip("ir_measures", reason="ir-measures is a test dependency (pip install '.[test]')")
    from lodestar_polars.ir_measures_provider import PROVIDER

    assert not PROVIDER.supports(ir_measures.parse_measure("alpha_nDCG(judged_only=True)@10"))
    assert PROVIDER.supports(ir_measures.parse_measure("alpha_nDCG(judged_only=False)@10"))


# --- the command line ------------------------------------------------------------------------------------------


def test_the_command_line_reads_trecs_diversity_qrels(tmp_path: Path) -> None:
    """`evaluate RUN --qrels FILE --intent`: the TREC qrels' second column is the intent (topic subtopic docno
    judgment); the run a TREC run, in trec_eval's order (ties="doc"), as ndeval -traditional reads it."""
    from lodestar_polars import cli as command_line

    run, qrels = random_case(11)
    qrels_file, run_file, per_query = tmp_path / "div.qrels", tmp_path / "run.txt", tmp_path / "per_query.csv"
    qrels_file.write_text("".join(f"{q} {i} {d} {r}\n" for q, i, d, r in qrels.iter_rows()))
    run_file.write_text("".join(f"{q} Q0 {d} {n} {s} x\n" for n, (q, d, s) in enumerate(run.iter_rows())))
    names = {"alpha_ndcg@20": "alpha-nDCG@20", "err_ia@10": "ERR-IA@10", "st_recall@5": "strec@5", "ap_ia": "MAP-IA"}
    arguments = ["evaluate", str(run_file), "--qrels", str(qrels_file), "--intent", "--ties", "doc"]
    arguments += ["-m", ",".join(names), "--per-query", str(per_query), "--quiet"]
    assert command_line.main(arguments) == 0
    frame = pl.read_csv(per_query, schema_overrides={"query": pl.String})
    got = {row.pop("query"): row for row in frame.iter_rows(named=True)}
    assert_per_query(ndeval(traditional_order(run), qrels, list(names.values())), got, names)


def test_the_command_line_needs_qrels_for_intent(tmp_path: Path) -> None:
    from lodestar_polars import cli as command_line

    run_file = tmp_path / "run.csv"
    RUN.write_csv(run_file)
    assert command_line.main(["evaluate", str(run_file), "--intent", "-m", "alpha_ndcg@5", "--quiet"]) == 2


@pytest.mark.parametrize(("by", "judged_only"), [(None, False), ("model", False), (None, True)])
def test_the_plan_has_no_in_memory_fallback(by: str | None, judged_only: bool) -> None:
    """Every step (windows, joins, group-bys, the greedy ideal's windows) runs natively in the streaming engine."""
    from tests.test_streaming_plan import fallback_nodes

    run, qrels = random_case(3)
    names = list(measure_names())
    lazy = run.with_columns(pl.lit("x").alias("model")).lazy()
    options: dict[str, Any] = {"intent": "intent", "doc": "doc", "ties": "doc", "by": by, "judged_only": judged_only}
    per_query = lazy.rank_metrics.evaluate(names, qrels=qrels.lazy(), **options)
    mean = lazy.rank_metrics.evaluate_mean(names, qrels=qrels.lazy(), **options)
    assert fallback_nodes(per_query) == []
    assert fallback_nodes(mean) == []


def test_a_null_query_is_refused_in_the_run_and_in_the_judgments() -> None:
    with pytest.raises(ValueError, match=r"^query column 'query' has null values"):
        pl.concat([RUN, pl.DataFrame({"query": [None], "doc": ["Z"], "score": [1.0]})]).rank_metrics.evaluate(
            ["alpha_ndcg@5"], qrels=QRELS, intent="intent", doc="doc", ties="doc"
        )
    with pytest.raises(ValueError, match=r"^qrels query column 'query' has null values"):
        _call(
            ["alpha_ndcg@5"],
            qrels=QRELS.with_columns(pl.when(pl.col("doc") == "C").then(None).otherwise("query").alias("query")),
        )


@pytest.mark.parametrize("seed", range(8))
def test_integer_ids_break_ties_by_their_text_as_ndeval(seed: int) -> None:
    """Integer query, doc and intent ids: ties="doc" and the greedy ideal compare doc ids as text ("9" > "10")."""
    run, qrels = random_case(seed + 400)
    number = pl.col("doc").str.slice(1).cast(pl.Int64) + pl.when(pl.col("doc").str.starts_with("u")).then(
        100
    ).otherwise(0)
    query_number = pl.col("query").str.slice(1).cast(pl.Int32)
    int_run = run.with_columns(number.alias("doc"), query_number.alias("query"))
    int_qrels = qrels.with_columns(
        number.alias("doc"), query_number.cast(pl.Int64).alias("query"), pl.col("intent").str.slice(3).cast(pl.Int8)
    )
    text_run = int_run.with_columns(pl.col("query", "doc").cast(pl.String))
    text_qrels = int_qrels.with_columns(pl.col("query", "intent", "doc").cast(pl.String))
    names = measure_names()
    expected = ndeval(traditional_order(text_run), text_qrels, list(names.values()))
    frame = int_run.rank_metrics.evaluate(list(names), qrels=int_qrels, intent="intent", doc="doc", ties="doc")
    assert frame.schema["query"] == pl.Int32
    got = {str(row[0]): dict(zip(names, row[1:], strict=True)) for row in frame.iter_rows()}
    assert_per_query(expected, got, names)


def test_the_greedy_ideal_compares_integer_doc_ids_as_text() -> None:
    """Docs 2 {a, d}, 8 {b, c}, 14 {c, d} all add 2 first; as text "8" is the greatest (numerically 14 would
    be), so the ideal is 8, 2 (2 again), 14 (1), 27 (0.25), where 14 first would give 2, 1.5, 1.5, 0.25."""
    docs = {2: "ad", 27: "d", 14: "cd", 8: "bc"}
    rows = [(1, intent, doc, 1) for doc, intents in docs.items() for intent in intents]
    qrels = pl.DataFrame(rows, schema=["query", "intent", "doc", "relevance"], orient="row")
    run = pl.DataFrame({"query": [1] * 4, "doc": [27, 2, 14, 8], "score": [4.0, 3.0, 2.0, 1.0]})
    frame = run.rank_metrics.evaluate(["alpha_ndcg@5"], qrels=qrels, intent="intent", doc="doc", ties="doc")
    # the run: 27 adds 1 (d), 2 adds 1 + 0.5 (a, d again), 14 adds 1 + 0.25 (c, d a third time), 8 adds 1 + 0.5
    run_dcg = 1 + 1.5 / math.log2(3) + 1.25 / 2 + 1.5 / math.log2(5)
    ideal_dcg = 2 + 2 / math.log2(3) + 1 / 2 + 0.25 / math.log2(5)
    assert frame["alpha_ndcg@5"].item() == pytest.approx(run_dcg / ideal_dcg, rel=EXACT)
    text = ndeval(
        run.with_columns(pl.col("query", "doc").cast(pl.String)),
        qrels.with_columns(pl.col("query", "intent", "doc").cast(pl.String)),
        ["alpha-nDCG@5"],
    )
    assert frame["alpha_ndcg@5"].item() == pytest.approx(text["1"]["alpha-nDCG@5"], rel=EXACT)


@pytest.mark.parametrize("seed", range(12))
def test_the_greedy_ideal_does_not_depend_on_the_order_of_the_judgments_rows(seed: int) -> None:
    """At alpha = 0.3, after q (4 intents) and p (3.1), x, y and w each add 1 + 1 + 0.7^2 (two new intents, one
    covered twice): a tie, which goes to the greatest doc id, y; then x and w tie at 1 + 0.7 + 0.7^2 (x).  The
    ideal adds 4, 3.1, 2.49, 2.19, as the run p, q, x, y does: alpha-nDCG@4 is 1, ndeval's value.  Summed as
    floats in the order the rows arrive, the three gains of 2.49 differed in the last bit for some orders of the
    judgments' rows, and the larger won the tie: 0.98438 (ndeval sums in its subtopics' order)."""
    docs = {"p": [5, 6, 7, 8], "q": [5, 6, 7, 9], "x": [1, 2, 5], "y": [2, 3, 6], "w": [3, 4, 7]}
    rows = [(1, intent, doc, 1) for doc, intents in docs.items() for intent in intents]
    schema = {"query": pl.Int64, "intent": pl.Int64, "doc": pl.String, "relevance": pl.Int64}
    qrels = pl.DataFrame(rows, schema=schema, orient="row").sample(fraction=1.0, shuffle=True, seed=seed)
    run = pl.DataFrame({"query": [1] * 5, "doc": list(docs), "score": [5.0, 4.0, 3.0, 2.0, 1.0]})
    frame = run.rank_metrics.evaluate(["alpha_ndcg(alpha=0.3)@4"], qrels=qrels, intent="intent", doc="doc", ties="doc")
    # pyndeval numbers the intents in the order it first reads them: ascending, as ndeval reads its numbers
    text = qrels.sort("intent").with_columns(pl.col("query", "intent").cast(pl.String))
    expected = ndeval(run.with_columns(pl.col("query").cast(pl.String)), text, ["alpha-nDCG@4"], alpha=0.3)
    assert expected["1"]["alpha-nDCG@4"] == pytest.approx(1.0, rel=EXACT)
    assert frame.item(0, 1) == pytest.approx(1.0, rel=EXACT)


def test_the_package_mean_finds_the_diversity_columns() -> None:
    """`lodestar_polars.mean` of the per-query frame finds the measures' columns by their names."""
    run, qrels = random_case(2)
    names = list(measure_names())
    per_query = run.sort("doc").rank_metrics.evaluate(names, qrels=qrels, intent="intent", doc="doc", ties="input")
    expected = run.sort("doc").rank_metrics.evaluate_mean(names, qrels=qrels, intent="intent", doc="doc", ties="input")
    assert_frame_equal(
        lodestar_polars.mean(per_query), expected.select(*names, "queries", "weight_sum"), rel_tol=EXACT, abs_tol=EXACT
    )


@pytest.mark.parametrize("seed", range(6))
def test_judged_only_ranks_the_judged_documents_only(seed: int) -> None:
    """judged_only=True: ndeval on the run without its unjudged documents (ir_measures' judged_only=True keeps
    those in the judgments; the judgments here have no negative level, where trec_eval's -J and it differ; its
    0.4.3 provider fails on it, indexing a generator); a query left without a row scores 0."""
    run, qrels = random_case(seed + 500)
    names = {"alpha_ndcg@10": "alpha-nDCG@10", "err_ia@5": "ERR-IA@5", "p_ia@3": "P-IA@3", "ap_ia": "MAP-IA"}
    judged = run.join(qrels.select("query", "doc").unique(), on=["query", "doc"], how="semi")
    expected = ndeval(judged, qrels, list(names.values()))
    emptied = set(run["query"]) & set(qrels["query"]) - set(judged["query"])
    expected |= {query: dict.fromkeys(names.values(), 0.0) for query in emptied}
    frame = run.sort("doc").rank_metrics.evaluate(
        list(names), qrels=qrels, intent="intent", doc="doc", ties="input", judged_only=True
    )
    got = {row[0]: dict(zip(names, row[1:], strict=True)) for row in frame.iter_rows()}
    assert_per_query(expected, got, names)
    assert got != ours(run.sort("doc"), qrels, list(names), "input")  # these runs hold unjudged documents
