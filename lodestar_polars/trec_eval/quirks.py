"""What trec_eval computes otherwise than the package's measures, reproduced on the per-query frame: 11pt_avg over
levels in the order given, -c's stand-in ranking of a judged query missing from the run, utility without a
collection size, and the values it prints as -nan (0 / 0).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from .._spec import parse_measure
from ..measures.eleven_point_average import trec_eval_levels
from .measures import TrecRequested, printed_columns


def utility_without_collection(parameters: str | None, collection: int) -> tuple[str, str, float] | None:
    """utility weighing the non-relevant documents not retrieved (d != 0) without -N, or with -N 0: trec_eval
    counts them as N + h - n - R with N = 0, a negative number, and prints that utility.  The package's utility
    refuses d != 0 without a collection, so the command line evaluates the measure with d = 0 and adds
    d x (0 + h - n - R) itself (`with_utility_rest`).  (the column printed, the column evaluated, d), or None
    when the package's utility computes it as asked."""
    if parameters is None or collection != 0:
        return None
    ((_, printed_column),) = printed_columns("utility", parameters, collection)
    a, b, c, d = (float(value) for value in parameters.split(","))
    if d == 0:
        return None
    evaluated = parse_measure(f"utility(a={a!r},b={b!r},c={c!r})").column
    return printed_column, evaluated, d


def with_utility_rest(column: str, evaluated: str, d: float) -> pl.Expr:
    """trec_eval's utility from its first three terms (`evaluated`, d = 0) plus d x (N + h - n - R), N = 0: the
    count is an integer in trec_eval (its sum is exact), then multiplied, then added last, as there."""
    rest = pl.col("num_rel_ret") - pl.col("num_ret") - pl.col("num_rel")
    return (pl.col(evaluated) + pl.lit(d) * rest.cast(pl.Float64)).alias(column)


ELEVEN_POINT_FIRST_LEVEL = "iprec@0.0"  # the interpolated precision at recall 0, where trec_eval's walk ends


def eleven_point_walk(levels: Sequence[float], sources: Sequence[str]) -> pl.Expr:
    """trec_eval's 11pt_avg over its parameters, the levels in the order given, from the per-query columns
    num_rel (R), num_rel_ret (h), the iprec column of each level (`sources`) and iprec@0.0.

    trec_eval (m_11pt_avg.c) turns each level x into a count of relevant documents c = lround(x R), skips the
    levels from the last one down while c > h (each adds 0), then walks the ranking upwards from its end: at the
    c-th relevant document it adds the interpolated precision there for the current level and moves to the level
    before it, as long as that level's c is the current count; the levels it has not reached when the walk ends
    (c of 0, or a c above the count where the previous level was met) each add the interpolated precision at the
    first relevant document, iprec@0.0.  With ascending levels that is the sum of their iprec, the levels' own
    values; out of order, a level whose c lies above the previous level's is not met and adds iprec@0.0 instead
    (`-m 11pt_avg.0.5,0.2` adds iprec@0.2 and iprec@0.0).  The values are added from the last level to the first
    and the sum divided by their number, as trec_eval adds them."""
    relevant, found = pl.col("num_rel").cast(pl.Float64), pl.col("num_rel_ret").cast(pl.Float64)
    at_first = pl.col(ELEVEN_POINT_FIRST_LEVEL)
    total: pl.Expr = pl.lit(0.0)
    skipping, ended, count = pl.lit(True), pl.lit(False), found
    for level, source in zip(reversed(levels), reversed(sources), strict=True):
        cut = (pl.lit(level) * relevant).round(0, mode="half_away_from_zero")
        skipped = skipping & (cut > found)
        met = ~skipped & ~ended & (cut >= 1.0) & (cut <= count)
        total = total + pl.when(skipped).then(0.0).when(met).then(pl.col(source)).otherwise(at_first)
        skipping, ended = skipped, ~skipped & ~met
        count = pl.when(met).then(cut).otherwise(count)
    return total / len(levels)


def bogus_ranking_values(requested: Mapping[str, tuple[float, ...] | str | None]) -> dict[str, float]:
    """With -c, trec_eval scores a judged query missing from the run on a ranking of one unjudged document and
    then zeroes num_ret, utility, relstring, unj* and rbp_resid by their printed names: `rbp_resid_p=0.75` is not
    zeroed and keeps that ranking's residual, p^1 + (1 - p) x p^0.  The evaluate() column -> that value."""
    values: dict[str, float] = {}
    for printed, column in printed_columns("rbp_resid", requested["rbp_resid"]) if "rbp_resid" in requested else []:
        if printed != "rbp_resid":
            p = float(printed.removeprefix("rbp_resid_p="))
            values[column] = p + (1.0 - p) * 1.0
    return values


def greatest_level(qrels: pl.LazyFrame) -> int:
    """The greatest judged level (0 without a positive one): the gain mappings of the gain pairs cover 0..it."""
    greatest = qrels.select(pl.col("relevance").max()).collect().item()
    return max(int(greatest or 0), 0)


def undefined_values(
    per_query: pl.DataFrame, requested: TrecRequested, judged_only: bool, positive: pl.DataFrame
) -> pl.DataFrame:
    """The values trec_eval computes as 0 / 0 and prints as -nan (a NaN, which the mean then takes):

    - under -J, a query left with no judged document (with -c, a judged query missing from the run too: its
      stand-in document is unjudged): iprec_at_recall at a level whose rank lround(level * R) is 0 (every
      level when R = 0), and 11pt_avg, which averages such levels;
    - Rndcg of a query with relevant documents (R > 0, as -l counts them) none of whose judged documents has a
      positive gain (`positive`: the queries with one, under Rndcg's gain pairs if it has some), its ideal DCG
      never above 0.
    """
    undefined: dict[str, pl.Expr] = {}
    if judged_only:
        emptied = pl.col("num_ret") == 0

        def rank_zero(level: float) -> pl.Expr:
            return (level * pl.col("num_rel") + 0.5).floor() == 0  # lround of a non-negative number

        if "iprec_at_recall" in requested:
            levels = requested["iprec_at_recall"] or ()
            assert isinstance(levels, tuple)
            for level, (_, column) in zip(levels, printed_columns("iprec_at_recall", levels), strict=True):
                undefined[column] = emptied & rank_zero(level)
        if "11pt_avg" in requested:
            text = requested["11pt_avg"]
            assert not isinstance(text, tuple)
            averaged = [0.0] if text is None else [float(name[6:]) for name in trec_eval_levels(text)]
            for _, column in printed_columns("11pt_avg", text):
                undefined[column] = emptied & pl.any_horizontal([rank_zero(level) for level in averaged])
    if "Rndcg" in requested:
        text = requested["Rndcg"]
        assert not isinstance(text, tuple)
        no_gain = ~pl.col("query").is_in(positive["query"].implode())
        for _, column in printed_columns("Rndcg", text):
            undefined[column] = (pl.col("num_rel") > 0) & no_gain
    return per_query.with_columns(
        pl.when(condition).then(float("nan")).otherwise(pl.col(column)).alias(column)
        for column, condition in undefined.items()
    )


def keep_stand_in_utility(rows: list[dict[str, Any]], parameters: str, collection: int, judged_only: bool) -> None:
    """trec_eval -c scores a judged query missing from the run on a stand-in list of one unjudged document,
    then zeroes the leftovers of the values named "utility", "num_ret", "unj..." only: utility.a,b,c,d (printed
    utility_a,b,c,d) keeps the stand-in's value, a x 0 + b x n + c x R + d x (N - n - R), as here (its terms in
    trec_eval's order), n = 1; under -J, which removes the stand-in document as well, n = 0.  Such a query is
    one with num_ret 0: without -J a query of the run keeps a document; under -J a query of the run left with
    none has that value already."""
    a, b, c, d = (float(value) for value in parameters.split(","))
    ((_, column),) = printed_columns("utility", parameters, collection)
    retrieved = 0 if judged_only else 1
    for row in rows:
        if row["num_ret"] == 0:
            relevant = row["num_rel"]
            row[column] = a * 0 + b * retrieved + c * relevant + d * (collection + 0 - retrieved - relevant)
