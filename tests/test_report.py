"""`lodestar_polars.report`: a comparison rendered as a paper's table, against hand-written expected text.

The comparisons are either made by `compare` on frames whose p-values follow by hand (the exact permutation
test on 6 queries) or built by hand with the columns `compare` returns, to pin the means and p-values.
"""

from __future__ import annotations

import sys
from html.parser import HTMLParser

import polars as pl
import pytest

import lodestar_polars as lp
from lodestar_polars.compare import COLUMNS, Correction
from lodestar_polars.example import example_systems
from lodestar_polars.report import ReportFormat

QUERIES = [1, 2, 3, 4, 5, 6]
# b beats a on every query, c loses to a on every query (ndcg@10); b and c both beat a everywhere on recall,
# with the same mean 0.85
NDCG = {
    "a": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
    "b": [0.3, 0.3, 0.5, 0.5, 0.7, 0.7],
    "c": [0.05, 0.1, 0.25, 0.3, 0.45, 0.5],
}
RECALL = {"a": [0.2, 0.3, 0.2, 0.3, 0.2, 0.3], "b": [0.9, 0.8, 0.9, 0.8, 0.9, 0.8], "c": [0.8, 0.9, 0.8, 0.9, 0.8, 0.9]}


def six_query_comparison(correction: Correction) -> pl.DataFrame:
    """The exact permutation test on 6 queries: of the 2**6 sign vectors only the observed one (all deltas of
    one sign) reaches |mean delta|, and its mirror image: two-sided p = 2 / 64 = 0.03125 for b and c on both
    measures.  Holm over the 2 systems: the smaller p times 2, then max(that, the larger p times 1): 0.0625."""
    per_query = pl.DataFrame(
        {
            "model": [name for name in NDCG for _ in QUERIES],
            "query": QUERIES * 3,
            "ndcg@10": [value for values in NDCG.values() for value in values],
            "recall": [value for values in RECALL.values() for value in values],
        }
    )
    comparison = lp.compare(per_query, system="model", baseline="a", test="permutation", correction=correction, seed=0)
    compared = comparison.filter(pl.col("p_value").is_not_null())
    assert compared["p_value"].to_list() == pytest.approx([0.03125] * 4, abs=1e-15)
    expected_adjusted = 0.0625 if correction == "holm" else 0.03125
    assert compared["p_adjusted"].to_list() == pytest.approx([expected_adjusted] * 4, abs=1e-15)
    return comparison


def hand_built(
    rows: list[tuple[str, object, float, float | None, float | None]], system: str = "model"
) -> pl.DataFrame:
    """A frame with the columns `compare` returns from (metric, system, mean, delta, p_adjusted) rows; the
    baseline's rows have delta and p None; p_value equals p_adjusted (as with correction=None)."""
    columns: dict[str, list[object]] = {name: [] for name in COLUMNS}
    for metric, name, mean, delta, p_adjusted in rows:
        baseline = delta is None
        values: dict[str, object] = {
            "metric": metric,
            "system": name,
            "queries": 50,
            "mean": mean,
            "ci_low": mean - 0.01,
            "ci_high": mean + 0.01,
            "delta": delta,
            "delta_ci_low": None if delta is None else delta - 0.01,
            "delta_ci_high": None if delta is None else delta + 0.01,
            "p_value": p_adjusted,
            "p_adjusted": p_adjusted,
            "effect_size": None if baseline else 0.5,
            "wins": None if baseline else 30,
            "ties": None if baseline else 5,
            "losses": None if baseline else 15,
        }
        for column, value in values.items():
            columns[column].append(value)
    dtypes = {"metric": pl.String, "queries": pl.UInt32, "wins": pl.UInt32, "ties": pl.UInt32, "losses": pl.UInt32}
    frame = pl.DataFrame(
        [
            pl.Series(column, data, dtype=dtypes.get(column, pl.Float64))
            for column, data in columns.items()
            if column != "system"
        ]
    )
    return frame.insert_column(1, pl.Series(system, columns["system"]))


# --- Markdown and LaTeX: hand-written expected text ---------------------------------------------------


def test_markdown_marks_better_and_worse_systems_without_a_correction() -> None:
    got = lp.report(six_query_comparison(None), test="permutation", correction=None)
    assert got == (
        "| model | ndcg@10 | recall |\n"
        "|:---|---:|---:|\n"
        "| a | 0.3500 | 0.2500 |\n"
        "| b | **0.5000**† | **0.8500**† |\n"
        "| c | 0.2750‡ | **0.8500**† |\n"
        "\n"
        "† significantly better than a, ‡ significantly worse (two-sided paired permutation test, p < 0.05, "
        "not adjusted for multiple comparisons). Bold: the best value of each measure."
    )


def test_latex_marks_better_and_worse_systems_without_a_correction() -> None:
    got = lp.report(six_query_comparison(None), test="permutation", correction=None, format="latex")
    assert got == (
        "\\begin{table}\n"
        "\\centering\n"
        "\\caption{$^{\\dagger}$ significantly better than a, $^{\\ddagger}$ significantly worse (two-sided paired "
        "permutation test, $p < 0.05$, not adjusted for multiple comparisons). Bold: the best value of each measure.}\n"
        "\\begin{tabular}{lrr}\n"
        "\\toprule\n"
        "model & ndcg@10 & recall \\\\\n"
        "\\midrule\n"
        "a & 0.3500 & 0.2500 \\\\\n"
        "b & \\textbf{0.5000}$^{\\dagger}$ & \\textbf{0.8500}$^{\\dagger}$ \\\\\n"
        "c & 0.2750$^{\\ddagger}$ & \\textbf{0.8500}$^{\\dagger}$ \\\\\n"
        "\\bottomrule\n"
        "\\end{tabular}\n"
        "\\end{table}"
    )


def test_holm_correction_lifts_the_p_values_above_alpha_and_the_marks_go() -> None:
    comparison = six_query_comparison("holm")
    assert lp.report(comparison, test="permutation", correction="holm") == (
        "| model | ndcg@10 | recall |\n"
        "|:---|---:|---:|\n"
        "| a | 0.3500 | 0.2500 |\n"
        "| b | **0.5000** | **0.8500** |\n"
        "| c | 0.2750 | **0.8500** |\n"
        "\n"
        "No system differs significantly from a (two-sided paired permutation test, Holm-adjusted p < 0.05). "
        "Bold: the best value of each measure."
    )
    # 0.0625 < 0.1: the marks come back at a looser level
    assert lp.report(comparison, test="permutation", correction="holm", alpha=0.1, measures="ndcg@10") == (
        "| model | ndcg@10 |\n"
        "|:---|---:|\n"
        "| a | 0.3500 |\n"
        "| b | **0.5000**† |\n"
        "| c | 0.2750‡ |\n"
        "\n"
        "† significantly better than a, ‡ significantly worse (two-sided paired permutation test, "
        "Holm-adjusted p < 0.1). Bold: the best value of each measure."
    )


def test_ties_for_best_are_compared_as_printed_and_all_bold() -> None:
    comparison = hand_built(
        [
            ("ndcg@10", "x", 0.71834, 0.1, 0.001),
            ("ndcg@10", "y", 0.71826, 0.1, 0.2),
            ("ndcg@10", "base", 0.61834, None, None),
            ("ap", "y", 0.40006, 0.1, 0.01),
            ("ap", "x", 0.40004, 0.1, 0.01),
            ("ap", "base", 0.30000, None, None),
        ]
    )
    # 0.71834 and 0.71826 both print as 0.7183 (4 digits): both bold; 0.40004 and 0.40006 print as 0.4000
    # and 0.4001 at 4 digits and as 0.40004 and 0.40006 at 5 (one best), as 0.40 at 2 (a tie)
    assert lp.report(comparison, test="t", correction="bonferroni", measures=["ndcg@10", "ap"]) == (
        "| model | ndcg@10 | ap |\n"
        "|:---|---:|---:|\n"
        "| base | 0.6183 | 0.3000 |\n"
        "| x | **0.7183**† | 0.4000† |\n"
        "| y | **0.7183** | **0.4001**† |\n"
        "\n"
        "† significantly better than base (two-sided paired Student's t-test, Bonferroni-adjusted p < 0.05). "
        "Bold: the best value of each measure."
    )
    assert lp.report(comparison, test="t", correction="bonferroni", measures="ap", digits=5, format="latex") == (
        "\\begin{table}\n"
        "\\centering\n"
        "\\caption{$^{\\dagger}$ significantly better than base (two-sided paired Student's t-test, "
        "Bonferroni-adjusted $p < 0.05$). Bold: the best value of each measure.}\n"
        "\\begin{tabular}{lr}\n"
        "\\toprule\n"
        "model & ap \\\\\n"
        "\\midrule\n"
        "base & 0.30000 \\\\\n"
        "y & \\textbf{0.40006}$^{\\dagger}$ \\\\\n"
        "x & 0.40004$^{\\dagger}$ \\\\\n"
        "\\bottomrule\n"
        "\\end{tabular}\n"
        "\\end{table}"
    )
    two_digits = lp.report(comparison, test="t", correction="bonferroni", measures="ap", digits=2)
    assert "| x | **0.40**† |" in two_digits
    assert "| y | **0.40**† |" in two_digits


def test_only_worse_systems_and_a_baseline_per_measure_in_the_legend() -> None:
    comparison = hand_built(
        [
            ("ndcg", "old", 0.5, -0.2, 0.01),
            ("ndcg", "new", 0.7, None, None),
            ("rr", "new", 0.6, -0.1, 0.3),
            ("rr", "old", 0.7, None, None),
        ]
    )
    assert lp.report(comparison, test="wilcoxon", correction=None, digits=1) == (
        "| model | ndcg | rr |\n"
        "|:---|---:|---:|\n"
        "| new | **0.7** | 0.6 |\n"
        "| old | 0.5‡ | **0.7** |\n"
        "\n"
        "‡ significantly worse than the measure's baseline (two-sided Wilcoxon signed-rank test, p < 0.05, "
        "not adjusted for multiple comparisons). Baselines: new (ndcg), old (rr). Bold: the best value of each measure."
    )


def test_names_are_escaped_for_markdown_and_latex() -> None:
    comparison = hand_built(
        [("P_10 & more", "bm25|rm3", 0.5, 0.1, 0.5), ("P_10 & more", "run_1%", 0.4, None, None)], system="run#"
    )
    assert lp.report(comparison, test="bootstrap", correction="holm") == (
        "| run# | P\\_10 & more |\n"
        "|:---|---:|\n"
        "| run\\_1% | 0.4000 |\n"
        "| bm25\\|rm3 | **0.5000** |\n"
        "\n"
        "No system differs significantly from run\\_1% (two-sided paired bootstrap test, Holm-adjusted p < 0.05). "
        "Bold: the best value of each measure."
    )
    latex = lp.report(comparison, test="bootstrap", correction="holm", format="latex")
    assert "run\\# & P\\_10 \\& more \\\\\n" in latex
    assert "run\\_1\\% & 0.4000 \\\\\n" in latex
    assert "bm25\\textbar{}rm3 & \\textbf{0.5000} \\\\\n" in latex
    assert "\\caption{No system differs significantly from run\\_1\\% (two-sided paired bootstrap test" in latex


def test_systems_of_any_dtype_print_as_text() -> None:
    comparison = hand_built([("m", 2, 0.5, 0.1, 0.01), ("m", 1, 0.4, None, None)])
    assert lp.report(comparison, test="t", correction="holm").splitlines()[2:4] == [
        "| 1 | 0.4000 |",
        "| 2 | **0.5000**† |",
    ]


def test_significant_means_p_adjusted_strictly_below_alpha() -> None:
    comparison = hand_built(
        [("m", "at", 0.6, 0.2, 0.05), ("m", "below", 0.5, 0.1, 0.0499), ("m", "base", 0.4, None, None)]
    )
    assert lp.report(comparison, test="t", correction="holm").splitlines()[2:5] == [
        "| base | 0.4000 |",
        "| at | **0.6000** |",
        "| below | 0.5000† |",
    ]


def test_a_system_without_a_row_for_a_measure_gets_an_empty_cell() -> None:
    comparison = six_query_comparison(None).filter(~((pl.col("metric") == "recall") & (pl.col("model") == "c")))
    assert lp.report(comparison, test="permutation", correction=None).splitlines()[2:5] == [
        "| a | 0.3500 | 0.2500 |",
        "| b | **0.5000**† | **0.8500**† |",
        "| c | 0.2750‡ |  |",
    ]


# --- HTML: great-tables' table, structurally --------------------------------------------------------------


class TableCells(HTMLParser):
    """The header labels, the body cells (text, bold?) and the source notes of a great-tables table."""

    def __init__(self) -> None:
        super().__init__()
        self.headers: list[str] = []
        self.rows: list[list[tuple[str, bool]]] = []
        self.notes: list[str] = []
        self.table_classes: list[str] = []
        self._cell: tuple[str, bool] | None = None
        self._where = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        classes = (attributes.get("class") or "").split()
        if tag == "table":
            self.table_classes = classes
        elif tag == "th" and "gt_col_heading" in classes:
            self._where, self._cell = "header", ("", False)
        elif tag == "tr" and self._where != "note":
            self._where = "body" if "gt_col_headings" not in classes else self._where
        elif tag == "td" and "gt_row" in classes:
            self._where, self._cell = "body", ("", "font-weight: bold" in (attributes.get("style") or ""))
            if not self.rows or len(self.rows[-1]) == len(self.headers):
                self.rows.append([])
        elif tag == "td" and "gt_sourcenote" in classes:
            self._where, self._cell = "note", ("", False)

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell = (self._cell[0] + data, self._cell[1])

    def handle_endtag(self, tag: str) -> None:
        if self._cell is None or tag not in ("th", "td"):
            return
        text, bold = self._cell[0].strip(), self._cell[1]
        if self._where == "header":
            self.headers.append(text)
        elif self._where == "body":
            self.rows[-1].append((text, bold))
        else:
            self.notes.append(text)
        self._cell = None


def parse(html: str) -> TableCells:
    cells = TableCells()
    cells.feed(html)
    return cells


def test_html_is_a_great_tables_table_with_marks_bold_best_and_legend() -> None:
    pytest.importorskip("great_tables")
    html = lp.report(six_query_comparison(None), test="permutation", correction=None, format="html")
    table = parse(html)
    assert "gt_table" in table.table_classes
    assert table.headers == ["model", "ndcg@10", "recall"]
    assert table.rows == [
        [("a", False), ("0.3500", False), ("0.2500", False)],
        [("b", False), ("0.5000†", True), ("0.8500†", True)],
        [("c", False), ("0.2750‡", False), ("0.8500†", True)],
    ]
    assert table.notes == [
        "† significantly better than a, ‡ significantly worse (two-sided paired permutation test, p < 0.05, "
        "not adjusted for multiple comparisons). Bold: the best value of each measure."
    ]


def test_html_escapes_names() -> None:
    pytest.importorskip("great_tables")
    comparison = hand_built([("m", "<b>new</b>", 0.5, 0.1, 0.01), ("m", "old & tired", 0.4, None, None)])
    html = lp.report(comparison, test="t", correction="holm", format="html")
    assert "<b>new</b>" not in html
    assert [row[0][0] for row in parse(html).rows] == ["old & tired", "<b>new</b>"]


def test_html_without_great_tables_names_the_report_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "great_tables", None)
    with pytest.raises(ImportError, match=r"great-tables.*pip install 'lodestar-polars\[report\]'"):
        lp.report(six_query_comparison(None), test="permutation", correction=None, format="html")
    # the text formats need no great-tables
    assert lp.report(six_query_comparison(None), test="permutation", correction=None).startswith("| model |")


# --- the README's comparison in the three formats ---------------------------------------------------------


@pytest.fixture(scope="module")
def readme_comparison() -> pl.DataFrame:
    runs = example_systems()
    per_query = runs.rank_metrics.ndcg(query="query_id", by="model", k=[5, 10])
    return lp.compare(per_query, system="model", query="query_id", baseline="bm25", test="permutation", seed=0)


README_LEGEND = (
    "† significantly better than bm25 (two-sided paired permutation test, Holm-adjusted p < 0.05). "
    "Bold: the best value of each measure."
)


@pytest.mark.parametrize("format", ["markdown", "latex", "html"])
def test_the_readme_comparison_renders_in_every_format(readme_comparison: pl.DataFrame, format: ReportFormat) -> None:
    # the means and p_adjusted of the README's printed table: hybrid 0.7183 / 0.7644 (p 0.0004), dense
    # 0.6500 / 0.7086 (p 0.2252 / 0.0892), bm25 0.6289 / 0.6865
    if format == "html":
        pytest.importorskip("great_tables")
    got = lp.report(readme_comparison, test="permutation", correction="holm", format=format)
    if format == "markdown":
        assert got == (
            "| model | ndcg@5 | ndcg@10 |\n"
            "|:---|---:|---:|\n"
            "| bm25 | 0.6289 | 0.6865 |\n"
            "| hybrid | **0.7183**† | **0.7644**† |\n"
            "| dense | 0.6500 | 0.7086 |\n"
            "\n" + README_LEGEND
        )
    elif format == "latex":
        assert got == (
            "\\begin{table}\n"
            "\\centering\n"
            "\\caption{$^{\\dagger}$ significantly better than bm25 (two-sided paired permutation test, "
            "Holm-adjusted $p < 0.05$). Bold: the best value of each measure.}\n"
            "\\begin{tabular}{lrr}\n"
            "\\toprule\n"
            "model & ndcg@5 & ndcg@10 \\\\\n"
            "\\midrule\n"
            "bm25 & 0.6289 & 0.6865 \\\\\n"
            "hybrid & \\textbf{0.7183}$^{\\dagger}$ & \\textbf{0.7644}$^{\\dagger}$ \\\\\n"
            "dense & 0.6500 & 0.7086 \\\\\n"
            "\\bottomrule\n"
            "\\end{tabular}\n"
            "\\end{table}"
        )
    else:
        table = parse(got)
        assert table.headers == ["model", "ndcg@5", "ndcg@10"]
        assert table.rows == [
            [("bm25", False), ("0.6289", False), ("0.6865", False)],
            [("hybrid", False), ("0.7183†", True), ("0.7644†", True)],
            [("dense", False), ("0.6500", False), ("0.7086", False)],
        ]
        assert table.notes == [README_LEGEND]


# --- the test and the correction compare recorded --------------------------------------------------------


def test_the_test_and_correction_come_from_the_comparison() -> None:
    comparison = six_query_comparison("holm")
    expected = lp.report(comparison, test="permutation", correction="holm")
    assert lp.report(comparison) == expected
    assert expected.endswith(
        "(two-sided paired permutation test, Holm-adjusted p < 0.05). Bold: the best value of each measure."
    )
    # the rows of a comparison keep its record
    assert lp.report(comparison.filter(pl.col("metric") == "recall").sort("mean")) == (
        "| model | recall |\n"
        "|:---|---:|\n"
        "| a | 0.2500 |\n"
        "| b | **0.8500** |\n"
        "| c | **0.8500** |\n"
        "\n"
        "No system differs significantly from a (two-sided paired permutation test, Holm-adjusted p < 0.05). "
        "Bold: the best value of each measure."
    )
    assert lp.report(six_query_comparison(None), alpha=0.04).startswith(
        "| model | ndcg@10 | recall |\n|:---|---:|---:|\n| a | 0.3500 | 0.2500 |\n| b | **0.5000**† | **0.8500**† |"
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"test": "t"}, r"test='t' contradicts the comparison, which compare made with test='permutation'"),
        (
            {"correction": "bonferroni"},
            r"correction='bonferroni' contradicts the comparison, which compare made with correction='holm'",
        ),
        (
            {"correction": None},
            r"correction=None contradicts the comparison, which compare made with correction='holm'",
        ),
    ],
)
def test_a_test_or_correction_other_than_the_recorded_one_is_refused(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        lp.report(six_query_comparison("holm"), **options)  # type: ignore[arg-type]


def test_a_plain_frame_needs_the_test_and_the_correction() -> None:
    comparison = six_query_comparison(None)
    plain = comparison.with_columns(pl.col("mean").round(2))
    assert type(plain) is pl.DataFrame
    with pytest.raises(ValueError, match=r"report\(\) needs test= for a plain DataFrame"):
        lp.report(plain, correction=None)
    with pytest.raises(ValueError, match=r"report\(\) needs correction= for a plain DataFrame"):
        lp.report(plain, test="permutation")
    assert lp.report(plain, test="permutation", correction=None).splitlines()[3] == "| b | **0.5000**† | **0.8500**† |"


# --- what report refuses ------------------------------------------------------------------------------


def test_correction_none_is_refused_for_a_corrected_comparison() -> None:
    # a plain frame: it records no correction, so the p-values give it away
    plain = pl.DataFrame(six_query_comparison("holm"))
    with pytest.raises(ValueError, match=r"correction=None, but the comparison was corrected: model '[bc]' on metric"):
        lp.report(plain, test="permutation", correction=None)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"test": "z"}, r"test must be the test compare ran, one of \['t', 'permutation', 'bootstrap', 'wilcoxon'\]"),
        ({"correction": "fdr"}, r"correction must be the correction compare applied.*got 'fdr'"),
        ({"digits": -1}, r"digits must be an integer from 0 to 15, got -1"),
        ({"digits": 2.0}, r"digits must be an integer from 0 to 15, got 2.0"),
        ({"alpha": 1.0}, r"alpha must be a number strictly between 0 and 1, got 1.0"),
        ({"format": "csv"}, r"format must be one of \['markdown', 'latex', 'html'\], got 'csv'"),
        (
            {"measures": "ndcg@5"},
            r"measure 'ndcg@5' is not a metric of the comparison \(metrics: \['ndcg@10', 'recall'\]\)",
        ),
        ({"measures": ["recall", "recall"]}, r"measures must be distinct; 'recall' is given twice"),
        ({"measures": []}, r"measures must name one or more metrics of the comparison"),
    ],
)
def test_bad_options_are_refused(options: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {"test": "permutation", "correction": None, **options}
    with pytest.raises(ValueError, match=message):
        lp.report(six_query_comparison(None), **arguments)  # type: ignore[arg-type]


def test_frames_that_are_not_a_comparison_are_refused() -> None:
    comparison = six_query_comparison(None)
    with pytest.raises(TypeError, match=r"takes the DataFrame lodestar_polars.compare returns, got LazyFrame"):
        lp.report(comparison.lazy(), test="permutation", correction=None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"takes the DataFrame lodestar_polars.compare returns; got columns"):
        lp.report(comparison.drop("wins"), test="permutation", correction=None)
    with pytest.raises(ValueError, match=r"the comparison has no rows"):
        lp.report(comparison.clear(), test="permutation", correction=None)
    with pytest.raises(ValueError, match=r"2 rows for the same \(metric, model\) pair, first \('ndcg@10', 'b'\)"):
        lp.report(pl.concat([comparison, comparison.head(1)]), test="permutation", correction=None)
