"""trec_eval's measure table, built from the measures' declarations: each package measure declares how trec_eval
prints it (`TrecEvalForm`s on its `Definition`: trec_eval's name, default cut-offs or levels, parameter reading,
print kind); what is trec_eval's own lives here: its print order (`TREC_ORDER`, measures.c's list), its rows that
are no package measure (runid, num_q, relstring) and its nicknames.  `TREC_MEASURES` is the table in that order
(a form missing from the order, or a name of the order no form declares, fails at import), with the ``-m``
values read into a request (`parse_trec_measures`) and into the printed names and package columns
(`printed_columns`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Literal

from .. import preferences
from .._command_errors import UsageError
from .._spec import level_column, parse_measure
from ..measures._base import Definition, TrecEvalForm
from ..measures._registry import REGISTRY
from .parameters import parse_cutoffs, parse_gain_pairs, parse_levels
from .relstring import relstring_length


@dataclass(frozen=True)
class TrecMeasure:
    """One row of trec_eval's table: a measure's `TrecEvalForm` (its fields, see there) with `family`, the
    package measure it maps to (the registry's name), or one of trec_eval's own rows: runid and num_q (`family`
    None: computed here from the counts) and relstring (printed "string": a quoted string per query, no summary
    line)."""

    name: str
    family: str | None  # None: computed here from the counts (runid, num_q)
    cutoffs: tuple[float, ...] | None  # None: one value, no cut-off; recall levels for iprec_at_recall
    printed: Literal["float", "count", "summary", "string"] = "float"
    levels: bool = False
    columns: Callable[[str | None], list[tuple[str, str]]] | None = None
    collection: bool = False
    averaged: Callable[[str], list[str]] | None = None
    gains: bool = False

    @classmethod
    def of(cls, form: TrecEvalForm, family: str) -> TrecMeasure:
        """The row of a measure's form, `family` its registry name."""
        return cls(family=family, **{field.name: getattr(form, field.name) for field in fields(form)})


# trec_eval's own order (measures.c's te_trec_measures), which is the order it prints in: of its measures, those
# computed here (its preference and judgment-group measures are read by `preferences` and `qrels_jg`)
TREC_ORDER = (
    *("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank"),
    *("iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg"),
    *("binG", "G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P"),
    *("success", "set_P", "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret", "yaap"),
    *("rbp", "rbp_resid", "unj"),
)
# trec_eval's rows that are no package measure
TREC_OWN_ROWS = (
    TrecMeasure("runid", None, None),
    TrecMeasure("num_q", None, None),
    TrecMeasure("relstring", None, None, "string"),
)


def print_table(
    registry: Mapping[str, Definition], order: Sequence[str], own_rows: Iterable[TrecMeasure]
) -> tuple[TrecMeasure, ...]:
    """trec_eval's table: every form the `registry`'s measures declare and the `own_rows`, in the `order` of
    their names.  A name declared twice, a declared name missing from `order`, or a name of `order` that nothing
    declares is an error (raised at import: the table and the measures disagree)."""
    declared = [(row, "trec_eval's own rows") for row in own_rows]
    for family, definition in registry.items():
        declared += [(TrecMeasure.of(form, family), f"measure {family!r}") for form in definition.trec_eval_forms]
    rows: dict[str, TrecMeasure] = {}
    declared_by: dict[str, str] = {}
    for row, declarer in declared:
        if row.name in rows:
            msg = f"trec_eval measure {row.name!r} is declared twice: by {declared_by[row.name]} and by {declarer}"
            raise RuntimeError(msg)
        rows[row.name], declared_by[row.name] = row, declarer
    unordered = [f"{name!r} ({declared_by[name]})" for name in rows if name not in order]
    undeclared = [repr(name) for name in order if name not in rows]
    repeated = sorted({repr(name) for name in order if order.count(name) > 1})
    problems = [
        f"{what}: {', '.join(names)}"
        for what, names in [
            ("not in trec_eval's print order (TREC_ORDER)", unordered),
            ("in TREC_ORDER but declared by no measure's trec_eval_forms", undeclared),
            ("repeated in TREC_ORDER", repeated),
        ]
        if names
    ]
    if problems:
        msg = "trec_eval's measure table disagrees with the measures: " + "; ".join(problems)
        raise RuntimeError(msg)
    return tuple(rows[name] for name in order)


TREC_MEASURES = print_table(REGISTRY, TREC_ORDER, TREC_OWN_ROWS)
TREC_BY_NAME = {measure.name: measure for measure in TREC_MEASURES}
# trec_eval's nicknames as its measures.c lists them; those of their measures not above are named on stderr
TREC_NICKNAMES = {
    "official": (
        *("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank"),
        *("iprec_at_recall", "P"),
    ),
    "all_trec": (
        *("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank"),
        *("iprec_at_recall", "P", "relstring", "recall", "unj", "rbp", "rbp_resid", "infAP", "gm_bpref", "utility"),
        *("11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success", "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg"),
        *("binG", "G", "set_P", "set_recall", "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret"),
    ),
}


@dataclass(frozen=True)
class TrecRequest:
    """What trec_eval's ``-m`` values ask for: the measures computed here, and those of a nickname that are not."""

    # trec_eval measure -> cut-offs or levels, or the parameter text of a measure with `columns`; in print order
    measures: dict[str, tuple[float, ...] | str | None]
    not_computed: tuple[str, ...]  # members of a requested nickname this package does not compute


TrecRequested = Mapping[str, tuple[float, ...] | str | None]


_PRINTED_PARAMETERS = re.compile(r"(.+?)_([0-9][0-9.,]*)")


def _as_trec_value(printed: str) -> str | None:
    """trec_eval's printed name as the ``-m`` value asking for it: ``P_10`` is ``-m P.10``; None for no measure."""
    if printed in TREC_BY_NAME:
        return printed
    match = _PRINTED_PARAMETERS.fullmatch(printed)
    return f"{match.group(1)}.{match.group(2)}" if match and match.group(1) in TREC_BY_NAME else None


def _from_package_name(text: str) -> str | None:
    """The ``-m`` value of a measure named as `evaluate` names it (``ndcg@10``: ``ndcg_cut.10``), from the
    measure's trec_eval spelling; None where it has none (or options trec_eval's name does not carry)."""
    try:
        measure = parse_measure(text)
    except ValueError:
        return None
    parameter = measure.cutoff if measure.cutoff is not None else measure.level
    printed = None if measure.options else REGISTRY[measure.kind].trec_eval.name(parameter)
    return None if printed is None else _as_trec_value(printed)


def closest_trec_names(text: str) -> list[str]:
    """The ``-m`` values closest to an unknown one: a printed name given as a measure (``P_10``: ``P.10``), a
    measure named as `evaluate` names it (``ndcg@10``: ``ndcg_cut.10``), or the names nearest its name part
    (difflib), with its parameters.

    >>> closest_trec_names("P_10"), closest_trec_names("ndcg@10"), closest_trec_names("ndgc_cut.10")
    (['P.10'], ['ndcg_cut.10'], ['ndcg_cut.10'])
    """
    direct = _as_trec_value(text) or _from_package_name(text)
    if direct is not None:
        return [direct]
    name, dot, parameters = text.partition(".")
    known = [*TREC_BY_NAME, *TREC_NICKNAMES]
    by_lower = {known_name.lower(): known_name for known_name in known}
    found = difflib.get_close_matches(name.lower(), list(by_lower), n=3, cutoff=0.75)
    return [f"{by_lower[match]}{dot}{parameters}" for match in found]


def parse_trec_measures(texts: Sequence[str]) -> TrecRequest:
    """trec_eval's ``-m`` values -> {trec_eval measure name: cut-offs}, in trec_eval's print order.

    As trec_eval does: ``name.5,10`` sets the cut-offs (sorted; the first ``-m name.parameters`` of a measure
    wins, also over a nickname or a plain ``-m name`` that requests it),
    nicknames expand to their measures, no ``-m`` means ``official``.  A nickname's measures this package
    does not compute are listed in `TrecRequest.not_computed` (trec_eval's order), for a note on stderr.

    Examples
    --------
    >>> parse_trec_measures(["ndcg_cut.10,5", "recip_rank"]).measures
    {'recip_rank': None, 'ndcg_cut': (5, 10)}
    >>> parse_trec_measures(["iprec_at_recall..75,.5"]).measures
    {'iprec_at_recall': (0.5, 0.75)}
    >>> parse_trec_measures(["official"]).not_computed
    ()
    >>> parse_trec_measures(["all_trec"]).measures["Rprec_mult"] is None  # its default multipliers
    True
    """
    requested: dict[str, tuple[float, ...] | str | None] = {}
    explicit: dict[str, tuple[float, ...] | str | None] = {}  # the first `name.parameters` of each measure
    not_computed: dict[str, None] = {}
    for text in texts or ["official"]:
        name, dot, parameters = text.partition(".")
        if name in TREC_NICKNAMES and not dot:
            for member in TREC_NICKNAMES[name]:
                if member in TREC_BY_NAME:
                    requested.setdefault(member, TREC_BY_NAME[member].cutoffs)
                else:
                    not_computed.setdefault(member)
            continue
        measure = TREC_BY_NAME.get(name)
        if measure is None:
            closest = closest_trec_names(text)
            supported = ", ".join([*TREC_BY_NAME, *TREC_NICKNAMES])
            msg = (
                f"trec_eval measure {text!r} is not supported; did you mean {' or '.join(map(repr, closest))}?"
                if closest
                else f"trec_eval measure {text!r} is not supported; supported: {supported}."
            )
            if name in preferences.ALL_PREFS or name in preferences.NICKNAMES:
                msg = f"trec_eval measure {text!r} needs -R prefs or -R qrels_prefs (preference judgments)."
            raise UsageError(msg)
        if measure.columns is not None or measure.printed == "string" or measure.averaged is not None or measure.gains:
            # refuses bad parameters here
            if measure.columns is not None or measure.printed == "string":
                (measure.columns or relstring_length)(parameters if dot else None)
            elif dot and measure.averaged is not None:
                measure.averaged(parameters)
            elif dot:
                parse_gain_pairs(name, parameters)
            value: tuple[float, ...] | str | None = parameters if dot else None
        elif dot and measure.cutoffs is None:
            msg = f"trec_eval measure {name!r} takes no parameters, got {text!r}."
            raise UsageError(msg)
        else:
            parse = parse_levels if measure.levels else parse_cutoffs
            value = parse(name, parameters) if dot else measure.cutoffs
        requested.setdefault(name, value)
        if dot:
            explicit.setdefault(name, value)
    # as trec_eval: a measure takes the parameters of the first `-m name.parameters`, wherever it is requested
    requested.update(explicit)
    in_print_order = {m.name: requested[m.name] for m in TREC_MEASURES if m.name in requested}
    return TrecRequest(in_print_order, tuple(not_computed))


def printed_columns(name: str, cutoffs: tuple[float, ...] | str | None, collection: int = 0) -> list[tuple[str, str]]:
    """(trec_eval's printed name, the package's column) for each value of a measure; `collection`: -N."""
    measure = TREC_BY_NAME[name]
    family = str(measure.family)
    if measure.columns is not None:
        assert not isinstance(cutoffs, tuple)
        pairs = measure.columns(cutoffs)
        if measure.collection:
            pairs = [(printed, evaluated.format(collection=collection)) for printed, evaluated in pairs]
        return [(printed, parse_measure(evaluated).column) for printed, evaluated in pairs]
    if measure.averaged is not None and isinstance(cutoffs, str):
        return [(f"{name}_{cutoffs}", f"{name}_{cutoffs}")]
    if measure.gains and isinstance(cutoffs, str):
        return [(f"{name}_{cutoffs}", family)]
    assert not isinstance(cutoffs, str)
    if cutoffs is None:
        return [(name, family)]
    if measure.levels:
        return [(f"{name}_{level:3.2f}", level_column(family, level)) for level in cutoffs]
    return [(f"{name}_{int(k)}", f"{family}@{int(k)}") for k in cutoffs]
