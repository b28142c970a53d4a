"""bpref (Buckley & Voorhees, SIGIR 2004, as trec_eval computes it): over the query's relevant rows, 1 -
min(n, R) / min(N, R), n being the judged non-relevant rows ranked above the row (1 when n = 0), summed and
divided by R.  R is the query's relevant total and N its judged non-relevant total (with judgments: its judged
documents with a level above the threshold, and with a level from 0 to the threshold, retrieved or not; a
retrieved document that is unjudged, or judged at a negative level, counts for nothing).  Without judgments
every row is judged.  A query with R = 0 scores `no_relevant`.

Ties: bpref caps each relevant row's count of non-relevant rows above it at R, a non-linear function of the
order of a tie block with no closed form for its expectation: ties="average" is refused (ties="doc" is
trec_eval's order); the bounds order a tie block relevant rows first (optimistic) or last (pessimistic).
"""

from __future__ import annotations

import polars as pl

from . import recall
from ._base import (
    JUDGED_BEFORE,
    NO_SPELLING,
    RELEVANT,
    RELEVANT_BEFORE,
    ROW_NONRELEVANT_TOTAL,
    ROW_RELEVANT_TOTAL,
    Context,
    Definition,
    Quantity,
    Spelling,
    Term,
    term_name,
)

PREFERENCES = term_name("bpref", None)


def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
    # a relevant row's judged rows above it are relevant or judged non-relevant
    nonrelevant_above = (pl.col(JUDGED_BEFORE) - pl.col(RELEVANT_BEFORE)).cast(pl.Float64)
    relevant_total, nonrelevant_total = pl.col(ROW_RELEVANT_TOTAL), pl.col(ROW_NONRELEVANT_TOTAL)
    # n > 0 implies N >= n > 0, and the row being relevant, R > 0
    kept = 1.0 - pl.min_horizontal(nonrelevant_above, relevant_total) / pl.min_horizontal(
        nonrelevant_total, relevant_total
    )
    preference = pl.when(nonrelevant_above > 0).then(kept).otherwise(1.0)
    row = pl.when(pl.col(RELEVANT)).then(preference).otherwise(0.0)
    return {PREFERENCES: Term(row, None)}


def value(context: Context, cutoff: int | None) -> pl.Expr:
    return context.per_relevant(pl.col(PREFERENCES))


MEASURE = Definition(
    name="bpref",
    oracle="trec_eval binary; pytrec_eval",
    method=None,
    aliases=(),
    trec_eval=Spelling("bpref", None),
    ir_measures=Spelling("Bpref", None),
    # ranx's "bpref" differed from trec_eval's on the registry test's tool frame (not investigated further)
    ranx=NO_SPELLING,
    family="threshold",
    needs=frozenset({Quantity.RELEVANT_COUNT, Quantity.QUERY_TOTALS, Quantity.RELEVANT_BEFORE, Quantity.JUDGED_BEFORE}),
    terms=terms,
    value=value,
    bounds=(0.0, 1.0),
    no_relevant=recall.NO_RELEVANT,
    parameter="none",
    refuses_average="its per-row terms cap a count of rows above at R, which is not linear in the order",
)
