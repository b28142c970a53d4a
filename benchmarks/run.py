"""Speed and memory of lodestar-polars NDCG against its peers, their native anchors and a numba "limit" kernel.

    python benchmarks/run.py            # full size: ~10M rows per shape (about 20-30 minutes)
    python benchmarks/run.py --quick    # 1/20 scale smoke run (a few minutes)
    python benchmarks/run.py --quick --shapes "shuffled 100k x 100" "qrels 100k x 100" --no-memory

Needs the bench extra (numba, psutil) plus scikit-learn; pytrec_eval-terrier, ranx, polars-ds, LightGBM and
XGBoost are timed when they import.  Plain Python, not part of the test run.  `by=` is measured apart, by
benchmarks/by_row.py (one call over 10 systems against one call per system).

Method
- Data is generated deterministically (numpy seed 0): query int64 (ids 0..Q-1), relevance int8 in 0..4, score
  float64 (uniform, or integers 0..4 for the heavy-ties shape); rows grouped by query, ids ascending, except:
  "shuffled 100k x 100" is the 100k x 100 data with its rows in random order (numpy permutation, seed 1), and
  "qrels 100k x 100" is the 100k x 100 data split into judgments (query, doc, relevance) and a run (query, doc,
  score), doc = the position within the query.  Grouped shapes are also written to
  benchmarks/data/<shape>.parquet (gitignored) for the scan_parquet timing.
- Every contender of a case runs once per repeat, the repeats alternating between contenders; the table
  shows the median.  Time is wall time, result collected.  Each contender has two timed phases: the data
  preparation a user needs starting from the long columns (query, relevance, score; doc ids for the dict
  peers) and the evaluation call.  "seconds" is both ("with prep"), "eval s" the evaluation call alone; "x
  package" and "eval x" divide them by the package DataFrame call, which takes the frame as is (no prep).
  What each preparation is: see PREPARATION below (it is also printed with the table).  The limit-kernel
  verdicts divide by the kernel's evaluation call alone (grouped arrays and offsets given: the bound), the
  scikit-learn verdicts by its time with preparation (a free reshape on grouped rows, a sort when shuffled).
- Native anchors: LightGBM's and XGBoost's own NDCG@k on the same scores and labels (native_eval.py says how
  and what their evaluation phase includes; it checks itself against a training run's `evals_result` before
  the timings).  Their convention is not scikit-learn's (gain 2**label - 1, ties
  by input order, 1.0 for a query without a relevant document), so they are compared with the package row
  "lodestar DataFrame, native options" (gain="exponential", ties="input", no_relevant=1.0); before timing,
  their means are asserted equal to it (1e-9) on a 1/20 subset of each shape (the whole shape with --quick),
  XGBoost's on the scores rounded to float32, the precision it stores them in.
- Qrels path: `run.rank_metrics.ndcg(qrels=qrels, doc="doc", k=k)` against the in-frame call on the frame
  holding query, doc, relevance and score (with and without `doc=`), same numbers asserted (1e-12).
- Memory in the table: a psutil thread samples this process's RSS every 5 ms during the call; "peak MB" is
  the highest sample minus the RSS just before the call (the extra memory the call needed), the largest over
  repeats.  Polars' allocator keeps freed pages, so a call that reuses them can show less than it touched.
- Single-plan peak memory (the issue-11 target): in a fresh child process per mode, after the imports (and,
  for the DataFrame mode, after reading the Parquet file into memory) the peak RSS mark is reset
  (/proc/self/clear_refs), then one `ndcg(k=10)` runs; the child reports VmHWM (kernel-tracked, not sampled)
  minus its RSS before the call, divided by the bytes of the raw columns (`frame.estimated_size()`).  The
  issue's target is on 100M rows; this script measures the 100k x 100 shape (10M rows, 1/20 with --quick).
- Peers that would take more than the budget (--peer-budget seconds per call) at full size run on the first
  N queries and their time is scaled by (all queries / N); the table says so ("scaled from N q").  Their
  memory is then the subset's.
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
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import psutil  # type: ignore[import-untyped]  # no stubs installed (types-psutil)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"
# this checkout's package, not whichever one the environment has installed (an editable install elsewhere
# would otherwise win: `python benchmarks/run.py` puts benchmarks/, not the repository root, on the path)
sys.path[:0] = [str(ROOT), str(HERE)]
import limit_kernel  # noqa: E402
import native_eval  # noqa: E402

import lodestar_polars  # noqa: E402  registers .rank_metrics
from lodestar_polars import rank_metrics  # noqa: E402

Ks = int | list[int]
FIVE_CUTOFFS = [1, 3, 5, 10, 20]
US = "lodestar DataFrame"
NATIVE_OPTIONS = "lodestar DataFrame, native options"
KERNEL = "limit kernel (numba, 2 threads)"
SKLEARN = "scikit-learn ndcg_score"
LIGHTGBM = "LightGBM native ndcg@k"
XGBOOST = "XGBoost native ndcg@k"
QRELS = "lodestar qrels= path"
SHUFFLE_SEED = 1


# ----------------------------------------------------------------------------------------------- data
@dataclass
class Shape:
    """One data set.  `kind`: "grouped" (rows grouped by query), "shuffled" (the same rows in random order) or
    "qrels" (grouped; relevance also given as a separate judgments frame).  `offsets` are those of the grouped
    layout (query i owns grouped rows offsets[i]:offsets[i + 1]); for shuffled rows only their count is used."""

    name: str
    query: np.ndarray
    relevance: np.ndarray
    score: np.ndarray
    doc: np.ndarray  # position of the row within its query (in the grouped layout)
    offsets: np.ndarray
    docs_per_query: int | None  # equal lengths: the dense (queries x docs) view exists
    kind: str = "grouped"
    frame: pl.DataFrame = field(init=False)
    parquet: Path = field(init=False)

    def __post_init__(self) -> None:
        columns = {"query": self.query, "relevance": self.relevance, "score": self.score}
        if self.kind == "qrels":
            columns = {"query": self.query, "doc": self.doc, "relevance": self.relevance, "score": self.score}
        self.frame = pl.DataFrame(columns)
        self.parquet = DATA / f"{self.name.replace(' ', '_').replace('.', '')}.parquet"

    @property
    def queries(self) -> int:
        return self.offsets.size - 1

    @property
    def rows(self) -> int:
        return self.query.size

    def head(self, queries: int) -> Shape:
        """The first `queries` queries (ids 0..queries-1), rows in the same order as here."""
        if self.kind == "shuffled":
            keep: np.ndarray | slice = self.query < queries
        else:
            keep = slice(0, int(self.offsets[queries]))
        return Shape(
            self.name, self.query[keep], self.relevance[keep], self.score[keep], self.doc[keep],
            self.offsets[: queries + 1], self.docs_per_query, self.kind,
        )  # fmt: skip


def zipf_lengths(rng: np.random.Generator, queries: int, longest: int = 1000, exponent: float = 1.0) -> np.ndarray:
    """Query lengths 1..longest with P(length = n) proportional to n**-exponent (mean ~134 at 1.0)."""
    n = np.arange(1, longest + 1)
    p = n.astype(np.float64) ** -exponent
    return rng.choice(n, size=queries, p=p / p.sum())


def make_shape(name: str, scale: float, seed: int = 0) -> Shape:
    rng = np.random.default_rng(seed)
    ties = False
    kind, _, base = name.partition(" ") if name.startswith(("shuffled ", "qrels ")) else ("grouped", "", name)
    if base == "100k x 100":
        lengths = np.full(max(1, round(100_000 * scale)), 100)
    elif base == "1M x 10":
        lengths = np.full(max(1, round(1_000_000 * scale)), 10)
    elif base == "ragged Zipf 1..1000":
        lengths = zipf_lengths(rng, max(1, round(75_000 * scale)))
    elif base == "ties 100k x 100":
        lengths, ties = np.full(max(1, round(100_000 * scale)), 100), True
    else:
        raise ValueError(name)
    rows = int(lengths.sum())
    query = np.repeat(np.arange(lengths.size, dtype=np.int64), lengths)
    relevance = rng.integers(0, 5, rows).astype(np.int8)
    score = rng.integers(0, 5, rows).astype(np.float64) if ties else rng.random(rows)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    doc = np.arange(rows, dtype=np.int64) - np.repeat(offsets[:-1], lengths)
    if kind == "shuffled":
        order = np.random.default_rng(SHUFFLE_SEED).permutation(rows)
        query, relevance, score, doc = query[order], relevance[order], score[order], doc[order]
    equal = int(lengths[0]) if np.all(lengths == lengths[0]) else None
    return Shape(name, query, relevance, score, doc, offsets, equal, kind)


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
    return float(times.user + times.system)


@dataclass
class Timing:
    seconds: float  # preparation + evaluation, wall
    eval_seconds: float  # the evaluation call alone, wall
    cpu: float  # CPU seconds of this process (all threads) over both phases
    peak_mb: float
    result: Any


def timed(prepare: Callable[[], Any], evaluate: Callable[[Any], Any]) -> Timing:
    """Time `evaluate(prepare())`, the two phases apart (wall), memory and CPU over both."""
    with PeakRSS() as rss:
        cpu = cpu_seconds()
        start = time.perf_counter()
        prepared = prepare()
        middle = time.perf_counter()
        result = evaluate(prepared)
        end = time.perf_counter()
        cpu = cpu_seconds() - cpu
    del prepared
    return Timing(end - start, end - middle, cpu, rss.peak_mb, result)


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
    """Means of a per-query frame, over the queries with id < `queries` (all when None)."""
    frame = result if queries is None else result.filter(pl.col("query") < queries)
    return [float(frame[c].mean()) for c in ndcg_columns(k)]  # type: ignore[arg-type]  # a float column's mean


def given(shape: Shape) -> Shape:
    """No preparation: the contender takes the long frame (or the shape's arrays) as is."""
    return shape


@dataclass
class Contender:
    name: str
    run: Callable[[Any, Ks], Any]  # the evaluation call on what `prepare` returned: per-cutoff means or per query
    prepare: Callable[[Shape], Any] = given  # the data preparation a user needs, from the long columns
    applies: Callable[[Shape, Ks], str | None] = lambda s, k: None  # a reason to skip, or None
    peer: bool = True
    note: str = ""
    reference: str | None = US  # the package row its numbers are compared with (Δ mean)
    tolerance: float | None = None  # assert |Δ mean| <= tolerance (same convention as its reference)


# the package: no preparation
def lodestar_dataframe(shape: Shape, k: Ks) -> pl.DataFrame:
    return rank_metrics(shape.frame).ndcg(query="query", relevance="relevance", score="score", k=k)


def lodestar_native_options(shape: Shape, k: Ks) -> pl.DataFrame:
    return rank_metrics(shape.frame).ndcg(k=k, gain="exponential", ties="input", no_relevant=1.0)


def lodestar_lazy(shape: Shape, k: Ks) -> pl.DataFrame:
    return rank_metrics(shape.frame.lazy()).ndcg(k=k).collect()


def lodestar_lazy_in_memory(shape: Shape, k: Ks) -> pl.DataFrame:
    return rank_metrics(shape.frame.lazy()).ndcg(k=k).collect(engine="in-memory")


def lodestar_scan_parquet(shape: Shape, k: Ks) -> pl.DataFrame:
    return rank_metrics(pl.scan_parquet(shape.parquet)).ndcg(k=k).collect(engine="streaming")


def lodestar_in_frame_doc(shape: Shape, k: Ks) -> pl.DataFrame:
    return rank_metrics(shape.frame).ndcg(doc="doc", k=k)


@dataclass
class QrelsRun:
    qrels: pl.DataFrame
    run: pl.DataFrame


def split_qrels(shape: Shape) -> QrelsRun:
    """The judgments and the run as a user holding them apart has them (not timed as preparation: given)."""
    return QrelsRun(shape.frame.select("query", "doc", "relevance"), shape.frame.select("query", "doc", "score"))


def lodestar_qrels(data: QrelsRun, k: Ks) -> pl.DataFrame:
    return rank_metrics(data.run).ndcg(qrels=data.qrels, doc="doc", k=k)


# grouped arrays: the preparation of the kernel, scikit-learn and the native evaluators
@dataclass
class Grouped:
    relevance: np.ndarray
    score: np.ndarray
    offsets: np.ndarray


def group_rows(shape: Shape) -> Grouped:
    """Relevance and score grouped by query, with the group offsets, from the long columns: a stable sort by
    query when the rows are shuffled, then the boundaries of the (now contiguous) query ids."""
    query, relevance, score = shape.query, shape.relevance, shape.score
    if shape.kind == "shuffled":
        order = np.argsort(query, kind="stable")
        query, relevance, score = query[order], relevance[order], score[order]
    return Grouped(relevance, score, limit_kernel.offsets_from_sorted_query(query))


def limit(data: Grouped, k: Ks) -> np.ndarray:
    return limit_kernel.ndcg_grouped(data.offsets, data.relevance, data.score, np.asarray(cutoffs(k), np.int64))


@dataclass
class Dense:
    relevance: np.ndarray
    score: np.ndarray


def dense(shape: Shape) -> Dense:
    """The (queries x docs) matrices: reshape views of grouped rows (free); shuffled rows are sorted first."""
    assert shape.docs_per_query is not None
    relevance, score = shape.relevance, shape.score
    if shape.kind == "shuffled":
        order = np.argsort(shape.query, kind="stable")
        relevance, score = relevance[order], score[order]
    return Dense(relevance.reshape(-1, shape.docs_per_query), score.reshape(-1, shape.docs_per_query))


def sklearn_ndcg(data: Dense, k: Ks) -> list[float]:
    from sklearn.metrics import ndcg_score

    return [float(ndcg_score(data.relevance, data.score, k=c)) for c in cutoffs(k)]


def dropin_ndcg(data: Dense, k: Ks) -> list[float]:
    """The package's scikit-learn drop-in on the same dense arrays (it builds the long frame itself)."""
    from lodestar_polars.sklearn import ndcg_score

    return [float(ndcg_score(data.relevance, data.score, k=c)) for c in cutoffs(k)]


def lightgbm_prepare(shape: Shape) -> Any:
    data = group_rows(shape)
    return native_eval.lightgbm_prepare(data.relevance, data.score, np.diff(data.offsets))


def lightgbm_ndcg(dataset: Any, k: Ks) -> list[float]:
    return native_eval.lightgbm_evaluate(dataset, cutoffs(k))


def xgboost_prepare(shape: Shape) -> Any:
    data = group_rows(shape)
    return native_eval.xgboost_prepare(data.relevance, data.score, np.diff(data.offsets))


def xgboost_ndcg(matrix: Any, k: Ks) -> list[float]:
    return native_eval.xgboost_evaluate(matrix, cutoffs(k))


# dict peers: building their dicts from the long columns is their preparation
TrecDicts = tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]


def trec_dicts(shape: Shape) -> TrecDicts:
    """{query: {doc: relevance}} and {query: {doc: score}} from the long columns, rows in any order."""
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    rows = zip(
        shape.query.astype(str).tolist(), shape.doc.astype(str).tolist(), shape.relevance.tolist(),
        shape.score.tolist(), strict=True,
    )  # fmt: skip
    for query, doc, relevance, score in rows:
        if query not in qrels:
            qrels[query], run[query] = {}, {}
        qrels[query][doc] = relevance
        run[query][doc] = score
    return qrels, run


def pytrec_eval_ndcg(dicts: TrecDicts, k: Ks) -> list[float]:
    import pytrec_eval

    qrels, run = dicts
    measure = "ndcg_cut." + ",".join(str(c) for c in cutoffs(k))
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {measure}).evaluate(run)
    return [float(np.mean([v[f"ndcg_cut_{c}"] for v in per_query.values()])) for c in cutoffs(k)]


def ranx_prepare(shape: Shape) -> Any:
    from ranx import Qrels, Run

    qrels, run = trec_dicts(shape)
    return Qrels(qrels), Run(run)


def ranx_ndcg(prepared: Any, k: Ks) -> list[float]:
    from ranx import evaluate

    qrels, run = prepared
    metrics = [f"ndcg@{c}" for c in cutoffs(k)]
    means = evaluate(qrels, run, metrics, make_comparable=True)
    return [float(means)] if isinstance(means, float) else [float(means[m]) for m in metrics]


def polars_ds_ndcg(shape: Shape, k: Ks) -> list[float]:
    import polars_ds as pds  # type: ignore[import-not-found]  # optional peer, may be absent

    per_query = shape.frame.group_by("query").agg(
        pds.query_ndcg_score("relevance", "score", k=c, ignore_ties=True).alias(f"ndcg@{c}") for c in cutoffs(k)
    )
    return [float(per_query[c].mean()) for c in ndcg_columns(k)]  # type: ignore[arg-type]  # a float column


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


PREPARATION = {  # what each contender's "with prep" time adds to its evaluation call
    US: "none: takes the long frame as is (shuffled rows included)",
    NATIVE_OPTIONS: "none (gain='exponential', ties='input', no_relevant=1.0: LightGBM's and XGBoost's ndcg@k)",
    "lodestar LazyFrame": "none (frame.lazy() ... .collect())",
    "lodestar LazyFrame in-memory": "none",
    "lodestar scan_parquet streaming": "none; the call reads the Parquet file",
    "lodestar in-frame, doc=": "none (the duplicate (query, doc) check on)",
    QRELS: "none: the judgments and the run frames are given",
    KERNEL: "group offsets from the query column (grouped rows); shuffled rows: stable argsort by query + take",
    SKLEARN: "reshape views (free, equal lengths); shuffled rows: stable argsort by query + take + reshape",
    "lodestar sklearn drop-in": "as scikit-learn (it builds the long frame itself inside the call)",
    LIGHTGBM: "group rows (as the kernel) + lgb.Dataset(...).construct(); eval = Booster (ideal DCGs) + eval_train",
    XGBOOST: "group rows (as the kernel) + xgb.DMatrix(...); eval = Booster + eval_set (first call on the DMatrix)",
    "pytrec_eval": "building {query: {doc: relevance}} and {query: {doc: score}} from the long columns",
    "ranx": "the same dicts + ranx Qrels(...) and Run(...)",
    "polars-ds query_ndcg_score": "none: group_by('query').agg(...) on the frame",
}


def all_contenders() -> dict[str, list[Contender]]:
    """The contenders of each kind of shape."""
    pds_error = import_error("polars_ds")
    pds_ties = None if pds_error else polars_ds_tie_averaged_error()
    exact = 1e-9
    us = Contender(US, lodestar_dataframe, peer=False, note="default engine (streaming)")
    native_options = Contender(NATIVE_OPTIONS, lodestar_native_options, peer=False, note="anchor row", reference=None)
    kernel = Contender(KERNEL, limit, group_rows, peer=False, note="fused numba pass", tolerance=exact)
    sklearn = Contender(SKLEARN, sklearn_ndcg, dense, needs_dense, note="one call per k", tolerance=exact)
    natives = [
        Contender(
            LIGHTGBM, lightgbm_ndcg, lightgbm_prepare, lambda s, k: import_error("lightgbm"),
            note="vs native options", reference=NATIVE_OPTIONS, tolerance=exact,
        ),
        Contender(
            XGBOOST, xgboost_ndcg, xgboost_prepare, lambda s, k: import_error("xgboost"),
            note="vs native options; scores stored as float32", reference=NATIVE_OPTIONS,
        ),
    ]  # fmt: skip
    dict_peers = [
        Contender(
            "pytrec_eval", pytrec_eval_ndcg, trec_dicts, lambda s, k: import_error("pytrec_eval"),
            note="ties by docno, not averaged",
        ),
        Contender("ranx", ranx_ndcg, ranx_prepare, lambda s, k: import_error("ranx"), note="ties by input order"),
        Contender(
            "polars-ds query_ndcg_score", polars_ds_ndcg, applies=lambda s, k: pds_error,
            note="ignore_ties=True: its tie-averaged mode fails" + (f" ({pds_ties.split(':')[0]})" if pds_ties else ""),
        ),
    ]  # fmt: skip
    grouped = [
        us,
        Contender("lodestar LazyFrame", lodestar_lazy, peer=False, note=".collect() default engine", tolerance=exact),
        Contender(
            "lodestar LazyFrame in-memory", lodestar_lazy_in_memory, peer=False, note='engine="in-memory"',
            tolerance=exact,
        ),
        Contender(
            "lodestar scan_parquet streaming", lodestar_scan_parquet, peer=False, note="includes reading Parquet",
            tolerance=exact,
        ),
        native_options,
        kernel,
        sklearn,
        Contender(
            "lodestar sklearn drop-in", dropin_ndcg, dense, needs_dense, peer=False, note="one call per k",
            tolerance=exact,
        ),
        *natives,
        *dict_peers,
    ]  # fmt: skip
    qrels = [
        Contender(US, lodestar_dataframe, peer=False, note="in-frame: relevance beside the score"),
        Contender(
            "lodestar in-frame, doc=", lodestar_in_frame_doc, peer=False, note="in-frame with doc=", tolerance=1e-12
        ),
        Contender(QRELS, lodestar_qrels, split_qrels, peer=False, note="run.ndcg(qrels=, doc=)", tolerance=1e-12),
    ]
    return {
        "grouped": grouped,
        "shuffled": [us, native_options, kernel, sklearn, *natives, *dict_peers],
        "qrels": qrels,
    }


def verify_natives(shape: Shape, quick: bool) -> str:
    """Assert LightGBM's and XGBoost's means equal the package's with their options, on a 1/20 subset (the whole
    shape with --quick); XGBoost against the scores rounded to float32, as it stores them."""
    data = shape if quick else shape.head(max(1, shape.queries // 20))
    ks = FIVE_CUTOFFS
    ours = package_means(lodestar_native_options(data, ks), ks)
    as_float32 = data.frame.with_columns(pl.col("score").cast(pl.Float32).cast(pl.Float64))
    ours32 = package_means(rank_metrics(as_float32).ndcg(k=ks, gain="exponential", ties="input", no_relevant=1.0), ks)
    worst = {}
    if not import_error("lightgbm"):
        worst["LightGBM"] = max(
            abs(a - b) for a, b in zip(lightgbm_ndcg(lightgbm_prepare(data), ks), ours, strict=True)
        )
    if not import_error("xgboost"):
        theirs = xgboost_ndcg(xgboost_prepare(data), ks)
        worst["XGBoost"] = max(abs(a - b) for a, b in zip(theirs, ours32, strict=True))
    for name, difference in worst.items():
        assert difference <= 1e-9, f"{name} ndcg@{ks} differs from the package with its options by {difference:.3g}"
    return ", ".join(f"{name} {difference:.1g}" for name, difference in worst.items()) + f" ({data.queries} queries)"


# --------------------------------------------------------------------------------------------- main
@dataclass
class Row:
    shape: str
    k: str
    contender: str
    seconds: float | None  # with preparation
    peak_mb: float | None
    note: str = ""
    scaled_from: int | None = None
    agreement: float | None = None
    ratio: float | None = None
    cpu_seconds: float | None = None
    cpu_ratio: float | None = None
    eval_seconds: float | None = None  # the evaluation call alone
    eval_ratio: float | None = None


def calibrate(contender: Contender, shape: Shape, k: Ks, budget: float) -> int:
    """How many queries the peer can do within `budget` seconds (all of them if it fits).

    The probe (1000 queries, best of two runs) and the floor (2% of the queries) keep fixed per-call costs
    from being multiplied up when a peer's time is scaled from a subset.
    """
    probe = min(shape.queries, 1000)
    head = shape.head(probe)
    seconds = min(timed(lambda: contender.prepare(head), lambda data: contender.run(data, k)).seconds for _ in range(2))
    estimate = seconds * shape.queries / probe
    if estimate <= budget:
        return shape.queries
    return min(shape.queries, max(probe, shape.queries // 50, math.ceil(shape.queries * budget / estimate)))


def agreement_of(result: Any, reference: pl.DataFrame, k: Ks, queries: int) -> float | None:
    """Largest difference from the reference per-query frame: of the means, or of every query (the kernel)."""
    if isinstance(result, pl.DataFrame):
        return max(abs(a - b) for a, b in zip(package_means(result, k), package_means(reference, k), strict=True))
    if isinstance(result, np.ndarray):  # the limit kernel: every query, in query order
        ours = reference.sort("query").select(ndcg_columns(k)).to_numpy()
        return float(np.max(np.abs(result - ours)))
    if result is not None:
        expected = package_means(reference, k, queries)
        return max(abs(float(a) - b) for a, b in zip(result, expected, strict=True))
    return None


def run_prepared(contender: Contender, k: Ks, prepared: Any) -> Any:
    return contender.run(prepared, k)


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
    timings: dict[str, list[Timing]] = {c.name: [] for c, _, _ in active}
    with other_cpu() as load:
        for _ in range(repeats):
            for c, data, _ in active:
                timing = timed(partial(c.prepare, data), partial(run_prepared, c, k))
                timings[c.name].append(timing)
                if args_verbose:
                    print(
                        f"    {c.name}: {timing.seconds:.2f}s wall ({timing.eval_seconds:.2f}s eval), "
                        f"{timing.cpu:.2f}s CPU",
                        flush=True,
                    )
    for c, _data, queries in active:
        runs = timings[c.name]
        factor = shape.queries / queries
        result = runs[-1].result
        agreement = None
        if c.reference is not None:
            agreement = agreement_of(result, timings[c.reference][-1].result, k, queries)
            if c.tolerance is not None and agreement is not None:
                assert agreement <= c.tolerance, f"{c.name} on {shape.name} k={k}: Δ {agreement:.3g} vs {c.reference}"
        rows.append(
            Row(shape.name, str(k), c.name, float(np.median([t.seconds for t in runs])) * factor,
                float(max(t.peak_mb for t in runs)), c.note, queries if queries < shape.queries else None, agreement,
                cpu_seconds=float(np.median([t.cpu for t in runs])) * factor,
                eval_seconds=float(np.median([t.eval_seconds for t in runs])) * factor)
        )  # fmt: skip
    timings.clear()  # the results: free their memory before the next case
    order = [c.name for c in contenders]
    rows.sort(key=lambda r: order.index(r.contender))
    reference_row = next(r for r in rows if r.contender == US)
    for r in rows:
        if r.seconds is not None and reference_row.seconds:
            r.ratio = r.seconds / reference_row.seconds
        if r.eval_seconds is not None and reference_row.seconds:
            r.eval_ratio = r.eval_seconds / reference_row.seconds
        if r.cpu_seconds is not None and reference_row.cpu_seconds:
            r.cpu_ratio = r.cpu_seconds / reference_row.cpu_seconds
    print(
        f"  [{shape.name}, k={k}: other processes used {100 * load['other_cpu']:.0f}% of the CPU, "
        f"load1 {load['load1']:.1f}]",
        flush=True,
    )
    reference_row.note += f" [other CPU {100 * load['other_cpu']:.0f}%]"
    return rows


MEMORY_CHILD = r"""
import json, sys, time
from pathlib import Path
import polars as pl
import lodestar_polars  # registers .rank_metrics

def status(name):
    line = next(l for l in Path("/proc/self/status").read_text().splitlines() if l.startswith(name + ":"))
    return int(line.split()[1]) * 1024

mode, path = sys.argv[1], sys.argv[2]
frame = pl.read_parquet(path) if mode == "DataFrame" else None
try:
    Path("/proc/self/clear_refs").write_text("5")  # reset the peak RSS mark (VmHWM) to the current RSS
    reset = True
except OSError:
    reset = False
before = status("VmRSS")
start = time.perf_counter()
if frame is None:
    out = pl.scan_parquet(path).rank_metrics.ndcg(k=10).collect(engine="streaming")
else:
    out = frame.rank_metrics.ndcg(k=10)
seconds = time.perf_counter() - start
print(json.dumps({"before": before, "peak": status("VmHWM"), "reset": reset, "seconds": seconds,
                  "queries": out.height}))
"""


def single_plan_memory(shape: Shape) -> dict[str, Any]:
    """Peak RSS of one `ndcg(k=10)` in a fresh child process, from Parquet (scan) and on an in-memory frame,
    above the child's RSS just before the call, against the bytes of the raw columns."""
    raw = shape.frame.estimated_size()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    out: dict[str, Any] = {"shape": shape.name, "rows": shape.rows, "raw_bytes": raw}
    for mode in ("scan_parquet", "DataFrame"):
        done = subprocess.run(
            [sys.executable, "-c", MEMORY_CHILD, mode, str(shape.parquet)],
            env=env, capture_output=True, text=True, check=True,
        )  # fmt: skip
        child = json.loads(done.stdout.strip().splitlines()[-1])
        assert child["queries"] == shape.queries, child
        child["ratio"] = (child["peak"] - child["before"]) / raw
        out[mode] = child
    return out


def format_memory(memory: dict[str, Any]) -> str:
    lines = [f"single-plan peak memory, {memory['shape']} ({memory['rows']:,} rows, raw columns "
             f"{memory['raw_bytes'] / 2**20:.1f} MB), ndcg(k=10) in a fresh child process:"]  # fmt: skip
    for mode in ("scan_parquet", "DataFrame"):
        child = memory[mode]
        lines.append(
            f"  {mode}: peak RSS {child['peak'] / 2**20:.1f} MB, {child['before'] / 2**20:.1f} MB before the call "
            f"(imports{', the frame' if mode == 'DataFrame' else ''}): +{(child['peak'] - child['before']) / 2**20:.1f}"
            f" MB = {child['ratio']:.2f}x the raw columns; {child['seconds']:.2f}s"
            + ("" if child["reset"] else " (peak mark not reset: includes the set-up)")
        )
    return "\n".join(lines)


COLUMNS = [  # (title, width, right-aligned)
    ("shape", 20, False), ("k", 17, False), ("contender", 34, False), ("seconds", 8, True), ("x package", 9, True),
    ("eval s", 8, True), ("eval x", 6, True), ("CPU s", 7, True), ("CPU x", 6, True), ("peak MB", 7, True),
    ("Δ mean", 7, True), ("note", 0, False),
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
            r.shape, r.k, r.contender, show(r.seconds, ".3f"), show(r.ratio, ".2f"), show(r.eval_seconds, ".3f"),
            show(r.eval_ratio, ".2f"), show(r.cpu_seconds, ".2f"), show(r.cpu_ratio, ".2f"), show(r.peak_mb, ".0f"),
            show(r.agreement, ".0e"), note,
        ]  # fmt: skip
        lines.append(_cells(values))
    return "\n".join(lines)


def find(rows: list[Row], shape: str, k: Ks, contender: str) -> Row | None:
    return next((r for r in rows if r.shape == shape and r.k == str(k) and r.contender == contender), None)


Verdict = tuple[str, bool | None, str]  # (target, met (None: reported, no target), numbers)


def targets(rows: list[Row], shapes: list[str], quick: bool, memory: dict[str, Any] | None = None) -> list[Verdict]:
    """Each target on wall time (the verdict), with the same ratio in CPU seconds alongside."""
    out: list[Verdict] = []

    def get(shape: str, k: Ks | str, who: str) -> Row | None:
        k = str(k)
        return find(rows, shape, 10 if k == "10" else FIVE_CUTOFFS, who)

    def ratio(a: Row | None, b: Row | None) -> tuple[float, float] | None:
        if a is None or b is None or not a.seconds or not b.seconds:
            return None
        return a.seconds / b.seconds, (a.cpu_seconds or 0.0) / (b.cpu_seconds or 1.0)

    def detail(r: tuple[float, float]) -> str:
        return f"{r[0]:.2f}x wall ({r[1]:.2f}x CPU)"

    r = ratio(get("100k x 100", 10, SKLEARN), get("100k x 100", 10, US))
    if r:
        out.append(("scikit-learn / package on 100k x 100, k=10 >= 3", r[0] >= 3, detail(r)))
        out.append(
            ("scikit-learn / package on grouped rows (100k x 100, k=10) >= 4.5 (issue 11)", r[0] >= 4.5, detail(r))
        )
    r = ratio(get("shuffled 100k x 100", 10, SKLEARN), get("shuffled 100k x 100", 10, US))
    if r:
        sk = get("shuffled 100k x 100", 10, SKLEARN)
        sorting = (
            f"; its sorting {sk.seconds - sk.eval_seconds:.3f}s of {sk.seconds:.3f}s"
            if sk and sk.seconds and sk.eval_seconds
            else ""
        )
        out.append(
            ("scikit-learn (sort + reshape + call) / package on shuffled rows (100k x 100, k=10) >= 3.5 (issue 11)",
             r[0] >= 3.5, detail(r) + sorting)
        )  # fmt: skip
    r = ratio(get("100k x 100", 10, SKLEARN), get("100k x 100", 10, "lodestar sklearn drop-in"))
    if r:
        out.append(("scikit-learn / drop-in on 100k x 100, k=10 > 1", r[0] > 1, detail(r)))
    natives = (LIGHTGBM, XGBOOST)
    slower, slower_eval, compared = [], [], 0
    for row in rows:
        if row.seconds is None or row.contender.startswith(("lodestar", "limit")) or row.contender in natives:
            continue
        compared += 1
        us = get(row.shape, row.k, US)
        r = ratio(us, row)
        if r and r[0] >= 1:
            slower.append(f"{row.contender} on {row.shape} k={row.k}: package {detail(r)} its time")
        if us and us.seconds and row.eval_seconds and us.seconds >= row.eval_seconds:
            slower_eval.append(f"{row.contender} on {row.shape} k={row.k}: {us.seconds / row.eval_seconds:.2f}x")
    out.append(
        ("faster than every peer (with its preparation) on every shape; native anchors apart", not slower,
         f"{compared} peer timings; " + ("; ".join(slower) if slower else "none faster"))
    )  # fmt: skip
    out.append(
        ("faster than every peer's evaluation call alone (reported, no target)", None,
         f"{compared} peer timings; package slower than "
         + ("; ".join(slower_eval) if slower_eval else "none of them"))
    )  # fmt: skip
    for k in (10, FIVE_CUTOFFS):
        for shape in shapes:
            kernel = get(shape, k, KERNEL)
            us_row = get(shape, k, US)
            if not (kernel and us_row and us_row.seconds and kernel.seconds):
                continue
            call = kernel.eval_seconds or kernel.seconds  # results saved before the split: offsets were given
            wall = us_row.seconds / call
            numbers = (
                f"{wall:.2f}x its kernel call ({us_row.seconds:.3f}s / {call:.3f}s); "
                f"{us_row.seconds / kernel.seconds:.2f}x with its grouping"
            )
            out.append((f"package / limit kernel <= 2.5 on {shape}, k={k}", wall <= 2.5, numbers))
            bound = {"100k x 100": 2.0, "1M x 10": 3.0}.get(shape) if k == 10 else None
            if bound:
                out.append((f"package / limit kernel <= {bound:g} on {shape}, k=10 (issue 11)", wall <= bound, numbers))
    for shape in shapes:
        r = ratio(get(shape, FIVE_CUTOFFS, US), get(shape, 10, US))
        if r:
            out.append((f"five cut-offs / one cut-off <= 1.3 on {shape}", r[0] <= 1.3, detail(r)))
    for lazy in ("lodestar LazyFrame", "lodestar LazyFrame in-memory"):
        worst, where = -1.0, ""
        for row in rows:
            if row.contender == lazy and row.seconds is not None:
                r = ratio(row, get(row.shape, row.k, US))
                if r and abs(r[0] - 1) > worst:
                    worst, where = abs(r[0] - 1), f"{row.shape} k={row.k}: {detail(r)}"
        if where:
            out.append((f"DataFrame vs {lazy} within 10% (worst case)", worst <= 0.10, where))
    for shape in shapes:
        for k in (10, FIVE_CUTOFFS):
            r = ratio(get(shape, k, QRELS), get(shape, k, US))
            if r:
                doc = ratio(get(shape, k, "lodestar in-frame, doc="), get(shape, k, US))
                extra = f"; in-frame with doc= {detail(doc)}" if doc else ""
                out.append((f"qrels path / in-frame path <= 1.3 on {shape}, k={k} (issue 11)", r[0] <= 1.3,
                            detail(r) + extra))  # fmt: skip
    if memory:
        scan = memory["scan_parquet"]
        frame = memory["DataFrame"]
        out.append(
            (f"single-plan peak <= 2x the raw columns (issue: 100M rows; measured: {memory['rows']:,} rows, "
             f"{memory['shape']}, from Parquet) (issue 11)", scan["ratio"] <= 2,
             f"{scan['ratio']:.2f}x (+{(scan['peak'] - scan['before']) / 2**20:.0f} MB over "
             f"{memory['raw_bytes'] / 2**20:.0f} MB); on the in-memory frame +{frame['ratio']:.2f}x beyond the frame")
        )  # fmt: skip
    for native in natives:
        for shape in shapes:
            for k in (10, FIVE_CUTOFFS):
                theirs, ours = get(shape, k, native), get(shape, k, NATIVE_OPTIONS)
                if not (theirs and ours and ours.seconds and theirs.seconds and theirs.eval_seconds):
                    continue
                out.append(
                    (f"package (native options) / {native} on {shape}, k={k} (reported, no target)", None,
                     f"{ours.seconds / theirs.eval_seconds:.2f}x its evaluation ({ours.seconds:.3f}s / "
                     f"{theirs.eval_seconds:.3f}s), {ours.seconds / theirs.seconds:.2f}x with its preparation "
                     f"({theirs.seconds:.3f}s)")
                )  # fmt: skip
    if quick:
        out = [(f"{name} [quick scale]", ok, numbers) for name, ok, numbers in out]
    return out


def verdict_word(ok: bool | None) -> str:
    return "INFO" if ok is None else "PASS" if ok else "FAIL"


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
        "lightgbm",
        "xgboost",
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
        "lodestar_polars_from": str(Path(lodestar_polars.__file__).parent),
    }


SHAPES = [
    "100k x 100", "1M x 10", "ragged Zipf 1..1000", "ties 100k x 100", "shuffled 100k x 100", "qrels 100k x 100",
]  # fmt: skip


def print_results(rows: list[Row], shapes: list[str], quick: bool, memory: dict[str, Any] | None) -> list[Verdict]:
    print(format_table(rows))
    print('\nwhat each contender\'s preparation is ("seconds" = preparation + "eval s"):')
    for name in dict.fromkeys(r.contender for r in rows):
        print(f"  {name}: {PREPARATION.get(name, '?')}")
    if memory:
        print()
        print(format_memory(memory))
    print()
    verdicts = targets(rows, shapes, quick, memory)
    for name, ok, numbers in verdicts:
        print(f"{verdict_word(ok)}  {name}: {numbers}")
    return verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description="lodestar-polars NDCG benchmark")
    parser.add_argument("--quick", action="store_true", help="1/20 of the data, smaller peer budget")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--peer-budget", type=float, default=None, help="seconds per peer call before subsetting")
    parser.add_argument("--shapes", nargs="*", default=None, help=f"any of {SHAPES}")
    parser.add_argument("--no-memory", action="store_true", help="skip the single-plan peak memory children")
    parser.add_argument("--verbose", action="store_true", help="print every timing as it is taken")
    parser.add_argument("--table-from", type=Path, help="re-print the table and targets of a results JSON")
    args = parser.parse_args()
    if args.table_from:
        saved = json.loads(args.table_from.read_text())
        saved_rows = [Row(**r) for r in saved["rows"]]
        print_results(saved_rows, list(dict.fromkeys(r.shape for r in saved_rows)), saved["scale"] < 1,
                      saved.get("memory"))  # fmt: skip
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
    if not (import_error("lightgbm") or import_error("xgboost")):
        difference = native_eval.verify()
        print(
            f"native helpers vs evals_result of a LightGBM and an XGBoost training run: max |diff| = {difference:.2g}"
        )
        assert difference < 1e-12

    contenders = all_contenders()
    # warm up: numba compilation, imports, Polars thread pool
    for kind in contenders:
        warm = make_shape(("" if kind == "grouped" else kind + " ") + "ties 100k x 100", 0.001)
        warm.parquet = DATA / "warmup.parquet"
        warm.frame.write_parquet(warm.parquet)
        for c in contenders[kind]:
            if not c.applies(warm, 10):
                for k in (10, FIVE_CUTOFFS):
                    c.run(c.prepare(warm), k)

    names = args.shapes or SHAPES
    rows: list[Row] = []
    memory: dict[str, Any] | None = None
    started = time.perf_counter()
    for name in names:
        shape = make_shape(name, scale)
        print(f"{name}: {shape.queries} queries, {shape.rows} rows", flush=True)
        if shape.kind == "grouped":
            shape.frame.write_parquet(shape.parquet)
        if shape.kind != "qrels":
            print(f"  natives agree with the package (max |Δ mean|): {verify_natives(shape, args.quick)}", flush=True)
        for k in (10, FIVE_CUTOFFS) if shape.kind == "grouped" else (10,):
            rows += run_case(shape, k, contenders[shape.kind], args.repeats, budget)
        if name == "100k x 100" and not args.no_memory:
            memory = single_plan_memory(shape)
            print(format_memory(memory), flush=True)
        del shape
    print()
    verdicts = print_results(rows, names, args.quick, memory)
    print(f"\ntotal {time.perf_counter() - started:.0f}s; load average now {os.getloadavg()}")
    out = DATA / ("results_quick.json" if args.quick else "results.json")
    out.write_text(
        json.dumps(
            {"machine": info, "rows": [r.__dict__ for r in rows], "targets": verdicts, "scale": scale,
             "memory": memory},
            indent=1,
        )
    )  # fmt: skip
    print(f"results written to {out.relative_to(ROOT)}")


args_verbose = False

if __name__ == "__main__":
    main()
