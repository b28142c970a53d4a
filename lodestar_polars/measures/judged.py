"""judged@k (ir_measures' Judged@k): the share of the first k positions holding a judged row, 1 - (unjudged
rows within k, `_unjudged`) / min(k, rows): past the end of the list, the share of the list.  With judgments,
a row is judged when the judgments give it a level >= 0 (trec_eval's convention; ir_measures counts a
document judged at a negative level as judged); without judgments every row is judged, and judged is 1.  A
query with no row scores 0.

Ties: linear in per-position weights: under ties="average" the exact expectation; under ties="optimistic"
the largest value over the orders of tied rows (judged rows first: the fewest unjudged within k), under
"pessimistic" the least (`_unjudged`).
"""

from __future__ import annotations

import polars as pl

from . import _unjudged
from ._base import NO_SPELLING, ROWS, Context, Definition, Quantity, Spelling, Term, cut_at


def _extreme(context: Context) -> _unjudged.Extreme:
    return "most" if context.ties == "pessimistic" else "fewest"


def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
    return _unjudged.terms(context, cutoff, _extreme(context))


def value(context: Context, cutoff: int | None) -> pl.Expr:
    c = cut_at(cutoff)
    count = pl.col(_unjudged.unjudged_column(context, c, _extreme(context)))
    rows = pl.col(ROWS).cast(pl.Float64)
    length = rows if c is None else pl.min_horizontal(rows, pl.lit(float(c)))
    return pl.when(length == 0).then(0.0).otherwise(1.0 - count / length)


MEASURE = Definition(
    name="judged",
    oracle="ir_measures; every tied order enumerated",
    method=None,
    aliases=(),
    trec_eval=NO_SPELLING,
    ir_measures=Spelling("Judged", "Judged@{k}"),
    ranx=NO_SPELLING,
    family="threshold",
    needs=frozenset({Quantity.TIE_BLOCKS}),
    terms=terms,
    value=value,
    bounds=(0.0, 1.0),
)
