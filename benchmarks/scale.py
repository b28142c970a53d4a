"""NDCG@10 over 100M rows from Parquet: the single plan against `partitions.sink`, wall time, CPU time, peak RSS.

    python benchmarks/scale.py                          # 100M rows, sink with 16 partitions
    python benchmarks/scale.py --rows 10000000          # smaller
    python benchmarks/scale.py --modes sink --partitions 8 32

Data (benchmarks/data/scale_<rows>/, gitignored, generated once): `rows / 100` queries of 100 documents;
columns query int64, relevance int8 (0..4), score float64 (uniform); 10 Parquet files of consecutive
queries (numpy seed = file index, so the data is the same on every run).  Nothing is pre-partitioned:
`sink` does its own bucketing.

Every measurement runs once, in its own child process (`--worker`), which reports its peak RSS (`VmHWM` from
/proc/self/status: the peak of that process image, not the parent's) and its CPU time (user + system, all
threads; robust to other load on a shared machine).  Modes:

- `single`: the single plan writing the per-query rows,
  `pl.scan_parquet(files).rank_metrics.ndcg(k=10).sink_parquet(out)`.
- `single+mean`: the single plan giving what `sink` gives, the per-query rows and the mean, in one
  `pl.collect_all([per_query.sink_parquet(out, lazy=True), ndcg_mean(k=10)])`.
- `sink`: `lodestar_polars.partitions.sink(pl.scan_parquet(files), out, partitions=P, k=10)` (per-query rows
  and the mean), once per `--partitions` value.

Then the outputs are compared (per-query values and means of `single` / `single+mean` against `sink`), and
everything goes to benchmarks/data/scale_results_<rows>.json with the load average before and after.
A child is killed (and reported so) when the machine has less than 1.5 GB available.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
DOCS_PER_QUERY = 100
FILES = 10
K = 10
MIN_AVAILABLE_GB = 1.5


def generate(rows: int) -> Path:
    root = DATA / f"scale_{rows}"
    done = root / "_complete"
    if done.exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    queries = rows // DOCS_PER_QUERY
    bounds = np.linspace(0, queries, FILES + 1).astype(np.int64)
    for index in range(FILES):
        rng = np.random.default_rng(index)
        ids = np.arange(bounds[index], bounds[index + 1], dtype=np.int64)
        n = ids.size * DOCS_PER_QUERY
        pl.DataFrame(
            {
                "query": np.repeat(ids, DOCS_PER_QUERY),
                "relevance": rng.integers(0, 5, n).astype(np.int8),
                "score": rng.random(n),
            }
        ).write_parquet(root / f"part-{index:02d}.parquet")
        print(f"  wrote part-{index:02d}.parquet ({n} rows)", flush=True)
    done.write_text("ok")
    return root


def peak_rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def available_bytes() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no MemAvailable in /proc/meminfo")


def worker(mode: str, root: Path, out: Path, partitions: int) -> None:
    import lodestar_polars  # noqa: F401  registers .rank_metrics
    from lodestar_polars.partitions import sink

    source = pl.scan_parquet(root / "*.parquet")
    start, cpu = time.perf_counter(), os.times()
    if mode == "single":
        source.rank_metrics.ndcg(k=K).sink_parquet(out / "per_query.parquet")
        mean = None
    elif mode == "single+mean":
        per_query = source.rank_metrics.ndcg(k=K).sink_parquet(out / "per_query.parquet", lazy=True)
        _, mean = pl.collect_all([per_query, source.rank_metrics.ndcg_mean(k=K)], engine="streaming")
    elif mode == "sink":
        mean = sink(source, out / "per_query", partitions=partitions, k=K)
    else:
        raise ValueError(mode)
    seconds, after = time.perf_counter() - start, os.times()
    if mean is not None:
        mean.write_json(out / "mean.json")
    report = {
        "seconds": round(seconds, 2),
        "cpu_seconds": round(after.user - cpu.user + after.system - cpu.system, 2),
        "peak_rss_gb": round(peak_rss_bytes() / 2**30, 3),
    }
    print(json.dumps(report), flush=True)


def measure(mode: str, root: Path, out: Path, partitions: int) -> dict[str, object]:
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    command = [sys.executable, __file__, "--worker", mode, "--root", str(root), "--out", str(out)]
    command += ["--partitions", str(partitions)]
    load_before = os.getloadavg()
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    killed = ""
    while child.poll() is None:  # the machine is shared: stop before it runs out of memory
        available = available_bytes()
        if available < MIN_AVAILABLE_GB * 2**30:
            child.kill()
            killed = f"killed: {available / 2**30:.1f} GB left available on the machine"
            break
        time.sleep(0.1)
    stdout, stderr = child.communicate()
    name = mode if mode != "sink" else f"sink({partitions})"
    if child.returncode != 0:
        print(stderr, file=sys.stderr)
        return {"mode": name, "returncode": child.returncode, "killed": killed}
    result: dict[str, object] = {"mode": name}
    result |= json.loads(stdout.strip().splitlines()[-1])
    result["load_before"] = [round(x, 2) for x in load_before]
    result["load_after"] = [round(x, 2) for x in os.getloadavg()]
    return result


def compare(outputs: Path, results: list[dict[str, object]]) -> dict[str, object]:
    """Largest per-query and mean differences between the single plan and each sink run."""
    checks: dict[str, object] = {}
    single = outputs / "single" / "per_query.parquet"
    if not single.exists():
        return checks
    reference = pl.read_parquet(single)
    reference_mean = None
    if (outputs / "single+mean" / "mean.json").exists():
        reference_mean = pl.read_json(outputs / "single+mean" / "mean.json")
    for result in results:
        name = str(result["mode"])
        if not name.startswith("sink"):
            continue
        folder = outputs / name
        joined = reference.join(pl.read_parquet(folder / "per_query"), on="query", how="full", suffix="_sink")
        column = f"ndcg@{K}"
        entry: dict[str, object] = {
            "queries": [reference.height, joined[f"{column}_sink"].count()],
            "per_query_max_abs_diff": (joined[column] - joined[f"{column}_sink"]).abs().max(),
        }
        mean = pl.read_json(folder / "mean.json")
        entry["mean"] = mean[column].item()
        if reference_mean is not None:
            entry["single_mean"] = reference_mean[column].item()
            entry["mean_abs_diff"] = abs(mean[column].item() - reference_mean[column].item())
        checks[name] = entry
    return checks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000_000)
    parser.add_argument("--partitions", type=int, nargs="*", default=[16])
    parser.add_argument("--modes", nargs="*", default=["single", "single+mean", "sink"])
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, Path(args.root), Path(args.out), args.partitions[0])
        return

    print(f"load {os.getloadavg()}; uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout}")
    start = time.perf_counter()
    root = generate(args.rows)
    info: dict[str, object] = {
        "rows": args.rows,
        "queries": args.rows // DOCS_PER_QUERY,
        "parquet_gb": round(sum(p.stat().st_size for p in root.glob("*.parquet")) / 2**30, 3),
        "raw_columns_gb": round(args.rows * (8 + 1 + 8) / 2**30, 3),
        "nproc": os.cpu_count(),
        "polars": pl.__version__,
        "data_seconds": round(time.perf_counter() - start, 1),
        "load_start": [round(x, 2) for x in os.getloadavg()],
    }
    print(json.dumps(info), flush=True)
    outputs = DATA / "scale_out"
    results = []
    for mode in args.modes:
        for partitions in args.partitions if mode == "sink" else [0]:
            name = mode if mode != "sink" else f"sink({partitions})"
            result = measure(mode, root, outputs / name, partitions)
            results.append(result)
            print(json.dumps(result), flush=True)
    by_mode = {str(r["mode"]): r for r in results if "seconds" in r}
    for name, result in by_mode.items():
        for reference in ("single", "single+mean"):
            if name.startswith("sink") and reference in by_mode:
                base = by_mode[reference]
                for key in ("seconds", "cpu_seconds", "peak_rss_gb"):
                    ratio = float(result[key]) / float(base[key])  # type: ignore[arg-type]  # numbers from the worker
                    result[f"{key}_vs_{reference}"] = round(ratio, 2)
        print(name, {k: v for k, v in result.items() if "_vs_" in k})
    info["checks"] = compare(outputs, results)
    info["load_end"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(info["checks"]), f"load at the end {info['load_end']}")
    (DATA / f"scale_results_{args.rows}.json").write_text(json.dumps({"info": info, "results": results}, indent=1))


if __name__ == "__main__":
    main()
