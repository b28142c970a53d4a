"""Invariants of the diversity (intent-aware) family, drawn by Hypothesis: ragged queries, tied scores, judgments of
intents 1..4 at levels 0..3 (a document judged for some intents only, documents judged but not retrieved and
retrieved but not judged), judged queries missing from the run and run queries without judgments, every member
of the family at drawn cut-offs and options.

- the order of the run's and of the judgments' rows changes no value beyond the last bits (the family's sums are
  float sums in arrival order, `exact_sums` is refused: to 1e-12), per query and on average;
- the eager DataFrame, the LazyFrame collected in memory and the LazyFrame collected by the streaming engine
  give the same frames;
- every value lies within the bounds its definition implies (the family declares none: `measures/diversity.py`
  gives the formulas, the bounds are derived in `test_every_value_lies_within_the_bounds_its_formula_implies`),
  no value is null, NaN, infinite or -0.0, one row per judged query of the run (and, with
  missing_queries="zero", per judged query missing from it, scored 0);
- per query, ndeval (pyndeval) gives the same values, the run in ndeval -traditional's order (ties="doc");
- `by=` gives each group the values of a call over that group's rows alone.

The seeded random cases of tests/test_diversity.py compare the family with ndeval on a fixed set of shapes;
these draw the shapes (and shrink a failure to a small one).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from lodestar_polars.measures._base import option_text
from lodestar_polars.measures.diversity import ALPHA, BETA, REL
from tests.cases import DOC_IDS
from tests.conftest import ENGINES, Engine
from tests.test_diversity import (
    CUTOFF_MEASURES,
    WHOLE_LIST_MEASURES,
    assert_per_query,
    ndeval,
    traditional_order,
    with_options,
)
from tests.test_invariants import TOLERANCE, engines, examples, is_negative_zero

T = TypeVar("T")
CUTOFFS = (1, 2, 3, 5, 10, 20)  # pyndeval computes cut-offs up to 20 (ndeval's DEPTH)
SCORES = (2.0, 1.0, 0.5, 0.0)  # few values: ties in most lists
INTENTS = (1, 2, 3, 4)
LEVELS = (0, 1, 2, 3)
RELS = (1, 2)
# alpha: the dyadic values first (every intent-aware gain (1 - alpha)^c and every sum of them is then exact, in
# ndeval, which adds a document's gains in its subtopics' order, as here: the ndeval property draws those only), 0.3
ALPHAS = (0.5, 0.25, 0.0, 1.0, 0.75, 0.3)
DYADIC_ALPHAS = ALPHAS[:-1]
# beta: nnrbp's greedy ideal is built to 61 positions at 0.5, 32 at 0.25 (`nrbp_depth`); 0.8 takes 100
BETAS = (0.5, 0.25, 0.8)
GROUPS = ("bm25", "dense", "mix")
# whether a query is retrieved and whether it is judged
PRESENCE = ((True, True), (True, True), (True, False), (False, True))


@dataclass(frozen=True)
class DiversityCase:
    """A run (query, doc, score, and model when drawn with groups), judgments (query, intent, doc, relevance),
    the measures (our names -> ndeval's) and their options (rel, alpha, beta; those at their defaults are left out
    of the names)."""

    run: pl.DataFrame
    qrels: pl.DataFrame
    names: dict[str, str]
    rel: int
    alpha: float
    beta: float

    @property
    def columns(self) -> list[str]:
        return list(self.names)

    def call(self, engine: Engine, method: str = "evaluate", **options: Any) -> pl.DataFrame:
        """`method` of the measures through `engine`, ties="doc" (the order that does not depend on the rows')."""
        return engine(
            self.run, method, self.columns, qrels=self.qrels, intent="intent", doc="doc", ties="doc", **options
        )

    def shuffled(self, seed: int) -> DiversityCase:
        return replace(
            self,
            run=self.run.sample(fraction=1.0, shuffle=True, seed=seed),
            qrels=self.qrels.sample(fraction=1.0, shuffle=True, seed=seed + 1),
        )


def some(values: Sequence[T], least: int, most: int) -> st.SearchStrategy[list[T]]:
    """Distinct values, their number drawn uniformly in [least, most] (a list strategy favours short lists: the
    greedy ideal's ties need documents sharing intents)."""
    return st.integers(least, most).flatmap(
        lambda size: st.lists(st.sampled_from(values), min_size=size, max_size=size, unique=True)
    )


@st.composite
def measure_names(draw: st.DrawFn, alphas: tuple[float, ...] = ALPHAS) -> tuple[dict[str, str], int, float, float]:
    """Every cut-off member at 1-3 drawn cut-offs, ap_ia and nrbp, nnrbp in a third of the draws (its greedy ideal
    of 32-100 positions is the slow part of a call), under one drawn setting of rel, alpha and beta."""
    cutoffs = draw(st.lists(st.sampled_from(CUTOFFS), min_size=1, max_size=3, unique=True))
    names = {f"{ours}@{k}": f"{theirs}@{k}" for ours, theirs in CUTOFF_MEASURES.items() for k in cutoffs}
    whole = ["ap_ia", "nrbp"] + (["nnrbp"] if draw(st.sampled_from((False, False, True))) else [])
    names |= {ours: WHOLE_LIST_MEASURES[ours] for ours in whole}
    rel, alpha, beta = draw(st.sampled_from(RELS)), draw(st.sampled_from(alphas)), draw(st.sampled_from(BETAS))
    # in the order of the output's column names (`alpha_ndcg(alpha=0.3,rel=2)@5`)
    drawn = {ALPHA.name: (alpha, ALPHA.default), BETA.name: (beta, BETA.default), REL.name: (rel, REL.default)}
    options = {name: option_text(float(value)) for name, (value, default) in drawn.items() if value != default}
    return with_options(names, options), rel, alpha, beta


@st.composite
def diversity_cases(draw: st.DrawFn, groups: int = 1, alphas: tuple[float, ...] = ALPHAS) -> DiversityCase:
    """1-5 queries (the first retrieved and judged): each judged query judges 1-10 documents for 1-4 of the
    intents 1..4 at levels 0..3, each retrieved query lists 1-10 documents at scores of four values; with
    `groups` > 1, a model column and one run per group (a query retrieved by some groups only, the first by
    every group).  The intent column is Int64 or String."""
    run_rows: list[tuple[str, str, float, str]] = []
    qrels_rows: list[tuple[str, int, str, int]] = []
    models = GROUPS[:groups]
    for q in range(draw(st.integers(1, 5))):
        query = f"q{q}"
        in_run, judged = (True, True) if q == 0 else draw(st.sampled_from(PRESENCE))
        if judged:
            for doc in draw(some(DOC_IDS, 1, 10)):
                for intent in draw(some(INTENTS, 1, 4)):
                    qrels_rows.append((query, intent, doc, draw(st.sampled_from(LEVELS))))
        for model in models:
            if not in_run or (q > 0 and groups > 1 and not draw(st.booleans())):
                continue
            docs = draw(some(DOC_IDS, 1, 10))
            run_rows += [(query, doc, draw(st.sampled_from(SCORES)), model) for doc in docs]
    run = pl.DataFrame(
        run_rows, schema={"query": pl.String, "doc": pl.String, "score": pl.Float64, "model": pl.String}, orient="row"
    )
    qrels = pl.DataFrame(
        qrels_rows,
        schema={"query": pl.String, "intent": pl.Int64, "doc": pl.String, "relevance": pl.Int64},
        orient="row",
    )
    if draw(st.booleans()):
        qrels = qrels.with_columns(pl.col("intent").cast(pl.String))
    names, rel, alpha, beta = draw(measure_names(alphas))
    return DiversityCase(run if groups > 1 else run.drop("model"), qrels, names, rel, alpha, beta)


def assert_same(got: pl.DataFrame, expected: pl.DataFrame) -> None:
    """The same frame: key columns, dtypes and row order exactly, values to 1e-12."""
    assert_frame_equal(got, expected, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


# --- the order of the rows -----------------------------------------------------------------------------------


@examples(20)
@given(case=diversity_cases(), engine=engines, seed=st.integers(0, 2**32 - 1))
def test_no_value_depends_on_the_order_of_the_run_or_judgment_rows(
    case: DiversityCase, engine: Engine, seed: int
) -> None:
    """Per query and on average, to 1e-12, not to the last bit: the run's sums, the greedy ideal's sums and the
    mean over queries add floats in the order the rows arrive (the family refuses `exact_sums`).  The greedy ideal's
    choice of a document compares exact sums (`_exact_sum`), so that equal gains tie whatever the order (the
    regression test of that is tests/test_diversity.py's `..._does_not_depend_on_the_order_of_the_judgments_rows`)."""
    shuffled = case.shuffled(seed)
    assert_same(shuffled.call(engine), case.call(engine))
    assert_same(shuffled.call(engine, "evaluate_mean"), case.call(engine, "evaluate_mean"))


# --- the engines ---------------------------------------------------------------------------------------------


@examples(10)
@given(case=diversity_cases())
def test_the_eager_in_memory_and_streaming_engines_give_the_same_values(case: DiversityCase) -> None:
    eager, *lazy = (Engine(name) for name in ENGINES)
    per_query, mean = case.call(eager), case.call(eager, "evaluate_mean")
    for engine in lazy:
        assert_same(case.call(engine), per_query)
        assert_same(case.call(engine, "evaluate_mean"), mean)


# --- bounds, nulls, rows -------------------------------------------------------------------------------------


def relevant_intents(case: DiversityCase) -> dict[str, dict[str, set[Any]]]:
    """Per judged query: each judged doc's intents judged at a level >= rel (an empty set for a doc judged below
    rel only)."""
    judged: dict[str, dict[str, set[Any]]] = {}
    for query, intent, doc, level in case.qrels.iter_rows():
        intents = judged.setdefault(query, {}).setdefault(doc, set())
        if level >= case.rel:
            intents.add(intent)
    return judged


def ranked_docs(case: DiversityCase) -> dict[str, list[str]]:
    """Per retrieved query, its docs in ties="doc"'s order (trec_eval's and ndeval -traditional's): score
    descending, then doc id descending (byte order: the ids are ASCII)."""
    lists: dict[str, list[tuple[float, str]]] = {}
    for query, doc, score in case.run.select("query", "doc", "score").iter_rows():
        lists.setdefault(query, []).append((score, doc))
    return {query: [doc for _, doc in sorted(rows, reverse=True)] for query, rows in lists.items()}


def stem_and_cutoff(name: str) -> tuple[str, int | None]:
    """`p_ia(rel=2)@5` -> ("p_ia", 5); `nrbp` -> ("nrbp", None)."""
    written, _, cutoff = name.partition("@")
    return written.partition("(")[0], int(cutoff) if cutoff else None


def by_cutoff(row: dict[str, Any], stem: str) -> list[tuple[int, float]]:
    """A row's values of one cut-off member, as (k, value) by increasing k."""
    values = [(stem_and_cutoff(name), value) for name, value in row.items() if name != "query"]
    return sorted((k, value) for (kind, k), value in values if kind == stem and k is not None)


@examples(60)
@given(case=diversity_cases(), engine=engines, missing_queries=st.sampled_from(("skip", "zero")))
def test_every_value_lies_within_the_bounds_its_formula_implies(
    case: DiversityCase, engine: Engine, missing_queries: str
) -> None:
    """The bounds, from the formulas of `measures/diversity.py` (S: the query's intents with a document judged at
    level >= rel; a row's gain g sums (1 - alpha)^c over its intents, c their earlier rows):

    - p_ia@k (pairs within k over k S: a row covers at most S intents), st_recall@k (intents covered over S),
      ap_ia (the mean over S intents of an AP) and nrbp (each intent's gains weigh at most
      sum (1 - alpha)^i beta^i = 1 / (1 - (1 - alpha) beta)) lie in [0, 1];
    - alpha_dcg@k and err_ia@k lie in [0, 1] from k = 2 (an intent's i-th relevant row, at a position p >= i, adds
      (1 - alpha)^(i - 1) d(p) <= the ideal ideal's (1 - alpha)^(i - 1) d(i)); at k = 1 ndeval leaves them
      undivided: the first row's intents, an integer in [0, S];
    - alpha_ndcg@k, nerr_ia@k and nnrbp are >= 0, with no upper bound of 1: their ideal is ndeval's greedy one,
      which a run can beat (`test_a_run_can_beat_ndevals_greedy_ideal`);
    - a value is 0 where the run has no relevant row in its reach (within k; anywhere for ap_ia, nrbp, nnrbp), and
      positive otherwise (beta > 0: nrbp weighs every position);
    - st_recall@k and k x p_ia@k do not fall as k grows.

    No value is null, NaN, infinite or -0.0; the rows are the judged queries of the run (missing_queries="skip")
    or every judged query (missing_queries="zero"; those missing from the run score 0 everywhere), one each,
    sorted, the query column a String as given."""
    result = case.call(engine, missing_queries=missing_queries)
    judged, ranked = relevant_intents(case), ranked_docs(case)
    expected_queries = sorted(judged if missing_queries == "zero" else set(judged) & set(ranked))
    assert result.columns == ["query", *case.columns]
    assert result["query"].to_list() == expected_queries
    assert result.schema["query"] == pl.String
    for row in result.iter_rows(named=True):
        query = row["query"]
        docs = judged[query]
        intents = set().union(*docs.values())
        ranking = ranked.get(query, [])
        for name in case.columns:
            value = row[name]
            assert value is not None and math.isfinite(value) and not is_negative_zero(value), (name, row)
            stem, k = stem_and_cutoff(name)
            reach = ranking[:k] if k is not None else ranking
            covered = sum(len(docs.get(doc, ())) for doc in reach)
            assert (value > 0) == (covered > 0), (name, value, reach, row)
            if k == 1 and stem in ("alpha_dcg", "err_ia"):
                assert value == covered, (name, row)  # undivided: the first row's intents
                assert value <= len(intents)
            elif stem not in ("alpha_ndcg", "nerr_ia", "nnrbp"):
                assert value <= 1.0 + TOLERANCE, (name, value, row)
        if query not in ranked:
            assert all(row[name] == 0.0 for name in case.columns), row
        recall = [value for _, value in by_cutoff(row, "st_recall")]
        pairs = [k * value for k, value in by_cutoff(row, "p_ia")]
        for values in (recall, pairs):
            assert all(low <= high + TOLERANCE for low, high in itertools.pairwise(values)), row


def test_a_run_can_beat_ndevals_greedy_ideal() -> None:
    """Why alpha_ndcg, nerr_ia and nnrbp have no upper bound of 1.  z, a and b cover intents {1, 2, 3, 4},
    {1, 2, 5, 6} and {3, 4, 7, 8}: all three add 4 first, the greedy ideal places z (the greatest id), then a or b
    adds 3 (two intents at 1 - alpha = 0.5, two new).  The run a, b adds 4 and 4: alpha-nDCG@2 =
    (4 + 4 / log2 3) / (4 + 3 / log2 3), nERR-IA@2 = (4 + 4 / 2) / (4 + 3 / 2), as ndeval prints them."""
    docs = {"z": [1, 2, 3, 4], "a": [1, 2, 5, 6], "b": [3, 4, 7, 8]}
    rows = [("q", str(intent), doc, 1) for doc, intents in docs.items() for intent in intents]
    qrels = pl.DataFrame(rows, schema=["query", "intent", "doc", "relevance"], orient="row")
    run = pl.DataFrame({"query": ["q", "q"], "doc": ["a", "b"], "score": [2.0, 1.0]})
    frame = run.rank_metrics.evaluate(
        ["alpha_ndcg@2", "nerr_ia@2"], qrels=qrels, intent="intent", doc="doc", ties="doc"
    )
    expected = {"alpha_ndcg@2": (4 + 4 / math.log2(3)) / (4 + 3 / math.log2(3)), "nerr_ia@2": 6 / 5.5}
    assert frame.select(list(expected)).row(0) == pytest.approx(tuple(expected.values()), rel=1e-12)
    theirs = ndeval(run, qrels, ["alpha-nDCG@2", "nERR-IA@2"])["q"]
    assert (theirs["alpha-nDCG@2"], theirs["nERR-IA@2"]) == pytest.approx(tuple(expected.values()), rel=1e-12)
    assert min(expected.values()) > 1


# --- ndeval --------------------------------------------------------------------------------------------------


@examples(60)
@given(case=diversity_cases(alphas=DYADIC_ALPHAS))
def test_every_measure_equals_ndeval_per_query(case: DiversityCase) -> None:
    """pyndeval on the run in ndeval -traditional's order (score descending, then doc id descending: ties="doc"),
    the intents as text, per query (the queries both retrieved and judged), to 1e-12.  Only dyadic alphas: at
    another (0.3), two documents whose gains are equal (the same gains of their intents) can get sums differing
    in the last bit in ndeval, which adds them in its subtopics' order; the plan compares exact sums, and breaks
    the tie by doc id as ndeval does for equal sums."""
    expected = ndeval(
        traditional_order(case.run),
        case.qrels.with_columns(pl.col("intent").cast(pl.String)),
        list(case.names.values()),
        rel=case.rel,
        alpha=case.alpha,
        beta=case.beta,
    )
    frame = case.call(Engine("eager"))
    got = {row[0]: dict(zip(case.columns, row[1:], strict=True)) for row in frame.iter_rows()}
    assert_per_query(expected, got, case.names)


# --- by ------------------------------------------------------------------------------------------------------


@examples(10)
@given(case=diversity_cases(groups=len(GROUPS)), engine=engines)
def test_by_equals_one_call_per_group(case: DiversityCase, engine: Engine) -> None:
    """Three models' runs over the same judgments, a query retrieved by some models only (the first by every
    model): `by="model"` gives each model the rows and values of a call over its rows alone, and `evaluate_mean`
    its mean."""
    grouped = case.call(engine, by="model")
    assert grouped.columns == ["model", "query", *case.columns]
    assert set(grouped["model"]) <= set(GROUPS)
    means = []
    for model in GROUPS:
        alone = replace(case, run=case.run.filter(pl.col("model") == model).drop("model"))
        assert_same(grouped.filter(pl.col("model") == model).drop("model"), alone.call(engine))
        means.append(alone.call(engine, "evaluate_mean").select(pl.lit(model).alias("model"), pl.all()))
    assert_same(case.call(engine, "evaluate_mean", by="model"), pl.concat(means))


def test_by_refuses_missing_queries_zero() -> None:
    """A judged query missing from the run belongs to no group: `missing_queries="zero"` cannot score it per group."""
    run = pl.DataFrame({"query": ["q"], "doc": ["a"], "score": [1.0], "model": ["bm25"]})
    qrels = pl.DataFrame({"query": ["q"], "intent": [1], "doc": ["a"], "relevance": [1]})
    with pytest.raises(ValueError, match=r"missing_queries='zero' with by= is not supported for the diversity"):
        run.rank_metrics.evaluate(
            ["alpha_ndcg@5"], qrels=qrels, intent="intent", doc="doc", ties="doc", by="model", missing_queries="zero"
        )
