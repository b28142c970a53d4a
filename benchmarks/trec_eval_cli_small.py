"""The command line's trec_eval mode on a small real run, where start-up and plan building count: robust03
(100 judged queries, a 100k-line run, ../shared/data/robust03), `-m all_trec`, each command a fresh process,
alternating, median wall and CPU seconds; every output checked against the first tree's (and the binary's).

    python benchmarks/trec_eval_cli_small.py --trees TREE [TREE ...] [--trec-eval PATH] [--runs 15]
        [--data ../shared/data/robust03]

Each TREE is a checkout whose `lodestar_polars` is put first on PYTHONPATH; the children run from a scratch
folder (`python -m` puts the working directory first on sys.path).
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from trec_eval_cli_row import timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--trees", nargs="+", required=True)
    parser.add_argument("--trec-eval", help="the trec_eval binary, timed beside the trees")
    parser.add_argument("--runs", type=int, default=15)
    default_data = Path(__file__).resolve().parents[2] / "shared" / "data" / "robust03"
    parser.add_argument("--data", type=Path, default=default_data)
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="lodestar_cli_small_")
    try:
        for name, target in (("input.uic0301.gz", "run.txt"), ("robust03_cs_qrels.txt.gz", "qrels.txt")):
            with gzip.open(args.data / name) as source, open(os.path.join(scratch, target), "wb") as sink:
                shutil.copyfileobj(source, sink)
        commands: dict[str, tuple[list[str], dict[str, str]]] = {}
        for tree in args.trees:
            env = dict(os.environ, PYTHONPATH=os.path.abspath(tree))
            command = [sys.executable, "-m", "lodestar_polars", "trec_eval", "-m", "all_trec", "qrels.txt", "run.txt"]
            commands[tree] = (command, env)
        if args.trec_eval:
            binary = [args.trec_eval, "-m", "all_trec", "qrels.txt", "run.txt"]
            commands["trec_eval binary"] = (binary, dict(os.environ))
        times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in commands}
        outputs: dict[str, bytes] = {}
        print(f"load average at the start: {os.getloadavg()[0]:.2f}")
        for _ in range(args.runs):
            for name, (command, env) in commands.items():
                wall, cpu, _, output = timed(command, env, Path(scratch))
                times[name][0].append(wall)
                times[name][1].append(cpu)
                outputs.setdefault(name, output)
                if output != outputs[name]:
                    msg = f"{name} printed different output from one run to the next"
                    raise SystemExit(msg)
        first = outputs[args.trees[0]]
        for name, (walls, cpus) in times.items():
            same = "same output" if outputs[name] == first else "DIFFERENT OUTPUT"
            print(
                f"{name}: wall {statistics.median(walls):.3f} s, CPU {statistics.median(cpus):.3f} s "
                f"(median of {args.runs}); {same} as {args.trees[0]}"
            )
        print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
