"""A float sum whose result does not depend on the order of the rows: with `exact_sums=True` (always in the
command line's trec_eval mode) every per-query sum, tie-block sum and mean over queries of the package goes
through `sum_parts` and `with_exact_totals` (or `exact_sum` in a window), so that shuffling the run's or the
judgments' rows, or the streaming engine dealing them to its threads in another order, cannot change the last
bit of a value (or flip a digit trec_eval's mode prints at a rounding tie).  Without it, `sum_parts` is the
plain float sum, in arrival order.

A float sum (`Expr.sum`) adds in whatever order the rows arrive; float addition is not associative, so the
last bit depends on that order.  Integer addition is: each value x is split exactly into a part on a grid of
2**-40 and the rest (|rest| <= 2**-41, put on a grid of 2**-120), both parts are summed as Int128 integers,
and the two totals are turned back into one float.  Splitting is exact (x minus its nearest multiple of 2**-40
is a float: Sterbenz's lemma), so the result is the exact sum of the values, to 2**-120, correctly rounded
(up to a rare double rounding of the last step): the same for every order of the same rows.

Values of magnitude 2**60 (1.2e18) and more, NaN and infinities do not fit the grids: they are added as a plain
float sum (NaN and infinity propagating as they would), order-dependent among themselves only.  The integer
totals are exact while a group's sum stays below 2**87 (Int128 sums wrap, so only the total must fit: more
than 10**8 values of 1e18 in one query would not).  An all-null column sums to 0, as `Expr.sum` does.  Every
step is an elementwise expression or an integer or float sum, so it stays native in the streaming engine, in a
group-by and in a window.
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

# the grid of a value's leading part, and the grid of its rest (|rest| <= 2**-41 < 2**79 steps of 2**-120)
_LEADING_STEP = 2.0**-40
_REST_STEP = 2.0**-120
# the values on the grids: below 2**60, 2**100 steps of 2**-40 (an Int128 holds 2**127)
_EXACT_BELOW = 2.0**60
# the three partial totals of a sum `name`, as columns of a group-by's output (`exact_sum_parts`)
_PARTS = ("__exact_leading", "__exact_rest", "__exact_unfit")


def _partial_sums(value: pl.Expr) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    """The Int128 totals of the values' leading parts and rests, and the float total of the values that do not
    fit the grids (0 when none): plain aggregations, each native in every engine's group-by."""
    x = value.cast(pl.Float64)
    fits = x.abs() < _EXACT_BELOW  # false for NaN and infinities, null for null
    leading = pl.when(fits).then((x / _LEADING_STEP).round())
    rest = pl.when(fits).then(x - leading * _LEADING_STEP)  # exact
    unfit = pl.when(fits).then(0.0).otherwise(x)
    return leading.cast(pl.Int128).sum(), (rest / _REST_STEP).round().cast(pl.Int128).sum(), unfit.sum()


def _total(leading_total: pl.Expr, rest_total: pl.Expr, unfit_total: pl.Expr) -> pl.Expr:
    """One float from the partial totals: the leading total as a float, plus what that float leaves out of it
    (exact while below 2**53 steps) and the rest's total, one rounding of each small part, then of the sum."""
    rounded_leading = leading_total.cast(pl.Float64)
    left_out = (leading_total - rounded_leading.cast(pl.Int128)).cast(pl.Float64) * _LEADING_STEP
    small = left_out + rest_total.cast(pl.Float64) * _REST_STEP
    return rounded_leading * _LEADING_STEP + small + unfit_total


def exact_sum(value: pl.Expr) -> pl.Expr:
    """The sum of `value` (as Float64) over its group or column, independent of the rows' order: the exact sum
    rounded to a float (see the module docstring); one aggregation, for `agg`, `select` or `over`.  In a
    group-by over many rows prefer `exact_sum_parts` and `with_exact_totals`: Polars' in-memory engine computes
    arithmetic between aggregations group by group, the parts as three plain aggregations."""
    return _total(*_partial_sums(value))


def exact_sum_parts(value: pl.Expr, name: str) -> list[pl.Expr]:
    """The aggregations of the exact sum of `value` named `name`, as three partial totals (`name` plus a suffix):
    a group-by computes them, and `with_exact_totals` turns them into the column `name` (partial totals of one
    sum over parts of the rows add up: sum each part column, then take the total)."""
    return [part.alias(f"{name}{suffix}") for part, suffix in zip(_partial_sums(value), _PARTS, strict=True)]


def sum_parts(value: pl.Expr, name: str, exact: bool) -> list[pl.Expr]:
    """The sum of `value` named `name`: exact (`exact_sum_parts`, for `with_exact_totals` to finish) or the plain
    float sum, in whatever order the rows arrive (`exact_sums=False`, the default of the Python API)."""
    return exact_sum_parts(value, name) if exact else [value.sum().alias(name)]


def with_exact_totals(frame: pl.LazyFrame) -> pl.LazyFrame:
    """Every exact sum whose partial totals (`exact_sum_parts`) are columns of `frame`, as one float column
    in their place (reads the schema only)."""
    names = [column[: -len(_PARTS[0])] for column in frame.collect_schema().names() if column.endswith(_PARTS[0])]
    if not names:
        return frame
    totals = [_total(*(pl.col(f"{name}{suffix}") for suffix in _PARTS)).alias(name) for name in names]
    return frame.with_columns(totals).drop(_part_columns(names))


def _part_columns(names: Iterable[str]) -> list[str]:
    return [f"{name}{suffix}" for name in names for suffix in _PARTS]
