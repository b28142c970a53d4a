"""infAP (trec_eval's m_infap.c): hand derivations of its treatment of unpooled, pooled-unassessed and judged
documents, its value without judgments, and its tie-mode refusals.  The real binary compares it byte for byte
on random runs in tests/test_trec_eval_binary.py (it is in the CLI's trec_eval table)."""

from __future__ import annotations

import polars as pl
import pytest

EPSILON = 1e-5  # trec_eval's INFAP_EPSILON


def infap(run: dict[str, list[object]], qrels: dict[str, list[object]], **options: object) -> list[float | None]:
    frame = pl.DataFrame(run)
    judged = pl.DataFrame(qrels)
    result = frame.rank_metrics.evaluate("infap", doc="doc", qrels=judged, **{"ties": "doc", **options})
    return result["infap"].to_list()


def test_unpooled_unassessed_and_judged_documents() -> None:
    """Ranked a (not in the qrels), b (relevant), c (judged -1: pooled, not assessed), d (judged 0), e (judged
    2); f (judged 1) is not retrieved, so R = 3.
    b at j = 1, nothing pooled above: 1/2 + 1/2 x 0/1 x ... = 1/2 (a, unpooled, only lengthens j).
    e at j = 4, above it c = 1 relevant, n = 1 non-relevant, u = 1 unassessed: 1/5 + 4/5 x 3/4 x (1 + ε)/(2 + 2ε)
    = 1/5 + 3/5 x 1/2 = 1/2.  infAP = (1/2 + 1/2) / 3."""
    run = {"query": [1] * 5, "doc": list("abcde"), "score": [5.0, 4, 3, 2, 1]}
    qrels = {"query": [1] * 5, "doc": list("bcdef"), "relevance": [1, -1, 0, 2, 1]}
    assert infap(run, qrels) == pytest.approx([1 / 3], rel=1e-14)


def test_a_relevant_document_below_unassessed_ones_only() -> None:
    """c (judged -1) then b (relevant): b at j = 1 with u = 1 and nothing judged above: the smoothed precision
    (0 + ε)/(0 + 0 + 2ε) = 1/2, so 1/2 + 1/2 x 1/1 x 1/2 = 3/4 (R = 1)."""
    run = {"query": [1, 1], "doc": ["c", "b"], "score": [2.0, 1.0]}
    qrels = {"query": [1, 1], "doc": ["b", "c"], "relevance": [1, -1]}
    assert infap(run, qrels) == pytest.approx([0.75], rel=1e-14)


def test_a_relevant_first_document_adds_one_and_no_relevant_is_no_relevant() -> None:
    """Query 1: its relevant document first adds 1, its other relevant one is not retrieved: 1/2.  Query 2 has
    no relevant judgment: `no_relevant` (0 by default, as trec_eval prints; None on request).  Query 3 is
    judged but missing from the run: with missing_queries='zero' it scores 0 (trec_eval's -c)."""
    run = {"query": [1, 1, 2], "doc": ["a", "x", "y"], "score": [2.0, 1.0, 1.0]}
    qrels = {"query": [1, 1, 2, 3], "doc": ["a", "z", "y", "w"], "relevance": [1, 1, 0, 1]}
    assert infap(run, qrels, missing_queries="zero") == pytest.approx([0.5, 0.0, 0.0], rel=1e-14)
    assert infap(run, qrels, no_relevant=None) == [0.5, None]


def test_without_judgments_it_is_ap_within_epsilon() -> None:
    """Relevance 0, 1, 1 by descending score, every row judged: the relevant row at j = 1 (c = 0) adds
    1/2 + 1/2 x 1 x ε/(1 + 2ε), the one at j = 2 (c = 1) adds 1/3 + 2/3 x (1 + ε)/(2 + 2ε) = 2/3; AP's terms are
    1/2 and 2/3.  The same with qrels judging every retrieved document."""
    frame = pl.DataFrame({"query": [1, 1, 1], "doc": list("abc"), "score": [3.0, 2, 1], "relevance": [0, 1, 1]})
    expected = (0.5 + 0.5 * EPSILON / (1 + 2 * EPSILON) + 2 / 3) / 2
    result = frame.rank_metrics.evaluate(["infap", "ap"], ties="doc", doc="doc")
    assert result["infap"].item() == pytest.approx(expected, rel=1e-14)
    assert result["ap"].item() == pytest.approx((0.5 + 2 / 3) / 2, rel=1e-14)
    judged = frame.drop("relevance").rank_metrics.evaluate(
        "infap", ties="doc", doc="doc", qrels=frame.select("query", "doc", "relevance")
    )
    assert judged["infap"].item() == pytest.approx(expected, rel=1e-14)


def test_ties_average_is_refused() -> None:
    frame = pl.DataFrame({"query": [1, 1], "doc": ["a", "b"], "score": [1.0, 1.0], "relevance": [0, 1]})
    with pytest.raises(ValueError, match=r"^infap has no exact expectation under ties='average'"):
        frame.rank_metrics.evaluate("infap", doc="doc")


def test_relevant_first_is_not_the_best_order_with_judgments_so_the_bounds_are_refused() -> None:
    """a relevant (score 3), x unpooled (2), then r relevant and u judged -1 tied at 1 (R = 2).
    r before u: r at j = 2, c = 1, pooled above 1: 1/3 + 2/3 x 1/2 x (1 + ε)/(1 + 2ε) ~ 2/3.
    u before r: r at j = 3, pooled above 2: 1/4 + 3/4 x 2/3 x (1 + ε)/(1 + 2ε) ~ 3/4, more: relevant first is
    not infAP's best order, so ties='optimistic' / 'pessimistic' are refused with judgments (not without)."""
    qrels = pl.DataFrame({"query": [1, 1, 1], "doc": ["a", "r", "u"], "relevance": [1, 1, -1]})
    ratio = (1 + EPSILON) / (1 + 2 * EPSILON)
    for docs, last in (
        (["a", "x", "r", "u"], 1 / 3 + 2 / 3 * 1 / 2 * ratio),
        (["a", "x", "u", "r"], 1 / 4 + 1 / 2 * ratio),
    ):
        run = pl.DataFrame({"query": [1] * 4, "doc": docs, "score": [3.0, 2.0, 1.0, 1.0]})
        value = run.rank_metrics.evaluate("infap", doc="doc", qrels=qrels, ties="input")["infap"].item()
        assert value == pytest.approx((1 + last) / 2, rel=1e-14)
    for ties in ("optimistic", "pessimistic"):
        with pytest.raises(ValueError, match=rf"^infap has no ties='{ties}' bound with qrels="):
            run.rank_metrics.evaluate(["ap", "infap"], doc="doc", qrels=qrels, ties=ties)
        run.with_columns(relevance=pl.lit(1)).rank_metrics.evaluate("infap", doc="doc", ties=ties)
