"""The plan builder: one lazy Polars query computing ranking measures per query (per `by` group and query).

Everything else in the package (namespaces, scikit-learn drop-ins, the Spark adapter, partitions) is a shell
over `per_query_plan` and `mean_plan`.

The user's frame enters through one `select` that renames every column the plan reads to an internal name
(`__lodestar_*`), and leaves through one `select` that names the outputs; in between only internal names
exist, so no user column name can collide with one.  A per-query row is identified by its keys: the `by`
columns, then the query columns.

The measures themselves live in `measures/`, one module each (`measures/__init__.py`): each declares the
shared quantities it needs, its per-query terms and its finish.  This package only orchestrates: it asks the
measure registry which quantities the measures of a call need (`_needs`), computes each once by walking the
quantity registry (`registry.py`: each quantity's `QuantityPlan` says what it adds at each site of the plan,
for the call's route; the assembly has no branch per quantity), sums the union of their
terms (`_terms`; a term two measures share, such as DCG@k for ndcg and dcg, is summed once), runs the
per-query steps they derive (`_with_derived`) and finishes each measure with its own expression.  For a
query of n rows:

1. Each row gets a 1-based `position` by descending score (`rank("ordinal").over(keys)`, with the tie
   break of the chosen `ties` mode) and, when a measure needs them, a `discount` = 1 / log_b(position + 1),
   its gain, its relevant flag (relevance above `threshold`), the relevant rows ranked above it, and its
   ideal position and discount.  With ties="optimistic"/"pessimistic", the measures reading the gain and
   those counting relevant rows may order a tie block differently: the latter get positions of their own.
2. Deterministic tie modes: each term's row form, summed (or its least value taken) in one group-by on the
   keys, with the relevant count, the ideal DCG and the data checks.  When every measure of the call has a
   cut-off and reads only the rows within it (ndcg, dcg: `_rows_within_cutoffs`), that group-by reads only
   the rows ranked within the largest cut-off in the run's or the ideal order, and the row checks are counted
   over each query's failing rows, found among every row (`_with_row_checks`).
3. `ties="average"`: the exact expectation over every order of the tied documents (McSherry & Najork, ECIR
   2008; scikit-learn's tie averaging for DCG).  The rows sharing a score form a block covering positions
   s+1..s+n, whatever order an ordinal rank deals them in, so block sums of per-position quantities are
   exact; each measure module gives its terms' block form from them (and says why in its docstring).  A row
   in no tie is a block of one: its block term is its row term.  Only the rows of the queries holding a tie
   (fewer distinct scores than rows: `_in_tied_query`) go to a group-by on (keys, score) that computes every
   block sum once (`_block_sums`), and the block terms from them (of a query longer than the largest
   cut-off, only the tie blocks reaching it: `_blocks_reaching`); the other queries' rows count in the row
   sums.  The two branches fork from the windows' output and each computes its rows' discounts after the
   fork: the streaming engine holds the rows one branch has not read yet, and the discounts are 16 bytes a row.
   With the relevance joined late (below), every row that counts goes to that group-by (a row in no tie is a
   block of one), so the tied flag needs no window over every row.
4. Measures that read prefixes in position order (trec_eval's G, ndcg_rel, Rndcg, rbp) get them from windows
   ordered by position (`Running`, the run's and the ideal order's prefixes, with the relevant rows ranked
   above in the deterministic tie modes, in one context) before the group-by; with tie averaging, ndcg_rel's
   expectation also reads the discounts and the expected DCG (each gain its tie block's mean) above each row.
   Without judgments the ideal's come from the query's gains sorted inside those windows; with them they are
   joined on the position.
5. Ideal DCG@k: the same sum over the positive gains with positions taken by descending gain (ties there
   cannot matter, so the raw relevance is ranked when the gain grows with it).  With qrels, the ideal DCG and
   R come from every judged document of the query, retrieved or not (trec_eval), shared by every `by` group.

With judgments (qrels), each run row gets its judged level by a join on (query, doc); when every measure has
a cut-off and the positions do not read the relevance, the join comes after the positions and takes only
the rows that can count (those within the largest cut-off, or in tie blocks reaching it), while the counts
and checks still read every row.  Several key columns, or one String key, are grouped by one hash of the
keys (`_Names`).

Every step is a window over the keys, a group-by, a join or an elementwise expression, so the plan runs
natively in the streaming engine.  The data checks ride along in the group-bys; `_checks.apply_checks`
turns them into errors.

Where the code is: this file assembles the plan (`_flagged_per_query`) and holds the three plans the front ends
call (`per_query_plan`, `mean_plan`, `flagged_plan`); `keys.py` the internal names and the group keys;
`needs.py` what the call's measures need (definitions, quantities, terms, context); `route.py` the route the
call's rows take (`Route`: where the relevance comes from, which rows the sums read, whether the rows fork
into the tie blocks), chosen once per call; `inputs.py` the user's columns under internal names;
`quantities.py` the builders of the shared quantities (positions, discounts, counts above a row, query totals,
prefixes); `registry.py` the quantity registry the assembly walks (`QuantityPlan`, `Build`); `row_columns.py`
the per-row columns the terms read and the measures' running windows (`Running`); `rows.py` which run rows
count and with what relevance; `checks.py` the data checks; `aggregate.py` the per-query sums and the tie
blocks' part; `judgments.py` the per-query judgment side.  The maths of a quantity one measure family owns
lives with it (ERR's cascade: `measures/_cascade.py`; compat's ideal: `measures/compat.py`).  Each module
imports only those listed before it: no cycle.
"""

from __future__ import annotations

import polars as pl

from .. import _mean
from .._checks import apply_checks
from .._spec import Spec
from ..measures._base import IN_RUN, POSITION, RELEVANT_POSITION, TIED, Derived
from .aggregate import _aggregate, _in_tied_query, _rows_that_count
from .checks import _count_run_rows_once, _final_checks, _hash_collision_check, _row_checks
from .inputs import _run_rows
from .judgments import _join_judgments, _judgments
from .keys import (
    DUPLICATED,
    HAS_JUDGMENTS,
    SCORED,
    UNJUDGED,
    WEIGHT,
    WEIGHT_MIN,
    _describe_keys,
    _doc_value,
    _metric,
    _Names,
    _with_group_keys,
)
from .needs import _context, _definitions, _splits_positions
from .quantities import _position
from .registry import Build, expressions, frame_steps, ordered_windows, with_judged_query_values, with_ordered_joins
from .route import TermRows, route
from .row_columns import _with_discounts, _with_term_columns
from .rows import _emptied_queries, _first_retrieved, _judged_retrieved, _with_gain_and_relevant, _with_judged_relevance

# --- the measures ----------------------------------------------------------------------------------------------


def _with_derived(per_query: pl.LazyFrame, spec: Spec, judged: bool) -> pl.LazyFrame:
    """The per-query columns the measures of the call derive after the group-by, each step once for all of
    its columns (with tie averaging, rr's and success's expectations over the first relevant block)."""
    context = _context(spec, judged)
    wanted: list[Derived] = list(
        dict.fromkeys(derived for d, m in _definitions(spec) for derived in d.derived(context, m.cutoff))
    )
    for step in dict.fromkeys(derived.step for derived in wanted):
        per_query = step(per_query, [derived for derived in wanted if derived.step is step])
    return per_query


def _flagged_per_query(
    run: pl.LazyFrame, qrels: pl.LazyFrame | None, spec: Spec, groups: pl.LazyFrame | None = None
) -> tuple[pl.LazyFrame, _Names]:
    """Every per-query row the plan saw, checked and sorted by keys: keys, metrics (internal names), weight,
    and the SCORED (and UNJUDGED) flags."""
    names = _Names(spec, run.collect_schema(), qrels.collect_schema() if qrels is not None else None)
    judged = qrels is not None
    way = route(spec, judged)
    late = way.relevance_joined_late
    rows = retrieved = _run_rows(run, spec, names, with_relevance=not judged)
    if names.hashed:  # read again for the groups' keys (`_group_keys`): cached, so that the source is read once
        rows = retrieved = retrieved.cache()
    if spec.max_retrieved is not None and judged:
        rows = _first_retrieved(rows, spec, names, spec.max_retrieved)
    if spec.judged_only and qrels is not None:
        rows = _judged_retrieved(rows, qrels, spec, names)
    build = Build(spec, names, way, qrels)
    if qrels is not None and not late:
        rows = _with_judged_relevance(rows, build, keep_order=way.keeps_row_order)
    if not late:
        rows = _with_gain_and_relevant(rows, build)
        rows = with_judged_query_values(build, rows, keep_order=way.keeps_row_order)
    windows = [_position(spec, names, judged=judged).alias(POSITION)]
    if _splits_positions(spec):
        windows.append(_position(spec, names, judged=judged, by_relevant=True).alias(RELEVANT_POSITION))
    # the quantities' windows over each query's rows share this context's groups
    windows += expressions(build, lambda plan: plan.position_windows)
    if spec.doc:
        windows.append(_doc_value(names.docs).is_duplicated().over(names.group).alias(DUPLICATED))
    # with the relevance joined late, every row that counts goes to the block group-by instead (`_aggregate`)
    if way.averages_blocks and not late:
        windows.append(_in_tied_query(names, spec).alias(TIED))
    rows = rows.with_columns(windows)
    rows = frame_steps(build, rows, lambda plan: plan.after_positions)
    # the windows ordered by position: with the running sums and products (`_with_running`) when the rows that
    # count are all the rows
    prefixes = ordered_windows(build)
    if prefixes and late:
        rows = rows.with_columns(prefixes)
    rows = with_ordered_joins(build, rows)
    terms_rows = None
    if qrels is not None and way.term_rows is TermRows.LATE_JUDGED:
        terms_rows = _with_judged_relevance(_rows_that_count(rows, spec, names), build, keep_order=False)
        terms_rows = _with_gain_and_relevant(terms_rows, build)
        terms_rows = with_judged_query_values(build, terms_rows, keep_order=False)
        terms_rows = _with_term_columns(terms_rows, build)
    elif way.term_rows is TermRows.FIRST_RETRIEVED:  # the checks count every row
        # the ordered windows over every row (the ideal prefixes read the rows cut too), then the cut
        rows = rows.with_columns(prefixes) if prefixes else rows
        terms_rows = rows.filter(pl.col(POSITION) <= way.retrieved_limit)
        terms_rows = _with_term_columns(terms_rows, build)
    else:
        # with tie averaging over every row (no late judgments, no max_retrieved), the rows fork after the
        # windows into the per-row sums and the tie blocks (`_aggregate`), each branch taking its discounts
        rows = _with_term_columns(rows, build, windows=prefixes)
    if not way.forks_for_blocks:  # the ideal positions' discounts, read by the per-query group-by over every row
        rows = _with_discounts(rows, build)
    checks = _row_checks(spec, rows.collect_schema(), names, judged)
    per_query = _aggregate(rows, terms_rows, build, checks)
    key_checks = [_hash_collision_check(spec, names)] if names.hashed else []
    if names.hashed:
        per_query = _with_group_keys(per_query, retrieved, names, key_checks)
    if spec.repeated_over is not None:
        per_query = _count_run_rows_once(per_query, checks, spec.query.index(spec.repeated_over), names)
    if qrels is not None:
        if spec.judged_only:
            emptied = _emptied_queries(retrieved, per_query, spec, names)
            per_query = pl.concat([per_query, emptied], how="diagonal_relaxed")
        per_query = _join_judgments(per_query, _judgments(build), build, groups)
    metrics = [_metric(i) for i in range(len(spec.measures))]
    per_query = _with_derived(per_query, spec, judged)
    context = _context(spec, judged)
    per_query = per_query.with_columns(
        _mean.positive_zero(definition.value(context, measure.cutoff)).alias(name)
        for (definition, measure), name in zip(_definitions(spec), metrics, strict=True)
    )
    final = _final_checks(spec, names, metrics, judged)
    flags = [SCORED]
    if qrels is None:
        scored = pl.lit(True)
    else:
        scored = pl.col(HAS_JUDGMENTS) & (pl.col(IN_RUN) if spec.missing_queries == "skip" else pl.lit(True))
        flags.append(UNJUDGED)
    per_query = per_query.with_columns(
        *(expression for check in final for expression in check.aggregations()),
        scored.alias(SCORED),
        *([(pl.col(IN_RUN) & ~pl.col(HAS_JUDGMENTS)).alias(UNJUDGED)] if qrels is not None else []),
    )
    if spec.weight is not None:
        per_query = per_query.with_columns(_mean.positive_zero(pl.col(WEIGHT_MIN)).alias(WEIGHT))
    output = [*names.keys, *metrics, *([WEIGHT] if spec.weight is not None else []), *flags]
    where = _describe_keys(list(spec.query), list(spec.by))
    every_check = [*checks, *key_checks, *final]
    # only the columns the checks and the output read go on: the checks' map is opaque to the optimizer, which
    # would otherwise sort every term and counter along
    read = [check.column for check in every_check] + [c.value_column for c in every_check if c.value is not None]
    kept = per_query.select(list(dict.fromkeys([*output, *read])))
    # sorted before the checks' map, not after it: with the sort after it, the score forms' mean changed in its
    # last digit with the column names (2026-12-03): its sum no longer ran in key order
    checked = apply_checks(kept.sort(names.keys, nulls_last=True), where, names.keys, output, every_check)
    return checked, names


def _outputs(spec: Spec, names: _Names) -> list[pl.Expr]:
    output = [names.output(internal, name) for internal, name in zip(names.keys, spec.keys, strict=True)]
    output += [pl.col(_metric(i)).alias(m.column) for i, m in enumerate(spec.measures)]
    if spec.weight is not None:
        output.append(pl.col(WEIGHT).alias(spec.weight.name))
    return output


def per_query_plan(run: pl.LazyFrame, qrels: pl.LazyFrame | None, spec: Spec) -> pl.LazyFrame:
    """One row per (by..., query), sorted by them: the by columns, the query columns, the measures, the weight."""
    checked, names = _flagged_per_query(run, qrels, spec)
    return checked.filter(pl.col(SCORED)).select(_outputs(spec, names))


def flag_columns(spec: Spec) -> tuple[str, str]:
    """Names for the SCORED and UNJUDGED flags of `flagged_plan` that no output column has."""
    taken = {*spec.keys, *spec.metric_columns, *([spec.weight.name] if spec.weight is not None else [])}
    scored, unjudged = SCORED, UNJUDGED
    while scored in taken or unjudged in taken:
        scored, unjudged = scored + "_", unjudged + "_"
    return scored, unjudged


def flagged_plan(
    run: pl.LazyFrame, qrels: pl.LazyFrame | None, spec: Spec, groups: pl.LazyFrame | None
) -> pl.LazyFrame:
    """Every per-query row, under the output names, with the SCORED and UNJUDGED flags (named by
    `flag_columns`), for an engine that computes the means itself (Spark).  `groups` gives the by groups of
    the whole run to a partition of it."""
    checked, names = _flagged_per_query(run, qrels, spec, groups)
    scored, unjudged = flag_columns(spec)
    flag = pl.col(UNJUDGED) if qrels is not None else pl.lit(False)
    return checked.select(*_outputs(spec, names), pl.col(SCORED).alias(scored), flag.alias(unjudged))


def mean_plan(run: pl.LazyFrame, qrels: pl.LazyFrame | None, spec: Spec) -> pl.LazyFrame:
    """One row per `by` group (one row without by): the weighted mean of each measure, `queries` (the queries
    that entered it), `weight_sum`, and with qrels `queries_without_judgments`; see `_mean`."""
    checked, names = _flagged_per_query(run, qrels, spec)
    metrics = [_metric(i) for i in range(len(spec.measures))]
    result = _mean.means(
        checked,
        names.by,
        list(spec.by),
        metrics,
        WEIGHT if spec.weight is not None else None,
        spec.weight.name if spec.weight is not None else None,
        pl.col(SCORED),
        pl.col(UNJUDGED) if qrels is not None else None,
        summaries=[definition.summary for definition, _ in _definitions(spec)],
        exact=spec.exact_sums,
    )
    return result.rename({internal: m.column for internal, m in zip(metrics, spec.measures, strict=True)})
