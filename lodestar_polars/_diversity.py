"""The diversity (intent-aware) measures' call: their options checked into a `DiversitySpec`, and one lazy plan
computing them per query (`per_query_plan`) or on average (`mean_plan`).  The measures are declared in
`measures/diversity.py`, with their maths; this module computes the per-query sums they read.

Their judgments are per intent (query, intent, doc, relevance), so their per-row quantities (one per row and
intent) are not those of `_plan`, whose rows are (query, doc): they get a plan of their own, which shares
`_plan`'s reading of the run (internal names, positions, the run's data checks) and `_mean`'s summary.

1. The run's rows get their 1-based position per query (ties broken as `ties` says: "input", "reverse" or
   "doc"), and are joined on (query, doc) to the judgments relevant to an intent (level >= rel), one row per
   (run row, intent); each such row gets the number c of rows of its intent ranked above it (a window over the
   query and intent), hence its intent-aware gain (1 - alpha)^c, and one group-by per query sums every term.
   Only the rows within the largest cut-off are joined unless a whole-list measure (ap_ia, nrbp, nnrbp) is
   asked.
2. The greedy ideal (ndeval's) is unrolled: one step per position up to the largest cut-off of alpha_ndcg and
   nerr_ia, or nnrbp's depth (`measures.diversity.nrbp_depth`), over the query's relevant (doc, intent)
   judgments.  Each step is a few windows over that frame: the
   gain each unplaced document would add next (its intents' remaining gains summed over the query and doc, an
   exact sum (`_exact_sum`), so that two documents of equal gains tie whatever the order of the judgments' rows),
   the greatest of them per query, the greatest doc id among the documents reaching it (ndeval's tie break),
   which is placed; the remaining gain of each intent it covers is multiplied by 1 - alpha, as ndeval does.  A
   fixed, call-sized number of steps keeps the plan lazy and free of Python over the data; that is why the
   cut-off of those two measures is bounded (`measures.diversity.GREATEST_IDEAL_CUTOFF`), and why nnrbp checks
   per query that the positions it leaves out cannot weigh (`_ideal_cut_short`).  Each step costs a few passes
   over the relevant judgments (measured: 0.27 s for 20 steps over 44k judgments of 50 queries, 1.4 s for 100;
   the exact sum of a document's gain adds 10-30%, measured paired: 0.17 -> 0.22 s for 20 steps over 45k).
3. Per query: the run's queries (with the run's data checks) fully joined on the query to the judged queries
   (with the judgments' checks, S and the ideal sums), the run's sums, and each measure's finish; the queries
   scored are the judged ones in the run (and, with missing_queries="zero", the judged ones missing from it).

The judgments' checks: a null query, doc or intent, a null or non-finite level, and a (query, intent, doc)
judged twice (ndeval would count such a document twice in R_j).
"""

from __future__ import annotations

import math

import polars as pl

from . import _mean
from ._checks import DataCheck, apply_checks, bad_values, least_failing, message, quoted
from ._exact_sum import exact_sum
from ._plan import checks as plan_checks
from ._plan import inputs as plan_inputs
from ._plan import keys as plan_keys
from ._plan import quantities as plan_quantities
from ._plan import rows as plan_rows
from ._spec import DiversitySpec
from .measures._base import POSITION, PREFIX, option_text, options_suffix
from .measures.diversity import (
    IDEAL_NEEDS,
    WHOLE_LIST_NEEDS,
    Need,
    Setting,
    column,
    intents,
    nrbp_depth,
)

INTENT = f"{PREFIX}intent"
LEVEL = f"{PREFIX}div_level"
EARLIER = f"{PREFIX}div_earlier"
INTENT_TOTAL = f"{PREFIX}div_intent_total"
IN_RUN = f"{PREFIX}div_in_run"
JUDGED = f"{PREFIX}div_judged"
SCORED = f"{PREFIX}div_scored"
UNJUDGED = f"{PREFIX}div_unjudged"
DUPLICATED = plan_keys.DUPLICATED
# the greedy ideal's columns: the doc id's text, each (doc, intent) row's remaining gain, the step placing the
# doc and the gain it then added for the intent, the doc's gain if placed next, the best such gain per query,
# the doc placed, and whether the placed doc covers the row's intent
DOC_TEXT = f"{PREFIX}div_doc_text"
REMAINING = f"{PREFIX}div_remaining"
PLACED_AT = f"{PREFIX}div_placed_at"
PLACED_GAIN = f"{PREFIX}div_placed_gain"
DOC_GAIN = f"{PREFIX}div_doc_gain"
BEST = f"{PREFIX}div_best"
CHOSEN = f"{PREFIX}div_chosen"
COVERED = f"{PREFIX}div_covered"

# --- the plan ------------------------------------------------------------------------------------------------


def _measure_needs(spec: DiversitySpec) -> dict[tuple[Need, Setting, int | None], None]:
    """Every (need, setting, cut-off) the call's measures read, in order (the whole-list needs without cut-off)."""
    needs: dict[tuple[Need, Setting, int | None], None] = {}
    for measure in spec.measures:
        setting = spec.setting(measure)
        for need in sorted(spec.definition(measure).needs, key=lambda n: n.name):
            needs[(need, setting, None if need in WHOLE_LIST_NEEDS else measure.cutoff)] = None
    return needs


def _discount(position: pl.Expr) -> pl.Expr:
    """ndeval's log(2) / log(p + 1)."""
    return pl.lit(math.log(2.0)) / (position.cast(pl.Float64) + 1.0).log()


def _gain(alpha: float) -> pl.Expr:
    """(1 - alpha)^c for a row with c rows of its intent ranked above it."""
    return pl.lit(1.0 - alpha, pl.Float64).pow(pl.col(EARLIER).cast(pl.Float64))


def _within(cutoff: int | None) -> pl.Expr:
    return pl.col(POSITION) <= (cutoff if cutoff is not None else 1 << 40)


def _run_term(need: Need, setting: Setting, cutoff: int | None) -> pl.Expr:
    position = pl.col(POSITION)
    within = _within(cutoff)
    if need is Need.RUN_DCG:
        term = pl.when(within).then(_gain(setting.alpha) * _discount(position)).otherwise(0.0).sum()
    elif need is Need.RUN_ERR:
        term = pl.when(within).then(_gain(setting.alpha) / position.cast(pl.Float64)).otherwise(0.0).sum()
    elif need is Need.PAIRS:
        term = within.sum()
    elif need is Need.COVERED:
        term = (within & (pl.col(EARLIER) == 0)).sum()
    elif need is Need.RUN_NRBP:
        weight = pl.lit(setting.beta, pl.Float64).pow((position - 1).cast(pl.Float64))
        term = (_gain(setting.alpha) * weight).sum()
    else:
        assert need is Need.AP, need
        share = (pl.col(EARLIER) + 1).cast(pl.Float64) / position.cast(pl.Float64)
        term = (share / pl.col(INTENT_TOTAL).cast(pl.Float64)).sum()
    return term.alias(column(need, setting, cutoff))


def _judgments(qrels: pl.LazyFrame, spec: DiversitySpec, names: plan_keys._Names) -> pl.LazyFrame:
    """The judgments as (query keys, doc, intent, level), under internal names."""
    base = spec.base
    columns = [names.joined(n).alias(i) for n, i in zip(base.query, names.query, strict=True)]
    columns += [names.joined(n).alias(i) for n, i in zip(base.doc, names.docs, strict=True)]
    columns += [pl.col(spec.intent).alias(INTENT), base.relevance.expr.alias(LEVEL)]
    return qrels.select(columns)


def relevant(rel: float) -> pl.Expr:
    """A judgment at level >= rel: its doc is relevant to its intent."""
    return pl.col(LEVEL).cast(pl.Float64) >= rel


def _relevant(judgments: pl.LazyFrame, rel: float, names: plan_keys._Names) -> pl.LazyFrame:
    """The (query, doc, intent) judged relevant."""
    return judgments.filter(relevant(rel)).select(*names.query, *names.docs, INTENT)


def _qrels_checks(spec: DiversitySpec, names: plan_keys._Names) -> list[DataCheck]:
    base = spec.base
    q = ", ".join(quoted(name) for name in base.query)
    d, i = quoted(base.doc[0]), quoted(spec.intent)
    level = pl.col(LEVEL)
    bad_level = level.is_null() | ~level.cast(pl.Float64).is_finite()
    duplicated = pl.col(DUPLICATED)  # `_judged_duplicates`, a window before the group-by (streaming-native)
    return [
        DataCheck(f"{PREFIX}div_bad_level", bad_level.sum(), bad_values("qrels relevance", base.relevance.name)),
        DataCheck(
            f"{PREFIX}div_null_docs",
            pl.col(names.docs[0]).is_null().sum(),
            message(ValueError, f"qrels doc column {d} has {{total}} null value(s), the first in query {{query}}."),
        ),
        DataCheck(
            f"{PREFIX}div_null_intents",
            pl.col(INTENT).is_null().sum(),
            message(ValueError, f"qrels intent column {i} has {{total}} null value(s), the first in query {{query}}."),
        ),
        DataCheck(
            f"{PREFIX}div_duplicates",
            duplicated.sum(),
            message(
                ValueError,
                f"qrels judge doc {{value}} twice for one intent of query {{query}} ({q}, {i}, {d}); each (query, "
                "intent, doc) must be judged once.",
            ),
            least_failing(pl.col(names.docs[0]), duplicated),
        ),
    ]


def _null_queries(spec: DiversitySpec, names: plan_keys._Names, where: str) -> DataCheck:
    """A null query id in the run (`where` "") or in the judgments ("qrels "), on the per-query rows."""
    null = pl.any_horizontal(pl.col(key).is_null() for key in names.query).cast(pl.UInt32)
    columns = ", ".join(quoted(name) for name in spec.base.query)
    return DataCheck(
        f"{PREFIX}div_{where.strip() or 'run'}_null_queries",
        null,
        message(ValueError, f"{where}query column {columns} has null values."),
    )


def _judged_twice(names: plan_keys._Names) -> pl.Expr:
    """A judgment whose (doc, intent) the query judges more than once."""
    return pl.struct(*names.docs, INTENT).is_duplicated().over(names.query).alias(DUPLICATED)


def _greedy_ideal(relevant: pl.LazyFrame, alpha: float, steps: int, names: plan_keys._Names) -> pl.LazyFrame:
    """ndeval's greedy ideal ranking of each query's relevant (doc, intent) rows, placed one position after
    another for `steps` positions: `PLACED_AT` the position of the row's doc (null: not placed) and
    `PLACED_GAIN` the gain it then added for the row's intent."""
    query, doc = names.query, names.docs
    frame = relevant.with_columns(
        pl.col(doc[0]).cast(pl.String).alias(DOC_TEXT),
        pl.lit(1.0, pl.Float64).alias(REMAINING),
        pl.lit(None, pl.Int64).alias(PLACED_AT),
        pl.lit(None, pl.Float64).alias(PLACED_GAIN),
    )
    unplaced = pl.col(PLACED_AT).is_null()
    for step in range(1, steps + 1):
        # the exact sum: a float sum in arrival order gave two documents of equal gains (the same remaining
        # gains, in another row order) gains differing in the last bit, and the tie went to the larger
        # instead of the greater doc id, the ideal depending on the order of the judgments' rows
        frame = frame.with_columns(exact_sum(pl.col(REMAINING)).over([*query, *doc]).alias(DOC_GAIN))
        frame = frame.with_columns(pl.col(DOC_GAIN).filter(unplaced).max().over(query).alias(BEST))
        # ndeval resolves equal gains to the greatest doc id (strcmp; a String's max compares its bytes too)
        reaching = unplaced & (pl.col(DOC_GAIN) == pl.col(BEST))
        frame = frame.with_columns(pl.col(DOC_TEXT).filter(reaching).max().over(query).alias(CHOSEN))
        placed = unplaced & (pl.col(DOC_TEXT) == pl.col(CHOSEN))
        frame = frame.with_columns(
            pl.when(placed).then(pl.lit(step, pl.Int64)).otherwise(pl.col(PLACED_AT)).alias(PLACED_AT),
            pl.when(placed).then(pl.col(REMAINING)).otherwise(pl.col(PLACED_GAIN)).alias(PLACED_GAIN),
            placed.fill_null(False).any().over([*query, INTENT]).alias(COVERED),
        )
        frame = frame.with_columns(
            pl.when(pl.col(COVERED))
            .then(pl.col(REMAINING) * (1.0 - alpha))
            .otherwise(pl.col(REMAINING))
            .alias(REMAINING)
        )
    return frame.filter(pl.col(PLACED_AT).is_not_null())


def _ideal_term(need: Need, setting: Setting, cutoff: int | None) -> pl.Expr:
    position, gain = pl.col(PLACED_AT), pl.col(PLACED_GAIN)
    if need is Need.IDEAL_NRBP:
        return (
            (gain * pl.lit(setting.beta, pl.Float64).pow((position - 1).cast(pl.Float64)))
            .sum()
            .alias(column(need, setting, cutoff))
        )
    if need is Need.IDEAL_DCG:
        value = gain * _discount(position)
    else:
        assert need is Need.IDEAL_ERR, need
        value = gain / position.cast(pl.Float64)
    return pl.when(position <= (cutoff or 0)).then(value).otherwise(0.0).sum().alias(column(need, setting, cutoff))


def _steps(need: Need, setting: Setting, cutoff: int | None) -> int:
    """The greedy steps a need reads: its cut-off, or nnrbp's depth."""
    return nrbp_depth(setting.beta) if need is Need.IDEAL_NRBP else cutoff or 0


def _relevant_docs(rel: float) -> str:
    return f"{PREFIX}div_relevant_docs_{option_text(rel)}"


def _last_gain(rel: float, alpha: float) -> str:
    return f"{PREFIX}div_last_gain_{option_text(rel)}_{option_text(alpha)}"


def _ideal_cut_short(setting: Setting, steps: int) -> DataCheck:
    """nnrbp: a query with more relevant documents than the greedy steps, whose left-out positions could weigh
    (at most g(steps) beta^steps / (1 - beta), a greedy ideal's gains never growing) above the last bit of its
    ideal NRBP: ndeval's ideal places every relevant document."""
    ideal = pl.col(column(Need.IDEAL_NRBP, setting, None))
    left_out = pl.col(_last_gain(setting.rel, setting.alpha)) * (
        math.inf if setting.beta >= 1.0 else setting.beta**steps / (1.0 - setting.beta)
    )
    cut_short = (pl.col(_relevant_docs(setting.rel)) > steps) & (left_out > ideal * 2.0**-53)
    name = "nnrbp" + options_suffix((("alpha", setting.alpha), ("beta", setting.beta), ("rel", setting.rel)))
    return DataCheck(
        f"{PREFIX}div_cut_short_{option_text(setting.rel)}_{option_text(setting.alpha)}_{option_text(setting.beta)}",
        cut_short.fill_null(False).cast(pl.Int64),
        message(
            ValueError,
            f"{name}: query {{query}} has {{value}} documents relevant to an intent, more than the {steps} positions "
            "its greedy ideal is built to, and beta weighs the positions left out above the last bit of its ideal "
            "NRBP (ndeval's ideal places every relevant document); a smaller beta needs fewer positions, and nrbp "
            "(unnormalised) has no ideal.",
        ),
        pl.col(_relevant_docs(setting.rel)),
    )


def _with_judged_sums(
    judged: pl.LazyFrame, judgments: pl.LazyFrame, spec: DiversitySpec, names: plan_keys._Names
) -> tuple[pl.LazyFrame, list[DataCheck]]:
    """The judged queries with the ideal sums per (rel, alpha), and nnrbp's checks that its ideal is whole."""
    needs = _measure_needs(spec)
    ideal: dict[tuple[float, float], list[tuple[Need, Setting, int | None]]] = {}
    for need, setting, cutoff in needs:
        if need in IDEAL_NEEDS:
            ideal.setdefault((setting.rel, setting.alpha), []).append((need, setting, cutoff))
    checks: list[DataCheck] = []
    for (rel, alpha), wanted in ideal.items():
        steps = max(_steps(*need) for need in wanted)
        placed = _greedy_ideal(_relevant(judgments, rel, names), alpha, steps, names)
        last = pl.col(PLACED_GAIN).filter(pl.col(PLACED_AT) == steps).sum().alias(_last_gain(rel, alpha))
        sums = placed.group_by(names.query).agg(*(_ideal_term(*need) for need in dict.fromkeys(wanted)), last)
        judged = judged.join(sums, on=names.query, how="left", nulls_equal=True)
        checks += [_ideal_cut_short(s, steps) for n, s, _ in wanted if n is Need.IDEAL_NRBP]
    filled = [column(need, setting, cutoff) for need, setting, cutoff in needs if need in IDEAL_NEEDS]
    filled += [_last_gain(rel, alpha) for rel, alpha in ideal]
    return judged.with_columns(pl.col(name).fill_null(0.0) for name in filled), checks


def _with_run_sums(
    per_query: pl.LazyFrame,
    positioned: pl.LazyFrame,
    judgments: pl.LazyFrame,
    spec: DiversitySpec,
    names: plan_keys._Names,
) -> pl.LazyFrame:
    """The run's queries with the run's sums, per rel: its rows joined to the judgments relevant to an intent."""
    needs = _measure_needs(spec)
    by_rel: dict[float, list[tuple[Need, Setting, int | None]]] = {}
    for need, setting, cutoff in needs:
        if need not in IDEAL_NEEDS:
            by_rel.setdefault(setting.rel, []).append((need, setting, cutoff))
    on = [*names.query, *names.docs]
    for rel, wanted in by_rel.items():
        relevant = _relevant(judgments, rel, names)
        rows = positioned
        if not any(need in WHOLE_LIST_NEEDS for need, _, _ in wanted):
            rows = rows.filter(_within(max(cutoff or 0 for _, _, cutoff in wanted)))
        hits = rows.select(*names.keys, *names.docs, POSITION).join(relevant, on=on, how="inner")
        if any(need is Need.AP for need, _, _ in wanted):
            totals = relevant.group_by([*names.query, INTENT]).agg(pl.len().alias(INTENT_TOTAL))
            hits = hits.join(totals, on=[*names.query, INTENT], how="left", nulls_equal=True)
        earlier = pl.col(POSITION).rank("ordinal").over([*names.keys, INTENT]) - 1
        hits = hits.with_columns(earlier.alias(EARLIER))
        sums = hits.group_by(names.keys).agg(_run_term(*need) for need in wanted)
        per_query = per_query.join(sums, on=names.keys, how="left", nulls_equal=True)
    return per_query.with_columns(
        pl.col(column(need, setting, cutoff)).fill_null(0) for need, setting, cutoff in needs if need not in IDEAL_NEEDS
    )


def _metric(index: int) -> str:
    return f"{PREFIX}div_metric_{index}"


def _flagged_per_query(
    run: pl.LazyFrame, qrels: pl.LazyFrame, spec: DiversitySpec
) -> tuple[pl.LazyFrame, plan_keys._Names]:
    """Every per-query row (the run's queries and the judged ones), its measures and SCORED / UNJUDGED flags,
    the data checks applied."""
    base = spec.base
    schema, qrels_schema = run.collect_schema(), qrels.collect_schema()
    names = plan_keys._Names(base, schema, qrels_schema)
    rows = plan_inputs._run_rows(run, base, names, with_relevance=False)
    # judged_only: the rows whose doc is judged at a level >= 0 for some intent are ranked (trec_eval -J); every
    # row's query stays a query of the run, as `_plan` keeps one that judged_only empties (scored 0)
    ranked = plan_rows._judged_retrieved(rows, qrels, base, names) if base.judged_only else rows
    positioned = ranked.with_columns(
        plan_quantities._position(base, names, judged=False, over=names.keys).alias(POSITION)
    )
    rows = rows.with_columns(plan_keys._doc_value(names.docs).is_duplicated().over(names.keys).alias(DUPLICATED))
    run_checks = plan_checks._row_checks(base, rows.collect_schema(), names, judged=True)
    run_queries = rows.group_by(names.keys).agg(
        *(expression for check in run_checks for expression in check.aggregations()),
        pl.lit(True).alias(IN_RUN),
    )
    null_queries = _null_queries(spec, names, "")
    run_queries = run_queries.with_columns(null_queries.aggregations())
    judgments = _judgments(qrels, spec, names)
    qrels_checks = _qrels_checks(spec, names)
    rels = dict.fromkeys(spec.setting(m).rel for m in spec.measures)
    judged = (
        judgments.with_columns(_judged_twice(names))
        .group_by(names.query)
        .agg(
            *(expression for check in qrels_checks for expression in check.aggregations()),
            *(pl.col(INTENT).filter(relevant(rel)).n_unique().alias(intents(Setting(rel, 0, 0))) for rel in rels),
            *(pl.col(names.docs[0]).filter(relevant(rel)).n_unique().alias(_relevant_docs(rel)) for rel in rels),
            pl.lit(True).alias(JUDGED),
        )
    )
    judged, ideal_checks = _with_judged_sums(judged, judgments, spec, names)
    ideal_checks.append(_null_queries(spec, names, "qrels "))
    judged = judged.with_columns(expression for check in ideal_checks for expression in check.aggregations())
    zero = base.missing_queries == "zero"
    # every judged query, in the run or not, so that the judgments' checks see all of them
    per_query = run_queries.join(judged, on=names.query, how="full", coalesce=True, nulls_equal=True)
    per_query = _with_run_sums(per_query, positioned, judgments, spec, names)
    metrics = [_metric(i) for i in range(len(spec.measures))]
    in_run, has_judgments = pl.col(IN_RUN).fill_null(False), pl.col(JUDGED).fill_null(False)
    per_query = per_query.with_columns(
        *(
            _mean.positive_zero(spec.definition(m).value(spec.setting(m), m.cutoff)).alias(name)
            for m, name in zip(spec.measures, metrics, strict=True)
        ),
        (has_judgments & (in_run if not zero else pl.lit(True))).alias(SCORED),
        (in_run & ~has_judgments).alias(UNJUDGED),
    )
    checks = [*run_checks, null_queries, *qrels_checks, *ideal_checks]
    per_query = per_query.with_columns(pl.col(check.column).fill_null(0) for check in checks)
    output = [*names.keys, *metrics, SCORED, UNJUDGED]
    read = [check.column for check in checks] + [c.value_column for c in checks if c.value is not None]
    kept = per_query.select(list(dict.fromkeys([*output, *read])))
    where = plan_keys._describe_keys(list(base.query), list(base.by))
    checked = apply_checks(kept.sort(names.keys, nulls_last=True), where, names.keys, output, checks)
    return checked, names


def _outputs(spec: DiversitySpec, names: plan_keys._Names) -> list[pl.Expr]:
    output = [names.output(internal, name) for internal, name in zip(names.keys, spec.base.keys, strict=True)]
    return output + [pl.col(_metric(i)).alias(m.column) for i, m in enumerate(spec.measures)]


def per_query_plan(run: pl.LazyFrame, qrels: pl.LazyFrame, spec: DiversitySpec) -> pl.LazyFrame:
    """One row per (by..., query) scored, sorted by them: the by columns, the query columns, the measures."""
    checked, names = _flagged_per_query(run, qrels, spec)
    return checked.filter(pl.col(SCORED)).select(_outputs(spec, names))


def mean_plan(run: pl.LazyFrame, qrels: pl.LazyFrame, spec: DiversitySpec) -> pl.LazyFrame:
    """One row per `by` group (one row without by): the mean of each measure over the scored queries,
    `queries`, `weight_sum` and `queries_without_judgments`, as `_plan.mean_plan` gives them."""
    checked, names = _flagged_per_query(run, qrels, spec)
    if names.by:
        # a judged query missing from the run has a row (for the judgments' checks) without by values: it is in
        # no group (missing_queries="zero" refuses by=), and left in, it made a group of None with no query
        checked = checked.filter(pl.col(SCORED) | pl.col(UNJUDGED))
    metrics = [_metric(i) for i in range(len(spec.measures))]
    result = _mean.means(
        checked,
        names.by,
        list(spec.base.by),
        metrics,
        None,
        None,
        pl.col(SCORED),
        pl.col(UNJUDGED),
    )
    return result.rename({internal: m.column for internal, m in zip(metrics, spec.measures, strict=True)})
