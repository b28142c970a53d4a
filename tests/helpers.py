"""Helpers shared by several test files: the package's `trec_eval` command run in this process.

Two spellings, for the two ways the tests hold their files:

- `call_ours(arguments, qrels, run)` / `ours(...)`: `lodestar-polars trec_eval ARGUMENTS QRELS RUN`, the files
  written by the test (tests/test_trec_eval_binary.py and the other files comparing with the trec_eval binary);
- `call_our_trec_eval(arguments)` / `our_trec_eval(...)`: `lodestar-polars trec_eval ARGUMENTS`, the files (or
  `-` for standard input, given as `stdin`) among the arguments, as trec_eval's own test commands spell them.

The `call_` forms return (exit code, standard output, standard error); the others return the standard output and
fail the test, with the standard error, unless the command exits 0.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Sequence
from pathlib import Path

from lodestar_polars import cli


def call_our_trec_eval(arguments: Sequence[str], stdin: bytes | None = None) -> tuple[int, str, str]:
    """`lodestar-polars trec_eval ARGUMENTS` in this process (with `stdin` as its standard input when given):
    (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(["trec_eval", *arguments])
    finally:
        sys.stdin = saved
    return code, out.getvalue(), err.getvalue()


def our_trec_eval(arguments: Sequence[str], stdin: bytes | None = None) -> str:
    """The standard output of `lodestar-polars trec_eval ARGUMENTS` (it must exit 0)."""
    code, out, err = call_our_trec_eval(arguments, stdin)
    assert code == 0, err
    return out


def call_ours(arguments: Sequence[str], qrels: Path, run: Path) -> tuple[int, str, str]:
    """`lodestar-polars trec_eval ARGUMENTS QRELS RUN` in this process: (exit code, stdout, stderr)."""
    return call_our_trec_eval([*arguments, str(qrels), str(run)])


def ours(arguments: Sequence[str], qrels: Path, run: Path) -> str:
    """The standard output of `lodestar-polars trec_eval ARGUMENTS QRELS RUN` (it must exit 0)."""
    code, out, err = call_ours(arguments, qrels, run)
    assert code == 0, err
    return out
