"""trec_eval's measure table: each measure's name, the package measure it maps to, its default parameters and
how trec_eval prints it, in trec_eval's print order (measures.c); its nicknames; and the ``-m`` values read into
a request (`parse_trec_measures`) and into the printed names and package columns (`printed_columns`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from .. import preferences
from .._command_errors import UsageError
from .._spec import level_column, parse_measure
from ..measures._registry import REGISTRY
from .parameters import (
    eleven_point_levels,
    parse_cutoffs,
    parse_gain_pairs,
    parse_levels,
    persistence_columns,
    rprec_mult_columns,
    set_f_columns,
    utility_columns,
)
from .relstring import relstring_length


@dataclass(frozen=True)
class TrecMeasure:
    """One trec_eval measure: its name, the package measure it maps to, its default cut-offs (or recall levels)
    and how trec_eval prints it: "float" (%6.4f per query and in the summary), "count" (%ld per query, the sum
    over queries in the summary), "summary" (the summary line only, as gm_map) or "string" (relstring: a quoted
    string per query, no summary line)."""

    name: str
    family: str | None  # None: computed here from the counts (runid, num_q)
    cutoffs: tuple[float, ...] | None  # None: one value, no cut-off; recall levels for iprec_at_recall
    printed: Literal["float", "count", "summary", "string"] = "float"
    levels: bool = False  # the parameters are recall levels in [0, 1] (printed %3.2f), not cut-offs
    # other parameters: from the text after the first dot of `-m name.text` (None: no text, the defaults), the
    # (printed name, evaluate() measure name) of each value, in print order; it raises UsageError on bad text
    columns: Callable[[str | None], list[tuple[str, str]]] | None = None
    # its evaluate() names hold `{collection}`, filled with -N (the documents in the collection)
    collection: bool = False
    # a measure averaging others over its parameters: from the text of `-m name.text`, the evaluate() measure
    # names averaged, added last to first (trec_eval's 11pt_avg over custom recall levels); printed `name_text`
    averaged: Callable[[str], list[str]] | None = None
    # takes trec_eval's gain pairs, `-m name.1=3,2=9` (level=gain; the other levels' gain is the level), computed
    # with that gain mapping, printed `name_1=3,2=9`
    gains: bool = False


TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
TREC_RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
# trec_eval's own order (measures.c), which is the order it prints in
TREC_MEASURES = (
    TrecMeasure("runid", None, None),
    TrecMeasure("num_q", None, None),
    TrecMeasure("num_ret", "num_ret", None, "count"),
    TrecMeasure("num_rel", "num_rel", None, "count"),
    TrecMeasure("num_rel_ret", "num_rel_ret", None, "count"),
    TrecMeasure("map", "ap", None),
    TrecMeasure("gm_map", "gm_map", None, "summary"),
    TrecMeasure("Rprec", "rprec", None),
    TrecMeasure("bpref", "bpref", None),
    TrecMeasure("recip_rank", "rr", None),
    TrecMeasure("iprec_at_recall", "iprec", TREC_RECALL_LEVELS, levels=True),
    TrecMeasure("P", "p", TREC_CUTOFFS),
    TrecMeasure("relstring", None, None, "string"),
    TrecMeasure("recall", "r", TREC_CUTOFFS),
    TrecMeasure("infAP", "infap", None),
    TrecMeasure("gm_bpref", "gm_bpref", None, "summary"),
    TrecMeasure("Rprec_mult", "rprec_mult", None, columns=rprec_mult_columns),
    TrecMeasure("utility", "utility", None, columns=utility_columns, collection=True),
    TrecMeasure("11pt_avg", "11pt_avg", None, averaged=eleven_point_levels),
    TrecMeasure("binG", "bin_g", None),
    TrecMeasure("G", "g", None, gains=True),
    TrecMeasure("dcg", "dcg", None, gains=True),
    TrecMeasure("ideal_dcg", "ideal_dcg", None, gains=True),
    TrecMeasure("ndcg", "ndcg", None, gains=True),
    TrecMeasure("ndcg_rel", "ndcg_rel", None, gains=True),
    TrecMeasure("Rndcg", "rndcg", None, gains=True),
    TrecMeasure("ndcg_cut", "ndcg", TREC_CUTOFFS),
    TrecMeasure("map_cut", "ap", TREC_CUTOFFS),
    TrecMeasure("relative_P", "relative_p", TREC_CUTOFFS),
    TrecMeasure("success", "success", (1, 5, 10)),
    TrecMeasure("set_P", "set_p", None),
    TrecMeasure("set_relative_P", "set_relative_p", None),
    TrecMeasure("set_recall", "set_recall", None),
    TrecMeasure("set_map", "set_map", None),
    TrecMeasure("set_F", "set_f", None, columns=set_f_columns),
    TrecMeasure("num_nonrel_judged_ret", "num_nonrel_judged_ret", None, "count"),
    TrecMeasure("yaap", "yaap", None),
    TrecMeasure("rbp", "rbp", None, columns=persistence_columns("rbp", "rbp")),
    TrecMeasure("rbp_resid", "rbp_resid", None, columns=persistence_columns("rbp_resid", "rbp_resid")),
    TrecMeasure("unj", "unj", (5, 10, 20)),
)
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
