"""The table of every measure, generated from the measure registry: the documentation site prints it (with the
methods) and the README holds a copy that a test keeps equal to it."""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Sequence

from . import measures
from .exprs import _MEASURE_EXPRESSIONS
from .measures import diversity
from .measures._base import Definition, Spelling, option_text
from .measures._registry import REGISTRY
from .measures.diversity import DIVERSITY, DiversityDefinition

_PARAMETER = {"cutoff": "@k", "required_cutoff": "@k", "recall_level": "@x", "multiplier": "@m", "none": ""}
_SUMMARY = {"mean": "mean", "geometric": "geometric mean", "sum": "sum"}


# what the table writes for the value of a required option (one without default): `sdcg(max_rel=…)@k`
_REQUIRED_VALUE = "…"


def _option_values(measure: Definition) -> dict[str, str]:
    return {
        option.name: _REQUIRED_VALUE if option.default is None else option_text(option.default)
        for option in measure.options
    }


def _spelled(spelling: Spelling, measure: Definition) -> str:
    defaults = _option_values(measure)
    # a recall level or multiplier spelling formats a number (iprec_at_recall_{k:.2f}): shown at 0.5 or 0.2
    parameter: object = {"recall_level": 0.5, "multiplier": 0.2}.get(measure.parameter, "k")
    cut = spelling.cut and spelling.cut.format(k=parameter, **defaults)
    whole = spelling.whole and spelling.whole.format(**defaults)
    names = [name for name in (whole, cut) if name]
    return ", ".join(f"`{name}`" for name in names) or "—"


def _evaluate_names(measure: Definition) -> str:
    values = _option_values(measure)
    required = [option.name for option in measure.options if option.default is None]
    stem = measure.name + (f"({','.join(f'{name}={values[name]}' for name in required)})" if required else "")
    suffix = _PARAMETER[measure.parameter]
    names = [stem] if measure.parameter == "cutoff" else []
    names += [f"{stem}{suffix}"] if suffix else [stem]
    names = list(dict.fromkeys(names))
    aliases = f" ({', '.join(f'`{alias}`' for alias in measure.aliases)})" if measure.aliases else ""
    return ", ".join(f"`{name}`" for name in names) + aliases


def _options(measure: Definition) -> str:
    return (
        ", ".join(
            f"`{o.name}` (required)" if o.default is None else f"`{o.name}={option_text(o.default)}`"
            for o in measure.options
        )
        or "—"
    )


def _tie_modes(measure: Definition) -> str:
    refused = ["`average`"] if measure.refuses_average else []
    refused += ["`optimistic`", "`pessimistic`"] if measure.refuses_bounds else []
    modes = f"all but {', '.join(refused)}" if refused else "all"
    return modes + (" (no bounds with `qrels=`)" if measure.refuses_bounds_with_judgments else "")


def _expression(measure: Definition) -> str:
    """Every registered measure is `exprs.measure(name)` (derived from its module); the hand-written expression,
    where it has one, is its faster form."""
    expression = _MEASURE_EXPRESSIONS.get(measure.name)
    return f"`exprs.{expression}`, `exprs.measure`" if expression else "`exprs.measure`"


def _method(measure: Definition) -> str:
    return f"`{measure.method}`" if measure.method else "evaluate only"


# every column a measure table can show, by its heading: the cell of one measure
_COLUMNS: dict[str, Callable[[Definition], str]] = {
    "`evaluate` name (aliases)": _evaluate_names,
    "measure": lambda measure: f"`{measure.name}`",
    "method": _method,
    "expression": _expression,
    "options": _options,
    "ties": _tie_modes,
    "summary": lambda measure: _SUMMARY[measure.summary],
    "trec_eval": lambda measure: _spelled(measure.trec_eval, measure),
    "ir_measures": lambda measure: _spelled(measure.ir_measures, measure),
    "ranx": lambda measure: _spelled(measure.ranx, measure),
    "checked against": lambda measure: measure.oracle,
}
# the README's one table (a code host scrolls it sideways)
README_COLUMNS = (
    "`evaluate` name (aliases)",
    "options",
    "ties",
    "summary",
    "trec_eval",
    "ir_measures",
    "ranx",
    "expression",
    "checked against",
)
# the site's two tables, each narrow enough for the page at 1280 px: how to ask for a measure here, and how the
# other tools name it
USAGE_COLUMNS = ("`evaluate` name (aliases)", "method", "options", "ties", "summary")
TOOL_COLUMNS = ("measure", "trec_eval", "ir_measures", "ranx", "checked against")


def measure_table(columns: Sequence[str] = README_COLUMNS) -> str:
    """Markdown: one row per registered measure, in `columns` (headings of `_COLUMNS`): the names evaluate()
    takes, the `.rank_metrics` method computing it alone, the `lodestar_polars.exprs` expression computing it
    within a group, its own options (written `name(option=value)`), its
    tie modes, its summary over queries, how trec_eval, ir_measures and ranx name it, and the tools its tests
    compare it with."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for measure in REGISTRY.values():
        lines.append("| " + " | ".join(_COLUMNS[column](measure) for column in columns) + " |")
    return "\n".join(lines) + "\n"


def measure_definitions() -> str:
    """Markdown: each measure's definition and tie treatment, from its module's docstring (one heading each)."""
    modules = {
        module.MEASURE.name: module
        for module in vars(measures).values()
        if isinstance(module, types.ModuleType) and isinstance(getattr(module, "MEASURE", None), Definition)
    }
    sections = []
    for name in REGISTRY:
        text = inspect.cleandoc(modules[name].__doc__ or "")
        sections.append(f"#### `{name}`\n\n{text}\n")
    return "\n".join(sections)


def _diversity_names(measure: DiversityDefinition) -> str:
    stem = f"{measure.name}@k" if measure.parameter == "required_cutoff" else measure.name
    aliases = f" ({', '.join(f'`{alias}`' for alias in measure.aliases)})" if measure.aliases else ""
    return f"`{stem}`{aliases}"


def _diversity_spelled(spelling: Spelling) -> str:
    names = [name for name in (spelling.whole, spelling.cut and spelling.cut.format(k="k")) if name]
    return ", ".join(f"`{name}`" for name in names) or "—"


def _diversity_options(measure: DiversityDefinition) -> str:
    return ", ".join(f"`{o.name}={option_text(o.default or 0.0)}`" for o in measure.options) or "—"


DIVERSITY_COLUMNS = (
    "`evaluate` name (aliases)",
    "options",
    "ties",
    "summary",
    "ir_measures",
    "ndeval",
    "checked against",
)


def diversity_table() -> str:
    """Markdown: one row per diversity measure (`measures/diversity.py`), with ir_measures' and ndeval's names."""
    lines = ["| " + " | ".join(DIVERSITY_COLUMNS) + " |", "|" + "---|" * len(DIVERSITY_COLUMNS)]
    for measure in DIVERSITY.values():
        cells = [
            _diversity_names(measure),
            _diversity_options(measure),
            "`input`, `reverse`, `doc`",
            "mean",
            _diversity_spelled(measure.ir_measures),
            _diversity_spelled(measure.ndeval),
            measure.oracle,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def diversity_definitions() -> str:
    """Markdown: the diversity family's definitions, from its module's docstring."""
    return inspect.cleandoc(diversity.__doc__ or "") + "\n"
