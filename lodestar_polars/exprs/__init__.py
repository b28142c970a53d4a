"""Ranking measures as Polars expressions: one Float64 per group.

    df.group_by("query").agg(exprs.ndcg(k=10), exprs.precision(k=5), pl.len(), pl.col("clicked").mean())
    df.with_columns(exprs.ndcg(k=10).over("query"))

Each function returns a `pl.Expr` evaluated over the rows of a group (`group_by(...).agg`,
`group_by_dynamic`, `rolling`, a window with `.over(keys)`, or the whole frame in `select`), with the
semantics, options and error messages of the `.rank_metrics` method of the same name (scikit-learn's
tie-averaged DCG by default; every tie mode; under `ties="average"` the exact expectation over the orders of
tied rows).

Which measures are expressions
- `ndcg`, `dcg`, `reciprocal_rank`, `precision`, `recall`, `average_precision`, `success` (also as `hit_rate`,
  ranx's name), `rprec`, `f1`, `err`, `nerr`, `rbp`, `iprec_at_recall` and `eleven_point_average`: each is a
  function of the group's own rows.  Recall, average precision, R-precision, F1 and the interpolated
  precisions divide by R, the group's relevant rows, nERR by the ERR of the group's
  grades sorted, and RBP brings the gains into [0, 1] by the group's greatest: in-frame relevance only.  An
  expression sees no judgments outside the frame, so a relevant document the run did not retrieve does not
  count (`qrels=` on the namespace counts it, as trec_eval does).
- Not expressions: the measures that need judgments outside the frame or unjudged rows (num_rel, bpref and
  gm_bpref, infAP, Rprec_mult, ndcg_rel and Rndcg with their judged ideal; judged@k and unj@k, 1 and 0 here),
  because R comes from the judgments there and rows with a null relevance (unjudged) are refused as bad values
  here; the set measures, which on the frame's rows alone are `precision()` (set_P) or 1 (set_recall); the
  geometric summaries (gm_map, gm_bpref), which summarise over queries, not within one (the per-group value is
  AP; aggregate the groups' values yourself); the counts num_ret and num_rel_ret, which are `pl.len()` and a
  sum in plain Polars.  The other in-frame measures (G, binG, rbp_resid, sDCG, utility) could be expressions
  but are not written yet: use `evaluate`.
- The measure layer (`measures/`) is not reused: its terms are written against the plan's row columns
  (positions, relevant-before counts, sums per tie block from a group-by on (query, score)), which do not
  exist inside an aggregation.  Two helpers carry the shared work here instead: `_positional_sum` for a
  measure linear in per-position weights (DCG: the discounts; hits@k: 1 within k) and
  `_expected_at_first_relevant` for the measures of the first relevant row (reciprocal rank, success).
  RBP is `_positional_sum` with the weights p**(position - 1), F1 a function of hits@k; R-precision cuts at the
  group's R (`_hits_within_relevant_total`); ERR runs its cascade on the list of stopping probabilities in
  ranked order (`_cascade`), which has no exact tie expectation here (refused, as in the namespace), nor have
  the interpolated precisions (`_interpolated_precisions`, the greatest of ratios).

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

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from .. import _spec
from ..measures import rbp as _rbp
from ..measures._base import ERR_MAX_GRADE, exact_quotient, options_suffix, stopping_probability

__all__ = [
    "average_precision",
    "dcg",
    "eleven_point_average",
    "err",
    "f1",
    "hit_rate",
    "iprec_at_recall",
    "ndcg",
    "nerr",
    "precision",
    "rbp",
    "recall",
    "reciprocal_rank",
    "rprec",
    "success",
]

Ties = _spec.Ties
GainName = _spec.GainName
Gain = _spec.Gain
NoRelevant = _spec.NoRelevant
Column = _spec.IntoColumn

# cut-offs up to this use a lookup table of cumulative discounts; larger ones (and None) a per-group cum_sum
_TABLE_CUTOFF_LIMIT = 10_000
# a cut-off at or past this position keeps every row of a group
_LONGEST_CUTOFF = (1 << 32) - 1

# data-error messages: the namespace's words, with the group in place of the query it names
BAD_VALUES_MESSAGE = "{role} column {column!r} has {total} null, NaN or infinite value(s)"
NEGATIVE_RELEVANCE_MESSAGE = "ndcg_score should not be used on negative y_true values."
UNMAPPED_LABEL_MESSAGE = "relevance label {value} has no gain in the gain mapping."
NULL_DOCS_MESSAGE = "doc column {column!r} has {total} null value(s)"
DUPLICATE_DOC_MESSAGE = (
    "a group lists doc {value} more than once (column {column!r}); "
    "a duplicated (query, doc) pair, often from a join fan-out, would inflate the metric."
)
NO_RELEVANT_MESSAGE = (
    "a group has no relevant document (ideal DCG is 0), and {total} group(s) in all; "
    "pass no_relevant=0.0, 1.0 or None to score them."
)
NO_RELEVANT_ABOVE_MESSAGE = (
    "a group has no document with relevance above {threshold:g}, and {total} group(s) in all; "
    "pass no_relevant=0.0, 1.0 or None to score them."
)
NO_GRADE_ABOVE_ZERO_MESSAGE = (
    "a group has no document of grade above 0 (ideal ERR is 0), and {total} group(s) in all; "
    "pass no_relevant=0.0, 1.0 or None to score them."
)
ERR_GRADE_MESSAGE = (
    f"relevance {{value}} is outside ERR's grades 0..{ERR_MAX_GRADE}: its stopping probability "
    f"(2**g - 1) / 2**{ERR_MAX_GRADE} must lie in [0, 1)"
)
_IN_GROUPS = ", in {groups} group(s)."


# ----------------------------------------------------------------------------------------------- options
def _check_column(argument: str, value: object) -> tuple[pl.Expr, str]:
    """A column name or an expression, and the name quoted in error messages."""
    if isinstance(value, str):
        return pl.col(value), value
    if isinstance(value, pl.Expr):
        return value, value.meta.output_name(raise_if_undetermined=False) or str(value)
    msg = f"`{argument}` must be a column name (str) or a polars expression, got {value!r}."
    raise TypeError(msg)


def _check_cutoff(metric: str, k: object) -> int | None:
    if isinstance(k, (list, tuple)):
        msg = f"exprs.{metric} takes one cut-off: give k as one int or None (one expression per cut-off), not {k!r}."
        raise TypeError(msg)
    return _spec.check_cutoffs(k)[0]


def _check_ties(ties: object, doc: Column | None) -> Ties:
    return _spec.check_ties(ties, doc is not None)


# the namespace's own checks: one home per rule
_check_no_relevant = _spec._check_no_relevant
_check_log_base = _spec._check_log_base
_check_threshold = _spec._check_threshold


@dataclass(frozen=True)
class _Inputs:
    """The validated columns and options of one expression."""

    relevance: pl.Expr
    relevance_name: str
    score: pl.Expr
    score_name: str
    doc: pl.Expr | None
    doc_name: str | None
    k: int | None

    @property
    def cut(self) -> int | None:
        """The position the metric is cut at: k, or `_LONGEST_CUTOFF` for any larger k (a k past the group
        scores the whole group; Polars' row indices are 32-bit)."""
        return None if self.k is None else min(self.k, _LONGEST_CUTOFF)

    ties: Ties
    gain: GainName | tuple[tuple[float, float], ...]


def _inputs(
    metric: str, relevance: object, score: object, doc: object, k: object, ties: object, gain: object
) -> _Inputs:
    relevance_expr, relevance_name = _check_column("relevance", relevance)
    score_expr, score_name = _check_column("score", score)
    doc_expr, doc_name = _check_column("doc", doc) if doc is not None else (None, None)
    return _Inputs(
        relevance=relevance_expr,
        relevance_name=relevance_name,
        score=score_expr,
        score_name=score_name,
        doc=doc_expr,
        doc_name=doc_name,
        k=_check_cutoff(metric, k),
        ties=_check_ties(ties, doc_expr),
        gain=_spec._check_gain(gain, allow_negative=metric not in ("ndcg", "rbp")),
    )


# ----------------------------------------------------------------------------------------------- pieces
def _field(name: str) -> pl.Expr:
    return pl.element().struct.field(name)


def _let(fields: Mapping[str, pl.Expr], body: pl.Expr) -> pl.Expr:
    """The group's rows of `body` as a list: `body`, written with `_field(name)`, reads `fields`, each evaluated
    once (Polars does not share repeated sub-expressions inside an aggregation).  `list.eval` rather than
    `struct.with_fields`: the streaming engine refuses `pl.field` inside an aggregation."""
    return pl.struct([e.alias(n) for n, e in fields.items()]).implode().list.eval(body)


def _gain(i: _Inputs) -> pl.Expr:
    relevance = i.relevance.cast(pl.Float64, strict=False)
    if i.gain == "linear":
        return relevance
    if i.gain == "exponential":
        return pl.lit(2.0).pow(relevance) - 1.0
    return pl.coalesce([pl.when(relevance == label).then(pl.lit(value, pl.Float64)) for label, value in i.gain])


def _discount(position: pl.Expr, k: int | None, log_base: float) -> pl.Expr:
    """1 / log_b(position + 1) for a 1-based position, 0 past k."""
    discount = pl.lit(math.log(log_base)) / (position + 1).cast(pl.Float64).log()
    return discount if k is None else pl.when(position <= k).then(discount).otherwise(0.0)


def _in_ranked_order(i: _Inputs, gain: pl.Expr, values: pl.Expr) -> pl.Expr:
    """`values` sorted by descending score, ties broken as a deterministic `ties` mode says (one sort per group,
    cheaper there than a rank)."""
    if i.ties == "input":  # a stable sort keeps the earlier of two tied rows first
        return values.sort_by(i.score, descending=True, maintain_order=True)
    if i.ties == "reverse":  # reversing the stable ascending order puts the later of two tied rows first
        return values.sort_by(i.score, maintain_order=True).reverse()
    if i.ties == "average":  # only for a group without ties, where every order is the same
        return values.sort_by(i.score, descending=True)
    if i.ties == "doc":  # trec_eval compares docnos as strings, descending
        assert i.doc is not None
        return values.sort_by(i.score, i.doc.cast(pl.String), descending=True)
    return values.sort_by(i.score, gain, descending=[True, i.ties == "optimistic"])


def _weighted_by_position(ranked: pl.Expr, k: int | None, weight: Callable[[pl.Expr], pl.Expr]) -> pl.Expr:
    """A group's values in ranked order (a list), the first k of them, each times `weight(position)`.

    The product runs on every group's list at once: an expression evaluated group by group (a rank, a
    cumulative sum, a range of positions) costs about a microsecond per group, which is most of the time on
    many small groups.
    """
    length = pl.len() if k is None else pl.len().clip(upper_bound=k)
    weights = pl.int_ranges(1, length + 1, dtype=pl.Int64).list.eval(weight(pl.element()))
    return (ranked if k is None else ranked.list.head(k)) * weights


def _discounted_sum(ranked: pl.Expr, k: int | None, log_base: float) -> pl.Expr:
    """sum(gain * discount(position)) over a group's gains in ranked order (a list), the first k of them."""
    return _weighted_by_position(ranked, k, lambda position: _discount(position, None, log_base)).list.sum()


@dataclass(frozen=True)
class _Weight:
    """A weight per 1-based position (before the cut-off), as an expression and as a number (for the table of
    its cumulative sums)."""

    expression: Callable[[pl.Expr], pl.Expr]
    number: Callable[[int], float]

    def cut(self, position: pl.Expr, k: int | None) -> pl.Expr:
        weight = self.expression(position)
        return weight if k is None else pl.when(position <= k).then(weight).otherwise(0.0)

    def cumulative(self, k: int) -> list[float]:
        """W(p) for p = 0..k: the weights of positions 1..p summed."""
        table, total = [0.0], 0.0
        for position in range(1, k + 1):
            total += self.number(position)
            table.append(total)
        return table


def _discount_weight(log_base: float) -> _Weight:
    return _Weight(
        lambda position: _discount(position, None, log_base),
        lambda position: math.log(log_base) / math.log(position + 1),
    )


# 1.0 at every position, as a column of the positions' length
_UNIT_WEIGHT = _Weight(lambda position: (position > 0).cast(pl.Float64), lambda position: 1.0)


def _block_weights(fields: dict[str, pl.Expr], name: str, cut: int | None, weight: _Weight) -> pl.Expr:
    """W(b) - W(a - 1) inside a `_let` whose fields hold a and b, the positions of each row's tie block, with
    W(p) the weights of positions 1..min(p, k) summed: a table lookup for a cut-off up to
    `_TABLE_CUTOFF_LIMIT`, else a cumulative sum over the group (added to `fields` under `name`) gathered at a
    and b."""
    a, b = _field("a"), _field("b")
    if cut is not None and cut <= _TABLE_CUTOFF_LIMIT:
        k, table = cut, weight.cumulative(cut)

        def cumulative(position: pl.Expr) -> pl.Expr:
            clipped = pl.min_horizontal(position, pl.lit(k, pl.Int64))
            return clipped.replace_strict(list(range(k + 1)), table, return_dtype=pl.Float64)

        return cumulative(b) - cumulative(a - 1)
    per_position = weight.cut(pl.int_range(1, pl.len() + 1, dtype=pl.Int64), cut)
    fields[f"{name}_weight"], fields[f"{name}_cumulative"] = per_position, per_position.cum_sum()
    # W(b) - W(a - 1) = W(b) - W(a) + weight(a), with 0-based gathers
    c, w = _field(f"{name}_cumulative"), _field(f"{name}_weight")
    return c.gather(b - 1) - c.gather(a - 1) + w.gather(a - 1)


def _block_positions(score: pl.Expr) -> dict[str, pl.Expr]:
    """a and b: the first and last positions of each row's tie block."""
    return {"a": score.rank("min", descending=True), "b": score.rank("max", descending=True)}


def _block_averaged_sum(score: pl.Expr, value: pl.Expr, cut: int | None, weight: _Weight) -> pl.Expr:
    """The expectation of sum(value * weight(position)) over the orders of the tied rows: each row adds
    value * (W(b) - W(a - 1)) / (b - a + 1), a..b the positions of its tie block."""
    fields = {**_block_positions(score), "v": value}
    block_size = (_field("b") - _field("a") + 1).cast(pl.Float64)
    block_weight = _block_weights(fields, "w", cut, weight)
    return _let(fields, _field("v") * block_weight / block_size).list.sum()


def _in_tied_groups(i: _Inputs, values: Mapping[str, pl.Expr], tied_value: Callable[..., pl.Expr]) -> pl.Expr:
    """`tied_value(score=..., **values)` evaluated on the rows of each group with tied scores, null elsewhere.

    A group is tied when it has fewer distinct scores than rows (as `_plan`'s `_in_tied_query`).  The tied
    groups' rows go, as one list each, to a `list.eval`; the other groups' lists are null and cost nothing
    there, so data without ties pays no rank.
    """
    tied = i.score.implode().list.n_unique() < pl.len()
    rows = pl.struct([i.score.alias("score"), *(value.alias(name) for name, value in values.items())]).implode()
    element = pl.element().struct
    body = tied_value(score=element.field("score"), **{name: element.field(name) for name in values})
    return pl.when(tied).then(rows).list.eval(body).list.first()


def _positional_sum(i: _Inputs, gain: pl.Expr, value: pl.Expr, weight: _Weight) -> pl.Expr:
    """sum(value * weight(position)) over the group's first k positions; under ties="average", its exact
    expectation over the orders of tied rows (the block-averaged sum in tied groups, the sorted order's sum in
    the others, whose order is unique)."""
    in_order = _weighted_by_position(_in_ranked_order(i, gain, value).implode(), i.cut, weight.expression)
    ordered = in_order.list.sum()
    if i.ties != "average":
        return ordered

    def averaged(score: pl.Expr, value: pl.Expr) -> pl.Expr:
        return _block_averaged_sum(score, value, i.cut, weight)

    return pl.coalesce(_in_tied_groups(i, {"value": value}, averaged), ordered)


def _dcg(i: _Inputs, gain: pl.Expr, log_base: float) -> pl.Expr:
    return _positional_sum(i, gain, gain, _discount_weight(log_base))


def _ideal_dcg(i: _Inputs, gain: pl.Expr) -> pl.Expr:
    """The gains sorted descending (the k largest with a cut-off), times the discounts of positions 1, 2, ..."""
    return _discounted_sum(gain.implode().list.sort(descending=True, nulls_last=True), i.cut, 2.0)


# ----------------------------------------------------------------------------------------------- checks
def _non_finite(column: pl.Expr) -> pl.Expr:
    return column.is_null() | ~column.cast(pl.Float64, strict=False).is_finite()


@dataclass(frozen=True)
class _Check:
    """A per-group counter that must be 0 in every group, and how to word the error when it is not."""

    name: str
    counter: pl.Expr
    message: Callable[[pl.DataFrame, pl.Series], str]
    value: pl.Expr | None = None  # a per-group offending value to quote


def _count_message(template: str, **names: object) -> Callable[[pl.DataFrame, pl.Series], str]:
    def message(frame: pl.DataFrame, failing: pl.Series) -> str:
        total = int(frame.get_column(failing.name).sum())
        groups = int((failing > 0).sum())
        return template.format(total=total, **names) + _IN_GROUPS.format(groups=groups)

    return message


def _value_message(template: str, **names: object) -> Callable[[pl.DataFrame, pl.Series], str]:
    def message(frame: pl.DataFrame, failing: pl.Series) -> str:
        value = frame.get_column(f"{failing.name}_value").filter(failing > 0).drop_nulls()[0]
        return template.format(value=repr(value) if isinstance(value, str) else value, **names)

    return message


def _checks(metric: str, i: _Inputs, gain: pl.Expr) -> list[_Check]:
    """The namespace's data checks that apply inside a group, in the order the namespace raises them."""
    checks = [
        _Check(
            "bad_score",
            _non_finite(i.score).sum(),
            _count_message(BAD_VALUES_MESSAGE, role="score", column=i.score_name),
        ),
        _Check(
            "bad_relevance",
            _non_finite(i.relevance).sum(),
            _count_message(BAD_VALUES_MESSAGE, role="relevance", column=i.relevance_name),
        ),
    ]
    if metric == "ndcg":
        negative = (i.relevance.cast(pl.Float64, strict=False) < 0).sum()
        checks.append(_Check("negative", negative, lambda _frame, _failing: NEGATIVE_RELEVANCE_MESSAGE))
    if isinstance(i.gain, tuple):
        unmapped = gain.is_null() & i.relevance.is_not_null()
        first_label = pl.when(unmapped).then(i.relevance).drop_nulls().first()
        checks.append(_Check("unmapped", unmapped.sum(), _value_message(UNMAPPED_LABEL_MESSAGE), first_label))
    if i.doc is not None:
        checks.append(_Check("null_docs", i.doc.is_null().sum(), _count_message(NULL_DOCS_MESSAGE, column=i.doc_name)))
        duplicated = i.doc.is_duplicated()
        first_duplicate = pl.when(duplicated).then(i.doc).drop_nulls().first()
        checks.append(
            _Check(
                "duplicates",
                duplicated.sum(),
                _value_message(DUPLICATE_DOC_MESSAGE, column=i.doc_name),
                first_duplicate,
            )
        )
    return checks


def _check_dtypes(i: _Inputs, frame: pl.DataFrame) -> None:
    """The namespace's schema check, made on the per-group results: an expression does not know the frame."""
    for role, name, allow_boolean in (("score", i.score_name, False), ("relevance", i.relevance_name, True)):
        dtype = frame.schema[f"{role}_sample"]
        if not (dtype.is_numeric() or dtype == pl.Null or (allow_boolean and dtype == pl.Boolean)):
            kinds = "numeric or boolean" if allow_boolean else "numeric"
            msg = f"{role} column {name!r} in the frame must be {kinds}, got dtype {dtype}."
            raise pl.exceptions.SchemaError(msg)


def _from_counts(counts: Mapping[str, pl.Expr], value: Callable[[pl.DataFrame], pl.Series]) -> pl.Expr:
    """A per-group value computed from per-group aggregations (`counts`, plain aggregations such as sums and
    maxima), by one Python call on the frame of their per-group results."""
    fields = pl.struct([e.alias(n) for n, e in counts.items()])
    return fields.map_batches(
        lambda per_group: value(per_group.struct.unnest()), return_dtype=pl.Float64, is_elementwise=True
    )


def _checked(i: _Inputs, checks: Sequence[_Check]) -> pl.Expr:
    """0.0 for each group, from one Python call on the per-group counters (not the rows) that raises a failed
    check first.  `is_elementwise=True` makes Polars apply it once to the column of per-group values after the
    aggregation, instead of once per group."""
    fields = {"score_sample": i.score.first(), "relevance_sample": i.relevance.first()}
    for check in checks:
        fields[check.name] = check.counter
        if check.value is not None:
            fields[f"{check.name}_value"] = check.value

    def verify(per_group: pl.Series) -> pl.Series:
        frame = per_group.struct.unnest()
        _check_dtypes(i, frame)
        for check in checks:
            counts = frame.get_column(check.name)
            if (counts > 0).any():
                raise ValueError(check.message(frame, counts))
        return pl.zeros(per_group.len(), pl.Float64, eager=True)

    return pl.struct([e.alias(n) for n, e in fields.items()]).map_batches(
        verify, return_dtype=pl.Float64, is_elementwise=True
    )


def _finish(
    i: _Inputs,
    name: str,
    value: pl.Expr,
    checks: Sequence[_Check],
    then: Callable[[pl.Series], pl.Series] | None = None,
) -> pl.Expr:
    """The per-group `value` once the data checks pass: plus the checks' 0.0, which also makes an empty sum's
    -0.0 a 0.0, as the namespace gives it; `then`, if given, finishes the column of per-group values (one call).

    The value stays a Polars expression apart from the checks: a struct mixing list-derived per-group values
    with plain aggregations (the counters) made Polars take a slow path (2.9 s against 1.6 s of CPU on 200k
    groups of 10 rows), and so did `fill_nan` on the value.
    """
    checked = value + _checked(i, checks)
    if then is None:
        return checked.alias(name)
    return checked.map_batches(then, return_dtype=pl.Float64, is_elementwise=True).alias(name)


def _column_name(metric: str, k: int | None) -> str:
    return metric if k is None else f"{metric}@{k}"


# ----------------------------------------------------------------------------------------------- public
def ndcg(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    k: int | None = None,
    ties: Ties = "average",
    gain: Gain = "linear",
    no_relevant: NoRelevant = 0.0,
    doc: Column | None = None,
) -> pl.Expr:
    """NDCG of each group, as scikit-learn's `ndcg_score` defines it (with the namespace's options).

    Parameters
    ----------
    relevance, score
        The graded relevance (the gain source) and the model score: column names or expressions.
    k
        The cut-off, or None for the whole list.  One per expression: several cut-offs are several
        expressions.
    ties
        "average" (scikit-learn), "reverse" (the later row first), "input" (the earlier row first:
        LightGBM), "doc" (doc id compared as text, descending: trec_eval), "optimistic", "pessimistic".
    gain
        "linear" (relevance), "exponential" (2**relevance - 1), a mapping label -> gain, or a sequence
        (LightGBM's `label_gain`: index -> gain).
    no_relevant
        NDCG of a group whose ideal DCG is 0: a float, None (null) or "error" (raise).
    doc
        Document id (column name or expression): for `ties="doc"`, and checked for nulls and duplicates.

    Returns
    -------
    pl.Expr
        A Float64 expression named `ndcg` or `ndcg@{k}`: one value per group in an aggregation, the
        group's value on each of its rows with `.over(keys)`.  Data errors (null, NaN or infinite
        relevance or score, negative relevance, an unmapped gain label, null or duplicated docs) raise a
        `ValueError` when the query is collected.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame(
    ...     {
    ...         "query": [1, 1, 1, 1, 2, 2, 2],
    ...         "relevance": [3, 2, 1, 0, 0, 1, 2],
    ...         "score": [0.1, 0.4, 0.5, 0.9, 0.3, 0.3, 0.8],
    ...     }
    ... )
    >>> df.group_by("query", maintain_order=True).agg(exprs.ndcg(), exprs.ndcg(k=1), pl.len())
    shape: (2, 4)
    ┌───────┬──────────┬────────┬─────┐
    │ query ┆ ndcg     ┆ ndcg@1 ┆ len │
    │ ---   ┆ ---      ┆ ---    ┆ --- │
    │ i64   ┆ f64      ┆ f64    ┆ u32 │
    ╞═══════╪══════════╪════════╪═════╡
    │ 1     ┆ 0.613827 ┆ 0.0    ┆ 4   │
    │ 2     ┆ 0.975117 ┆ 1.0    ┆ 3   │
    └───────┴──────────┴────────┴─────┘
    """
    i = _inputs("ndcg", relevance, score, doc, k, ties, gain)
    checked_no_relevant = _check_no_relevant(no_relevant)
    gain_expr = _gain(i)
    # gains are not negative: an ideal DCG of 0 has a DCG of 0, and only 0 / 0 is NaN (the ideal DCG is read
    # once: Polars would compute it again for a second use)
    ratio = _dcg(i, gain_expr, 2.0) / _ideal_dcg(i, gain_expr)

    def no_relevant_value(values: pl.Series) -> pl.Series:
        if checked_no_relevant != "error":
            return values.fill_nan(checked_no_relevant)
        without = int(values.is_nan().sum())
        if without:
            raise ValueError(NO_RELEVANT_MESSAGE.format(total=without))
        return values

    return _finish(i, _column_name("ndcg", i.k), ratio, _checks("ndcg", i, gain_expr), no_relevant_value)


def dcg(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    k: int | None = None,
    ties: Ties = "average",
    gain: Gain = "linear",
    log_base: float = 2.0,
    doc: Column | None = None,
) -> pl.Expr:
    """DCG of each group, as scikit-learn's `dcg_score` defines it (with the namespace's options).

    Parameters
    ----------
    relevance, score, k, ties, gain, doc
        As for `ndcg`.  Negative relevance is accepted, as scikit-learn's `dcg_score` accepts it.
    log_base
        Base of the logarithm of the discount 1 / log_b(position + 1).

    Returns
    -------
    pl.Expr
        A Float64 expression named `dcg` or `dcg@{k}`, one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1, 1, 1], "relevance": [10, 0, 0, 1, 5], "score": [1, 0, 0, 0, 1]})
    >>> df.group_by("query").agg(exprs.dcg(k=1))  # scikit-learn's dcg_score(..., k=1) is 7.5 too
    shape: (1, 2)
    ┌───────┬───────┐
    │ query ┆ dcg@1 │
    │ ---   ┆ ---   │
    │ i64   ┆ f64   │
    ╞═══════╪═══════╡
    │ 1     ┆ 7.5   │
    └───────┴───────┘
    """
    i = _inputs("dcg", relevance, score, doc, k, ties, gain)
    base = _check_log_base(log_base)
    gain_expr = _gain(i)
    return _finish(i, _column_name("dcg", i.k), _dcg(i, gain_expr, base), _checks("dcg", i, gain_expr))


def _expected_at_first_relevant(
    before: pl.Expr,
    size: pl.Expr,
    relevant: pl.Expr,
    k: int | None,
    weigh: Callable[[pl.Expr, pl.Expr], pl.Expr],
) -> pl.Expr:
    """The expectation over the orders of the first relevant tie block (s rows before it, n in it, r relevant)
    of a score of s + J, the first relevant row's position: the sum of weigh(P(J = j), s + j) over j.

    P(J = j) = C(n - j, r - 1) / C(n, r) = r / (n - j + 1) * prod_{i=0}^{j-2} (n - r - i) / (n - i),
    for j = 1..n - r + 1, and a row past k scores 0.
    """
    s, n, r = before.cast(pl.Int64), size.cast(pl.Int64), relevant.cast(pl.Int64)
    last = n - r + 1 if k is None else pl.min_horizontal(n - r + 1, pl.lit(k, pl.Int64) - s)
    j = pl.int_ranges(1, pl.max_horizontal(last, 0) + 1, dtype=pl.Int64)
    survival = ((n - r - j + 1) / (n - j + 1)).list.eval(pl.element().shift(1).fill_null(1.0).cum_prod())
    probability = survival * r / (n - j + 1)
    return weigh(probability, s + j).list.sum()


def _first_relevant_block(i: _Inputs, relevant: pl.Expr) -> dict[str, pl.Expr]:
    """Per group, the first tie block holding a relevant row: the one at the highest score of a relevant row
    (no rank needed), its rows before, size and relevant rows, and whether there is one."""
    top = pl.when(relevant).then(i.score).max()
    in_block = i.score == top
    return {
        "before": (i.score > top).sum(),
        "size": in_block.sum(),
        "relevant": (in_block & relevant).sum(),
        "found": top.is_not_null(),
    }


def _expected_from_first_relevant_block(
    k: int | None, weigh: Callable[[pl.Expr, pl.Expr], pl.Expr]
) -> Callable[[pl.DataFrame], pl.Series]:
    """The expectation per group, from the first relevant block's counts.  A block whose rows are all relevant
    (an untied row among them) puts the first relevant row at its first position (P(J = 1) = 1): only the
    other groups build the lists of the sum over j, which cost a `list.eval` per group."""

    def expected(frame: pl.DataFrame) -> pl.Series:
        before, size, relevant = pl.col("before"), pl.col("size"), pl.col("relevant")
        first = before.cast(pl.Int64) + 1
        in_cut = pl.col("found") if k is None else pl.col("found") & (first <= k)
        certain = weigh(pl.lit(1.0), first)
        numbered = frame.with_row_index("group").with_columns(in_cut.alias("in_cut"), certain.alias("value"))
        uncertain = numbered.filter(pl.col("in_cut") & (relevant < size))
        values = numbered.get_column("value")
        if uncertain.height:
            sums = uncertain.select(_expected_at_first_relevant(before, size, relevant, k, weigh)).to_series()
            values = values.scatter(uncertain.get_column("group"), sums)
        return values.zip_with(numbered.get_column("in_cut"), pl.Series([0.0] * len(values)))

    return expected


def reciprocal_rank(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    k: int | None = None,
    ties: Ties = "average",
    threshold: float = 0.0,
    doc: Column | None = None,
) -> pl.Expr:
    """Reciprocal rank of each group: 1 / position of the first row whose relevance is above `threshold`.

    Parameters
    ----------
    relevance, score, k, doc
        As for `ndcg`.  A group without a relevant row, or whose first one lies past k, scores 0.
    ties
        As for `ndcg`; "average" gives the exact expectation over every order of the tied rows.
    threshold
        A row is relevant when its relevance is above it.

    Returns
    -------
    pl.Expr
        A Float64 expression named `reciprocal_rank` or `reciprocal_rank@{k}`, one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1, 2, 2], "relevance": [0, 1, 0, 1, 0], "score": [3, 2, 1, 5, 5]})
    >>> df.group_by("query", maintain_order=True).agg(exprs.reciprocal_rank())
    shape: (2, 2)
    ┌───────┬─────────────────┐
    │ query ┆ reciprocal_rank │
    │ ---   ┆ ---             │
    │ i64   ┆ f64             │
    ╞═══════╪═════════════════╡
    │ 1     ┆ 0.5             │
    │ 2     ┆ 0.75            │
    └───────┴─────────────────┘
    """
    i = _inputs("reciprocal_rank", relevance, score, doc, k, ties, "linear")
    cut = _check_threshold(threshold)
    relevant = i.relevance.cast(pl.Float64, strict=False) > cut
    name = _column_name("reciprocal_rank", i.k)
    checks = _checks("reciprocal_rank", i, _gain(i))
    if i.ties == "average":
        expected = _expected_from_first_relevant_block(i.cut, lambda probability, position: probability / position)
        return _finish(i, name, _from_counts(_first_relevant_block(i, relevant), expected), checks)
    # 1 / position decreases with the position: its largest value over the relevant rows is the first one's
    relevant_in_order = _in_ranked_order(i, _gain(i), relevant.cast(pl.Float64)).implode()
    reciprocal = _weighted_by_position(relevant_in_order, i.cut, lambda position: 1.0 / position.cast(pl.Float64))
    return _finish(i, name, reciprocal.list.max().fill_null(0.0), checks)


# ----------------------------------------------------------------------------------------------- threshold
def _threshold_inputs(
    metric: str, relevance: object, score: object, doc: object, k: object, ties: object, threshold: object
) -> tuple[_Inputs, pl.Expr, list[_Check]]:
    """The inputs of a measure counting relevant rows, the per-row relevance flag as 0.0 / 1.0 and the checks."""
    i = _inputs(metric, relevance, score, doc, k, ties, "linear")
    cut = _check_threshold(threshold)
    relevant = (i.relevance.cast(pl.Float64, strict=False) > cut).cast(pl.Float64)
    return i, relevant, _checks(metric, i, _gain(i))


def _hits(i: _Inputs, relevant: pl.Expr) -> pl.Expr:
    """The relevant rows within the first k positions; under ties="average", their expected number.  Without a
    cut-off, every relevant row, whatever the order."""
    if i.cut is None:
        return relevant.sum()
    return _positional_sum(i, _gain(i), relevant, _UNIT_WEIGHT)


def _no_relevant_finish(
    no_relevant: object, threshold: float, message: str = NO_RELEVANT_ABOVE_MESSAGE
) -> Callable[[pl.Series], pl.Series]:
    """The value of a group without a relevant row (NaN there, as 0 / 0): `no_relevant`, or the namespace's
    error (`message`, formatted with `threshold` and the groups' `total`)."""
    checked = _check_no_relevant(no_relevant)

    def finish(values: pl.Series) -> pl.Series:
        if checked != "error":
            return values.fill_nan(checked)
        without = int(values.is_nan().sum())
        if without:
            raise ValueError(message.format(threshold=threshold, total=without))
        return values

    return finish


def _as_float(k: int) -> float:
    try:
        return float(k)
    except OverflowError:
        return math.inf


def precision(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    k: int | None = None,
    ties: Ties = "average",
    threshold: float = 0.0,
    doc: Column | None = None,
) -> pl.Expr:
    """Precision of each group: its relevant rows within the first k positions, divided by k (also when the
    group has fewer than k rows, as trec_eval's P_k); without k, by the group's rows.

    Parameters
    ----------
    relevance, score, k, doc
        As for `ndcg`.
    ties
        As for `ndcg`; "average" gives the exact expectation over every order of the tied rows.
    threshold
        A row is relevant when its relevance is above it.

    Returns
    -------
    pl.Expr
        A Float64 expression named `precision` or `precision@{k}`, one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1, 2, 2], "relevance": [0, 1, 0, 1, 0], "score": [3, 2, 1, 5, 5]})
    >>> df.group_by("query", maintain_order=True).agg(exprs.precision(k=1))
    shape: (2, 2)
    ┌───────┬─────────────┐
    │ query ┆ precision@1 │
    │ ---   ┆ ---         │
    │ i64   ┆ f64         │
    ╞═══════╪═════════════╡
    │ 1     ┆ 0.0         │
    │ 2     ┆ 0.5         │
    └───────┴─────────────┘
    """
    i, relevant, checks = _threshold_inputs("precision", relevance, score, doc, k, ties, threshold)
    hits = _hits(i, relevant)
    name = _column_name("precision", i.k)
    if i.k is None:  # a group without rows (an empty window) scores 0, as a query without rows
        return _finish(i, name, hits / pl.len(), checks, lambda values: values.fill_nan(0.0))
    # divided as C divides, not by Polars' product with the reciprocal of k (`exact_quotient`)
    return _finish(i, name, exact_quotient(hits, _as_float(i.k)), checks)


def recall(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    k: int | None = None,
    ties: Ties = "average",
    threshold: float = 0.0,
    no_relevant: NoRelevant = 0.0,
    doc: Column | None = None,
) -> pl.Expr:
    """Recall of each group: its relevant rows within the first k positions, divided by R, its relevant rows.

    R counts the group's own rows only: an expression sees no judgments outside the frame, so a relevant
    document the run did not retrieve is not counted (the namespace's `qrels=` counts it, as trec_eval).

    Parameters
    ----------
    relevance, score, k, doc, ties, threshold
        As for `precision`.
    no_relevant
        Recall of a group with R = 0: a float, None (null) or "error" (raise).

    Returns
    -------
    pl.Expr
        A Float64 expression named `recall` or `recall@{k}`, one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1, 2, 2], "relevance": [1, 1, 0, 1, 0], "score": [3, 2, 1, 5, 5]})
    >>> df.group_by("query", maintain_order=True).agg(exprs.recall(k=1))
    shape: (2, 2)
    ┌───────┬──────────┐
    │ query ┆ recall@1 │
    │ ---   ┆ ---      │
    │ i64   ┆ f64      │
    ╞═══════╪══════════╡
    │ 1     ┆ 0.5      │
    │ 2     ┆ 0.5      │
    └───────┴──────────┘
    """
    i, relevant, checks = _threshold_inputs("recall", relevance, score, doc, k, ties, threshold)
    finish = _no_relevant_finish(no_relevant, _check_threshold(threshold))
    return _finish(i, _column_name("recall", i.k), _hits(i, relevant) / relevant.sum(), checks, finish)


def _ordered_average_precision(relevant_in_order: pl.Expr, k: int | None) -> pl.Expr:
    """sum over relevant rows at positions p <= k of (relevant rows at positions <= p) / p, in one order."""
    element = pl.element()
    position = pl.int_range(1, pl.len() + 1, dtype=pl.Int64).cast(pl.Float64)
    per_position = element * element.cum_sum() / position
    return relevant_in_order.implode().list.eval((per_position if k is None else per_position.head(k)).sum())


def _block_averaged_precision(score: pl.Expr, relevant: pl.Expr, cut: int | None) -> pl.Expr:
    """The expectation of the sum above over the orders of the tied rows.  A block at positions a..b (n rows),
    r of them relevant and C relevant rows above it, adds r/n (C+1) D + r(r-1)/(n(n-1)) (M - a D), with
    D = sum 1/p and M = count over its positions p <= k (see `measures.average_precision`): each of its
    relevant rows adds 1/r of it.  C + 1 and C + r are the first and last ranks of a relevant row's score
    among the relevant rows' scores."""
    among_relevant = pl.when(relevant > 0).then(score)
    fields = {
        **_block_positions(score),
        "relevant": relevant,
        "first_relevant": among_relevant.rank("min", descending=True),
        "last_relevant": among_relevant.rank("max", descending=True),
    }
    inverse = _block_weights(fields, "inverse", cut, _Weight(lambda p: 1.0 / p.cast(pl.Float64), lambda p: 1.0 / p))
    count = _block_weights(fields, "count", cut, _UNIT_WEIGHT)
    a, n = _field("a").cast(pl.Float64), (_field("b") - _field("a") + 1).cast(pl.Float64)
    first, last = _field("first_relevant").cast(pl.Float64), _field("last_relevant").cast(pl.Float64)
    pairs = pl.when(n > 1).then((last - first) / (n * (n - 1.0))).otherwise(0.0)
    per_row = _field("relevant") * (first / n * inverse + pairs * (count - a * inverse))
    return _let(fields, per_row.fill_null(0.0)).list.sum()


def average_precision(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    k: int | None = None,
    ties: Ties = "average",
    threshold: float = 0.0,
    no_relevant: NoRelevant = 0.0,
    doc: Column | None = None,
) -> pl.Expr:
    """Average precision of each group (trec_eval's map, map_cut_k with k): over its relevant rows at
    positions p <= k, the sum of the precision at p, divided by R, the group's relevant rows.

    R counts the group's own rows only, as for `recall`.

    Parameters
    ----------
    relevance, score, k, doc, threshold, no_relevant
        As for `recall`.
    ties
        As for `ndcg`; "average" gives the exact expectation over every order of the tied rows.

    Returns
    -------
    pl.Expr
        A Float64 expression named `average_precision` or `average_precision@{k}`, one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1, 2, 2], "relevance": [0, 1, 1, 1, 0], "score": [3, 2, 1, 5, 5]})
    >>> df.group_by("query", maintain_order=True).agg(exprs.average_precision())
    shape: (2, 2)
    ┌───────┬───────────────────┐
    │ query ┆ average_precision │
    │ ---   ┆ ---               │
    │ i64   ┆ f64               │
    ╞═══════╪═══════════════════╡
    │ 1     ┆ 0.583333          │
    │ 2     ┆ 0.75              │
    └───────┴───────────────────┘
    """
    i, relevant, checks = _threshold_inputs("average_precision", relevance, score, doc, k, ties, threshold)
    finish = _no_relevant_finish(no_relevant, _check_threshold(threshold))
    summed = _ordered_average_precision(_in_ranked_order(i, _gain(i), relevant), i.cut).list.first()
    if i.ties == "average":

        def averaged(score: pl.Expr, relevant: pl.Expr) -> pl.Expr:
            return _block_averaged_precision(score, relevant, i.cut)

        summed = pl.coalesce(_in_tied_groups(i, {"relevant": relevant}, averaged), summed)
    return _finish(i, _column_name("average_precision", i.k), summed / relevant.sum(), checks, finish)


def success(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    k: int | None = None,
    ties: Ties = "average",
    threshold: float = 0.0,
    doc: Column | None = None,
) -> pl.Expr:
    """Success of each group (trec_eval's success_k, ranx's hit_rate@k): 1 when a relevant row is within the
    first k positions, else 0.

    Parameters
    ----------
    relevance, score, k, doc, threshold
        As for `precision`.
    ties
        As for `ndcg`; "average" gives the exact probability over every order of the tied rows.

    Returns
    -------
    pl.Expr
        A Float64 expression named `success` or `success@{k}`, one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1, 2, 2], "relevance": [0, 1, 0, 1, 0], "score": [3, 2, 1, 5, 5]})
    >>> df.group_by("query", maintain_order=True).agg(exprs.success(k=1))
    shape: (2, 2)
    ┌───────┬───────────┐
    │ query ┆ success@1 │
    │ ---   ┆ ---       │
    │ i64   ┆ f64       │
    ╞═══════╪═══════════╡
    │ 1     ┆ 0.0       │
    │ 2     ┆ 0.5       │
    └───────┴───────────┘
    """
    i, relevant, checks = _threshold_inputs("success", relevance, score, doc, k, ties, threshold)
    name = _column_name("success", i.k)
    if i.ties == "average":
        expected = _expected_from_first_relevant_block(i.cut, lambda probability, _position: probability)
        return _finish(i, name, _from_counts(_first_relevant_block(i, relevant > 0), expected), checks)
    relevant_in_order = _in_ranked_order(i, _gain(i), relevant).implode()
    within = _weighted_by_position(relevant_in_order, i.cut, _UNIT_WEIGHT.expression)
    return _finish(i, name, within.list.max().fill_null(0.0), checks)


# `hit_rate` is ranx's name for success, as `evaluate`'s alias: the same expression and column (`success@k`)
hit_rate = success


def f1(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    k: int | None = None,
    ties: Ties = "average",
    threshold: float = 0.0,
    no_relevant: NoRelevant = 0.0,
    doc: Column | None = None,
) -> pl.Expr:
    """F1 of each group (ranx's f1@k): the harmonic mean of precision@k and recall@k, 2 hits@k / (k + R),
    R the group's relevant rows; without k, k is the group's rows.

    R counts the group's own rows only, as for `recall`.  The value is linear in hits@k, so under
    ties="average" it is the exact expectation over every order of the tied rows.

    Parameters
    ----------
    relevance, score, k, doc, ties, threshold, no_relevant
        As for `recall`.

    Returns
    -------
    pl.Expr
        A Float64 expression named `f1` or `f1@{k}`, one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1, 2, 2], "relevance": [1, 1, 0, 1, 0], "score": [3, 2, 1, 5, 5]})
    >>> df.group_by("query", maintain_order=True).agg(exprs.f1(k=1))
    shape: (2, 2)
    ┌───────┬──────────┐
    │ query ┆ f1@1     │
    │ ---   ┆ ---      │
    │ i64   ┆ f64      │
    ╞═══════╪══════════╡
    │ 1     ┆ 0.666667 │
    │ 2     ┆ 0.5      │
    └───────┴──────────┘
    """
    i, relevant, checks = _threshold_inputs("f1", relevance, score, doc, k, ties, threshold)
    finish = _no_relevant_finish(no_relevant, _check_threshold(threshold))
    total = relevant.sum()
    length = pl.len().cast(pl.Float64) if i.k is None else pl.lit(_as_float(i.k))
    value = pl.when(total > 0).then(2.0 * _hits(i, relevant) / (length + total)).otherwise(math.nan)
    return _finish(i, _column_name("f1", i.k), value, checks, finish)


def _hits_within_relevant_total(i: _Inputs, relevant: pl.Expr) -> pl.Expr:
    """The relevant rows within the first R positions, R the group's relevant rows; under ties="average" their
    expected number: a row of the tie block at positions a..b adds (min(b, R) - min(a - 1, R)) / (b - a + 1)."""
    total = relevant.sum()
    ranked = _in_ranked_order(i, _gain(i), relevant).implode()
    # the running count at position R (cheaper than a head of a per-group length); R = 0 reads the last
    # position, whose count is R, 0; an empty group (a window) has none
    running = ranked.list.eval(pl.element().cum_sum())
    ordered = running.list.get(total.cast(pl.Int64) - 1, null_on_oob=True).fill_null(0.0)
    if i.ties != "average":
        return ordered

    def averaged(score: pl.Expr, relevant: pl.Expr) -> pl.Expr:
        fields = {**_block_positions(score), "relevant": relevant}
        a, b = _field("a").cast(pl.Float64), _field("b").cast(pl.Float64)
        r = _field("relevant").sum()
        within = pl.min_horizontal(b, r) - pl.min_horizontal(a - 1.0, r)
        return _let(fields, _field("relevant") * within / (b - a + 1.0)).list.sum()

    return pl.coalesce(_in_tied_groups(i, {"relevant": relevant}, averaged), ordered)


def rprec(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    ties: Ties = "average",
    threshold: float = 0.0,
    no_relevant: NoRelevant = 0.0,
    doc: Column | None = None,
) -> pl.Expr:
    """R-precision of each group (trec_eval's Rprec): its relevant rows within the first R positions, divided
    by R, the group's relevant rows.

    R counts the group's own rows only, as for `recall` (trec_eval counts the relevant judged documents the
    run did not retrieve too: the namespace's `qrels=`).  No cut-off: R is the cut-off.

    Parameters
    ----------
    relevance, score, doc, threshold, no_relevant
        As for `recall`.
    ties
        As for `ndcg`; "average" gives the exact expectation over every order of the tied rows.

    Returns
    -------
    pl.Expr
        A Float64 expression named `rprec`, one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1, 2, 2], "relevance": [0, 1, 1, 1, 0], "score": [3, 2, 1, 5, 5]})
    >>> df.group_by("query", maintain_order=True).agg(exprs.rprec())
    shape: (2, 2)
    ┌───────┬───────┐
    │ query ┆ rprec │
    │ ---   ┆ ---   │
    │ i64   ┆ f64   │
    ╞═══════╪═══════╡
    │ 1     ┆ 0.5   │
    │ 2     ┆ 0.5   │
    └───────┴───────┘
    """
    i, relevant, checks = _threshold_inputs("rprec", relevance, score, doc, None, ties, threshold)
    finish = _no_relevant_finish(no_relevant, _check_threshold(threshold))
    return _finish(i, "rprec", _hits_within_relevant_total(i, relevant) / relevant.sum(), checks, finish)


# ----------------------------------------------------------------------------------------------- cascade
def _refuse_average(kind: str, i: _Inputs) -> None:
    """The namespace's refusal of ties="average" for a measure with no exact expectation over tied orders."""
    if i.ties == "average":
        _spec._refuse_average(_spec.measures_of(kind, kind, i.k))


def _err_inputs(metric: str, relevance: object, score: object, doc: object, k: object, ties: object) -> _Inputs:
    i = _inputs(metric, relevance, score, doc, k, ties, "linear")
    _refuse_average(metric, i)
    return i


def _stopping_probabilities(i: _Inputs) -> pl.Expr:
    return stopping_probability(i.relevance.cast(pl.Float64, strict=False))


def _err_checks(i: _Inputs) -> list[_Check]:
    """The namespace's checks, and ERR's grades in [0, 4]."""
    grade = i.relevance.cast(pl.Float64, strict=False)
    outside = (grade < 0) | (grade > ERR_MAX_GRADE)
    quote = _value_message(ERR_GRADE_MESSAGE)

    def message(frame: pl.DataFrame, failing: pl.Series) -> str:
        return quote(frame, failing) + _IN_GROUPS.format(groups=int((failing > 0).sum()))

    first_outside = pl.when(outside).then(i.relevance).drop_nulls().first()
    return [*_checks("err", i, _gain(i)), _Check("err_grade", outside.sum(), message, first_outside)]


def _cascade(stops_in_order: pl.Expr, k: int | None) -> pl.Expr:
    """ERR of each group's stopping probabilities in ranked order (a list): over positions p <= k, the sum of
    R_p / p x the product of 1 - R over the positions above p."""
    listed = stops_in_order if k is None else stops_in_order.list.head(k)
    stop = pl.element()
    continuation = (1.0 - stop).cum_prod().shift(1, fill_value=1.0)
    position = pl.int_range(1, pl.len() + 1, dtype=pl.Int64).cast(pl.Float64)
    return listed.list.eval((stop * continuation / position).sum()).list.first()


def _ranked_err(i: _Inputs) -> pl.Expr:
    """ERR@k in the tie mode's order (the bounds order a tie block by grade: ERR's best and worst orders)."""
    stops = _stopping_probabilities(i)
    return _cascade(_in_ranked_order(i, stops, stops).implode(), i.cut)


def err(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    k: int | None = None,
    ties: Ties = "average",
    doc: Column | None = None,
) -> pl.Expr:
    """ERR@k of each group, expected reciprocal rank as ir_measures' ERR@k (gdeval) computes it: over positions
    p <= k, the sum of R(g_p) / p x the product of 1 - R(g) over the positions above, with R(g) =
    (2**g - 1) / 2**4 for the relevance grade g (gdeval's largest grade 4).

    The grade is the relevance itself: there is no gain option (`evaluate` reads its `gain` only to refuse a
    tie bound whose gain mapping does not order the grades).  Grades must lie in [0, 4].

    Parameters
    ----------
    relevance, score, k, doc
        As for `ndcg`.
    ties
        "reverse", "input", "doc", "optimistic" or "pessimistic" (the bounds order a tie block by descending
        or ascending grade: ERR's best and worst orders).  "average", the default as in the namespace, is
        refused with the namespace's message: ERR has no exact expectation over tied orders here.

    Returns
    -------
    pl.Expr
        A Float64 expression named `err` or `err@{k}`, one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1], "relevance": [0, 4, 2], "score": [3, 2, 1]})
    >>> df.group_by("query").agg(exprs.err(ties="input"), exprs.err(k=2, ties="input"))
    shape: (1, 3)
    ┌───────┬──────────┬─────────┐
    │ query ┆ err      ┆ err@2   │
    │ ---   ┆ ---      ┆ ---     │
    │ i64   ┆ f64      ┆ f64     │
    ╞═══════╪══════════╪═════════╡
    │ 1     ┆ 0.472656 ┆ 0.46875 │
    └───────┴──────────┴─────────┘
    """
    i = _err_inputs("err", relevance, score, doc, k, ties)
    return _finish(i, _column_name("err", i.k), _ranked_err(i), _err_checks(i))


def nerr(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    k: int | None = None,
    ties: Ties = "average",
    no_relevant: NoRelevant = 0.0,
    doc: Column | None = None,
) -> pl.Expr:
    """nERR@k of each group: `err` divided by the ideal ERR@k, that of the group's grades sorted descending.

    The ideal comes from the group's own rows (the namespace's `qrels=` takes every judged document).

    Parameters
    ----------
    relevance, score, k, doc, ties
        As for `err`.
    no_relevant
        nERR of a group whose ideal ERR is 0 (no grade above 0): a float, None (null) or "error" (raise).

    Returns
    -------
    pl.Expr
        A Float64 expression named `nerr` or `nerr@{k}`, one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 2], "relevance": [0, 4, 0], "score": [3, 2, 1]})
    >>> df.group_by("query", maintain_order=True).agg(exprs.nerr(ties="input"))
    shape: (2, 2)
    ┌───────┬──────┐
    │ query ┆ nerr │
    │ ---   ┆ ---  │
    │ i64   ┆ f64  │
    ╞═══════╪══════╡
    │ 1     ┆ 0.5  │
    │ 2     ┆ 0.0  │
    └───────┴──────┘
    """
    i = _err_inputs("nerr", relevance, score, doc, k, ties)
    finish = _no_relevant_finish(no_relevant, 0.0, NO_GRADE_ABOVE_ZERO_MESSAGE)
    ideal = _cascade(_stopping_probabilities(i).implode().list.sort(descending=True), i.cut)
    # grades are not negative: an ideal ERR of 0 has an ERR of 0, and only 0 / 0 is NaN
    return _finish(i, _column_name("nerr", i.k), _ranked_err(i) / ideal, _err_checks(i), finish)


# ----------------------------------------------------------------------------------------------- rbp
def _check_persistence(p: object) -> float:
    if not _spec._is_real(p):
        msg = f"p must be a float, got {p!r}."
        raise TypeError(msg)
    refusal = _rbp.refused_persistence(float(p))
    if refusal is not None:
        msg = f"option p={p!r} is refused: {refusal}."
        raise ValueError(msg)
    return float(p)


def _persistence_weight(p: float) -> _Weight:
    return _Weight(
        lambda position: pl.lit(p).pow(position.cast(pl.Float64) - 1.0), lambda position: p ** (position - 1)
    )


def rbp(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    k: int | None = None,
    ties: Ties = "average",
    gain: Gain = "linear",
    p: float = _rbp.DEFAULT_PERSISTENCE,
    doc: Column | None = None,
) -> pl.Expr:
    """RBP of each group, rank-biased precision as trec_eval's rbp: (1 - p) x the sum over positions i <= k of
    p**(i - 1) x g', g' the gain divided by the group's greatest gain when that exceeds 1 (graded 0..L by L).

    The greatest gain is the group's own rows' (the namespace's `qrels=` takes every judged document).

    Parameters
    ----------
    relevance, score, k, doc
        As for `ndcg`.  Without k the whole group counts.
    ties
        As for `ndcg`; "average" gives the exact expectation over every order of the tied rows.
    gain
        As for `ndcg`; a gain mapping must not give a negative gain.
    p
        The persistence, strictly between 0 and 1 (trec_eval's default 0.9; ir_measures' is 0.8).

    Returns
    -------
    pl.Expr
        A Float64 expression named as `evaluate` names the measure: `rbp`, `rbp@{k}`, and with another p
        `rbp(p=0.8)`, `rbp(p=0.8)@{k}`; one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1], "relevance": [2, 0, 1], "score": [3, 2, 1]})
    >>> df.group_by("query").agg(exprs.rbp(), exprs.rbp(p=0.5, k=1))
    shape: (1, 3)
    ┌───────┬────────┬──────────────┐
    │ query ┆ rbp    ┆ rbp(p=0.5)@1 │
    │ ---   ┆ ---    ┆ ---          │
    │ i64   ┆ f64    ┆ f64          │
    ╞═══════╪════════╪══════════════╡
    │ 1     ┆ 0.1405 ┆ 0.5          │
    └───────┴────────┴──────────────┘
    """
    i = _inputs("rbp", relevance, score, doc, k, ties, gain)
    persistence = _check_persistence(p)
    gain_expr = _gain(i)
    # g / high when high > 1, else g: g / max(high, 1), divided out of the sum (one division per group)
    weighted = _positional_sum(i, gain_expr, gain_expr, _persistence_weight(persistence))
    total = weighted / pl.max_horizontal(gain_expr.max(), 1.0)
    options = options_suffix([("p", persistence)] if persistence != _rbp.DEFAULT_PERSISTENCE else [])
    name = _column_name(f"rbp{options}", i.k)
    return _finish(i, name, (1.0 - persistence) * total, _checks("rbp", i, gain_expr))


# ----------------------------------------------------------------------------------------------- interpolated
def _check_level(level: object) -> float:
    if not _spec._is_real(level):
        msg = f"level must be a recall level (a float from 0 to 1), got {level!r}."
        raise TypeError(msg)
    if not 0.0 <= float(level) <= 1.0:
        msg = f"level must be a recall level from 0 to 1, got {level!r}."
        raise ValueError(msg)
    return float(level)


def _interpolated_precisions(levels: Sequence[float]) -> pl.Expr:
    """Inside a `list.eval` over a group's relevant flags in ranked order, the interpolated precision at each
    level: the greatest precision c / p over its relevant rows with c >= max(lround(level R), 1), c the
    relevant rows at or above the row and p its position (trec_eval rounds level R half away from zero).  That
    is the greatest precision from the n-th relevant row on, n = max(lround(level R), 1): one suffix maximum
    serves every level.  A group without a relevant row gives nulls."""
    relevant = pl.element()
    position = pl.int_range(1, pl.len() + 1, dtype=pl.Int64).cast(pl.Float64)
    precisions = (relevant.cum_sum() / position).filter(relevant > 0)
    greatest_from = precisions.reverse().cum_max().reverse()
    scaled = pl.lit(pl.Series(levels, dtype=pl.Float64)) * relevant.sum()
    needed = pl.max_horizontal(scaled.round(0, mode="half_away_from_zero"), 1.0).cast(pl.Int64)
    return greatest_from.gather(needed - 1, null_on_oob=True)


def _interpolated_inputs(
    metric: str, column: str, relevance: object, score: object, doc: object, ties: object, threshold: object
) -> tuple[_Inputs, pl.Expr, pl.Expr, list[_Check]]:
    """The inputs, the relevant flags in ranked order (a list; the bounds put a tie block's relevant rows first
    or last), R and the checks; ties="average" refused as the namespace refuses it."""
    i, relevant, checks = _threshold_inputs(metric, relevance, score, doc, None, ties, threshold)
    if i.ties == "average":
        _spec._refuse_average((_spec.Measure(metric, None, column),))
    return i, _in_ranked_order(i, _gain(i), relevant).implode(), relevant.sum(), checks


def iprec_at_recall(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    level: float,
    ties: Ties = "average",
    threshold: float = 0.0,
    no_relevant: NoRelevant = 0.0,
    doc: Column | None = None,
) -> pl.Expr:
    """Interpolated precision at a recall level of each group (trec_eval's iprec_at_recall, `evaluate`'s
    `iprec@level`): the greatest precision at a relevant row whose recall reaches the level, 0 when none does.

    R counts the group's own rows only, as for `recall`.

    Parameters
    ----------
    relevance, score, doc, threshold, no_relevant
        As for `recall`.
    level
        The recall level, from 0 to 1 (trec_eval's are 0.0, 0.1, ..., 1.0); level R is rounded half away from
        zero, and at least one relevant row is needed.
    ties
        "reverse", "input", "doc", "optimistic" or "pessimistic" (a tie block's relevant rows first or last).
        "average", the default as in the namespace, is refused with the namespace's message: the greatest of
        ratios has no exact expectation over tied orders here.

    Returns
    -------
    pl.Expr
        A Float64 expression named `iprec@{level}` (`iprec@0.5`), one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1, 1], "relevance": [0, 1, 0, 1], "score": [4, 3, 2, 1]})
    >>> df.group_by("query").agg(exprs.iprec_at_recall(level=0.5, ties="input"))
    shape: (1, 2)
    ┌───────┬───────────┐
    │ query ┆ iprec@0.5 │
    │ ---   ┆ ---       │
    │ i64   ┆ f64       │
    ╞═══════╪═══════════╡
    │ 1     ┆ 0.5       │
    └───────┴───────────┘
    """
    checked_level = _check_level(level)
    column = _spec.level_column("iprec", checked_level)
    i, ranked, total, checks = _interpolated_inputs("iprec", column, relevance, score, doc, ties, threshold)
    finish = _no_relevant_finish(no_relevant, _check_threshold(threshold))
    interpolated = ranked.list.eval(_interpolated_precisions([checked_level])).list.first()
    value = pl.when(total > 0).then(interpolated).otherwise(math.nan)
    return _finish(i, column, value, checks, finish)


# trec_eval's recall levels of 11pt_avg
_ELEVEN_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def eleven_point_average(
    relevance: Column = "relevance",
    score: Column = "score",
    *,
    ties: Ties = "average",
    threshold: float = 0.0,
    no_relevant: NoRelevant = 0.0,
    doc: Column | None = None,
) -> pl.Expr:
    """trec_eval's 11pt_avg of each group: the mean of `iprec_at_recall` at the levels 0.0, 0.1, ..., 1.0
    (summed from the highest level down, as trec_eval sums them).

    Parameters
    ----------
    relevance, score, doc, ties, threshold, no_relevant
        As for `iprec_at_recall` (ties="average" refused).

    Returns
    -------
    pl.Expr
        A Float64 expression named `11pt_avg`, one value per group.

    Examples
    --------
    >>> import polars as pl
    >>> from lodestar_polars import exprs
    >>> df = pl.DataFrame({"query": [1, 1, 1, 1], "relevance": [0, 1, 0, 1], "score": [4, 3, 2, 1]})
    >>> df.group_by("query").agg(exprs.eleven_point_average(ties="input"))
    shape: (1, 2)
    ┌───────┬──────────┐
    │ query ┆ 11pt_avg │
    │ ---   ┆ ---      │
    │ i64   ┆ f64      │
    ╞═══════╪══════════╡
    │ 1     ┆ 0.5      │
    └───────┴──────────┘
    """
    i, ranked, total, checks = _interpolated_inputs("11pt_avg", "11pt_avg", relevance, score, doc, ties, threshold)
    finish = _no_relevant_finish(no_relevant, _check_threshold(threshold))
    # trec_eval adds the levels' values from the highest level down, then divides by their number
    mean = ranked.list.eval(_interpolated_precisions(_ELEVEN_LEVELS[::-1]).sum() / len(_ELEVEN_LEVELS)).list.first()
    value = pl.when(total > 0).then(mean).otherwise(math.nan)
    return _finish(i, "11pt_avg", value, checks, finish)
