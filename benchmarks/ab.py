"""A before/after guard: the core calls of two revisions, timed alternately, each timing in a fresh process.

    python benchmarks/ab.py 42f349d                  # 0.1.0 against the working tree, full default run
    python benchmarks/ab.py 42f349d 6ffdb13          # two commits
    python benchmarks/ab.py HEAD --shapes 100000x10 --repeats 3          # a quick check of uncommitted work
    python benchmarks/ab.py main HEAD --cases ndcg@10 exprs --fail-above 1.10

Revisions
- BASE and HEAD are git revisions of the repository holding this script (a commit, a tag, a branch).  HEAD
  omitted, or given as ".", is the working tree: the current `lodestar_polars/` as it is on disk, uncommitted
  changes included (the header says when there are some).
- Each revision's `lodestar_polars` package is extracted into a temporary folder (`git archive <rev>
  lodestar_polars | tar -x`; the working tree's is copied).  A child process puts that folder first on
  `sys.path` and checks that the package it imported is the extracted one, so the two versions never share a
  process and neither is the installed package.

Data (numpy seed 0, generated once per shape, rows order and ties, written to Parquet in a temporary folder)
- Q queries x D documents (`--shapes QxD`, k/M suffixes allowed): `query` int64, `doc` int64 (the position
  within the query), `relevance` int8 uniform in 0..4, `score` float64; `system` String
  ("system_{query % 10}") and `topic` int64 (query // 10) for the `by=` case.
- ties "none": scores uniform in [0, 1) (almost no ties); "heavy": scores drawn from the integers 0..4 (every
  query has tied rows; with 100 documents nearly every row is tied).
- rows "grouped": each query's rows contiguous, queries ascending, documents by id (not by score);
  "shuffled": the same rows in a seeded random order.  Relevance and scores are the same in both orders, so
  both give the same numbers.

Cases (each DataFrame call eager, Polars' default engine, all cores)
- ndcg@10: `df.rank_metrics.ndcg(k=10)`; ndcg_score@10: `df.rank_metrics.ndcg_score(k=10)`;
  ndcg@5cuts: `ndcg(k=[1, 3, 5, 10, 20])`;
  evaluate: `evaluate` with 7 measures (ndcg, dcg, p, r, ap, rr, success) at 5, 10, 20 (21 columns);
  by: `ndcg(by="system", query="topic", k=10)` (the same groups as the query column: 10 systems, each with a
  tenth of the queries);
  by_composite: `ndcg(by="system", query=["topic", "locale"], k=10)`, the query a composite key: `topic`
  int64 (query // 20) and `locale` String ("en" or "de": (query // 10) % 2), derived before the timing (three
  key columns, the same groups again);
  qrels: `run.rank_metrics.ndcg(qrels=qrels, doc="doc", k=10)`, the run (query, doc, score) and the
  judgments (query, doc, relevance) being the file's columns in its row order;
  qrels_whole: `run.rank_metrics.evaluate(["ap", "bpref", "ndcg"], qrels=qrels, doc="doc")`, the same frames,
  measures without a cut-off (every row counts: the judged rows' sums, bpref's R and N joined per query);
  exprs: `df.group_by("query").agg(exprs.ndcg(k=10))`.
- A case whose API a revision lacks (0.1.0 has no `evaluate`, `by=` or `exprs`) prints "n/a" and is not timed
  on either side.

Timing
- One child process per timing, running a copy of this script taken at the start (editing the script or the
  working tree during a run changes nothing in it): it imports the revision's package, reads only the columns
  the case needs from the Parquet file into memory, runs the case once on the first 10,000 rows (warm-up),
  then times one call: wall (time.perf_counter) and CPU seconds of the process (time.process_time: all
  threads).  Neither the imports nor the read nor the warm-up is timed.
- Per case the two revisions alternate, in the order A B, B A, A B, ... (`--repeats` timings each); the table
  gives the median of each side and HEAD / BASE for wall and CPU time.  Each child also returns a fingerprint
  of its result (the sum of its float columns, or the float); a "results differ" note flags fingerprints more
  than 1e-9 apart (relative).
- The load average (1 minute) is printed before and after the run and per case, with the machine's cores: a
  load above the cores means other processes took CPU time from the run and both sides are slower and noisier.
- `--fail-above R` exits with status 1 when any wall ratio HEAD / BASE exceeds R (off by default; `--fail-on
  cpu` checks the CPU ratio instead).  On a loaded machine the CPU ratio is the steadier one: in a run of a
  revision against itself at 100k x 10 under a load average of 9-12 on 2 cores, the wall ratios spread over
  0.66-1.52 and the CPU ratios over 0.77-1.14 (26 of 28 within 0.94-1.07).
- How many timings: even on a quiet machine (load 0.2-2.2, 2026-12-03) one call's CPU time varied by up to 30%
  from one fresh process to the next, so the default `--repeats 3` is a quick look: a ratio within 0.90-1.10
  from it is not a verdict.  Before calling a change slower or faster by 10% or less, time the cases in question
  again with `--repeats 9` (as HISTORY.md's 2026-12-03 14:02 run did for the 1.11-1.16x of five cut-offs with
  heavy ties against 0.1.0).
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import inspect
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

REPOSITORY = Path(__file__).resolve().parent.parent
PACKAGE = "lodestar_polars"
WORKING_TREE = "."
WARMUP_ROWS = 10_000
SYSTEMS = 10
CUTOFFS = [1, 3, 5, 10, 20]
EVALUATE_MEASURES = [f"{m}@{k}" for m in ("ndcg", "dcg", "p", "r", "ap", "rr", "success") for k in (5, 10, 20)]
SAME_RESULT = 1e-9


@dataclass(frozen=True)
class Case:
    name: str
    call: str
    columns: tuple[str, ...]
    available: Callable[[Any], bool]
    prepare: Callable[[pl.DataFrame], tuple[Any, ...]]
    run: Callable[..., object]


def _has_method(name: str) -> Callable[[Any], bool]:
    def check(package: Any) -> bool:
        return hasattr(package.namespace.RankMetricsFrame, name)

    return check


def _ndcg_has_parameter(name: str) -> Callable[[Any], bool]:
    def check(package: Any) -> bool:
        return name in inspect.signature(package.namespace.RankMetricsFrame.ndcg).parameters

    return check


def _has_exprs(package: Any) -> bool:
    try:
        module = importlib.import_module(f"{PACKAGE}.exprs")
    except ModuleNotFoundError:
        return False
    return hasattr(module, "ndcg")


def _whole(frame: pl.DataFrame) -> tuple[Any, ...]:
    return (frame,)


def _composite_query(frame: pl.DataFrame) -> tuple[Any, ...]:
    query = pl.col("query")
    locale = pl.when((query // SYSTEMS) % 2 == 0).then(pl.lit("en")).otherwise(pl.lit("de"))
    return (
        frame.select("system", (query // (2 * SYSTEMS)).alias("topic"), locale.alias("locale"), "relevance", "score"),
    )


def _run_and_qrels(frame: pl.DataFrame) -> tuple[Any, ...]:
    return frame.select("query", "doc", "score"), frame.select("query", "doc", "relevance")


def _exprs_ndcg(frame: pl.DataFrame) -> pl.DataFrame:
    exprs = importlib.import_module(f"{PACKAGE}.exprs")
    return frame.group_by("query").agg(exprs.ndcg(k=10))


def _always(package: Any) -> bool:
    return True


BASIC = ("query", "relevance", "score")
# with judgments, measures without a cut-off: every row's terms (the judged rows' sums), the judged query values
# (bpref's R and N), the ideal DCG over every judged document
JUDGED_WHOLE = ("ap", "bpref", "ndcg")
CASES = [
    Case("ndcg@10", "ndcg(k=10)", BASIC, _always, _whole, lambda df: df.rank_metrics.ndcg(k=10)),
    Case("ndcg_score@10", "ndcg_score(k=10)", BASIC, _always, _whole, lambda df: df.rank_metrics.ndcg_score(k=10)),
    Case("ndcg@5cuts", f"ndcg(k={CUTOFFS})", BASIC, _always, _whole, lambda df: df.rank_metrics.ndcg(k=CUTOFFS)),
    Case(
        "evaluate",
        f"evaluate({len(EVALUATE_MEASURES)} measures)",
        BASIC,
        _has_method("evaluate"),
        _whole,
        lambda df: df.rank_metrics.evaluate(EVALUATE_MEASURES),
    ),
    Case(
        "by",
        'ndcg(by="system", query="topic", k=10)',
        ("system", "topic", "relevance", "score"),
        _ndcg_has_parameter("by"),
        _whole,
        lambda df: df.rank_metrics.ndcg(by="system", query="topic", k=10),
    ),
    Case(
        "by_composite",
        'ndcg(by="system", query=["topic", "locale"], k=10)',
        ("system", "query", "relevance", "score"),
        _ndcg_has_parameter("by"),
        _composite_query,
        lambda df: df.rank_metrics.ndcg(by="system", query=["topic", "locale"], k=10),
    ),
    Case(
        "qrels",
        'run.ndcg(qrels=, doc="doc", k=10)',
        ("query", "doc", "relevance", "score"),
        _always,
        _run_and_qrels,
        lambda run, qrels: run.rank_metrics.ndcg(qrels=qrels, doc="doc", k=10),
    ),
    Case(
        "qrels_whole",
        f'run.evaluate({list(JUDGED_WHOLE)}, qrels=, doc="doc")',
        ("query", "doc", "relevance", "score"),
        _has_method("evaluate"),
        _run_and_qrels,
        lambda run, qrels: run.rank_metrics.evaluate(list(JUDGED_WHOLE), qrels=qrels, doc="doc"),
    ),
    Case("exprs", 'group_by("query").agg(exprs.ndcg(k=10))', BASIC, _has_exprs, _whole, _exprs_ndcg),
]
CASES_BY_NAME = {case.name: case for case in CASES}


# --- the child side: runs in a fresh process with one revision's package first on sys.path ----------------


def _import_package(folder: str) -> Any:
    """The revision's package, and nothing else: an editable install's finder would serve a module the
    revision lacks (0.1.0 has no `exprs`) from the installed checkout."""
    sys.meta_path[:] = [
        finder for finder in sys.meta_path if "editable" not in str(getattr(finder, "__module__", "")).lower()
    ]
    sys.path.insert(0, folder)
    package = importlib.import_module(PACKAGE)
    importlib.import_module(f"{PACKAGE}.namespace")
    _check_origin(folder)
    return package


def _check_origin(folder: str) -> None:
    root = Path(folder).resolve()
    for name, module in list(sys.modules.items()):
        origin = getattr(module, "__file__", None)
        ours = name == PACKAGE or name.startswith(f"{PACKAGE}.")
        if ours and origin is not None and not Path(origin).resolve().is_relative_to(root):
            msg = f"imported {name} from {origin}, not from the extracted revision in {folder}"
            raise RuntimeError(msg)


def _fingerprint(result: object) -> float:
    if isinstance(result, pl.DataFrame):
        floats = result.select(pl.col(pl.Float64, pl.Float32).cast(pl.Float64).sum())
        return math.fsum(value for value in floats.row(0) if value is not None) if floats.width else 0.0
    if isinstance(result, float):
        return result
    msg = f"cannot fingerprint a {type(result).__name__}"
    raise TypeError(msg)


def child_probe(folder: str) -> None:
    package = _import_package(folder)
    print(json.dumps({"cases": [case.name for case in CASES if case.available(package)]}))


def child_time(folder: str, case_name: str, data: str) -> None:
    _import_package(folder)
    case = CASES_BY_NAME[case_name]
    frame = pl.read_parquet(data, columns=list(case.columns))
    case.run(*case.prepare(frame.head(WARMUP_ROWS)))
    inputs = case.prepare(frame)
    wall_start, cpu_start = time.perf_counter(), time.process_time()
    result = case.run(*inputs)
    wall, cpu = time.perf_counter() - wall_start, time.process_time() - cpu_start
    _check_origin(folder)
    print(json.dumps({"wall": wall, "cpu": cpu, "fingerprint": _fingerprint(result)}))


# --- the parent side ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Revision:
    label: str
    description: str
    folder: Path


def _git(*arguments: str) -> str:
    return subprocess.run(
        ["git", "-C", str(REPOSITORY), *arguments], check=True, capture_output=True, text=True
    ).stdout.strip()


def extract(revision: str, into: Path) -> Revision:
    into.mkdir(parents=True)
    if revision == WORKING_TREE:
        shutil.copytree(REPOSITORY / PACKAGE, into / PACKAGE, ignore=shutil.ignore_patterns("__pycache__"))
        dirty = _git("status", "--porcelain", "--", PACKAGE)
        head = _git("rev-parse", "--short", "HEAD")
        state = "with uncommitted changes to the package" if dirty else "clean"
        return Revision("working tree", f"the working tree at {head} ({state})", into)
    commit = _git("rev-parse", "--short", f"{revision}^{{commit}}")
    archive = subprocess.run(
        ["git", "-C", str(REPOSITORY), "archive", commit, PACKAGE], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    subject = _git("log", "-1", "--format=%s", commit)
    short_subject = subject if len(subject) <= 70 else subject[:67] + "..."
    return Revision(revision, f"{commit} ({short_subject})", into)


def _child(script: Path, *arguments: str) -> dict[str, Any]:
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    completed = subprocess.run(
        [sys.executable, "-I", str(script), *arguments],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tempfile.gettempdir(),
    )
    if completed.returncode != 0:
        msg = f"child {' '.join(arguments)} failed:\n{completed.stderr}"
        raise RuntimeError(msg)
    result: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


@dataclass(frozen=True)
class Shape:
    queries: int
    docs: int

    @property
    def label(self) -> str:
        return f"{_compact(self.queries)} x {self.docs}"


def _compact(number: int) -> str:
    for size, suffix in ((1_000_000, "M"), (1_000, "k")):
        if number >= size and number % size == 0:
            return f"{number // size}{suffix}"
    return str(number)


def parse_shape(text: str) -> Shape:
    queries, _, docs = text.lower().replace(" ", "").partition("x")

    def number(part: str) -> int:
        scale = {"k": 1_000, "m": 1_000_000}.get(part[-1:], 1)
        return int(part[:-1] if scale > 1 else part) * scale

    try:
        return Shape(number(queries), number(docs))
    except ValueError:
        msg = f"shape {text!r}: expected QUERIESxDOCS, such as 1000000x10 or 100kx100"
        raise argparse.ArgumentTypeError(msg) from None


def write_data(shape: Shape, order: str, ties: str, path: Path) -> None:
    rng = np.random.default_rng(0)
    rows = shape.queries * shape.docs
    relevance = rng.integers(0, 5, rows).astype(np.int8)
    uniform = rng.random(rows)
    tied = rng.integers(0, 5, rows).astype(np.float64)
    frame = pl.DataFrame(
        {
            "query": np.repeat(np.arange(shape.queries, dtype=np.int64), shape.docs),
            "doc": np.tile(np.arange(shape.docs, dtype=np.int64), shape.queries),
            "relevance": relevance,
            "score": tied if ties == "heavy" else uniform,
        }
    ).with_columns(
        system=pl.format("system_{}", pl.col("query") % SYSTEMS),
        topic=pl.col("query") // SYSTEMS,
    )
    if order == "shuffled":
        frame = frame[rng.permutation(rows)]
    frame.write_parquet(path)


@dataclass
class Row:
    case: Case
    shape: Shape
    order: str
    ties: str
    base: list[dict[str, Any]] = field(default_factory=list)
    head: list[dict[str, Any]] = field(default_factory=list)
    load: float = math.nan

    def median(self, side: list[dict[str, Any]], key: str) -> float:
        return statistics.median(timing[key] for timing in side) if side else math.nan

    def ratio(self, key: str) -> float:
        return self.median(self.head, key) / self.median(self.base, key) if self.base and self.head else math.nan

    def note(self) -> str:
        prints = [timing["fingerprint"] for timing in self.base + self.head]
        if not prints:
            return ""
        low, high = min(prints), max(prints)
        return "results differ" if high - low > SAME_RESULT * max(1.0, abs(high)) else ""


def _seconds(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.3f}"


def _ratio(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.2f}"


def table(rows: list[Row]) -> str:
    header = "| case | call | shape | order | ties | BASE s | HEAD s | HEAD / BASE | CPU HEAD / BASE | load | note |"
    lines = [header, "|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        cells = [
            row.case.name,
            f"`{row.case.call}`",
            row.shape.label,
            row.order,
            row.ties,
            _seconds(row.median(row.base, "wall")),
            _seconds(row.median(row.head, "wall")),
            _ratio(row.ratio("wall")),
            _ratio(row.ratio("cpu")),
            f"{row.load:.2f}",
            row.note(),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _load() -> float:
    return os.getloadavg()[0]


def _loads() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f} (1, 5, 15 min)"


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child-probe":
        child_probe(sys.argv[2])
        return 0
    if len(sys.argv) > 1 and sys.argv[1] == "--child-time":
        child_time(*sys.argv[2:5])
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("base", help="git revision of the BASE side (commit, tag, branch)")
    parser.add_argument(
        "head", nargs="?", default=WORKING_TREE, help="git revision of the HEAD side; omitted or '.': the working tree"
    )
    parser.add_argument("--shapes", nargs="+", type=parse_shape, default=[Shape(1_000_000, 10), Shape(100_000, 100)])
    parser.add_argument("--repeats", type=int, default=3, help="timings per side and case (default 3)")
    parser.add_argument("--cases", nargs="+", choices=list(CASES_BY_NAME), default=list(CASES_BY_NAME))
    parser.add_argument("--orders", nargs="+", choices=["grouped", "shuffled"], default=["grouped", "shuffled"])
    parser.add_argument("--ties", nargs="+", choices=["none", "heavy"], default=["none", "heavy"])
    parser.add_argument(
        "--fail-above", type=float, default=None, metavar="RATIO", help="exit 1 if a wall ratio > RATIO"
    )
    parser.add_argument(
        "--fail-on",
        choices=["wall", "cpu"],
        default="wall",
        help="the ratio --fail-above checks (default wall; cpu is steadier on a loaded machine)",
    )
    arguments = parser.parse_args()

    started = datetime.datetime.now()
    load_before = _loads()
    with tempfile.TemporaryDirectory(prefix="lodestar-ab-") as scratch:
        folder = Path(scratch)
        script = folder / "ab.py"
        shutil.copy2(__file__, script)
        base = extract(arguments.base, folder / "base")
        head = extract(arguments.head, folder / "head")
        base_cases = set(_child(script, "--child-probe", str(base.folder))["cases"])
        head_cases = set(_child(script, "--child-probe", str(head.folder))["cases"])
        rows: list[Row] = []
        for shape in arguments.shapes:
            for order in arguments.orders:
                for ties in arguments.ties:
                    data = folder / f"{shape.queries}x{shape.docs}-{order}-{ties}.parquet"
                    write_data(shape, order, ties, data)
                    for name in arguments.cases:
                        row = Row(CASES_BY_NAME[name], shape, order, ties)
                        if name in base_cases and name in head_cases:
                            for repeat in range(arguments.repeats):
                                sides = [(base, row.base), (head, row.head)]
                                for side, timings in sides if repeat % 2 == 0 else sides[::-1]:
                                    timings.append(_child(script, "--child-time", str(side.folder), name, str(data)))
                        row.load = _load()
                        rows.append(row)
                        print(table([row]).splitlines()[-1], file=sys.stderr, flush=True)
                    data.unlink()
    finished = datetime.datetime.now()

    print(f"`{' '.join(['python', 'benchmarks/ab.py', *sys.argv[1:]])}`")
    print(f"{started:%Y-%m-%d %H:%M}-{finished:%H:%M}, {os.cpu_count()} cores, {platform.node()}")
    print(f"BASE: {base.label} = {base.description}")
    print(f"HEAD: {head.label} = {head.description}")
    print(f"python {platform.python_version()}, polars {pl.__version__}, numpy {np.__version__}")
    print(f"median of {arguments.repeats} per side, each timing a fresh process, sides alternating")
    print(f"load average before: {load_before}; after: {_loads()}")
    print()
    print(table(rows))
    print()
    for metric in ("wall", "cpu"):
        ratios = [row.ratio(metric) for row in rows if not math.isnan(row.ratio(metric))]
        if ratios:
            geometric = math.exp(statistics.fmean(math.log(ratio) for ratio in ratios))
            print(
                f"{metric} HEAD / BASE over {len(ratios)} rows: geometric mean {geometric:.2f}, max {max(ratios):.2f}"
            )
    failing = [
        row for row in rows if arguments.fail_above is not None and row.ratio(arguments.fail_on) > arguments.fail_above
    ]
    for row in failing:
        print(
            f"FAIL: {row.case.name} on {row.shape.label} {row.order}, ties {row.ties}: "
            f"{arguments.fail_on} HEAD / BASE {row.ratio(arguments.fail_on):.2f} > {arguments.fail_above}"
        )
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
