"""trec_eval's relstring: each query's judged levels of its first N retrieved documents, as characters."""

from __future__ import annotations

import polars as pl

from .._command_errors import UsageError
from ..measures._trec_parameters import DECIMAL

RELSTRING_LENGTH = 10


def relstring_length(parameters: str | None) -> tuple[str, int]:
    """relstring's printed name and length N (the first N retrieved documents): `relstring` and 10, or with
    `-m relstring.N` `relstring_N` (trec_eval prints the parameter text as given, and reads its first value,
    truncated: `relstring.2.7` is relstring_2.7 of 2 documents)."""
    if parameters is None:
        return "relstring", RELSTRING_LENGTH
    values = [value.strip() for value in parameters.split(",")]
    if not all(DECIMAL.fullmatch(value) for value in values):
        msg = f"measure 'relstring.{parameters}': the length must be a non-negative number, e.g. relstring.20."
        raise UsageError(msg)
    return f"relstring_{parameters}", int(float(values[0]))


def relstring_plan(
    run: pl.LazyFrame, qrels: pl.LazyFrame, length: int, max_retrieved: int | None = None, judged_only: bool = False
) -> pl.LazyFrame:
    """The first `length` documents of each run query in trec_eval's order (score descending, then doc id
    descending as text), their `position` and judged `relevance` (null: not in the judgments); as trec_eval's
    -M and -J form the list: the first `max_retrieved` documents, then (`judged_only`) those judged at a level
    >= 0."""
    order = pl.struct(pl.col("score"), pl.col("doc").cast(pl.String)).rank("ordinal", descending=True)
    ranked = run.select("query", "doc", order.over("query").alias("position"))
    if max_retrieved is not None:
        ranked = ranked.filter(pl.col("position") <= max_retrieved)
    judged = qrels.select("query", "doc", "relevance")
    rows = ranked.join(judged, on=["query", "doc"], how="left")
    if judged_only:
        rows = rows.filter(pl.col("relevance") >= 0)
        rows = rows.with_columns(pl.col("position").rank("ordinal").over("query").alias("position"))
    return rows.filter(pl.col("position") <= length).select("query", "position", "relevance")


def _relevance_character(relevance: int | None) -> str:
    """trec_eval's relstring character: the level 0-9, '>' above 9, '-' not in the judgments (not pooled), '.'
    judged at a negative level (pooled, not assessed)."""
    if relevance is None:
        return "-"
    if relevance < 0:
        return "."
    return ">" if relevance > 9 else str(relevance)


def relstrings(top: pl.DataFrame) -> dict[str, str]:
    """Each query's relstring from `relstring_plan`'s rows (a query of the judgments missing from the run has
    none: `missing_relstring`)."""
    characters: dict[str, list[tuple[int, str]]] = {}
    for query, position, relevance in top.iter_rows():
        characters.setdefault(query, []).append((position, _relevance_character(relevance)))
    return {query: "".join(c for _, c in sorted(pairs)) for query, pairs in characters.items()}


def missing_relstring(printed: str, length: int, judged_only: bool) -> str:
    """The relstring of a query with no row in `relstring_plan`: a judged query missing from the run (-c), for
    which trec_eval ranks one made-up document, not judged ('-'), then clears the string of the measure named
    `relstring`, but not of `relstring_N`; or, under -J, a query whose retrieved documents -J removed, the
    made-up document too (unjudged): an empty string."""
    return "" if printed == "relstring" or judged_only else "-"[:length]
