"""The per-query sums: each term's row form summed (or its least value taken) in one group-by on the keys,
over every row or only the rows that count (`_rows_that_count`, `_rows_within_cutoffs`), with the tie blocks'
part under `ties="average"` from one group-by on (keys, score) (`_with_blocks`), exactly when `exact_sums`."""

from __future__ import annotations

import polars as pl

from .._checks import DataCheck
from .._exact_sum import sum_parts, with_exact_totals
from .._spec import Spec
from ..measures._base import (
    BLOCK_SIZE,
    POSITION,
    RELEVANT_POSITION,
    ROWS,
    TIED,
    cut_at,
)
from .keys import _P, SCORE, WEIGHT, WEIGHT_MAX, WEIGHT_MIN, _Names
from .needs import Terms, _definitions, _splits_positions, _terms
from .registry import Build, expressions
from .registry import within_cutoffs as registry_within_cutoffs
from .route import TermRows
from .row_columns import _with_discounts, judged_rows_apart


def _block_sums(terms: Terms) -> list[pl.Expr]:
    """Per tie block: its size, and the block sums every block term reads, each once."""
    sums = {BLOCK_SIZE: pl.len().alias(BLOCK_SIZE)}
    for term in terms.values():
        if term.block is not None:
            for block_sum in term.block_sums:
                sums.setdefault(block_sum.meta.output_name(), block_sum)
    return list(sums.values())


def _rows_that_count(rows: pl.LazyFrame, spec: Spec, names: _Names) -> pl.LazyFrame:
    """With finite cut-offs, a row past the largest k weighs nothing, and with tie averaging so does a tie
    block starting past it: drop them.  The blocks that reach the top k are those scoring at least the score
    at position k (fewer than k documents: every block).  Whatever ranks above a kept row is kept."""
    cutoffs = [cut_at(m.cutoff) for m in spec.measures]
    if None in cutoffs:
        return rows
    largest = max(c for c in cutoffs if c is not None)
    if spec.ties != "average":
        within = pl.col(POSITION) <= largest
        if _splits_positions(spec):  # the counting measures read positions of their own
            within = within | (pl.col(RELEVANT_POSITION) <= largest)
        return rows.filter(within)
    score_at_cutoff = pl.when(pl.col(POSITION) <= largest).then(pl.col(SCORE)).min().over(names.group)
    return rows.filter(pl.col(SCORE) >= score_at_cutoff)


def _aggregate(
    rows: pl.LazyFrame,
    terms_rows: pl.LazyFrame | None,
    build: Build,
    checks: list[DataCheck],
) -> pl.LazyFrame:
    """Group the rows by keys: the per-row terms and the check counters in one pass.  `terms_rows`, when
    given, are the rows that count, their relevance joined late (`TermRows.LATE_JUDGED`), or without
    judgments the first max_retrieved rows (`TermRows.FIRST_RETRIEVED`: the retrieved count comes from them too):
    the terms come from them, the counters and the judgment side (R, ideal orders) from every row.  With
    `ties="average"`, the terms that tie blocks change come from a (keys, score) group-by (`_block_sums`), whose
    block terms are summed per query, joined on and added: over the rows that count when they are given (a row
    in no tie is a block of one, whose block term is its row term), else over the rows of the queries holding a
    tie only, the others counting in the per-row sums: then (the fork) `rows` are the windows' output, without
    the discounts, which each branch computes from its own rows (`_with_discounts`)."""
    spec, names, route = build.spec, build.names, build.route
    judged = route.judged
    terms = _terms(spec, judged)
    retrieved_in_terms = route.term_rows is TermRows.FIRST_RETRIEVED
    averaged = route.averages_blocks
    forked = route.forks_for_blocks  # `_flagged_per_query` left the discounts out exactly then
    # the row checks counted apart (`_with_row_checks`), and no group-by over every row: over the rows within the
    # largest cut-off without judgments, over the judged rows that count with them (`_reads_within_cutoffs`)
    apart = _reads_within_cutoffs(spec, checks) and (terms_rows is None or (judged and not retrieved_in_terms))
    within = _rows_within_cutoffs(build) if apart and terms_rows is None else None
    every_row = rows
    if forked:
        # read by up to four branches: an explicit cache of the windows' output (else Polars' common-plan cache
        # recomputes the windows in one), before the discounts: the streaming engine's multiplexer holds the
        # rows one branch has not read yet, without 16 bytes of discounts a row
        forked_rows = every_row = rows.cache()
        rows = forked_rows if within is None else forked_rows.filter(within)
        rows = _with_discounts(rows, build)
    elif within is not None:
        rows = rows.filter(within)
    every_row_by_block = averaged and terms_rows is not None
    # with judgments (every row, deterministic ties), the terms that are 0 or null on the rows without a judged
    # level (`Term.judged_rows`) are taken over the judged rows only: on a deep run most rows are unjudged
    over_judged = judged and not averaged and terms_rows is None
    per_row: list[pl.Expr] = []
    per_judged_row: list[pl.Expr] = []
    judged_sums: list[str] = []
    for name, term in terms.items():
        if every_row_by_block and term.block is not None:
            continue
        row = _alone(term.row) if averaged and term.block is not None else term.row
        # a sum of whole numbers is exact in any order: no partial totals (`Term.whole`)
        aggregations = _reduce(row, term.least, name, spec.exact_sums and not term.whole)
        if over_judged and term.judged_rows:
            per_judged_row += aggregations
            judged_sums += [] if term.least else [name]
        else:
            per_row += aggregations
    retrieved = [pl.len().alias(ROWS)]
    extra = [] if retrieved_in_terms or apart else [*retrieved]
    if spec.weight is not None:
        extra += [pl.col(WEIGHT).min().alias(WEIGHT_MIN), pl.col(WEIGHT).max().alias(WEIGHT_MAX)]
    if not judged:  # with judgments the judgments side computes the per-query quantities (`_judgments`)
        extra += expressions(build, lambda plan: plan.per_query)
    counters = [] if apart else [expression for check in checks for expression in check.aggregations()]
    per_query: pl.LazyFrame | None
    if terms_rows is None:
        per_query = _with_exact_totals(spec, rows.group_by(names.group).agg(*per_row, *extra, *counters))
        if per_judged_row:
            # the quantities only those sums read are computed over the judged rows alone (`on_judged_rows`)
            judged_rows = judged_rows_apart(build, rows)
            judged_totals = _with_exact_totals(spec, judged_rows.group_by(names.group).agg(per_judged_row))
            # a query without a judged row: its sums 0, its least values null (no row qualifies)
            per_query = per_query.join(judged_totals, on=names.group, how="left", nulls_equal=True)
            per_query = per_query.with_columns(pl.col(name).fill_null(0.0) for name in judged_sums)
    else:
        # with the checks apart nothing else is counted over every row (`extra` is empty: no weight, no R)
        per_query = (
            _with_exact_totals(spec, rows.group_by(names.group).agg(*extra, *counters)) if extra or counters else None
        )
        per_row += retrieved if retrieved_in_terms else []
        if per_row:
            row_totals = _with_exact_totals(spec, terms_rows.group_by(names.group).agg(per_row))
            per_query = (
                row_totals
                if per_query is None
                else per_query.join(row_totals, on=names.group, how="left", nulls_equal=True)
            )
    if averaged:
        per_query = _with_blocks(per_query, forked_rows if forked else terms_rows, build)
    assert per_query is not None  # a judged call has a term with no block form, or is tie-averaged
    return _with_row_checks(per_query, every_row, names, checks) if apart else per_query


def _with_blocks(
    per_query: pl.LazyFrame | None,
    rows: pl.LazyFrame | None,
    build: Build,
) -> pl.LazyFrame:
    """The per-query terms' block parts added (`_aggregate`): `rows` are the rows that count (relevance joined
    late), whose blocks carry every block term, or (`route.forks_for_blocks`) the windows' output, whose tied
    queries' blocks do.  Without `per_query` (the checks apart, every term by block), the blocks' totals are the
    per-query rows."""
    spec, names = build.spec, build.names
    judged, forked = build.route.judged, build.route.forks_for_blocks
    assert rows is not None
    terms = _terms(spec, judged)
    largest = _largest_cutoff(spec)
    # the blocks: every row that counts (relevance joined late), or those of the queries holding a tie
    if not forked:
        tied = rows
    elif largest is None:
        tied = _with_discounts(rows.filter(pl.col(TIED)), build)
    else:
        reaching = _blocks_reaching(rows, largest, names)
        tied = _with_discounts(pl.concat([rows.filter(pl.col(TIED)), reaching]), build)
    # name -> (block term, least)
    per_block = {name: (term.block, term.least) for name, term in terms.items() if term.block is not None}
    blocks = _with_exact_totals(spec, tied.group_by(*names.group, SCORE).agg(_block_sums(terms)))
    blocks = blocks.select(*names.group, *(block.alias(_block(name)) for name, (block, _) in per_block.items()))
    block_totals = blocks.group_by(names.group).agg(
        aggregation
        for name, (_, least) in per_block.items()
        for aggregation in _reduce(pl.col(_block(name)), least, _block(name), spec.exact_sums)
    )
    block_totals = _with_exact_totals(spec, block_totals)
    if per_query is None:
        joined = block_totals
    else:
        joined = per_query.join(block_totals, on=names.group, how="left", nulls_equal=True)
    added = [_added(name, least, not forked).alias(name) for name, (_, least) in per_block.items()]
    return joined.with_columns(added).drop(_block(name) for name in per_block)


def _reads_within_cutoffs(spec: Spec, checks: list[DataCheck]) -> bool:
    """Every measure of the call has a finite cut-off and reads only the rows within it
    (`Definition.reads_within_cutoff`), there is no weight, and every row check counts failing rows
    (`DataCheck.failing`): the per-query sums then need only the rows within the largest cut-off
    (`_rows_within_cutoffs`), and the row checks are counted apart over every row (`_with_row_checks`)."""
    if _largest_cutoff(spec) is None or spec.weight is not None or any(check.failing is None for check in checks):
        return False
    return all(definition.reads_within_cutoff for definition, _ in _definitions(spec))


def _rows_within_cutoffs(build: Build) -> pl.Expr:
    """The rows ranked within the largest cut-off, in the run's order or, for the ideal DCG, the ideal order.
    On 100 documents a query and a largest cut-off of 10 or 20, a fifth to a third of the rows."""
    spec = build.spec
    largest = _largest_cutoff(spec)
    assert largest is not None
    within = pl.col(POSITION) <= largest
    if _splits_positions(spec):
        within = within | (pl.col(RELEVANT_POSITION) <= largest)
    for also in registry_within_cutoffs(build, largest):
        within = within | also
    return within


def _with_row_checks(
    per_query: pl.LazyFrame, rows: pl.LazyFrame, names: _Names, checks: list[DataCheck]
) -> pl.LazyFrame:
    """The per-query rows with the row checks' counters, counted over every row's failing rows (usually none:
    a filter over every row and a group-by over what it keeps) and joined on; a query failing none counts 0.
    A full join: a query none of whose rows `per_query` read (every score null: no position) still fails."""
    if not checks:
        return per_query
    failing = [check.failing for check in checks if check.failing is not None]
    counters = [expression for check in checks for expression in check.aggregations()]
    counts = rows.filter(pl.any_horizontal(failing)).group_by(names.group).agg(counters)
    per_query = per_query.join(counts, on=names.group, how="full", coalesce=True, nulls_equal=True)
    return per_query.with_columns(pl.col(check.column).fill_null(0) for check in checks)


def _added(name: str, least: bool, blocks_only: bool) -> pl.Expr:
    """A per-query term: its row part and its blocks' part, or the blocks' part alone."""
    blocks = pl.col(_block(name))
    if blocks_only:
        return blocks if least else blocks.fill_null(0.0)
    return pl.min_horizontal(name, blocks) if least else pl.col(name) + blocks.fill_null(0.0)


def _largest_cutoff(spec: Spec) -> int | None:
    """The largest cut-off of the call, None when a measure has none."""
    cutoffs = [cut_at(m.cutoff) for m in spec.measures]
    return None if None in cutoffs else max(c for c in cutoffs if c is not None)


def _in_tied_query(names: _Names, spec: Spec) -> pl.Expr:
    """Null when a row's query holds no two rows of one score; else whether every row of the query can count
    (no cut-off, or no more rows than the largest one), or only the tie blocks reaching the largest cut-off
    (`_blocks_reaching`).  A tied query's rows go to the block group-by (a row in no tie as a block of one).
    Per query, not per row (`is_duplicated`): beside the two rank windows on 1M x 10 rows, counting distinct
    scores added 0.50 s of CPU, flagging the tied rows per query 0.84 s (benchmarks/RESULTS.md, 2026-12-05
    12:40-13:15; `benchmarks/sorted_path_row.py` times the flag at 26% of the window context there)."""
    largest = _largest_cutoff(spec)
    every_row = pl.lit(True) if largest is None else pl.len() <= largest
    return pl.when(pl.col(SCORE).n_unique() < pl.len()).then(every_row).over(names.group)


def _blocks_reaching(rows: pl.LazyFrame, largest: int, names: _Names) -> pl.LazyFrame:
    """The rows of the tied queries longer than the largest cut-off (`_in_tied_query` False) in the tie blocks
    reaching it: those scoring at least the score at position `largest`, taken per query by a group-by over
    the first `largest` rows and joined on (a window over the query cost more on 100k x 100 rows, 0.30
    against 0.22 s of CPU)."""
    at_cutoff = f"{_P}score_at_cutoff"
    long = pl.col(TIED).not_()
    first = rows.filter(long & (pl.col(POSITION) <= largest))
    scores = first.group_by(names.group).agg(pl.col(SCORE).min().alias(at_cutoff))
    reaching = rows.filter(long).join(scores, on=names.group, nulls_equal=True)
    reaching = reaching.filter(pl.col(SCORE) >= pl.col(at_cutoff))
    return reaching.drop(at_cutoff)


def _alone(row: pl.Expr) -> pl.Expr:
    """A per-row term for the rows of the queries in no tie (with tie averaging); the others count by block."""
    return pl.when(pl.col(TIED).is_null()).then(row)


def _with_exact_totals(spec: Spec, frame: pl.LazyFrame) -> pl.LazyFrame:
    """The exact sums' partial totals of a group-by's output added up (`exact_sums=True`; else nothing to add)."""
    return with_exact_totals(frame) if spec.exact_sums else frame


def _reduce(value: pl.Expr, least: bool, name: str, exact: bool) -> list[pl.Expr]:
    """A term's per-query aggregation named `name`: its least value, or its sum (with `exact`, as partial totals
    that `with_exact_totals` adds up after the group-by: the same bits whatever the rows' order)."""
    return [value.min().alias(name)] if least else sum_parts(value, name, exact)


def _block(name: str) -> str:
    return f"{name}_blocks"
