"""The ``lodestar-polars`` command line: a dispatcher over its two commands.

- ``lodestar-polars evaluate RUN [options]`` (`lodestar_polars._evaluate_command`): an evaluation job for
  schedulers: per-query measures and their means from a Parquet, CSV or TREC file, written to files;
- ``lodestar-polars trec_eval [-q] [-c] [-n] [-m MEASURE]... [-l NUM] [-M NUM] [-J] [-Z FILE] [-R FORMAT] QRELS
  RUN`` (the package `lodestar_polars.trec_eval`): what trec_eval 10 prints, byte for byte, for the measures the
  package computes (RUN ``-`` reads standard input); without ``-c`` a judged query missing from the run is
  skipped, as trec_eval 9 and pytrec_eval do, where trec_eval 10 stops (exit code 4).

Exit codes: 0 on success, 1 for a data error (bad values, duplicates, missing columns, an unreadable file),
2 for a usage error (and, as trec_eval, for an empty run file).  Errors are one line on stderr; ``--debug``
prints the traceback too.
"""

from __future__ import annotations

import argparse
import re
import sys
import traceback
from collections.abc import Callable, Sequence

from . import __version__
from ._command_errors import DATA_ERRORS, EXIT_DATA_ERROR, EXIT_OK, EXIT_USAGE_ERROR, PROG, DataError, UsageError
from ._evaluate_command import add_parser as add_evaluate_parser
from ._evaluate_command import markdown_table, measure_names_text, parse_measures
from .trec_eval import TREC_MEASURES
from .trec_eval import add_parser as add_trec_eval_parser

__all__ = [
    "EXIT_DATA_ERROR",
    "EXIT_OK",
    "EXIT_USAGE_ERROR",
    "TREC_MEASURES",
    "DataError",
    "UsageError",
    "build_parser",
    "main",
    "markdown_table",
    "measure_names_text",
    "parse_measures",
]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``lodestar-polars`` and its subcommands.

    Returns
    -------
    argparse.ArgumentParser
        The parser; each subcommand sets ``handler``.

    Examples
    --------
    >>> build_parser().parse_args(["trec_eval", "-q", "-m", "ndcg", "qrels", "run"]).measure
    ['ndcg']
    """
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="print tracebacks")
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Exact ranking metrics per query on Polars, for evaluation jobs and as a trec_eval stand-in.",
        epilog="Exit codes: 0 success, 1 data error, 2 usage error. Each subcommand has --help.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    parser.add_argument("--debug", action="store_true", default=False, help="print tracebacks")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    add_evaluate_parser(commands, common)
    add_trec_eval_parser(commands, common)
    return parser


def _first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


_NEGATIVE_GAIN_LIST = re.compile(r"-\d[\d.:,eE+-]*")


def _attached_negative_gains(argv: list[str]) -> list[str]:
    """`--gain -1,0,2` as `--gain=-1,0,2`: argparse reads a value starting with "-" as an option unless it is a
    plain negative number, and a gain list starting with a negative gain is neither."""
    attached: list[str] = []
    for argument in argv:
        if attached and attached[-1] == "--gain" and _NEGATIVE_GAIN_LIST.fullmatch(argument):
            attached[-1] = f"--gain={argument}"
        else:
            attached.append(argument)
    return attached


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 success, 1 data error, 2 usage error).

    Parameters
    ----------
    argv
        The arguments after the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit code.

    Examples
    --------
    >>> main(["evaluate", "ranking.parquet", "-m", "ndcg@0"])
    2
    """
    parser = build_parser()
    args = parser.parse_args(_attached_negative_gains(sys.argv[1:] if argv is None else list(argv)))
    debug = bool(getattr(args, "debug", False))
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except KeyboardInterrupt:
        return 130
    except Exception as error:
        if isinstance(error, UsageError):
            code, message = EXIT_USAGE_ERROR, _first_line(error)
        elif isinstance(error, DATA_ERRORS):
            code, message = EXIT_DATA_ERROR, _first_line(error)
        else:  # a bug: still one line for the scheduler's log, the traceback with --debug
            code, message = EXIT_DATA_ERROR, f"internal error ({type(error).__name__}): {_first_line(error)}"
        if debug:
            traceback.print_exception(error)
        sys.stderr.write(f"{PROG}: error: {message}\n")
        return code
