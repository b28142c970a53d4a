"""Lazy readers for TREC run and qrels files, as trec_eval reads them.

Both readers scan the file line by line (`pl.scan_lines`, which also reads gzip), split each line on runs
of ASCII whitespace (space, tab, CR, LF, FF, VT: C's `isspace`), keep ids as strings and parse the
numeric fields with Polars' strict casts.  Blank lines are skipped.  A malformed line raises a `ValueError`
naming the file and its 1-based line number when the frame is collected.

>>> import lodestar_polars
>>> from lodestar_polars.io import scan_trec_qrels, scan_trec_run
>>> run = scan_trec_run("run.txt")  # doctest: +SKIP
>>> qrels = scan_trec_qrels("qrels.txt")  # doctest: +SKIP
>>> run.rank_metrics.ndcg(doc="doc", ties="doc", qrels=qrels, k=[None, 10]).collect()  # doctest: +SKIP
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import polars as pl

__all__ = ["scan_trec_qrels", "scan_trec_run"]

PathLike = str | os.PathLike[str]

_LINE = "__lodestar_line"
_LINE_NUMBER = "__lodestar_line_number"
_FIELDS = "__lodestar_fields"
_FIELD_COUNT = "__lodestar_field_count"
_PROBLEM = "__lodestar_problem"
# one field: a run of characters C's isspace() does not match (trec_eval's tokenizer)
_FIELD_PATTERN = r"[^ \t\n\r\f\v]+"


@dataclass(frozen=True)
class _Field:
    """One output column: its position in the line, name, dtype and (for numbers) what it must be."""

    position: int
    name: str
    dtype: pl.DataType
    description: str | None = None  # set for parsed (non-string) fields, used in the error message


@dataclass(frozen=True)
class _Format:
    kind: str
    fields: tuple[_Field, ...]
    min_fields: int
    max_fields: int | None  # None: trailing fields are ignored

    @property
    def expected(self) -> str:
        if self.max_fields is None:
            return f"at least {self.min_fields} whitespace-separated fields"
        return f"{self.min_fields} whitespace-separated fields"


_RUN = _Format(
    kind="run",
    fields=(
        _Field(0, "query", pl.String()),
        _Field(1, "q0", pl.String()),
        _Field(2, "doc", pl.String()),
        _Field(3, "rank", pl.Int64(), "an integer rank"),
        _Field(4, "score", pl.Float64(), "a numeric score"),
        _Field(5, "tag", pl.String()),
    ),
    min_fields=6,
    max_fields=None,
)

_QRELS = _Format(
    kind="qrels",
    fields=(
        _Field(0, "query", pl.String()),
        _Field(1, "iteration", pl.String()),
        _Field(2, "doc", pl.String()),
        _Field(3, "relevance", pl.Int64(), "an integer relevance level"),
    ),
    min_fields=4,
    max_fields=4,
)


def _problem(fmt: _Format) -> pl.Expr:
    """0 for a good line, 1 for a wrong field count, 2 + i when the i-th parsed field does not parse."""
    count = pl.col(_FIELD_COUNT)
    wrong_count = count < fmt.min_fields
    if fmt.max_fields is not None:
        wrong_count = wrong_count | (count > fmt.max_fields)
    codes = [pl.when(wrong_count).then(pl.lit(1, pl.UInt8))]
    for index, field in enumerate(fmt.fields):
        if field.description is not None:
            codes.append(pl.when(pl.col(field.name).is_null()).then(pl.lit(2 + index, pl.UInt8)))
    return pl.coalesce(*codes, pl.lit(0, pl.UInt8))


def _parsed_lines(path: str, fmt: _Format) -> pl.LazyFrame:
    """Every non-blank line, split and cast, with its line number and a problem code (no check yet)."""
    lines = pl.scan_lines(path, name=_LINE, row_index_name=_LINE_NUMBER, row_index_offset=1)
    fields = lines.select(
        pl.col(_LINE_NUMBER),
        pl.col(_LINE).str.extract_all(_FIELD_PATTERN).alias(_FIELDS),
    ).with_columns(pl.col(_FIELDS).list.len().alias(_FIELD_COUNT))
    fields = fields.filter(pl.col(_FIELD_COUNT) > 0)
    columns = []
    for field in fmt.fields:
        raw = pl.col(_FIELDS).list.get(field.position, null_on_oob=True)
        value = raw if field.dtype == pl.String else raw.cast(field.dtype, strict=False)
        columns.append(value.alias(field.name))
    return fields.select(pl.col(_LINE_NUMBER), pl.col(_FIELD_COUNT), *columns).with_columns(
        _problem(fmt).alias(_PROBLEM)
    )


def _first_malformed_line(path: str, fmt: _Format) -> tuple[int, str]:
    """Line number and raw text of the first malformed line (read again on the error path only)."""
    parsed = _parsed_lines(path, fmt).filter(pl.col(_PROBLEM) > 0).select(pl.col(_LINE_NUMBER).min())
    number = parsed.collect(engine="in-memory").item()
    lines = pl.scan_lines(path, name=_LINE, row_index_name=_LINE_NUMBER, row_index_offset=1)
    text = lines.filter(pl.col(_LINE_NUMBER) == number).select(_LINE).collect(engine="in-memory").item()
    return int(number), str(text)


def _describe(fmt: _Format, path: str, line_number: int, line: str) -> str:
    fields = re.findall(_FIELD_PATTERN, line)
    where = f"{path}, line {line_number}"
    too_few = len(fields) < fmt.min_fields
    if too_few or (fmt.max_fields is not None and len(fields) > fmt.max_fields):
        return f"malformed TREC {fmt.kind} line ({where}): expected {fmt.expected}, got {len(fields)}: {line!r}."
    for field in fmt.fields:
        if field.description is None:
            continue
        text = fields[field.position]
        if pl.Series([text]).cast(field.dtype, strict=False).is_null().item():
            return (
                f"malformed TREC {fmt.kind} line ({where}): {field.name} field {text!r} is not "
                f"{field.description}: {line!r}."
            )
    return f"malformed TREC {fmt.kind} line ({where}): {line!r}."  # pragma: no cover - both paths agree


def _checker(path: str, fmt: _Format, output: Sequence[str]) -> Callable[[pl.DataFrame], pl.DataFrame]:
    def check_batch(frame: pl.DataFrame) -> pl.DataFrame:
        if frame.select((pl.col(_PROBLEM) > 0).any()).item():
            # a batch may start mid-file: look the first malformed line of the whole file up again
            number, line = _first_malformed_line(path, fmt)
            raise ValueError(_describe(fmt, path, number, line))
        return frame.select(output)

    return check_batch


def _scan(path: PathLike, fmt: _Format) -> pl.LazyFrame:
    if not isinstance(path, (str, os.PathLike)):
        msg = f"path must be a str or os.PathLike naming one file, got {type(path).__name__}."
        raise TypeError(msg)
    file = os.fspath(path)
    if not os.path.isfile(file):
        msg = f"TREC {fmt.kind} file not found: {file}"
        raise FileNotFoundError(msg)
    output = [field.name for field in fmt.fields]
    # a streamable frame-level map: opaque to the optimiser, so no projection can skip the check, and its
    # exception reaches the caller as raised (an expression UDF's would get Polars' context appended)
    return _parsed_lines(file, fmt).map_batches(
        _checker(file, fmt, output),
        schema={field.name: field.dtype for field in fmt.fields},
        streamable=True,
        validate_output_schema=False,
    )


def scan_trec_run(path: PathLike) -> pl.LazyFrame:
    """Scan a TREC run file (``qid Q0 docno rank score tag``) lazily.

    Columns: ``query`` (String), ``q0`` (String), ``doc`` (String), ``rank`` (Int64), ``score`` (Float64),
    ``tag`` (String), one row per non-blank line in file order.  Fields are separated by any run of spaces
    or tabs; fields after the sixth are ignored, as trec_eval ignores them.  Plain or gzip-compressed files.

    The run is ready for `rank_metrics` with ``doc="doc"`` and ``qrels=scan_trec_qrels(...)``; pass
    ``ties="doc"`` for trec_eval's order (score descending, then doc id descending; `rank` is not used).

    Raises
    ------
    FileNotFoundError
        At once, when `path` is not a file.
    ValueError
        At collect time, for a line with fewer than 6 fields, or whose rank is not an integer or whose
        score is not a number.  The message names the file and the 1-based line number of the first
        malformed line; blank lines count as lines.  On that (error) path the file is read a second time
        to find the first malformed line of the whole file, since the check itself runs batch by batch.
        A slice (``head``) may still read and check the whole file.
    """
    return _scan(path, _RUN)


def scan_trec_qrels(path: PathLike) -> pl.LazyFrame:
    """Scan a TREC qrels file (``qid iter docno rel``) lazily.

    Columns: ``query`` (String), ``iteration`` (String, ignored by trec_eval), ``doc`` (String),
    ``relevance`` (Int64), one row per non-blank line in file order.  Fields are separated by any run of
    spaces or tabs.  Plain or gzip-compressed files.  Negative levels are kept as they are; `rank_metrics`
    scores them as 0, as trec_eval does.

    Raises
    ------
    FileNotFoundError
        At once, when `path` is not a file.
    ValueError
        At collect time, for a line without exactly 4 fields or whose relevance is not an integer.
        The message names the file and the 1-based line number of the first malformed line (see
        `scan_trec_run`).
    """
    return _scan(path, _QRELS)
