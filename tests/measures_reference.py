"""A plain-Python reference for the ranking measures of one query, written from their definitions.

It shares no code with the package (nor with `tests/reference.py`).  One query is given as parallel lists
(relevance, score, optional doc id); a document is *relevant* when its relevance is above `threshold`.

Definitions (positions are 1-based, the list sorted by descending score, ties broken by the tie mode):

- precision@k = (relevant documents in the top k) / k, dividing by k even when the list is shorter
  (trec_eval `P_k`, ranx `precision@k`); without k it divides by the list length (ranx `precision`).
- recall@k = (relevant documents in the top k) / R, R the query's relevant count: counted from the list, or
  given by the caller (`relevant_count`) when judgments supply it (trec_eval `recall_k`, ranx `recall@k`).
- average precision (AP, AP@k) = sum over the relevant documents at positions p <= k of
  (relevant documents in the top p) / p, divided by R (trec_eval `map` / `map_cut_k`; ranx `map@k` divides by
  R as well, see `tests/test_measures_reference.py`).
- success@k = 1 when a relevant document is in the top k (trec_eval `success_k`, ranx `hit_rate@k`).
- reciprocal rank = 1 / position of the first relevant document in the top k, 0 when there is none.
- DCG@k = sum over p <= k of gain / log2(p + 1); NDCG = DCG / ideal DCG (the ideal from `ideal_relevance`,
  the query's judgments, when given, else from the list itself).

Recall and AP follow the `no_relevant` policy when R = 0 (a float, None, or "error": ValueError); NDCG
follows it when the ideal DCG is 0.

Tie modes: "doc" (doc id compared as text, descending, as trec_eval compares docnos with strcmp),
"input" (earlier row first), "reverse" (later row first), "optimistic" (better documents first),
"pessimistic" (worse documents first), and "average": the exact expectation over every order of the tied
documents, each order equally likely, computed by brute force.  The enumeration runs over the distinct
arrangements of the per-document values the measure reads (the relevant flag, or the gain) within each tie
block: every distinct arrangement stands for the same number of document orders (the product of the
factorials of the value multiplicities), so their plain mean is the mean over all orders.
`all_document_orders` enumerates the orders themselves, to check that shortcut on small blocks.

The `*_closed_form` functions are the per-tie-block formulas for the tie-averaged measures (McSherry & Najork,
ECIR 2008, derived again here); the tests check them against the enumeration.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from fractions import Fraction
from typing import Literal, TypeVar

T = TypeVar("T")
Number = Fraction | float
NoRelevant = float | None | Literal["error"]

TIE_MODES = ("average", "doc", "input", "reverse", "optimistic", "pessimistic")
DETERMINISTIC_TIE_MODES = ("doc", "input", "reverse", "optimistic", "pessimistic")


# ------------------------------------------------------------------------------------------------------
# orders


def deterministic_order(
    value: Sequence[Number], score: Sequence[float], doc: Sequence[str] | None, ties: str
) -> list[int]:
    """Row indices by descending score, equal scores ordered by the tie mode.

    `value` is what "optimistic" / "pessimistic" rank by within a tie (the relevant flag or the gain).
    """
    rows = list(range(len(score)))
    if ties == "input":
        return sorted(rows, key=lambda i: (-score[i], i))
    if ties == "reverse":
        return sorted(rows, key=lambda i: (-score[i], -i))
    if ties == "optimistic":
        return sorted(rows, key=lambda i: (-score[i], -value[i], i))
    if ties == "pessimistic":
        return sorted(rows, key=lambda i: (-score[i], value[i], i))
    if ties == "doc":
        if doc is None:
            msg = "ties='doc' needs doc ids"
            raise ValueError(msg)
        if not all(isinstance(d, str) for d in doc):
            msg = "doc ids must be strings: trec_eval compares them as text"
            raise TypeError(msg)
        if len(set(doc)) != len(doc):
            msg = "duplicate doc ids"
            raise ValueError(msg)
        by_doc = sorted(rows, key=lambda i: doc[i], reverse=True)
        return sorted(by_doc, key=lambda i: -score[i])  # stable: doc descending within equal scores
    msg = f"unknown tie mode {ties!r}"
    raise ValueError(msg)


def tie_blocks(score: Sequence[float]) -> list[list[int]]:
    """Row indices grouped into blocks of equal score, blocks by descending score (-0.0 ties 0.0)."""
    rows = sorted(range(len(score)), key=lambda i: -score[i])
    return [list(block) for _, block in itertools.groupby(rows, key=lambda i: score[i])]


def distinct_arrangements(values: Sequence[T]) -> Iterator[tuple[T, ...]]:
    """Every distinct ordering of a multiset (each once), by recursion over the remaining counts."""
    counts = Counter(values)
    keys = sorted(counts, key=repr)
    size = len(values)

    def build(prefix: list[T]) -> Iterator[tuple[T, ...]]:
        if len(prefix) == size:
            yield tuple(prefix)
            return
        for key in keys:
            if counts[key]:
                counts[key] -= 1
                prefix.append(key)
                yield from build(prefix)
                prefix.pop()
                counts[key] += 1

    yield from build([])


def tied_sequences(value: Sequence[T], score: Sequence[float]) -> Iterator[tuple[T, ...]]:
    """The value sequences of every distinct order of the tied documents (equally weighted, see module doc)."""
    blocks = [[value[i] for i in block] for block in tie_blocks(score)]
    for choice in itertools.product(*(list(distinct_arrangements(block)) for block in blocks)):
        yield tuple(v for arrangement in choice for v in arrangement)


def all_document_orders(score: Sequence[float]) -> Iterator[list[int]]:
    """Every order of the rows by descending score: each tie block in every one of its permutations."""
    blocks = tie_blocks(score)
    for choice in itertools.product(*(itertools.permutations(block) for block in blocks)):
        yield [i for block in choice for i in block]


def mean_over_ties(measure: Callable[[Sequence[T]], Number], value: Sequence[T], score: Sequence[float]) -> Number:
    """The exact mean of `measure(value sequence in rank order)` over every order of the tied documents."""
    total: Number = Fraction(0)
    count = 0
    for sequence in tied_sequences(value, score):
        total += measure(sequence)
        count += 1
    return total / count


def evaluate(
    measure: Callable[[Sequence[T]], Number],
    value: Sequence[T],
    score: Sequence[float],
    ties: str,
    doc: Sequence[str] | None,
) -> Number:
    """`measure` of the ranked value sequence under a tie mode (the expectation for "average")."""
    if len(value) != len(score) or (doc is not None and len(doc) != len(score)):
        msg = "relevance, score and doc must have the same length"
        raise ValueError(msg)
    if any(math.isnan(s) for s in score):
        msg = "NaN score"
        raise ValueError(msg)
    if ties == "average":
        return mean_over_ties(measure, value, score)
    order = deterministic_order(value, score, doc, ties)  # type: ignore[arg-type]  # flags and gains compare
    return measure([value[i] for i in order])


# ------------------------------------------------------------------------------------------------------
# binary measures on a ranked sequence of relevant flags (0 / 1 ints)


def flags(relevance: Sequence[float], threshold: float) -> list[int]:
    return [1 if r > threshold else 0 for r in relevance]


def _cut(length: int, k: int | None) -> int:
    if k is not None and k < 1:
        msg = f"k must be a positive int or None, got {k}"
        raise ValueError(msg)
    return length if k is None else min(k, length)


def hits_at(ranked: Sequence[int], k: int | None) -> int:
    return sum(ranked[: _cut(len(ranked), k)])


def precision_of(ranked: Sequence[int], k: int | None) -> Fraction:
    denominator = len(ranked) if k is None else k
    return Fraction(hits_at(ranked, k), denominator)


def recall_of(ranked: Sequence[int], k: int | None, relevant_count: int) -> Fraction:
    return Fraction(hits_at(ranked, k), relevant_count)


def average_precision_of(ranked: Sequence[int], k: int | None, relevant_count: int) -> Fraction:
    total = Fraction(0)
    seen = 0
    for position, flag in enumerate(ranked[: _cut(len(ranked), k)], start=1):
        if flag:
            seen += 1
            total += Fraction(seen, position)
    return total / relevant_count


def success_of(ranked: Sequence[int], k: int | None) -> Fraction:
    return Fraction(1 if hits_at(ranked, k) else 0)


def reciprocal_rank_of(ranked: Sequence[int], k: int | None) -> Fraction:
    for position, flag in enumerate(ranked[: _cut(len(ranked), k)], start=1):
        if flag:
            return Fraction(1, position)
    return Fraction(0)


def _no_relevant(policy: NoRelevant, measure: str) -> float | None:
    if policy == "error":
        msg = f"{measure}: the query has no relevant document"
        raise ValueError(msg)
    return policy


def _relevant_count(relevant: Sequence[int], relevant_count: int | None) -> int:
    if relevant_count is None:
        return sum(relevant)
    if relevant_count < sum(relevant):
        msg = f"relevant_count {relevant_count} is below the {sum(relevant)} relevant documents of the list"
        raise ValueError(msg)
    return relevant_count


def precision(
    relevance: Sequence[float],
    score: Sequence[float],
    k: int | None,
    ties: str = "average",
    doc: Sequence[str] | None = None,
    threshold: float = 0.0,
) -> float:
    relevant = flags(relevance, threshold)
    return float(evaluate(lambda ranked: precision_of(ranked, k), relevant, score, ties, doc))


def recall(
    relevance: Sequence[float],
    score: Sequence[float],
    k: int | None,
    ties: str = "average",
    doc: Sequence[str] | None = None,
    threshold: float = 0.0,
    relevant_count: int | None = None,
    no_relevant: NoRelevant = 0.0,
) -> float | None:
    relevant = flags(relevance, threshold)
    count = _relevant_count(relevant, relevant_count)
    if count == 0:
        return _no_relevant(no_relevant, "recall")
    return float(evaluate(lambda ranked: recall_of(ranked, k, count), relevant, score, ties, doc))


def average_precision(
    relevance: Sequence[float],
    score: Sequence[float],
    k: int | None,
    ties: str = "average",
    doc: Sequence[str] | None = None,
    threshold: float = 0.0,
    relevant_count: int | None = None,
    no_relevant: NoRelevant = 0.0,
) -> float | None:
    relevant = flags(relevance, threshold)
    count = _relevant_count(relevant, relevant_count)
    if count == 0:
        return _no_relevant(no_relevant, "average_precision")
    return float(evaluate(lambda ranked: average_precision_of(ranked, k, count), relevant, score, ties, doc))


def success(
    relevance: Sequence[float],
    score: Sequence[float],
    k: int | None,
    ties: str = "average",
    doc: Sequence[str] | None = None,
    threshold: float = 0.0,
) -> float:
    relevant = flags(relevance, threshold)
    return float(evaluate(lambda ranked: success_of(ranked, k), relevant, score, ties, doc))


def reciprocal_rank(
    relevance: Sequence[float],
    score: Sequence[float],
    k: int | None,
    ties: str = "average",
    doc: Sequence[str] | None = None,
    threshold: float = 0.0,
) -> float:
    relevant = flags(relevance, threshold)
    return float(evaluate(lambda ranked: reciprocal_rank_of(ranked, k), relevant, score, ties, doc))


# ------------------------------------------------------------------------------------------------------
# graded measures


def gain_of(relevance: float, gain: str) -> float:
    if gain == "linear":
        return float(relevance)
    if gain == "exponential":
        return float(2.0 ** float(relevance)) - 1.0
    msg = f"unknown gain {gain!r}"
    raise ValueError(msg)


def dcg_of(ranked_gain: Sequence[float], k: int | None, log_base: float = 2.0) -> float:
    return sum(
        g / (math.log(p + 1) / math.log(log_base))
        for p, g in enumerate(ranked_gain[: _cut(len(ranked_gain), k)], start=1)
    )


def dcg(
    relevance: Sequence[float],
    score: Sequence[float],
    k: int | None,
    ties: str = "average",
    doc: Sequence[str] | None = None,
    gain: str = "linear",
    log_base: float = 2.0,
) -> float:
    gains = [gain_of(r, gain) for r in relevance]
    return float(evaluate(lambda ranked: dcg_of(ranked, k, log_base), gains, score, ties, doc))


def ndcg(
    relevance: Sequence[float],
    score: Sequence[float],
    k: int | None,
    ties: str = "average",
    doc: Sequence[str] | None = None,
    gain: str = "linear",
    ideal_relevance: Sequence[float] | None = None,
    no_relevant: NoRelevant = 0.0,
) -> float | None:
    """NDCG@k; the ideal DCG from `ideal_relevance` (all judged documents) when given, else from the list."""
    ideal_gains = sorted(gain_of(r, gain) for r in (relevance if ideal_relevance is None else ideal_relevance))
    ideal = dcg_of(ideal_gains[::-1], k)
    if ideal == 0:
        return _no_relevant(no_relevant, "ndcg")
    return dcg(relevance, score, k, ties, doc, gain) / ideal


# ------------------------------------------------------------------------------------------------------
# closed forms of the tie-averaged binary measures, per tie block
#
# A query's list sorted by descending score is a sequence of tie blocks.  For one block: s documents rank
# before it (it covers positions s+1 .. s+n), it holds n documents of which r are relevant, and C relevant
# documents rank before it.  For a cut-off k the block has m = clamp(k - s, 0, n) positions in the top k
# (m = n without a cut-off).  Every order of the block is equally likely and the blocks are independent.
#
# - Expected relevant documents of the block in the top k: m r / n (hypergeometric mean), so
#   E[P@k] = sum_b m_b r_b / n_b / k  (k -> list length without a cut-off),  E[R@k] = sum_b m_b r_b / n_b / R.
# - success@k: no relevant document in the top k needs each block to put only non-relevant documents in its
#   m positions, probability binom(n - r, m) / binom(n, m), independent across blocks:
#   E[success@k] = 1 - prod_b binom(n_b - r_b, m_b) / binom(n_b, m_b).
# - AP@k = (1/R) sum_{p <= k} rel(p) hits(p) / p with hits(p) = sum_{q <= p} rel(q).  At offset i of the
#   block (p = s + i): E[rel(p) hits(p)] = E[rel(p)] (1 + C) + (i - 1) E[rel(p) rel(q)] for q another offset of
#   the block before i, i.e. (r/n)(C + 1) + (i - 1) r(r - 1) / (n(n - 1)).  Summed over i = 1..m with weight
#   1/(s+i), using sum 1/(s+i) = H(s+m) - H(s) = dH and sum (i-1)/(s+i) = m - (s+1) dH:
#   block term = (r/n)(C + 1) dH + r(r-1)/(n(n-1)) (m - (s+1) dH)    (the second term is 0 when n = 1),
#   E[AP@k] = (1/R) sum_b block term.


def harmonic(n: int) -> Fraction:
    return sum((Fraction(1, i) for i in range(1, n + 1)), Fraction(0))


def positions_in_top_k(start: int, size: int, k: int | None) -> int:
    """m: how many of the block's positions start+1 .. start+size lie in the top k."""
    return size if k is None else max(0, min(size, k - start))


def expected_block_hits_closed_form(start: int, size: int, relevant: int, k: int | None) -> Fraction:
    return Fraction(positions_in_top_k(start, size, k) * relevant, size)


def expected_block_miss_closed_form(start: int, size: int, relevant: int, k: int | None) -> Fraction:
    """Probability that the block puts no relevant document in the top k."""
    m = positions_in_top_k(start, size, k)
    return Fraction(math.comb(size - relevant, m), math.comb(size, m))


def expected_block_average_precision_closed_form(
    start: int, size: int, relevant: int, relevant_before: int, k: int | None
) -> Fraction:
    """The block's term of sum_{p <= k} rel(p) hits(p) / p (divide the sum of the terms by R)."""
    m = positions_in_top_k(start, size, k)
    d_h = harmonic(start + m) - harmonic(start)
    term = Fraction(relevant, size) * (relevant_before + 1) * d_h
    if size > 1:
        term += Fraction(relevant * (relevant - 1), size * (size - 1)) * (m - (start + 1) * d_h)
    return term


def block_statistics(relevant: Sequence[int], score: Sequence[float]) -> list[tuple[int, int, int, int]]:
    """(start s, size n, relevant r, relevant before C) of each tie block, in rank order."""
    statistics = []
    start = before = 0
    for block in tie_blocks(score):
        r = sum(relevant[i] for i in block)
        statistics.append((start, len(block), r, before))
        start += len(block)
        before += r
    return statistics


def expected_precision_closed_form(relevant: Sequence[int], score: Sequence[float], k: int | None) -> Fraction:
    hits = sum(
        (expected_block_hits_closed_form(s, n, r, k) for s, n, r, _ in block_statistics(relevant, score)),
        Fraction(0),
    )
    return hits / (len(score) if k is None else k)


def expected_recall_closed_form(
    relevant: Sequence[int], score: Sequence[float], k: int | None, relevant_count: int
) -> Fraction:
    hits = sum(
        (expected_block_hits_closed_form(s, n, r, k) for s, n, r, _ in block_statistics(relevant, score)),
        Fraction(0),
    )
    return hits / relevant_count


def expected_success_closed_form(relevant: Sequence[int], score: Sequence[float], k: int | None) -> Fraction:
    miss = Fraction(1)
    for s, n, r, _ in block_statistics(relevant, score):
        miss *= expected_block_miss_closed_form(s, n, r, k)
    return 1 - miss


def expected_average_precision_closed_form(
    relevant: Sequence[int], score: Sequence[float], k: int | None, relevant_count: int
) -> Fraction:
    total = sum(
        (
            expected_block_average_precision_closed_form(s, n, r, c, k)
            for s, n, r, c in block_statistics(relevant, score)
        ),
        Fraction(0),
    )
    return total / relevant_count
