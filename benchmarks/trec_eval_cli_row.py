"""`lodestar-polars trec_eval` against the real trec_eval binary on the same files: wall and CPU seconds and peak
RSS of each command as a fresh process, and whether their outputs are the same bytes.

    python benchmarks/trec_eval_cli_row.py --trec-eval PATH [--queries 10000] [--docs 1000] [--repeats 3]
        [--measures all_trec] [--trees TREE ...]

Data (numpy seed 0, written once to benchmarks/data/, gitignored): a run of `queries` x `docs` lines (doc ids
drawn from 50 x `docs` per query, duplicates dropped, scores rounded to 3 decimals, so tied), and judgments of
a fifth of the retrieved documents plus 20 unretrieved ones per query, levels 0..2.  The default is about 10M
run lines and 2.2M judgment lines.

Each repeat runs the binary, then `python -m lodestar_polars trec_eval -m MEASURES qrels run` once per tree
(`--trees`: package trees put first on the child's PYTHONPATH, to compare two checkouts; default: the tree
holding this script; each child runs in benchmarks/data/, so that `python -m` finds no other package first),
alternating.  Each child's wall time, its CPU time (user + system) and its peak RSS come from `os.wait4`; the
files are written by a child process and the parent imports neither numpy nor Polars, so it stays small (a
child's peak counts the pages it was forked with).  Printed: the median of each, the ratio to the binary,
and the load average before and after.  The binary runs on one core; the CLI uses every core (Polars).

Build the binary from trec_eval 10's source (`../shared/reference/trec_eval-10.0-source.tar.gz`: untar, `make`).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"


def trec_files(queries: int, docs: int) -> tuple[Path, Path]:
    run, qrels = DATA / f"cli_run_{queries}x{docs}.txt", DATA / f"cli_qrels_{queries}x{docs}.txt"
    if run.exists() and qrels.exists():
        return run, qrels
    import numpy as np  # here: the parent, whose pages its children are forked with, imports neither
    import polars as pl

    DATA.mkdir(exist_ok=True)
    rng = np.random.default_rng(0)
    rows = queries * docs
    retrieved = pl.DataFrame(
        {"query": np.repeat(np.arange(queries), docs), "doc": rng.integers(0, 50 * docs, rows)}
    ).unique(maintain_order=True)
    retrieved = retrieved.with_columns(score=pl.Series(np.round(rng.random(retrieved.height), 3)))
    retrieved.select(pl.format("{} Q0 doc{} 0 {} sys", "query", "doc", "score")).write_csv(
        run, include_header=False, quote_style="never"
    )
    unretrieved = pl.DataFrame(
        {"query": np.repeat(np.arange(queries), 20), "doc": rng.integers(50 * docs, 60 * docs, queries * 20)}
    )
    judged = pl.concat([retrieved.sample(fraction=0.2, seed=1).select("query", "doc"), unretrieved])
    judged = judged.unique(subset=["query", "doc"], maintain_order=True)
    judged = judged.with_columns(relevance=pl.Series(rng.integers(0, 3, judged.height)))
    judged.select(pl.format("{} 0 doc{} {}", "query", "doc", "relevance")).write_csv(
        qrels, include_header=False, quote_style="never"
    )
    return run, qrels


def timed(command: list[str], env: dict[str, str] | None = None, cwd: Path = DATA) -> tuple[float, float, float, bytes]:
    """Wall s, CPU s (user + system) and peak RSS (GB) of one child, and its standard output.  The child runs
    in `cwd` (the data folder): `python -m` puts its working folder first on the path, which must not hold a
    package."""
    # standard error to a file, not a pipe: reading one pipe to its end while the child fills the other would
    # block both
    with tempfile.TemporaryFile() as errors:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors, env=env, cwd=cwd)
        assert process.stdout is not None
        out = process.stdout.read()
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            errors.seek(0)
            sys.exit(f"{' '.join(command)} failed: {errors.read().decode(errors='replace')}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1e6, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--trec-eval", required=True, help="the trec_eval binary")
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=1_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--measures", default="all_trec", help="trec_eval's -m (default all_trec)")
    parser.add_argument("--trees", nargs="+", default=[str(HERE.parent)], help="package trees to time")
    parser.add_argument("--write-files", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write_files:  # in a child: the parent stays small, so its children's peak RSS is their own
        trec_files(args.queries, args.docs)
        return
    sizes = ["--queries", str(args.queries), "--docs", str(args.docs)]
    subprocess.run([sys.executable, __file__, "--trec-eval", args.trec_eval, *sizes, "--write-files"], check=True)
    run, qrels = trec_files(args.queries, args.docs)
    print(f"run {run.name} ({run.stat().st_size / 1e6:.0f} MB), judgments {qrels.name}; -m {args.measures}")
    print(f"load average at the start: {os.getloadavg()[0]:.2f}")
    binary = [args.trec_eval, "-m", args.measures, str(qrels), str(run)]
    contenders: dict[str, tuple[list[str], dict[str, str] | None]] = {"trec_eval binary": (binary, None)}
    for tree in args.trees:
        path = os.pathsep.join(part for part in [tree, os.environ.get("PYTHONPATH", "")] if part)
        command = [sys.executable, "-m", "lodestar_polars", "trec_eval", "-m", args.measures, str(qrels), str(run)]
        contenders[f"lodestar-polars ({tree})"] = (command, {**os.environ, "PYTHONPATH": path})
    results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in contenders}
    outputs: dict[str, bytes] = {}
    for _ in range(args.repeats):
        for name, (command, env) in contenders.items():
            wall, cpu, peak, out = timed(command, env)
            results[name].append((wall, cpu, peak))
            outputs[name] = out
    reference = outputs["trec_eval binary"]
    base_wall = statistics.median(r[0] for r in results["trec_eval binary"])
    base_cpu = statistics.median(r[1] for r in results["trec_eval binary"])
    print(f"{'command':60s} {'wall s':>7s} {'CPU s':>7s} {'peak GB':>8s} {'wall x':>7s} {'CPU x':>6s}  output")
    for name, rows in results.items():
        wall, cpu = statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)
        peak = max(r[2] for r in rows)
        same = "same bytes" if outputs[name] == reference else "DIFFERS"
        print(f"{name:60s} {wall:7.2f} {cpu:7.2f} {peak:8.2f} {wall / base_wall:7.2f} {cpu / base_cpu:6.2f}  {same}")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
