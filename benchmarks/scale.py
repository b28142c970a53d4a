"""NDCG@10 over a 100M-row hive-partitioned Parquet dataset: wall time and peak RSS.

    python benchmarks/scale.py                 # generate (once) and measure, 100M rows, 10 buckets
    python benchmarks/scale.py --rows 20000000 # smaller

Data (benchmarks/data/scale_<rows>/, gitignored): `queries = rows / 100` queries of 100 documents each;
columns query int64, relevance int8 (0..4), score float64 (uniform); hive-partitioned by
`bucket = query % buckets` (bucket=<b>/part.parquet), each file grouped by query, ids ascending.  Numpy
seed 0 + bucket, so the data is the same on every run.

Each measurement runs in a subprocess; the parent samples the RSS of that process and its children every
50 ms with psutil and kills it past --kill-gb (default 20 GB) or when the machine has less than 1.5 GB
available.  Measurements:

- `whole`: pl.scan_parquet(<dataset>/**/*.parquet, hive_partitioning=True).rank_metrics.ndcg(k=10).sink_parquet(out)
- `partitions`: the README's recipe: per bucket file, one after another, its per-query sink and its
  `ndcg_mean` in one `collect_all`, the means combined with `lodestar_polars.partitions.combine_means`;
  exact because the buckets split the queries (no query spans two files).
- `group_by baseline`: pl.scan_parquet(...).group_by("query").agg(relevance.sum(), score.sum()).sink_parquet,
  the memory of a plain streaming aggregation over the same files, for scale.

Then the per-query outputs of `whole` and `partitions` are compared.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl
import psutil

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
DOCS_PER_QUERY = 100


def dataset_dir(rows: int, buckets: int) -> Path:
    return DATA / f"scale_{rows}_{buckets}b"


def generate(rows: int, buckets: int) -> Path:
    root = dataset_dir(rows, buckets)
    done = root / "_complete"
    if done.exists():
        return root
    queries = rows // DOCS_PER_QUERY
    for bucket in range(buckets):
        rng = np.random.default_rng(bucket)
        ids = np.arange(bucket, queries, buckets, dtype=np.int64)
        n = ids.size * DOCS_PER_QUERY
        frame = pl.DataFrame(
            {
                "query": np.repeat(ids, DOCS_PER_QUERY),
                "relevance": rng.integers(0, 5, n).astype(np.int8),
                "score": rng.random(n),
            }
        )
        path = root / f"bucket={bucket}" / "part.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        frame.write_parquet(path)
        print(f"  wrote {path.relative_to(HERE.parent)} ({n} rows)", flush=True)
        del frame
    done.write_text("ok")
    return root


def worker(mode: str, root: Path, out: Path) -> None:
    import lodestar_polars  # noqa: F401  registers .rank_metrics

    out.mkdir(parents=True, exist_ok=True)
    if mode == "whole":
        lf = pl.scan_parquet(root / "**" / "*.parquet", hive_partitioning=True).drop("bucket")
        lf.rank_metrics.ndcg(k=10).sink_parquet(out / "ndcg.parquet")
    elif mode == "partitions":
        # the README's recipe: per partition, the per-query sink and the mean in one collect_all
        from lodestar_polars.partitions import combine_means

        means = []
        for part in sorted(root.glob("bucket=*/*.parquet")):
            bucket = part.parent.name.split("=")[1]
            source = pl.scan_parquet(part)
            per_query = source.rank_metrics.ndcg(k=10).sink_parquet(out / f"ndcg_bucket{bucket}.parquet", lazy=True)
            _, mean = pl.collect_all([per_query, source.rank_metrics.ndcg_mean(k=10)], engine="streaming")
            means.append(mean)
        combine_means(means).write_json(out / "mean.json")
    elif mode == "group_by":
        lf = pl.scan_parquet(root / "**" / "*.parquet", hive_partitioning=True)
        lf.group_by("query").agg(pl.col("relevance").sum(), pl.col("score").sum()).sink_parquet(out / "sums.parquet")
    else:
        raise ValueError(mode)


def measure(mode: str, root: Path, out: Path, kill_gb: float) -> dict[str, object]:
    command = [sys.executable, __file__, "--worker", mode, "--root", str(root), "--out", str(out)]
    start = time.perf_counter()
    process = subprocess.Popen(command)
    parent = psutil.Process(process.pid)
    peak, killed = 0, ""
    while process.poll() is None:
        try:
            rss = parent.memory_info().rss + sum(c.memory_info().rss for c in parent.children(recursive=True))
        except psutil.NoSuchProcess:
            break
        peak = max(peak, rss)
        available = psutil.virtual_memory().available
        if rss > kill_gb * 2**30 or available < 1.5 * 2**30:
            killed = f"killed at {rss / 2**30:.1f} GB RSS ({available / 2**30:.1f} GB available)"
            process.kill()
            break
        time.sleep(0.05)
    process.wait()
    seconds = time.perf_counter() - start
    return {
        "mode": mode,
        "seconds": round(seconds, 2),
        "peak_rss_gb": round(peak / 2**30, 3),
        "returncode": process.returncode,
        "killed": killed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="100M-row NDCG run over hive-partitioned Parquet")
    parser.add_argument("--rows", type=int, default=100_000_000)
    parser.add_argument("--buckets", type=int, default=10)
    parser.add_argument("--kill-gb", type=float, default=20.0)
    parser.add_argument("--modes", nargs="*", default=["group_by", "partitions", "whole"])
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, Path(args.root), Path(args.out))
        return

    print(f"free disk: {psutil.disk_usage(str(HERE)).free / 2**30:.0f} GB; load {os.getloadavg()}", flush=True)
    start = time.perf_counter()
    root = generate(args.rows, args.buckets)
    print(f"data ready in {time.perf_counter() - start:.0f}s", flush=True)
    on_disk = sum(p.stat().st_size for p in root.rglob("*.parquet"))
    raw = args.rows * (8 + 1 + 8)  # query int64 + relevance int8 + score float64
    info = {
        "rows": args.rows,
        "queries": args.rows // DOCS_PER_QUERY,
        "buckets": args.buckets,
        "parquet_gb": round(on_disk / 2**30, 3),
        "raw_columns_gb": round(raw / 2**30, 3),
        "nproc": os.cpu_count(),
        "polars": pl.__version__,
    }
    print(json.dumps(info), flush=True)
    results = []
    outputs = DATA / "scale_out"
    for mode in args.modes:
        load = os.getloadavg()[0]
        result = measure(mode, root, outputs / mode, args.kill_gb)
        result["load1_before"] = round(load, 1)
        result["peak_vs_raw"] = round(float(result["peak_rss_gb"]) / info["raw_columns_gb"], 2)  # type: ignore[arg-type]
        results.append(result)
        print(json.dumps(result), flush=True)
    if {"whole", "partitions"} <= set(args.modes) and all(r["returncode"] == 0 for r in results):
        whole = pl.read_parquet(outputs / "whole" / "ndcg.parquet")
        parts = pl.read_parquet(outputs / "partitions" / "*.parquet").sort("query")
        joined = whole.join(parts, on="query", how="full", suffix="_part")
        difference = (joined["ndcg@10"] - joined["ndcg@10_part"]).abs().max()
        info["whole_vs_partitions_max_abs_diff"] = difference
        info["queries_out"] = [whole.height, parts.height]
        info["mean_ndcg@10"] = whole["ndcg@10"].mean()
        info["partitions_combined_mean_ndcg@10"] = pl.read_json(outputs / "partitions" / "mean.json")["ndcg@10"].item()
        print(f"whole vs partition-wise: {whole.height} / {parts.height} queries, max |diff| {difference}")
    (DATA / f"scale_results_{args.rows}.json").write_text(json.dumps({"info": info, "results": results}, indent=1))


if __name__ == "__main__":
    main()
