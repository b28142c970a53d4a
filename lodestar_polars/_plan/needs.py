"""What a call's measures need: their definitions from the registry, the shared quantities they declare
(`_needs`, per cut-off: `_cutoffs_needing`), the union of their per-query terms (`_terms`), the `Context` each
measure's expressions read, and which positions the counting measures read under tie bounds."""

from __future__ import annotations

import functools
import weakref

from .._spec import Measure, Spec
from ..measures._base import (
    POSITION,
    RELEVANT_POSITION,
    Context,
    Definition,
    Quantity,
    Term,
    cut_at,
)
from ..measures._registry import REGISTRY

# --- the measures of a call ----------------------------------------------------------------------------------


# what the builder asks of a call's measures over and over, built once per measure or per call (a plan of
# trec_eval's all_trec asked for some 9,000 definitions and 4,000 quantity sets: half its building time)
_CALLS: weakref.WeakKeyDictionary[Spec, tuple[list[tuple[Definition, Measure]], frozenset[Quantity]]] = (
    weakref.WeakKeyDictionary()
)


def _measures_of(spec: Spec) -> tuple[list[tuple[Definition, Measure]], frozenset[Quantity]]:
    """The call's (definition, measure) pairs and the quantities they need, built once per call."""
    known = _CALLS.get(spec)
    if known is None:
        definitions = [(_definition(m), m) for m in spec.measures]
        quantities = frozenset(q for definition, _ in definitions for q in definition.quantities)
        known = _CALLS[spec] = (definitions, quantities)
    return known


def _definitions(spec: Spec) -> list[tuple[Definition, Measure]]:
    return _measures_of(spec)[0]


@functools.lru_cache(maxsize=4096)
def _definition(measure: Measure) -> Definition:
    """A measure's definition at its level and options (`at` and `configured` make new frozen definitions)."""
    return REGISTRY[measure.kind].at(measure.level).configured(dict(measure.options))


def _needs(spec: Spec, quantity: Quantity) -> bool:
    """Whether a measure of the call needs a shared quantity."""
    return quantity in _measures_of(spec)[1]


def _cutoffs_needing(spec: Spec, quantity: Quantity) -> list[int | None]:
    """The cut-offs (as `cut_at` takes them) of the measures that need a per-cut-off quantity."""
    return list(dict.fromkeys(cut_at(m.cutoff) for d, m in _definitions(spec) if quantity in d.quantities))


def _context(spec: Spec, judged: bool) -> Context:
    return Context(
        spec.ties,
        judged,
        _threshold_position(spec),
        spec.threshold,
        spec.no_relevant,
        spec.relevance.name,
        spec.exact_sums,
    )


# --- positions and discounts ---------------------------------------------------------------------------------


def _splits_positions(spec: Spec) -> bool:
    """Tie bounds are taken per measure: with ties='optimistic' or 'pessimistic', the measures that read the
    gain (best order: most gainful first) and those that count relevant rows (relevant first) may need two
    different orders of a tie block, so the latter get positions of their own (`RELEVANT_POSITION`)."""
    bounds = spec.ties in ("optimistic", "pessimistic")
    return bounds and _needs(spec, Quantity.GAIN) and _needs(spec, Quantity.RELEVANT)


def _threshold_position(spec: Spec) -> str:
    """The position column the measures counting relevant rows read."""
    return RELEVANT_POSITION if _splits_positions(spec) else POSITION


# --- per-query and per-block terms ---------------------------------------------------------------------------


Terms = dict[str, Term]


def _terms(spec: Spec, judged: bool) -> Terms:
    """The per-query terms of every measure of the call, by column name: a term two measures share (DCG@k of
    ndcg and dcg, hits@k of precision and recall, the first relevant position) is summed once."""
    context = _context(spec, judged)
    terms: Terms = {}
    for measure in spec.measures:
        for name, term in _measure_terms(measure, context).items():
            terms.setdefault(name, term)
    return terms


@functools.lru_cache(maxsize=4096)
def _measure_terms(measure: Measure, context: Context) -> Terms:
    """One measure's terms in a context, built once (a plan asks for them several times; read only)."""
    return _definition(measure).terms(context, cut_at(measure.cutoff))
