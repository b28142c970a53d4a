"""ndcg_rel, bpref and gm_bpref under ties="average": the mean over every order of each query's tied rows.

Oracle: a plain-Python reference of each measure written from trec_eval's definitions (m_ndcg_rel.c,
m_bpref.c), sharing no code with the package, evaluated on every order of the tied rows
(`tests.measures_reference.all_document_orders`: each tie block in every one of its permutations) and
averaged.  The same reference on the ties="doc" order equals the package's ties="doc" value (which
tests/test_trec_eval_binary.py compares with the trec_eval binary), so the reference is trec_eval's measure.
Data: small ragged queries with heavy score ties, in-frame relevance or judgments (unjudged and negatively
judged documents retrieved, judged documents not retrieved), with linear, exponential and mapped gains.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lodestar_polars  # noqa: F401  (registers .rank_metrics)
from tests.conftest import Engine
from tests.measures_reference import all_document_orders, deterministic_order

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
GAINS: list[Any] = ["linear", "exponential", {0: 0.0, 1: 0.5, 2: 3.0, 3: 2.0}]
SCORES = [-1.0, -0.0, 0.0, 0.5, 2.0]


def gain_of(level: float | None, gain: Any) -> float:
    """A level's gain (an unjudged document's: 0)."""
    if level is None:
        return 0.0
    if gain == "linear":
        return float(level)
    if gain == "exponential":
        return 2.0**level - 1.0
    return float(gain[int(level)])


@dataclass(frozen=True)
class Query:
    """One query: its retrieved documents' levels (None: unjudged) and scores, and the levels of its judged
    documents (retrieved or not; without judgments, the retrieved levels)."""

    levels: list[float | None]
    scores: list[float]
    judged: list[float]


def ndcg_rel_of(ranked: Sequence[float | None], query: Query, gain: Any) -> float | None:
    """trec_eval's ndcg_rel: each retrieved document of positive gain at position p adds DCG(1..p) / ideal
    DCG(1..p), each positive-gain judged document not retrieved the whole DCG / the whole ideal DCG; the sum
    over P positive-gain judged documents, 0 when it is not positive; None without positive gain."""
    ideal_gains = sorted((g for g in (gain_of(level, gain) for level in query.judged) if g > 0), reverse=True)
    if not ideal_gains:
        return None
    ideal_at, total = [], 0.0
    for position in range(1, max(len(ranked), len(ideal_gains)) + 1):
        if position <= len(ideal_gains):
            total += ideal_gains[position - 1] / math.log2(position + 1)
        ideal_at.append(total)
    shares, dcg, retrieved_positive = 0.0, 0.0, 0
    for position, level in enumerate(ranked, start=1):
        g = gain_of(level, gain)
        dcg += g / math.log2(position + 1)
        if g > 0:
            shares += dcg / ideal_at[position - 1]
            retrieved_positive += 1
    shares += (len(ideal_gains) - retrieved_positive) * dcg / ideal_at[-1]
    return shares / len(ideal_gains) if shares > 0 else 0.0


def bpref_of(ranked: Sequence[float | None], query: Query, threshold: float) -> float | None:
    """trec_eval's bpref: over the retrieved relevant documents, 1 - min(n, R) / min(N, R), n the judged
    non-relevant documents above (1 when n = 0), summed and divided by R; None when R = 0."""
    relevant_total = sum(1 for level in query.judged if level > threshold)
    nonrelevant_total = sum(1 for level in query.judged if 0 <= level <= threshold)
    if relevant_total == 0:
        return None
    total, nonrelevant_above = 0.0, 0
    for level in ranked:
        if level is None or level < 0:
            continue
        if level > threshold:
            if nonrelevant_above == 0:
                total += 1.0
            else:
                total += 1.0 - min(nonrelevant_above, relevant_total) / min(nonrelevant_total, relevant_total)
        else:
            nonrelevant_above += 1
    return total / relevant_total


def averaged(measure: Callable[[Sequence[float | None]], float | None], query: Query) -> float | None:
    """The mean of `measure` over every order of the query's tied documents."""
    values = [measure([query.levels[i] for i in order]) for order in all_document_orders(query.scores)]
    if values[0] is None:
        return None
    return math.fsum(v for v in values if v is not None) / len(values)


@st.composite
def tied_queries(draw: st.DrawFn, judged: bool) -> tuple[pl.DataFrame, pl.DataFrame | None, dict[str, Query]]:
    """1-3 queries of 1-7 documents with heavy score ties (-0.0 and 0.0 among them), rows of the queries
    interleaved; with judgments, levels -1..3 for some retrieved documents (the others unjudged) and judged
    documents not retrieved."""
    rows: list[tuple[str, str, float, int]] = []
    judgments: list[tuple[str, str, int]] = []
    queries: dict[str, Query] = {}
    for q in range(draw(st.integers(1, 3))):
        query = f"q{q}"
        size = draw(st.integers(1, 7))
        scores = [draw(st.sampled_from(SCORES)) for _ in range(size)]
        levels: list[int | None] = [draw(st.integers(0, 3)) for _ in range(size)]
        if judged:
            levels = [draw(st.one_of(st.none(), st.integers(-1, 3))) for _ in range(size)]
            extra = draw(st.lists(st.integers(-1, 3), max_size=3))
            judgments += [(query, f"d{i}", level) for i, level in enumerate(levels) if level is not None]
            judgments += [(query, f"x{i}", level) for i, level in enumerate(extra)]
            every_level = [level for level in levels if level is not None] + extra
            queries[query] = Query(
                [None if level is None or level < 0 else float(level) for level in levels],
                scores,
                [float(level) for level in every_level if level >= 0],
            )
        else:
            in_frame = [float(level) for level in levels if level is not None]
            queries[query] = Query(list(in_frame), scores, in_frame)
        rows += [(query, f"d{i}", scores[i], levels[i] if levels[i] is not None else 0) for i in range(size)]
    order = draw(st.permutations(range(len(rows))))
    run = pl.DataFrame([rows[i] for i in order], schema=["query", "doc", "score", "relevance"], orient="row")
    if not judged:
        return run, None, queries
    qrels = pl.DataFrame(judgments, schema={"query": pl.String, "doc": pl.String, "relevance": pl.Int64}, orient="row")
    return run.drop("relevance"), qrels, queries


def reference_values(
    queries: dict[str, Query], gain: Any, threshold: float, ties: str
) -> dict[str, dict[str, float | None]]:
    """Per measure and query: the reference's mean over every tied order (ties="average"), or its value in
    trec_eval's order (ties="doc": tied documents by descending doc id)."""
    values: dict[str, dict[str, float | None]] = {"ndcg_rel": {}, "bpref": {}}
    for name, query in queries.items():
        measures = {
            "ndcg_rel": lambda ranked, query=query: ndcg_rel_of(ranked, query, gain),
            "bpref": lambda ranked, query=query: bpref_of(ranked, query, threshold),
        }
        for measure, of in measures.items():
            if ties == "average":
                values[measure][name] = averaged(of, query)
            else:
                doc = [f"d{i}" for i in range(len(query.scores))]
                order = deterministic_order([0.0] * len(doc), query.scores, doc, "doc")
                values[measure][name] = of([query.levels[i] for i in order])
    return values


@pytest.mark.parametrize("ties", ["average", "doc"])
@pytest.mark.parametrize("judged", [False, True], ids=["in-frame relevance", "judgments"])
@SETTINGS
@given(data=st.data())
def test_ndcg_rel_bpref_and_gm_bpref_equal_the_mean_over_every_tied_order(
    data: st.DataObject, judged: bool, ties: str
) -> None:
    run, qrels, queries = data.draw(tied_queries(judged))
    gain = data.draw(st.sampled_from(GAINS))
    threshold = data.draw(st.sampled_from([0.0, 1.5]))
    engine = Engine(data.draw(st.sampled_from(["eager", "lazy-streaming"])))
    exact_sums = data.draw(st.booleans())
    # ndcg_rel's shares are ratios of DCGs: the same in any base, also below 1, where every discount is negative
    log_base = data.draw(st.sampled_from([2.0, 10.0, 0.5]))
    result = engine(
        run,
        "evaluate",
        ["ndcg_rel", "bpref", "gm_bpref"],
        doc="doc",
        qrels=qrels,
        ties=ties,
        gain=gain,
        threshold=threshold,
        no_relevant=None,
        exact_sums=exact_sums,
        log_base=log_base,
    )
    expected = reference_values(queries, gain, threshold, ties)
    for row in result.iter_rows(named=True):
        for measure in ("ndcg_rel", "bpref"):
            want = expected[measure][row["query"]]
            assert row[measure] == (None if want is None else pytest.approx(want, rel=1e-12, abs=1e-14)), (
                measure,
                row,
            )
        assert row["gm_bpref"] == row["bpref"]  # per query, gm_bpref is bpref; its mean is geometric


def test_bpref_of_a_tie_block_counts_its_non_relevant_rows_before_a_relevant_one_uniformly() -> None:
    """By hand: R = 2 relevant, N = 3 judged non-relevant, one query, no judgments apart from its rows.  Order:
    a non-relevant row alone, then a tie block of a relevant row and two non-relevant rows, then a relevant row
    alone.  In the block, the relevant row has 0, 1 or 2 of the block's non-relevant rows before it, each with
    probability 1/3, so 1, 2 or 3 above it in all: 1 - min(n, 2) / 2 is 1/2, 0, 0.  The last relevant row has 3
    above it: 0.  bpref = (1/3 x 1/2 + 0) / 2 = 1/12."""
    run = pl.DataFrame(
        {
            "query": ["q"] * 5,
            "doc": ["a", "b", "c", "d", "e"],
            "score": [3.0, 2.0, 2.0, 2.0, 1.0],
            "relevance": [0, 1, 0, 0, 1],
        }
    )
    result = run.rank_metrics.evaluate(["bpref", "gm_bpref"], doc="doc", ties="average")
    assert result.row(0) == ("q", pytest.approx(1 / 12, rel=1e-15), pytest.approx(1 / 12, rel=1e-15))


def test_bpref_and_ndcg_rel_of_one_large_tie_block() -> None:
    """60 rows all tied, 7 relevant of gain 1 (too many orders to enumerate).  bpref: R = 7, N = 53; a relevant
    row has X of the 53 non-relevant rows before it, X uniform on 0..53 (its place among them and itself is
    uniform), so it adds the mean of 1 - min(X, 7) / 7, sum over x = 0..6 of (1 - x/7) / 54 = 4 / 54: bpref =
    4/54.  ndcg_rel, by pairs of positions: position p holds a relevant row with probability 7/60, positions q < p
    both relevant with probability 7 x 6 / (60 x 59), so the expected sum of shares is sum_p [7/60 d_p + 42/3540
    sum_{q<p} d_q] / I_p, I_p the ideal DCG of min(p, 7) ones, over P = 7."""
    n, relevant = 60, 7
    run = pl.DataFrame(
        {
            "query": ["q"] * n,
            "doc": [f"d{i}" for i in range(n)],
            "score": [1.0] * n,
            "relevance": [1 if i % 9 == 0 else 0 for i in range(n)],
        }
    )
    assert run["relevance"].sum() == relevant
    discount = [1 / math.log2(p + 1) for p in range(1, n + 1)]
    ideal = [math.fsum(discount[: min(p, relevant)]) for p in range(1, n + 1)]
    both = relevant * (relevant - 1) / (n * (n - 1))
    shares = math.fsum((relevant / n * discount[p] + both * math.fsum(discount[:p])) / ideal[p] for p in range(n))
    result = run.rank_metrics.evaluate(["bpref", "ndcg_rel"], doc="doc", ties="average")
    assert result["bpref"].item() == pytest.approx(4 / 54, rel=1e-14)
    assert result["ndcg_rel"].item() == pytest.approx(shares / relevant, rel=1e-12)


def test_ndcg_rel_of_a_tie_block_averages_each_share_over_the_positions() -> None:
    """By hand: gains 1 and 0 tied at positions 1-2, then gain 2 alone at 3 (P = 2; the ideal 2, 1: I_1 = 2,
    I_2 = I_3 = 2 + 1/log2(3)).  Order 1, 0: the shares 1 / 2 and (1 + 2/2) / I_3; order 0, 1: 1/log2(3) / I_2
    and (1/log2(3) + 1) / I_3.  ndcg_rel is the mean of the two orders' sums over P."""
    run = pl.DataFrame({"query": ["q"] * 3, "doc": ["a", "b", "c"], "score": [1.0, 1.0, 0.0], "relevance": [1, 0, 2]})
    ideal = 2 + 1 / math.log2(3)
    first = 1 / 2 + (1 + 1) / ideal
    second = (1 / math.log2(3)) / ideal + (1 / math.log2(3) + 1) / ideal
    expected = (first + second) / 2 / 2
    value = run.rank_metrics.evaluate("ndcg_rel", doc="doc", ties="average")["ndcg_rel"].item()
    assert value == pytest.approx(expected, rel=1e-15)


def test_ndcg_rel_under_ties_average_refuses_a_negative_gain_in_a_query_holding_a_tie() -> None:
    """trec_eval floors a sum of shares that is not positive at 0: with a negative gain the floor may act in
    some orders and not in others, and the expectation is no longer a sum over tie blocks.  A query in no tie
    has one order: its value is the deterministic one."""
    mapping = {0: -1.0, 1: 1.0, 2: 3.0}
    run = pl.DataFrame(
        {
            "query": ["t", "t", "t", "u", "u"],
            "doc": ["a", "b", "c", "a", "b"],
            "score": [2.0, 1.0, 1.0, 2.0, 1.0],
            "relevance": [1, 2, 0, 0, 2],
        }
    )
    message = (
        "ndcg_rel with ties='average': query 't' holds tied documents and retrieves a document of negative gain "
        "-1.0, and with one trec_eval's floor"
    )
    with pytest.raises(ValueError, match=message):
        run.rank_metrics.evaluate("ndcg_rel", doc="doc", ties="average", gain=mapping)
    untied = run.filter(pl.col("query") == "u")
    averaged = untied.rank_metrics.evaluate("ndcg_rel", doc="doc", ties="average", gain=mapping)
    assert averaged.equals(untied.rank_metrics.evaluate("ndcg_rel", doc="doc", ties="doc", gain=mapping))
