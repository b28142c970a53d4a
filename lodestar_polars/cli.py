"""The ``lodestar-polars`` command line: evaluation jobs for schedulers, and a trec_eval stand-in.

``lodestar-polars evaluate RUN [options]`` reads a Parquet file, glob or (hive-partitioned) folder, a CSV file
or a TREC run, computes the requested measures per query (and per ``--by`` group), writes the per-query frame
and the summary, and prints the mean table.  ``lodestar-polars trec_eval [-q] [-c] [-n] [-m MEASURE]... [-l NUM]
[-M NUM] [-J] [-Z FILE] QRELS RUN`` prints what trec_eval prints, for the measures the package computes (RUN
``-`` reads standard input); without ``-c`` a judged query missing from the run is skipped, as trec_eval 9 and
pytrec_eval do, where trec_eval 10 stops (exit code 4, "result qid 'X' not found in qrels").

Exit codes: 0 on success, 1 for a data error (bad values, duplicates, missing columns, an unreadable file),
2 for a usage error.  Errors are one line on stderr; ``--debug`` prints the traceback too.  Output files are
written to a temporary file in their folder and renamed once everything succeeded, so a failed run leaves no
partial or empty output behind.

>>> from lodestar_polars.cli import parse_measures
>>> parse_measures(["nDCG@10,rr", "dcg"], cutoffs=[5])
['ndcg@10', 'rr@5', 'dcg@5']
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import glob
import importlib.util
import itertools
import json
import math
import os
import re
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

import polars as pl

from . import __version__, partitions, preferences
from ._mean import mean as mean_of
from ._spec import (
    CANONICAL_MEASURES,
    GAIN_KINDS,
    MEASURE_NAMES,
    MEASURE_PATTERN,
    Measure,
    level_column,
    parse_measure,
)
from .io import scan_trec_qrels, scan_trec_run
from .judgment_groups import TREC_EVAL_MEASURES as TREC_EVAL_JG_MEASURES
from .measures._base import GEOMETRIC_FLOOR
from .measures._registry import REGISTRY
from .namespace import rank_metrics

PROG = "lodestar-polars"
EXIT_OK, EXIT_DATA_ERROR, EXIT_USAGE_ERROR = 0, 1, 2


class UsageError(Exception):
    """Wrong arguments: exit code 2."""


class DataError(Exception):
    """The data cannot be evaluated (unreadable file, bad values, missing columns): exit code 1."""


# Exceptions the package (and Polars, and the file system) raise for bad data.  Options are checked before
# any data is read, so a ValueError or TypeError raised while building the plan is a usage error instead.
DATA_ERRORS: tuple[type[BaseException], ...] = (
    DataError,
    ValueError,
    ZeroDivisionError,
    OSError,
    pl.exceptions.PolarsError,
)

# --------------------------------------------------------------------------------------------------------
# measures: names as `evaluate` takes them, and the one function that computes them

_ASCII_INTEGER = re.compile(r"[0-9]+")


def measure_names_text() -> str:
    """The measure names `evaluate` and ``-m`` take (the package's one table), each canonical name first.

    Returns
    -------
    str
        The canonical names in order, each followed by its other spellings in parentheses.

    Examples
    --------
    >>> measure_names_text().split(", ap")[0]
    'ndcg, dcg, rr (mrr, recip_rank, reciprocal_rank), p (precision), r (recall)'
    """
    spellings = {
        kind: [name for name, of in MEASURE_NAMES.items() if of == kind and name != kind] for kind in CANONICAL_MEASURES
    }
    return ", ".join(f"{kind} ({', '.join(others)})" if others else kind for kind, others in spellings.items())


def parse_measures(texts: Sequence[str], cutoffs: Sequence[int] = ()) -> list[str]:
    """Canonical measure names from ``-m`` values (repeated or comma-separated, case-insensitive).

    ``-m`` takes exactly the names `evaluate` takes (`measure_names_text`: ``mrr``, ``map``, ``recall@10``,
    ``hit_rate@3``...), with cut-offs in ASCII digits.  A name without ``@k`` takes each of `cutoffs`
    (``--k``), or the whole list when there are none (a measure computed only at a cut-off, such as
    ``sdcg(max_rel=4)``, then needs its ``@k``).

    Parameters
    ----------
    texts
        The ``-m`` values, e.g. ``["ndcg@5,ndcg@10", "RR"]``.
    cutoffs
        The ``--k`` values, applied to names without a cut-off.

    Returns
    -------
    list[str]
        Canonical names (``ndcg@10``, ``dcg``, ``rr@5``, ``p@5``...), in the order given, without repeats.

    Raises
    ------
    UsageError
        For an unknown measure or a cut-off below 1.

    Examples
    --------
    >>> parse_measures(["ndcg@5,ndcg@10", "RR"])
    ['ndcg@5', 'ndcg@10', 'rr']
    >>> parse_measures(["ndcg"], cutoffs=[1, 3])
    ['ndcg@1', 'ndcg@3']
    >>> parse_measures(["MRR,recall@10,map,hit_rate@3"])
    ['rr', 'r@10', 'ap', 'success@3']
    >>> parse_measures(["utility(a=2,b=-2),rbp(p=0.5)"], cutoffs=[10])
    ['utility(a=2,b=-2)', 'rbp(p=0.5)@10']
    >>> parse_measures(["sdcg(max_rel=4)"], cutoffs=[5, 10])
    ['sdcg(max_rel=4)@5', 'sdcg(max_rel=4)@10']
    """
    names: list[str] = []
    for text in texts:
        for item in re.split(r",(?![^()]*\))", text):  # a comma inside a measure's options does not split
            spelled = item.strip()
            cutoff_text = spelled.rpartition("@")[2]
            if "@" in spelled and cutoff_text.isdigit() and int(cutoff_text) < 1:
                msg = f"measure {spelled!r}: the cut-off must be at least 1."
                raise UsageError(msg)
            if cutoffs and _requires_a_cutoff(spelled):
                expanded = [_parsed_measure(f"{spelled}@{k}").column for k in cutoffs]
            else:
                measure = _parsed_measure(spelled)
                takes_cutoffs = REGISTRY[measure.kind].parameter == "cutoff" and measure.cutoff is None
                expanded = [f"{measure.column}@{k}" for k in cutoffs] if takes_cutoffs and cutoffs else [measure.column]
            names += [name for name in expanded if name not in names]
    return names


def _requires_a_cutoff(spelled: str) -> bool:
    """Whether `spelled` names, without `@k`, a measure computed only at a cut-off (`sdcg(max_rel=4)`)."""
    match = MEASURE_PATTERN.fullmatch(spelled)
    kind = MEASURE_NAMES.get(match.group(1).lower()) if match else None
    return (
        match is not None
        and kind is not None
        and match.group(3) is None
        and REGISTRY[kind].parameter == "required_cutoff"
    )


def _parsed_measure(spelled: str) -> Measure:
    """`parse_measure`, its errors as usage errors (an unknown name listing the names `-m` takes)."""
    try:
        return parse_measure(spelled)
    except ValueError as error:
        msg = (
            f"unknown measure {spelled!r}; known measures (case-insensitive, each optionally @k with k "
            f"in ASCII digits, iprec@level with a recall level): {measure_names_text()}."
            if str(error).startswith("unknown measure")
            else str(error)
        )
        raise UsageError(msg) from None


def _evaluate(
    frame: pl.LazyFrame, measures: Sequence[str], options: Mapping[str, Any]
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Every metric computation of the command line: (per-query plan, mean plan) for canonical measure names.

    `options` holds the keyword arguments of the package's ``evaluate`` (query, relevance, score, doc, by, ties,
    gain, weight, no_relevant, threshold, log_base, qrels, missing_queries), only those the user gave.
    """
    metrics = rank_metrics(frame)
    return metrics.evaluate(list(measures), **options), metrics.evaluate_mean(list(measures), **options)


# --------------------------------------------------------------------------------------------------------
# reading


def _is_glob(path: str) -> bool:
    return any(character in path for character in "*?[")


def _detect_format(path: str, given: str | None) -> str:
    if given is not None:
        return given
    lower = path.lower()
    if os.path.isdir(path) or lower.endswith((".parquet", ".pq")):
        return "parquet"
    if lower.endswith(".csv"):
        return "csv"
    return "trec"


def _scan(
    path: str, file_format: str, role: Literal["run", "qrels"], id_columns: Sequence[str], *, lenient: bool = False
) -> pl.LazyFrame:
    """A lazy frame over `path`; an unreadable source is a DataError.

    A CSV file has no types: its `id_columns` (query and doc ids) are read as text, as trec_eval reads ids, so
    "0012" stays "0012" (inferred, it would be the integer 12 and never join a judgment "0012").
    """
    if _is_glob(path):
        if not glob.glob(path, recursive=True):
            msg = f"no file matches the {role} pattern {path!r}."
            raise DataError(msg)
    elif not os.path.exists(path):
        msg = f"{role} file not found: {path}"
        raise DataError(msg)
    if file_format == "parquet":
        return pl.scan_parquet(path)
    if file_format == "csv":
        return pl.scan_csv(path, schema_overrides=dict.fromkeys(id_columns, pl.String()))
    if role == "run":
        return scan_trec_run(path, lenient=lenient)
    return scan_trec_qrels(path, lenient=lenient)


def _trec_judgments_as_run_columns(
    qrels: pl.LazyFrame, query: Sequence[str], doc: str, relevance: str, source: str
) -> pl.LazyFrame:
    """TREC judgments' fixed columns (query, doc, relevance) under the names the run's column options give."""
    if len(query) != 1:
        names = ", ".join(query)
        msg = f"--qrels {source} is a TREC file, with one query id column; --query names {len(query)}: {names}."
        raise UsageError(msg)
    roles = {"--query": query[0], "--doc": doc, "--relevance": relevance}
    for option, name in roles.items():
        others = [other for other, other_name in roles.items() if other_name == name and other != option]
        if others:
            msg = f"{option} and {others[0]} both name column {name!r}: TREC judgments' columns need three names."
            raise UsageError(msg)
    return qrels.select(pl.col("query").alias(query[0]), pl.col("doc").alias(doc), pl.col("relevance").alias(relevance))


def _as_dtype_of_run(column: str, dtype: pl.DataType) -> pl.Expr:
    """A judgment id converted to the run's dtype from its text ("0012" -> 12 for an integer run); null when
    it cannot be (a judgment "q7" against an integer run)."""
    return pl.col(column).cast(pl.String).cast(dtype, strict=False)


def _refuse_unconvertible_queries(
    column: str, dtype: pl.DataType, source: str
) -> Callable[[pl.DataFrame], pl.DataFrame]:
    def convert_batch(frame: pl.DataFrame) -> pl.DataFrame:
        converted = frame.select(_as_dtype_of_run(column, dtype)).to_series()
        lost = frame[column].filter(converted.is_null() & frame[column].is_not_null())
        if len(lost):
            msg = (
                f"judged query {lost[0]!r} (qrels {source}) cannot be read as the {dtype} of the run's query "
                f"column {column!r}: --missing-queries zero would score it 0 but cannot write it in that column."
            )
            raise ValueError(msg)
        return frame.with_columns(converted.alias(column))

    return convert_batch


def _judgments_in_run_dtypes(
    run: pl.LazyFrame, qrels: pl.LazyFrame, query: Sequence[str], doc: str, missing_queries: str | None, source: str
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Judgments whose id columns have the run's dtypes, so they join and the output keeps the run's dtypes.

    A judgment id is converted to the run's dtype from its text: against an Int64 run, "0012" is 12 and
    "q7" matches no run row.  Such a judged query is left out, as any judged query missing from the run is
    (``missing_queries="skip"``), or is an error with ``"zero"``, which would have to print it.  A doc id is
    not in the output: where the dtypes differ, both sides are compared as the text of the run's dtype, and
    a judged document that cannot be converted keeps its own text, so it still counts in R and the ideal DCG.
    """
    run_schema, qrels_schema = run.collect_schema(), qrels.collect_schema()
    for column in query:
        if column not in run_schema or column not in qrels_schema or run_schema[column] == qrels_schema[column]:
            continue
        dtype = run_schema[column]
        if missing_queries == "zero":
            schema = {**qrels_schema, column: dtype}
            qrels = qrels.map_batches(
                _refuse_unconvertible_queries(column, dtype, source),
                schema=schema,
                streamable=True,
                validate_output_schema=False,
            )
        else:
            converted = _as_dtype_of_run(column, dtype)
            qrels = qrels.filter(converted.is_not_null() | pl.col(column).is_null()).with_columns(converted)
    if doc in run_schema and doc in qrels_schema and run_schema[doc] != qrels_schema[doc]:
        as_run_text = _as_dtype_of_run(doc, run_schema[doc]).cast(pl.String)
        qrels = qrels.with_columns(pl.coalesce(as_run_text, pl.col(doc).cast(pl.String)).alias(doc))
        run = run.with_columns(pl.col(doc).cast(pl.String))
    return run, qrels


# --------------------------------------------------------------------------------------------------------
# writing


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def _atomic_outputs(paths: Sequence[Path]) -> Iterator[list[Path]]:
    """Temporary files beside `paths`; renamed onto them if the block succeeds, removed otherwise."""
    temporaries: list[Path] = []
    try:
        for path in paths:
            # hidden, and with the real extension last (for writers that pick the format by extension)
            handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.partial-", suffix=path.suffix)
            os.close(handle)
            temporaries.append(Path(name))
        yield temporaries
        mode = 0o666 & ~_current_umask()  # what open() would have given the file
        for temporary, path in zip(temporaries, paths, strict=True):
            os.chmod(temporary, mode)
            os.replace(temporary, path)
    finally:
        for temporary in temporaries:
            with contextlib.suppress(FileNotFoundError):
                temporary.unlink()


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.4f}"
    return str(value)


def markdown_table(frame: pl.DataFrame) -> str:
    """The frame as an aligned Markdown table, floats to 4 decimals.

    Parameters
    ----------
    frame
        Any frame (the mean table).

    Returns
    -------
    str
        The table, one line per row after the header and the rule, ending with a newline.

    Examples
    --------
    >>> print(markdown_table(pl.DataFrame({"ndcg@10": [0.51234], "queries": [3]})), end="")
    | ndcg@10 | queries |
    |--------:|--------:|
    |  0.5123 |       3 |
    """
    rows = [[_cell(value) for value in row] for row in frame.iter_rows()]
    widths = [max([len(name), *(len(row[i]) for row in rows)]) for i, name in enumerate(frame.columns)]
    numeric = [dtype.is_numeric() for dtype in frame.dtypes]

    def line(cells: Sequence[str]) -> str:
        padded = [c.rjust(w) if right else c.ljust(w) for c, w, right in zip(cells, widths, numeric, strict=True)]
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join(
        ("-" * (w + 1) + ":") if right else ("-" * (w + 2)) for w, right in zip(widths, numeric, strict=True)
    )
    return "\n".join([line(frame.columns), rule + "|", *(line(row) for row in rows)]) + "\n"


def _json_value(value: object) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _write_summary(frame: pl.DataFrame, path: Path, kind: str) -> None:
    if kind == "json":
        rows = [{key: _json_value(value) for key, value in row.items()} for row in frame.iter_rows(named=True)]
        path.write_text(json.dumps(rows, indent=2, default=str, allow_nan=False) + "\n")
    elif kind == "csv":
        frame.write_csv(path)
    else:
        path.write_text(markdown_table(frame))


def _write_per_query(frame: pl.DataFrame, path: Path, kind: str) -> None:
    if kind == "parquet":
        frame.write_parquet(path)
    else:
        frame.write_csv(path)


PER_QUERY_KINDS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv"}
SUMMARY_KINDS = {".json": "json", ".csv": "csv", ".md": "markdown", ".markdown": "markdown"}


def _output(path: str | None, kinds: Mapping[str, str], option: str) -> tuple[Path, str] | None:
    if path is None:
        return None
    target = Path(path)
    kind = kinds.get(target.suffix.lower())
    if kind is None:
        msg = f"{option} {path}: the extension must be one of {', '.join(kinds)}."
        raise UsageError(msg)
    if not target.parent.is_dir():
        msg = f"{option} {path}: folder {str(target.parent)!r} does not exist."
        raise UsageError(msg)
    if target.exists() and not target.is_file():  # a folder, a device: not something to replace
        msg = f"{option} {path}: exists and is not a regular file."
        raise UsageError(msg)
    return target, kind


# --------------------------------------------------------------------------------------------------------
# evaluate


def _no_relevant(text: str) -> float | str | None:
    lowered = text.lower()
    if lowered == "error":
        return "error"
    if lowered in ("none", "null"):
        return None
    try:
        return float(text)
    except ValueError:
        msg = f"expected a number, 'none' or 'error', got {text!r}"
        raise argparse.ArgumentTypeError(msg) from None


def _gain(text: str) -> str | dict[float, float] | list[float]:
    """'linear', 'exponential', 'label:gain,...' (a mapping) or 'gain0,gain1,...' (LightGBM's label_gain)."""
    if text in ("linear", "exponential"):
        return text
    try:
        if ":" in text:
            pairs = (item.split(":") for item in text.split(","))
            return {float(label): float(gain) for label, gain in pairs}
        return [float(gain) for gain in text.split(",")]
    except ValueError:
        msg = f"expected 'linear', 'exponential', 'label:gain,...' or 'gain0,gain1,...', got {text!r}"
        raise argparse.ArgumentTypeError(msg) from None


def _columns(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",")]
    if not all(names):
        msg = f"expected column names separated by commas, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return names


def _cutoffs(text: str) -> list[int]:
    values = [value.strip() for value in text.split(",")]
    if not all(_ASCII_INTEGER.fullmatch(value) for value in values):
        msg = f"expected positive integers (ASCII digits) separated by commas, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    if any(int(value) < 1 for value in values):
        msg = f"cut-offs must be at least 1, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return [int(value) for value in values]


def _evaluate_options(args: argparse.Namespace, run_format: str, qrels: pl.LazyFrame | None) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if args.query:
        options["query"] = args.query[0] if len(args.query) == 1 else list(args.query)
    if args.by:
        options["by"] = list(args.by)
    doc = args.doc if args.doc is not None else ("doc" if run_format == "trec" or qrels is not None else None)
    named = {"relevance": args.relevance, "score": args.score, "doc": doc, "weight": args.weight}
    tuned = {
        "ties": args.ties,
        "gain": args.gain,
        "log_base": args.log_base,
        "threshold": args.threshold,
        "missing_queries": args.missing_queries,
    }
    options.update({key: value for key, value in {**named, **tuned}.items() if value is not None})
    if args.no_relevant is not _UNSET:
        options["no_relevant"] = args.no_relevant
    if qrels is not None:
        options["qrels"] = qrels
    return options


_UNSET = object()


def _build(run: pl.LazyFrame, measures: Sequence[str], options: Mapping[str, Any]) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Build the plans; an option the package refuses (checked before any data is read) is a usage error."""
    return _usage_errors(lambda: _evaluate(run, measures, options), options)


def _build_per_query(run: pl.LazyFrame, measures: Sequence[str], options: Mapping[str, Any]) -> pl.LazyFrame:
    """The per-query plan alone (the trec_eval modes form their summaries from it), as `_build` builds it."""
    return _usage_errors(lambda: rank_metrics(run).evaluate(list(measures), **options), options)


_Built = TypeVar("_Built")


def _usage_errors(build: Callable[[], _Built], options: Mapping[str, Any]) -> _Built:
    try:
        return build()
    except (TypeError, ValueError) as error:
        if isinstance(error, TypeError) and "by" in options and "'by'" in str(error):
            msg = f"--by needs a lodestar_polars whose metrics take by=; this one does not ({error})"
            raise UsageError(msg) from error
        raise UsageError(str(error)) from error


def _evaluate_partitioned(
    run: pl.LazyFrame,
    measures: Sequence[str],
    options: Mapping[str, Any],
    args: argparse.Namespace,
    per_query_path: Path | None,
    per_query_kind: str | None,
) -> pl.DataFrame:
    """The bounded-memory path: `lodestar_polars.partitions.sink` evaluates one partition at a time, writing
    the per-query rows to Parquet (here into a scratch folder beside the output, then moved onto the output's
    temporary file, which the caller renames on success)."""
    folder = per_query_path.parent if per_query_path is not None else None
    with tempfile.TemporaryDirectory(dir=folder, prefix=".lodestar-partitions-") as scratch:
        target = Path(scratch) / "per_query.parquet"
        mean = partitions.sink(
            run,
            target,
            metric="evaluate",
            measures=list(measures),
            partitions=args.partitions,
            # a bar on a terminal, when the progress extra (tqdm) is there: a job never fails for want of it
            progress=sys.stderr.isatty() and importlib.util.find_spec("tqdm") is not None,
            **options,
        )
        if per_query_path is not None:
            if per_query_kind == "csv":
                pl.scan_parquet(target).sink_csv(per_query_path)
            else:
                os.replace(target, per_query_path)
    return mean


def command_evaluate(args: argparse.Namespace) -> int:
    measures = parse_measures(args.measure or ["ndcg"], cutoffs=args.k or [])
    per_query_output = _output(args.per_query, PER_QUERY_KINDS, "--per-query")
    summary_output = _output(args.summary, SUMMARY_KINDS, "--summary")
    if per_query_output and summary_output and per_query_output[0].resolve() == summary_output[0].resolve():
        msg = f"--per-query and --summary name the same file: {args.summary}"
        raise UsageError(msg)
    run_format = _detect_format(args.run, args.format)
    if args.missing_queries is not None and args.qrels is None:
        msg = "--missing-queries applies to judgments: give --qrels too."
        raise UsageError(msg)
    if run_format == "trec" and args.qrels is None:
        msg = f"{args.run} is read as a TREC run, which has no relevance: give --qrels (or --format parquet|csv)."
        raise UsageError(msg)
    if args.partitions is not None and args.partitions < 1:
        msg = f"--partitions must be at least 1, got {args.partitions}."
        raise UsageError(msg)
    query, doc = args.query or ["query"], args.doc or "doc"
    run = _scan(args.run, run_format, "run", [*query, doc])
    qrels = None
    if args.qrels is not None:
        qrels_format = _detect_format(args.qrels, args.qrels_format)
        qrels = _scan(args.qrels, qrels_format, "qrels", [*query, doc])
        if qrels_format == "trec":
            qrels = _trec_judgments_as_run_columns(qrels, query, doc, args.relevance or "relevance", args.qrels)
        run, qrels = _judgments_in_run_dtypes(run, qrels, query, doc, args.missing_queries, args.qrels)
    options = _evaluate_options(args, run_format, qrels)
    outputs = [output for output in (per_query_output, summary_output) if output is not None]
    with _atomic_outputs([path for path, _ in outputs]) as temporaries:
        temporary = dict(zip([path for path, _ in outputs], temporaries, strict=True))
        if args.partitions is not None:
            per_query_temporary = temporary[per_query_output[0]] if per_query_output else None
            kind = per_query_output[1] if per_query_output else None
            mean = _evaluate_partitioned(run, measures, options, args, per_query_temporary, kind)
        else:
            per_query_plan, mean_plan = _build(run, measures, options)
            if per_query_output is not None:
                if qrels is None:  # the mean from the per-query frame: the run is read once
                    per_query = per_query_plan.collect(engine="streaming")
                    averaged = mean_of(per_query, by=options.get("by"), weight=options.get("weight"), metrics=measures)
                    assert isinstance(averaged, pl.DataFrame)
                    mean = averaged
                else:  # queries_without_judgments needs the judgments: two reads of the run
                    per_query, mean = pl.collect_all([per_query_plan, mean_plan], engine="streaming")
                _write_per_query(per_query, temporary[per_query_output[0]], per_query_output[1])
            else:
                mean = mean_plan.collect(engine="streaming")
        if summary_output is not None:
            _write_summary(mean, temporary[summary_output[0]], summary_output[1])
    if not args.quiet:
        sys.stdout.write(markdown_table(mean))
    return EXIT_OK


# --------------------------------------------------------------------------------------------------------
# trec_eval


@dataclass(frozen=True)
class TrecMeasure:
    """One trec_eval measure: its name, the package measure it maps to, its default cut-offs (or recall levels)
    and how trec_eval prints it: "float" (%6.4f per query and in the summary), "count" (%ld per query, the sum
    over queries in the summary), "summary" (the summary line only, as gm_map) or "string" (relstring: a quoted
    string per query, no summary line)."""

    name: str
    family: str | None  # None: computed here from the counts (runid, num_q)
    cutoffs: tuple[float, ...] | None  # None: one value, no cut-off; recall levels for iprec_at_recall
    printed: Literal["float", "count", "summary", "string"] = "float"
    levels: bool = False  # the parameters are recall levels in [0, 1] (printed %3.2f), not cut-offs
    # other parameters: from the text after the first dot of `-m name.text` (None: no text, the defaults), the
    # (printed name, evaluate() measure name) of each value, in print order; it raises UsageError on bad text
    columns: Callable[[str | None], list[tuple[str, str]]] | None = None
    # its evaluate() names hold `{collection}`, filled with -N (the documents in the collection)
    collection: bool = False
    # a measure averaging others over its parameters: from the text of `-m name.text`, the evaluate() measure
    # names averaged, added last to first (trec_eval's 11pt_avg over custom recall levels); printed `name_text`
    averaged: Callable[[str], list[str]] | None = None
    # takes trec_eval's gain pairs, `-m name.1=3,2=9` (level=gain; the other levels' gain is the level), computed
    # with that gain mapping, printed `name_1=3,2=9`
    gains: bool = False


_TREC_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _trec_decimals(name: str, parameters: str, count: int | None, what: str) -> list[str]:
    """Comma-separated decimal numbers, `count` of them (None: any number)."""
    values = parameters.split(",")
    if (count is not None and len(values) != count) or not all(_TREC_DECIMAL.fullmatch(value) for value in values):
        msg = f"measure '{name}.{parameters}': {what}."
        raise UsageError(msg)
    return values


def _set_f_columns(parameters: str | None) -> list[tuple[str, str]]:
    """set_F (beta 1), or set_F.x (beta x, printed set_F_x as trec_eval prints it: the text as given)."""
    if parameters is None:
        return [("set_F", "set_f")]
    # trec_eval reads the first of several values
    beta = _trec_decimals("set_F", parameters, None, "decimal numbers, the first one beta (weight of recall)")[0]
    if float(beta) < 0:
        msg = f"measure 'set_F.{parameters}': beta weighs recall against precision, from 0 up."
        raise UsageError(msg)
    return [(f"set_F_{parameters}", f"set_f(beta={float(beta)!r})")]


def _utility_columns(parameters: str | None) -> list[tuple[str, str]]:
    """utility (coefficients 1,-1,0,0), or utility.a,b,c,d (printed utility_a,b,c,d); -N fills {collection}."""
    if parameters is None:
        return [("utility", "utility(collection={collection})")]
    coefficients = _trec_decimals("utility", parameters, 4, "four decimal numbers a,b,c,d (the coefficients)")
    options = ",".join(f"{name}={float(value)!r}" for name, value in zip("abcd", coefficients, strict=True))
    return [(f"utility_{parameters}", f"utility({options},collection={{collection}})")]


def _utility_without_collection(parameters: str | None, collection: int) -> tuple[str, str, float] | None:
    """utility weighing the non-relevant documents not retrieved (d != 0) without -N, or with -N 0: trec_eval
    counts them as N + h - n - R with N = 0, a negative number, and prints that utility.  The package's utility
    refuses d != 0 without a collection, so the command line evaluates the measure with d = 0 and adds
    d x (0 + h - n - R) itself (`_with_utility_rest`).  (the column printed, the column evaluated, d), or None
    when the package's utility computes it as asked."""
    if parameters is None or collection != 0:
        return None
    ((_, printed_column),) = _trec_columns("utility", parameters, collection)
    a, b, c, d = (float(value) for value in parameters.split(","))
    if d == 0:
        return None
    evaluated = parse_measure(f"utility(a={a!r},b={b!r},c={c!r})").column
    return printed_column, evaluated, d


def _with_utility_rest(column: str, evaluated: str, d: float) -> pl.Expr:
    """trec_eval's utility from its first three terms (`evaluated`, d = 0) plus d x (N + h - n - R), N = 0: the
    count is an integer in trec_eval (its sum is exact), then multiplied, then added last, as there."""
    rest = pl.col("num_rel_ret") - pl.col("num_ret") - pl.col("num_rel")
    return (pl.col(evaluated) + pl.lit(d) * rest.cast(pl.Float64)).alias(column)


def _trec_multipliers(name: str, parameters: str) -> tuple[float, ...]:
    """Positive multipliers as trec_eval takes them (``Rprec_mult.5.0,0.2,0.35``), sorted ascending as it
    prints them; trec_eval refuses duplicates."""
    values = [value.strip() for value in parameters.split(",")]
    if not all(_DECIMAL.fullmatch(value) for value in values):
        msg = f"measure '{name}.{parameters}': multipliers must be decimal numbers separated by commas."
        raise UsageError(msg)
    multipliers = sorted(float(value) for value in values)
    if multipliers[0] <= 0.0:
        msg = f"measure '{name}.{parameters}': multipliers must be positive."
        raise UsageError(msg)
    if len(set(multipliers)) != len(multipliers):
        msg = f"measure '{name}.{parameters}': duplicate multipliers."
        raise UsageError(msg)
    return tuple(multipliers)


TREC_RPREC_MULTIPLIERS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)


def _rprec_mult_columns(parameters: str | None) -> list[tuple[str, str]]:
    """``Rprec_mult``'s columns: one per multiplier, printed ``Rprec_mult_0.20``."""
    multipliers = TREC_RPREC_MULTIPLIERS if parameters is None else _trec_multipliers("Rprec_mult", parameters)
    return [(f"Rprec_mult_{m:3.2f}", f"rprec_mult@{m!r}") for m in multipliers]


_PERSISTENCE_PAIR = re.compile(r"p=([0-9]*\.?[0-9]+|[0-9]+\.)")


def _persistence_columns(name: str, measure: str) -> Callable[[str | None], list[tuple[str, str]]]:
    """``rbp`` / ``rbp_resid``'s column: trec_eval's ``-m rbp.p=0.95`` sets the persistence and prints
    ``rbp_p=0.95`` (the parameter text as given); its gain pairs (``rbp.2=5``) are not taken here, where trec_eval's
    gains are linear."""

    def columns(parameters: str | None) -> list[tuple[str, str]]:
        if parameters is None:
            return [(name, measure)]
        match = _PERSISTENCE_PAIR.fullmatch(parameters)
        if match is None:
            msg = (
                f"measure '{name}.{parameters}': the only parameter taken here is the persistence, written "
                f"'{name}.p=0.95'."
            )
            raise UsageError(msg)
        p = float(match.group(1))
        if not 0.0 < p < 1.0:
            msg = f"measure '{name}.{parameters}': the persistence p lies strictly between 0 and 1."
            raise UsageError(msg)
        return [(f"{name}_{parameters}", f"{measure}(p={p!r})")]

    return columns


def _eleven_point_levels(parameters: str) -> list[str]:
    """``11pt_avg..25,.5,.75``: iprec at each level, in the order given (trec_eval keeps that order: levels out
    of order, or given twice, change what its walk adds, `_eleven_point_walk`)."""
    values = [value.strip() for value in parameters.split(",")]
    if not all(_DECIMAL.fullmatch(value) for value in values):
        msg = f"measure '11pt_avg.{parameters}': recall levels must be decimal numbers separated by commas."
        raise UsageError(msg)
    levels = [float(value) for value in values]
    if max(levels) > 1.0:
        msg = f"measure '11pt_avg.{parameters}': recall levels must lie from 0 to 1."
        raise UsageError(msg)
    return [f"iprec@{level!r}" for level in levels]


ELEVEN_POINT_FIRST_LEVEL = "iprec@0.0"  # the interpolated precision at recall 0, where trec_eval's walk ends


def _eleven_point_walk(levels: Sequence[float], sources: Sequence[str]) -> pl.Expr:
    """trec_eval's 11pt_avg over its parameters, the levels in the order given, from the per-query columns
    num_rel (R), num_rel_ret (h), the iprec column of each level (`sources`) and iprec@0.0.

    trec_eval (m_11pt_avg.c) turns each level x into a count of relevant documents c = lround(x R), skips the
    levels from the last one down while c > h (each adds 0), then walks the ranking upwards from its end: at the
    c-th relevant document it adds the interpolated precision there for the current level and moves to the level
    before it, as long as that level's c is the current count; the levels it has not reached when the walk ends
    (c of 0, or a c above the count where the previous level was met) each add the interpolated precision at the
    first relevant document, iprec@0.0.  With ascending levels that is the sum of their iprec, the levels' own
    values; out of order, a level whose c lies above the previous level's is not met and adds iprec@0.0 instead
    (`-m 11pt_avg.0.5,0.2` adds iprec@0.2 and iprec@0.0).  The values are added from the last level to the first
    and the sum divided by their number, as trec_eval adds them."""
    relevant, found = pl.col("num_rel").cast(pl.Float64), pl.col("num_rel_ret").cast(pl.Float64)
    at_first = pl.col(ELEVEN_POINT_FIRST_LEVEL)
    total: pl.Expr = pl.lit(0.0)
    skipping, ended, count = pl.lit(True), pl.lit(False), found
    for level, source in zip(reversed(levels), reversed(sources), strict=True):
        cut = (pl.lit(level) * relevant).round(0, mode="half_away_from_zero")
        skipped = skipping & (cut > found)
        met = ~skipped & ~ended & (cut >= 1.0) & (cut <= count)
        total = total + pl.when(skipped).then(0.0).when(met).then(pl.col(source)).otherwise(at_first)
        skipping, ended = skipped, ~skipped & ~met
        count = pl.when(met).then(cut).otherwise(count)
    return total / len(levels)


def _bogus_ranking_values(requested: Mapping[str, tuple[float, ...] | str | None]) -> dict[str, float]:
    """With -c, trec_eval scores a judged query missing from the run on a ranking of one unjudged document and
    then zeroes num_ret, utility, relstring, unj* and rbp_resid by their printed names: `rbp_resid_p=0.75` is not
    zeroed and keeps that ranking's residual, p^1 + (1 - p) x p^0.  The evaluate() column -> that value."""
    values: dict[str, float] = {}
    for printed, column in _trec_columns("rbp_resid", requested["rbp_resid"]) if "rbp_resid" in requested else []:
        if printed != "rbp_resid":
            p = float(printed.removeprefix("rbp_resid_p="))
            values[column] = p + (1.0 - p) * 1.0
    return values


_GAIN_PAIR = re.compile(r"([0-9]+)=([+-]?(?:[0-9]*\.?[0-9]+|[0-9]+\.))")


def _trec_gain_pairs(name: str, parameters: str) -> dict[int, float]:
    """trec_eval's gain pairs (``ndcg.1=3,2=-1,4=4.5``): relevance level -> gain, levels >= 0, gains any decimal
    number, negative and 0 included (trec_eval: "Gains are allowed to be 0 or negative, and relevance level 0
    can be given a gain").

    A level given twice with two gains (``G.1=5,1=3``, ``ndcg.1=3,01=5``) is refused: trec_eval keeps both
    pairs, its run's DCG takes the lesser gain (the first of its table sorted by gain) and its ideal DCG the gain
    of the first pair typed, so that it prints neither gain's value."""
    pairs: dict[int, float] = {}
    for pair in parameters.split(","):
        match = _GAIN_PAIR.fullmatch(pair.strip())
        if match is None:
            msg = (
                f"measure '{name}.{parameters}': gain pairs are level=gain, a level >= 0 and a gain (a decimal "
                f"number, negative or 0 allowed), separated by commas (e.g. '{name}.1=3,2=-1'), got {pair!r}."
            )
            raise UsageError(msg)
        level, gain = int(match.group(1)), float(match.group(2))
        if pairs.get(level, gain) != gain:
            msg = (
                f"measure '{name}.{parameters}': level {level} is given two gains, {pairs[level]:g} and {gain:g}: "
                "trec_eval scores the run's documents of that level with the lesser and the ideal list with the "
                "first, which is not reproduced here; give each level one gain."
            )
            raise UsageError(msg)
        pairs[level] = gain
    return pairs


def _greatest_level(qrels: pl.LazyFrame) -> int:
    """The greatest judged level (0 without a positive one): the gain mappings of the gain pairs cover 0..it."""
    greatest = qrels.select(pl.col("relevance").max()).collect().item()
    return max(int(greatest or 0), 0)


def _trec_gain_mapping(name: str, parameters: str, greatest: int, ideal: bool = True) -> dict[float, float]:
    """The gain of every level 0..`greatest` (its own level, trec_eval's default), and the pairs'.

    trec_eval sorts these gains with a comparator that truncates their difference to an integer: two gains
    less than 1 apart compare equal, and the order it then gives them (its C library's sort) sets the ideal
    ordering of ndcg, G, ndcg_rel and Rndcg (`-m ndcg.1=0.5` ranks level 0's gain 0 above 0.5 and scores every
    query 0; `-m ndcg.1=0.4,0=-0.5` ranks -0.5 above 0.4, as typed, and scores every query 0, where
    `-m ndcg.0=-0.5,1=0.4` does not).  Such gains, where one of them is positive, are refused rather than printed
    otherwise than trec_eval; non-positive gains less than 1 apart (-0.5 and 0) are taken: they end the ideal
    list whatever their order, and a positive gain at least 1 from every other compares exactly.  Without
    `ideal` (the pairs are `dcg`'s only, which reads no ideal order) any gains are taken: each level has one."""
    pairs = _trec_gain_pairs(name, parameters)
    mapping = {float(level): float(level) for level in range(greatest + 1)} | {
        float(level): gain for level, gain in pairs.items()
    }
    gains = sorted(set(mapping.values())) if ideal else []
    for low, high in itertools.pairwise(gains):
        if high - low < 1 and high > 0:
            levels = {gain: next(int(level) for level, g in mapping.items() if g == gain) for gain in (low, high)}
            msg = (
                f"measure '{name}.{parameters}': gains {low:g} (level {levels[low]}) and {high:g} (level "
                f"{levels[high]}) are less than 1 apart: trec_eval compares gains by their difference truncated "
                "to an integer, so its ideal ordering of these two depends on its C library's sort and is not "
                "reproduced here; give gains that are equal or at least 1 apart."
            )
            raise UsageError(msg)
    return mapping


TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
TREC_RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
# trec_eval's own order (measures.c), which is the order it prints in
TREC_MEASURES = (
    TrecMeasure("runid", None, None),
    TrecMeasure("num_q", None, None),
    TrecMeasure("num_ret", "num_ret", None, "count"),
    TrecMeasure("num_rel", "num_rel", None, "count"),
    TrecMeasure("num_rel_ret", "num_rel_ret", None, "count"),
    TrecMeasure("map", "ap", None),
    TrecMeasure("gm_map", "gm_map", None, "summary"),
    TrecMeasure("Rprec", "rprec", None),
    TrecMeasure("bpref", "bpref", None),
    TrecMeasure("recip_rank", "rr", None),
    TrecMeasure("iprec_at_recall", "iprec", TREC_RECALL_LEVELS, levels=True),
    TrecMeasure("P", "p", TREC_CUTOFFS),
    TrecMeasure("relstring", None, None, "string"),
    TrecMeasure("recall", "r", TREC_CUTOFFS),
    TrecMeasure("infAP", "infap", None),
    TrecMeasure("gm_bpref", "gm_bpref", None, "summary"),
    TrecMeasure("Rprec_mult", "rprec_mult", None, columns=_rprec_mult_columns),
    TrecMeasure("utility", "utility", None, columns=_utility_columns, collection=True),
    TrecMeasure("11pt_avg", "11pt_avg", None, averaged=_eleven_point_levels),
    TrecMeasure("binG", "bin_g", None),
    TrecMeasure("G", "g", None, gains=True),
    TrecMeasure("dcg", "dcg", None, gains=True),
    TrecMeasure("ideal_dcg", "ideal_dcg", None, gains=True),
    TrecMeasure("ndcg", "ndcg", None, gains=True),
    TrecMeasure("ndcg_rel", "ndcg_rel", None, gains=True),
    TrecMeasure("Rndcg", "rndcg", None, gains=True),
    TrecMeasure("ndcg_cut", "ndcg", TREC_CUTOFFS),
    TrecMeasure("map_cut", "ap", TREC_CUTOFFS),
    TrecMeasure("relative_P", "relative_p", TREC_CUTOFFS),
    TrecMeasure("success", "success", (1, 5, 10)),
    TrecMeasure("set_P", "set_p", None),
    TrecMeasure("set_relative_P", "set_relative_p", None),
    TrecMeasure("set_recall", "set_recall", None),
    TrecMeasure("set_map", "set_map", None),
    TrecMeasure("set_F", "set_f", None, columns=_set_f_columns),
    TrecMeasure("num_nonrel_judged_ret", "num_nonrel_judged_ret", None, "count"),
    TrecMeasure("yaap", "yaap", None),
    TrecMeasure("rbp", "rbp", None, columns=_persistence_columns("rbp", "rbp")),
    TrecMeasure("rbp_resid", "rbp_resid", None, columns=_persistence_columns("rbp_resid", "rbp_resid")),
    TrecMeasure("unj", "unj", (5, 10, 20)),
)
TREC_BY_NAME = {measure.name: measure for measure in TREC_MEASURES}
# trec_eval's nicknames as its measures.c lists them; those of their measures not above are named on stderr
TREC_NICKNAMES = {
    "official": (
        *("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank"),
        *("iprec_at_recall", "P"),
    ),
    "all_trec": (
        *("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank"),
        *("iprec_at_recall", "P", "relstring", "recall", "unj", "rbp", "rbp_resid", "infAP", "gm_bpref", "utility"),
        *("11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success", "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg"),
        *("binG", "G", "set_P", "set_recall", "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret"),
    ),
}


@dataclass(frozen=True)
class TrecRequest:
    """What trec_eval's ``-m`` values ask for: the measures computed here, and those of a nickname that are not."""

    # trec_eval measure -> cut-offs or levels, or the parameter text of a measure with `columns`; in print order
    measures: dict[str, tuple[float, ...] | str | None]
    not_computed: tuple[str, ...]  # members of a requested nickname this package does not compute


_LEADING_INTEGER = re.compile(r"\s*([+-]?[0-9]+)")


TrecRequested = Mapping[str, tuple[float, ...] | str | None]


def _trec_cutoffs(name: str, parameters: str) -> tuple[int, ...]:
    """Cut-offs as trec_eval reads them, with C's atol: the integer each item starts with ("23.4" is 23)."""
    leading = [_LEADING_INTEGER.match(value) for value in parameters.split(",")]
    # `ndcg_cut.0=-1,2=5`: trec_eval reads no gain pairs here, each item's leading integer is a cut-off
    pairs = (
        f" ({name} takes cut-offs, not gain pairs: trec_eval reads each item's leading integer as a cut-off and "
        "takes the judged levels as gains; gain pairs go with G, dcg, ideal_dcg, ndcg, ndcg_rel and Rndcg, e.g. "
        f"'ndcg.{parameters}')"
        if "=" in parameters
        else ""
    )
    if not all(leading):
        msg = f"measure '{name}.{parameters}': cut-offs must be integers (ASCII digits) separated by commas{pairs}."
        raise UsageError(msg)
    cutoffs = sorted(int(match.group(1)) for match in leading if match)
    if cutoffs[0] <= 0:
        msg = f"measure '{name}.{parameters}': cut-offs must be positive{pairs}."
        raise UsageError(msg)
    if len(set(cutoffs)) != len(cutoffs):
        msg = f"measure '{name}.{parameters}': duplicate cut-offs."
        raise UsageError(msg)
    return tuple(cutoffs)


_DECIMAL = re.compile(r"[0-9]*\.?[0-9]+|[0-9]+\.")


def _trec_levels(name: str, parameters: str) -> tuple[float, ...]:
    """Recall levels as trec_eval takes them (``iprec_at_recall..10,.20``: the text after the first dot),
    sorted ascending as trec_eval prints them."""
    values = [value.strip() for value in parameters.split(",")]
    if not all(_DECIMAL.fullmatch(value) for value in values):
        msg = f"measure '{name}.{parameters}': recall levels must be decimal numbers separated by commas."
        raise UsageError(msg)
    levels = sorted(float(value) for value in values)
    if levels[-1] > 1.0:
        msg = f"measure '{name}.{parameters}': recall levels must lie from 0 to 1."
        raise UsageError(msg)
    if len(set(levels)) != len(levels):
        msg = f"measure '{name}.{parameters}': duplicate recall levels."
        raise UsageError(msg)
    return tuple(levels)


def parse_trec_measures(texts: Sequence[str]) -> TrecRequest:
    """trec_eval's ``-m`` values -> {trec_eval measure name: cut-offs}, in trec_eval's print order.

    As trec_eval does: ``name.5,10`` sets the cut-offs (sorted; the first ``-m name.parameters`` of a measure
    wins, also over a nickname or a plain ``-m name`` that requests it),
    nicknames expand to their measures, no ``-m`` means ``official``.  A nickname's measures this package
    does not compute are listed in `TrecRequest.not_computed` (trec_eval's order), for a note on stderr.

    Examples
    --------
    >>> parse_trec_measures(["ndcg_cut.10,5", "recip_rank"]).measures
    {'recip_rank': None, 'ndcg_cut': (5, 10)}
    >>> parse_trec_measures(["iprec_at_recall..75,.5"]).measures
    {'iprec_at_recall': (0.5, 0.75)}
    >>> parse_trec_measures(["official"]).not_computed
    ()
    >>> parse_trec_measures(["all_trec"]).measures["Rprec_mult"] is None  # its default multipliers
    True
    """
    requested: dict[str, tuple[float, ...] | str | None] = {}
    explicit: dict[str, tuple[float, ...] | str | None] = {}  # the first `name.parameters` of each measure
    not_computed: dict[str, None] = {}
    for text in texts or ["official"]:
        name, dot, parameters = text.partition(".")
        if name in TREC_NICKNAMES and not dot:
            for member in TREC_NICKNAMES[name]:
                if member in TREC_BY_NAME:
                    requested.setdefault(member, TREC_BY_NAME[member].cutoffs)
                else:
                    not_computed.setdefault(member)
            continue
        measure = TREC_BY_NAME.get(name)
        if measure is None:
            supported = ", ".join([*TREC_BY_NAME, *TREC_NICKNAMES])
            msg = f"trec_eval measure {text!r} is not supported; supported: {supported}."
            if name in preferences.PRINT_ORDER or name in preferences.NICKNAMES:
                msg = f"trec_eval measure {text!r} needs -R prefs or -R qrels_prefs (preference judgments)."
            raise UsageError(msg)
        if measure.columns is not None or measure.printed == "string" or measure.averaged is not None or measure.gains:
            # refuses bad parameters here
            if measure.columns is not None or measure.printed == "string":
                (measure.columns or _relstring_length)(parameters if dot else None)
            elif dot and measure.averaged is not None:
                measure.averaged(parameters)
            elif dot:
                _trec_gain_pairs(name, parameters)
            value: tuple[float, ...] | str | None = parameters if dot else None
        elif dot and measure.cutoffs is None:
            msg = f"trec_eval measure {name!r} takes no parameters, got {text!r}."
            raise UsageError(msg)
        else:
            parse = _trec_levels if measure.levels else _trec_cutoffs
            value = parse(name, parameters) if dot else measure.cutoffs
        requested.setdefault(name, value)
        if dot:
            explicit.setdefault(name, value)
    # as trec_eval: a measure takes the parameters of the first `-m name.parameters`, wherever it is requested
    requested.update(explicit)
    in_print_order = {m.name: requested[m.name] for m in TREC_MEASURES if m.name in requested}
    return TrecRequest(in_print_order, tuple(not_computed))


def _trec_columns(name: str, cutoffs: tuple[float, ...] | str | None, collection: int = 0) -> list[tuple[str, str]]:
    """(trec_eval's printed name, the package's column) for each value of a measure; `collection`: -N."""
    measure = TREC_BY_NAME[name]
    family = str(measure.family)
    if measure.columns is not None:
        assert not isinstance(cutoffs, tuple)
        pairs = measure.columns(cutoffs)
        if measure.collection:
            pairs = [(printed, evaluated.format(collection=collection)) for printed, evaluated in pairs]
        return [(printed, parse_measure(evaluated).column) for printed, evaluated in pairs]
    if measure.averaged is not None and isinstance(cutoffs, str):
        return [(f"{name}_{cutoffs}", f"{name}_{cutoffs}")]
    if measure.gains and isinstance(cutoffs, str):
        return [(f"{name}_{cutoffs}", family)]
    assert not isinstance(cutoffs, str)
    if cutoffs is None:
        return [(name, family)]
    if measure.levels:
        return [(f"{name}_{level:3.2f}", level_column(family, level)) for level in cutoffs]
    return [(f"{name}_{k:.0f}", f"{family}@{k:.0f}") for k in cutoffs]


RELSTRING_LENGTH = 10


def _relstring_length(parameters: str | None) -> tuple[str, int]:
    """relstring's printed name and length N (the first N retrieved documents): `relstring` and 10, or with
    `-m relstring.N` `relstring_N` (trec_eval prints the parameter text as given, and reads its first value,
    truncated: `relstring.2.7` is relstring_2.7 of 2 documents)."""
    if parameters is None:
        return "relstring", RELSTRING_LENGTH
    values = [value.strip() for value in parameters.split(",")]
    if not all(_DECIMAL.fullmatch(value) for value in values):
        msg = f"measure 'relstring.{parameters}': the length must be a non-negative number, e.g. relstring.20."
        raise UsageError(msg)
    return f"relstring_{parameters}", int(float(values[0]))


def relstring_plan(
    run: pl.LazyFrame, qrels: pl.LazyFrame, length: int, max_retrieved: int | None = None, judged_only: bool = False
) -> pl.LazyFrame:
    """The first `length` documents of each run query in trec_eval's order (score descending, then doc id
    descending as text), their `position` and judged `relevance` (null: not in the judgments); as trec_eval's
    -M and -J form the list: the first `max_retrieved` documents, then (`judged_only`) those judged at a level
    >= 0."""
    order = pl.struct(pl.col("score"), pl.col("doc").cast(pl.String)).rank("ordinal", descending=True)
    ranked = run.select("query", "doc", order.over("query").alias("position"))
    if max_retrieved is not None:
        ranked = ranked.filter(pl.col("position") <= max_retrieved)
    judged = qrels.select("query", "doc", "relevance")
    rows = ranked.join(judged, on=["query", "doc"], how="left")
    if judged_only:
        rows = rows.filter(pl.col("relevance") >= 0)
        rows = rows.with_columns(pl.col("position").rank("ordinal").over("query").alias("position"))
    return rows.filter(pl.col("position") <= length).select("query", "position", "relevance")


def _relevance_character(relevance: int | None) -> str:
    """trec_eval's relstring character: the level 0-9, '>' above 9, '-' not in the judgments (not pooled), '.'
    judged at a negative level (pooled, not assessed)."""
    if relevance is None:
        return "-"
    if relevance < 0:
        return "."
    return ">" if relevance > 9 else str(relevance)


def relstrings(top: pl.DataFrame) -> dict[str, str]:
    """Each query's relstring from `relstring_plan`'s rows (a query of the judgments missing from the run has
    none: `missing_relstring`)."""
    characters: dict[str, list[tuple[int, str]]] = {}
    for query, position, relevance in top.iter_rows():
        characters.setdefault(query, []).append((position, _relevance_character(relevance)))
    return {query: "".join(c for _, c in sorted(pairs)) for query, pairs in characters.items()}


def missing_relstring(printed: str, length: int, judged_only: bool) -> str:
    """The relstring of a query with no row in `relstring_plan`: a judged query missing from the run (-c), for
    which trec_eval ranks one made-up document, not judged ('-'), then clears the string of the measure named
    `relstring`, but not of `relstring_N`; or, under -J, a query whose retrieved documents -J removed, the
    made-up document too (unjudged): an empty string."""
    return "" if printed == "relstring" or judged_only else "-"[:length]


def _trec_value(measure: TrecMeasure, value: float) -> str:
    return f"{value:.0f}" if measure.printed == "count" else _trec_float(value)


def _trec_float(value: float) -> str:
    """C's %6.4f; the one NaN trec_eval prints (0.0 / 0.0) has its sign bit set: "-nan"."""
    return f"{'-nan':>6}" if math.isnan(value) else f"{value:6.4f}"


def _undefined_values(
    per_query: pl.DataFrame, requested: TrecRequested, judged_only: bool, positive: pl.DataFrame
) -> pl.DataFrame:
    """The values trec_eval computes as 0 / 0 and prints as -nan (a NaN, which the mean then takes):

    - under -J, a query left with no judged document (with -c, a judged query missing from the run too: its
      stand-in document is unjudged): iprec_at_recall at a level whose rank lround(level * R) is 0 (every
      level when R = 0), and 11pt_avg, which averages such levels;
    - Rndcg of a query with relevant documents (R > 0, as -l counts them) none of whose judged documents has a
      positive gain (`positive`: the queries with one, under Rndcg's gain pairs if it has some), its ideal DCG
      never above 0.
    """
    undefined: dict[str, pl.Expr] = {}
    if judged_only:
        emptied = pl.col("num_ret") == 0

        def rank_zero(level: float) -> pl.Expr:
            return (level * pl.col("num_rel") + 0.5).floor() == 0  # lround of a non-negative number

        if "iprec_at_recall" in requested:
            levels = requested["iprec_at_recall"] or ()
            assert isinstance(levels, tuple)
            for level, (_, column) in zip(levels, _trec_columns("iprec_at_recall", levels), strict=True):
                undefined[column] = emptied & rank_zero(level)
        if "11pt_avg" in requested:
            text = requested["11pt_avg"]
            assert not isinstance(text, tuple)
            averaged = [0.0] if text is None else [float(name[6:]) for name in _eleven_point_levels(text)]
            for _, column in _trec_columns("11pt_avg", text):
                undefined[column] = emptied & pl.any_horizontal([rank_zero(level) for level in averaged])
    if "Rndcg" in requested:
        text = requested["Rndcg"]
        assert not isinstance(text, tuple)
        no_gain = ~pl.col("query").is_in(positive["query"].implode())
        for _, column in _trec_columns("Rndcg", text):
            undefined[column] = (pl.col("num_rel") > 0) & no_gain
    return per_query.with_columns(
        pl.when(condition).then(float("nan")).otherwise(pl.col(column)).alias(column)
        for column, condition in undefined.items()
    )


def _trec_line(name: str, query: str, value: str) -> str:
    return f"{name:<22}\t{query}\t{value}\n"  # trec_eval's "%-22s\t%s\t..."


def _trec_summary(values: Sequence[float], printed: Literal["float", "count", "summary", "string"]) -> float:
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


def _keep_stand_in_utility(rows: list[dict[str, Any]], parameters: str, collection: int, judged_only: bool) -> None:
    """trec_eval -c scores a judged query missing from the run on a stand-in list of one unjudged document,
    then zeroes the leftovers of the values named "utility", "num_ret", "unj..." only: utility.a,b,c,d (printed
    utility_a,b,c,d) keeps the stand-in's value, a x 0 + b x n + c x R + d x (N - n - R), as here (its terms in
    trec_eval's order), n = 1; under -J, which removes the stand-in document as well, n = 0.  Such a query is
    one with num_ret 0: without -J a query of the run keeps a document; under -J a query of the run left with
    none has that value already."""
    a, b, c, d = (float(value) for value in parameters.split(","))
    ((_, column),) = _trec_columns("utility", parameters, collection)
    retrieved = 0 if judged_only else 1
    for row in rows:
        if row["num_ret"] == 0:
            relevant = row["num_rel"]
            row[column] = a * 0 + b * retrieved + c * relevant + d * (collection + 0 - retrieved - relevant)


MISSING_ZSCORE = -1000000.0  # trec_eval's value for a (query, measure) its -Z file has no mean for


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


def _zscore(value: float, reference: tuple[float, float] | None) -> float:
    """trec_eval's convert_zscores.c: (value - mean) / stddev; with stddev 0, 0 when the value is the mean."""
    if reference is None:
        return MISSING_ZSCORE
    mean, stddev = reference
    if stddev:
        return (value - mean) / stddev
    return 0.0 if value == mean else MISSING_ZSCORE


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


def _scan_trec_run_argument(path: str, scratch: str) -> pl.LazyFrame:
    """The run file, or for "-" standard input (copied to `scratch`: the run is read lazily), cached: the
    evaluation and the run id (the last line's tag) are collected together and parse it once (a second parse
    of 10M lines took 5 s; trec_eval holds the whole run in memory too)."""
    if path != "-":
        return _scan(path, "trec", "run", [], lenient=True).cache()
    copy = Path(scratch) / "standard-input.run"
    with open(copy, "wb") as handle:
        while chunk := sys.stdin.buffer.read(1 << 20):
            handle.write(chunk)
    return scan_trec_run(copy, source_name="standard input", lenient=True).cache()


def command_trec_eval(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="lodestar-trec-eval-") as scratch:
        return _trec_eval(args, scratch)


def _trec_eval(args: argparse.Namespace, scratch: str) -> int:
    if args.rel_format == "qrels_jg":
        from . import _trec_eval_jg  # it imports this module's trec_eval helpers: not imported at the top

        return _trec_eval_jg.trec_eval(args, scratch)
    if args.rel_format in ("prefs", "qrels_prefs"):
        return _trec_eval_prefs(args, scratch)
    if args.rel_format != "qrels":
        msg = f"-R {args.rel_format!r} is not supported; supported: qrels (the default), prefs, qrels_prefs, qrels_jg."
        raise UsageError(msg)
    grouped = [text for text in args.measure or [] if text.partition(".")[0] in [*TREC_EVAL_JG_MEASURES, "qrels_jg"]]
    if grouped:
        msg = f"trec_eval measure {grouped[0]!r} averages over judgment groups: it needs -R qrels_jg."
        raise UsageError(msg)
    request = parse_trec_measures(args.measure or [])
    requested = request.measures
    zscores = read_zscores(args.zscores) if args.zscores is not None else None
    qrels = _scan(args.qrels, "trec", "qrels", [], lenient=True)
    run = _scan_trec_run_argument(args.run, scratch)
    columns = [
        (TREC_BY_NAME[name], *pair)
        for name, cutoffs in requested.items()
        if TREC_BY_NAME[name].family
        for pair in _trec_columns(name, cutoffs, args.collection)
    ]
    averages = {
        column: [parse_measure(evaluated).column for evaluated in averaged(text)]
        for name, text in requested.items()
        if (averaged := TREC_BY_NAME[name].averaged) is not None and isinstance(text, str)
        for _, column in _trec_columns(name, text)
    }
    evaluated = [averaged_column for column in averages.values() for averaged_column in column]
    if averages:  # read by trec_eval's walk over the levels (`_eleven_point_walk`)
        evaluated.append(parse_measure(ELEVEN_POINT_FIRST_LEVEL).column)
    # -J removes -c's stand-in document (unjudged) with the other unjudged ones: no rbp_resid_p= value of it then
    bogus = _bogus_ranking_values(requested) if args.complete and not args.judged_only else {}
    utility_parameters = requested.get("utility")
    stand_in = args.complete and isinstance(utility_parameters, str)
    undefined = (args.judged_only and ("iprec_at_recall" in requested or "11pt_avg" in requested)) or (
        "Rndcg" in requested
    )
    # read by the -c stand-in values (`bogus`, `_keep_stand_in_utility`) and `_iprec_of_emptied_queries`
    counted = ["num_ret", "num_rel"] if bogus or stand_in or undefined else []
    counted += ["num_rel", "num_rel_ret"] if averages else []
    # utility with d != 0 and no collection size: evaluated with d = 0, trec_eval's last term added here
    utility_rest = _utility_without_collection(
        utility_parameters if isinstance(utility_parameters, str) else None, args.collection
    )
    if utility_rest is not None:
        counted += ["num_ret", "num_rel", "num_rel_ret"]
    # measures with gain pairs: one evaluation per gain mapping, joined on the query
    gained: dict[str, list[str]] = {}
    gained_by: dict[str, str] = {}  # gain pairs -> the first measure named with them, for messages
    ideal_read: set[str] = set()  # gain pairs a measure reading the ideal order takes (all of them but dcg)
    for name, text in requested.items():
        if TREC_BY_NAME[name].gains and isinstance(text, str):
            gained.setdefault(text, []).extend(column for _, column in _trec_columns(name, text))
            gained_by.setdefault(text, name)
            if name != "dcg":  # an error about the ideal order names a measure reading it
                gained_by[text] = gained_by[text] if text in ideal_read else name
                ideal_read.add(text)
    apart = {column for columns_of_text in gained.values() for column in columns_of_text}
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
    greatest = _greatest_level(qrels) if gained else 0
    mappings = {text: _trec_gain_mapping(gained_by[text], text, greatest, text in ideal_read) for text in gained}
    evaluations: list[tuple[str | dict[float, float], list[str]]] = [
        (mappings[text], gained_measures) for text, gained_measures in gained.items()
    ]
    if evaluations and not any(parse_measure(measure).kind in GAIN_KINDS for measure in measures):
        # the measures that do not read the gain join the first gain mapping's evaluation: one evaluation fewer
        evaluations[0] = (evaluations[0][0], [*measures, *evaluations[0][1]])
    else:
        evaluations.insert(0, ("linear", measures or ["rr"]))
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
    plans = [_build_per_query(run, evaluated, {**options, "gain": gain}) for gain, evaluated in evaluations]
    per_query_plan = functools.reduce(
        lambda left, right: left.join(right, on="query", how="left", nulls_equal=True), plans
    )
    # 11pt_avg over its parameters: trec_eval's walk over the levels' columns
    per_query_plan = per_query_plan.with_columns(
        _eleven_point_walk([float(source.removeprefix("iprec@")) for source in sources], sources).alias(column)
        for column, sources in averages.items()
    )
    if utility_rest is not None:
        per_query_plan = per_query_plan.with_columns(_with_utility_rest(*utility_rest))
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
        relstring = _relstring_length(parameters)
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
        per_query = _undefined_values(per_query, requested, args.judged_only, gainful_queries)
    rows = sorted(per_query.iter_rows(named=True), key=lambda row: str(row["query"]))
    if stand_in:
        assert isinstance(utility_parameters, str)
        _keep_stand_in_utility(rows, utility_parameters, args.collection, args.judged_only)
    runid = str(runid_frame.item())
    if zscores is not None:
        out = _trec_zscore_lines(args, requested, columns, rows, (strings, relstring), zscores, runid, summaries)
    else:
        out = _trec_lines(args, requested, columns, rows, (strings, relstring), runid, summaries)
    if request.not_computed:
        nicknames = " and ".join(name for name in TREC_NICKNAMES if name in (args.measure or []))
        sets = nicknames or "official (the default)"
        sys.stderr.write(
            f"{PROG}: note: of trec_eval's {sets} measures, these are not computed here and not printed: "
            f"{', '.join(request.not_computed)}.\n"
        )
    sys.stdout.write("".join(out))
    return EXIT_OK


def _trec_eval_prefs(args: argparse.Namespace, scratch: str) -> int:
    """-R prefs and -R qrels_prefs: trec_eval's preference measures (module `preferences`).  -J, -l and -N
    change nothing there, as in trec_eval; -Z is refused."""
    if args.zscores is not None:
        msg = f"-Z is not supported with -R {args.rel_format}."
        raise UsageError(msg)
    try:
        names = preferences.parse_trec_measures(args.measure or [])
    except ValueError as error:
        raise UsageError(str(error)) from None
    judgments = preferences.scan_trec_prefs(args.qrels, qrels=args.rel_format == "qrels_prefs", lenient=True)
    run = _scan_trec_run_argument(args.run, scratch)
    measures = [name for name in names if name in preferences.ALL_PREFS]
    plan = preferences.evaluate(run, judgments, measures, max_retrieved=args.max_retrieved, complete=args.complete)
    per_query, runid = pl.collect_all([plan, run.select(pl.col("tag").last())], engine="streaming")
    if per_query.is_empty():
        msg = "no query has both results and preferences: nothing to evaluate (trec_eval stops too)."
        raise DataError(msg)
    out = preferences.trec_lines(
        per_query, names, str(runid.item()), per_query_lines=args.query_lines, summary=not args.no_summary
    )
    sys.stdout.write("".join(out))
    return EXIT_OK


TrecColumns = list[tuple[TrecMeasure, str, str]]  # (measure, trec_eval's printed name, the package's column)
Relstrings = tuple[dict[str, str], tuple[str, int] | None]  # each query's string; (printed name, length)


def _trec_lines(
    args: argparse.Namespace,
    requested: TrecRequested,
    columns: TrecColumns,
    rows: list[dict[str, Any]],
    relstring: Relstrings,
    runid: str,
    summaries: Mapping[str, float],
) -> list[str]:
    """trec_eval's lines: per query (-q) in query order, each measure in print order; then the `all` lines, each
    summary as `_trec_summary` forms it (or as `summaries` gives it)."""
    strings, shown = relstring
    out: list[str] = []
    if args.query_lines:
        for row in rows:
            for name in requested:
                if name == "relstring" and shown is not None:
                    text = strings.get(row["query"], missing_relstring(*shown, args.judged_only))
                    out.append(_trec_line(shown[0], row["query"], f"'{text}'"))
                out += [
                    _trec_line(printed, row["query"], _trec_value(measure, row[column]))
                    for measure, printed, column in columns
                    if measure.name == name and measure.printed != "summary"
                ]
    if not args.no_summary:
        for name in requested:
            if name == "runid":
                out.append(_trec_line("runid", "all", runid))
            elif name == "num_q":
                out.append(_trec_line("num_q", "all", str(len(rows))))
            elif name != "relstring":  # per query only
                measure = TREC_BY_NAME[name]
                for printed, column in _trec_columns(name, requested[name], args.collection):
                    if printed in summaries:
                        summary = summaries[printed]
                    else:
                        summary = _trec_summary([row[column] for row in rows], measure.printed)
                    out.append(_trec_line(printed, "all", _trec_value(measure, summary)))
    return out


def _trec_zscore_lines(
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
    stddev (`_zscore`; a query or measure the file lacks gives -1000000), a geometric mean's (gm_map, gm_bpref)
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
                out.append(_trec_line(shown[0], row["query"], f"'{text}'"))
            for measure, printed, column in columns:
                if measure.name != name:
                    continue
                value = float(row[column])
                if measure.printed == "summary":
                    value = math.log(max(value, GEOMETRIC_FLOOR))
                z = _zscore(value, None if reference is None else reference.get(printed))
                totals[printed] += z
                if args.query_lines and measure.printed != "summary":
                    out.append(_trec_line(f"Z{printed:<22}", row["query"], _trec_float(z)))
    if args.no_summary:
        return out
    queries = len(rows)
    for name in requested:
        if name == "runid":
            out.append(_trec_line("runid", "all", runid))
        elif name == "num_q":
            out.append(_trec_line(f"Z{'num_q':<22}", "all", f"{queries:6.4f}"))
        elif name != "relstring":
            measure = TREC_BY_NAME[name]
            for printed, _ in _trec_columns(name, requested[name], args.collection):
                total = totals[printed]
                if printed in summaries:  # a summary trec_eval takes from the judgments, not the z-scores
                    summary = summaries[printed]
                elif measure.printed == "count":
                    summary = total
                elif measure.printed == "summary":
                    summary = math.exp(total / queries) if queries else total
                else:
                    summary = total / queries if queries else total
                out.append(_trec_line(f"Z{printed:<22}", "all", _trec_float(summary)))
    return out


# --------------------------------------------------------------------------------------------------------
# the parser


def _evaluate_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "evaluate",
        parents=[common],
        help="evaluate a file of rankings: per-query metrics, means, outputs",
        description=(
            "Compute ranking metrics per query (and per --by group) from a Parquet file, glob or hive folder, "
            "a CSV file or a TREC run; write the per-query frame and the summary; print the mean table. "
            "Exit codes: 0 success, 1 data error, 2 usage error."
        ),
    )
    parser.set_defaults(handler=command_evaluate)
    parser.add_argument("run", metavar="RUN", help="Parquet file, glob or folder; CSV file; or TREC run file")
    parser.add_argument(
        "--format",
        choices=("parquet", "csv", "trec"),
        help="format of RUN (default: by extension: .parquet/.pq or a folder, .csv; anything else is TREC)",
    )
    parser.add_argument(
        "--qrels",
        metavar="FILE",
        help="judgments: TREC qrels (its columns are mapped onto the run's --query, --doc, --relevance), or "
        "Parquet/CSV with the columns those options name",
    )
    parser.add_argument(
        "--qrels-format", choices=("parquet", "csv", "trec"), help="format of --qrels (default: by extension)"
    )
    columns = parser.add_argument_group("columns")
    columns.add_argument(
        "--query",
        type=_columns,
        action="extend",
        metavar="COLUMN[,COLUMN...]",
        help="query id column(s), repeated or comma-separated (default: query)",
    )
    columns.add_argument(
        "--doc", metavar="COLUMN", help="document id column (default: doc for a TREC run or with --qrels)"
    )
    columns.add_argument("--relevance", metavar="COLUMN", help="graded relevance column (default: relevance)")
    columns.add_argument("--score", metavar="COLUMN", help="model score column (default: score)")
    columns.add_argument("--weight", metavar="COLUMN", help="per-query weight column for the means")
    columns.add_argument(
        "--by",
        type=_columns,
        action="extend",
        metavar="COLUMN[,COLUMN...]",
        help="group column(s), repeated or comma-separated: metrics per group, e.g. model",
    )
    metrics = parser.add_argument_group("measures and their options")
    metrics.add_argument(
        "-m",
        "--measure",
        action="append",
        metavar="NAMES",
        help="measures, repeated or comma-separated, case-insensitive, the names evaluate() takes, each "
        f"optionally @k: {measure_names_text()}; output columns take the first name "
        "(e.g. -m ndcg@5,ndcg@10,mrr,precision@5,recall@100,map,hit_rate@1; default: ndcg)",
    )
    metrics.add_argument(
        "--k", type=_cutoffs, action="extend", metavar="K[,K...]", help="cut-offs for measures named without @k"
    )
    metrics.add_argument(
        "--ties",
        choices=("average", "reverse", "input", "doc", "optimistic", "pessimistic"),
        help="tied scores (default: average, as scikit-learn; doc: as trec_eval)",
    )
    metrics.add_argument("--gain", type=_gain, help="linear (default), exponential, label:gain,... or gain0,gain1,...")
    metrics.add_argument(
        "--no-relevant",
        type=_no_relevant,
        default=_UNSET,
        metavar="VALUE",
        help="NDCG, recall, AP of a query without relevant documents: a number (default 0), none (left out) or error",
    )
    metrics.add_argument(
        "--missing-queries", choices=("skip", "zero"), help="judged queries absent from the run (with --qrels)"
    )
    metrics.add_argument("--log-base", type=float, help="logarithm base of the DCG discount (default 2)")
    metrics.add_argument(
        "--threshold", type=float, help="relevant means relevance above this (rr, p, r, ap, success; default 0)"
    )
    outputs = parser.add_argument_group("outputs")
    outputs.add_argument("--per-query", metavar="PATH", help="write the per-query frame: .parquet or .csv")
    outputs.add_argument("--summary", metavar="PATH", help="write the mean table: .json, .csv or .md")
    outputs.add_argument(
        "--partitions", type=int, metavar="N", help="bounded memory: evaluate N partitions one at a time"
    )
    outputs.add_argument("--quiet", action="store_true", help="do not print the mean table")


def _trec_eval_parser(commands: Any, common: argparse.ArgumentParser) -> None:
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
    _evaluate_parser(commands, common)
    _trec_eval_parser(commands, common)
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
