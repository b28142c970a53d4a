"""Lazy readers for TREC run and qrels files, as trec_eval reads them.

Both readers scan the file line by line (`pl.scan_lines`, which also reads gzip; a line ends at LF, CRLF or
a lone CR, so a file with classic Mac line ends reads as its lines, not as one), split each line on runs of
ASCII whitespace (space, tab, FF, VT: C's `isspace`), keep ids as strings and parse the numeric fields with
Polars' strict casts (with ``lenient=True``, as trec_eval reads them: C's atol / atof of the field's start).
Blank lines and comment lines (``#``, as trec_eval 10 reads them: see each reader) are skipped.  A malformed
line (wrong field count, a field that does not parse, an integer too large for Int64, bytes that are not UTF-8)
raises a `ValueError` naming the file and its 1-based line number when the frame is collected.

>>> import lodestar_polars
>>> from lodestar_polars.io import scan_trec_qrels, scan_trec_run
>>> run = scan_trec_run("run.txt")  # doctest: +SKIP
>>> qrels = scan_trec_qrels("qrels.txt")  # doctest: +SKIP
>>> run.rank_metrics.ndcg(doc="doc", ties="doc", qrels=qrels, k=[None, 10]).collect()  # doctest: +SKIP
"""

from __future__ import annotations

import gzip
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import polars as pl
from polars.io.plugins import register_io_source

__all__ = ["scan_trec_qrels", "scan_trec_run"]

PathLike = str | os.PathLike[str]

_LINE = "__lodestar_line"
_LINE_NUMBER = "__lodestar_line_number"
_FIELDS = "__lodestar_fields"
_FIELD_COUNT = "__lodestar_field_count"
_PROBLEM = "__lodestar_problem"
# one field: a run of characters C's isspace() does not match (trec_eval's tokenizer)
_FIELD_PATTERN = r"[^ \t\n\r\f\v]+"
_INTEGER_PATTERN = r"[+-]?[0-9]+"  # what an integer field looks like, whether or not it fits the dtype
# lenient reading (`lenient=True`): the number a field starts with, as C's atol / atof read it (0 without one)
_ATOL_PREFIX = r"^[+-]?[0-9]+"
_ATOF_PREFIX = r"(?i)^[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?|inf(?:inity)?|nan)"
_HEXADECIMAL = r"^[+-]?0[xX]\.?[0-9a-fA-F]"  # atof reads a C99 hexadecimal float: refused, not misread
_GZIP_MAGIC = b"\x1f\x8b"
_LINE_END = re.compile(rb"\r\n|\r|\n")
_CHUNK_BYTES = 1 << 20


@dataclass(frozen=True)
class _Field:
    """One output column: its position in the line, name, dtype and (for numbers) what it must be."""

    position: int
    name: str
    dtype: pl.DataType
    description: str | None = None  # set for parsed (non-string) fields, used in the error message
    # how trec_eval reads the field: C's atol / atof of its text, None for a field it never reads (the rank)
    c_reading: Literal["atol", "atof"] | None = None


@dataclass(frozen=True)
class _Format:
    kind: str
    fields: tuple[_Field, ...]
    min_fields: int
    max_fields: int | None  # None: trailing fields are ignored
    comment: str  # a line matching this at its start is a comment (a regex without the anchor)
    lenient: bool = False  # numbers read as trec_eval reads them (`_Field.c_reading`), not strictly

    def checks(self, field: _Field) -> bool:
        """Whether a field that does not parse makes its line malformed."""
        if self.lenient:
            return field.c_reading is not None  # a prefix always parses: only too large or hexadecimal fails
        return field.description is not None

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
        _Field(4, "score", pl.Float64(), "a numeric score", "atof"),
        _Field(5, "tag", pl.String()),
    ),
    min_fields=6,
    max_fields=None,
    comment=r"[ \t\f\v]*#",  # get_trec_results.c: '#' after any leading whitespace
)

_QRELS = _Format(
    kind="qrels",
    fields=(
        _Field(0, "query", pl.String()),
        _Field(1, "iteration", pl.String()),
        _Field(2, "doc", pl.String()),
        _Field(3, "relevance", pl.Int64(), "an integer relevance level", "atol"),
    ),
    min_fields=4,
    max_fields=4,
    comment="#",  # get_qrels.c: '#' as the line's first character
)


def _problem(fmt: _Format) -> pl.Expr:
    """0 for a good line, 1 for a wrong field count, 2 + i when the i-th parsed field does not parse."""
    count = pl.col(_FIELD_COUNT)
    wrong_count = count < fmt.min_fields
    if fmt.max_fields is not None:
        wrong_count = wrong_count | (count > fmt.max_fields)
    codes = [pl.when(wrong_count).then(pl.lit(1, pl.UInt8))]
    for index, field in enumerate(fmt.fields):
        if fmt.checks(field):
            codes.append(pl.when(pl.col(field.name).is_null()).then(pl.lit(2 + index, pl.UInt8)))
    return pl.coalesce(*codes, pl.lit(0, pl.UInt8))


def _scan_lines(source: str | bytes) -> pl.LazyFrame:
    """Polars' own line scan (plain or gzip): the line number from 1 and the text of every line."""
    return pl.scan_lines(source, name=_LINE, row_index_name=_LINE_NUMBER, row_index_offset=1)


def _raw_lines(path: str) -> Iterator[bytes]:
    """The file's lines as bytes without their ends, ended by LF, CRLF or CR as the plan splits them (read in
    chunks, only on the error path)."""
    with open(path, "rb") as probe:
        compressed = probe.read(2) == _GZIP_MAGIC
    with gzip.open(path, "rb") if compressed else open(path, "rb") as handle:
        pending = b""
        while chunk := handle.read(_CHUNK_BYTES):
            text = pending + chunk
            # a CR at the end of the chunk may be the first half of a CRLF: keep it for the next chunk
            held = 1 if text.endswith(b"\r") else 0
            *complete, pending = _LINE_END.split(text[: len(text) - held])
            pending += text[len(text) - held :]
            yield from complete
        last = _LINE_END.split(pending)
        yield from last if last[-1] else last[:-1]


def _has_non_utf8_line(path: str) -> bool:
    for line in _raw_lines(path):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            return True
    return False


def _lines(path: str, fmt: _Format, shown: str) -> pl.LazyFrame:
    """`_scan_lines(path)` as a streaming source whose invalid-UTF-8 error names the file and line.

    Polars' scan fails on the first batch holding a byte sequence that is not UTF-8, with a message that
    names neither the file nor the line; the source passes the scan's batches on and, if it fails, finds
    the first such line in Python and raises a ValueError for it (or for an earlier malformed line).
    """

    def source(
        with_columns: list[str] | None, predicate: pl.Expr | None, n_rows: int | None, batch_size: int | None
    ) -> Iterator[pl.DataFrame]:
        lines = _scan_lines(path)
        if predicate is not None:
            lines = lines.filter(predicate)
        if with_columns is not None:
            lines = lines.select(with_columns)
        if n_rows is not None:
            lines = lines.head(n_rows)
        try:
            yield from lines.collect_batches(chunk_size=batch_size, engine="streaming")
        except pl.exceptions.ComputeError:
            if not _has_non_utf8_line(path):
                raise  # not an encoding problem: Polars' own error
            # raises for the non-UTF-8 line, unless a malformed line comes before it
            malformed = _first_malformed_line_of_file(path, fmt, shown)
            if malformed is None:  # pragma: no cover - the non-UTF-8 line raised
                raise
            raise ValueError(_describe(fmt, shown, *malformed)) from None

    schema = {_LINE_NUMBER: pl.UInt32(), _LINE: pl.String()}
    return register_io_source(source, schema=schema, explain_name=f"TREC {fmt.kind} lines")


def _parsed(lines: pl.LazyFrame, fmt: _Format) -> pl.LazyFrame:
    """Every non-blank line, split and cast, with its line number and a problem code (no check yet)."""
    # Polars' line scan ends lines at LF and CRLF only: a lone CR ends a line too (classic Mac files)
    lines = lines.with_columns(pl.col(_LINE).str.split("\r")).explode(_LINE)
    lines = lines.filter(~pl.col(_LINE).str.contains(f"^{fmt.comment}"))
    fields = lines.select(
        pl.col(_LINE_NUMBER),
        pl.col(_LINE).str.extract_all(_FIELD_PATTERN).alias(_FIELDS),
    ).with_columns(pl.col(_FIELDS).list.len().alias(_FIELD_COUNT))
    fields = fields.filter(pl.col(_FIELD_COUNT) > 0)
    columns = []
    for field in fmt.fields:
        raw = pl.col(_FIELDS).list.get(field.position, null_on_oob=True)
        if field.dtype == pl.String:
            value = raw
        elif fmt.lenient and field.c_reading is not None:
            value = _c_number(raw, field)
        else:  # strictly, or (lenient) a field trec_eval never reads: null where it does not parse
            value = raw.cast(field.dtype, strict=False)
        columns.append(value.alias(field.name))
    return fields.select(pl.col(_LINE_NUMBER), pl.col(_FIELD_COUNT), *columns).with_columns(
        _problem(fmt).alias(_PROBLEM)
    )


def _c_number(raw: pl.Expr, field: _Field) -> pl.Expr:
    """The field's text as C's atol / atof read it: the number it starts with, 0 where it starts with none;
    null (a malformed line) for an integer too large for the dtype or an atof hexadecimal float."""
    prefix = raw.str.extract(_ATOL_PREFIX if field.c_reading == "atol" else _ATOF_PREFIX, 0)
    value = pl.when(prefix.is_null()).then(pl.lit(0, field.dtype)).otherwise(prefix.cast(field.dtype, strict=False))
    if field.c_reading == "atof":
        value = pl.when(raw.str.contains(_HEXADECIMAL)).then(pl.lit(None, field.dtype)).otherwise(value)
    return pl.when(raw.is_null()).then(pl.lit(None, field.dtype)).otherwise(value)


def _c_number_problem(text: str, field: _Field) -> str | None:
    """The Python twin of `_c_number`'s nulls: why a leniently read field fails, or None."""
    if field.c_reading == "atof":
        if re.match(_HEXADECIMAL, text):
            return "a hexadecimal number (C's atof reads it as one; not read here)"
        return None
    prefix = re.match(_ATOL_PREFIX, text)
    if prefix is not None and pl.Series([prefix.group()]).cast(field.dtype, strict=False).is_null().item():
        return f"an integer too large for {field.dtype} (range {_integer_range(field.dtype)})"
    return None


# spellings every reader parses alike; any other field is judged by Polars' own cast (on the error path only)
_PLAIN_INTEGER = re.compile(r"-?[0-9]{1,18}")  # 18 digits fit Int64
_PLAIN_DECIMAL = re.compile(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


def _field_parses(text: str, dtype: pl.DataType) -> bool:
    plain = _PLAIN_INTEGER if dtype.is_integer() else _PLAIN_DECIMAL
    if plain.fullmatch(text):
        return True
    return not pl.Series([text]).cast(dtype, strict=False).is_null().item()


def _is_malformed(fields: list[str], fmt: _Format) -> bool:
    """The Python twin of `_problem`: a wrong field count, or a numeric field that does not parse."""
    if len(fields) < fmt.min_fields or (fmt.max_fields is not None and len(fields) > fmt.max_fields):
        return True
    if fmt.lenient:
        return any(fmt.checks(field) and _c_number_problem(fields[field.position], field) for field in fmt.fields)
    return any(fmt.checks(field) and not _field_parses(fields[field.position], field.dtype) for field in fmt.fields)


def _first_malformed_line_of_file(path: str, fmt: _Format, shown: str | None = None) -> tuple[int, str] | None:
    """Line number and text of the first malformed line of the file, or None; a non-UTF-8 line before any
    malformed one raises its own error.  Read in Python, line by line up to that line: this runs inside a
    callback of a running plan (only when a batch showed a bad line), where starting another Polars query
    can deadlock the engine's threads."""
    for number, raw in enumerate(_raw_lines(path), start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ValueError(_describe_non_utf8(fmt, shown or path, number, raw, error.start)) from None
        if re.match(fmt.comment, line):
            continue
        fields = re.findall(_FIELD_PATTERN, line)
        if fields and _is_malformed(fields, fmt):
            return number, line
    return None


# a judgments line with a run line's 6 fields, or a run line with a qrels line's 4: the two files given the
# other way round (trec_eval takes the judgments first)
_SWAPPED_HINTS = {
    ("qrels", 6): " It has a run line's fields (qid Q0 docno rank score tag): are the run and the judgments swapped?",
    ("run", 4): " It has a qrels line's fields (qid iter docno rel): are the run and the judgments swapped?",
}


def _describe(fmt: _Format, path: str, line_number: int, line: str) -> str:
    fields = re.findall(_FIELD_PATTERN, line)
    where = f"{path}, line {line_number}"
    too_few = len(fields) < fmt.min_fields
    if too_few or (fmt.max_fields is not None and len(fields) > fmt.max_fields):
        swapped = _SWAPPED_HINTS.get((fmt.kind, len(fields)), "")
        return (
            f"malformed TREC {fmt.kind} line ({where}): expected {fmt.expected}, got {len(fields)}: {line!r}.{swapped}"
        )
    for field in fmt.fields:
        if not fmt.checks(field):
            continue
        text = fields[field.position]
        if fmt.lenient:
            problem = _c_number_problem(text, field)
            if problem is not None:
                return f"malformed TREC {fmt.kind} line ({where}): {field.name} field {text!r} is {problem}: {line!r}."
            continue
        if pl.Series([text]).cast(field.dtype, strict=False).is_null().item():
            if field.dtype.is_integer() and re.fullmatch(_INTEGER_PATTERN, text):
                return (
                    f"malformed TREC {fmt.kind} line ({where}): {field.name} field {text!r} is an integer too "
                    f"large for {field.dtype} (range {_integer_range(field.dtype)}): {line!r}."
                )
            return (
                f"malformed TREC {fmt.kind} line ({where}): {field.name} field {text!r} is not "
                f"{field.description}: {line!r}."
            )
    return f"malformed TREC {fmt.kind} line ({where}): {line!r}."  # pragma: no cover - both paths agree


def _integer_range(dtype: pl.DataType) -> str:
    lower, upper = pl.select(pl.lit(0, dtype).lower_bound(), pl.lit(0, dtype).upper_bound().alias("u")).row(0)
    return f"{lower} to {upper}"


def _describe_non_utf8(fmt: _Format, path: str, line_number: int, line: bytes, offset: int) -> str:
    return (
        f"malformed TREC {fmt.kind} line ({path}, line {line_number}): not UTF-8 text (byte "
        f"0x{line[offset]:02x} at byte {offset + 1} of the line): {line!r}."
    )


def _checker(path: str, fmt: _Format, output: Sequence[str], shown: str) -> Callable[[pl.DataFrame], pl.DataFrame]:
    def check_batch(frame: pl.DataFrame) -> pl.DataFrame:
        if frame.select((pl.col(_PROBLEM) > 0).any()).item():
            # a batch may start mid-file: look the first malformed line of the whole file up again
            found = _first_malformed_line_of_file(path, fmt, shown)
            if found is None:  # pragma: no cover - the batch showed one
                msg = f"a malformed line of {path} was not found again"
                raise RuntimeError(msg)
            raise ValueError(_describe(fmt, shown, *found))
        return frame.select(output)

    return check_batch


def _scan(path: PathLike, fmt: _Format, source_name: str | None, *, lenient: bool = False) -> pl.LazyFrame:
    fmt = replace(fmt, lenient=lenient)
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
    shown = file if source_name is None else source_name
    return _parsed(_lines(file, fmt, shown), fmt).map_batches(
        _checker(file, fmt, output, shown),
        schema={field.name: field.dtype for field in fmt.fields},
        streamable=True,
        validate_output_schema=False,
    )


def scan_trec_run(path: PathLike, *, source_name: str | None = None, lenient: bool = False) -> pl.LazyFrame:
    """Scan a TREC run file (``qid Q0 docno rank score tag``) lazily.

    Columns: ``query`` (String), ``q0`` (String), ``doc`` (String), ``rank`` (Int64), ``score`` (Float64),
    ``tag`` (String), one row per non-blank line in file order; a line ends at LF, CRLF or CR.  Fields are
    separated by any run of spaces or tabs; fields after the sixth are ignored, as trec_eval ignores them.
    Plain or gzip-compressed files.  A line whose first character after any spaces or tabs is ``#`` is a
    comment and skipped, as trec_eval 10's get_trec_results.c decides (a ``#`` inside a field, as in a doc id
    ``msmarco_doc_00#4``, is data).

    trec_eval never reads the rank field (any text passes there) and reads the score with C's ``atof``, which
    takes the number a field starts with ("1.5x" is 1.5, "x" is 0); here the rank must be an integer and the
    score a number, and a field that is not is an error naming its line, unless `lenient`.

    The run is ready for `rank_metrics` with ``doc="doc"`` and ``qrels=scan_trec_qrels(...)``; pass
    ``ties="doc"`` for trec_eval's order (score descending, then doc id descending; `rank` is not used).

    Parameters
    ----------
    path
        The run file (plain text or gzip).
    source_name
        What error messages call the file (default: `path`), e.g. "standard input" for a copy of it.
    lenient
        Read the numbers as trec_eval does (the CLI's ``trec_eval`` mode reads so): the score is the number
        its field starts with, as C's ``atof`` reads it ("1.5x" is 1.5, ".5" 0.5, "x" 0.0, "inf" and "nan"
        as such), and the rank field is not read (``rank`` is null where it is not an integer).  A score
        written as a hexadecimal float ("0x1p3"), which ``atof`` reads, is still an error.

    Returns
    -------
    LazyFrame
        ``query, q0, doc, rank, score, tag``; nothing is read until it is collected.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> file = pathlib.Path(tempfile.mkdtemp()) / "run.txt"
    >>> _ = file.write_text("# bm25, k1=0.9\\n301 Q0 d1 1 2.5 bm25\\n301 Q0 d2 2 1.5 bm25\\n")
    >>> scan_trec_run(file).collect()["doc"].to_list()
    ['d1', 'd2']

    Raises
    ------
    FileNotFoundError
        At once, when `path` is not a file.
    ValueError
        At collect time, for a line with fewer than 6 fields, or whose rank is not an integer (or one too
        large for Int64) or whose score is not a number (with `lenient`: only a hexadecimal score), or that
        is not UTF-8 text.  The message names the
        file and the 1-based line number of the first malformed line; blank lines count as lines.  On that
        (error) path the file is read a second time to find the first malformed line of the whole file,
        since the check itself runs batch by batch (in Python, up to the first line that is not UTF-8).
        A slice (``head``) may still read and check the whole file.
    """
    return _scan(path, _RUN, source_name, lenient=lenient)


def scan_trec_qrels(path: PathLike, *, source_name: str | None = None, lenient: bool = False) -> pl.LazyFrame:
    """Scan a TREC qrels file (``qid iter docno rel``) lazily.

    Columns: ``query`` (String), ``iteration`` (String, ignored by trec_eval), ``doc`` (String),
    ``relevance`` (Int64), one row per non-blank line in file order; a line ends at LF, CRLF or CR.  Fields
    are separated by any run of spaces or tabs.  Plain or gzip-compressed files.  Negative levels are kept as
    they are; `rank_metrics` scores them as 0, as trec_eval does.

    A line whose first character is ``#`` is a comment and skipped, as trec_eval 10's get_qrels.c decides (a
    ``#`` after leading spaces, or inside a field, is data).  trec_eval itself skips only one comment line in
    a row (it reads the next as a judgment of query "#") and crashes on a comment as the file's last line;
    here every such line is a comment.

    trec_eval reads the relevance with C's ``atol``, which takes the integer a field starts with: "1.5" is
    judged 1 (relevant at ``-l 1``, not at ``-l 2``), "x" is 0.  Here a relevance that is not an integer is an
    error naming its line, so that a fractional grade is never truncated silently, unless `lenient`.

    Parameters
    ----------
    path
        The qrels file (plain text or gzip).
    source_name
        What error messages call the file (default: `path`).
    lenient
        Read the relevance as trec_eval does (the CLI's ``trec_eval`` mode reads so): the integer its field
        starts with, as C's ``atol`` reads it ("1.5" is 1, "-0.5" 0, "2x" 2, "x" 0).

    Returns
    -------
    LazyFrame
        ``query, iteration, doc, relevance``; nothing is read until it is collected, and a plan reading it in
        several branches (as `rank_metrics` plans with judgments do) parses the file once per collect.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> file = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
    >>> _ = file.write_text("# judged by hand\\n301 0 d1 2\\n301 0 d3 0\\n")
    >>> scan_trec_qrels(file).collect()["relevance"].to_list()
    [2, 0]

    Raises
    ------
    FileNotFoundError
        At once, when `path` is not a file.
    ValueError
        At collect time, for a line without exactly 4 fields, whose relevance is not an integer (with
        `lenient`: does not start with one small enough) or is one too large for Int64, or that is not UTF-8
        text.
        The message names the file and the 1-based line number of the first malformed line (see
        `scan_trec_run`).
    """
    # one parse per collect: a plan reads the judgments in several branches (the judged rows, the query totals,
    # the ideal order, their checks...), and the frame-level check map hides them from Polars' common-plan
    # elimination, so each branch parsed the file again (five times for trec_eval's all_trec set); a cache with
    # one consumer streams as before
    return _scan(path, _QRELS, source_name, lenient=lenient).cache()
