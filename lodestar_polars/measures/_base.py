"""The vocabulary a measure module speaks: the per-row, per-block and per-query columns the plan computes, the
`Term` a measure sums per query, the `Context` of a call, and the `Definition` every module declares.

Column names are internal (`__lodestar_*`): the plan renames every user column on the way in, so none of
these can collide with one.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, NamedTuple

import polars as pl

from .._checks import DataCheck

PREFIX = "__lodestar_"

# per row: 1-based position by descending score (ties broken as `ties` says), and the position the counting
# measures read when tie bounds order a tie block differently for them (`Context.position`)
POSITION = f"{PREFIX}position"
RELEVANT_POSITION = f"{PREFIX}relevant_position"
# per row: 1 / log_b(position + 1)
DISCOUNT = f"{PREFIX}discount"
# per row: position and discount by descending gain (the ideal order), without judgments
IDEAL_POSITION = f"{PREFIX}ideal_position"
IDEAL_DISCOUNT = f"{PREFIX}ideal_discount"
# per row: the relevance level (with judgments, the judged level: null for an unjudged document)
RELEVANCE = f"{PREFIX}relevance"
# per row: the gain (gain family) and the relevant flag, relevance above `threshold` (threshold family)
GAIN = f"{PREFIX}gain"
RELEVANT = f"{PREFIX}relevant"
# per relevant row: the relevant rows ranked above it
RELEVANT_BEFORE = f"{PREFIX}relevant_before"
# per judged row (with judgments: judged at a level >= 0; without: every row): the judged rows ranked above it
JUDGED_BEFORE = f"{PREFIX}judged_before"
# per row, with judgments: the document is in the qrels at any level (trec_eval's pool, with negative levels:
# pooled, not assessed); per pooled row (without judgments: every row): the pooled rows ranked above it
POOLED = f"{PREFIX}pooled"
POOLED_BEFORE = f"{PREFIX}pooled_before"
# per row: ERR's continuation, the product over the rows ranked above it of 1 - their stopping probability
CONTINUATION = f"{PREFIX}continuation"
# per row: its query's relevant total R and judged non-relevant total N (`Quantity.QUERY_TOTALS`)
ROW_RELEVANT_TOTAL = f"{PREFIX}row_relevant_total"
ROW_NONRELEVANT_TOTAL = f"{PREFIX}row_nonrelevant_total"
# per row, with ties="average": the row shares its score with another row of its query
TIED = f"{PREFIX}tied"

# per row (`Quantity.RUN_PREFIXES`): the gain and the DCG summed over the positions 1..p of the row's position p;
# with ties="average", over the positions 1..p-1, the discounts and the DCG expected over the tied orders (each
# gain replaced by its tie block's mean gain)
CUMULATIVE_GAIN = f"{PREFIX}cumulative_gain"
CUMULATIVE_DCG = f"{PREFIX}cumulative_dcg"
DISCOUNT_ABOVE = f"{PREFIX}discount_above"
EXPECTED_DCG_ABOVE = f"{PREFIX}expected_dcg_above"
# per row (`Quantity.IDEAL_PREFIXES`), of the ideal order at the row's position p (positive gains sorted
# descending; with judgments those of the query's judged documents): its DCG over 1..p, its sum of
# max(gain - 1, 0) over 1..p (G's costs), and the sum of 1 / (ideal DCG at b) over the boundaries b >= p, the
# last positions of each positive gain value (Rndcg's weights); past the ideal list, its totals and 0
IDEAL_DCG_AT = f"{PREFIX}ideal_dcg_at"
IDEAL_EXCESS_AT = f"{PREFIX}ideal_excess_at"
BOUNDARY_WEIGHT_AT = f"{PREFIX}boundary_weight_at"
# per row, without judgments: the gain at the row's position in the ideal order (the prefixes' windows read it)
IDEAL_GAIN_AT = f"{PREFIX}ideal_gain_at"
# per relevant row (`Quantity.COMPATIBLE_IDEAL`): the query's relevant documents (with judgments: its judged ones,
# retrieved or not) of a higher level, and of its level (both per row before the rows that count are taken, so that
# rows past max_retrieved still count), and its position in the ideal ranking most compatible with the run (`compat`)
HIGHER_LEVELS = f"{PREFIX}higher_levels"
LEVEL_TOTAL = f"{PREFIX}level_total"
COMPATIBLE_IDEAL_POSITION = f"{PREFIX}compatible_ideal_position"

# per tie block (ties="average"): its size n, relevant rows r, start s (positions s+1..s+n), summed gain, and
# the relevant rows ranked above it
BLOCK_SIZE = f"{PREFIX}block_size"
BLOCK_RELEVANT = f"{PREFIX}block_relevant"
BLOCK_START = f"{PREFIX}block_start"
BLOCK_GAIN = f"{PREFIX}block_gain"
BLOCK_BEFORE = f"{PREFIX}block_before"
# per tie block: its unjudged rows (ties="average": a block sum; tie bounds: a window column, `Quantity.TIE_BLOCKS`)
BLOCK_UNJUDGED = f"{PREFIX}block_unjudged"

# per query: its rows, its relevant rows (without judgments) or relevant judged documents (with them)
ROWS = f"{PREFIX}rows"
RELEVANT_COUNT = f"{PREFIX}relevant_count"
JUDGED_RELEVANT = f"{PREFIX}judged_relevant"
# per query, with judgments: the query has rows in the run (false for a judged query missing from it)
IN_RUN = f"{PREFIX}in_run"
# per query (`Quantity.IDEAL_PREFIXES`): the positive gains of its levels (with judgments: of its judged
# documents, retrieved or not), their sum, and the distinct positive gain values (Rndcg's boundaries)
POSITIVE_GAINS = f"{PREFIX}positive_gains"
POSITIVE_GAIN_TOTAL = f"{PREFIX}positive_gain_total"
BOUNDARIES = f"{PREFIX}boundaries"
# per row: its query's greatest gain of its levels (without judgments: of its rows; with them: of its judged
# documents, retrieved or not), taken with 0 (`Quantity.GREATEST_GAIN`)
GAIN_HIGH = f"{PREFIX}gain_high"


def term_name(name: str, cutoff: int | None) -> str:
    """A per-query (or per-block) column computed per cut-off."""
    return f"{PREFIX}{name}_{'all' if cutoff is None else cutoff}"


def ideal_dcg(cutoff: int | None) -> str:
    """The per-query ideal DCG@k column (`Quantity.IDEAL_DCG`): the positive gains sorted descending, each
    times its position's discount (a gain <= 0 adds nothing: trec_eval's ideal stops at the first of them)."""
    return term_name("ideal", cutoff)


def ideal_err(cutoff: int | None) -> str:
    """The per-query ideal ERR@k column (`Quantity.IDEAL_ERR`)."""
    return term_name("ideal_err", cutoff)


# ERR's largest grade (gdeval's MAX_JUDGMENT): a grade g stops the user with probability (2**g - 1) / 2**4
ERR_MAX_GRADE = 4


def stopping_probability(grade: pl.Expr) -> pl.Expr:
    """ERR's chance (2**g - 1) / 2**4 that a document of grade g satisfies the user (Chapelle et al., 2009,
    with gdeval's fixed largest grade 4); an unjudged document (null) never does."""
    return (pl.lit(2.0).pow(grade.cast(pl.Float64)) - 1.0).fill_null(0.0) / float(2**ERR_MAX_GRADE)


def exact_quotient(numerator: pl.Expr, divisor: float) -> pl.Expr:
    """`numerator` / `divisor`, correctly rounded as C's division.  Polars 2.1 divides a float column by a scalar
    as a product with the scalar's reciprocal, which may differ in the last bit (3 / 20 gives 0.15000000000000002
    where trec_eval's 3.0 / 20 is 0.15, printing 0.0438 for its 0.0437 at a rounding boundary of a mean): the
    divisor is made a column, so that Polars divides element by element."""
    return numerator / (numerator * 0.0 + divisor)


# a cut-off at or past this position keeps every row: no query has 2**40 rows, and the plan's integer
# arithmetic on positions stays far from overflowing
LONGEST_CUTOFF = 1 << 40


def cut_at(cutoff: int | None) -> int | None:
    """The position a measure is cut at in the plan: its k, or `LONGEST_CUTOFF` for any larger k (a k past
    the list scores the whole list)."""
    return None if cutoff is None else min(cutoff, LONGEST_CUTOFF)


def within(position: str, cutoff: int | None) -> pl.Expr:
    # a column, not a literal: inside an aggregation `lit(True).sum()` would count 1, not the rows
    return pl.col(position) > 0 if cutoff is None else pl.col(position) <= cutoff


def cut(value: pl.Expr, position: str, cutoff: int | None) -> pl.Expr:
    """A per-row value, 0 past the cut-off."""
    if cutoff is None:
        return value
    return pl.when(pl.col(position) <= cutoff).then(value).otherwise(0.0)


class Quantity(enum.Enum):
    """A shared quantity the plan computes once per call when a measure of the call needs it: what it reads and
    how each site of the plan builds it is its `QuantityPlan` in `_plan/registry.py`."""

    GAIN = "the gain of each row (and, with judgments, the gain checks)"
    RELEVANT = "the relevant flag of each row"
    DISCOUNT = "the discount 1 / log_b(position + 1) of each row"
    IDEAL_DCG = "the ideal DCG per query and cut-off: `ideal_dcg(cutoff)`"
    RELEVANT_COUNT = "the relevant rows (judged relevant documents with judgments) per query: `Context.relevant_total`"
    RELEVANT_BEFORE = "the relevant rows ranked above each relevant row (per block: `BLOCK_BEFORE`)"
    JUDGED_BEFORE = (
        "the judged rows ranked above each judged row (`JUDGED_BEFORE`; with ties='average' in the plan's arbitrary"
        " order of a tie block: its least over the block counts the judged rows above the block)"
    )
    POOLED_BEFORE = "the pooled rows ranked above each pooled row (`POOLED_BEFORE`; deterministic tie modes)"
    CONTINUATION = "ERR's continuation of each row: the product of 1 - stopping probability over the rows above it"
    IDEAL_ERR = "the ideal ERR per query and cut-off (grades sorted descending): `ideal_err(cutoff)`"
    TIE_BLOCKS = (
        "under tie bounds (ties='optimistic' / 'pessimistic'): each row's tie block's start s, size n and unjudged"
        " rows as window columns (`BLOCK_START`, `BLOCK_SIZE`, `BLOCK_UNJUDGED`), positions s+1..s+n"
    )
    GREATEST_GAIN = (
        "the greatest gain of the query's levels, taken with 0 (`GAIN_HIGH`): with judgments over all of the"
        " query's judged documents, retrieved or not"
    )
    RUN_PREFIXES = (
        "the gain and DCG over positions 1..p at each row's position p (`CUMULATIVE_GAIN`, `CUMULATIVE_DCG`); with"
        " ties='average' also the discounts and the expected DCG over positions 1..p-1 (`DISCOUNT_ABOVE`,"
        " `EXPECTED_DCG_ABOVE`)"
    )
    IDEAL_PREFIXES = (
        "the ideal order's prefixes at each row's position (`IDEAL_DCG_AT`, `IDEAL_EXCESS_AT`, `BOUNDARY_WEIGHT_AT`)"
        " and per query `POSITIVE_GAINS`, `POSITIVE_GAIN_TOTAL`, `BOUNDARIES`; with judgments from every judged"
        " document of the query, retrieved or not"
    )
    COMPATIBLE_IDEAL = (
        "each relevant row's position in the ideal ranking most compatible with the run (`COMPATIBLE_IDEAL_POSITION`):"
        " the relevant documents by descending level, within a level the retrieved ones scored >= 0 in the run's"
        " order, then the unretrieved ones, then those scored < 0 (ir_measures' Compat); with judgments from every"
        " judged document of the query, retrieved or not"
    )
    QUERY_TOTALS = (
        "the query's R and judged non-relevant total N on every row (`ROW_RELEVANT_TOTAL`, `ROW_NONRELEVANT_TOTAL`):"
        " with judgments from all of the query's judged documents, retrieved or not"
    )


def unjudged(judged: bool) -> pl.Expr:
    """Per row: unjudged (with judgments: not judged, or judged at a negative level, as trec_eval's unj);
    without judgments every row is judged (false on every row: a column, so that a sum counts per row)."""
    missing = pl.col(RELEVANCE).is_null()
    return missing if judged else missing & pl.lit(False)


Family = Literal["gain", "threshold"]
FAMILY_QUANTITY: dict[Family, Quantity] = {"gain": Quantity.GAIN, "threshold": Quantity.RELEVANT}


class Term(NamedTuple):
    """How a per-query sum is computed: `row`, elementwise per row, summed (or its least value taken, when
    `least`) over the query's rows; with tie averaging, over its rows in no tie, while `block`, elementwise over
    the block sums, gives the tie blocks' part (None: ties cannot change the sum).  `block_sums` are the
    per-block aggregations (each aliased) that `block` reads besides `BLOCK_SIZE`, which every block has.  One
    (keys, score) group-by over the tied rows computes the block sums of every term and cut-off of a call once
    (Polars does not share a sub-expression between the aggregations of a group-by).  A `least` term is null
    for a query with no row (a judged query missing from the run); a sum is 0.  `judged_rows`: the row form is
    0 (a sum) or null (a least) on every row without a judged level (with judgments: unjudged, or judged at a
    negative level; it reads the relevant flag or the gain, which are false and 0 there), or for a least, no less
    there than at some judged row of its query (rbp's running sum, which only a judged row's gain raises), so
    that with judgments the plan takes it over the judged rows only (most of a deep run's rows are unjudged); a
    term that counts unjudged rows (unj, utility's non-relevant, the retrieved count) keeps the default.
    `whole`: the row form is a whole number on every row (a count: 0 or 1, or a tie block's count on its first
    row), so that its float sum is exact whatever the order of the rows (every partial sum a whole number below
    2**53), and `exact_sums` sums it as it is, without the partial totals an exact sum of fractions needs."""

    row: pl.Expr
    block: pl.Expr | None
    least: bool = False
    block_sums: tuple[pl.Expr, ...] = ()
    judged_rows: bool = False
    whole: bool = False


class Running(NamedTuple):
    """A per-row column the plan computes before the group-by, as a window: in position order over each query,
    the running product (`operation` "product") or sum of `value` over positions 1..p, or 1..p-1 when
    `exclusive` (then starting from 1 or 0); or over the row's tie block (its query's rows of its score), the
    sum ("block_sum") or least ("block_least") of `value`.  A measure whose tool adds or multiplies one position
    after another (trec_eval's rbp and inst) reads its total from a running one (the least of a running product
    of factors in [0, 1], the greatest of a running sum of non-negative values), so that its sums are those of
    the tool to the last bit; a block one gives each row of a tie block what the block's sums need of the others
    (an aggregation mixed with the rows inside the block group-by would leave the streaming engine).  A "row"
    one is `value` itself, row by row: an expression the streaming engine runs in a select but not inside the
    per-query aggregation (compat's and rbp's table lookups, a `gather`), computed before it."""

    column: str
    value: pl.Expr
    operation: Literal["product", "sum", "block_sum", "block_least", "row"]
    exclusive: bool = False
    # with judgments, its value at a judged row is the same when computed over the query's judged rows alone (an
    # unjudged row adds 0 to it): the plan may then compute it there (`_plan.registry.on_judged_rows`)
    judged_rows_suffice: bool = False


@dataclass(frozen=True)
class Context:
    """What a measure knows of the call: the tie mode, whether the relevance comes from judgments (qrels=),
    the position column the counting measures read, the relevance threshold, `no_relevant`, and the user's name
    of the relevance column (for the messages of a measure's own data checks)."""

    ties: str
    judged: bool
    position: str
    threshold: float
    no_relevant: float | Literal["error"] | None
    relevance_name: str = "relevance"
    # every float sum exact, whatever the rows' order (`exact_sums=True`): block sums through `sum_parts`
    exact_sums: bool = False

    @property
    def averaged(self) -> bool:
        """ties="average": the exact expectation over the orders of tied rows."""
        return self.ties == "average"

    @property
    def relevant_total(self) -> pl.Expr:
        """R: the query's relevant rows, or its relevant judged documents, retrieved or not (trec_eval)."""
        return pl.col(JUDGED_RELEVANT if self.judged else RELEVANT_COUNT)

    @property
    def no_relevant_value(self) -> pl.Expr:
        """The value of a query with nothing to normalise by (null under no_relevant="error": the check raises)."""
        return pl.lit(None if self.no_relevant == "error" else self.no_relevant, pl.Float64)

    def per_relevant(self, total: pl.Expr) -> pl.Expr:
        """A per-query total divided by R, or `no_relevant_value` where R = 0."""
        relevant = self.relevant_total
        return pl.when(relevant == 0).then(self.no_relevant_value).otherwise(total / relevant)


DerivedStep = Callable[[pl.LazyFrame, Sequence["Derived"]], pl.LazyFrame]


@dataclass(frozen=True)
class Derived:
    """A per-query column computed after the per-query group-by, before the measures finish: `step` adds every
    `Derived` of a call that names it, at once; `statistic` and `cutoff` tell the step which column `column` is."""

    column: str
    step: DerivedStep
    statistic: str
    cutoff: int | None


@dataclass(frozen=True)
class NoRelevant:
    """A measure that `no_relevant` applies to: `condition(context, cutoff)` holds for a query with nothing to
    normalise by, and `reason(context)` names that in the no_relevant="error" message."""

    condition: Callable[[Context, int | None], pl.Expr]
    reason: Callable[[Context], str]


@dataclass(frozen=True)
class Spelling:
    """How a tool names a measure: over the whole list (`whole`) and at a cut-off or recall level (`cut`, with
    `{k}`, which may carry a format spec: `{k:.2f}`); None where the tool has no such form."""

    whole: str | None
    cut: str | None

    def name(self, parameter: float | None, options: Mapping[str, float] | None = None) -> str | None:
        """The tool's name at a parameter (None: the whole-list form), with the measure's option values as
        measure names write them (`{max_rel}` in `SDCG(max_rel={max_rel})@{k}`: `SDCG(max_rel=4)@10`)."""
        template = self.whole if parameter is None else self.cut
        values = {name: option_text(value) for name, value in (options or {}).items()}
        return None if template is None else template.format(k=parameter, **values)


NO_SPELLING = Spelling(None, None)


@dataclass(frozen=True)
class TrecEvalForm:
    """How trec_eval prints a measure: one row of its measure table (`lodestar-polars trec_eval` prints the
    measure from this declaration; its print order and nicknames are the front end's, `trec_eval.measures`).
    A measure may have several forms: ndcg is trec_eval's ``ndcg`` (gain pairs) and ``ndcg_cut`` (cut-offs).

    - `name`: trec_eval's measure name (``-m name``), printed ``name`` or ``name_k`` (``name_0.20`` for levels);
    - `cutoffs`: its default cut-offs (``-m name.5,10`` sets others), or recall levels when `levels`; None: one
      value, no cut-off;
    - `printed`: "float" (%6.4f per query and in the summary), "count" (%ld per query, the sum over queries in
      the summary) or "summary" (the summary line only, as gm_map);
    - `levels`: the parameters are recall levels in [0, 1] (printed %3.2f), not cut-offs;
    - `columns`: other parameters: from the text after the first dot of ``-m name.text`` (None: no text, the
      defaults), the (printed name, evaluate() measure name) of each value, in print order; it raises the
      commands' `UsageError` on bad text;
    - `collection`: its evaluate() names hold ``{collection}``, filled with -N (the documents in the collection);
    - `averaged`: a measure averaging others over its parameters: from the text of ``-m name.text``, the
      evaluate() measure names averaged, added last to first (trec_eval's 11pt_avg over custom recall levels);
      printed ``name_text``;
    - `gains`: takes trec_eval's gain pairs, ``-m name.1=3,2=9`` (level=gain; the other levels' gain is the
      level), computed with that gain mapping, printed ``name_1=3,2=9``.

    Its printed names agree with the measure's `Definition.trec_eval` spelling (tests/test_trec_eval_forms.py).
    """

    name: str
    cutoffs: tuple[float, ...] | None = None
    printed: Literal["float", "count", "summary"] = "float"
    levels: bool = False
    columns: Callable[[str | None], list[tuple[str, str]]] | None = None
    collection: bool = False
    averaged: Callable[[str], list[str]] | None = None
    gains: bool = False


def trec_eval_spelling(measure: str, forms: Sequence[TrecEvalForm]) -> Spelling:
    """How trec_eval names a measure, from its forms: the whole-list name is a form's without cut-offs, the cut
    one ``name_{k}`` of its form with cut-offs (``name_{k:.2f}`` for recall levels).  A measure whose forms say
    otherwise (a form with `columns` printing parameters, as Rprec_mult) gives its `trec_eval` itself."""
    whole = [form.name for form in forms if form.cutoffs is None]
    cut = [f"{form.name}_{{k:.2f}}" if form.levels else f"{form.name}_{{k}}" for form in forms if form.cutoffs]
    if len(whole) > 1 or len(cut) > 1:
        msg = f"{measure}: several trec_eval forms of one kind ({whole + cut}); give its trec_eval spelling"
        raise ValueError(msg)
    return Spelling(whole[0] if whole else None, cut[0] if cut else None)


def _no_derived(context: Context, cutoff: int | None) -> list[Derived]:
    return []


def _no_checks(context: Context) -> list[DataCheck]:
    return []


def _no_running(context: Context) -> list[Running]:
    return []


@dataclass(frozen=True)
class Option:
    """A numeric option of a measure, written as ir_measures writes it: `rbp(p=0.8)@10`, `set_f(beta=0.5)`.
    `refusal(value)` says why a value is refused (the error message's end), or None when it is accepted.
    `default` None makes it required: every name of the measure gives it (`sdcg(max_rel=4)@10`), and its
    column shows it; `example` is then the value its error messages and examples write.  A `flag` is 1 or 0,
    also written `True` or `False` (`compat(normalize=False)`, as ir_measures writes it)."""

    name: str
    default: float | None
    description: str
    refusal: Callable[[float], str | None]
    example: float | None = None
    flag: bool = False

    def __post_init__(self) -> None:
        if self.default is None and self.example is None:
            msg = f"option {self.name!r} is required (no default): give it an example value"
            raise ValueError(msg)


def option_text(value: float) -> str:
    """An option value as measure names and columns show it: `2`, `-1`, `0.8`, `1e-06`."""
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def option_defaults(options: Iterable[Option]) -> dict[str, float]:
    """Each option's default value, by name, for options that all have one."""
    defaults: dict[str, float] = {}
    for option in options:
        if option.default is None:
            msg = f"option {option.name!r} is required: it has no default"
            raise ValueError(msg)
        defaults[option.name] = option.default
    return defaults


def options_suffix(values: Iterable[tuple[str, float]]) -> str:
    """Option values as a measure name writes them after its name: `(p=0.8)`, `(min_rel=1,max_rel=3)`, or ``."""
    given = ",".join(f"{name}={option_text(value)}" for name, value in values)
    return f"({given})" if given else ""


# what `name@x` gives a measure: a cut-off k (optional, or required: sdcg@10), a recall level in [0, 1]
# (required), a positive multiplier (required: rprec_mult@0.2), or nothing
Parameter = Literal["cutoff", "required_cutoff", "recall_level", "multiplier", "none"]
# how the summary over queries is formed: the (weighted) arithmetic mean, trec_eval's geometric mean with its
# floor (`GEOMETRIC_FLOOR`), or the (weighted) sum (trec_eval's counts)
Summary = Literal["mean", "geometric", "sum"]
# trec_eval's MIN_GEO_MEAN: a per-query value below it counts as it in a geometric mean
GEOMETRIC_FLOOR = 1e-5


@dataclass(frozen=True)
class Definition:
    """One measure, as its module declares it.

    - `name`: the canonical name (evaluate's output column `name` / `name@k`); `oracle`: the real tools (or
      hand derivations) its tests compare it with, as the measure tables print it; `method`: the `.rank_metrics`
      method computing it alone, whose columns are `method` / `method@k` (None: evaluate() only); `aliases`:
      the other names evaluate() takes (lower case); `ir_measures`, `ranx`, `trec_eval`: how those tools name it;
      `trec_eval_forms`: how trec_eval prints it (`TrecEvalForm`, one per row of trec_eval's measure table: the
      ``lodestar-polars trec_eval`` command prints it from these; none for a measure trec_eval lacks), from
      which its `trec_eval` spelling is derived unless the measure gives `trec_eval_names` (`trec_eval_spelling`).
    - `parameter`: what `name@x` gives it: a cut-off (`name` or `name@k`; "required_cutoff": `name@k` only,
      the plan never asks it without one), a recall level (`name@0.5`, required: `at_level(level)` gives the
      measure at that level), or nothing (`name` only).
    - `family`: "gain" (reads the gain of each row) or "threshold" (counts the rows with relevance above the
      threshold); tie bounds order a tie block by that.  `needs`: the shared quantities it reads besides.
    - `terms(context, cutoff)`: its per-query sums (`Term`s, by column name; the plan sums a name shared by
      several measures once); `derived(context, cutoff)`: per-query columns computed after the group-by;
      `value(context, k)`: the per-query finish, from those columns (k: the cut-off as given; the terms take
      `cut_at(k)`).
    - `no_relevant`: set when the `no_relevant` option applies; `refuses_negative_gains`: why a gain mapping
      must not give it a negative gain (the mapping is then refused with that reason), None when it takes
      them; `bounds`: every value lies in [low, high] when every gain is non-negative, and
      `negative_gain_bounds` (None: `bounds`) when a gain may be negative, both read by the invariant
      properties; `summary`: how evaluate_mean and `lodestar_polars.mean` form the summary over queries
      (`Summary`).
    - `refuses_average`: why it has no exact expectation over tied orders (ties="average" is then refused
      with that reason when the method is called); None when it has one.
    - `refuses_bounds`: why ties="optimistic" / "pessimistic" (a tie block most / least gainful first) are not
      always its greatest / least value over the tied orders (they are then refused with that reason); None when
      they are.  `refuses_bounds_with_judgments`: the same, with qrels= only.
    - `orders_by_grade`: its best order of a tie block is by descending relevance grade, whatever the gain
      mapping: the tie bounds (which order a tie block by gain) are refused with a gain mapping whose order is
      not the grades'.
    - `scaled_by_log_base`: its value is a sum of discounts 1 / log_b(position + 1), so a log base b below 1
      makes them negative and swaps its best and worst orders: the tie bounds are then refused.
    - `reads_within_cutoff`: with a finite cut-off k, its terms read only the rows ranked within k (in the run's
      order; its ideal DCG, in the ideal order), and it reads no other per-query count of rows (`ROWS`, R): when
      every measure of a call does, the per-query group-by reads only the rows within the call's largest cut-off.
    - `row_checks` / `query_checks`: data checks of its own, counted over a query's rows / on the per-query rows.
    - `running`: per-row running products and sums in position order (`Running`) its terms read.
    - `options`: its numeric options (`Option`, written `name(option=value,...)`; one without default is
      required, and its tests name the measure by `example_stem`); `with_options(values)` gives the measure with
      every option's value (defaults filled in); its terms must be named after the values, so two settings of
      one measure in a call do not share a sum.
    """

    name: str
    oracle: str
    method: str | None
    aliases: tuple[str, ...]
    ir_measures: Spelling
    ranx: Spelling
    family: Family
    needs: frozenset[Quantity]
    terms: Callable[[Context, int | None], dict[str, Term]]
    value: Callable[[Context, int | None], pl.Expr]
    bounds: tuple[float, float]
    no_relevant: NoRelevant | None = None
    refuses_negative_gains: str | None = None
    negative_gain_bounds: tuple[float, float] | None = None
    summary: Summary = "mean"
    parameter: Parameter = "cutoff"
    at_level: Callable[[float], Definition] | None = None
    refuses_average: str | None = None
    refuses_bounds: str | None = None
    refuses_bounds_with_judgments: str | None = None
    orders_by_grade: bool = False
    scaled_by_log_base: bool = False
    reads_within_cutoff: bool = False
    derived: Callable[[Context, int | None], list[Derived]] = field(default=_no_derived)
    row_checks: Callable[[Context], list[DataCheck]] = field(default=_no_checks)
    query_checks: Callable[[Context], list[DataCheck]] = field(default=_no_checks)
    running: Callable[[Context], list[Running]] = field(default=_no_running)
    options: tuple[Option, ...] = ()
    with_options: Callable[[Mapping[str, float]], Definition] | None = None
    trec_eval_forms: tuple[TrecEvalForm, ...] = ()
    # trec_eval's names when its forms do not give them (`trec_eval`)
    trec_eval_names: Spelling | None = None

    @functools.cached_property
    def trec_eval(self) -> Spelling:
        """How trec_eval names it: `trec_eval_names`, else derived from its forms (`trec_eval_spelling`)."""
        if self.trec_eval_names is not None:
            return self.trec_eval_names
        return trec_eval_spelling(self.name, self.trec_eval_forms)

    def configured(self, values: Mapping[str, float]) -> Definition:
        """The measure with its options set (the defaults where `values` names none), or itself.  A required
        option missing from `values` is an error (`parse_measure` refuses such a name first)."""
        if self.with_options is None:
            return self
        chosen: dict[str, float] = {}
        for option in self.options:
            value = values.get(option.name, option.default)
            if value is None:
                msg = f"{self.name} needs its option {option.name}: write {self.example_stem}"
                raise ValueError(msg)
            chosen[option.name] = value
        return self.with_options(chosen)

    @property
    def example_options(self) -> dict[str, float]:
        """Its required options (those without default) at their example values: `{"max_rel": 4.0}` for sdcg."""
        return {o.name: o.example for o in self.options if o.default is None and o.example is not None}

    @property
    def example_stem(self) -> str:
        """Its name with each required option at its example value (`sdcg(max_rel=4)`), its name alone when it
        has none: what error messages and tests write for it."""
        return self.name + options_suffix(self.example_options.items())

    def at(self, level: float | None) -> Definition:
        """The measure at a recall level (a recall-level measure), or itself."""
        if level is None or self.at_level is None:
            return self
        return self.at_level(level)

    def with_terms(
        self,
        terms: Callable[[Context, int | None], dict[str, Term]],
        value: Callable[[Context, int | None], pl.Expr],
        running: Callable[[Context], list[Running]] | None = None,
    ) -> Definition:
        if running is None:
            return replace(self, terms=terms, value=value)
        return replace(self, terms=terms, value=value, running=running)

    @property
    def quantities(self) -> frozenset[Quantity]:
        return self.needs | {FAMILY_QUANTITY[self.family]}


TermsAt = Callable[[float, Context, int | None], dict[str, Term]]
ValueAt = Callable[[float, Context, int | None], pl.Expr]


def only_at_a_parameter(
    name: str,
) -> tuple[Callable[[Context, int | None], dict[str, Term]], Callable[[Context, int | None], pl.Expr]]:
    """The `terms` and `value` of a measure computed only at a required parameter (a recall level, a multiplier):
    the plan always asks `Definition.at(parameter)`, so these raise if it ever does not."""
    msg = f"{name} is computed at a parameter: `MEASURE.at(parameter)`"

    def terms(context: Context, cutoff: int | None) -> dict[str, Term]:
        raise AssertionError(msg)

    def value(context: Context, cutoff: int | None) -> pl.Expr:
        raise AssertionError(msg)

    return terms, value


def at_parameter(measure: Definition, parameter: float, terms_at: TermsAt, value_at: ValueAt) -> Definition:
    """`measure` with its terms and value bound to one value of its required parameter."""
    return measure.with_terms(functools.partial(terms_at, parameter), functools.partial(value_at, parameter))
