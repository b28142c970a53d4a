"""The measures reference (`tests/measures_reference.py`) checked against real tools before it is trusted:

- pytrec_eval (trec_eval's C code): `P_k`, `recall_k`, `map`, `map_cut_k`, `success_k`, `recip_rank`,
  `ndcg_cut_k` on random runs WITH tied scores, which trec_eval breaks by docno (the reference's ties="doc");
- ranx: `precision`, `precision@k`, `recall@k`, `map`, `map@k`, `hit_rate@k`, `mrr` on tie-free runs;
- the tie-averaged values: the distinct-arrangement enumeration against every document order, and the
  per-block closed forms against the enumeration, as exact fractions.

Facts found by running ranx 0.3.21 (and reading `ranx/metrics/*.py`), written down in
`test_ranx_conventions_are_trec_evals`:
- `map@k` divides by R, the number of relevant judged documents (retrieved or not), NOT by min(k, R):
  trec_eval's `map_cut_k` convention.  `map` (no k) is trec_eval's `map`.
- relevant means level >= 1 (`rel_lvl=1`), as trec_eval; `precision@k` divides by k even for a shorter list
  (trec_eval `P_k`); `precision` without k divides by the list length; `recall`, `map`, `hit_rate` of a query
  without relevant judgment are 0 (trec_eval too).
- the one difference from trec_eval: ties.  ranx sorts by score only (its own sort decides tied documents),
  trec_eval breaks ties by docno descending.  And `ranx.evaluate` refuses a run whose queries differ from the
  qrels' unless `make_comparable=True`.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from fractions import Fraction

import numpy as np
import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import measures_reference as ref
from tests.cases import Qrels, Run, ranx_values, run_and_qrels, tie_free_case

EXACT = 1e-12
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------------------------------------
# hand-derived values


def test_precision_divides_by_k_past_the_list_and_by_the_length_without_k() -> None:
    relevance, score = [1, 0, 1], [3.0, 2.0, 1.0]
    assert ref.precision(relevance, score, 10, "input") == pytest.approx(2 / 10)  # hand: 2 relevant / k
    assert ref.precision(relevance, score, None, "input") == pytest.approx(2 / 3)
    assert ref.precision(relevance, score, 2, "input") == pytest.approx(1 / 2)


def test_average_precision_by_hand() -> None:
    # relevant at positions 1 and 3, R = 4 judged relevant: (1/1 + 2/3) / 4; AP@2 = (1/1) / 4
    relevance, score = [1, 0, 1, 0], [4.0, 3.0, 2.0, 1.0]
    assert ref.average_precision(relevance, score, None, "input", relevant_count=4) == pytest.approx((1 + 2 / 3) / 4)
    assert ref.average_precision(relevance, score, 2, "input", relevant_count=4) == pytest.approx(1 / 4)
    assert ref.average_precision(relevance, score, None, "input") == pytest.approx((1 + 2 / 3) / 2)


def test_tie_block_straddling_k_by_hand() -> None:
    # one document, then a block of 4 holding 2 relevant over positions 2..5; k = 2 takes one of its slots
    relevance, score = [0, 1, 1, 0, 0], [9.0, 1.0, 1.0, 1.0, 1.0]
    assert ref.precision(relevance, score, 2, "average") == pytest.approx((2 / 4) / 2)  # hand: E[hits] = 1 * 2/4
    assert ref.success(relevance, score, 2, "average") == pytest.approx(1 / 2)
    assert ref.recall(relevance, score, 2, "average") == pytest.approx((2 / 4) / 2)
    # AP@2: relevant at position 2 with probability 1/2, precision there 1/2, R = 2
    assert ref.average_precision(relevance, score, 2, "average") == pytest.approx(0.5 * 0.5 / 2)
    assert ref.reciprocal_rank(relevance, score, 2, "average") == pytest.approx(0.5 * 1 / 2)


def test_tie_modes_on_one_block() -> None:
    relevance, score, doc = [0, 1, 0], [1.0, 1.0, 1.0], ["b", "a", "c"]
    assert ref.reciprocal_rank(relevance, score, None, "input", doc) == 1 / 2
    assert ref.reciprocal_rank(relevance, score, None, "reverse", doc) == 1 / 2
    assert ref.reciprocal_rank(relevance, score, None, "doc", doc) == 1 / 3  # c, b, a
    assert ref.reciprocal_rank(relevance, score, None, "optimistic", doc) == 1
    assert ref.reciprocal_rank(relevance, score, None, "pessimistic", doc) == 1 / 3
    assert ref.reciprocal_rank(relevance, score, None, "average", doc) == pytest.approx((1 + 1 / 2 + 1 / 3) / 3)


def test_doc_ids_compare_as_text() -> None:
    # "9" > "10" as text: trec_eval puts doc 9 first among equal scores
    assert ref.reciprocal_rank([0, 1], [1.0, 1.0], None, "doc", ["10", "9"]) == 1


def test_no_relevant_policy() -> None:
    relevance, score = [0, 0], [1.0, 0.5]
    for measure in (ref.recall, ref.average_precision):
        assert measure(relevance, score, None, "input") == 0.0
        assert measure(relevance, score, None, "input", no_relevant=None) is None
        assert measure(relevance, score, None, "input", no_relevant=1.0) == 1.0
        with pytest.raises(ValueError, match="no relevant"):
            measure(relevance, score, None, "input", no_relevant="error")
    assert ref.ndcg(relevance, score, None, "input", no_relevant=None) is None
    # a relevant judged document that was not retrieved: R = 1, nothing found, no policy involved
    assert ref.recall(relevance, score, None, "input", relevant_count=1, no_relevant=None) == 0.0


def test_threshold() -> None:
    relevance, score = [1, 2, 3], [3.0, 2.0, 1.0]
    assert ref.precision(relevance, score, None, "input", threshold=1) == pytest.approx(2 / 3)
    assert ref.reciprocal_rank(relevance, score, None, "input", threshold=2) == pytest.approx(1 / 3)
    assert ref.recall(relevance, score, None, "input", threshold=3) == 0.0


# --------------------------------------------------------------------------------------------------------
# the enumeration and the closed forms


@st.composite
def tied_query(draw: st.DrawFn, max_docs: int = 7) -> tuple[list[int], list[float]]:
    size = draw(st.integers(1, max_docs))
    relevance = draw(st.lists(st.integers(0, 3), min_size=size, max_size=size))
    score = draw(st.lists(st.sampled_from([0.0, 1.0, 2.0]), min_size=size, max_size=size))
    return relevance, score


def _mean_over_document_orders(measure, value: Sequence[float], score: Sequence[float]) -> Fraction:  # type: ignore[no-untyped-def]  # any measure of a sequence
    orders = list(ref.all_document_orders(score))
    return sum((Fraction(measure([value[i] for i in order])) for order in orders), Fraction(0)) / len(orders)


@SETTINGS
@given(query=tied_query(), k=st.sampled_from([None, 1, 2, 3, 4, 6, 9]))
def test_distinct_arrangements_average_every_document_order(
    query: tuple[list[int], list[float]], k: int | None
) -> None:
    relevance, score = query
    relevant = ref.flags(relevance, 0.0)
    count = max(1, sum(relevant))
    for measure in (
        lambda ranked: ref.precision_of(ranked, k),
        lambda ranked: ref.recall_of(ranked, k, count),
        lambda ranked: ref.average_precision_of(ranked, k, count),
        lambda ranked: ref.success_of(ranked, k),
        lambda ranked: ref.reciprocal_rank_of(ranked, k),
    ):
        assert ref.mean_over_ties(measure, relevant, score) == _mean_over_document_orders(measure, relevant, score)
    gains = [float(r) for r in relevance]
    assert float(ref.mean_over_ties(lambda ranked: ref.dcg_of(ranked, k), gains, score)) == pytest.approx(
        float(_mean_over_document_orders(lambda ranked: ref.dcg_of(ranked, k), gains, score)), abs=EXACT
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    query=tied_query(max_docs=10),
    k=st.sampled_from([None, 1, 2, 3, 4, 5, 7, 12]),
    extra_relevant=st.integers(0, 2),
)
def test_closed_forms_equal_the_enumeration(
    query: tuple[list[int], list[float]], k: int | None, extra_relevant: int
) -> None:
    """Exact fractions: P@k, R@k, AP@k and success@k from the per-block formulas vs brute force."""
    relevance, score = query
    relevant = ref.flags(relevance, 0.0)
    count = sum(relevant) + extra_relevant  # judged relevant documents not retrieved raise R
    assert ref.expected_precision_closed_form(relevant, score, k) == ref.mean_over_ties(
        lambda ranked: ref.precision_of(ranked, k), relevant, score
    )
    assert ref.expected_success_closed_form(relevant, score, k) == ref.mean_over_ties(
        lambda ranked: ref.success_of(ranked, k), relevant, score
    )
    if count:
        assert ref.expected_recall_closed_form(relevant, score, k, count) == ref.mean_over_ties(
            lambda ranked: ref.recall_of(ranked, k, count), relevant, score
        )
        assert ref.expected_average_precision_closed_form(relevant, score, k, count) == ref.mean_over_ties(
            lambda ranked: ref.average_precision_of(ranked, k, count), relevant, score
        )


def _assert_closed_forms(relevant: Sequence[int], score: Sequence[float], k: int | None) -> None:
    count = max(1, sum(relevant))
    brute = ref.mean_over_ties(lambda ranked: ref.average_precision_of(ranked, k, count), relevant, score)
    assert ref.expected_average_precision_closed_form(relevant, score, k, count) == brute
    brute = ref.mean_over_ties(lambda ranked: ref.recall_of(ranked, k, count), relevant, score)
    assert ref.expected_recall_closed_form(relevant, score, k, count) == brute
    brute = ref.mean_over_ties(lambda ranked: ref.success_of(ranked, k), relevant, score)
    assert ref.expected_success_closed_form(relevant, score, k) == brute
    brute = ref.mean_over_ties(lambda ranked: ref.precision_of(ranked, k), relevant, score)
    assert ref.expected_precision_closed_form(relevant, score, k) == brute


def test_closed_forms_on_every_small_block_layout() -> None:
    """Exhaustive: every 0/1 relevance pattern and tie layout of up to 5 documents, every cut-off."""
    for size in range(1, 6):
        for relevant in itertools.product([0, 1], repeat=size):
            for cuts in itertools.product([False, True], repeat=size - 1):
                score, current = [], 100.0
                for i in range(size):
                    if i and cuts[i - 1]:
                        current -= 1
                    score.append(current)
                for k in (None, *range(1, size + 2)):
                    _assert_closed_forms(relevant, score, k)


def test_tie_averaged_dcg_is_scikit_learns() -> None:
    """The enumerated DCG expectation equals scikit-learn's tie-averaged dcg_score (k inside a block too)."""
    from sklearn.metrics import dcg_score

    rng = np.random.default_rng(0)
    for _ in range(30):
        size = int(rng.integers(2, 8))
        relevance = rng.integers(0, 4, size).tolist()
        score = rng.integers(0, 3, size).astype(float).tolist()
        for k in (None, 1, 2, 3, 5):
            expected = float(dcg_score(np.asarray([relevance]), np.asarray([score]), k=k))
            assert ref.dcg(relevance, score, k, "average") == pytest.approx(expected, abs=EXACT)


# --------------------------------------------------------------------------------------------------------
# against pytrec_eval (trec_eval) on random runs with ties broken by docno

CUTOFFS = [1, 2, 3, 5, 10, 15]


def trec_eval_measures(cutoffs: Sequence[int]) -> set[str]:
    cut = ",".join(str(k) for k in cutoffs)
    return {f"P.{cut}", f"recall.{cut}", "map", f"map_cut.{cut}", f"success.{cut}", "recip_rank", f"ndcg_cut.{cut}"}


def reference_as_trec_eval(run: Run, qrels: Qrels, cutoffs: Sequence[int]) -> dict[str, dict[str, float | None]]:
    """The reference with ties='doc' over the queries trec_eval evaluates (in the run and judged)."""
    values: dict[str, dict[str, float | None]] = {}
    for query in sorted(set(run) & set(qrels)):
        docs = list(run[query])
        score = [run[query][d] for d in docs]
        relevance = [qrels[query].get(d, 0) for d in docs]  # unjudged: not relevant
        count = sum(1 for level in qrels[query].values() if level >= 1)  # all judged relevant documents
        gains = [max(level, 0) for level in relevance]  # trec_eval's gain: negative levels count 0
        ideal = [max(level, 0) for level in qrels[query].values()]
        out: dict[str, float | None] = {
            "map": ref.average_precision(relevance, score, None, "doc", docs, relevant_count=count),
            "recip_rank": ref.reciprocal_rank(relevance, score, None, "doc", docs),
        }
        for k in cutoffs:
            out[f"P_{k}"] = ref.precision(relevance, score, k, "doc", docs)
            out[f"recall_{k}"] = ref.recall(relevance, score, k, "doc", docs, relevant_count=count)
            out[f"map_cut_{k}"] = ref.average_precision(relevance, score, k, "doc", docs, relevant_count=count)
            out[f"success_{k}"] = ref.success(relevance, score, k, "doc", docs)
            out[f"ndcg_cut_{k}"] = ref.ndcg(gains, score, k, "doc", docs, ideal_relevance=ideal)
        values[query] = out
    return values


@SETTINGS
@given(case=run_and_qrels())
def test_reference_with_ties_doc_is_pytrec_eval(case: tuple[Run, Qrels]) -> None:
    run, qrels = case
    expected = pytrec_eval.RelevanceEvaluator(qrels, trec_eval_measures(CUTOFFS)).evaluate(run)
    ours = reference_as_trec_eval(run, qrels, CUTOFFS)
    assert sorted(ours) == sorted(expected)
    for query, values in ours.items():
        for name, value in values.items():
            assert value == pytest.approx(expected[query][name], abs=EXACT, rel=0), (query, name)


def test_reference_is_pytrec_eval_on_a_tie_free_run() -> None:
    rng = np.random.default_rng(7)
    run: Run = {}
    qrels: Qrels = {}
    for q in range(20):
        docs = [f"doc{i}" for i in rng.permutation(60)[: rng.integers(1, 40)]]
        scores = rng.permutation(len(docs)).astype(float) / 3
        run[f"q{q}"] = {d: float(s) for d, s in zip(docs, scores, strict=True)}
        judged = rng.choice([*docs, "extra1", "extra2"], size=int(rng.integers(1, 12)), replace=False)
        qrels[f"q{q}"] = {str(d): int(level) for d, level in zip(judged, rng.integers(0, 4, len(judged)), strict=True)}
    cutoffs = [1, 3, 5, 10, 20, 50]
    expected = pytrec_eval.RelevanceEvaluator(qrels, trec_eval_measures(cutoffs)).evaluate(run)
    ours = reference_as_trec_eval(run, qrels, cutoffs)
    for query, values in ours.items():
        for name, value in values.items():
            assert value == pytest.approx(expected[query][name], abs=EXACT, rel=0), (query, name)


# --------------------------------------------------------------------------------------------------------
# against ranx on tie-free runs

RANX_CUTOFFS = [1, 3, 5, 10, 50]


@pytest.mark.parametrize("seed", range(5))
def test_reference_is_ranx_on_tie_free_runs(seed: int) -> None:
    run, qrels = tie_free_case(seed)
    names = ["precision", "map", "mrr"] + [
        f"{m}@{k}" for m in ("precision", "recall", "map", "hit_rate", "mrr") for k in RANX_CUTOFFS
    ]
    expected = ranx_values(run, qrels, names)
    for query, docs in run.items():
        doc_ids = list(docs)
        score = [docs[d] for d in doc_ids]
        relevance = [qrels[query].get(d, 0) for d in doc_ids]
        count = sum(1 for level in qrels[query].values() if level >= 1)
        ours = {
            "precision": ref.precision(relevance, score, None, "input"),
            "map": ref.average_precision(relevance, score, None, "input", relevant_count=count),
            "mrr": ref.reciprocal_rank(relevance, score, None, "input"),
        }
        for k in RANX_CUTOFFS:
            ours[f"precision@{k}"] = ref.precision(relevance, score, k, "input")
            ours[f"recall@{k}"] = ref.recall(relevance, score, k, "input", relevant_count=count)
            ours[f"map@{k}"] = ref.average_precision(relevance, score, k, "input", relevant_count=count)
            ours[f"hit_rate@{k}"] = ref.success(relevance, score, k, "input")
            ours[f"mrr@{k}"] = ref.reciprocal_rank(relevance, score, k, "input")
        for name, value in ours.items():
            assert value == pytest.approx(expected[query][name], abs=EXACT, rel=0), (query, name)


def test_ranx_conventions_are_trec_evals() -> None:
    """Run once to settle ranx's conventions: map@k / R (not min(k, R)), P@k / k past the list, level >= 1."""
    qrels: Qrels = {"q": {"a": 1, "b": 2, "c": 0, "x": 1, "y": 1, "z": -1}}  # R = 4 (a, b, x, y)
    run: Run = {"q": {"a": 3.0, "c": 2.0, "b": 1.0, "z": 0.5}}  # relevant at positions 1 and 3
    got = ranx_values(run, qrels, ["map@1", "map@3", "map", "precision@10", "precision", "hit_rate@2"])["q"]
    assert got["map@1"] == pytest.approx(1 / 4)  # 1/R; min(k, R) would give 1/1
    assert got["map@3"] == pytest.approx((1 + 2 / 3) / 4)  # (1/1 + 2/3) / R; min(k, R) = 3 would give 0.5556
    assert got["map"] == pytest.approx((1 + 2 / 3) / 4)
    assert got["precision@10"] == pytest.approx(2 / 10)  # divides by k past the 4-document list
    assert got["precision"] == pytest.approx(2 / 4)  # no k: divides by the list length
    trec = pytrec_eval.RelevanceEvaluator(qrels, {"map_cut.1,3", "map", "P.10", "success.2"}).evaluate(run)["q"]
    assert (trec["map_cut_1"], trec["map_cut_3"], trec["map"], trec["P_10"], trec["success_2"]) == pytest.approx(
        (got["map@1"], got["map@3"], got["map"], got["precision@10"], got["hit_rate@2"])
    )
