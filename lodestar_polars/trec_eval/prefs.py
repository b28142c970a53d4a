"""``lodestar-polars trec_eval -R prefs`` and ``-R qrels_prefs``: the command line's adapter over the library's
preference measures (`lodestar_polars.preferences`): reading ``-m``, printing trec_eval's lines."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import polars as pl

from .. import preferences
from .._command_errors import EXIT_OK, DataError, UsageError
from .._progress import Progress
from .files import scan_run_argument


def trec_eval(args: argparse.Namespace, scratch: str) -> int:
    """-R prefs and -R qrels_prefs: trec_eval's preference measures (module `preferences`).  -J, -l and -N
    change nothing there, as in trec_eval; -Z is refused."""
    if args.zscores is not None:
        msg = f"-Z is not supported with -R {args.rel_format}."
        raise UsageError(msg)
    names = parse_measures(args.measure or [])
    judgments = preferences.scan_trec_prefs(args.qrels, qrels=args.rel_format == "qrels_prefs", lenient=True)
    run = scan_run_argument(args.run, scratch)
    measures = [name for name in names if name in preferences.ALL_PREFS]
    plan = preferences.evaluate(run, judgments, measures, max_retrieved=args.max_retrieved, complete=args.complete)
    with Progress.on_terminal(args.quiet).step(f"evaluating {args.run}"):
        per_query, runid = pl.collect_all([plan, run.select(pl.col("tag").last())], engine="streaming")
    if per_query.is_empty():
        msg = "no query has both results and preferences: nothing to evaluate (trec_eval stops too)."
        raise DataError(msg)
    out = trec_lines(per_query, names, str(runid.item()), per_query_lines=args.query_lines, summary=not args.no_summary)
    sys.stdout.write("".join(out))
    return EXIT_OK


_PRINT_ORDER = ("runid", "num_q", *preferences.ALL_PREFS)


def parse_measures(texts: Sequence[str]) -> list[str]:
    """trec_eval's ``-m`` values under ``-R prefs``: the measures (and runid, num_q) in its print order.

    >>> parse_measures(["prefs_simp", "prefs"])[:3] == ["runid", "num_q", "prefs_num_prefs_poss"]
    True
    """
    if not texts:
        msg = "with -R prefs or -R qrels_prefs, name the measures: -m all_prefs, -m prefs or prefs_* measures."
        raise UsageError(msg)
    requested: set[str] = set()
    for text in texts:
        name, dot, _ = text.partition(".")
        if name not in preferences.NICKNAMES and name not in _PRINT_ORDER:
            msg = (
                f"trec_eval measure {text!r} is not a preference measure; with -R prefs or -R qrels_prefs: "
                f"{', '.join([*_PRINT_ORDER, *preferences.NICKNAMES])}."
            )
            raise UsageError(msg)
        if dot:
            msg = f"trec_eval measure {name!r} takes no parameters, got {text!r}."
            raise UsageError(msg)
        requested.update(preferences.NICKNAMES.get(name, (name,)))
    return [name for name in _PRINT_ORDER if name in requested]


def trec_lines(
    per_query: pl.DataFrame, names: Sequence[str], runid: str, *, per_query_lines: bool, summary: bool
) -> list[str]:
    """trec_eval's output lines: per query (sorted by id) each measure of `names`, then the ``all`` lines (a
    count summed, a ratio averaged over the queries, added in query order as trec_eval adds them)."""
    rows = sorted(per_query.iter_rows(named=True), key=lambda row: str(row[preferences.Q]))
    measures = [name for name in names if name in preferences.ALL_PREFS]

    def line(name: str, query: str, value: float) -> str:
        shown = f"{value:.0f}" if name in preferences.COUNTS else f"{value:6.4f}"
        return f"{name:<22}\t{query}\t{shown}\n"

    out = [line(name, row[preferences.Q], row[name]) for row in rows for name in measures] if per_query_lines else []
    if summary:
        for name in names:
            if name == "runid":
                out.append(f"{'runid':<22}\tall\t{runid}\n")
            elif name == "num_q":
                out.append(f"{'num_q':<22}\tall\t{len(rows)}\n")
            else:
                total = 0.0
                for row in rows:
                    total += row[name]
                out.append(line(name, "all", total if name in preferences.COUNTS or not rows else total / len(rows)))
    return out
