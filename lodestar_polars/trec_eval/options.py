"""trec_eval's command line: its options (``-q -c -n -m -l -M -J -Z -N -R -v``) and their value grammar, as the
``trec_eval`` subcommand of ``lodestar-polars``."""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from .. import __version__
from .command import command_trec_eval
from .measures import TREC_MEASURES

_ASCII_INTEGER = re.compile(r"[0-9]+")


_TREC_EVAL_VERSION = "10.0-rc3"  # the version whose output is reproduced (its Makefile's VERSIONID)


class _PrintVersion(argparse.Action):
    """trec_eval's -v: its version on stderr, exit 0, whatever else the command line holds."""

    def __init__(self, option_strings: list[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option: str | None = None
    ) -> None:
        sys.stderr.write(f"trec_eval version {_TREC_EVAL_VERSION} (lodestar-polars {__version__})\n")
        parser.exit(0)


def _trec_eval_level(text: str) -> int:
    """-l: an integer level >= 0 (trec_eval's atol would read "2.5" as 2 and "x" as 0)."""
    if not re.fullmatch(r"[+-]?[0-9]+", text.strip()) or int(text) < 0:
        msg = (
            f"expected a relevance level: an integer >= 0, got {text!r} (a negative level would make trec_eval "
            "count unjudged retrieved documents as relevant)"
        )
        raise argparse.ArgumentTypeError(msg)
    return int(text)


def _trec_eval_max_retrieved(text: str) -> int:
    if not _ASCII_INTEGER.fullmatch(text.strip()) or int(text) < 1:
        msg = f"expected a positive integer (ASCII digits), got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return int(text)


def _trec_eval_collection(text: str) -> int:
    """-N: the documents in the collection, an integer >= 0 in ASCII digits (trec_eval's atol would read "2.5"
    as 2, "x" as 0, and take a negative count)."""
    if not _ASCII_INTEGER.fullmatch(text.strip()):
        msg = f"expected the number of documents in the collection: an integer >= 0 (ASCII digits), got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return int(text)


def add_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the ``trec_eval`` subcommand to `commands` (an argparse subparsers object)."""
    parser = commands.add_parser(
        "trec_eval",
        parents=[common],
        help="trec_eval's arguments and output for its measures the package computes",
        description=(
            "A drop-in for trec_eval on the measures this package computes: ties broken by doc id, linear gain, "
            "trec_eval's output format. Supported -m: " + ", ".join(m.name for m in TREC_MEASURES) + ", "
            "and the nicknames official and all_trec (their other measures are named on stderr, not printed); "
            "with -R prefs or -R qrels_prefs, the preference measures: all_prefs, prefs and their prefs_* names. "
            "relstring[.N] (with -q only, as trec_eval) prints each query's judged levels of its first N "
            "retrieved documents (default 10): 0-9, '>' above 9, '-' not judged, '.' judged at a negative level. "
            "Without -c, a judged query missing from the run is skipped, as trec_eval 9 and pytrec_eval do "
            "(trec_eval 10 stops there with exit code 4, 'result qid ... not found in qrels')."
        ),
    )
    parser.set_defaults(handler=command_trec_eval)
    parser.add_argument(
        "-v", "--version", action=_PrintVersion, help="print the version of trec_eval reproduced here, and exit"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress line on a terminal (stderr)")
    parser.add_argument(
        "-q", "--query_eval_wanted", dest="query_lines", action="store_true", help="also print each query's values"
    )
    parser.add_argument(
        "-c",
        "--complete_rel_info_wanted",
        dest="complete",
        action="store_true",
        help="judged queries missing from the run score 0 (without -c they are skipped, as trec_eval 9 and "
        "pytrec_eval do; trec_eval 10 stops there with exit code 4)",
    )
    parser.add_argument("-n", "--nosummary", dest="no_summary", action="store_true", help="no summary ('all') lines")
    parser.add_argument(
        "-m",
        "--measure",
        dest="measure",
        action="append",
        metavar="MEASURE",
        help="measure, e.g. ndcg, ndcg_cut.5,10, recip_rank",
    )
    parser.add_argument(
        "-l",
        "--level_for_rel",
        dest="level",
        type=_trec_eval_level,
        default=1,
        metavar="NUM",
        help="a document judged at level NUM or above is relevant (default 1)",
    )
    parser.add_argument(
        "-M",
        "--Max_retrieved_per_topic",
        dest="max_retrieved",
        type=_trec_eval_max_retrieved,
        metavar="NUM",
        help="only the first NUM documents of each query count (score descending, then docno descending)",
    )
    parser.add_argument(
        "-J",
        "--Judged_docs_only",
        dest="judged_only",
        action="store_true",
        help="remove the retrieved documents not judged (or judged at a negative level) before any measure",
    )
    parser.add_argument(
        "-Z",
        "--Zscore",
        dest="zscores",
        metavar="FILE",
        help="print z-scores: (value - mean) / stddev, the mean and stddev of each query and measure read from "
        "FILE's lines 'qid measure mean stddev' (-1000000 where FILE has none)",
    )
    parser.add_argument(
        "-N",
        "--Number_docs_in_coll",
        dest="collection",
        type=_trec_eval_collection,
        default=0,
        metavar="NUM",
        help="documents in the collection (utility's non-relevant documents not retrieved)",
    )
    parser.add_argument(
        "-R",
        "--Rel_info_format",
        dest="rel_format",
        default="qrels",
        metavar="FORMAT",
        help="the judgments' format: qrels (default; the second field is ignored); prefs (qid jg jsg docno level) "
        "or qrels_prefs (a qrels file read as preferences), for the measures of -m all_prefs; qrels_jg (the second "
        "field is the judgment group: -m qrels_jg, map_avgjg, P_avgjg, Rprec_mult_avgjg)",
    )
    parser.add_argument(
        "qrels",
        metavar="QRELS",
        help="TREC qrels file (qid iter docno rel; '#' lines are comments; rel read as C's atol: '1.5' is 1)",
    )
    parser.add_argument(
        "run",
        metavar="RUN",
        help="TREC run file (qid Q0 docno rank score tag; '#' lines are comments; score read as C's atof, rank "
        "not read), '-' for stdin",
    )
