"""The comparison table a paper prints: one row per system, one column per measure, marks and bold.

`report(comparison)` renders the table `lodestar_polars.compare` returns as Markdown, LaTeX or HTML:

- each cell is a system's mean for one measure, rounded to `digits` decimals;
- a mark follows the mean when the system's paired test against the baseline is significant:
  † better (mean delta > 0), ‡ worse (mean delta < 0), where significant means `p_adjusted < alpha`
  (`p_adjusted` is `p_value` after the comparison's correction, or `p_value` itself with no correction);
- the best value of each measure, compared as printed (rounded to `digits`), is bold; tied values are all bold;
- a legend names the marks, the baseline, the test, the correction and the level.

The test and the correction named in the legend are the ones `compare` recorded in its result (a
`Comparison`, which its `filter`, `sort`, `head`... keep).  A frame that lost the record (`select`,
`with_columns`, a frame read back from a file) needs them as `test=` and `correction=`; given for a
`Comparison`, they must be the recorded ones.  A comparison whose `p_adjusted` differs from its `p_value` was
corrected, and `correction=None` is refused for it.

Markdown and LaTeX need nothing beyond Polars; HTML is rendered by great-tables through Polars'
`DataFrame.style` (the `report` extra).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

import polars as pl

from .compare import COLUMNS as COMPARE_COLUMNS
from .compare import Comparison, Correction, Test

ReportFormat = Literal["markdown", "latex", "html"]
Mark = Literal["better", "worse"]

TEST_NAMES: dict[str, str] = {
    "t": "paired Student's t-test",
    "permutation": "paired permutation test",
    "bootstrap": "paired bootstrap test",
    "wilcoxon": "Wilcoxon signed-rank test",
}
CORRECTION_NAMES: dict[str | None, str] = {
    "holm": "Holm-adjusted",
    "bonferroni": "Bonferroni-adjusted",
    None: "not adjusted for multiple comparisons",
}
# p_adjusted and p_value are equal when compare applied no correction; a corrected value differs by far more
_UNCORRECTED_WITHIN = 1e-12


class Recorded(enum.Enum):
    """The default of `report`'s `test` and `correction`: the value the comparison recorded."""

    RECORDED = "recorded"

    def __repr__(self) -> str:
        return "RECORDED"


RECORDED = Recorded.RECORDED


@dataclass(frozen=True)
class _Cell:
    text: str
    best: bool
    mark: Mark | None


@dataclass(frozen=True)
class _Summary:
    """What every format renders: the header, the cells (None where a system lacks a measure), the legend."""

    system_column: str
    measures: list[str]
    systems: list[str]
    cells: list[list[_Cell | None]]
    baselines: dict[str, str]
    test: Test
    correction: Correction
    alpha: float
    marks: frozenset[Mark]


@dataclass(frozen=True)
class _Style:
    escape: Callable[[str], str]
    better: str
    worse: str
    bold: Callable[[str], str]
    p_below: Callable[[str], str]


def report(
    comparison: pl.DataFrame,
    *,
    test: Test | Recorded = RECORDED,
    correction: Correction | Recorded = RECORDED,
    measures: str | Sequence[str] | None = None,
    digits: int = 4,
    alpha: float = 0.05,
    format: ReportFormat = "markdown",
) -> str:
    """Render a comparison as the table a paper prints: means, significance marks, the best in bold.

    Parameters
    ----------
    comparison
        The table `lodestar_polars.compare` returns (its system column is the second column), or rows of it.
    test
        The test `compare` ran ("t", "permutation", "bootstrap" or "wilcoxon"), named in the legend.
        RECORDED: the one a `Comparison` recorded; a plain DataFrame (a comparison passed through `select`,
        `with_columns`, a file...) needs it.
    correction
        The correction `compare` applied ("holm", "bonferroni" or None), named in the legend; RECORDED as
        `test`.  None is refused when `p_adjusted` differs from `p_value` (the comparison was corrected).
    measures
        The measure(s) to show, as columns in this order.  None: every metric of the comparison, in its order.
    digits
        Decimals of the means.  The best value of a measure is the highest mean rounded to `digits`.
    alpha
        A system is marked when its `p_adjusted < alpha`: † better than the baseline, ‡ worse.
    format
        "markdown" (a pipe table, then the legend), "latex" (a `table` with the legend as caption and a
        booktabs `tabular`: `\\usepackage{booktabs}`) or "html" (great-tables, the legend as a source note).

    Returns
    -------
    str
        The table; one row per system, the baseline first, then the others in the order of the first
        measure's rows (mean descending).

    Raises
    ------
    ValueError
        Not a comparison; an unknown or repeated measure; a bad option; a test or correction other than the
        recorded one, or none for a plain DataFrame; `correction=None` for a corrected comparison; a
        (metric, system) pair twice.
    ImportError
        `format="html"` without great-tables (the `report` extra).

    Examples
    --------
    >>> import lodestar_polars as lp
    >>> per_query = pl.DataFrame(
    ...     {
    ...         "model": ["a"] * 4 + ["b"] * 4,
    ...         "query": [1, 2, 3, 4] * 2,
    ...         "ndcg@10": [0.2, 0.4, 0.5, 0.3, 0.5, 0.6, 0.5, 0.7],
    ...     }
    ... )
    >>> table = lp.compare(per_query, system="model", baseline="a", test="t", correction="holm")
    >>> print(lp.report(table, alpha=0.1))  # doctest: +NORMALIZE_WHITESPACE
    | model | ndcg@10 |
    |:---|---:|
    | a | 0.3500 |
    | b | **0.5750**† |
    <BLANKLINE>
    † significantly better than a (two-sided paired Student's t-test, Holm-adjusted p < 0.1).
    Bold: the best value of each measure.

    b's p-value is 0.078 (`scipy.stats.ttest_rel`), below 0.1; with one system compared Holm leaves it as it is.
    """
    # checked by _validate
    named_test: Test = _recorded(comparison, "test", test)
    named_correction: Correction = _recorded(comparison, "correction", correction)
    system_column = _validate(
        comparison, test=named_test, correction=named_correction, digits=digits, alpha=alpha, format=format
    )
    chosen = _measures(comparison, measures)
    summary = _summarise(comparison, system_column, chosen, named_test, named_correction, digits, alpha)
    if format == "markdown":
        return _markdown(summary)
    if format == "latex":
        return _latex(summary)
    return _html(summary)


def _recorded(comparison: object, option: Literal["test", "correction"], given: object) -> Any:
    """The value of `option` for the report: the comparison's record, checked against a given value."""
    if not isinstance(comparison, pl.DataFrame):
        return given  # refused by _validate
    if not isinstance(comparison, Comparison):
        if given is RECORDED:
            msg = (
                f"report() needs {option}= for a plain DataFrame: only the Comparison compare returns (or its "
                f"filter, sort, head...) records it; pass the {option} given to compare"
            )
            raise ValueError(msg)
        return given
    recorded = comparison.test if option == "test" else comparison.correction
    valid = get_args(Test) if option == "test" else tuple(CORRECTION_NAMES)
    if given is not RECORDED and given in valid and given != recorded:
        msg = f"{option}={given!r} contradicts the comparison, which compare made with {option}={recorded!r}"
        raise ValueError(msg)
    return recorded if given is RECORDED else given  # an invalid value is refused by _validate


def _validate(
    comparison: object, *, test: object, correction: object, digits: object, alpha: object, format: object
) -> str:
    """Check the options and the frame; return the name of the comparison's system column."""
    if not isinstance(comparison, pl.DataFrame):
        msg = f"report() takes the DataFrame lodestar_polars.compare returns, got {type(comparison).__name__}"
        raise TypeError(msg)
    expected = [name for name in COMPARE_COLUMNS if name != "system"]
    if (
        len(comparison.columns) != len(COMPARE_COLUMNS)
        or [name for name in comparison.columns if name != comparison.columns[1]] != expected
    ):
        msg = f"report() takes the DataFrame lodestar_polars.compare returns; got columns {comparison.columns}"
        raise ValueError(msg)
    if comparison.height == 0:
        msg = "the comparison has no rows"
        raise ValueError(msg)
    if test not in get_args(Test):
        msg = f"test must be the test compare ran, one of {list(get_args(Test))}, got {test!r}"
        raise ValueError(msg)
    if correction not in CORRECTION_NAMES:
        msg = f"correction must be the correction compare applied: 'holm', 'bonferroni' or None, got {correction!r}"
        raise ValueError(msg)
    if isinstance(digits, bool) or not isinstance(digits, int) or not 0 <= digits <= 15:
        msg = f"digits must be an integer from 0 to 15, got {digits!r}"
        raise ValueError(msg)
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 < alpha < 1:
        msg = f"alpha must be a number strictly between 0 and 1, got {alpha!r}"
        raise ValueError(msg)
    if format not in get_args(ReportFormat):
        msg = f"format must be one of {list(get_args(ReportFormat))}, got {format!r}"
        raise ValueError(msg)
    system_column = comparison.columns[1]
    duplicated = comparison.filter(pl.struct("metric", system_column).is_duplicated())
    if duplicated.height:
        first = duplicated.row(0, named=True)
        msg = (
            f"the comparison has {duplicated.height} rows for the same (metric, {system_column}) pair, "
            f"first ({first['metric']!r}, {first[system_column]!r}); report() needs one row per pair"
        )
        raise ValueError(msg)
    if correction is None:
        corrected = comparison.filter(
            (pl.col("p_adjusted") - pl.col("p_value")).abs()
            > _UNCORRECTED_WITHIN * pl.max_horizontal(pl.lit(1.0), pl.col("p_value"))
        )
        if corrected.height:
            first = corrected.row(0, named=True)
            msg = (
                f"correction=None, but the comparison was corrected: {system_column} {first[system_column]!r} on "
                f"metric {first['metric']!r} has p_value {first['p_value']!r} and p_adjusted "
                f"{first['p_adjusted']!r}; pass the correction given to compare ('holm' or 'bonferroni')"
            )
            raise ValueError(msg)
    return system_column


def _measures(comparison: pl.DataFrame, measures: str | Sequence[str] | None) -> list[str]:
    available = comparison["metric"].unique(maintain_order=True).to_list()
    if measures is None:
        return available
    chosen = [measures] if isinstance(measures, str) else list(measures)
    if not chosen or not all(isinstance(name, str) for name in chosen):
        msg = f"measures must name one or more metrics of the comparison (str), got {measures!r}"
        raise ValueError(msg)
    unknown = [name for name in chosen if name not in available]
    if unknown:
        msg = f"measure {unknown[0]!r} is not a metric of the comparison (metrics: {available})"
        raise ValueError(msg)
    repeated = sorted({name for name in chosen if chosen.count(name) > 1})
    if repeated:
        msg = f"measures must be distinct; {repeated[0]!r} is given twice"
        raise ValueError(msg)
    return chosen


def _summarise(
    comparison: pl.DataFrame,
    system_column: str,
    measures: list[str],
    test: Test,
    correction: Correction,
    digits: int,
    alpha: float,
) -> _Summary:
    rows = comparison.filter(pl.col("metric").is_in(measures)).with_columns(
        pl.col(system_column).cast(pl.String).alias(system_column)
    )
    baselines = {
        metric: name for metric, name in rows.filter(pl.col("p_value").is_null()).select("metric", system_column).rows()
    }
    order = rows.filter(pl.col("metric") == measures[0])[system_column].to_list()
    first_baseline = baselines.get(measures[0])
    systems = [first_baseline] if first_baseline is not None else []
    systems += [name for name in order if name != first_baseline]
    systems += [name for name in rows[system_column].unique(maintain_order=True).to_list() if name not in systems]

    by_pair = {(row["metric"], row[system_column]): row for row in rows.iter_rows(named=True)}
    best = {
        metric: max(round(float(row["mean"]), digits) for (name, _), row in by_pair.items() if name == metric)
        for metric in measures
    }
    marks: set[Mark] = set()
    cells: list[list[_Cell | None]] = []
    for system in systems:
        line: list[_Cell | None] = []
        for metric in measures:
            row = by_pair.get((metric, system))
            if row is None:
                line.append(None)
                continue
            mark = _mark(row, alpha)
            if mark is not None:
                marks.add(mark)
            mean = float(row["mean"])
            line.append(_Cell(text=f"{mean:.{digits}f}", best=round(mean, digits) == best[metric], mark=mark))
        cells.append(line)
    return _Summary(
        system_column=system_column,
        measures=measures,
        systems=systems,
        cells=cells,
        baselines=baselines,
        test=test,
        correction=correction,
        alpha=alpha,
        marks=frozenset(marks),
    )


def _mark(row: dict[str, object], alpha: float) -> Mark | None:
    p_adjusted, delta = row["p_adjusted"], row["delta"]
    if not isinstance(p_adjusted, float) or not isinstance(delta, float) or math.isnan(p_adjusted):
        return None
    if p_adjusted >= alpha or delta == 0:
        return None
    return "better" if delta > 0 else "worse"


def _legend(summary: _Summary, style: _Style) -> str:
    names = set(summary.baselines.values())
    baselines = ""
    if len(names) == 1:
        baseline = style.escape(next(iter(names)))
    else:
        baseline = "the measure's baseline"
        listed = ", ".join(
            f"{style.escape(name)} ({style.escape(metric)})" for metric, name in summary.baselines.items()
        )
        baselines = f" Baselines: {listed}." if listed else ""
    if summary.marks == {"better", "worse"}:
        claim = f"{style.better} significantly better than {baseline}, {style.worse} significantly worse"
    elif summary.marks == {"better"}:
        claim = f"{style.better} significantly better than {baseline}"
    elif summary.marks == {"worse"}:
        claim = f"{style.worse} significantly worse than {baseline}"
    else:
        claim = f"No system differs significantly from {baseline}"
    level = style.p_below(f"{summary.alpha:g}")
    if summary.correction is None:
        threshold = f"{level}, {CORRECTION_NAMES[None]}"
    else:
        threshold = f"{CORRECTION_NAMES[summary.correction]} {level}"
    return (
        f"{claim} (two-sided {style.escape(TEST_NAMES[summary.test])}, {threshold}).{baselines} "
        "Bold: the best value of each measure."
    )


def _cell_text(cell: _Cell | None, style: _Style) -> str:
    if cell is None:
        return ""
    text = style.bold(cell.text) if cell.best else cell.text
    if cell.mark == "better":
        return text + style.better
    if cell.mark == "worse":
        return text + style.worse
    return text


def _markdown_escape(text: str) -> str:
    return "".join("\\" + char if char in "\\|*_`[]<>" else char for char in text)


_MARKDOWN = _Style(
    escape=_markdown_escape,
    better="†",
    worse="‡",
    bold=lambda text: f"**{text}**",
    p_below=lambda level: f"p < {level}",
)


def _markdown(summary: _Summary) -> str:
    style = _MARKDOWN

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(cells) + " |"

    lines = [
        line([style.escape(summary.system_column), *(style.escape(name) for name in summary.measures)]),
        "|:---|" + "---:|" * len(summary.measures),
    ]
    for system, cells in zip(summary.systems, summary.cells, strict=True):
        lines.append(line([style.escape(system), *(_cell_text(cell, style) for cell in cells)]))
    return "\n".join(lines) + "\n\n" + _legend(summary, style)


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(char, char) for char in text)


_LATEX = _Style(
    escape=_latex_escape,
    better=r"$^{\dagger}$",
    worse=r"$^{\ddagger}$",
    bold=lambda text: rf"\textbf{{{text}}}",
    p_below=lambda level: f"$p < {level}$",
)


def _latex(summary: _Summary) -> str:
    style = _LATEX

    def line(cells: list[str]) -> str:
        return " & ".join(cells) + r" \\"

    lines = [
        r"\begin{table}",
        r"\centering",
        rf"\caption{{{_legend(summary, style)}}}",
        rf"\begin{{tabular}}{{l{'r' * len(summary.measures)}}}",
        r"\toprule",
        line([_latex_escape(summary.system_column), *(_latex_escape(name) for name in summary.measures)]),
        r"\midrule",
    ]
    for system, cells in zip(summary.systems, summary.cells, strict=True):
        lines.append(line([_latex_escape(system), *(_cell_text(cell, style) for cell in cells)]))
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines)


# great-tables escapes the text and bolds the best cells with its own style
_PLAIN = _Style(
    escape=lambda text: text, better="†", worse="‡", bold=lambda text: text, p_below=lambda level: f"p < {level}"
)


def _html(summary: _Summary) -> str:
    try:
        from great_tables import loc, style
    except ImportError as error:
        msg = (
            "report(format='html') renders through great-tables, which is not installed: "
            "pip install 'lodestar-polars[report]'"
        )
        raise ImportError(msg) from error
    # measure names may repeat the system column's name; the frame's columns are positions, the labels names
    columns = ["system", *(f"measure_{index}" for index in range(len(summary.measures)))]
    frame = pl.DataFrame(
        [
            pl.Series(columns[0], summary.systems, dtype=pl.String),
            *(
                pl.Series(column, [_cell_text(line[index], _PLAIN) for line in summary.cells], dtype=pl.String)
                for index, column in enumerate(columns[1:])
            ),
        ]
    )
    table = (
        frame.style.cols_label(cases=dict(zip(columns, [summary.system_column, *summary.measures], strict=True)))
        .cols_align("left", columns=columns[0])
        .cols_align("right", columns=columns[1:])
        .tab_source_note(_legend(summary, _PLAIN))
    )
    for index, column in enumerate(columns[1:]):
        best_rows = [row for row, line in enumerate(summary.cells) if (cell := line[index]) is not None and cell.best]
        table = table.tab_style(style.text(weight="bold"), loc.body(columns=column, rows=best_rows))
    return table.as_raw_html()
