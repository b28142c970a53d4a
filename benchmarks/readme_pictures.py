"""Write the README's "Compare systems" pictures to docs/ from the built-in example data.

    python benchmarks/readme_pictures.py [--out docs] [--queries 200]

(with the package installed, e.g. `pip install -e ".[plot]"`, or `PYTHONPATH=.` from the repository root).

Runs the chain of the README: per-query NDCG per model on `example_systems()`, `compare(...,
test="permutation")`, then the four charts of `lodestar_polars.plot`, saved as PNG through vl-convert.
Prints the comparison table (the one shown in the README).  Needs the `plot` extra.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import polars as pl

import lodestar_polars as lp
from lodestar_polars import plot
from lodestar_polars.example import example_systems

REPO_ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "docs", help="folder for the PNG files")
    parser.add_argument("--queries", type=int, default=200, help="queries in the example data")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    runs = example_systems(n_queries=args.queries)
    per_query = runs.rank_metrics.ndcg(by="model", query="query_id", k=[5, 10])
    table = lp.compare(per_query, system="model", query="query_id", baseline="bm25", test="permutation", seed=0)
    with pl.Config(tbl_cols=-1, tbl_width_chars=200, float_precision=4, tbl_hide_dataframe_shape=True):
        print(table)

    charts = {
        "compare_means.png": plot.means(table),
        "compare_per_query_delta.png": plot.per_query_delta(
            per_query, system="model", baseline="bm25", metric="ndcg@10", query="query_id"
        ),
        "compare_distribution.png": plot.distribution(per_query, system="model", metric="ndcg@10"),
        "compare_cutoff_curve.png": plot.cutoff_curve(
            runs.rank_metrics.ndcg_mean(by="model", query="query_id", k=[1, 3, 5, 10, 20]), by="model"
        ),
    }
    for name, chart in charts.items():
        chart.save(args.out / name, scale_factor=2.0)
        print(f"wrote {args.out / name}")


if __name__ == "__main__":
    main()
