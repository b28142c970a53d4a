"""Speed and memory of lodestar-polars NDCG against its peers and a numba "limit" kernel.

    python benchmarks/run.py            # full size: ~10M rows per shape (about 15-25 minutes)
    python benchmarks/run.py --quick    # 1/20 scale smoke run (under 2 minutes)

Needs the bench extra (numba, psutil) plus scikit-learn; pytrec_eval-terrier, ranx and polars-ds are
timed when they import.  Plain Python, not part of the test run.

Method
- Data is generated deterministically (numpy seed 0): query int64 (rows grouped by query, ids ascending),
  relevance int8 in 0..4, score float64 (uniform, or integers 0..4 for the heavy-ties shape).  Each shape
  is also written to benchmarks/data/<shape>.parquet (gitignored) for the scan_parquet timing.
- Every contender of a case runs once per repeat, the repeats alternating between contenders; the table
  shows the median.  Time is wall time of the call including collecting the result.
- Memory: a psutil thread samples this process's RSS every 5 ms during the call; "peak MB" is the highest
  sample minus the RSS just before the call (the extra memory the call needed), the largest over repeats.
  Polars' allocator keeps freed pages, so a call that reuses them can show less than it touched.
- Peers that would take more than the budget (--peer-budget seconds per call) at full size run on the first
  N queries and their time is scaled by (all queries / N); the table says so ("scaled from N q").  Their
  memory is then the subset's.  What a peer's time includes is in its note: pytrec_eval and ranx need
  Python dicts, and building them is part of using them, so it is timed (and shown separately).
- Other processes on the machine: "other CPU" is the share of the machine's CPU time that this process did
  not use while the case ran (from psutil.cpu_times); figures taken under load are noisier and slower.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import psutil

import lodestar_polars  # noqa: F401  registers .rank_metrics

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
sys.path.insert(0, str(HERE))
import limit_kernel  # noqa: E402

Ks = int | list[int]
FIVE_CUTOFFS = [1, 3, 5, 10, 20]


# ----------------------------------------------------------------------------------------------- data
@dataclass
class Shape:
    name: str
    query: np.ndarray
    relevance: np.ndarray
    score: np.ndarray
    offsets: np.ndarray
    docs_per_query: int | None  # equal lengths: the dense (queries x docs) view exists
    frame: pl.DataFrame = field(init=False)
    parquet: Path = field(init=False)

    def __post_init__(self) -> None:
        self.frame = pl.DataFrame({"query": self.query, "relevance": self.relevance, "score": self.score})
        self.parquet = DATA / f"{self.name.replace(' ', '_').replace('.', '')}.parquet"

    @property
    def queries(self) -> int:
        return self.offsets.size - 1

    @property
    def rows(self) -> int:
        return self.query.size

    def head(self, queries: int) -> Shape:
        end = int(self.offsets[queries])
        return Shape(
            self.name, self.query[:end], self.relevance[:end], self.score[:end],
            self.offsets[: queries + 1], self.docs_per_query,
        )  # fmt: skip


def zipf_lengths(rng: np.random.Generator, queries: int, longest: int = 1000, exponent: float = 1.0) -> np.ndarray:
    """Query lengths 1..longest with P(length = n) proportional to n**-exponent (mean ~134 at 1.0)."""
    n = np.arange(1, longest + 1)
    p = n.astype(np.float64) ** -exponent
    return rng.choice(n, size=queries, p=p / p.sum())


def make_shape(name: str, scale: float, seed: int = 0) -> Shape:
    rng = np.random.default_rng(seed)
    ties = False
    if name == "100k x 100":
        lengths = np.full(max(1, round(100_000 * scale)), 100)
    elif name == "1M x 10":
        lengths = np.full(max(1, round(1_000_000 * scale)), 10)
    elif name == "ragged Zipf 1..1000":
        lengths = zipf_lengths(rng, max(1, round(75_000 * scale)))
    elif name == "ties 100k x 100":
        lengths, ties = np.full(max(1, round(100_000 * scale)), 100), True
    else:
        raise ValueError(name)
    rows = int(lengths.sum())
    query = np.repeat(np.arange(lengths.size, dtype=np.int64), lengths)
    relevance = rng.integers(0, 5, rows).astype(np.int8)
    score = rng.integers(0, 5, rows).astype(np.float64) if ties else rng.random(rows)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    equal = int(lengths[0]) if np.all(lengths == lengths[0]) else None
    return Shape(name, query, relevance, score, offsets, equal)


# -------------------------------------------------------------------------------------- measurement
class PeakRSS:
    """Samples this process's RSS every `interval` seconds in a thread; `.peak_mb` = max sample - start."""

    def __init__(self, interval: float = 0.005) -> None:
        self.process = psutil.Process()
        self.interval = interval
        self.start = self.peak = 0
        self._stop = threading.Event()

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.process.memory_info().rss)
            time.sleep(self.interval)

    def __enter__(self) -> PeakRSS:
        self.start = self.peak = self.process.memory_info().rss
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.process.memory_info().rss)

    @property
    def peak_mb(self) -> float:
        return (self.peak - self.start) / 2**20


def cpu_seconds() -> float:
    times = psutil.Process().cpu_times()
    return times.user + times.system


def timed(fn: Callable[[], Any]) -> tuple[float, float, float, Any]:
    """(wall seconds, CPU seconds of this process over all its threads, peak MB, result)."""
    with PeakRSS() as rss:
        cpu = cpu_seconds()
        start = time.perf_counter()
        result = fn()
        seconds = time.perf_counter() - start
        cpu = cpu_seconds() - cpu
    return seconds, cpu, rss.peak_mb, result


@contextlib.contextmanager
def other_cpu() -> Iterator[dict[str, float]]:
    """Share of all cores' time used by other processes while the block ran (0 = machine was ours)."""
    out: dict[str, float] = {}
    me = psutil.Process()
    t0, m0, w0 = psutil.cpu_times(), me.cpu_times(), time.perf_counter()
    yield out
    t1, m1, w1 = psutil.cpu_times(), me.cpu_times(), time.perf_counter()
    busy = (sum(t1) - t1.idle - t1.iowait) - (sum(t0) - t0.idle - t0.iowait)
    mine = (m1.user + m1.system + m1.children_user + m1.children_system) - (
        m0.user + m0.system + m0.children_user + m0.children_system
    )
    out["other_cpu"] = max(0.0, (busy - mine) / ((w1 - w0) * (os.cpu_count() or 1)))
    out["load1"] = os.getloadavg()[0]


# ------------------------------------------------------------------------------------- contenders
def cutoffs(k: Ks) -> list[int]:
    return [k] if isinstance(k, int) else list(k)


def ndcg_columns(k: Ks) -> list[str]:
    return [f"ndcg@{c}" for c in cutoffs(k)]


def package_means(result: pl.DataFrame, k: Ks, queries: int | None = None) -> list[float]:
    frame = result if queries is None else result.head(queries)
    return [float(frame[c].mean()) for c in ndcg_columns(k)]  # type: ignore[arg-type]


@dataclass
class Contender:
    name: str
    run: Callable[[Shape, Ks], Any]  # returns the per-cutoff means (or a per-query frame for the package)
    applies: Callable[[Shape, Ks], str | None] = lambda s, k: None  # a reason to skip, or None
    peer: bool = True
    note: str = ""
    subset: int | None = None  # queries actually used (None = all)


def lodestar_dataframe(shape: Shape, k: Ks) -> pl.DataFrame:
    return shape.frame.rank_metrics.ndcg(query="query", relevance="relevance", score="score", k=k)


def lodestar_lazy(shape: Shape, k: Ks) -> pl.DataFrame:
    return shape.frame.lazy().rank_metrics.ndcg(k=k).collect()


def lodestar_lazy_in_memory(shape: Shape, k: Ks) -> pl.DataFrame:
    return shape.frame.lazy().rank_metrics.ndcg(k=k).collect(engine="in-memory")


def lodestar_scan_parquet(shape: Shape, k: Ks) -> pl.DataFrame:
    return pl.scan_parquet(shape.parquet).rank_metrics.ndcg(k=k).collect(engine="streaming")


def limit(shape: Shape, k: Ks) -> np.ndarray:
    return limit_kernel.ndcg_grouped(shape.offsets, shape.relevance, shape.score, np.asarray(cutoffs(k), np.int64))


def sklearn_ndcg(shape: Shape, k: Ks) -> list[float]:
    from sklearn.metrics import ndcg_score

    assert shape.docs_per_query is not None
    y_true = shape.relevance.reshape(-1, shape.docs_per_query)  # views: the dense matrix costs nothing
    y_score = shape.score.reshape(-1, shape.docs_per_query)
    return [float(ndcg_score(y_true, y_score, k=c)) for c in cutoffs(k)]


def dropin_ndcg(shape: Shape, k: Ks) -> list[float]:
    """The package's scikit-learn drop-in on the same dense arrays (it builds the long frame itself)."""
    from lodestar_polars.sklearn import ndcg_score

    assert shape.docs_per_query is not None
    y_true = shape.relevance.reshape(-1, shape.docs_per_query)
    y_score = shape.score.reshape(-1, shape.docs_per_query)
    return [float(ndcg_score(y_true, y_score, k=c)) for c in cutoffs(k)]


def _trec_dicts(shape: Shape) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    relevance, score = shape.relevance.tolist(), shape.score.tolist()
    offsets = shape.offsets.tolist()
    for q in range(len(offsets) - 1):
        lo, hi = offsets[q], offsets[q + 1]
        docs = [str(d) for d in range(hi - lo)]
        qrels[str(q)] = dict(zip(docs, relevance[lo:hi], strict=True))
        run[str(q)] = dict(zip(docs, score[lo:hi], strict=True))
    return qrels, run


BUILD_SECONDS: dict[str, list[float]] = {}
args_verbose = False


def pytrec_eval_ndcg(shape: Shape, k: Ks) -> list[float]:
    import pytrec_eval

    start = time.perf_counter()
    qrels, run = _trec_dicts(shape)
    BUILD_SECONDS.setdefault("pytrec_eval", []).append(time.perf_counter() - start)
    measure = "ndcg_cut." + ",".join(str(c) for c in cutoffs(k))
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {measure}).evaluate(run)
    return [float(np.mean([v[f"ndcg_cut_{c}"] for v in per_query.values()])) for c in cutoffs(k)]


def ranx_ndcg(shape: Shape, k: Ks) -> list[float]:
    from ranx import Qrels, Run, evaluate

    start = time.perf_counter()
    qrels_dict, run_dict = _trec_dicts(shape)
    qrels, run = Qrels(qrels_dict), Run(run_dict)
    BUILD_SECONDS.setdefault("ranx", []).append(time.perf_counter() - start)
    metrics = [f"ndcg@{c}" for c in cutoffs(k)]
    means = evaluate(qrels, run, metrics, make_comparable=True)
    return [float(means)] if isinstance(means, float) else [float(means[m]) for m in metrics]


def polars_ds_ndcg(shape: Shape, k: Ks) -> list[float]:
    import polars_ds as pds

    per_query = shape.frame.group_by("query").agg(
        pds.query_ndcg_score("relevance", "score", k=c, ignore_ties=True).alias(f"ndcg@{c}") for c in cutoffs(k)
    )
    return [float(per_query[c].mean()) for c in ndcg_columns(k)]  # type: ignore[arg-type]


def needs_dense(shape: Shape, _k: Ks) -> str | None:
    return None if shape.docs_per_query is not None else "ragged lists: no dense matrix"


def import_error(module: str) -> str | None:
    try:
        __import__(module)
    except Exception as error:  # record why a peer is missing, whatever the failure
        return f"import {module} failed: {type(error).__name__}: {error}"
    return None


def polars_ds_tie_averaged_error() -> str:
    """Run polars-ds' default (tie-averaged) mode once on a tiny frame and return how it fails."""
    import polars_ds as pds

    frame = pl.DataFrame({"q": [1, 1], "r": [1, 0], "s": [0.5, 0.5]})
    try:
        frame.group_by("q").agg(pds.query_ndcg_score("r", "s", k=1))
    except Exception as error:  # the failure is the finding
        return f"{type(error).__name__}: {str(error).splitlines()[0]}"
    return "ran"


# --------------------------------------------------------------------------------------------- main
@dataclass
class Row:
    shape: str
    k: str
    contender: str
    seconds: float | None
    peak_mb: float | None
    note: str = ""
    scaled_from: int | None = None
    agreement: float | None = None
    ratio: float | None = None
    cpu_seconds: float | None = None
    cpu_ratio: float | None = None


def calibrate(contender: Contender, shape: Shape, k: Ks, budget: float) -> int:
    """How many queries the peer can do within `budget` seconds (all of them if it fits).

    The probe (1000 queries, best of two runs) and the floor (2% of the queries) keep fixed per-call costs
    from being multiplied up when a peer's time is scaled from a subset.
    """
    probe = min(shape.queries, 1000)
    seconds = min(timed(lambda: contender.run(shape.head(probe), k))[0] for _ in range(2))
    estimate = seconds * shape.queries / probe
    if estimate <= budget:
        return shape.queries
    return min(shape.queries, max(probe, shape.queries // 50, math.ceil(shape.queries * budget / estimate)))


def run_case(shape: Shape, k: Ks, contenders: list[Contender], repeats: int, budget: float) -> list[Row]:
    rows: list[Row] = []
    active: list[tuple[Contender, Shape, int]] = []
    for c in contenders:
        reason = c.applies(shape, k)
        if reason:
            rows.append(Row(shape.name, str(k), c.name, None, None, f"skipped: {reason}"))
            continue
        queries = calibrate(c, shape, k, budget) if c.peer else shape.queries
        active.append((c, shape if queries == shape.queries else shape.head(queries), queries))
    times: dict[str, list[float]] = {c.name: [] for c, _, _ in active}
    peaks: dict[str, list[float]] = {c.name: [] for c, _, _ in active}
    cpus: dict[str, list[float]] = {c.name: [] for c, _, _ in active}
    results: dict[str, Any] = {}
    BUILD_SECONDS.clear()
    with other_cpu() as load:
        for _ in range(repeats):
            for c, data, _ in active:
                seconds, cpu, peak, result = timed(lambda c=c, data=data: c.run(data, k))
                times[c.name].append(seconds)
                cpus[c.name].append(cpu)
                peaks[c.name].append(peak)
                results[c.name] = result
                if args_verbose:
                    print(f"    {c.name}: {seconds:.2f}s wall, {cpu:.2f}s CPU", flush=True)
    reference: pl.DataFrame = results["lodestar DataFrame"]
    for c, _data, queries in active:
        seconds = float(np.median(times[c.name])) * shape.queries / queries
        cpu = float(np.median(cpus[c.name])) * shape.queries / queries
        note = c.note
        agreement = None
        result = results[c.name]
        if isinstance(result, pl.DataFrame):
            agreement = max(
                abs(a - b) for a, b in zip(package_means(result, k), package_means(reference, k), strict=True)
            )
        elif isinstance(result, np.ndarray):  # the limit kernel: compare every query
            ours = reference.select(ndcg_columns(k)).to_numpy()
            agreement = float(np.max(np.abs(result - ours)))
        elif result is not None:
            expected = package_means(reference, k, queries)
            agreement = max(abs(a - b) for a, b in zip(result, expected, strict=True))
        if c.name in BUILD_SECONDS:
            build = float(np.median(BUILD_SECONDS[c.name.split()[0]])) * shape.queries / queries
            note = f"{note}; dict build {build:.1f}s of it".lstrip("; ")
        rows.append(
            Row(shape.name, str(k), c.name, seconds, float(max(peaks[c.name])), note,
                queries if queries < shape.queries else None, agreement, cpu_seconds=cpu)
        )  # fmt: skip
    reference_row = next(r for r in rows if r.contender == "lodestar DataFrame")
    for r in rows:
        if r.seconds is not None and reference_row.seconds:
            r.ratio = r.seconds / reference_row.seconds
        if r.cpu_seconds is not None and reference_row.cpu_seconds:
            r.cpu_ratio = r.cpu_seconds / reference_row.cpu_seconds
    print(
        f"  [{shape.name}, k={k}: other processes used {100 * load['other_cpu']:.0f}% of the CPU, "
        f"load1 {load['load1']:.1f}]",
        flush=True,
    )
    for r in rows:
        r.note = (
            (r.note + f" [other CPU {100 * load['other_cpu']:.0f}%]") if r.contender == "lodestar DataFrame" else r.note
        )
    return rows


COLUMNS = [  # (title, width, right-aligned)
    ("shape", 20, False), ("k", 17, False), ("contender", 31, False), ("seconds", 8, True), ("x package", 9, True),
    ("CPU s", 7, True), ("CPU x", 6, True), ("peak MB", 7, True), ("Δ mean", 7, True), ("note", 0, False),
]  # fmt: skip


def _cells(values: list[str]) -> str:
    return (
        "| "
        + " | ".join(f"{v:>{w}s}" if right else f"{v:{w}s}" for v, (_, w, right) in zip(values, COLUMNS, strict=True))
        + " |"
    )


def format_table(rows: list[Row]) -> str:
    def show(value: float | None, form: str) -> str:
        return "—" if value is None else format(value, form)

    lines = [_cells([title for title, _, _ in COLUMNS]), _cells(["-" * max(w, 3) for _, w, _ in COLUMNS])]
    for r in rows:
        note = f"scaled from {r.scaled_from} q; {r.note}".rstrip("; ") if r.scaled_from else r.note
        values = [
            r.shape, r.k, r.contender, show(r.seconds, ".3f"), show(r.ratio, ".2f"), show(r.cpu_seconds, ".2f"),
            show(r.cpu_ratio, ".2f"), show(r.peak_mb, ".0f"), show(r.agreement, ".0e"), note,
        ]  # fmt: skip
        lines.append(_cells(values))
    return "\n".join(lines)


def find(rows: list[Row], shape: str, k: Ks, contender: str) -> Row | None:
    return next((r for r in rows if r.shape == shape and r.k == str(k) and r.contender == contender), None)


def targets(rows: list[Row], shapes: list[str], quick: bool) -> list[tuple[str, bool | None, str]]:
    """Each target on wall time (the verdict), with the same ratio in CPU seconds alongside."""
    out: list[tuple[str, bool | None, str]] = []

    def get(shape: str, k: Ks | str, who: str) -> Row | None:
        k = str(k)
        return find(rows, shape, 10 if k == "10" else FIVE_CUTOFFS, who)

    def ratio(a: Row | None, b: Row | None) -> tuple[float, float] | None:
        if a is None or b is None or not a.seconds or not b.seconds:
            return None
        return a.seconds / b.seconds, (a.cpu_seconds or 0.0) / (b.cpu_seconds or 1.0)

    us = "lodestar DataFrame"
    r = ratio(get("100k x 100", 10, "scikit-learn ndcg_score"), get("100k x 100", 10, us))
    if r:
        out.append(
            ("scikit-learn / package on 100k x 100, k=10 >= 3", r[0] >= 3, f"{r[0]:.2f}x wall ({r[1]:.2f}x CPU)")
        )
    r = ratio(get("100k x 100", 10, "scikit-learn ndcg_score"), get("100k x 100", 10, "lodestar sklearn drop-in"))
    if r:
        out.append(("scikit-learn / drop-in on 100k x 100, k=10 > 1", r[0] > 1, f"{r[0]:.2f}x wall ({r[1]:.2f}x CPU)"))
    slower, compared = [], 0
    for row in rows:
        if row.seconds is None or row.contender.startswith(("lodestar", "limit")):
            continue
        compared += 1
        r = ratio(get(row.shape, row.k, us), row)
        if r and r[0] >= 1:
            slower.append(f"{row.contender} on {row.shape} k={row.k}: package {r[0]:.2f}x its time ({r[1]:.2f}x CPU)")
    out.append(
        ("faster than every peer on every shape", not slower,
         f"{compared} peer timings; " + ("; ".join(slower) if slower else "none faster"))
    )  # fmt: skip
    for k in (10, FIVE_CUTOFFS):
        for shape in shapes:
            r = ratio(get(shape, k, us), get(shape, k, "limit kernel (numba, 2 threads)"))
            if r:
                out.append(
                    (f"package / limit <= 2.5 on {shape}, k={k}", r[0] <= 2.5, f"{r[0]:.2f}x wall ({r[1]:.2f}x CPU)")
                )
    for shape in shapes:
        r = ratio(get(shape, FIVE_CUTOFFS, us), get(shape, 10, us))
        if r:
            out.append(
                (f"five cut-offs / one cut-off <= 1.3 on {shape}", r[0] <= 1.3, f"{r[0]:.2f}x wall ({r[1]:.2f}x CPU)")
            )
    for lazy in ("lodestar LazyFrame", "lodestar LazyFrame in-memory"):
        worst, where = -1.0, ""
        for row in rows:
            if row.contender == lazy and row.seconds is not None:
                r = ratio(row, get(row.shape, row.k, us))
                if r and abs(r[0] - 1) > worst:
                    worst, where = abs(r[0] - 1), f"{row.shape} k={row.k}: {r[0]:.2f}x wall ({r[1]:.2f}x CPU)"
        if where:
            out.append((f"DataFrame vs {lazy} within 10% (worst case)", worst <= 0.10, where))
    if quick:
        out = [(f"{name} [quick scale]", ok, detail) for name, ok, detail in out]
    return out


def machine() -> dict[str, Any]:
    import importlib.metadata as md

    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if "model name" in line
        ),
        platform.processor(),
    )
    versions = {}
    for package in (
        "lodestar-polars",
        "polars",
        "numpy",
        "numba",
        "scikit-learn",
        "pytrec_eval-terrier",
        "ranx",
        "polars-ds",
        "psutil",
        "pyarrow",
    ):
        try:
            versions[package] = md.version(package)
        except md.PackageNotFoundError:
            versions[package] = "not installed"
    return {
        "nproc": os.cpu_count(),
        "ram_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "cpu": cpu,
        "python": platform.python_version(),
        "versions": versions,
        "polars_threads": pl.thread_pool_size(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="lodestar-polars NDCG benchmark")
    parser.add_argument("--quick", action="store_true", help="1/20 of the data, smaller peer budget")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--peer-budget", type=float, default=None, help="seconds per peer call before subsetting")
    parser.add_argument("--shapes", nargs="*", default=None)
    parser.add_argument("--verbose", action="store_true", help="print every timing as it is taken")
    parser.add_argument("--table-from", type=Path, help="re-print the table and targets of a results JSON")
    args = parser.parse_args()
    if args.table_from:
        saved = json.loads(args.table_from.read_text())
        saved_rows = [Row(**r) for r in saved["rows"]]
        print(format_table(saved_rows))
        for name, ok, detail in targets(
            saved_rows, list(dict.fromkeys(r.shape for r in saved_rows)), saved["scale"] < 1
        ):
            print(f"{'PASS' if ok else 'FAIL'}  {name}: {detail}")
        return
    global args_verbose
    args_verbose = args.verbose
    scale = 0.05 if args.quick else 1.0
    budget = args.peer_budget or (0.4 if args.quick else 3.0)
    DATA.mkdir(exist_ok=True)
    info = machine()
    print(json.dumps(info, indent=None), flush=True)

    difference = limit_kernel.verify()
    print(f"limit kernel vs scikit-learn on small tied/untied cases: max |diff| = {difference:.2g}", flush=True)
    assert difference < 1e-12

    pds_error = import_error("polars_ds")
    pds_ties = None if pds_error else polars_ds_tie_averaged_error()
    contenders = [
        Contender("lodestar DataFrame", lodestar_dataframe, peer=False, note="default engine (streaming)"),
        Contender("lodestar LazyFrame", lodestar_lazy, peer=False, note=".collect() default engine"),
        Contender("lodestar LazyFrame in-memory", lodestar_lazy_in_memory, peer=False, note='engine="in-memory"'),
        Contender(
            "lodestar scan_parquet streaming", lodestar_scan_parquet, peer=False, note="includes reading Parquet"
        ),
        Contender("limit kernel (numba, 2 threads)", limit, peer=False, note="grouped arrays + offsets given"),
        Contender("scikit-learn ndcg_score", sklearn_ndcg, needs_dense, note="dense view given; one call per k"),
        Contender(
            "lodestar sklearn drop-in", dropin_ndcg, needs_dense, peer=False, note="same dense arrays; one call per k"
        ),
        Contender(
            "pytrec_eval", pytrec_eval_ndcg, lambda s, k: import_error("pytrec_eval"),
            note="ties by docno, not averaged",
        ),
        Contender("ranx", ranx_ndcg, lambda s, k: import_error("ranx"), note="ties by input order"),
        Contender(
            "polars-ds query_ndcg_score", polars_ds_ndcg, lambda s, k: pds_error,
            note="ignore_ties=True: its tie-averaged mode fails" + (f" ({pds_ties.split(':')[0]})" if pds_ties else ""),
        ),
    ]  # fmt: skip
    # warm up: numba compilation, imports, Polars thread pool
    warm = make_shape("ties 100k x 100", 0.001)
    warm.parquet = DATA / "warmup.parquet"
    warm.frame.write_parquet(warm.parquet)
    for c in contenders:
        if not c.applies(warm, 10):
            c.run(warm, 10)
            c.run(warm, FIVE_CUTOFFS)

    names = args.shapes or ["100k x 100", "1M x 10", "ragged Zipf 1..1000", "ties 100k x 100"]
    rows: list[Row] = []
    started = time.perf_counter()
    for name in names:
        shape = make_shape(name, scale)
        shape.frame.write_parquet(shape.parquet)
        print(f"{name}: {shape.queries} queries, {shape.rows} rows", flush=True)
        for k in (10, FIVE_CUTOFFS):
            rows += run_case(shape, k, contenders, args.repeats, budget)
        del shape
    print()
    print(format_table(rows))
    print()
    verdicts = targets(rows, names, args.quick)
    for name, ok, detail in verdicts:
        print(f"{'PASS' if ok else 'FAIL'}  {name}: {detail}")
    print(f"\ntotal {time.perf_counter() - started:.0f}s; load average now {os.getloadavg()}")
    out = DATA / ("results_quick.json" if args.quick else "results.json")
    out.write_text(
        json.dumps({"machine": info, "rows": [r.__dict__ for r in rows], "targets": verdicts, "scale": scale}, indent=1)
    )
    print(f"results written to {out.relative_to(HERE.parent)}")


if __name__ == "__main__":
    main()
