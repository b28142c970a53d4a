"""The plan's vocabulary: every shared quantity a measure may read (`measures._base.Quantity`) declared once, with
the quantities it reads and how it is computed at each place of the plan where columns are built (a `Site`).

The assembly (`_plan/__init__.py`, `rows.py`, `aggregate.py`, `judgments.py`) holds no branch of its own per
quantity: at each site it walks this registry, in its order, over the quantities the call's measures need
(`expressions`, `frame_steps`), and each `QuantityPlan` says what it adds there for the call's route (`Build`):
nothing, expressions for one context, or a step over the frame (a join).  Which sites run is the route's
choice (`route.Route`: judgments joined early or late, the rows the sums read, the fork into tie blocks); what
runs there is the quantities'.  A quantity's maths lives with the measures where it is one measure family's
(ERR's cascade: `measures._cascade`; compat's compatible ideal: `measures.compat`), else in `quantities.py`.

To add a quantity: a `Quantity` member in `measures._base`, its builders (here or in its measure module), and
one `QuantityPlan` line in `QUANTITY_PLANS` (a test checks every member has one, and that every measure's
declared quantities hold what each of them reads).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

from .._checks import DataCheck
from .._spec import Spec
from ..measures import _cascade, compat
from ..measures._base import (
    BOUNDARIES,
    COMPATIBLE_IDEAL_POSITION,
    CONTINUATION,
    DISCOUNT,
    GAIN,
    GAIN_HIGH,
    IDEAL_DISCOUNT,
    IDEAL_POSITION,
    JUDGED_BEFORE,
    POOLED,
    POOLED_BEFORE,
    POSITION,
    POSITIVE_GAIN_TOTAL,
    POSITIVE_GAINS,
    RELEVANCE,
    RELEVANT,
    RELEVANT_BEFORE,
    RELEVANT_COUNT,
    ROW_NONRELEVANT_TOTAL,
    ROW_RELEVANT_TOTAL,
    Quantity,
    ideal_dcg,
    ideal_err,
)
from .inputs import _gain, _qrels_rows
from .keys import RAW_RELEVANCE, SCORE, _Names
from .needs import _context, _cutoffs_needing, _definitions, _measure_terms, _needs, _threshold_position
from .quantities import (
    _counted_before,
    _discount,
    _greatest_gain,
    _ideal_gains_in_run_order,
    _ideal_position,
    _ideal_prefixes_in_run_order,
    _ideal_terms,
    _judged_before,
    _pooled_before,
    _positive_gains,
    _query_totals_in_rows,
    _relevant_before,
    _run_prefixes,
    _tie_block_windows,
    _with_ideal_prefixes,
)
from .route import Route, TermRows


@dataclass(frozen=True)
class Build:
    """What a builder knows of the call: its settings, its internal names, its route and its judgments (None:
    the relevance is in the run's frame)."""

    spec: Spec
    names: _Names
    route: Route
    qrels: pl.LazyFrame | None
    # building the quantities computed over the judged rows alone (`on_judged_rows`), on those rows
    on_judged_rows: bool = False

    @property
    def judged(self) -> bool:
        return self.qrels is not None

    @property
    def late(self) -> bool:
        """The relevance is joined onto the rows that count only, after the positions (`TermRows.LATE_JUDGED`)."""
        return self.route.term_rows is TermRows.LATE_JUDGED

    @property
    def bounds(self) -> bool:
        return self.spec.ties in ("optimistic", "pessimistic")

    def qrels_frame(self) -> pl.LazyFrame:
        assert self.qrels is not None, "a judged site reads the judgments"
        return self.qrels


Expressions = Callable[[Build], list[pl.Expr]]
FrameStep = Callable[[Build, pl.LazyFrame], pl.LazyFrame]


def _nothing(build: Build) -> list[pl.Expr]:
    return []


def _unchanged(build: Build, frame: pl.LazyFrame) -> pl.LazyFrame:
    return frame


@dataclass(frozen=True)
class QuantityPlan:
    """One shared quantity: what it reads (`reads`: the quantities a measure needing it must also declare) and
    what it adds at each site of the plan, in the order the plan runs them:

    - `judged_side`: columns of the judged documents joined with their level onto the run's rows (`rows.py`);
      `after_judged_join`: columns finished after that join;
    - `row_values`: per-row values of the relevance (gain, relevant flag), where the rows get their relevance;
    - `judged_query_values`: with judgments, aggregations over each query's judged documents (retrieved or not;
      with the judged gain when the call needs it), all of them in one group-by joined onto the run's rows where
      they get their relevance (0 for a query without judgments): `with_judged_query_values`;
    - `position_windows`: windows over each query's rows in the positions' context;
    - `after_positions`: frame steps after that context (a second order of the rows, as ERR's ideal);
    - `ordered_windows`: windows ordered by position (in the running windows' context when the terms read every
      row); `ordered_joins`: with judgments, values of the ideal order joined on the position;
    - `row_columns`: per-row columns the terms read, after the windows; `running_windows`: the same as windows
      ordered by position, in the context of the measures' running windows (`Running`);
    - `discounts`: elementwise columns computed after any filter or fork of the rows (one logarithm a row);
    - `judged_rows_suffice`: with judgments and deterministic ties, its `ordered_windows`, `ordered_joins`,
      `row_columns` and `running_windows` are right when computed over a query's judged rows alone (an unjudged
      row adds 0 to its sums, or is not counted); `pooled_rows_suffice`: its `row_columns` are right over a
      query's pooled rows alone (in the judgments at any level, negative ones included), computed there before
      the judged rows are picked out of them;
    - `within_cutoffs`: the rows a cut-off reads besides those ranked within it in the run's order;
    - `per_query`: aggregations of the per-query group-by: over the run's rows without judgments, over the
      judged documents with them (`judgment_values`, `judgment_windows`, `judgment_rows` build those rows), and
      `per_query_columns` names what the judgments side hands on; `judgment_checks`: data checks counted over
      each query's judgments.
    """

    quantity: Quantity
    reads: frozenset[Quantity] = frozenset()
    # its ordered windows and joins, row columns and running windows are right on a query's judged rows alone (with
    # judgments, deterministic ties): the plan computes it there when only sums over the judged rows read it
    # (`on_judged_rows`)
    judged_rows_suffice: bool = False
    # its row columns are right on a query's pooled rows alone, a superset of its judged rows: computed there,
    # before the judged rows are picked out, when only sums over the judged rows read it (`pooled_row_columns`)
    pooled_rows_suffice: bool = False
    judged_side: Expressions = _nothing
    after_judged_join: Expressions = _nothing
    row_values: Expressions = _nothing
    judged_query_values: Expressions = _nothing
    position_windows: Expressions = _nothing
    after_positions: FrameStep = _unchanged
    ordered_windows: Expressions = _nothing
    ordered_joins: FrameStep = _unchanged
    row_columns: Expressions = _nothing
    running_windows: Expressions = _nothing
    discounts: Expressions = _nothing
    within_cutoffs: Callable[[Build, int], list[pl.Expr]] = lambda build, largest: []
    judgment_values: Expressions = _nothing
    judgment_windows: Expressions = _nothing
    judgment_rows: FrameStep = _unchanged
    per_query: Expressions = _nothing
    per_query_columns: Callable[[Build], list[str]] = lambda build: []
    judgment_checks: Callable[[Build], list[DataCheck]] = lambda build: []


# --- the builders --------------------------------------------------------------------------------------------


def _gain_of_rows(build: Build) -> list[pl.Expr]:
    """The gain of each run row; with judgments an unjudged document (null relevance) has gain 0, whatever the
    gain mapping (trec_eval)."""
    relevance = pl.col(RELEVANCE)
    gain = _gain(build.spec, relevance)
    return [(pl.when(relevance.is_null()).then(0.0).otherwise(gain) if build.judged else gain).alias(GAIN)]


def _relevant_flag(build: Build) -> list[pl.Expr]:
    """Relevance above the threshold; with judgments an unjudged document is never relevant."""
    relevant = pl.col(RELEVANCE).cast(pl.Float64) > build.spec.threshold
    return [(relevant.fill_null(False) if build.judged else relevant).alias(RELEVANT)]


def _run_discount(build: Build) -> list[pl.Expr]:
    return [_discount(build.spec, pl.col(POSITION)).alias(DISCOUNT)]


def _ideal_dcg_columns(build: Build) -> list[str]:
    return [ideal_dcg(cutoff) for cutoff in _cutoffs_needing(build.spec, Quantity.IDEAL_DCG)]


def _ideal_err_columns(build: Build) -> list[str]:
    return [ideal_err(cutoff) for cutoff in _cutoffs_needing(build.spec, Quantity.IDEAL_ERR)]


def _ideal_err_sums(build: Build) -> list[pl.Expr]:
    return _cascade.ideal_err_sums(_cutoffs_needing(build.spec, Quantity.IDEAL_ERR), build.spec.exact_sums)


def _relevant_before_by_score(build: Build) -> list[pl.Expr]:
    return [_relevant_before(build.spec, build.names).alias(RELEVANT_BEFORE)]


def _unless(condition: Callable[[Build], bool], builder: Expressions) -> Expressions:
    """`builder` where `condition` does not hold, nothing where it does."""
    return lambda build: [] if condition(build) else builder(build)


def _when(condition: Callable[[Build], bool], builder: Expressions) -> Expressions:
    return lambda build: builder(build) if condition(build) else []


def _step_when(condition: Callable[[Build], bool], step: FrameStep) -> FrameStep:
    return lambda build, frame: step(build, frame) if condition(build) else frame


def _judged(build: Build) -> bool:
    return build.judged


def _averaged(build: Build) -> bool:
    return build.spec.ties == "average"


QUANTITY_PLANS: tuple[QuantityPlan, ...] = (
    QuantityPlan(
        Quantity.GAIN,
        row_values=_gain_of_rows,
        judgment_values=lambda b: [_gain(b.spec, pl.col(RELEVANCE)).alias(GAIN)],
    ),
    QuantityPlan(Quantity.RELEVANT, row_values=_relevant_flag),
    QuantityPlan(
        Quantity.DISCOUNT,
        # elementwise: on the judged rows alone when only their sums read it
        judged_rows_suffice=True,
        # with the rows forking into tie blocks, each branch takes its discounts after the fork
        row_columns=_unless(lambda b: b.route.forks_for_blocks, _run_discount),
        discounts=_when(lambda b: b.route.forks_for_blocks, _run_discount),
    ),
    QuantityPlan(
        Quantity.QUERY_TOTALS,
        reads=frozenset({Quantity.RELEVANT}),
        # a negative level counts in neither total (trec_eval's form_res_rels)
        judged_query_values=lambda b: [
            (pl.col(RELEVANCE) > b.spec.threshold).sum().cast(pl.Float64).alias(ROW_RELEVANT_TOTAL),
            (pl.col(RELEVANCE) <= b.spec.threshold).sum().cast(pl.Float64).alias(ROW_NONRELEVANT_TOTAL),
        ],
        position_windows=_unless(_judged, lambda b: _query_totals_in_rows(b.names)),
    ),
    QuantityPlan(
        Quantity.GREATEST_GAIN,
        reads=frozenset({Quantity.GAIN}),
        position_windows=_unless(_judged, lambda b: [_greatest_gain().over(b.names.group).alias(GAIN_HIGH)]),
        judged_query_values=lambda b: [_greatest_gain().alias(GAIN_HIGH)],
    ),
    QuantityPlan(
        Quantity.RELEVANT_COUNT,
        reads=frozenset({Quantity.RELEVANT}),
        # with judgments R is the judged relevant documents', counted on the judgments side whatever the call
        per_query=_unless(_judged, lambda b: [pl.col(RELEVANT).sum().cast(pl.Float64).alias(RELEVANT_COUNT)]),
    ),
    QuantityPlan(
        Quantity.IDEAL_DCG,
        reads=frozenset({Quantity.GAIN}),
        position_windows=_unless(_judged, lambda b: [_ideal_position(b.spec, b.names.group).alias(IDEAL_POSITION)]),
        discounts=_unless(_judged, lambda b: [_discount(b.spec, pl.col(IDEAL_POSITION)).alias(IDEAL_DISCOUNT)]),
        within_cutoffs=lambda b, largest: [] if b.judged else [pl.col(IDEAL_POSITION) <= largest],
        judgment_windows=lambda b: [_ideal_position(b.spec, b.names.query).alias(IDEAL_POSITION)],
        judgment_rows=lambda b, rows: rows.with_columns(
            _discount(b.spec, pl.col(IDEAL_POSITION)).alias(IDEAL_DISCOUNT)
        ),
        per_query=lambda b: _ideal_terms(b.spec),
        per_query_columns=_ideal_dcg_columns,
    ),
    QuantityPlan(
        Quantity.IDEAL_ERR,
        after_positions=lambda b, rows: rows if b.judged else _cascade.with_ideal_order(rows, b.names.group),
        judgment_rows=lambda b, rows: _cascade.with_ideal_order(rows, b.names.query),
        per_query=_ideal_err_sums,
        per_query_columns=_ideal_err_columns,
    ),
    QuantityPlan(
        Quantity.RELEVANT_BEFORE,
        reads=frozenset({Quantity.RELEVANT}),
        # the relevant rows ranked above: the same among the judged rows alone (an unjudged row is not relevant)
        judged_rows_suffice=True,
        # with tie averaging by score, in row order within a tie block: among the positions' windows, or on the
        # rows that count when the relevance comes late; else a running count in position order
        position_windows=_when(lambda b: _averaged(b) and not b.late, _relevant_before_by_score),
        row_columns=_when(lambda b: _averaged(b) and b.late, _relevant_before_by_score),
        running_windows=_unless(
            _averaged, lambda b: [_counted_before(pl.col(RELEVANT), b.spec, b.names).alias(RELEVANT_BEFORE)]
        ),
    ),
    QuantityPlan(
        Quantity.JUDGED_BEFORE,
        # the judged rows ranked above a judged row: the same among the judged rows alone
        judged_rows_suffice=True,
        row_columns=lambda b: [_judged_before(b.spec, b.judged, b.names).alias(JUDGED_BEFORE)],
    ),
    QuantityPlan(
        Quantity.POOLED_BEFORE,
        # in the qrels at any level, negative ones included
        pooled_rows_suffice=True,
        judged_side=lambda b: [pl.lit(True).alias(POOLED)],
        after_judged_join=lambda b: [pl.col(POOLED).fill_null(False)],
        row_columns=lambda b: [_pooled_before(b.spec, b.judged, b.names).alias(POOLED_BEFORE)],
    ),
    QuantityPlan(
        Quantity.CONTINUATION,
        row_columns=lambda b: [_cascade.continuation(b.names.group, POSITION).alias(CONTINUATION)],
        judgment_checks=lambda b: [_cascade.judged_grade_check(pl.col(RAW_RELEVANCE))],
    ),
    QuantityPlan(
        Quantity.COMPATIBLE_IDEAL,
        reads=frozenset({Quantity.RELEVANT}),
        # from every judged document, retrieved or not; without judgments over every row (those past
        # max_retrieved too)
        judged_side=lambda b: compat.relevant_levels(b.spec.threshold, b.names.query),
        position_windows=_unless(_judged, lambda b: compat.relevant_levels(b.spec.threshold, b.names.group)),
        row_columns=lambda b: [
            compat.compatible_ideal_position(_threshold_position(b.spec), SCORE, b.names.group).alias(
                COMPATIBLE_IDEAL_POSITION
            )
        ],
    ),
    QuantityPlan(
        Quantity.TIE_BLOCKS,
        row_columns=_when(lambda b: b.bounds, lambda b: _tie_block_windows(b.spec, b.judged, b.names)),
    ),
    QuantityPlan(
        Quantity.RUN_PREFIXES,
        reads=frozenset({Quantity.GAIN}),
        judged_rows_suffice=True,
        ordered_windows=lambda b: _run_prefixes(b.spec, b.names),
    ),
    QuantityPlan(
        Quantity.IDEAL_PREFIXES,
        reads=frozenset({Quantity.GAIN}),
        judged_rows_suffice=True,
        after_positions=lambda b, rows: rows if b.judged else rows.with_columns(_ideal_gains_in_run_order(b.names)),
        ordered_windows=_unless(_judged, lambda b: _ideal_prefixes_in_run_order(b.spec, b.names)),
        ordered_joins=_step_when(
            _judged,
            lambda b, rows: _with_ideal_prefixes(
                rows, b.qrels_frame(), b.spec, b.names, b.route.keeps_row_order, every_row=not b.on_judged_rows
            ),
        ),
        per_query=lambda b: _positive_gains(b.spec),
        per_query_columns=lambda b: [POSITIVE_GAINS, POSITIVE_GAIN_TOTAL, BOUNDARIES],
    ),
)

_BY_QUANTITY = {plan.quantity: plan for plan in QUANTITY_PLANS}
if set(_BY_QUANTITY) != set(Quantity) or len(_BY_QUANTITY) != len(QUANTITY_PLANS):
    _missing = sorted(q.name for q in set(Quantity) - set(_BY_QUANTITY))
    raise AssertionError(f"every Quantity needs exactly one QuantityPlan; missing: {_missing}")


# --- walking the registry ------------------------------------------------------------------------------------


def needed(spec: Spec) -> list[QuantityPlan]:
    """The plans of the quantities the call's measures need, in the registry's order."""
    return [plan for plan in QUANTITY_PLANS if _needs(spec, plan.quantity)]


def expressions(build: Build, site: Callable[[QuantityPlan], Expressions]) -> list[pl.Expr]:
    """What the needed quantities add at an expression site (`site` picks the builder: `lambda p: p.row_columns`)."""
    return [expression for plan in needed(build.spec) for expression in site(plan)(build)]


def frame_steps(build: Build, frame: pl.LazyFrame, site: Callable[[QuantityPlan], FrameStep]) -> pl.LazyFrame:
    """The needed quantities' steps at a frame site, one after another."""
    for plan in needed(build.spec):
        frame = site(plan)(build, frame)
    return frame


def _computed_here(build: Build) -> list[QuantityPlan]:
    """The needed quantities whose ordered windows and joins and row columns `build` computes: over the judged
    rows alone those of `on_judged_rows`, over every row the others."""
    apart = on_judged_rows(build)
    return [plan for plan in needed(build.spec) if (plan.quantity in apart) == build.on_judged_rows]


def ordered_windows(build: Build) -> list[pl.Expr]:
    """The needed quantities' windows ordered by position (`QuantityPlan.ordered_windows`) computed here."""
    return [expression for plan in _computed_here(build) for expression in plan.ordered_windows(build)]


def running_windows(build: Build) -> list[pl.Expr]:
    """The needed quantities' windows in the running windows' context (`QuantityPlan.running_windows`) computed
    here."""
    return [expression for plan in _computed_here(build) for expression in plan.running_windows(build)]


def row_columns(build: Build) -> list[pl.Expr]:
    """The needed quantities' per-row columns the terms read (`QuantityPlan.row_columns`) computed here (over the
    judged rows alone, not those computed over the pooled rows before: `pooled_row_columns`)."""
    return [
        expression
        for plan in _computed_here(build)
        if not (build.on_judged_rows and plan.pooled_rows_suffice)
        for expression in plan.row_columns(build)
    ]


def pooled_row_columns(build: Build) -> list[pl.Expr]:
    """The row columns of the quantities of `on_judged_rows` right over the pooled rows (`pooled_rows_suffice`),
    computed over them before the judged rows are picked out (`build` over the judged rows)."""
    return [
        expression
        for plan in _computed_here(build)
        if build.on_judged_rows and plan.pooled_rows_suffice
        for expression in plan.row_columns(build)
    ]


def with_ordered_joins(build: Build, rows: pl.LazyFrame) -> pl.LazyFrame:
    """The needed quantities' joins on the position (`QuantityPlan.ordered_joins`) computed here."""
    for plan in _computed_here(build):
        rows = plan.ordered_joins(build, rows)
    return rows


def on_judged_rows(build: Build) -> frozenset[Quantity]:
    """The quantities the plan computes over each query's judged rows only, just before the sums over them: with
    judgments, deterministic ties and every row's terms (`TermRows.EVERY_ROW`), a quantity whose ordered windows
    and joins allow it (`judged_rows_suffice`) when every measure of the call needing it has only terms summed
    over the judged rows (`Term.judged_rows`) and only running windows right over them too
    (`Running.judged_rows_suffice`), which then go with it (`running_on_judged_rows`): on a deep run most rows are
    unjudged."""
    return _judged_rows_quantities(build.spec) if _judged_rows_route(build) else frozenset()


def _judged_rows_route(build: Build) -> bool:
    """Judgments, deterministic ties and every row's terms (`TermRows.EVERY_ROW`): the route on which the terms
    summed over the judged rows only (`Term.judged_rows`) have a frame of their own."""
    return build.judged and build.spec.ties != "average" and build.route.term_rows is TermRows.EVERY_ROW


# per call, built once (the sites ask again and again): the quantities and the measures' running columns
_JUDGED_ROWS_ONLY: weakref.WeakKeyDictionary[Spec, tuple[frozenset[Quantity], frozenset[str]]] = (
    weakref.WeakKeyDictionary()
)


def _judged_rows_quantities(spec: Spec) -> frozenset[Quantity]:
    return _judged_rows_only(spec)[0]


def running_on_judged_rows(build: Build) -> frozenset[str]:
    """The measures' running columns (`Running`) computed over the judged rows alone: those of the measures reading
    a quantity of `on_judged_rows` (each declares it may: `Running.judged_rows_suffice`), and those of a measure
    whose running columns all may and whose terms are all summed there (`Term.judged_rows`: rbp's running sum,
    which only its judged rows raise), unless a measure computing it over every row declares it too."""
    return _judged_rows_only(build.spec)[1] if _judged_rows_route(build) else frozenset()


def _judged_rows_only(spec: Spec) -> tuple[frozenset[Quantity], frozenset[str]]:
    known = _JUDGED_ROWS_ONLY.get(spec)
    if known is None:
        known = _JUDGED_ROWS_ONLY[spec] = _judged_rows_sets(spec)
    return known


def _judged_rows_sets(spec: Spec) -> tuple[frozenset[Quantity], frozenset[str]]:
    context = _context(spec, judged=True)
    apart: set[Quantity] = set()
    running: set[str] = set()
    for plan in needed(spec):
        if not (plan.judged_rows_suffice or plan.pooled_rows_suffice):
            continue
        readers = [(d, m) for d, m in _definitions(spec) if plan.quantity in d.quantities]
        if all(
            all(column.judged_rows_suffice for column in d.running(context))
            and all(term.judged_rows for term in _measure_terms(m, context).values())
            for d, m in readers
        ):
            apart.add(plan.quantity)
    # a quantity computed on every row that reads one of them needs it there too
    while read_on_every_row := {q for p in needed(spec) if p.quantity not in apart for q in p.reads} & apart:
        apart -= read_on_every_row
    for quantity in apart:
        running |= {
            column.column for d, _ in _definitions(spec) if quantity in d.quantities for column in d.running(context)
        }
    own: set[str] = set()  # a measure's own running columns, right over the judged rows alone
    every_row: set[str] = set()  # declared by a measure whose terms or running columns need every row
    for definition, measure in _definitions(spec):
        columns = definition.running(context)
        if all(column.judged_rows_suffice for column in columns) and all(
            term.judged_rows for term in _measure_terms(measure, context).values()
        ):
            own |= {column.column for column in columns}
        else:
            every_row |= {column.column for column in columns}
    return frozenset(apart), frozenset(running | (own - every_row))


def with_expressions(build: Build, frame: pl.LazyFrame, site: Callable[[QuantityPlan], Expressions]) -> pl.LazyFrame:
    """`frame` with what the needed quantities add at an expression site, in one context (unchanged when none)."""
    added = expressions(build, site)
    return frame.with_columns(added) if added else frame


def with_judged_query_values(build: Build, rows: pl.LazyFrame, keep_order: bool) -> pl.LazyFrame:
    """With judgments, the rows with what the needed quantities aggregate over each query's judged documents
    (`QuantityPlan.judged_query_values`: R and N, the greatest gain), from one group-by over the judgments and one
    join on the query keys (`keep_order`: keep the rows' order, for ties="input" / "reverse"); 0 for a query
    without judgments.  Unchanged without judgments or when no quantity asks."""
    aggregations = expressions(build, lambda plan: plan.judged_query_values)
    if not build.judged or not aggregations:
        return rows
    names = build.names
    judged = with_expressions(build, _qrels_rows(build.qrels_frame(), build.spec, names), lambda p: p.judgment_values)
    per_query = judged.group_by(names.query).agg(aggregations)
    joined = rows.join(per_query, on=names.query, how="left", maintain_order="left" if keep_order else "none")
    return joined.with_columns(pl.col(a.meta.output_name()).fill_null(0.0) for a in aggregations)


def within_cutoffs(build: Build, largest: int) -> list[pl.Expr]:
    return [expression for plan in needed(build.spec) for expression in plan.within_cutoffs(build, largest)]


def per_query_columns(build: Build) -> list[str]:
    return [column for plan in needed(build.spec) for column in plan.per_query_columns(build)]


def judgment_checks(build: Build) -> list[DataCheck]:
    return [check for plan in needed(build.spec) for check in plan.judgment_checks(build)]


def reads_closed(quantities: frozenset[Quantity]) -> frozenset[Quantity]:
    """The quantities a measure declaring `quantities` must hold: each with what it reads, transitively."""
    closed = set(quantities)
    while True:
        more = {read for quantity in closed for read in _BY_QUANTITY[quantity].reads} - closed
        if not more:
            return frozenset(closed)
        closed |= more
