"""BPM(T)@K, the static Bejewelled Player Model of Zhang et al. (SIGIR 2017), as ir_measures computes
BPM(T=...,max_rel=...)@K through cwl_eval: a C/W/L measure (`_cwl`) whose user reads on until the scaled gain
gathered reaches T or K documents are read, whichever comes first.  With s that stopping position (positions
past the end of the list hold gain 0, so s = K when T is never reached),

    BPM(T)@K = (sum over p <= s of g'(p)) / s,

the gain per document read.  A row counts when the gain gathered above it is below T (the running sum, position
after position, as cwl_eval sums it), and s is the first position where the gain gathered reaches T, or K.
Options `t` (T, the gain the user wants; default 1, ir_measures' default; positive), `max_rel` (required) and
`min_rel` (default 0), as for sdcg; the cut-off K is required, as in ir_measures.  A query with no row scores 0.

Ties: refused under ties="average" and the tie bounds (`_cwl`: a gainful row ranked early stops the user
sooner).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import polars as pl

from . import _cwl
from ._base import (
    NO_SPELLING,
    POSITION,
    Context,
    Definition,
    Option,
    Running,
    Spelling,
    Term,
    cut,
    cut_at,
    only_at_a_parameter,
    term_name,
)

DEFAULT_TARGET = 1.0


def _refused_target(value: float) -> str | None:
    return None if value > 0 and math.isfinite(value) else "T, the gain the user wants, must be positive"


OPTIONS = (Option("t", DEFAULT_TARGET, "T: the gain the user wants before stopping", _refused_target), *_cwl.OPTIONS)


def _gathered_above(min_rel: float, max_rel: float) -> str:
    """The scaled gain of the positions above each row, summed position after position."""
    return term_name(f"cwl_gain_above_{_cwl.suffix(min_rel, max_rel)}", None)


def running_at(min_rel: float, max_rel: float) -> list[Running]:
    gathered = _gathered_above(min_rel, max_rel)
    return [Running(gathered, _cwl.scaled_gain(min_rel, max_rel), "sum", exclusive=True)]


def _names(target: float, min_rel: float, max_rel: float, cutoff: int | None) -> tuple[str, str]:
    stem = _cwl.suffix(target, min_rel, max_rel)
    return term_name(f"bpm_gain_{stem}", cutoff), term_name(f"bpm_reached_{stem}", None)


def terms_at(target: float, min_rel: float, max_rel: float, context: Context, cutoff: int | None) -> dict[str, Term]:
    above = pl.col(_gathered_above(min_rel, max_rel))
    gain = _cwl.scaled_gain(min_rel, max_rel)
    gathered, reached = _names(target, min_rel, max_rel, cutoff)
    read = above < target
    # the first position whose running sum (the sum above it plus its gain, as cwl_eval adds it) reaches T
    reaching = pl.when(read & (above + gain >= target)).then(pl.col(POSITION).cast(pl.Float64))
    return {
        gathered: Term(cut(pl.when(read).then(gain).otherwise(0.0), POSITION, cutoff), None),
        reached: Term(reaching, None, least=True),
    }


def value_at(target: float, min_rel: float, max_rel: float, context: Context, cutoff: int | None) -> pl.Expr:
    if cutoff is None:
        msg = "bpm is computed at a cut-off: the plan asks it with one (`bpm@k`)"
        raise AssertionError(msg)
    gathered, reached = (pl.col(name) for name in _names(target, min_rel, max_rel, cut_at(cutoff)))
    stop = pl.min_horizontal(reached.fill_null(float(cutoff)), pl.lit(float(cutoff)))
    return gathered / stop


def with_options(values: Mapping[str, float]) -> Definition:
    min_rel, max_rel = _cwl.checked_levels("bpm", values)
    target = values["t"]
    return _cwl.bound(MEASURE, terms_at, value_at, (target, min_rel, max_rel), running_at(min_rel, max_rel))


_terms, _value = only_at_a_parameter("bpm(max_rel=...)")

MEASURE = Definition(
    name="bpm",
    oracle="ir_measures (cwl_eval); hand derivations",
    method=None,
    aliases=(),
    ir_measures=Spelling(None, "BPM(max_rel={max_rel})@{k}"),
    ranx=NO_SPELLING,
    family="gain",
    needs=frozenset(),
    terms=_terms,
    value=_value,
    bounds=(0.0, 1.0),
    parameter="required_cutoff",
    refuses_average=_cwl.REFUSES_AVERAGE,
    refuses_bounds=_cwl.REFUSES_BOUNDS,
    options=OPTIONS,
    with_options=with_options,
)
