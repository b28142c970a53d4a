"""`lodestar_polars.plot`: every chart renders to PNG through vl-convert; encodings and data are checked.

The data behind each chart is checked against numpy computed here from the input frame (sorted deltas,
linear-interpolation quartiles, Tukey whiskers), never against the plotting code itself.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import lodestar_polars as lp
from lodestar_polars import plot
from lodestar_polars.example import SYSTEM_SIGNAL, example_systems

alt = pytest.importorskip("altair")
vl_convert = pytest.importorskip("vl_convert")
pytest.importorskip("scipy")

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def per_model(frame: pl.DataFrame, *, mean: bool, k: list[int | None]) -> pl.DataFrame:
    parts = []
    for model in SYSTEM_SIGNAL:
        metrics = frame.filter(pl.col("model") == model).rank_metrics
        part = metrics.ndcg_mean(query="query_id", k=k) if mean else metrics.ndcg(query="query_id", k=k)
        parts.append(part.select(pl.lit(model).alias("model"), pl.all()))
    return pl.concat(parts)


@pytest.fixture(scope="module")
def runs() -> pl.DataFrame:
    return example_systems(n_queries=60, seed=3)


@pytest.fixture(scope="module")
def per_query(runs: pl.DataFrame) -> pl.DataFrame:
    return per_model(runs, mean=False, k=[5, 10])


def spec_and_values(chart: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    spec = chart.to_dict()
    data = spec["data"]
    values = spec["datasets"][data["name"]] if "name" in data else data["values"]
    return spec, values


def assert_renders_png(chart: Any) -> None:
    png = vl_convert.vegalite_to_png(chart.to_json())
    assert png.startswith(PNG_MAGIC)
    assert len(png) > 2000


def test_example_systems_is_deterministic_ragged_and_has_ties() -> None:
    frame = example_systems(n_queries=40, seed=1)
    assert frame.schema == pl.Schema(
        {"model": pl.String, "query_id": pl.Int64, "doc_id": pl.String, "relevance": pl.Int8, "score": pl.Float64}
    )
    assert frame.equals(example_systems(n_queries=40, seed=1))
    lengths = frame.filter(pl.col("model") == "bm25").group_by("query_id").len()["len"]
    assert lengths.n_unique() > 1
    assert frame.group_by("model", "query_id", "score").len().filter(pl.col("len") > 1).height > 0
    # bm25 is the weakest model on the default data (what the README shows)
    means = per_model(example_systems(), mean=True, k=[10]).sort("ndcg@10")
    assert means["model"][0] == "bm25"


def test_cutoff_curve_encodings_data_and_png(runs: pl.DataFrame) -> None:
    means = per_model(runs, mean=True, k=[1, 3, 5, 10, None])
    chart = plot.cutoff_curve(means.lazy(), by="model")
    assert isinstance(chart, alt.Chart)
    spec, values = spec_and_values(chart)
    assert spec["mark"]["type"] == "line"
    assert spec["mark"]["point"] is True
    encoding = spec["encoding"]
    assert (encoding["x"]["field"], encoding["x"]["type"]) == ("k", "quantitative")
    assert (encoding["y"]["field"], encoding["y"]["type"]) == ("value", "quantitative")
    assert (encoding["color"]["field"], encoding["color"]["title"]) == ("system", "model")
    # one point per (model, cut-off); the whole-list column "ndcg" has no k and is left out
    assert len(values) == 3 * 4
    for point in values:
        assert point["value"] == means.filter(pl.col("model") == point["system"])[f"ndcg@{point['k']}"].item()
    assert_renders_png(chart)


def test_cutoff_curve_needs_one_metric_with_cutoffs(runs: pl.DataFrame) -> None:
    means = per_model(runs, mean=True, k=[5, 10]).with_columns(pl.col("ndcg@5").alias("dcg@5"))
    with pytest.raises(ValueError, match=r"found \['dcg', 'ndcg'\].*pass metric="):
        plot.cutoff_curve(means, by="model")
    assert len(spec_and_values(plot.cutoff_curve(means, by="model", metric="dcg"))[1]) == 3
    with pytest.raises(ValueError, match=r"needs columns named metric@k for one metric; found none"):
        plot.cutoff_curve(means.select("model", "queries"), by="model")
    with pytest.raises(ValueError, match=r"column 'run' not found in the means frame"):
        plot.cutoff_curve(means, by="run", metric="ndcg")


def test_measures_with_options_and_recall_levels_through_compare_report_and_the_plots(runs: pl.DataFrame) -> None:
    """rbp(p=0.8)@k and iprec@level, as `evaluate` names them: compare, report and the per-query plots take
    them; cutoff_curve takes the cut-offs of rbp(p=0.8) and refuses recall levels, saying they are not cut-offs."""
    options: dict[str, Any] = {"query": "query_id", "by": "model", "doc": "doc_id", "ties": "doc"}
    names = ["rbp(p=0.8)@5", "iprec@0.5"]
    per_query = runs.rank_metrics.evaluate(names, **options)
    table = lp.compare(per_query, system="model", query="query_id", baseline="bm25")
    assert table["metric"].unique(maintain_order=True).to_list() == names
    assert "| rbp(p=0.8)@5 | iprec@0.5 |" in lp.report(table)
    assert {point["metric"] for point in spec_and_values(plot.means(table))[1]} == set(names)
    for name in names:
        chart = plot.per_query_delta(per_query, system="model", baseline="bm25", metric=name, query="query_id")
        assert spec_and_values(chart)[1]
        assert spec_and_values(plot.distribution(per_query, system="model", metric=name))[1]
    means = runs.rank_metrics.evaluate_mean(["rbp(p=0.8)@1", "rbp(p=0.8)@5", "iprec@0.2", "iprec@0.5"], **options)
    values = spec_and_values(plot.cutoff_curve(means, by="model"))[1]
    assert sorted({point["k"] for point in values}) == [1, 5]
    with pytest.raises(ValueError, match=r"found none .*; iprec@0\.2, iprec@0\.5: at a recall level or a multiplier"):
        plot.cutoff_curve(means.select("model", "iprec@0.2", "iprec@0.5"), by="model")


@pytest.mark.parametrize("metrics", [["ndcg@10"], ["ndcg@5", "ndcg@10"]])
def test_means_marks_baseline_and_significance(per_query: pl.DataFrame, metrics: list[str]) -> None:
    table = lp.compare(per_query, system="model", query="query_id", metrics=metrics, baseline="bm25")
    chart = plot.means(table, alpha=0.05)
    spec, values = spec_and_values(chart)
    layers = spec["layer"] if len(metrics) == 1 else spec["spec"]["layer"]
    if len(metrics) == 1:
        assert isinstance(chart, alt.LayerChart)
    else:
        assert isinstance(chart, alt.FacetChart)
        assert spec["facet"]["row"]["field"] == "metric"
    rule, point = layers
    assert rule["mark"]["type"] == "rule"
    assert (rule["encoding"]["x"]["field"], rule["encoding"]["x2"]["field"]) == ("ci_low", "ci_high")
    assert point["mark"]["type"] == "point"
    assert point["encoding"]["x"]["field"] == "mean"
    assert point["encoding"]["color"]["field"] == "status"
    assert point["encoding"]["y"]["title"] == "model"
    assert len(values) == 3 * len(metrics)
    for entry in values:
        got = table.filter((pl.col("metric") == entry["metric"]) & (pl.col("model") == entry["system"])).row(
            0, named=True
        )
        if entry["system"] == "bm25":
            expected = "baseline"
        elif got["p_adjusted"] < 0.05:
            expected = "better" if got["delta"] > 0 else "worse"
        else:
            expected = "not significant"
        assert entry["status"] == expected
        assert (entry["mean"], entry["ci_low"], entry["ci_high"]) == (got["mean"], got["ci_low"], got["ci_high"])
    assert_renders_png(chart)


@pytest.mark.parametrize(
    ("names", "words"),
    [
        (["ndcg@5", "ap"], "mean"),
        (["num_ret", "num_rel_ret"], "sum over queries"),
        (["gm_map", "gm_bpref"], "geometric mean"),
        (["ap", "num_ret", "gm_map"], "summary over queries"),
    ],
)
def test_means_names_the_summary_compare_took(runs: pl.DataFrame, names: list[str], words: str) -> None:
    """compare's "mean" column holds each measure's summary (counts summed, gm_* geometric): a chart of several
    metrics titles its axis and itself by it, not "mean" for a sum."""
    options: dict[str, Any] = {"query": "query_id", "by": "model", "doc": "doc_id", "ties": "doc"}
    table = lp.compare(runs.rank_metrics.evaluate(names, **options), system="model", query="query_id", baseline="bm25")
    spec = plot.means(table).to_dict()
    assert spec["spec"]["layer"][0]["encoding"]["x"]["title"] == words
    assert spec["title"] == f"{words} and interval; significant: p_adjusted < 0.05"


def test_means_rejects_other_frames(per_query: pl.DataFrame) -> None:
    with pytest.raises(ValueError, match=r"takes the DataFrame lodestar_polars.compare returns"):
        plot.means(per_query)
    table = lp.compare(per_query, system="model", query="query_id", baseline="bm25")
    with pytest.raises(ValueError, match=r"alpha must be strictly between 0 and 1"):
        plot.means(table, alpha=5)


def test_per_query_delta_shows_the_sorted_differences(per_query: pl.DataFrame) -> None:
    chart = plot.per_query_delta(per_query.lazy(), system="model", baseline="bm25", metric="ndcg@10", query="query_id")
    assert isinstance(chart, alt.Chart)
    spec, values = spec_and_values(chart)
    assert spec["mark"]["type"] == "bar"
    encoding = spec["encoding"]
    assert (encoding["x"]["field"], encoding["x"]["type"]) == ("rank", "ordinal")
    assert (encoding["y"]["field"], encoding["y"]["title"]) == ("delta", "ndcg@10 - bm25")
    assert encoding["color"]["field"] == "outcome"
    assert encoding["row"]["field"] == "system"
    by_query = per_query.sort("query_id")
    baseline = by_query.filter(pl.col("model") == "bm25")["ndcg@10"].to_numpy()
    for model in ["dense", "hybrid"]:
        compared = by_query.filter(pl.col("model") == model)["ndcg@10"].to_numpy()
        deltas = compared - baseline
        # the documented rule: values within 1e-12 (relative to the larger, absolute below 1) are equal
        deltas[np.abs(deltas) <= 1e-12 * np.maximum(1.0, np.maximum(np.abs(compared), np.abs(baseline)))] = 0.0
        expected = np.sort(deltas)[::-1]
        label = f"{model}: {(deltas > 0).sum()} wins, {(deltas == 0).sum()} ties, {(deltas < 0).sum()} losses (of 60)"
        bars = [entry for entry in values if entry["system"] == label]
        assert [entry["rank"] for entry in bars] == list(range(1, 61))
        np.testing.assert_array_equal([entry["delta"] for entry in bars], expected)
        for entry in bars:
            assert entry["outcome"] == ("win" if entry["delta"] > 0 else "loss" if entry["delta"] < 0 else "tie")
    assert_renders_png(chart)


def test_per_query_delta_samples_long_curves_at_even_ranks(per_query: pl.DataFrame) -> None:
    chart = plot.per_query_delta(
        per_query, system="model", baseline="bm25", metric="ndcg@5", query="query_id", max_points=10
    )
    _, values = spec_and_values(chart)
    hybrid = [entry for entry in values if entry["system"].startswith("hybrid")]
    assert [entry["rank"] for entry in hybrid] == [int(r) + 1 for r in np.linspace(0, 59, 10).round()]
    by_query = per_query.sort("query_id")
    deltas = (
        by_query.filter(pl.col("model") == "hybrid")["ndcg@5"].to_numpy()
        - by_query.filter(pl.col("model") == "bm25")["ndcg@5"].to_numpy()
    )
    assert (hybrid[0]["delta"], hybrid[-1]["delta"]) == (deltas.max(), deltas.min())


def test_per_query_delta_errors(per_query: pl.DataFrame) -> None:
    with pytest.raises(ValueError, match=r"baseline 'tfidf' is not a value of column 'model'"):
        plot.per_query_delta(per_query, system="model", baseline="tfidf", metric="ndcg@10", query="query_id")
    # the frame's query column is query_id: the message says to pass query= and names it
    message = (
        "query column 'query' not found in the per-query frame; columns: ['model', 'query_id', 'ndcg@5', 'ndcg@10']. "
        "Pass query= naming the column(s) the systems are paired on, as given to compare (here: query='query_id')."
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        plot.per_query_delta(per_query, system="model", baseline="bm25", metric="ndcg@10")
    with pytest.raises(ValueError, match=r"max_points must be an integer >= 2"):
        plot.per_query_delta(
            per_query, system="model", baseline="bm25", metric="ndcg@10", query="query_id", max_points=1
        )


def test_distribution_box_plot_statistics(per_query: pl.DataFrame) -> None:
    chart = plot.distribution(per_query, system="model", metric="ndcg@10")
    assert isinstance(chart, alt.LayerChart)
    spec, values = spec_and_values(chart)
    marks = [layer["mark"]["type"] for layer in spec["layer"]]
    assert marks == ["rule", "bar", "tick", "point"]
    whisker, box, median, mean = spec["layer"]
    assert (whisker["encoding"]["x"]["field"], whisker["encoding"]["x2"]["field"]) == ("whisker_low", "whisker_high")
    assert (box["encoding"]["x"]["field"], box["encoding"]["x2"]["field"]) == ("q1", "q3")
    assert median["encoding"]["x"]["field"] == "median"
    assert mean["encoding"]["x"]["field"] == "mean"
    assert len(values) == 3
    for entry in values:
        sample = per_query.filter(pl.col("model") == entry["system"])["ndcg@10"].to_numpy()
        q1, q2, q3 = np.percentile(sample, [25, 50, 75])  # numpy's default: linear interpolation
        inside = sample[(sample >= q1 - 1.5 * (q3 - q1)) & (sample <= q3 + 1.5 * (q3 - q1))]
        assert entry["q1"] == pytest.approx(q1, abs=1e-12)
        assert entry["median"] == pytest.approx(q2, abs=1e-12)
        assert entry["q3"] == pytest.approx(q3, abs=1e-12)
        assert entry["mean"] == pytest.approx(sample.mean(), abs=1e-12)
        assert (entry["whisker_low"], entry["whisker_high"]) == (inside.min(), inside.max())
        assert entry["queries"] == sample.size
    assert_renders_png(chart)


def test_charts_save_to_png_and_svg(per_query: pl.DataFrame, tmp_path: Path) -> None:
    chart = plot.distribution(per_query, system="model", metric="ndcg@5")
    chart.save(tmp_path / "box.png")
    chart.save(tmp_path / "box.svg")
    assert (tmp_path / "box.png").read_bytes().startswith(PNG_MAGIC)
    assert "<svg" in (tmp_path / "box.svg").read_text()


# a script, stylesheet or module the page would fetch: <script src="https://...">, <link href="http://...">, an
# import from a URL
REMOTE_RESOURCE = re.compile(
    r"""<(?:script|link)[^>]*(?:src|href)\s*=\s*["']?(?:https?:)?//|import[^;]*["']https?://"""
)


def test_a_chart_saved_as_html_with_inline_renders_with_no_network(per_query: pl.DataFrame, tmp_path: Path) -> None:
    """`chart.save("x.html", inline=True)` (the plot module's and the gallery's advice) writes Vega, Vega-Lite and
    vega-embed into the page; Altair's default page loads them from a CDN and shows nothing offline."""
    means = per_model(example_systems(n_queries=60, seed=3), mean=True, k=[1, 3, 5, 10])
    table = lp.compare(per_query, system="model", query="query_id", baseline="bm25")
    charts = {
        "means": plot.means(table),
        "per_query_delta": plot.per_query_delta(
            per_query, system="model", baseline="bm25", metric="ndcg@10", query="query_id"
        ),
        "distribution": plot.distribution(per_query, system="model", metric="ndcg@10"),
        "cutoff_curve": plot.cutoff_curve(means, by="model"),
    }
    for name, chart in charts.items():
        chart.save(tmp_path / f"{name}.html", inline=True)
        page = (tmp_path / f"{name}.html").read_text(encoding="utf-8")
        assert REMOTE_RESOURCE.search(page) is None, name
        assert "vegaEmbed" in page and len(page) > 100_000, name  # the libraries themselves are in the page
    # the control: Altair's default page fetches its scripts, and the pattern sees it
    charts["means"].save(tmp_path / "default.html")
    assert REMOTE_RESOURCE.search((tmp_path / "default.html").read_text(encoding="utf-8")) is not None


def test_missing_altair_names_the_plot_extra(per_query: pl.DataFrame, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "altair", None)
    with pytest.raises(ImportError, match=r'pip install "lodestar-polars\[plot\]"'):
        plot.distribution(per_query, system="model", metric="ndcg@5")


# -- input validation, as `compare` validates its input --------------------------------------------------------


def test_per_query_delta_refuses_a_repeated_system_and_query(per_query: pl.DataFrame) -> None:
    """Before: the join with the baseline fanned out, so the repeated query counted twice in the bars."""
    repeated = pl.concat([per_query, per_query.filter((pl.col("model") == "dense") & (pl.col("query_id") == 7))])
    message = (
        r"^1 \(system, query\) pair\(s\) have several rows: system 'dense', query 7 has 2; "
        r"per_query_delta needs one row per system and query"
    )
    with pytest.raises(ValueError, match=message):
        plot.per_query_delta(repeated, system="model", baseline="bm25", metric="ndcg@10", query="query_id")
    with pytest.raises(ValueError, match=r"system 'dense', query 7 has 2; compare needs one row"):
        lp.compare(repeated, system="model", baseline="bm25", query="query_id", metrics=["ndcg@10"], test="t")


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_plots_refuse_a_nan_or_infinite_value(per_query: pl.DataFrame, runs: pl.DataFrame, bad: float) -> None:
    is_bad = (pl.col("model") == "hybrid") & (pl.col("query_id") == 5)
    broken = per_query.with_columns(pl.when(is_bad).then(bad).otherwise(pl.col("ndcg@10")).alias("ndcg@10"))
    first_for = r"ndcg@10' has 1 NaN or infinite value\(s\), the first for system 'hybrid'"
    with pytest.raises(ValueError, match=rf"^metric column '{first_for}, query 5$"):
        plot.per_query_delta(broken, system="model", baseline="bm25", metric="ndcg@10", query="query_id")
    with pytest.raises(ValueError, match=rf"^metric column '{first_for}$"):
        plot.distribution(broken, system="model", metric="ndcg@10")
    means = per_model(runs, mean=True, k=[5, 10])
    broken_means = means.with_columns(
        pl.when(pl.col("model") == "hybrid").then(bad).otherwise("ndcg@10").alias("ndcg@10")
    )
    with pytest.raises(ValueError, match=rf"^mean column '{first_for}$"):
        plot.cutoff_curve(broken_means, by="model")


def test_cutoff_curve_refuses_a_per_query_frame(per_query: pl.DataFrame) -> None:
    """Before: one point per query, all drawn under "mean ndcg"."""
    with pytest.raises(
        ValueError, match=r"^cutoff_curve takes a mean frame, one row per system: model 'bm25' has 60 rows"
    ):
        plot.cutoff_curve(per_query, by="model")
    with pytest.raises(ValueError, match=r"^cutoff_curve takes a mean frame: one row without by=, got 180 rows"):
        plot.cutoff_curve(per_query.lazy())


@pytest.mark.parametrize("name", ["value", "k", "column", "system"])
def test_cutoff_curve_takes_a_system_column_named_like_its_own_columns(runs: pl.DataFrame, name: str) -> None:
    """Before: DuplicateError for "value" and "column"; for "k" the cut-offs replaced the system names."""
    means = per_model(runs, mean=True, k=[1, 5, 10])
    expected = spec_and_values(plot.cutoff_curve(means, by="model"))[1]
    chart = plot.cutoff_curve(means.rename({"model": name}), by=name)
    spec, values = spec_and_values(chart)
    assert values == expected
    assert spec["encoding"]["color"]["title"] == name


@pytest.mark.parametrize("name", ["median", "mean", "q1", "queries", "inside", "value"])
def test_distribution_takes_a_system_column_named_like_its_own_columns(per_query: pl.DataFrame, name: str) -> None:
    """Before: DuplicateError (the quartile columns and the system column shared a name)."""
    expected = spec_and_values(plot.distribution(per_query, system="model", metric="ndcg@10"))[1]
    got = spec_and_values(plot.distribution(per_query.rename({"model": name}), system=name, metric="ndcg@10"))[1]
    assert got == expected


@pytest.mark.parametrize("name", ["__value", "__baseline", "system"])
def test_per_query_delta_takes_columns_named_like_its_own(per_query: pl.DataFrame, name: str) -> None:
    options = {"baseline": "bm25", "query": "query_id"}
    expected = spec_and_values(plot.per_query_delta(per_query, system="model", metric="ndcg@10", **options))[1]
    as_system = per_query.rename({"model": name})
    assert spec_and_values(plot.per_query_delta(as_system, system=name, metric="ndcg@10", **options))[1] == expected
    as_metric = per_query.rename({"ndcg@10": name})
    got = spec_and_values(plot.per_query_delta(as_metric, system="model", metric=name, **options))[1]
    assert [(v["rank"], v["delta"]) for v in got] == [(v["rank"], v["delta"]) for v in expected]


def test_plots_refuse_a_column_given_two_roles(per_query: pl.DataFrame) -> None:
    with pytest.raises(ValueError, match=r"^column 'model' is both the system column and a metric column"):
        plot.distribution(per_query, system="model", metric="model")
    with pytest.raises(ValueError, match=r"^column 'query_id' is both the query column and a metric column"):
        plot.per_query_delta(per_query, system="model", baseline="bm25", metric="query_id", query="query_id")
