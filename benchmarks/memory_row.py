"""Single-plan peak memory: one call's peak RSS above the process's RSS before it, against the raw columns.

    python benchmarks/memory_row.py [--queries 100000] [--docs 100] [--calls ndcg evaluate]
                                    [--engines auto streaming in-memory] [--sources frame parquet]

Data (as benchmarks/run.py's "100k x 100" shape): numpy seed 0, `queries` x `docs` rows grouped by query,
query Int64 (ids 0..Q-1), relevance Int8 in 0..4, score Float64 uniform in [0, 1) (almost no ties; with
`--decimals 2` the score is rounded to 2 decimals: many ties, the tie-averaging path), written once to
benchmarks/data/memory_<queries>x<docs>[_d<decimals>].parquet (gitignored).

"Raw columns" are the bytes of the query, relevance and score columns as Polars holds them in memory:
`frame.estimated_size()` of the frame `read_parquet` returns (17 bytes a row: 8 + 1 + 8; 162.1 MB at 10M
rows).

Each measurement runs in a fresh child process (`python -c CHILD ...`), one per (source, engine, call):
- source "frame": the child reads the Parquet file into a DataFrame first (its RSS is then counted in the
  baseline); "parquet": the call reads the file itself through `pl.scan_parquet(path)`;
- engine "auto" is the call a user writes: `frame.rank_metrics.ndcg(k=10)` (the DataFrame namespace collects
  with Polars' default engine) or `pl.scan_parquet(path).rank_metrics.ndcg(k=10).collect()`; "streaming" and
  "in-memory" collect the LazyFrame plan (`frame.lazy()` or the scan) with `collect(engine=...)`;
- call "ndcg" is `ndcg(k=10)` with the defaults (ties="average"); "evaluate" is `evaluate` with the 7 core
  measures at 3 cut-offs: ndcg, dcg, p, r, ap, rr, success at k = 5, 10, 20 (21 columns, as
  benchmarks/evaluate_row.py).
After its imports (and reading the frame), the child resets the kernel's peak RSS mark (`echo 5 >
/proc/self/clear_refs`), reads VmRSS ("before"), runs the call once and reads VmHWM ("peak", tracked by the
kernel, not sampled).  The ratio printed is (peak - before) / raw bytes.  The allocator keeps freed pages, so
the frame source's baseline may include pages the call then reuses: its ratio can only understate.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
CUTOFFS = (5, 10, 20)
MEASURES = [f"{m}@{k}" for m in ("ndcg", "dcg", "p", "r", "ap", "rr", "success") for k in CUTOFFS]

CHILD = r"""
import json, os, sys, time
from pathlib import Path
import polars as pl
import lodestar_polars  # registers .rank_metrics

def status(name):
    line = next(l for l in Path("/proc/self/status").read_text().splitlines() if l.startswith(name + ":"))
    return int(line.split()[1]) * 1024

source, engine, call, path, measures = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5].split(",")
frame = pl.read_parquet(path) if source == "frame" else None
Path("/proc/self/clear_refs").write_text("5")  # reset the peak RSS mark (VmHWM) to the current RSS
before = status("VmRSS")
wall, cpu = time.perf_counter(), time.process_time()

def namespace(target):
    return target.rank_metrics.ndcg(k=10) if call == "ndcg" else target.rank_metrics.evaluate(measures)

if source == "frame" and engine == "auto":
    out = namespace(frame)
else:
    lazy = frame.lazy() if source == "frame" else pl.scan_parquet(path)
    out = namespace(lazy).collect() if engine == "auto" else namespace(lazy).collect(engine=engine)
print(json.dumps({"before": before, "peak": status("VmHWM"), "seconds": time.perf_counter() - wall,
                  "cpu": time.process_time() - cpu, "queries": out.height}))
"""

COMMANDS = {
    ("frame", "auto"): "frame.rank_metrics.{call}",
    ("frame", "streaming"): 'frame.lazy().rank_metrics.{call}.collect(engine="streaming")',
    ("frame", "in-memory"): 'frame.lazy().rank_metrics.{call}.collect(engine="in-memory")',
    ("parquet", "auto"): "pl.scan_parquet(path).rank_metrics.{call}.collect()",
    ("parquet", "streaming"): 'pl.scan_parquet(path).rank_metrics.{call}.collect(engine="streaming")',
    ("parquet", "in-memory"): 'pl.scan_parquet(path).rank_metrics.{call}.collect(engine="in-memory")',
}
CALLS = {"ndcg": "ndcg(k=10)", "evaluate": "evaluate(7 measures x k=5,10,20)"}


def frame(queries: int, docs: int, decimals: int | None) -> pl.DataFrame:
    rng = np.random.default_rng(0)
    rows = queries * docs
    relevance = rng.integers(0, 5, rows).astype(np.int8)
    score = rng.random(rows)
    return pl.DataFrame(
        {
            "query": np.repeat(np.arange(queries, dtype=np.int64), docs),
            "relevance": relevance,
            "score": score if decimals is None else score.round(decimals),
        }
    )


def measure(source: str, engine: str, call: str, path: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, source, engine, call, str(path), ",".join(MEASURES)],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--decimals", type=int, default=None, help="round the scores (ties)")
    parser.add_argument("--calls", nargs="+", default=["ndcg", "evaluate"], choices=list(CALLS))
    engines = ["auto", "streaming", "in-memory"]
    parser.add_argument("--engines", nargs="+", default=["auto", "streaming"], choices=engines)
    parser.add_argument("--sources", nargs="+", default=["frame", "parquet"], choices=["frame", "parquet"])
    parser.add_argument("--repeats", type=int, default=1, help="children per row; the largest peak is shown")
    args = parser.parse_args()
    df = frame(args.queries, args.docs, args.decimals)
    raw = df.estimated_size()
    DATA.mkdir(exist_ok=True)
    suffix = "" if args.decimals is None else f"_d{args.decimals}"
    path = DATA / f"memory_{args.queries}x{args.docs}{suffix}.parquet"
    if not path.exists():
        df.write_parquet(path)
    del df
    print(
        f"{args.queries:,} queries x {args.docs} docs = {args.queries * args.docs:,} rows; raw columns "
        f"(query Int64, relevance Int8, score Float64; estimated_size) {raw / 2**20:.1f} MB; Parquet "
        f"{path.stat().st_size / 2**20:.1f} MB; load average {os.getloadavg()[0]:.1f}; polars {pl.__version__}",
        flush=True,
    )
    header = (
        f"| {'call':<33} | {'source':<7} | {'engine':<9} | before MB | peak MB | +MB | x raw | wall s | CPU s "
        "| +MB of each child |"
    )
    print(header)
    print("|" + "|".join("-" * (len(cell)) for cell in header.split("|")[1:-1]) + "|")
    for call in args.calls:
        for source in args.sources:
            for engine in args.engines:
                runs = [measure(source, engine, call, path) for _ in range(args.repeats)]
                worst = max(runs, key=lambda r: r["peak"] - r["before"])
                assert worst["queries"] == args.queries, worst
                extra = worst["peak"] - worst["before"]
                print(
                    f"| {CALLS[call]:<33} | {source:<7} | {engine:<9} | {worst['before'] / 2**20:9.0f} | "
                    f"{worst['peak'] / 2**20:7.0f} | {extra / 2**20:3.0f} | {extra / raw:5.2f} | "
                    f"{worst['seconds']:6.2f} | {worst['cpu']:5.2f} | "
                    + ", ".join(f"{(r['peak'] - r['before']) / 2**20:.0f}" for r in runs)
                    + " |",
                    flush=True,
                )
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    print("commands:")
    for (source, engine), command in COMMANDS.items():
        if source in args.sources and engine in args.engines:
            print(f"  {source}, {engine}: {command.format(call='ndcg(k=10)')}")


if __name__ == "__main__":
    main()
