"""ERR's cascade quantities (`Quantity.CONTINUATION`, `Quantity.IDEAL_ERR`), read by err, nerr and the C/W/L
measures that need them: each row's continuation (the product, over the rows ranked above it, of 1 - their
stopping probability) and the ideal ERR@k (the rows by descending grade, each stopping the user with its
probability times the continuation above it, over its position).  The plan computes them where a call needs
them (`_plan/registry.py`), per its keys; the maths is here, once."""

from __future__ import annotations

import polars as pl

from .._checks import DataCheck, least_failing, message
from .._exact_sum import sum_parts
from ._base import ERR_MAX_GRADE, PREFIX, RELEVANCE, cut, ideal_err, stopping_probability

# per row (`Quantity.IDEAL_ERR`): its position by descending grade, and its continuation in that order
IDEAL_ERR_POSITION = f"{PREFIX}err_ideal_position"
IDEAL_ERR_CONTINUATION = f"{PREFIX}err_ideal_continuation"


def continuation(keys: list[str], position: str) -> pl.Expr:
    """ERR's product over the rows ranked above of 1 - their stopping probability, in `position` order."""
    kept = 1.0 - stopping_probability(pl.col(RELEVANCE))
    return kept.cum_prod().shift(1, fill_value=1.0).over(keys, order_by=position)


def with_ideal_order(rows: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    """Each row's position by descending grade and its continuation in that order (the ideal ERR's)."""
    position = pl.col(RELEVANCE).cast(pl.Float64).rank("ordinal", descending=True).over(keys)
    rows = rows.with_columns(position.alias(IDEAL_ERR_POSITION))
    return rows.with_columns(continuation(keys, IDEAL_ERR_POSITION).alias(IDEAL_ERR_CONTINUATION))


def ideal_err_sums(cutoffs: list[int | None], exact: bool) -> list[pl.Expr]:
    """The per-query aggregations of the ideal ERR@k for each cut-off (rows from `with_ideal_order`)."""
    position = pl.col(IDEAL_ERR_POSITION)
    found = stopping_probability(pl.col(RELEVANCE)) * pl.col(IDEAL_ERR_CONTINUATION) / position.cast(pl.Float64)
    return [
        part
        for cutoff in cutoffs
        for part in sum_parts(cut(found, IDEAL_ERR_POSITION, cutoff), ideal_err(cutoff), exact)
    ]


def judged_grade_check(level: pl.Expr) -> DataCheck:
    """With judgments, a judged level (`level`: the qrels' raw relevance) above ERR's largest grade: its stopping
    probability would exceed 1 (without judgments the measures' own row checks refuse such a relevance)."""
    above = level.cast(pl.Float64) > ERR_MAX_GRADE
    return DataCheck(
        f"{PREFIX}qrels_err_grade",
        above.sum(),
        message(
            ValueError,
            f"qrels relevance {{value}} (query {{query}}) is above ERR's largest grade {ERR_MAX_GRADE}: "
            f"its stopping probability (2**g - 1) / 2**{ERR_MAX_GRADE} must lie in [0, 1).",
        ),
        least_failing(level, above),
    )
