"""``lodestar-polars evaluate``: an evaluation job for schedulers.

``lodestar-polars evaluate RUN [options]`` reads a Parquet file, glob or (hive-partitioned) folder, a CSV file
or a TREC run, computes the requested measures per query (and per ``--by`` group), writes the per-query frame
and the summary, and prints the mean table.  Output files are written to a temporary file in their folder and
renamed once everything succeeded, so a failed run leaves no partial or empty output behind.

>>> parse_measures(["nDCG@10,rr", "dcg"], cutoffs=[5])
['ndcg@10', 'rr@5', 'dcg@5']
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import importlib.util
import json
import math
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

import polars as pl

from . import partitions
from ._command_errors import EXIT_OK, DataError, UsageError
from ._mean import mean as mean_of
from ._measure_names import closest_names
from ._progress import Progress
from ._spec import (
    CANONICAL_MEASURES,
    MEASURE_NAMES,
    MEASURE_PATTERN,
    Measure,
    MissingColumnError,
    diversity_kind,
    parse_diversity_measure,
    parse_measure,
)
from .io import scan_trec_qrels, scan_trec_run
from .measures._registry import REGISTRY
from .measures.diversity import DIVERSITY
from .namespace import rank_metrics

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
                cutoff_kind = measure.kind in REGISTRY and REGISTRY[measure.kind].parameter == "cutoff"
                takes_cutoffs = cutoff_kind and measure.cutoff is None
                expanded = [f"{measure.column}@{k}" for k in cutoffs] if takes_cutoffs and cutoffs else [measure.column]
            names += [name for name in expanded if name not in names]
    return names


def _requires_a_cutoff(spelled: str) -> bool:
    """Whether `spelled` names, without `@k`, a measure computed only at a cut-off (`sdcg(max_rel=4)`)."""
    match = MEASURE_PATTERN.fullmatch(spelled)
    if match is None or match.group(3) is not None:
        return False
    kind, diverse = MEASURE_NAMES.get(match.group(1).lower()), diversity_kind(spelled)
    measure = REGISTRY[kind] if kind is not None else DIVERSITY[diverse] if diverse is not None else None
    return measure is not None and measure.parameter == "required_cutoff"


def _parsed_measure(spelled: str) -> Measure:
    """`parse_measure`, its errors as usage errors (an unknown name: the closest names `-m` takes, or all)."""
    try:
        return parse_diversity_measure(spelled) if diversity_kind(spelled) is not None else parse_measure(spelled)
    except ValueError as error:
        known = (
            "known measures (case-insensitive, each optionally @k with k in ASCII digits, iprec@level with a "
            "recall level)"
        )
        closest = closest_names(spelled)
        msg = (
            str(error)
            if not str(error).startswith("unknown measure")
            else f"unknown measure {spelled!r}; {known}: did you mean {' or '.join(repr(c) for c in closest)}?"
            if closest
            else f"unknown measure {spelled!r}; {known}: {measure_names_text()}."
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
    qrels: pl.LazyFrame, query: Sequence[str], doc: str, relevance: str, source: str, intent: str | None = None
) -> pl.LazyFrame:
    """TREC judgments' fixed columns (query, doc, relevance) under the names the run's column options give; with
    `intent` (--intent), the second column too, read as the intent (TREC's diversity qrels: `topic subtopic docno
    judgment`), under that name."""
    if len(query) != 1:
        names = ", ".join(query)
        msg = f"--qrels {source} is a TREC file, with one query id column; --query names {len(query)}: {names}."
        raise UsageError(msg)
    roles = {"--query": query[0], "--doc": doc, "--relevance": relevance}
    if intent is not None:
        roles["--intent"] = intent
    for option, name in roles.items():
        others = [other for other, other_name in roles.items() if other_name == name and other != option]
        if others:
            msg = f"{option} and {others[0]} both name column {name!r}: TREC judgments' columns need three names."
            raise UsageError(msg)
    columns = [pl.col("query").alias(query[0]), pl.col("doc").alias(doc), pl.col("relevance").alias(relevance)]
    if intent is not None:
        columns.append(pl.col("iteration").alias(intent))
    return qrels.select(columns)


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
    if args.intent is not None:
        options["intent"] = args.intent
    return options


_UNSET = object()


def _build(run: pl.LazyFrame, measures: Sequence[str], options: Mapping[str, Any]) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Build the plans; an option the package refuses (checked before any data is read) is a usage error."""
    return _usage_errors(lambda: _evaluate(run, measures, options), options)


_Built = TypeVar("_Built")


def _usage_errors(build: Callable[[], _Built], options: Mapping[str, Any]) -> _Built:
    try:
        return build()
    except MissingColumnError as error:  # the option naming the column, not the Python argument
        msg = f"{error.missing} Name the {error.role} column with --{error.role}."
        raise DataError(msg) from error
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


def _evaluating(path: str, run_format: str, count: bool) -> str:
    """The progress line of the evaluation: with the run's rows when Parquet's metadata gives them (no read)."""
    if count and run_format == "parquet":
        rows = pl.scan_parquet(path).select(pl.len()).collect().item()
        return f"evaluating {rows:,} rows of {path}"
    return f"evaluating {path}"


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
    if args.intent is not None and (args.qrels is None or args.partitions is not None):
        msg = "--intent names the intent column of per-intent judgments: give --qrels too (and no --partitions)."
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
            relevance = args.relevance or "relevance"
            qrels = _trec_judgments_as_run_columns(qrels, query, doc, relevance, args.qrels, args.intent)
        run, qrels = _judgments_in_run_dtypes(run, qrels, query, doc, args.missing_queries, args.qrels)
    options = _evaluate_options(args, run_format, qrels)
    outputs = [output for output in (per_query_output, summary_output) if output is not None]
    progress = Progress.on_terminal(args.quiet or args.partitions is not None)  # --partitions has its own bar
    with _atomic_outputs([path for path, _ in outputs]) as temporaries:
        temporary = dict(zip([path for path, _ in outputs], temporaries, strict=True))
        if args.partitions is not None:
            per_query_temporary = temporary[per_query_output[0]] if per_query_output else None
            kind = per_query_output[1] if per_query_output else None
            mean = _evaluate_partitioned(run, measures, options, args, per_query_temporary, kind)
        else:
            per_query_plan, mean_plan = _build(run, measures, options)
            with progress.step(_evaluating(args.run, run_format, progress.enabled)):
                if per_query_output is not None and qrels is None:  # the mean from the per-query frame: one read
                    per_query = per_query_plan.collect(engine="streaming")
                    averaged = mean_of(per_query, by=options.get("by"), weight=options.get("weight"), metrics=measures)
                    assert isinstance(averaged, pl.DataFrame)
                    mean = averaged
                elif per_query_output is not None:  # queries_without_judgments needs the judgments: two reads
                    per_query, mean = pl.collect_all([per_query_plan, mean_plan], engine="streaming")
                else:
                    mean = mean_plan.collect(engine="streaming")
            if per_query_output is not None:
                with progress.step(f"writing {args.per_query}"):
                    _write_per_query(per_query, temporary[per_query_output[0]], per_query_output[1])
        if summary_output is not None:
            _write_summary(mean, temporary[summary_output[0]], summary_output[1])
    if not args.quiet:
        sys.stdout.write(markdown_table(mean))
    return EXIT_OK


# --------------------------------------------------------------------------------------------------------
# the parser


def add_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the ``evaluate`` subcommand to `commands` (an argparse subparsers object)."""
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
    parser.add_argument(
        "--intent",
        nargs="?",
        const="intent",
        metavar="COLUMN",
        help="--qrels holds judgments per intent, for the diversity measures (-m alpha_ndcg@20,err_ia@20,...): "
        "a TREC file's second column is the intent (TREC's diversity qrels: topic subtopic docno judgment), a "
        "Parquet/CSV file's is the column named (default: intent)",
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
    outputs.add_argument("--quiet", action="store_true", help="do not print the mean table, nor progress on a terminal")
