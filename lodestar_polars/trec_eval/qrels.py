"""``lodestar-polars trec_eval`` on a qrels file (``-R qrels``, the default): trec_eval's measures computed with
the package's plan (`rank_metrics.evaluate`, trec_eval's conventions: ties by doc id, the judgments' levels as
gains), then printed as trec_eval prints them."""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from .. import judgment_groups
from .._command_errors import EXIT_OK, PROG, DataError, UsageError
from .._progress import Progress
from .._spec import GAIN_KINDS, parse_measure
from ..namespace import rank_metrics
from .files import read_zscores, scan_qrels, scan_run_argument
from .measures import TREC_BY_NAME, TREC_NICKNAMES, TrecRequested, parse_trec_measures, printed_columns
from .parameters import gain_mapping
from .quirks import (
    ELEVEN_POINT_FIRST_LEVEL,
    bogus_ranking_values,
    eleven_point_walk,
    greatest_level,
    keep_stand_in_utility,
    undefined_values,
    utility_without_collection,
    with_utility_rest,
)
from .relstring import relstring_length, relstring_plan, relstrings
from .summary import trec_lines, zscore_lines


def _per_query_plan(run: pl.LazyFrame, measures: Sequence[str], options: Mapping[str, Any]) -> pl.LazyFrame:
    """The package's per-query plan; an option it refuses (checked before any data is read) is a usage error."""
    try:
        return rank_metrics(run).evaluate(list(measures), exact_sums=True, **options)
    except (TypeError, ValueError) as error:
        raise UsageError(str(error)) from error


def trec_eval(args: argparse.Namespace, scratch: str) -> int:
    """trec_eval's output for `args` (the parsed ``trec_eval`` command) on a qrels file (``-R qrels``), printed
    on stdout: the package's measures evaluated in as few plans as the gain mappings allow, then trec_eval's
    quirks (`quirks`) applied to the per-query frame, then its lines (`summary`)."""
    _refuse_judgment_group_measures(args.measure or [])
    request = parse_trec_measures(args.measure or [])
    requested = request.measures
    zscores = read_zscores(args.zscores) if args.zscores is not None else None
    qrels = scan_qrels(args.qrels)
    run = scan_run_argument(args.run, scratch)
    columns = [
        (TREC_BY_NAME[name], *pair)
        for name, cutoffs in requested.items()
        if TREC_BY_NAME[name].family
        for pair in printed_columns(name, cutoffs, args.collection)
    ]
    averages = {
        column: [parse_measure(evaluated).column for evaluated in averaged(text)]
        for name, text in requested.items()
        if (averaged := TREC_BY_NAME[name].averaged) is not None and isinstance(text, str)
        for _, column in printed_columns(name, text)
    }
    evaluated = [averaged_column for column in averages.values() for averaged_column in column]
    if averages:  # read by trec_eval's walk over the levels (`eleven_point_walk`)
        evaluated.append(parse_measure(ELEVEN_POINT_FIRST_LEVEL).column)
    # -J removes -c's stand-in document (unjudged) with the other unjudged ones: no rbp_resid_p= value of it then
    bogus = bogus_ranking_values(requested) if args.complete and not args.judged_only else {}
    utility_parameters = requested.get("utility")
    stand_in = args.complete and isinstance(utility_parameters, str)
    undefined = (args.judged_only and ("iprec_at_recall" in requested or "11pt_avg" in requested)) or (
        "Rndcg" in requested
    )
    # read by the -c stand-in values (`bogus`, `keep_stand_in_utility`) and `_iprec_of_emptied_queries`
    counted = ["num_ret", "num_rel"] if bogus or stand_in or undefined else []
    counted += ["num_rel", "num_rel_ret"] if averages else []
    # utility with d != 0 and no collection size: evaluated with d = 0, trec_eval's last term added here
    utility_rest = utility_without_collection(
        utility_parameters if isinstance(utility_parameters, str) else None, args.collection
    )
    if utility_rest is not None:
        counted += ["num_ret", "num_rel", "num_rel_ret"]
    gained = _gain_pairs(requested)
    apart = {column for pairs in gained.values() for column in pairs.columns}
    replaced = {utility_rest[0]: utility_rest[1]} if utility_rest is not None else {}
    measures = list(
        dict.fromkeys(
            [
                *(replaced.get(c, c) for _, _, c in columns if c not in averages and c not in apart),
                *evaluated,
                *counted,
            ]
        )
    )
    greatest = greatest_level(qrels) if gained else 0
    mappings = {text: gain_mapping(pairs.named_by, text, greatest, pairs.ideal) for text, pairs in gained.items()}
    evaluations = _evaluations(measures, [(mappings[text], pairs.columns) for text, pairs in gained.items()])
    options: dict[str, Any] = {
        "doc": "doc",
        "ties": "doc",
        "no_relevant": 0.0,
        "qrels": qrels,
        "missing_queries": "zero" if args.complete else "skip",
        "threshold": args.level - 1,  # a judged level >= l is relevant: above l - 1, the levels being integers
        "max_retrieved": args.max_retrieved,
        "judged_only": args.judged_only,
    }
    # ids are strings; the scores and the count of queries come from these plans, the run id from the run itself
    plans = [_per_query_plan(run, evaluated, {**options, "gain": gain}) for gain, evaluated in evaluations]
    per_query_plan = functools.reduce(
        lambda left, right: left.join(right, on="query", how="left", nulls_equal=True), plans
    )
    # 11pt_avg over its parameters: trec_eval's walk over the levels' columns
    per_query_plan = per_query_plan.with_columns(
        eleven_point_walk([float(source.removeprefix("iprec@")) for source in sources], sources).alias(column)
        for column, sources in averages.items()
    )
    if utility_rest is not None:
        per_query_plan = per_query_plan.with_columns(with_utility_rest(*utility_rest))
    # -c: trec_eval scores a judged query missing from the run on a ranking of one unjudged document, then zeroes
    # the measures it names; a parameterised rbp_resid keeps that ranking's value
    per_query_plan = per_query_plan.with_columns(
        pl.when(pl.col("num_ret") == 0).then(value).otherwise(pl.col(column)).alias(column)
        for column, value in bogus.items()
    )
    # trec_eval's run id is the tag of the run's last line
    runid_plan = run.select(pl.col("tag").last())
    # with -c, trec_eval's num_rel summary counts every judgment above 0 again, whatever -l says
    positive_plan = qrels.select((pl.col("relevance") > 0).sum().cast(pl.Float64))
    relstring = None
    if "relstring" in requested and args.query_lines:  # printed per query only
        parameters = requested["relstring"]
        assert not isinstance(parameters, tuple)
        relstring = relstring_length(parameters)
    top_plans = []
    if relstring is not None:
        top_plans.append(relstring_plan(run, qrels, relstring[1], args.max_retrieved, args.judged_only))
    # the queries with a judged document of positive gain: Rndcg is 0 / 0 for the others with R > 0
    rndcg_gains = requested.get("Rndcg")
    if isinstance(rndcg_gains, str):
        positive_levels = [int(level) for level, gain in mappings[rndcg_gains].items() if gain > 0]
        gainful = pl.col("relevance").is_in(positive_levels)
    else:
        gainful = pl.col("relevance") > 0
    gainful_plan = qrels.filter(gainful).select(pl.col("query").unique())
    with Progress.on_terminal(args.quiet).step(f"evaluating {args.run}"):
        per_query, runid_frame, positive, gainful_queries, *top = pl.collect_all(
            [per_query_plan, runid_plan, positive_plan, gainful_plan, *top_plans], engine="streaming"
        )
    if per_query.is_empty():
        msg = (
            "no query has both results and judgments: nothing to evaluate (trec_eval stops too, 'No queries with "
            "both results and relevance info')."
        )
        raise DataError(msg)
    strings = relstrings(top[0]) if top else {}
    summaries = {"num_rel": positive.item()} if args.complete else {}
    if undefined:
        per_query = undefined_values(per_query, requested, args.judged_only, gainful_queries)
    rows = sorted(per_query.iter_rows(named=True), key=lambda row: str(row["query"]))
    if stand_in:
        assert isinstance(utility_parameters, str)
        keep_stand_in_utility(rows, utility_parameters, args.collection, args.judged_only)
    runid = str(runid_frame.item())
    if zscores is not None:
        out = zscore_lines(args, requested, columns, rows, (strings, relstring), zscores, runid, summaries)
    else:
        out = trec_lines(args, requested, columns, rows, (strings, relstring), runid, summaries)
    if request.not_computed:
        _note_not_computed(request.not_computed, args.measure or [])
    sys.stdout.write("".join(out))
    return EXIT_OK


def _refuse_judgment_group_measures(texts: Sequence[str]) -> None:
    grouped = [text for text in texts if text.partition(".")[0] in [*judgment_groups.TREC_EVAL_MEASURES, "qrels_jg"]]
    if grouped:
        msg = f"trec_eval measure {grouped[0]!r} averages over judgment groups: it needs -R qrels_jg."
        raise UsageError(msg)


@dataclass
class _GainPairs:
    """The measures requested with one text of gain pairs (``ndcg.1=3,2=9``): their columns, the first measure
    named with them (for messages: one reading the ideal order where there is one) and whether one of them
    reads the ideal order (all of them but dcg)."""

    named_by: str
    columns: list[str] = field(default_factory=list)
    ideal: bool = False


def _gain_pairs(requested: TrecRequested) -> dict[str, _GainPairs]:
    """The measures with gain pairs, by their text: one evaluation per gain mapping, joined on the query."""
    gained: dict[str, _GainPairs] = {}
    for name, text in requested.items():
        if TREC_BY_NAME[name].gains and isinstance(text, str):
            pairs = gained.setdefault(text, _GainPairs(name))
            pairs.columns += [column for _, column in printed_columns(name, text)]
            if name != "dcg" and not pairs.ideal:  # an error about the ideal order names a measure reading it
                pairs.named_by, pairs.ideal = name, True
    return gained


Evaluations = list[tuple[str | dict[float, float], list[str]]]  # (the gain, the measures evaluated with it)


def _evaluations(measures: list[str], gained: Evaluations) -> Evaluations:
    """One evaluation per gain mapping (`gained`: each mapping and its measures), and the measures without gain pairs
    (`measures`) evaluated with the linear gain, or with the first mapping when none of them reads the gain."""
    evaluations = list(gained)
    if evaluations and not any(parse_measure(measure).kind in GAIN_KINDS for measure in measures):
        # the measures that do not read the gain join the first gain mapping's evaluation: one evaluation fewer
        evaluations[0] = (evaluations[0][0], [*measures, *evaluations[0][1]])
    else:
        evaluations.insert(0, ("linear", measures or ["rr"]))
    return evaluations


def _note_not_computed(not_computed: Sequence[str], texts: Sequence[str]) -> None:
    nicknames = " and ".join(name for name in TREC_NICKNAMES if name in texts)
    sets = nicknames or "official (the default)"
    sys.stderr.write(
        f"{PROG}: note: of trec_eval's {sets} measures, these are not computed here and not printed: "
        f"{', '.join(not_computed)}.\n"
    )
