"""Ranking measures as Polars expressions: one Float64 per group.

    df.group_by("query").agg(exprs.ndcg(k=10), exprs.precision(k=5), pl.len(), pl.col("clicked").mean())
    df.with_columns(exprs.ndcg(k=10).over("query"))

Each function returns a `pl.Expr` evaluated over the rows of a group (`group_by(...).agg`,
`group_by_dynamic`, `rolling`, a window with `.over(keys)`, or the whole frame in `select`), with the
semantics, options and error messages of the `.rank_metrics` method of the same name (scikit-learn's
tie-averaged DCG by default; every tie mode; under `ties="average"` the exact expectation over the orders of
tied rows).

Which measures are expressions
- Every measure `evaluate` takes (the diversity measures aside, which read subtopic judgments), by its `evaluate`
  name: `measure("compat")`, `measure("rprec_mult@0.5")`, `measure("rbp(p=0.8)@10")`, in every tie mode `evaluate`
  allows for it.  The hand-written expression below where the measure has one taking the call's options, else
  derived from the measure's own module (`_derived.py`): its terms, running columns and finish, with the plan's
  per-row and per-query columns replaced by their values over the group's rows.  The value is `evaluate`'s for a
  query with the group's rows, without `qrels=`: R is the group's relevant rows, judged@k is 1 and unj@k,
  rbp_resid 0 (every row is judged), and a relevant document outside the frame does not count (`qrels=` on the
  namespace counts it, as trec_eval does).
- Hand-written, faster: `ndcg`, `dcg`, `ideal_dcg`, `reciprocal_rank`, `precision`, `recall`,
  `average_precision`, `yaap`, `success` (also as `hit_rate`, ranx's name), `rprec`, `relative_precision`,
  `f1`, `err`, `nerr`, `rbp`, `iprec_at_recall`, `eleven_point_average`, `sdcg`, `g` and `bin_g`.  They compute
  on lists, for every group at once (below), at 0.6-1.8x `evaluate`'s time on the same rows (300k groups of 10
  rows), and `measure` hands them the call where they take its options; a derived expression evaluates its
  columns group by group, at 1.5-4.3x `evaluate`'s time (2.8-15x under ties="average" with tie blocks).
- How `measure` is derived: `_derived.py`'s docstring.
- The hand-written expressions do not reuse the measure layer (`measures/`): its terms are written against the
  plan's row columns (positions, relevant-before counts, sums per tie block from a group-by on (query, score)),
  which `measure` replaces one by one, group by group, at its cost.  Two helpers carry the shared work here
  instead: `_positional_sum` (`_positional.py`) for a measure linear in per-position weights (DCG: the discounts;
  hits@k: 1 within k) and `_expected_at_first_relevant` (`first_relevant.py`) for the measures of the first
  relevant row (reciprocal rank, success).  RBP is `_positional_sum` with the weights p**(position - 1), SDCG with
  the discounts over the scaled gains, F1 a function of hits@k; R-precision cuts at the group's R
  (`_hits_within_relevant_total`); ERR runs its cascade on the list of stopping probabilities in ranked order
  (`_cascade`), which has no exact tie expectation here (refused, as in the namespace), nor have the interpolated
  precisions (`_interpolated_precisions`, the greatest of ratios) and G (`_g_sum`, a ratio inside a logarithm);
  binG runs on the relevant flags in ranked order (`_bin_g_sum`), its tie expectation a sum over each block's
  first positions (`_block_averaged_bin_g`).

Where the code is
- `gain.py`: ndcg, dcg, ideal_dcg, rbp, sdcg; `first_relevant.py`: reciprocal_rank, success (hit_rate);
  `precision_recall.py`: precision, recall, f1, rprec, relative_precision, average_precision, yaap;
  `cascade.py`: err, nerr;
  `interpolated.py`: iprec_at_recall, eleven_point_average; `normalized_gain.py`: g, bin_g.
- Shared: `_inputs.py` (the arguments checked into `_Inputs`, the refusal of ties="average"), `_positional.py`
  (ranked order, positional and tie-block-averaged sums), `_data_checks.py` (the data checks, their messages,
  `_finish`).

How the per-group value is computed
- Polars evaluates an expression inside an aggregation group by group when it is not elementwise (a rank, a
  sort, a cumulative sum, a range of positions): about a microsecond per group, most of the time on many
  small groups, and it does not share a sub-expression used twice there (no CSE).  So each group sorts once
  and the rest runs on lists, for every group at once: the values in ranked order (`sort_by` the score, ties
  broken as `ties` says) gathered into one list per group, times a list of per-position weights built from
  `pl.int_ranges`, summed.  The ideal DCG sorts the gains (`list.sort`).
- `ties="average"`: a group is tied when it has fewer distinct scores than rows.  Only the tied groups' rows
  go, as one list each, to a `list.eval` computing the expectation; the other lists are null there and cost
  nothing, and their groups take the sorted order, which is their only one.  In a tied group, a row's tie
  block covers positions a..b (a = rank("min"), b = rank("max") of its descending score); a measure linear
  in per-position weights w gives each row value * (W(b) - W(a - 1)) / (b - a + 1), W(p) the weights of
  positions 1..min(p, k) summed: a table lookup for a cut-off up to `_TABLE_CUTOFF_LIMIT`, else a cumulative
  sum over the group gathered at a and b.  Each rank is computed once, inside a struct whose fields the
  formula reads (`_let`).  Average precision's block formula is in `_block_averaged_precision`.
- Reciprocal rank and success with `ties="average"`: the first tie block holding a relevant row is the one
  at the highest relevant score; with s rows before it, n in it, r of them relevant, the first relevant row
  lands at block offset j with P(J = j) = C(n - j, r - 1) / C(n, r), found from plain per-group sums.
- The data checks are per-group counters in one struct that one Python function reads once, on the
  per-group results (never the rows): it raises the namespace's data errors, else gives 0.0, added to the
  value.
"""

from __future__ import annotations

# the data-error messages and the signatures' type aliases, reachable here as before the split (`x as x`: re-exported)
from ._data_checks import BAD_VALUES_MESSAGE as BAD_VALUES_MESSAGE
from ._data_checks import DUPLICATE_DOC_MESSAGE as DUPLICATE_DOC_MESSAGE
from ._data_checks import ERR_GRADE_MESSAGE as ERR_GRADE_MESSAGE
from ._data_checks import NEGATIVE_RELEVANCE_MESSAGE as NEGATIVE_RELEVANCE_MESSAGE
from ._data_checks import NO_GRADE_ABOVE_ZERO_MESSAGE as NO_GRADE_ABOVE_ZERO_MESSAGE
from ._data_checks import NO_POSITIVE_GAIN_MESSAGE as NO_POSITIVE_GAIN_MESSAGE
from ._data_checks import NO_RELEVANT_ABOVE_MESSAGE as NO_RELEVANT_ABOVE_MESSAGE
from ._data_checks import NO_RELEVANT_MESSAGE as NO_RELEVANT_MESSAGE
from ._data_checks import NULL_DOCS_MESSAGE as NULL_DOCS_MESSAGE
from ._data_checks import UNMAPPED_LABEL_MESSAGE as UNMAPPED_LABEL_MESSAGE
from ._derived import HAND_WRITTEN, measure
from ._inputs import Column as Column
from ._inputs import Gain as Gain
from ._inputs import GainName as GainName
from ._inputs import NoRelevant as NoRelevant
from ._inputs import Ties as Ties
from .cascade import err, nerr
from .first_relevant import hit_rate, reciprocal_rank, success
from .gain import dcg, ideal_dcg, ndcg, rbp, sdcg
from .interpolated import eleven_point_average, iprec_at_recall
from .normalized_gain import bin_g, g
from .precision_recall import average_precision, f1, precision, recall, relative_precision, rprec, yaap

# the measure (as `evaluate` names it, its registry name) each expression computes: the README's measure table
# reads it, and each expression names its column as `evaluate` names that measure's
_MEASURE_EXPRESSIONS: dict[str, str] = {measure: function.__name__ for measure, function in HAND_WRITTEN.items()}

__all__ = [
    "average_precision",
    "bin_g",
    "dcg",
    "eleven_point_average",
    "err",
    "f1",
    "g",
    "hit_rate",
    "ideal_dcg",
    "iprec_at_recall",
    "measure",
    "ndcg",
    "nerr",
    "precision",
    "rbp",
    "recall",
    "reciprocal_rank",
    "relative_precision",
    "rprec",
    "sdcg",
    "success",
    "yaap",
]
