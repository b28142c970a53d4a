"""The plan's quantity registry (`_plan/registry.py`): one `QuantityPlan` per shared quantity, and every measure
declares the quantities that those it needs read (a measure needing the ideal DCG reads the gain), at every
option, cut-off and recall level the registry's own examples take."""

from __future__ import annotations

import pytest

from lodestar_polars._plan import registry
from lodestar_polars.measures._base import Quantity
from lodestar_polars.measures._registry import REGISTRY


def test_every_quantity_has_one_plan() -> None:
    assert [plan.quantity for plan in registry.QUANTITY_PLANS].count(Quantity.GAIN) == 1
    assert {plan.quantity for plan in registry.QUANTITY_PLANS} == set(Quantity)
    assert len(registry.QUANTITY_PLANS) == len(Quantity)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_a_measure_declares_what_its_quantities_read(name: str) -> None:
    definition = REGISTRY[name].at(0.5).configured(REGISTRY[name].example_options)
    declared = definition.quantities
    missing = registry.reads_closed(declared) - declared
    assert not missing, f"{name} needs {sorted(q.name for q in declared)}, which read {sorted(q.name for q in missing)}"


def test_reads_closed_follows_reads_transitively() -> None:
    """By hand: the ideal DCG reads the gain; the query totals read the relevant flag; the gain reads nothing."""
    assert registry.reads_closed(frozenset({Quantity.IDEAL_DCG})) == {Quantity.IDEAL_DCG, Quantity.GAIN}
    assert registry.reads_closed(frozenset({Quantity.QUERY_TOTALS})) == {Quantity.QUERY_TOTALS, Quantity.RELEVANT}
    assert registry.reads_closed(frozenset({Quantity.GAIN})) == {Quantity.GAIN}
