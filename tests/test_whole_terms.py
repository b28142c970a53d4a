"""`Term.whole`: with `exact_sums=True` the plan sums a term declared whole as a plain float sum, which is exact in
any order of the rows only when every row's value is a whole number.  Each registered measure's whole terms, in
every tie mode, with and without judgments, with and without a cut-off, evaluated over rows of random plan
columns (whole counts and positions, fractional gains): every value must be an integer.  A term reading a gain
or a discount, wrongly declared whole, fails here."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from lodestar_polars.measures import _base, _unjudged
from lodestar_polars.measures._registry import REGISTRY

ROWS = 300
TIES = ("average", "input", "reverse", "doc", "optimistic", "pessimistic")
# the whole terms the measures declare today: each must be reached at least once (the test is not vacuous)
EXPECTED_MEASURES = {"p", "r", "unj", "judged", "rprec", "rprec_mult", "num_nonrel_judged_ret", "ndcg_rel", "rbp_resid"}


def plan_columns() -> pl.DataFrame:
    """The row columns a whole term may read, as the plan types them, with random values: counts and positions
    whole, the gain fractional."""
    rng = np.random.default_rng(7)
    level = rng.integers(-1, 4, ROWS).astype(float)
    return pl.DataFrame(
        {
            _base.RELEVANT: rng.random(ROWS) < 0.4,
            _base.RELEVANCE: pl.Series(np.where(level < 0, np.nan, level)).fill_nan(None),
            _base.GAIN: rng.random(ROWS) * 3.7,
            _base.POOLED: rng.random(ROWS) < 0.7,
            _base.POSITION: pl.Series(rng.integers(1, 40, ROWS), dtype=pl.UInt32),
            _base.RELEVANT_POSITION: pl.Series(rng.integers(1, 40, ROWS), dtype=pl.UInt32),
            _base.BLOCK_START: pl.Series(rng.integers(0, 39, ROWS), dtype=pl.Int64),
            _base.BLOCK_SIZE: pl.Series(rng.integers(1, 6, ROWS), dtype=pl.UInt32),
            _base.BLOCK_UNJUDGED: pl.Series(rng.integers(0, 6, ROWS), dtype=pl.UInt32),
            _unjudged.BLOCK_UNPOOLED: pl.Series(rng.integers(0, 6, ROWS), dtype=pl.UInt32),
            _base.ROW_RELEVANT_TOTAL: rng.integers(0, 12, ROWS).astype(float),
            _base.ROW_NONRELEVANT_TOTAL: rng.integers(0, 12, ROWS).astype(float),
        }
    )


def whole_terms() -> list[tuple[str, str, pl.Expr]]:
    found = []
    for name, measure in sorted(REGISTRY.items()):
        definition = measure.at(0.5).configured(measure.example_options)
        for ties in TIES:
            for judged in (False, True):
                positions = (
                    (_base.POSITION, _base.RELEVANT_POSITION)
                    if ties in ("optimistic", "pessimistic")
                    else (_base.POSITION,)
                )
                for position in positions:
                    context = _base.Context(ties, judged, position, 0.0, 0.0)
                    for cutoff in (None, 3):
                        for term_name, term in definition.terms(context, cutoff).items():
                            if term.whole:
                                found.append((name, f"{term_name} ({ties}, judged={judged}, k={cutoff})", term.row))
    return found


WHOLE_TERMS = whole_terms()


def test_the_whole_terms_are_reached() -> None:
    assert {name for name, _, _ in WHOLE_TERMS} >= EXPECTED_MEASURES


@pytest.mark.parametrize(("measure", "where", "row"), WHOLE_TERMS, ids=[f"{m}: {w}" for m, w, _ in WHOLE_TERMS])
def test_a_whole_term_is_a_whole_number_on_every_row(measure: str, where: str, row: pl.Expr) -> None:
    frame = plan_columns()
    missing = set(row.meta.root_names()) - set(frame.columns)
    assert not missing, f"{measure} {where} reads {sorted(missing)}: give them values in plan_columns()"
    values = frame.select(row.cast(pl.Float64).alias("value"))["value"]
    assert values.null_count() == 0
    fractional = values.filter(values != values.floor())
    assert fractional.is_empty(), f"{measure} {where}: {fractional.head(3).to_list()} are not whole"
