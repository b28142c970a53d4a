"""Measure names as other tools spell them, and the closest known names to a mistyped one.

`evaluate` (in Python and on the command line) takes the package's names (`ndcg@10`, `mrr`, `p@5`); it also
takes each spelling the measure table lists for trec_eval (`ndcg_cut_10`, `P_10`, `iprec_at_recall_0.50`),
ir_measures (`NumRet`, `SetP`) and ranx (`precision@5`), read from each measure's declaration
(`Definition.trec_eval`, `.ir_measures`, `.ranx`): `from_tool_spelling` turns one into the package's name.
`closest_names` gives the names nearest a name that is none of these (difflib), for "did you mean".

>>> from_tool_spelling("ndcg_cut_10"), from_tool_spelling("iprec_at_recall_0.50"), from_tool_spelling("NumRet")
('ndcg@10', 'iprec@0.50', 'num_ret')
>>> closest_names("ndgc@10")
['ndcg@10', 'dcg@10']
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass

from .measures._registry import REGISTRY
from .measures.diversity import DIVERSITY

_CUTOFF = r"[0-9]+"
_LEVEL = r"[0-9]*\.?[0-9]+"
_PLACEHOLDER = re.compile(r"\{k(?::[^}]*)?\}")


@dataclass(frozen=True)
class _ToolSpelling:
    pattern: re.Pattern[str]  # the tool's name, its parameter (if any) captured as group 1
    kind: str  # the package's measure
    example: str  # the tool's name at a sample parameter, for suggestions ({k} left in)


def _spellings() -> Iterator[_ToolSpelling]:
    for kind, measure in REGISTRY.items():
        number = _CUTOFF if measure.parameter in ("cutoff", "required_cutoff") else _LEVEL
        for spelling in (measure.trec_eval, measure.ir_measures, measure.ranx):
            for template in (spelling.whole, spelling.cut):
                # a spelling with options in parentheses (`RBP(p=0.9)@{k}`) is the package's own syntax
                if template is None or "(" in template:
                    continue
                parts = _PLACEHOLDER.split(template)
                pattern = f"({number})".join(re.escape(part) for part in parts)
                yield _ToolSpelling(re.compile(pattern, re.IGNORECASE | re.ASCII), kind, "{k}".join(parts))


TOOL_SPELLINGS = tuple(_spellings())


def from_tool_spelling(name: str) -> str | None:
    """The package's name for a measure as trec_eval, ir_measures or ranx spells it (None: not such a name).

    Parameters
    ----------
    name
        A measure name, e.g. ``"ndcg_cut_10"``, ``"P_5"``, ``"NumRelRet"``, ``"Rprec_mult_0.20"``.

    Returns
    -------
    str or None
        The name `evaluate` takes (``"ndcg@10"``), the parameter written as given.
    """
    text = name.strip()
    for spelling in TOOL_SPELLINGS:
        match = spelling.pattern.fullmatch(text)
        if match is not None:
            return spelling.kind if match.lastindex is None else f"{spelling.kind}@{match.group(1)}"
    return None


def _known_forms(parameter: str | None) -> dict[str, str]:
    """Every known name, lower-cased -> as written, with `parameter` (the user's cut-off or level) filled in."""
    forms: dict[str, str] = {}
    named: list[tuple[str, tuple[str, ...], str]] = [(k, m.aliases, m.parameter) for k, m in REGISTRY.items()]
    named += [(k, m.aliases, m.parameter) for k, m in DIVERSITY.items()]
    for kind, aliases, kind_parameter in named:
        for alias in (kind, *aliases):
            written = alias if parameter is None or kind_parameter == "none" else f"{alias}@{parameter}"
            forms.setdefault(written.lower(), written)
    for spelling in TOOL_SPELLINGS:
        if "{k}" not in spelling.example:
            forms.setdefault(spelling.example.lower(), spelling.example)
        elif parameter is not None:
            written = spelling.example.replace("{k}", parameter)
            forms.setdefault(written.lower(), written)
    return forms


_TRAILING_PARAMETER = re.compile(r"(?:@|_)([0-9]*\.?[0-9]+)$")


def closest_names(name: str, count: int = 3) -> list[str]:
    """The known measure names closest to `name` (at most `count`, the closest first; empty when none is
    close), each with `name`'s cut-off or level: ``"ndgc@10"`` -> ``["ndcg@10"]``.

    Parameters
    ----------
    name
        A name `evaluate` does not know.
    count
        How many names at most.

    Returns
    -------
    list[str]
        Names as `evaluate` takes them or as a tool spells them (both are taken).
    """
    text = name.strip()
    match = _TRAILING_PARAMETER.search(text)
    forms = _known_forms(match.group(1) if match else None)
    found = difflib.get_close_matches(text.lower(), list(forms), n=count, cutoff=0.75)
    return [forms[form] for form in found]
