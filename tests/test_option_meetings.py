"""Where two options meet: judgments x gain mappings, judgments x threshold, tie bounds x gain in `evaluate`,
huge cut-offs x tie averaging, and the sign of zero.  Each expected value is derived by hand in its docstring
(or is trec_eval's own output, quoted), and each test failed before its fix."""

from __future__ import annotations

import math
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import lodestar_polars  # registers .rank_metrics
from tests.conftest import Engine

LOG2_3 = math.log2(3)


# --- judgments x gain mapping: unjudged documents gain 0, judged level 0 gets gain(0) in DCG and ideal --------


def test_unjudged_documents_gain_nothing_when_label_0_has_a_gain(engine: Engine) -> None:
    """Four retrieved documents, none judged; the one judged document (z, level 1) is not retrieved.  With
    gain(0) = 1, unjudged documents still gain 0 (trec_eval): DCG 0, ideal 2, NDCG 0 (it was 1.28)."""
    run = pl.DataFrame({"query": ["q"] * 4, "doc": list("abcd"), "score": [4.0, 3.0, 2.0, 1.0]})
    qrels = pl.DataFrame({"query": ["q"], "doc": ["z"], "relevance": [1]})
    result = engine(run, "ndcg", doc="doc", qrels=qrels, gain={0: 1.0, 1: 2.0})
    assert result["ndcg"].to_list() == [0.0]
    dcg = engine(run, "dcg", doc="doc", qrels=qrels, gain={0: 1.0, 1: 2.0})
    assert dcg["dcg"].to_list() == [0.0]


def test_a_judged_level_0_document_counts_its_gain_as_trec_eval_does(engine: Engine) -> None:
    """trec_eval 10 `-m ndcg.0=1,1=2` on qrels `1 0 d1 1` and a run dX 0.9, d1 0.8 prints 0.6309
    (= 2 / log2(3) / 2).  Adding d3 judged 0 (retrieved third) and d4 judged -1 (retrieved fourth): d3 adds
    gain(0) = 1 at position 3 to the DCG and 1 / log2(3) to the ideal (second place); d4, judged at a negative
    level, counts as unjudged (gain 0, not in the ideal)."""
    run = pl.DataFrame({"query": [1, 1], "doc": ["dX", "d1"], "score": [0.9, 0.8]})
    qrels = pl.DataFrame({"query": [1], "doc": ["d1"], "relevance": [1]})
    result = engine(run, "ndcg", doc="doc", qrels=qrels, gain={0: 1.0, 1: 2.0})
    assert round(result["ndcg"][0], 4) == 0.6309
    run = pl.DataFrame({"query": [1] * 4, "doc": ["dX", "d1", "d3", "d4"], "score": [0.9, 0.8, 0.7, 0.6]})
    qrels = pl.DataFrame({"query": [1, 1, 1], "doc": ["d1", "d3", "d4"], "relevance": [1, 0, -1]})
    result = engine(run, "ndcg", doc="doc", qrels=qrels, gain={0: 1.0, 1: 2.0})
    expected = (2 / LOG2_3 + 1 / 2) / (2 + 1 / LOG2_3)
    assert result["ndcg"].to_list() == pytest.approx([expected], rel=1e-12)


def test_a_negative_judgment_needs_no_gain_in_a_mapping(engine: Engine) -> None:
    """A -1 judgment marks a document as unjudged: the mapping needs no label for it (nor for 0)."""
    run = pl.DataFrame({"query": [1, 1], "doc": ["a", "b"], "score": [2.0, 1.0]})
    qrels = pl.DataFrame({"query": [1, 1], "doc": ["a", "b"], "relevance": [-1, 2]})
    result = engine(run, "ndcg", doc="doc", qrels=qrels, gain={2: 5.0})
    assert result["ndcg"].to_list() == pytest.approx([(5 / LOG2_3) / 5], rel=1e-12)


# --- judgments x threshold: an unjudged document is never relevant -----------------------------------------


def test_a_negative_threshold_never_makes_an_unjudged_document_relevant(engine: Engine) -> None:
    """Three unjudged retrieved documents, then b judged 0 and c judged -1 (retrieved); d judged 2, not
    retrieved.  threshold -0.5: relevant = judged at a level >= 0, so b and d (R = 2; c's -1 marks it unjudged,
    as in trec_eval).  b at position 4: R@10 = 1/2, AP = (1/4) / 2, P@5 = 1/5, RR = 1/4 (recall was 3.0)."""
    run = pl.DataFrame({"query": ["q"] * 5, "doc": ["x", "y", "z", "b", "c"], "score": [5.0, 4.0, 3.0, 2.0, 1.0]})
    qrels = pl.DataFrame({"query": ["q"] * 3, "doc": ["b", "c", "d"], "relevance": [0, -1, 2]})
    result = engine(run, "evaluate", ["r@10", "ap", "p@5", "rr", "success@3"], doc="doc", qrels=qrels, threshold=-0.5)
    assert result.row(0) == pytest.approx(("q", 0.5, 0.125, 0.2, 0.25, 0.0))  # type: ignore[arg-type]


def test_with_judgments_every_threshold_measure_stays_within_one() -> None:
    run = pl.DataFrame({"query": ["q"] * 3, "doc": ["a", "b", "c"], "score": [1.0, 1.0, 1.0]})
    qrels = pl.DataFrame({"query": ["q"], "doc": ["z"], "relevance": [1]})
    for threshold in (-5.0, -0.5, 0.0, 0.5):
        result = run.rank_metrics.evaluate(
            ["r", "ap", "p", "rr", "success"], doc="doc", qrels=qrels, threshold=threshold
        )
        assert result.drop("query").row(0) == (0.0, 0.0, 0.0, 0.0, 0.0), threshold


# --- tie bounds are per measure, in evaluate as in the single methods ------------------------------------------


def test_evaluate_takes_each_measures_own_bound_when_gain_and_relevance_disagree(engine: Engine) -> None:
    """Two tied documents, labels 0 and 1, gain {0: 2, 1: 1}: the best order for NDCG puts label 0 first
    (NDCG 1), the best for AP and RR puts label 1 first (AP = RR = 1); the worst orders swap them: NDCG
    (1 + 2 / log2 3) / (2 + 1 / log2 3), AP = RR = 1/2."""
    frame = pl.DataFrame({"query": [1, 1], "relevance": [0, 1], "score": [1.0, 1.0]})
    options: dict[str, Any] = {"gain": {0: 2.0, 1: 1.0}}
    best = engine(frame, "evaluate", ["ndcg", "ap", "rr", "p@1", "success@1"], ties="optimistic", **options)
    assert best.drop("query").row(0) == pytest.approx((1.0, 1.0, 1.0, 1.0, 1.0))
    worst = engine(frame, "evaluate", ["ndcg", "ap", "rr", "p@1", "success@1"], ties="pessimistic", **options)
    ndcg = (1 + 2 / LOG2_3) / (2 + 1 / LOG2_3)
    assert worst.drop("query").row(0) == pytest.approx((ndcg, 0.5, 0.5, 0.0, 0.0))


@pytest.mark.parametrize("ties", ["optimistic", "pessimistic"])
def test_every_evaluate_column_equals_its_single_method_under_a_bound(engine: Engine, ties: str) -> None:
    """Label 0 is the most gainful (0.5) and label 1 gains nothing: the bounds of NDCG and DCG order a tie block
    by gain, those of the other measures by relevance."""
    frame = pl.DataFrame({"query": [1, 1, 2, 2, 2], "relevance": [0, 1, 2, 0, 1], "score": [1.0, 1.0, 3.0, 3.0, 3.0]})
    gain = [0.5, 0.0, 0.25]
    together = engine(frame, "evaluate", ["ndcg@2", "dcg", "ap", "rr", "p@1", "r@1", "success@1"], ties=ties, gain=gain)
    singles = [
        engine(frame, "ndcg", k=2, ties=ties, gain=gain)["ndcg@2"],
        engine(frame, "dcg", ties=ties, gain=gain)["dcg"],
        engine(frame, "average_precision", ties=ties)["average_precision"],
        engine(frame, "reciprocal_rank", ties=ties)["reciprocal_rank"],
        engine(frame, "precision", k=1, ties=ties)["precision@1"],
        engine(frame, "recall", k=1, ties=ties)["recall@1"],
        engine(frame, "success", k=1, ties=ties)["success@1"],
    ]
    expected = pl.DataFrame([together["query"], *singles]).rename(
        dict(zip([s.name for s in singles], together.columns[1:], strict=True))
    )
    assert_frame_equal(together, expected)


# --- a k past the list scores the whole list, for any k --------------------------------------------------------


@pytest.mark.parametrize("huge", [2**64 - 1, 2**64, 2**70, 10**30])
def test_a_huge_cutoff_scores_the_whole_list(engine: Engine, huge: int) -> None:
    """Relevance 0, 1, 0 with the last two tied: rr over the whole list is (1/2 + 1/3) / 2 = 5/12 and success
    is 1 with tie averaging (rr@2**64 was 0)."""
    frame = pl.DataFrame({"query": [1, 1, 1], "relevance": [0, 1, 0], "score": [3.0, 2.0, 2.0]})
    names = [f"rr@{huge}", f"success@{huge}", f"ap@{huge}", f"ndcg@{huge}", f"r@{huge}", "rr", "ap", "ndcg"]
    for ties in ("average", "input", "optimistic"):
        result = engine(frame, "evaluate", names, ties=ties)
        row = result.row(0, named=True)
        assert row[f"rr@{huge}"] == pytest.approx(row["rr"], rel=1e-15), ties
        assert row[f"ap@{huge}"] == pytest.approx(row["ap"], rel=1e-15), ties
        assert row[f"ndcg@{huge}"] == pytest.approx(row["ndcg"], rel=1e-15), ties
        assert row[f"success@{huge}"] == 1.0
        assert row[f"r@{huge}"] == 1.0
    averaged = engine(frame, "reciprocal_rank", k=huge)
    assert averaged[f"reciprocal_rank@{huge}"].to_list() == pytest.approx([5 / 12], rel=1e-15)


def test_precision_at_a_huge_cutoff_divides_by_k(engine: Engine) -> None:
    """P@k divides by k past the list too (trec_eval's P_k): one hit in 2**64 positions."""
    frame = pl.DataFrame({"query": [1, 1], "relevance": [1, 0], "score": [2.0, 1.0]})
    result = engine(frame, "precision", k=[2**64, 10**400])
    assert result.row(0) == (1, 2.0**-64, 0.0)


# --- no -0.0 in any output -----------------------------------------------------------------------------------


def _negative_zeros(frame: pl.DataFrame) -> list[str]:
    return [
        f"{name}[{i}]"
        for name, dtype in frame.schema.items()
        if dtype.is_float()
        for i, value in enumerate(frame[name].to_list())
        if value == 0 and math.copysign(1.0, value) < 0
    ]


def test_no_output_holds_negative_zero(engine: Engine) -> None:
    """Query 0's first relevant row is at position 3: success@1 and rr@2 are 0, and were -0.0 (with tie
    averaging, the expectation over the first tie block's offsets summed to -0.0)."""
    frame = pl.DataFrame(
        {"query": [0, 0, 0, 1, 1], "relevance": [0, 0, 2, 1, 1], "score": [2.0, 2.0, 1.0, 0.5, 0.5], "w": -0.0}
    )
    names = ["rr", "success@1", "rr@2", "success@2", "p@1", "ap@1", "ndcg@1", "dcg@2", "r@1"]
    for ties in ("average", "input", "optimistic", "pessimistic"):
        result = engine(frame, "evaluate", names, ties=ties)
        assert _negative_zeros(result) == [], ties
    weighted = engine(frame.with_columns(pl.lit(-0.0).alias("w")), "evaluate", names, weight="w")
    assert _negative_zeros(weighted) == []
    mean = engine(frame.with_columns(pl.lit(-1.0).alias("w")), "evaluate_mean", ["success@1", "p@1"], weight="w")
    assert _negative_zeros(mean) == []


# --- messages name the user's columns ------------------------------------------------------------------------


def test_a_duplicated_composite_doc_is_named_with_the_users_columns(engine: Engine) -> None:
    frame = pl.DataFrame(
        {"query": [1, 1], "site": [1, 1], "doc_id": ["x", "x"], "relevance": [0, 1], "score": [2.0, 1.0]}
    )
    with pytest.raises(ValueError, match=r"query 1 lists doc \{'site': 1, 'doc_id': 'x'\} more than once"):
        engine(frame, "ndcg", doc=["site", "doc_id"])
    run = frame.drop("relevance").with_columns(pl.Series("doc_id", ["x", "y"]))
    qrels = frame.select("query", "site", "doc_id", "relevance")
    with pytest.raises(ValueError, match=r"qrels list doc \{'site': 1, 'doc_id': 'x'\} twice for query 1"):
        engine(run, "ndcg", doc=["site", "doc_id"], qrels=qrels)


@pytest.mark.parametrize("huge", [2**32, 2**63, 2**64, 2**70])
def test_an_expression_with_a_huge_cutoff_scores_the_whole_group(huge: int) -> None:
    """exprs: top_k and the expected reciprocal rank took the cut-off as a 32- or 64-bit integer and failed
    ("conversion from i64 to u32"); any k past the group now scores the whole group (rr: (1/2 + 1/3) / 2)."""
    from lodestar_polars import exprs

    frame = pl.DataFrame({"query": [1, 1, 1], "relevance": [0, 1, 0], "score": [3.0, 2.0, 2.0]})
    cut = frame.group_by("query").agg(exprs.ndcg(k=huge), exprs.dcg(k=huge), exprs.reciprocal_rank(k=huge))
    whole = frame.group_by("query").agg(exprs.ndcg(), exprs.dcg(), exprs.reciprocal_rank())
    assert cut.drop("query").row(0) == whole.drop("query").row(0)
    assert cut[f"rr@{huge}"].to_list() == pytest.approx([5 / 12], rel=1e-15)


def test_a_mean_with_no_query_for_one_of_its_measures_names_the_group(engine: Engine) -> None:
    """One query, judged 0 with gain(0) = 2: NDCG is 1 (DCG = ideal = 2) but R = 0, so recall is null with
    no_relevant=None.  The mean of recall has no query: "no query to average" (naming the group with by=), not
    "Weights sum to zero" (which held only for the first measure's count of queries)."""
    run = pl.DataFrame({"device": ["phone"], "query": [0], "doc": ["a"], "score": [-0.5], "w": [0.5]})
    qrels = pl.DataFrame({"query": [0], "doc": ["a"], "relevance": [0]})
    options: dict[str, Any] = {"doc": "doc", "qrels": qrels, "gain": {0: 2.0, 1: 1.0}, "no_relevant": None}
    per_query = engine(run, "evaluate", ["ndcg", "r"], weight="w", **options)
    assert per_query.select("ndcg", "r").row(0) == (1.0, None)
    with pytest.raises(ValueError, match=r"no query to average in group device='phone'"):
        engine(run, "evaluate_mean", ["ndcg", "r"], by="device", weight="w", **options)
    with pytest.raises(ValueError, match=r"no query to average"):
        engine(run, "evaluate_mean", ["ndcg", "r"], weight="w", **options)
    with pytest.raises(ValueError, match=r"no query to average"):
        lodestar_polars.mean(per_query, weight="w", metrics=["ndcg", "r"])
