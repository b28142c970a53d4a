"""ERR@k, expected reciprocal rank (Chapelle, Metzler, Zhang & Grinspan, CIKM 2009), as ir_measures computes
ERR@k (through gdeval): a user scans down the list and stops at a document of grade g with probability
R(g) = (2**g - 1) / 2**4 (gdeval's fixed largest grade 4, whatever the query's), so ERR@k is the sum over
positions p <= k of R(g_p) / p x the product over the positions above p of (1 - R).  The grade is the
relevance level (with judgments, the judged level; an unjudged document, or one judged at a negative level,
has R = 0); the gain mapping is not read.  Grades must lie in [0, 4] (gdeval refuses others; a grade need
not be an integer here).  A query with no relevant document scores 0 (nothing to normalise by).

Ties: the bounds order a tie block by descending grade (optimistic) or ascending (pessimistic), ERR's best
and worst orders (swapping adjacent rows of probabilities a < b, b first, raises ERR by (b - a)(1/p -
1/(p+1)) x the continuation above); they read the gain, so they are refused with a gain mapping that does not
order the grades as they are (strictly increasing, positive above grade 0).  ties="average" is refused: the
expectation over the orders of a tie block of n rows with continuation probabilities x_i = 1 - R_i is the
continuation above the block (the same in every order) times sum_t [(n-t+1) e_{t-1} - t e_t] / (n C(n-1, t-1)
(s+t)) over its positions s+t, with e_j the elementary symmetric polynomials of the x_i (the first t rows of a
random order are a random t-subset, whose product has mean e_t / C(n, t)): polynomial, O(n**2) per block, but
the e_j are a recursion over the block's rows (the coefficients of the product of 1 + x_i z), not a fixed set
of block sums, which is all the plan computes per block; computed from power sums (Newton's identities) or a
discrete Fourier transform their rounding error grows as 2**n, so large blocks would be wrong.
"""

from __future__ import annotations

import polars as pl

from .._checks import DataCheck, least_failing, message, quoted, row_check
from ._base import (
    CONTINUATION,
    ERR_MAX_GRADE,
    NO_SPELLING,
    POSITION,
    PREFIX,
    RELEVANCE,
    Context,
    Definition,
    Quantity,
    Spelling,
    Term,
    cut,
    cut_at,
    stopping_probability,
    term_name,
)

REFUSES_AVERAGE = (
    "the expectation over a tie block's orders needs the elementary symmetric polynomials of its rows' "
    "continuation probabilities, not a fixed set of block sums"
)


def err_column(cutoff: int | None) -> str:
    """The per-query ERR@k sum (shared with nerr)."""
    return term_name("err", cutoff)


def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
    found = stopping_probability(pl.col(RELEVANCE)) * pl.col(CONTINUATION) / pl.col(POSITION).cast(pl.Float64)
    return {err_column(cutoff): Term(cut(found, POSITION, cutoff), None)}


def value(context: Context, cutoff: int | None) -> pl.Expr:
    return pl.col(err_column(cut_at(cutoff)))


def row_checks(context: Context) -> list[DataCheck]:
    """Grades outside [0, 4] (judged grades are checked with the judgments)."""
    if context.judged:
        return []
    grade = pl.col(RELEVANCE).cast(pl.Float64)
    outside = (grade < 0) | (grade > ERR_MAX_GRADE)
    return [
        row_check(
            f"{PREFIX}err_grade",
            outside,
            message(
                ValueError,
                f"relevance {{value}} (column {quoted(context.relevance_name)}, query {{query}}) is outside ERR's "
                f"grades 0..{ERR_MAX_GRADE}: its stopping "
                f"probability (2**g - 1) / 2**{ERR_MAX_GRADE} must lie in [0, 1).",
            ),
            least_failing(pl.col(RELEVANCE), outside),
        )
    ]


MEASURE = Definition(
    name="err",
    oracle="ir_measures (gdeval, 5 decimals); hand derivations; every tied order enumerated",
    method=None,
    aliases=("expected_reciprocal_rank",),
    ir_measures=Spelling(None, "ERR@{k}"),
    ranx=NO_SPELLING,
    family="gain",
    needs=frozenset({Quantity.CONTINUATION}),
    terms=terms,
    value=value,
    bounds=(0.0, 1.0),
    refuses_average=REFUSES_AVERAGE,
    orders_by_grade=True,
    row_checks=row_checks,
)
