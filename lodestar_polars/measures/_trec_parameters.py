"""trec_eval's parameter grammar that measure modules declare their `TrecEvalForm`s with: trec_eval's default
cut-offs and recall levels, its decimal numbers and multipliers, and rbp's persistence (``-m rbp.p=0.95``), each
refused with a message naming the measure where trec_eval would read something else than the user meant.

A measure whose ``-m name.parameters`` text has a grammar of its own declares its reader in its module
(`set_f.trec_eval_columns`, `utility.trec_eval_columns`, `rprec_mult.trec_eval_columns`,
`eleven_point_average.trec_eval_levels`), from the pieces here.  The grammar every form of a kind shares (cut-offs
read with C's atol, recall levels, gain pairs) is the trec_eval front end's (`trec_eval.parameters`): a form only
says which kind it takes.  This module imports no front end: the trec_eval package imports the measures, never the
reverse.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .._command_errors import UsageError

# trec_eval's default cut-offs (P, recall, ndcg_cut, map_cut, relative_P) and recall levels (iprec_at_recall)
TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
TREC_RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

# a plain non-negative decimal number: recall levels, multipliers, relstring's length
DECIMAL = re.compile(r"[0-9]*\.?[0-9]+|[0-9]+\.")
# a decimal number as C's atof reads one whole: set_F's beta, utility's coefficients
_TREC_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def decimals(name: str, parameters: str, count: int | None, what: str) -> list[str]:
    """Comma-separated decimal numbers (as C's atof reads them), `count` of them (None: any number); `what` says
    what they are in the message refusing other text."""
    values = parameters.split(",")
    if (count is not None and len(values) != count) or not all(_TREC_DECIMAL.fullmatch(value) for value in values):
        msg = f"measure '{name}.{parameters}': {what}."
        raise UsageError(msg)
    return values


def sorted_decimals(name: str, parameters: str, what: str) -> list[float]:
    """Comma-separated plain decimal numbers (recall levels, multipliers), sorted ascending as trec_eval prints
    them; `what` names them in the message refusing other text."""
    values = [value.strip() for value in parameters.split(",")]
    if not all(DECIMAL.fullmatch(value) for value in values):
        msg = f"measure '{name}.{parameters}': {what} must be decimal numbers separated by commas."
        raise UsageError(msg)
    return sorted(float(value) for value in values)


def refuse_duplicates(name: str, parameters: str, numbers: list[float], what: str) -> tuple[float, ...]:
    """`numbers`, refused when one is given twice (trec_eval refuses duplicate parameters)."""
    if len(set(numbers)) != len(numbers):
        msg = f"measure '{name}.{parameters}': duplicate {what}."
        raise UsageError(msg)
    return tuple(numbers)


def parse_multipliers(name: str, parameters: str) -> tuple[float, ...]:
    """Positive multipliers as trec_eval takes them (``Rprec_mult.5.0,0.2,0.35``), sorted ascending as it
    prints them; trec_eval refuses duplicates."""
    multipliers = sorted_decimals(name, parameters, "multipliers")
    if multipliers[0] <= 0.0:
        msg = f"measure '{name}.{parameters}': multipliers must be positive."
        raise UsageError(msg)
    return refuse_duplicates(name, parameters, multipliers, "multipliers")


_PERSISTENCE_PAIR = re.compile(r"p=([0-9]*\.?[0-9]+|[0-9]+\.)")


def persistence_columns(name: str, measure: str) -> Callable[[str | None], list[tuple[str, str]]]:
    """``rbp`` / ``rbp_resid``'s column: trec_eval's ``-m rbp.p=0.95`` sets the persistence and prints
    ``rbp_p=0.95`` (the parameter text as given); its gain pairs (``rbp.2=5``) are not taken here, where trec_eval's
    gains are linear."""

    def columns(parameters: str | None) -> list[tuple[str, str]]:
        if parameters is None:
            return [(name, measure)]
        match = _PERSISTENCE_PAIR.fullmatch(parameters)
        if match is None:
            msg = (
                f"measure '{name}.{parameters}': the only parameter taken here is the persistence, written "
                f"'{name}.p=0.95'."
            )
            raise UsageError(msg)
        p = float(match.group(1))
        if not 0.0 < p < 1.0:
            msg = f"measure '{name}.{parameters}': the persistence p lies strictly between 0 and 1."
            raise UsageError(msg)
        return [(f"{name}_{parameters}", f"{measure}(p={p!r})")]

    return columns
