"""A plain-Python reference for the metrics, written from the definitions, for the property tests.

Tie-averaged DCG is checked against scikit-learn itself wherever scikit-learn applies (a query with at
least two documents); this reference covers what scikit-learn cannot: single-document queries, the
deterministic tie modes and the `no_relevant` conventions.  It shares no code with the package.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import groupby

import numpy as np
from sklearn.metrics import dcg_score as sk_dcg_score


def gains(relevance: Sequence[float], gain: object) -> list[float]:
    if gain == "linear":
        return [float(r) for r in relevance]
    if gain == "exponential":
        return [2.0 ** float(r) - 1.0 for r in relevance]
    assert isinstance(gain, dict)
    return [float(gain[r]) for r in relevance]


def ordered(gain: Sequence[float], score: Sequence[float], doc: Sequence[str] | None, ties: str) -> list[int]:
    """Row indices (within the query, in input order) sorted by descending score and the tie rule."""
    rows = range(len(score))
    if ties == "input":
        return sorted(rows, key=lambda i: (-score[i], i))
    if ties == "reverse":
        return sorted(rows, key=lambda i: (-score[i], -i))
    if ties == "optimistic":
        return sorted(rows, key=lambda i: (-score[i], -gain[i]))
    if ties == "pessimistic":
        return sorted(rows, key=lambda i: (-score[i], gain[i]))
    if ties == "doc":
        assert doc is not None
        by_doc = sorted(rows, key=lambda i: doc[i], reverse=True)
        return sorted(by_doc, key=lambda i: -score[i])  # stable: doc descending within equal scores
    raise ValueError(ties)


def discount(position: int, log_base: float = 2.0) -> float:
    """1-based position."""
    return 1.0 / (math.log(position + 1) / math.log(log_base))


def dcg(
    gain: Sequence[float],
    score: Sequence[float],
    k: int | None,
    ties: str,
    doc: Sequence[str] | None = None,
    log_base: float = 2.0,
) -> float:
    n = len(score)
    cut = n if k is None else min(k, n)
    if ties == "average":
        total = 0.0
        order = sorted(range(n), key=lambda i: -score[i])
        position = 0
        for _, block in groupby(order, key=lambda i: score[i]):
            members = list(block)
            mean_gain = sum(gain[i] for i in members) / len(members)
            covered = range(position + 1, position + len(members) + 1)
            total += mean_gain * sum(discount(p, log_base) for p in covered if p <= cut)
            position += len(members)
        return total
    order = ordered(gain, score, doc, ties)
    return sum(gain[i] * discount(p, log_base) for p, i in enumerate(order, start=1) if p <= cut)


def ideal_dcg(gain: Sequence[float], k: int | None) -> float:
    best = sorted(gain, reverse=True)
    cut = len(best) if k is None else min(k, len(best))
    return sum(g * discount(p) for p, g in enumerate(best[:cut], start=1))


def ndcg(
    gain: Sequence[float],
    score: Sequence[float],
    k: int | None,
    ties: str,
    doc: Sequence[str] | None = None,
    no_relevant: float | None = 0.0,
) -> float | None:
    ideal = ideal_dcg(gain, k)
    if ideal == 0:
        return no_relevant
    return dcg(gain, score, k, ties, doc) / ideal


def sklearn_dcg(gain: Sequence[float], score: Sequence[float], k: int | None, log_base: float = 2.0) -> float:
    """scikit-learn's tie-averaged DCG of one query (needs two or more documents)."""
    return float(sk_dcg_score(np.asarray([gain]), np.asarray([score], dtype=float), k=k, log_base=log_base))


def weighted_mean(values: Sequence[float | None], weights: Sequence[float] | None) -> float:
    weight_of = [1.0] * len(values) if weights is None else list(weights)
    pairs = [(v, w) for v, w in zip(values, weight_of, strict=True) if v is not None]
    return sum(v * w for v, w in pairs) / sum(w for _, w in pairs)
