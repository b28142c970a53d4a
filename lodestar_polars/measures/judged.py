"""judged@k (ir_measures' Judged@k): the share of the first k positions holding a judged row, 1 - (unpooled
rows within k, `_unjudged`) / min(k, rows): past the end of the list, the share of the list.  With judgments, a
row is judged when its document is in the judgments at any level, a negative one included, as ir_measures
counts it (trec_eval's unj, `unj@k`, counts a document judged -1 or -2 as unjudged); without judgments every
row is judged, and judged is 1.  A query with no row scores 0.

Ties: linear in per-position weights: under ties="average" the exact expectation; under ties="optimistic"
the largest value over the orders of tied rows (judged rows first: the fewest unpooled within k), under
"pessimistic" the least (`_unjudged`).
"""

from __future__ import annotations

import polars as pl

from . import _unjudged
from ._base import NO_SPELLING, ROWS, Context, Definition, Quantity, Running, Spelling, Term, cut_at


def _extreme(context: Context) -> _unjudged.Extreme:
    return "most" if context.ties == "pessimistic" else "fewest"


def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
    return _unjudged.terms(context, cutoff, _extreme(context), "unpooled")


def running(context: Context) -> list[Running]:
    return _unjudged.running(context, "unpooled")


def value(context: Context, cutoff: int | None) -> pl.Expr:
    c = cut_at(cutoff)
    count = pl.col(_unjudged.count_column(context, c, _extreme(context), "unpooled"))
    rows = pl.col(ROWS).cast(pl.Float64)
    length = rows if c is None else pl.min_horizontal(rows, pl.lit(float(c)))
    return pl.when(length == 0).then(0.0).otherwise(1.0 - count / length)


MEASURE = Definition(
    name="judged",
    oracle=(
        "ir_measures (a document judged at a negative level counts as judged: unlike `unj`); every tied order"
        " enumerated"
    ),
    method=None,
    aliases=(),
    ir_measures=Spelling("Judged", "Judged@{k}"),
    ranx=NO_SPELLING,
    family="threshold",
    # POOLED_BEFORE brings the per-row pooled flag (in the judgments at any level) the count reads
    needs=frozenset({Quantity.TIE_BLOCKS, Quantity.POOLED_BEFORE}),
    terms=terms,
    value=value,
    bounds=(0.0, 1.0),
    running=running,
)
