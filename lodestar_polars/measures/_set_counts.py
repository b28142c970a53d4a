"""The shared counts of trec_eval's set measures, which read the retrieved list as a set: its rows n
(`ROWS`), its relevant rows h (the hits over the whole list, `_hits`) and R (the query's relevant rows; with
judgments its relevant judged documents, retrieved or not).  Each computes as trec_eval does, operation for
operation, so that its per-query doubles are trec_eval's.

Ties: the set measures ignore the order of the rows; every tie mode gives the same value.
"""

from __future__ import annotations

import polars as pl

from . import _hits
from ._base import ROWS, Context, Term


def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
    return _hits.terms(context, None)


def hits() -> pl.Expr:
    return pl.col(_hits.hits_column(None))


def rows() -> pl.Expr:
    return pl.col(ROWS).cast(pl.Float64)
