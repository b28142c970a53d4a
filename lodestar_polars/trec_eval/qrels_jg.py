"""``lodestar-polars trec_eval -R qrels_jg``: the command line's adapter over the library's judgment-group
measures (`lodestar_polars.judgment_groups`, which computes the values).

Here: reading trec_eval's ``-m`` values for this format (``qrels_jg``, ``map_avgjg``, ``P_avgjg[.k,...]``,
``Rprec_mult_avgjg[.m,...]``, ``runid``, ``num_q``), and printing trec_eval's lines.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import polars as pl

from .. import judgment_groups
from .._command_errors import EXIT_OK, DataError, UsageError
from .._progress import Progress
from .._spec import parse_measure
from ..measures._trec_parameters import TREC_CUTOFFS, parse_multipliers
from ..measures.rprec_mult import TREC_RPREC_MULTIPLIERS
from .files import scan_qrels, scan_run_argument
from .parameters import parse_cutoffs
from .summary import float_text, output_line, summarise

# trec_eval's print order (measures.c); runid and num_q print in the summary only
_MEASURES = ("runid", "num_q", *judgment_groups.TREC_EVAL_MEASURES)
_NICKNAME = "qrels_jg"


def parse_measures(texts: Sequence[str]) -> dict[str, tuple[float, ...] | None]:
    """The ``-m`` values under ``-R qrels_jg`` -> {measure: cut-offs or multipliers}, in trec_eval's print order.

    As for ``-R qrels``: the nickname expands to its measures with their default parameters, and a measure
    takes the parameters of its first ``-m name.parameters``.  trec_eval computes no other measure on this
    format (it stops with "Can't calculate measure"): naming one, or no ``-m`` (trec_eval's official set), is
    a usage error.

    Examples
    --------
    >>> parse_measures(["P_avgjg.10,3", "map_avgjg"])
    {'map_avgjg': None, 'P_avgjg': (3, 10)}
    """
    if not texts:
        msg = (
            "-R qrels_jg: trec_eval's default measures (official) are not computed on judgment groups; "
            f"give -m {_NICKNAME} or -m with {', '.join(_MEASURES)}."
        )
        raise UsageError(msg)
    requested: dict[str, tuple[float, ...] | None] = {}
    explicit: dict[str, tuple[float, ...] | None] = {}
    for text in texts:
        name, dot, parameters = text.partition(".")
        if name == _NICKNAME and not dot:
            for member in _MEASURES:
                requested.setdefault(member, _defaults(member))
            continue
        if name not in _MEASURES:
            msg = (
                f"trec_eval measure {text!r} is not computed with -R qrels_jg (trec_eval fails on it too); "
                f"supported there: {', '.join(_MEASURES)} and the nickname {_NICKNAME}."
            )
            raise UsageError(msg)
        if dot and name == "P_avgjg":
            value: tuple[float, ...] | None = parse_cutoffs(name, parameters)
        elif dot and name == "Rprec_mult_avgjg":
            value = parse_multipliers(name, parameters)
        elif dot:
            msg = f"trec_eval measure {name!r} takes no parameters, got {text!r}."
            raise UsageError(msg)
        else:
            value = _defaults(name)
        requested.setdefault(name, value)
        if dot:
            explicit.setdefault(name, value)
    requested.update(explicit)
    return {name: requested[name] for name in _MEASURES if name in requested}


def _defaults(name: str) -> tuple[float, ...] | None:
    return {"P_avgjg": TREC_CUTOFFS, "Rprec_mult_avgjg": TREC_RPREC_MULTIPLIERS}.get(name)


def columns(requested: dict[str, tuple[float, ...] | None]) -> list[tuple[str, str]]:
    """(trec_eval's printed name, `judgment_groups.evaluate`'s column) of each value, in print order.

    Examples
    --------
    >>> columns({"num_q": None, "map_avgjg": None, "P_avgjg": (5,), "Rprec_mult_avgjg": (0.5,)})
    [('map_avgjg', 'ap'), ('P_avgjg_5', 'p@5'), ('Rprec_mult_avgjg_0.50', 'rprec_mult@0.5')]
    """
    pairs: list[tuple[str, str]] = []
    for name, parameters in requested.items():
        family = judgment_groups.TREC_EVAL_MEASURES.get(name)
        if family is None:  # runid, num_q
            continue
        if parameters is None:
            pairs.append((name, family))
        elif name == "P_avgjg":
            pairs += [(f"{name}_{int(k)}", f"{family}@{int(k)}") for k in parameters]
        else:
            pairs += [(f"{name}_{m:3.2f}", parse_measure(f"{family}@{m!r}").column) for m in parameters]
    return pairs


def trec_eval(args: argparse.Namespace, scratch: str) -> int:
    """trec_eval ``-R qrels_jg``'s output for `args` (the parsed ``trec_eval`` command), printed on stdout."""
    if args.zscores is not None:
        msg = "-Z is not implemented with -R qrels_jg."
        raise UsageError(msg)
    requested = parse_measures(args.measure or [])
    printed = columns(requested)
    qrels = scan_qrels(args.qrels).select("query", pl.col("iteration").alias("group"), "doc", "relevance")
    run = scan_run_argument(args.run, scratch)
    per_query_plan = judgment_groups.evaluate(
        run.select("query", "doc", "score"),
        qrels,
        list(dict.fromkeys(column for _, column in printed)) or ["ap"],  # runid and num_q alone: count queries
        ties="doc",
        no_relevant=0.0,
        threshold=args.level - 1,
        missing_queries="zero" if args.complete else "skip",
        max_retrieved=args.max_retrieved,
        judged_only=args.judged_only,
    )
    with Progress.on_terminal(args.quiet).step(f"evaluating {args.run}"):
        per_query, runid = pl.collect_all([per_query_plan, run.select(pl.col("tag").last())], engine="streaming")
    if per_query.is_empty():
        msg = (
            "no query has both results and judgments: nothing to evaluate (trec_eval stops too, 'No queries with "
            "both results and relevance info')."
        )
        raise DataError(msg)
    rows = sorted(per_query.iter_rows(named=True), key=lambda row: str(row["query"]))
    out: list[str] = []
    if args.query_lines:
        out += [output_line(name, row["query"], float_text(row[column])) for row in rows for name, column in printed]
    if not args.no_summary:
        out += [output_line("runid", "all", str(runid.item()))] if "runid" in requested else []
        out += [output_line("num_q", "all", str(len(rows)))] if "num_q" in requested else []
        out += [
            output_line(name, "all", float_text(summarise([row[column] for row in rows], "float")))
            for name, column in printed
        ]
    sys.stdout.write("".join(out))
    return EXIT_OK
