"""Reading trec_eval's files: the judgments and the run as trec_eval reads them (leniently, ``-`` for standard
input), and the ``-Z`` file of means and standard deviations.

A run or judgments file of zero bytes is refused as trec_eval refuses it ("Cannot read results file", exit 2).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import polars as pl

from .._command_errors import DataError, EmptyInputError
from ..io import scan_trec_qrels, scan_trec_run


def read_zscores(path: str) -> dict[str, dict[str, tuple[float, float]]]:
    """trec_eval's -Z file: lines ``qid measure mean stddev`` -> {qid: {measure: (mean, stddev)}}.

    Blank lines are skipped; any other line needs exactly four fields, the last two numbers.  A (query,
    measure) listed twice is an error (trec_eval would take either, by its binary search).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> file = pathlib.Path(tempfile.mkdtemp()) / "zscores"
    >>> _ = file.write_text("301 map 0.25 0.1\\n301 P_5 0.4 0.2\\n")
    >>> read_zscores(str(file))["301"]["map"]
    (0.25, 0.1)
    """
    if not os.path.isfile(path):
        msg = f"-Z file not found: {path}"
        raise DataError(msg)
    table: dict[str, dict[str, tuple[float, float]]] = {}
    with open(path, encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            fields = line.split()
            if not fields:
                continue
            try:
                if len(fields) != 4:
                    raise ValueError
                query, measure, mean, stddev = fields[0], fields[1], float(fields[2]), float(fields[3])
            except ValueError:
                msg = f"malformed -Z line ({path}, line {number}): expected 'qid measure mean stddev': {line!r}."
                raise DataError(msg) from None
            if measure in table.setdefault(query, {}):
                msg = f"-Z file {path} lists query {query!r} measure {measure!r} twice (line {number})."
                raise DataError(msg)
            table[query][measure] = (mean, stddev)
    return table


def _readable(path: str, role: str) -> str:
    """`path`, if it is a file trec_eval can read: a missing one is a data error; one of zero bytes is refused
    with trec_eval's words and exit code (2, its "Quit in file")."""
    if not os.path.isfile(path):
        msg = f"{role} file not found: {path}"
        raise DataError(msg)
    if os.path.getsize(path) == 0:
        what = "results" if role == "run" else role
        msg = f"Cannot read {what} file '{path}': it is empty (trec_eval stops there too, exit code 2)."
        raise EmptyInputError(msg)
    return path


def scan_qrels(path: str) -> pl.LazyFrame:
    """The judgments file as trec_eval reads it (`scan_trec_qrels` with ``lenient``)."""
    return scan_trec_qrels(_readable(path, "qrels"), lenient=True)


def scan_run_argument(path: str, scratch: str) -> pl.LazyFrame:
    """The run file, or for "-" standard input (copied to `scratch`: the run is read lazily), cached: the
    evaluation and the run id (the last line's tag) are collected together and parse it once (a second parse
    of 10M lines took 5 s; trec_eval holds the whole run in memory too).  An empty run (zero bytes, as trec_eval
    decides) is refused."""
    if path != "-":
        return scan_trec_run(_readable(path, "run"), lenient=True).cache()
    copy = Path(scratch) / "standard-input.run"
    with open(copy, "wb") as handle:
        while chunk := sys.stdin.buffer.read(1 << 20):
            handle.write(chunk)
    if os.path.getsize(copy) == 0:
        msg = "Cannot read results file '-': standard input is empty (trec_eval stops there too, exit code 2)."
        raise EmptyInputError(msg)
    return scan_trec_run(copy, source_name="standard input", lenient=True).cache()
