"""infAP, inferred average precision (Yilmaz & Aslam, CIKM 2006), as trec_eval's infAP computes it: an
estimate of AP from a judgment pool of which only a sample was assessed.

With judgments (qrels=), a retrieved document is unpooled (absent from the qrels), pooled but not assessed
(judged at a negative level), judged non-relevant (a level from 0 to the threshold) or judged relevant (above
it).  A relevant row at position p = j + 1, with c relevant, n judged non-relevant and u pooled-unassessed
rows above it, adds 1 at p = 1 and otherwise

    1/(j+1) + j/(j+1) x (c + n + u)/j x (c + ε)/(c + n + 2ε),   ε = 1e-5 (trec_eval's INFAP_EPSILON):

the chance 1/p that the document is itself the cut-off, plus the pooled share of the rows above times the
precision estimated on the judged ones (smoothed, so that (ε)/(2ε) = 1/2 when none above is judged).  An
unpooled row above counts as non-relevant (it only lengthens j); a pooled-unassessed one is assumed relevant
in the judged proportion.  The sum is divided by R, the query's judged relevant documents (retrieved or not);
a query with R = 0 scores `no_relevant` (trec_eval prints 0).

Without judgments every row is pooled and judged (u = 0, c + n = j): a relevant row adds
(1 + j (c + ε)/(j + 2ε)) / p, which differs from AP's (c + 1)/p by ε (j - 2c) / ((j + 2ε) p), less than 1e-5;
this is also what qrels judging every retrieved document give.

Ties: the terms take the ratio (c + ε)/(c + n + 2ε) of counts above each relevant row, which is not linear in
the order of a tie block: ties="average" is refused (ties="doc" is trec_eval's order).  Its expectation is
polynomial: a row's offset in its block is uniform and, given it, the relevant, judged non-relevant and
pooled-unassessed block-mates before it are multivariate hypergeometric, a sum of O(n**3) terms per block; but
those terms are not a fixed set of block sums, the only per-block quantities the plan computes, so it is not
computed.  Without judgments the
bounds order a tie block relevant rows first (optimistic) or last (pessimistic), which are its best and worst
orders as for AP.  With judgments they are refused: a pooled-unassessed row ranked above a relevant one can
raise its term (when unpooled rows above it make (c + ε)/(c + n + 2ε) x (1 + unpooled above) exceed 1), so
the best order of a tie block depends on the rows above it.
"""

from __future__ import annotations

import polars as pl

from . import recall
from ._base import (
    JUDGED_BEFORE,
    NO_SPELLING,
    POOLED_BEFORE,
    RELEVANT,
    RELEVANT_BEFORE,
    Context,
    Definition,
    Quantity,
    Spelling,
    Term,
    TrecEvalForm,
    term_name,
)

# trec_eval's INFAP_EPSILON
EPSILON = 1e-5

INFERRED = term_name("infap", None)


def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
    # trec_eval's arithmetic, operation for operation: j is the 0-based position
    j = (pl.col(context.position) - 1).cast(pl.Float64)
    relevant_above = pl.col(RELEVANT_BEFORE).cast(pl.Float64)
    judged_above = pl.col(JUDGED_BEFORE).cast(pl.Float64)
    pooled_above = pl.col(POOLED_BEFORE).cast(pl.Float64)
    precision = (relevant_above + EPSILON) / (judged_above + 2.0 * EPSILON)
    later = 1.0 / (j + 1.0) + (j / (j + 1.0)) * (pooled_above / j) * precision
    row = pl.when(~pl.col(RELEVANT)).then(0.0).when(j == 0.0).then(1.0).otherwise(later)
    return {INFERRED: Term(row, None, judged_rows=True)}


def value(context: Context, cutoff: int | None) -> pl.Expr:
    return context.per_relevant(pl.col(INFERRED))


MEASURE = Definition(
    name="infap",
    oracle="trec_eval binary; hand derivations",
    method=None,
    aliases=("inferred_ap",),
    trec_eval_forms=(TrecEvalForm("infAP"),),
    ir_measures=Spelling("infAP", None),
    ranx=NO_SPELLING,
    family="threshold",
    needs=frozenset(
        {Quantity.RELEVANT_COUNT, Quantity.RELEVANT_BEFORE, Quantity.JUDGED_BEFORE, Quantity.POOLED_BEFORE}
    ),
    terms=terms,
    value=value,
    bounds=(0.0, 1.0),
    no_relevant=recall.NO_RELEVANT,
    parameter="none",
    refuses_average="its per-row terms take a ratio of judged counts above each relevant row, not linear in the order",
    refuses_bounds_with_judgments=(
        "with judgments a pooled, unassessed document ranked above a relevant one can raise its term, so relevant "
        "first is not infAP's best order of a tie block"
    ),
)
