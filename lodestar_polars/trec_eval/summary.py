"""trec_eval's output: its lines (per query with -q, then the ``all`` summaries, or z-scores with -Z), each value
formatted as its C printf formats it and each summary accumulated in the order trec_eval adds."""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ..measures._base import GEOMETRIC_FLOOR
from .measures import TREC_BY_NAME, TrecMeasure, TrecRequested, printed_columns
from .relstring import missing_relstring

MISSING_ZSCORE = -1000000.0  # trec_eval's value for a (query, measure) its -Z file has no mean for


def value_text(measure: TrecMeasure, value: float) -> str:
    return f"{value:.0f}" if measure.printed == "count" else float_text(value)


def float_text(value: float) -> str:
    """C's %6.4f; the one NaN trec_eval prints (0.0 / 0.0) has its sign bit set: "-nan"."""
    return f"{'-nan':>6}" if math.isnan(value) else f"{value:6.4f}"


def output_line(name: str, query: str, value: str) -> str:
    return f"{name:<22}\t{query}\t{value}\n"  # trec_eval's "%-22s\t%s\t..."


def summarise(values: Sequence[float], printed: Literal["float", "count", "summary", "string"]) -> float:
    """trec_eval's `all` value from the per-query values in its order (queries sorted by id): added one by one
    as its C double accumulator adds them (a tree or compensated sum can differ in the last bit, and so print
    differently at a rounding boundary), then divided by the queries; a count is the sum; a geometric mean
    (gm_map, gm_bpref) is exp of the mean log, each value floored at trec_eval's 1e-5."""
    total = 0.0
    for value in values:
        total += math.log(max(value, GEOMETRIC_FLOOR)) if printed == "summary" else value
    if printed == "count":
        return total
    mean = total / len(values) if values else 0.0
    return math.exp(mean) if printed == "summary" else mean


def zscore(value: float, reference: tuple[float, float] | None) -> float:
    """trec_eval's convert_zscores.c: (value - mean) / stddev; with stddev 0, 0 when the value is the mean."""
    if reference is None:
        return MISSING_ZSCORE
    mean, stddev = reference
    if stddev:
        return (value - mean) / stddev
    return 0.0 if value == mean else MISSING_ZSCORE


TrecColumns = list[tuple[TrecMeasure, str, str]]  # (measure, trec_eval's printed name, the package's column)
Relstrings = tuple[dict[str, str], tuple[str, int] | None]  # each query's string; (printed name, length)


def trec_lines(
    args: argparse.Namespace,
    requested: TrecRequested,
    columns: TrecColumns,
    rows: list[dict[str, Any]],
    relstring: Relstrings,
    runid: str,
    summaries: Mapping[str, float],
) -> list[str]:
    """trec_eval's lines: per query (-q) in query order, each measure in print order; then the `all` lines, each
    summary as `summarise` forms it (or as `summaries` gives it)."""
    strings, shown = relstring
    out: list[str] = []
    if args.query_lines:
        for row in rows:
            for name in requested:
                if name == "relstring" and shown is not None:
                    text = strings.get(row["query"], missing_relstring(*shown, args.judged_only))
                    out.append(output_line(shown[0], row["query"], f"'{text}'"))
                out += [
                    output_line(printed, row["query"], value_text(measure, row[column]))
                    for measure, printed, column in columns
                    if measure.name == name and measure.printed != "summary"
                ]
    if not args.no_summary:
        for name in requested:
            if name == "runid":
                out.append(output_line("runid", "all", runid))
            elif name == "num_q":
                out.append(output_line("num_q", "all", str(len(rows))))
            elif name != "relstring":  # per query only
                measure = TREC_BY_NAME[name]
                for printed, column in printed_columns(name, requested[name], args.collection):
                    if printed in summaries:
                        summary = summaries[printed]
                    else:
                        summary = summarise([row[column] for row in rows], measure.printed)
                    out.append(output_line(printed, "all", value_text(measure, summary)))
    return out


def zscore_lines(
    args: argparse.Namespace,
    requested: TrecRequested,
    columns: TrecColumns,
    rows: list[dict[str, Any]],
    relstring: Relstrings,
    zscores: Mapping[str, Mapping[str, tuple[float, float]]],
    runid: str,
    summaries: Mapping[str, float],
) -> list[str]:
    """trec_eval -Z: every per-query value becomes its z-score against the file's (query, measure) mean and
    stddev (`zscore`; a query or measure the file lacks gives -1000000), a geometric mean's (gm_map, gm_bpref)
    value being log(max(value, 1e-5)); the summary accumulates the z-scores as trec_eval does (the mean, the sum
    for a count, exp of the mean for a geometric mean; with -c, num_rel's count of positive judgments) and every
    value prints as %6.4f after a "Z".  The lookup here is exact; trec_eval's binary searches read one entry
    past a query's entries (a query missing from the file that sorts after all of its queries crashes it).
    `rows` are the per-query rows in query order; relstring prints as it is, not as a z-score."""
    strings, shown = relstring
    totals = dict.fromkeys([printed for _, printed, _ in columns], 0.0)
    out: list[str] = []
    for row in rows:
        reference = zscores.get(str(row["query"]))
        for name in requested:
            if name == "relstring" and shown is not None:
                text = strings.get(row["query"], missing_relstring(*shown, args.judged_only))
                out.append(output_line(shown[0], row["query"], f"'{text}'"))
            for measure, printed, column in columns:
                if measure.name != name:
                    continue
                value = float(row[column])
                if measure.printed == "summary":
                    value = math.log(max(value, GEOMETRIC_FLOOR))
                z = zscore(value, None if reference is None else reference.get(printed))
                totals[printed] += z
                if args.query_lines and measure.printed != "summary":
                    out.append(output_line(f"Z{printed:<22}", row["query"], float_text(z)))
    if args.no_summary:
        return out
    queries = len(rows)
    for name in requested:
        if name == "runid":
            out.append(output_line("runid", "all", runid))
        elif name == "num_q":
            out.append(output_line(f"Z{'num_q':<22}", "all", f"{queries:6.4f}"))
        elif name != "relstring":
            measure = TREC_BY_NAME[name]
            for printed, _ in printed_columns(name, requested[name], args.collection):
                total = totals[printed]
                if printed in summaries:  # a summary trec_eval takes from the judgments, not the z-scores
                    summary = summaries[printed]
                elif measure.printed == "count":
                    summary = total
                elif measure.printed == "summary":
                    summary = math.exp(total / queries) if queries else total
                else:
                    summary = total / queries if queries else total
                out.append(output_line(f"Z{printed:<22}", "all", float_text(summary)))
    return out
