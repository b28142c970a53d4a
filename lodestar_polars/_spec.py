"""Argument checking: the keyword arguments of every entry point become one frozen `Spec`.

Everything that can be checked without reading the data is checked here, when the method is called, so a
LazyFrame pipeline fails at the line that built it.  Checks that need the data are declared next to their
counters in `_plan/`.  A `Spec` holds settings only; data (the judgments) travels beside it.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Literal, TypeAlias, TypeGuard, get_args

import numpy as np
import polars as pl

from ._measure_names import closest_names, from_tool_spelling
from .measures._base import Definition, Option, option_text, options_suffix
from .measures._registry import REGISTRY
from .measures.diversity import (
    DIVERSITY,
    GREATEST_IDEAL_CUTOFF,
    IDEAL_NEEDS,
    REFUSES_AVERAGE,
    REFUSES_BOUNDS,
    DiversityDefinition,
    Setting,
)

Ties: TypeAlias = Literal["average", "reverse", "input", "doc", "optimistic", "pessimistic"]
GainName: TypeAlias = Literal["linear", "exponential"]
Gain: TypeAlias = GainName | Mapping[float, float] | Sequence[float]
NoRelevant: TypeAlias = float | Literal["error"] | None
Cutoffs: TypeAlias = int | Sequence[int | None] | None
MissingQueries: TypeAlias = Literal["skip", "zero"]
IntoColumn: TypeAlias = str | pl.Expr
Keys: TypeAlias = str | Sequence[str]
Kind: TypeAlias = str  # a measure's canonical name: a key of `measures._registry.REGISTRY`

TIES: tuple[str, ...] = ("average", "reverse", "input", "doc", "optimistic", "pessimistic")
GAINS: tuple[str, ...] = ("linear", "exponential")
MISSING_QUERIES: tuple[str, ...] = ("skip", "zero")

# measure kinds that use the gain, that divide by something that can be 0 (no_relevant), that use threshold
GAIN_KINDS: frozenset[str] = frozenset(name for name, m in REGISTRY.items() if m.family == "gain")
NORMALISED_KINDS: frozenset[str] = frozenset(name for name, m in REGISTRY.items() if m.no_relevant is not None)
THRESHOLD_KINDS: frozenset[str] = frozenset(name for name, m in REGISTRY.items() if m.family == "threshold")

# evaluate()'s measure names (lower-cased) -> kind; the canonical output name is the kind itself
MEASURE_NAMES: dict[str, Kind] = {
    alias: name for name, measure in REGISTRY.items() for alias in (name, *measure.aliases)
}
CANONICAL_MEASURES: tuple[str, ...] = tuple(REGISTRY)
# the diversity family's names (lower-cased: ir_measures' and ndeval's too) -> its canonical name
DIVERSITY_NAMES: dict[str, str] = {
    alias: name for name, measure in DIVERSITY.items() for alias in (name, *measure.aliases)
}

NO_QUERY_MESSAGE = "no query to average: the frame has no query (or every query's metric is null)."
ZERO_WEIGHTS_MESSAGE = "Weights sum to zero, can't be normalized"  # scikit-learn's (np.average's) words
SUMMARY_COLUMNS = ("queries", "weight_sum", "queries_without_judgments")


@dataclass(frozen=True, eq=False)
class Column:
    """A value the plan reads from each row: a column name or an elementwise expression, and its display name."""

    expr: pl.Expr
    name: str
    is_name: bool


@dataclass(frozen=True)
class Measure:
    """One measure of a call: its kind, its cut-off or its recall level or multiplier (`level`), its column,
    and the values of its options (`Definition.options`) given in its name, in declaration order."""

    kind: Kind
    cutoff: int | None
    column: str
    level: float | None = None
    options: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True, eq=False)
class Spec:
    """The validated options the plan builder reads."""

    measures: tuple[Measure, ...]
    by: tuple[str, ...]
    query: tuple[str, ...]
    doc: tuple[str, ...]
    relevance: Column
    score: Column
    weight: Column | None
    ties: Ties
    gain: GainName | tuple[tuple[float, float], ...]
    no_relevant: float | Literal["error"] | None
    log_base: float
    threshold: float
    missing_queries: MissingQueries
    max_retrieved: int | None  # at most this many documents per query, the first in the tie-broken order
    judged_only: bool  # retrieved documents not judged at a level >= 0 are removed before any measure
    # every float sum exact, so that no value depends on the rows' order (`lodestar_polars._exact_sum`)
    exact_sums: bool = False
    # a query column whose values repeat the run's rows (`judgment_groups` joins the run to each judgment group
    # of its query): the checks on the run's own columns count a run row once, in the query's first value
    repeated_over: str | None = None

    @property
    def keys(self) -> tuple[str, ...]:
        """The columns a per-query row is identified by: the by columns, then the query columns."""
        return (*self.by, *self.query)

    @property
    def metric_columns(self) -> list[str]:
        return [m.column for m in self.measures]


def _names(argument: str, value: object, *, optional: bool) -> tuple[str, ...]:
    if value is None and optional:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)) and value:
        names = tuple(value)
        if all(isinstance(name, str) for name in names):
            repeated = sorted({name for name in names if names.count(name) > 1})
            if repeated:
                msg = f"`{argument}` lists column {repeated[0]!r} twice."
                raise ValueError(msg)
            return names
    kinds = "a column name (str) or a non-empty list of them" + (", or None" if optional else "")
    msg = f"`{argument}` must be {kinds}, got {value!r}."
    raise TypeError(msg)


def _column(argument: str, value: object, *, optional: bool = False) -> Column | None:
    if value is None and optional:
        return None
    if isinstance(value, str):
        return Column(pl.col(value), value, is_name=True)
    if isinstance(value, pl.Expr):
        if value.meta.has_multiple_outputs():
            msg = f"`{argument}` must be an expression with one output, got {value}."
            raise ValueError(msg)
        name = value.meta.output_name(raise_if_undetermined=False) or str(value)
        return Column(value, name, is_name=False)
    kinds = "a column name (str) or a polars expression" + (", or None" if optional else "")
    msg = f"`{argument}` must be {kinds}, got {value!r}."
    raise TypeError(msg)


def _is_int(value: object) -> TypeGuard[Integral]:
    return isinstance(value, Integral) and not isinstance(value, (bool, np.bool_))


def _is_real(value: object) -> TypeGuard[Real]:
    return isinstance(value, Real) and not isinstance(value, (bool, np.bool_))


_TIES_BY_NAME: dict[object, Ties] = {name: name for name in get_args(Ties)}
_MISSING_QUERIES_BY_NAME: dict[object, MissingQueries] = {name: name for name in get_args(MissingQueries)}


def check_ties(ties: object, has_doc: bool) -> Ties:
    if ties not in _TIES_BY_NAME:
        msg = f"ties must be one of {', '.join(repr(t) for t in TIES)}; got {ties!r}."
        raise ValueError(msg)
    if ties == "doc" and not has_doc:
        msg = "ties='doc' breaks ties by the doc column: pass doc='<column>'."
        raise ValueError(msg)
    return _TIES_BY_NAME[ties]


def _check_cutoff(value: object) -> int | None:
    if value is None:
        return None
    if not _is_int(value):
        msg = f"k must be a positive int, None, or a list of them; got {value!r} ({type(value).__name__})."
        raise TypeError(msg)
    cutoff = int(value)  # numpy integers too
    if cutoff < 1:
        msg = f"k must be at least 1, got {cutoff}."
        raise ValueError(msg)
    return cutoff


def check_cutoffs(k: object) -> tuple[int | None, ...]:
    if isinstance(k, (list, tuple)):
        if not k:
            msg = "k must not be an empty list."
            raise ValueError(msg)
        cutoffs = tuple(_check_cutoff(value) for value in k)
        repeated = sorted({str(v) for v in cutoffs if cutoffs.count(v) > 1})
        if repeated:
            msg = f"k lists the same cut-off more than once: {', '.join(repeated)}."
            raise ValueError(msg)
        return cutoffs
    return (_check_cutoff(k),)


def check_single_cutoff(metric: str, k: object) -> None:
    """The `*_score` forms return one number, so they take one cut-off."""
    if isinstance(k, (list, tuple)):
        msg = f"{metric}_score returns one number: give k as one int or None, not {k!r}."
        raise TypeError(msg)


_GAIN_KINDS_MESSAGE = "gain must be 'linear', 'exponential', a mapping label -> gain, or a sequence of gains"


def has_negative_gain(gain: GainName | tuple[tuple[float, float], ...]) -> bool:
    """Whether a checked gain mapping gives a label a negative gain (the named gains give one to a negative
    label only, which the measures reading an ideal order refuse or take as trec_eval does)."""
    return not isinstance(gain, str) and any(value < 0 for _, value in gain)


def _check_gain(gain: object, *, refusing: tuple[str, str] | None = None) -> GainName | tuple[tuple[float, float], ...]:
    """The gain, checked and frozen.  `refusing`: the (measure, reason) of a measure that refuses a negative gain
    in a mapping (None: negative gains are taken)."""
    if isinstance(gain, str):
        if gain not in GAINS:
            msg = f"{_GAIN_KINDS_MESSAGE}; got {gain!r}."
            raise ValueError(msg)
        return "linear" if gain == "linear" else "exponential"
    if isinstance(gain, Mapping):
        pairs = list(gain.items())
    elif (isinstance(gain, Sequence) and not isinstance(gain, (bytes, bytearray))) or (
        isinstance(gain, np.ndarray) and gain.ndim == 1
    ):
        pairs = list(enumerate(gain))
    else:
        msg = f"{_GAIN_KINDS_MESSAGE}; got {gain!r}."
        raise TypeError(msg)
    if not pairs:
        msg = "gain mapping is empty."
        raise ValueError(msg)
    checked: list[tuple[float, float]] = []
    for label, value in pairs:
        for what, number in (("label", label), ("gain", value)):
            if not _is_real(number) or not math.isfinite(float(number)):
                msg = f"gain mapping {what} must be a finite number, got {number!r} (label {label!r})."
                raise ValueError(msg)
        if float(value) < 0 and refusing is not None:
            measure, reason = refusing
            msg = (
                f"gain mapping gives label {label!r} the negative gain {value!r}, which {measure} refuses ({reason}); "
                "ndcg, dcg, g, ndcg_rel and rndcg take negative gains (sdcg clips them to its min_rel)."
            )
            raise ValueError(msg)
        checked.append((float(label), float(value)))
    labels = [label for label, _ in checked]
    if len(set(labels)) < len(labels):
        msg = f"gain mapping lists a label twice: {sorted(labels)}."
        raise ValueError(msg)
    return tuple(checked)


def _check_no_relevant(no_relevant: object) -> float | Literal["error"] | None:
    if no_relevant is None:
        return None
    if isinstance(no_relevant, str):
        if no_relevant == "error":
            return "error"
        msg = f"no_relevant must be a float, None or 'error'; got {no_relevant!r}."
        raise TypeError(msg)
    if not _is_real(no_relevant):
        msg = f"no_relevant must be a float, None or 'error'; got {no_relevant!r}."
        raise TypeError(msg)
    value = float(no_relevant)
    if not math.isfinite(value):
        msg = f"no_relevant must be finite, got {no_relevant!r}."
        raise ValueError(msg)
    return value


def _check_log_base(log_base: object) -> float:
    if not _is_real(log_base):
        msg = f"log_base must be a float, got {log_base!r}."
        raise TypeError(msg)
    value = float(log_base)
    if not (value > 0 and math.isfinite(value)) or value == 1:
        msg = f"log_base must be a finite float above 0 and not 1, got {log_base!r}."
        raise ValueError(msg)
    return value


def _check_threshold(threshold: object) -> float:
    if not _is_real(threshold) or not math.isfinite(float(threshold)):
        msg = f"threshold must be a finite number, got {threshold!r}."
        raise ValueError(msg)
    return float(threshold)


_ORDERED_TIES = ("doc", "input", "reverse")


def _check_max_retrieved(max_retrieved: object, ties: Ties) -> int | None:
    if max_retrieved is None:
        return None
    if not _is_int(max_retrieved):
        msg = f"max_retrieved must be a positive int or None, got {max_retrieved!r} ({type(max_retrieved).__name__})."
        raise TypeError(msg)
    value = int(max_retrieved)  # numpy integers too
    if value < 1:
        msg = f"max_retrieved must be at least 1, got {value}."
        raise ValueError(msg)
    if ties not in _ORDERED_TIES:
        msg = (
            f"max_retrieved keeps the first {value} documents of each query, which needs one order of tied "
            f"scores; ties={ties!r} fixes none: pass ties='doc' (trec_eval's -M: score descending, then doc id "
            "descending), 'input' or 'reverse'."
        )
        raise ValueError(msg)
    return value


def _check_exact_sums(exact_sums: object) -> bool:
    if not isinstance(exact_sums, (bool, np.bool_)):
        msg = f"exact_sums must be True or False, got {exact_sums!r}."
        raise TypeError(msg)
    return bool(exact_sums)


def _check_judged_only(judged_only: object) -> bool:
    if not isinstance(judged_only, (bool, np.bool_)):
        msg = f"judged_only must be True or False, got {judged_only!r}."
        raise TypeError(msg)
    return bool(judged_only)


# a measure name, its options in parentheses (`rbp(p=0.8)`, `set_f(beta=0.5)`), and an optional parameter in
# ASCII digits: a cut-off (`ndcg@10`) or, for a recall-level measure, a decimal recall level (`iprec@0.5`,
# `iprec@.25`, `iprec@1`); Arabic-Indic or full-width digits make no name
MEASURE_PATTERN = re.compile(r"([a-z0-9_-]+)(?:\(([^()]*)\))?(?:@([0-9]+|[0-9]*\.[0-9]+))?", re.ASCII | re.IGNORECASE)
# a flag option's values as ir_measures writes them (`Compat(normalize=False)`)
_FLAG_VALUES = {"true": 1.0, "false": 0.0}
_OPTION_VALUE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?", re.ASCII | re.IGNORECASE)


def level_column(kind: Kind, level: float) -> str:
    """A recall-level measure's column: `iprec@0.5`, `iprec@0.0`, `iprec@1.0` (the level as Python writes it)."""
    return f"{kind}@{level!r}"


def options_text(options: Iterable[Option]) -> str:
    """A measure's options as its errors list them: `p (persistence, default 0.8)`, `max_rel (..., required)`."""
    return ", ".join(
        f"{o.name} ({o.description}, {'required' if o.default is None else f'default {option_text(o.default)}'})"
        for o in options
    )


def _parse_options(
    name: str, kind: Kind, text: str | None, options: Sequence[Option] | None = None
) -> tuple[tuple[str, float], ...]:
    """`p=0.8, beta=1` -> the values given that differ from their defaults, in declaration order; `options`: the
    measure's (default: its registry entry's)."""
    if text is None:
        return ()
    declared = {option.name: option for option in (REGISTRY[kind].options if options is None else options)}
    if not declared:
        msg = f"measure {name!r}: {kind} takes no options in parentheses; write {kind!r}."
        raise ValueError(msg)
    given: dict[str, float] = {}
    for item in text.split(","):
        option_name, equals, value_text = (part.strip() for part in item.partition("="))
        option = declared.get(option_name.lower())
        if not equals or option is None:
            known = options_text(declared.values())
            msg = f"measure {name!r}: {item.strip()!r} is not an option of {kind}; its options: {known}."
            raise ValueError(msg)
        if option.name in given:
            msg = f"measure {name!r}: option {option.name!r} is given twice."
            raise ValueError(msg)
        if option.flag and value_text.lower() in _FLAG_VALUES:
            value = _FLAG_VALUES[value_text.lower()]
        else:
            value = float(value_text) if _OPTION_VALUE.fullmatch(value_text) else math.nan
        refusal = "it is not a decimal number" if math.isnan(value) else option.refusal(value)
        if refusal is not None:
            msg = f"measure {name!r}: option {option.name}={value_text!r} is refused: {refusal}."
            raise ValueError(msg)
        given[option.name] = value
    return tuple((o.name, given[o.name]) for o in declared.values() if o.name in given and given[o.name] != o.default)


# the parameter an example name writes when the measure needs one and none was given
_EXAMPLE_PARAMETER = {"required_cutoff": "@10", "recall_level": "@0.5", "multiplier": "@0.2"}


def _check_required_options(
    name: str, kind: Kind, options: tuple[tuple[str, float], ...], argument: str | None
) -> None:
    """A required option (no default) missing from the name: an error naming it, with the name completed."""
    definition, given = REGISTRY[kind], dict(options)
    missing = [option for option in definition.options if option.default is None and option.name not in given]
    if not missing:
        return
    completed = [(option.name, given.get(option.name, option.example)) for option in definition.options]
    parameter = f"@{argument}" if argument is not None else _EXAMPLE_PARAMETER.get(definition.parameter, "")
    example = kind + options_suffix((n, v) for n, v in completed if v is not None) + parameter
    first = missing[0]
    msg = f"measure {name!r}: {kind} needs {first.name}, {first.description}: write {example}."
    raise ValueError(msg)


def diversity_kind(name: object) -> str | None:
    """The diversity measure a name asks for (`alpha_ndcg@20`, ir_measures' `alpha_nDCG@20`, ndeval's
    `alpha-nDCG@20`), or None when it names none."""
    match = MEASURE_PATTERN.fullmatch(name.strip()) if isinstance(name, str) else None
    return DIVERSITY_NAMES.get(match.group(1).lower()) if match else None


def parse_diversity_measure(name: str) -> Measure:
    """One diversity measure name: a cut-off measure at its cut-off (`alpha_ndcg@20`, required), or a measure
    without parameter (`ap_ia`, `nrbp`), with its options in parentheses (`alpha_ndcg(alpha=0.3)@20`)."""
    match = MEASURE_PATTERN.fullmatch(name.strip())
    kind = diversity_kind(name)
    assert match is not None and kind is not None, name
    definition = DIVERSITY[kind]
    options = _parse_options(name, kind, match.group(2), definition.options)
    stem = kind + options_suffix(options)
    argument = match.group(3)
    if definition.parameter == "none":
        if argument is not None:
            msg = f"measure {name!r}: {kind} takes no cut-off after '@' (ndeval scores the whole list); write {stem!r}."
            raise ValueError(msg)
        return Measure(kind, None, stem, options=options)
    if argument is None or not argument.isdigit():
        got = "none given" if argument is None else f"got {argument!r}"
        msg = f"measure {name!r}: {kind} takes a whole number of positions after '@' (e.g. '{stem}@20'), {got}."
        raise ValueError(msg)
    cutoff = _check_cutoff(int(argument))
    assert cutoff is not None
    if definition.needs & IDEAL_NEEDS and cutoff > GREATEST_IDEAL_CUTOFF:
        msg = (
            f"measure {name!r}: {kind} takes a cut-off of at most {GREATEST_IDEAL_CUTOFF}: its greedy ideal ranking "
            f"is built one position after another in the plan (ndeval itself stops at 20)."
        )
        raise ValueError(msg)
    return Measure(kind, cutoff, f"{stem}@{cutoff}", options=options)


def diversity_without_intents(name: str) -> str:
    """The error for a diversity measure asked where no per-intent judgments can be given."""
    kind = diversity_kind(name)
    return (
        f"measure {name!r}: {kind} is a diversity (intent-aware) measure: it reads judgments per intent; pass "
        "qrels=<frame with query, intent, doc and relevance columns> and intent='<its intent column>' to evaluate()."
    )


def parse_measure(name: str) -> Measure:
    """One evaluate() measure name (case-insensitive): a measure with an optional cut-off (`ndcg@10`) or a
    required one (`sdcg@10`), a measure without parameter (`num_ret`, `rprec`, `bpref`), one at a recall level in
    [0, 1] (`iprec@0.5`) or one at a positive multiplier (`rprec_mult@0.2`), each with its options in parentheses
    where it has some (`rbp(p=0.8)@10`; a required option in every name: `sdcg(max_rel=4)@10`).  The column is
    the canonical name: options at their default values are left out of it, required ones always shown."""
    match = MEASURE_PATTERN.fullmatch(name.strip())
    kind = MEASURE_NAMES.get(match.group(1).lower()) if match else None
    if match is None or kind is None:
        if diversity_kind(name) is not None:
            raise ValueError(diversity_without_intents(name))
        spelled = from_tool_spelling(name)  # trec_eval's `ndcg_cut_10`, ir_measures' `NumRet`, ranx's names
        if spelled is not None:
            return parse_measure(spelled)
        raise ValueError(unknown_measure_message(name, f"known measures (case-insensitive): {known_measures_text()}"))
    options = _parse_options(name, kind, match.group(2))
    stem = kind + options_suffix(options)
    parameter, argument = REGISTRY[kind].parameter, match.group(3)
    _check_required_options(name, kind, options, argument)
    if parameter == "none":
        if argument is not None:
            msg = f"measure {name!r}: {kind} takes no cut-off or other parameter after '@'; write {stem!r}."
            raise ValueError(msg)
        return Measure(kind, None, stem, options=options)
    if parameter == "recall_level":
        level = float(argument) if argument is not None else math.nan
        if not 0.0 <= level <= 1.0:
            msg = (
                f"measure {name!r}: {kind} takes a recall level from 0 to 1 after '@' (e.g. '{kind}@0.5'), "
                f"{'none given' if argument is None else f'got {argument!r}'}."
            )
            raise ValueError(msg)
        return Measure(kind, None, level_column(stem, level), level, options)
    if parameter == "multiplier":
        multiplier = float(argument) if argument is not None else math.nan
        if not (multiplier > 0.0 and math.isfinite(multiplier)):
            msg = (
                f"measure {name!r}: {kind} takes a positive multiplier of R after '@' (e.g. '{kind}@0.2'), "
                f"{'none given' if argument is None else f'got {argument!r}'}."
            )
            raise ValueError(msg)
        return Measure(kind, None, level_column(stem, multiplier), multiplier, options)
    if parameter == "required_cutoff" and argument is None:
        msg = f"measure {name!r}: {kind} takes a cut-off after '@' (e.g. '{stem}@10'), none given."
        raise ValueError(msg)
    if argument is not None and not argument.isdigit():
        msg = f"measure {name!r}: the cut-off of {kind} is a whole number of positions, got {argument!r}."
        raise ValueError(msg)
    cutoff = _check_cutoff(int(argument)) if argument is not None else None
    return Measure(kind, cutoff, stem if cutoff is None else f"{stem}@{cutoff}", options=options)


def unknown_measure_message(name: str, known: str) -> str:
    """The error for a measure name no table knows: the closest known names when some are close (difflib),
    else `known` (the list of names)."""
    closest = closest_names(name)
    if closest:
        return f"unknown measure {name!r}; did you mean {' or '.join(repr(c) for c in closest)}?"
    return f"unknown measure {name!r}; {known}."


def known_measures_text() -> str:
    """The canonical names with the parameter each takes: `ndcg, ndcg@k, ..., num_ret, iprec@level`."""
    forms = {
        "cutoff": ("{k}", "{k}@k"),
        "required_cutoff": ("{k}@k",),
        "none": ("{k}",),
        "recall_level": ("{k}@level",),
        "multiplier": ("{k}@m",),
    }
    return ", ".join(
        form.format(k=k + ("(...)" if REGISTRY[k].options else ""))
        for k in CANONICAL_MEASURES
        for form in forms[REGISTRY[k].parameter]
    )


def parse_measures(measures: object) -> tuple[Measure, ...]:
    """evaluate()'s measure names, case-insensitive: "ndcg@10", "P@5", "AP", "rr@10", "num_ret", "iprec@0.5"..."""
    if isinstance(measures, str):
        measures = [measures]
    if not isinstance(measures, Sequence) or isinstance(measures, (bytes, bytearray)) or not measures:
        msg = f"measures must be a non-empty list of measure names such as ['ndcg@10', 'ap'], got {measures!r}."
        raise TypeError(msg)
    parsed: list[Measure] = []
    for name in measures:
        if not isinstance(name, str):
            msg = f"measure names are strings such as 'ndcg@10', got {name!r}."
            raise TypeError(msg)
        parsed.append(parse_measure(name))
    columns = [m.column for m in parsed]
    repeated = sorted({c for c in columns if columns.count(c) > 1})
    if repeated:
        msg = f"measures list {repeated[0]!r} more than once."
        raise ValueError(msg)
    return tuple(parsed)


def measures_of(kind: Kind, prefix: str, k: object) -> tuple[Measure, ...]:
    """One measure per cut-off of a single-metric method; columns named `{prefix}` / `{prefix}@{k}`."""
    assert kind in REGISTRY, kind
    return tuple(Measure(kind, c, prefix if c is None else f"{prefix}@{c}") for c in check_cutoffs(k))


def make_spec(
    measures: tuple[Measure, ...],
    *,
    query: object,
    relevance: object,
    score: object,
    doc: object,
    by: object,
    ties: object,
    gain: object,
    weight: object,
    no_relevant: object,
    log_base: object,
    threshold: object,
    missing_queries: object,
    max_retrieved: object = None,
    judged_only: object = False,
    exact_sums: object = False,
) -> Spec:
    """Check every argument that does not need the data and freeze them."""
    query_keys = _names("query", query, optional=False)
    by_keys = _names("by", by, optional=True)
    doc_keys = _names("doc", doc, optional=True)
    relevance_column = _column("relevance", relevance)
    score_column = _column("score", score)
    weight_column = _column("weight", weight, optional=True)
    assert relevance_column is not None and score_column is not None
    checked_ties = check_ties(ties, bool(doc_keys))
    if checked_ties == "average":
        _refuse_average(measures)
    refuse_bounds(measures, checked_ties)
    if missing_queries not in _MISSING_QUERIES_BY_NAME:
        msg = f"missing_queries must be 'skip' or 'zero', got {missing_queries!r}."
        raise ValueError(msg)
    refusing = next(
        ((m.column, reason) for m in measures if (reason := REGISTRY[m.kind].refuses_negative_gains) is not None),
        None,
    )
    spec = Spec(
        measures=measures,
        by=by_keys,
        query=query_keys,
        doc=doc_keys,
        relevance=relevance_column,
        score=score_column,
        weight=weight_column,
        ties=checked_ties,
        gain=_check_gain(gain, refusing=refusing),
        no_relevant=_check_no_relevant(no_relevant),
        log_base=_check_log_base(log_base),
        threshold=_check_threshold(threshold),
        missing_queries=_MISSING_QUERIES_BY_NAME[missing_queries],
        max_retrieved=_check_max_retrieved(max_retrieved, checked_ties),
        judged_only=_check_judged_only(judged_only),
        exact_sums=_check_exact_sums(exact_sums),
    )
    _check_roles(spec)
    _refuse_bounds_by_gain(spec)
    _refuse_bounds_below_base_one(spec)
    return spec


def _refuse_tie_mode(measures: tuple[Measure, ...], refusal: Callable[[Definition], str | None], what: str) -> None:
    """The first measure whose registry entry gives a reason (`refusal`) to refuse the tie mode raises, naming
    itself, `what` it lacks and the reason, and suggesting trec_eval's order."""
    for measure in measures:
        reason = refusal(REGISTRY[measure.kind])
        if reason is not None:
            msg = (
                f"{measure.column} has no {what} ({reason}); pass ties='doc' (trec_eval's order: tied documents by "
                "descending doc id) or another deterministic tie mode."
            )
            raise ValueError(msg)


def _refuse_average(measures: tuple[Measure, ...]) -> None:
    """A measure with no exact expectation over the orders of tied documents refuses ties="average"."""
    _refuse_tie_mode(measures, lambda d: d.refuses_average, "exact expectation under ties='average'")


def refuse_bounds(measures: tuple[Measure, ...], ties: str) -> None:
    """A measure whose best / worst order of a tie block is not always the most / least gainful first refuses
    ties="optimistic" / "pessimistic": they would not be its bounds."""
    if ties in ("optimistic", "pessimistic"):
        _refuse_tie_mode(measures, lambda d: d.refuses_bounds, f"ties={ties!r} bound")


def _refuse_bounds_with_judgments(spec: Spec) -> None:
    """A measure whose tie bounds with judgments are not the relevant-first / last orders refuses them."""
    if spec.ties in ("optimistic", "pessimistic"):
        _refuse_tie_mode(
            spec.measures, lambda d: d.refuses_bounds_with_judgments, f"ties={spec.ties!r} bound with qrels="
        )


def _orders_grades(gain: GainName | tuple[tuple[float, float], ...]) -> bool:
    """Whether ordering by gain orders by grade: the gain strictly increases with the label, and is positive
    above label 0 (an unjudged document's gain is 0)."""
    if isinstance(gain, str):
        return True
    pairs = sorted(gain)
    increasing = all(a[1] < b[1] for a, b in itertools.pairwise(pairs))
    return increasing and all(value > 0 for label, value in pairs if label > 0)


def _refuse_bounds_by_gain(spec: Spec) -> None:
    """The tie bounds order a tie block by gain: a measure whose best order is by grade refuses them with a
    gain mapping that orders the grades otherwise."""
    gain = spec.gain
    if spec.ties not in ("optimistic", "pessimistic") or isinstance(gain, str) or _orders_grades(gain):
        return
    for measure in spec.measures:
        if REGISTRY[measure.kind].orders_by_grade:
            msg = (
                f"{measure.column} orders a tie block by relevance grade, but ties={spec.ties!r} orders it by the "
                f"gain mapping {dict(gain)!r}, which does not increase strictly with the grade (positive above "
                "0); pass gain='linear' or 'exponential', an increasing mapping, or a deterministic tie mode."
            )
            raise ValueError(msg)


def refuse_bounds_below_base_one(column: str, ties: str, log_base: float) -> None:
    """A log base below 1 makes every discount negative: the most gainful order then gives a discounted sum's
    least value, so the tie bounds (most / least gainful first) would be its lower / upper bound swapped."""
    if ties in ("optimistic", "pessimistic") and log_base < 1:
        msg = (
            f"{column} with log_base={log_base!r} (below 1) has negative discounts: ties={ties!r} orders a tie "
            f"block {'most' if ties == 'optimistic' else 'least'} gainful first, which gives its "
            f"{'least' if ties == 'optimistic' else 'greatest'} value, not its bound; pass a log_base above 1 or "
            "another tie mode."
        )
        raise ValueError(msg)


def _refuse_bounds_below_base_one(spec: Spec) -> None:
    for measure in spec.measures:
        if REGISTRY[measure.kind].scaled_by_log_base:
            refuse_bounds_below_base_one(measure.column, spec.ties, spec.log_base)


def _check_roles(spec: Spec) -> None:
    """Output columns must not clash: the keys, the metric columns and the weight each keep their own name."""
    for name in spec.by:
        if name in spec.query:
            msg = f"column {name!r} is both a `by` and a `query` column; a column can have one role only."
            raise ValueError(msg)
    outputs = {name: "query" for name in spec.query}
    outputs.update({name: "by" for name in spec.by})
    if spec.weight is not None:
        if spec.weight.name in outputs:
            msg = (
                f"weight column {spec.weight.name!r} is also a {outputs[spec.weight.name]} column: the output would "
                "hold two columns of that name; pass a copy, e.g. weight=pl.col(name).alias('weight')."
            )
            raise ValueError(msg)
        outputs[spec.weight.name] = "weight"
    reserved = set(spec.metric_columns) | set(SUMMARY_COLUMNS)
    for name, role in outputs.items():
        if name in reserved:
            msg = f"{role} column name {name!r} clashes with an output column; rename it first."
            raise ValueError(msg)


# --- columns and dtypes, checked against the frame's schema when the method is called --------------------


class MissingColumnError(pl.exceptions.ColumnNotFoundError):
    """A column a role names is not in the frame; the message ends naming the argument that sets it
    (``query=``), which a front end with other option names (the CLI's ``--query``) can name instead."""

    def __init__(self, missing: str, role: str) -> None:
        super().__init__(f"{missing} Name the {role} column with {role}=.")
        self.missing, self.role = missing, role


def _require_columns(schema: pl.Schema, where: str, columns: dict[str, Sequence[str]]) -> None:
    for role, names in columns.items():
        for name in names:
            if name not in schema:
                missing = f"{role} column {name!r} not found in {where}; its columns are: {', '.join(schema.names())}."
                raise MissingColumnError(missing, role)


def value_dtype(schema: pl.Schema, where: str, role: str, column: Column) -> pl.DataType:
    """The dtype of a value column or expression evaluated on a frame of `schema`."""
    if column.is_name:
        _require_columns(schema, where, {role: [column.name]})
        return schema[column.name]
    try:
        evaluated = pl.LazyFrame(schema=schema).select(column.expr).collect_schema()
    except pl.exceptions.ColumnNotFoundError as error:
        msg = (
            f"{role} expression {column.expr} names a column not found in {where} ({error}); "
            f"its columns are: {', '.join(schema.names())}."
        )
        raise pl.exceptions.ColumnNotFoundError(msg) from None
    except pl.exceptions.PolarsError as error:
        msg = f"{role} expression {column.expr} cannot be evaluated on {where}: {error}"
        raise pl.exceptions.InvalidOperationError(msg) from None
    _require_one_value_per_row(schema, where, role, column)
    return evaluated.dtypes()[0]


_SAMPLE_VALUES = (0, 0, None, 1, 2)  # a repeat and a null, so `unique()` and `drop_nulls()` drop rows too


def _sample_column(name: str, dtype: pl.DataType, repeat: int) -> pl.Series:
    values = pl.Series(name, list(_SAMPLE_VALUES) * repeat)
    try:
        return values.cast(dtype, strict=True)
    except (pl.exceptions.PolarsError, TypeError, ValueError):
        return pl.Series(name, [None] * values.len(), dtype=dtype)


def _require_one_value_per_row(schema: pl.Schema, where: str, role: str, column: Column) -> None:
    """Refuse an expression input that changes the number of rows (`head(2)`, `filter`, `unique`...), which
    the plan could not put beside the frame's columns.  It is evaluated on small frames of `schema` (a few
    rows of made-up values, at two heights): an elementwise or window expression gives one value per row, an
    aggregation one value (broadcast), anything else another count.  An expression the made-up values make
    fail is not judged here."""
    rule = (
        "An expression input must give one value per row: elementwise, a window (`.over(...)`) or an "
        "aggregation over the columns."
    )
    for repeat in (1, 2):
        try:
            sample = pl.DataFrame([_sample_column(name, dtype, repeat) for name, dtype in schema.items()])
            height = sample.lazy().select(column.expr).collect().height
        except pl.exceptions.ShapeError as error:  # e.g. a window whose groups change length
            msg = f"{role} expression {column.expr} changes the number of rows ({error}).  {rule}"
            raise pl.exceptions.ShapeError(msg) from None
        except (pl.exceptions.PolarsError, TypeError, ValueError, ArithmeticError):
            return
        if height not in (1, sample.height):
            msg = (
                f"{role} expression {column.expr} changes the number of rows: on {sample.height} made-up rows "
                f"with the columns of {where} it gives {height} values.  {rule}"
            )
            raise pl.exceptions.ShapeError(msg)


def _require_numeric(dtype: pl.DataType, where: str, role: str, name: str, *, allow_boolean: bool) -> None:
    if dtype.is_numeric() or (allow_boolean and dtype == pl.Boolean):
        return
    kinds = "numeric or boolean" if allow_boolean else "numeric"
    msg = f"{role} column {name!r} in {where} must be {kinds}, got dtype {dtype}."
    raise pl.exceptions.SchemaError(msg)


def _require_groupable(schema: pl.Schema, where: str, role: str, names: Sequence[str]) -> None:
    for name in names:
        if schema[name] == pl.Object:
            msg = f"{role} column {name!r} in {where} has dtype {schema[name]}, which Polars cannot group or join on."
            raise pl.exceptions.SchemaError(msg)


_INTEGERS: dict[tuple[bool, int], pl.DataType] = {
    (True, 8): pl.Int8(),
    (True, 16): pl.Int16(),
    (True, 32): pl.Int32(),
    (True, 64): pl.Int64(),
    (False, 8): pl.UInt8(),
    (False, 16): pl.UInt16(),
    (False, 32): pl.UInt32(),
    (False, 64): pl.UInt64(),
}
_INTEGER_KINDS = {dtype: kind for kind, dtype in _INTEGERS.items()}  # dtype -> (signed, bits)


def _lossless_integer(run: pl.DataType, qrels: pl.DataType) -> pl.DataType | None:
    """The narrowest integer dtype of at most 64 bits holding every value of both, or None."""
    if run not in _INTEGER_KINDS or qrels not in _INTEGER_KINDS:
        return None
    kinds = [_INTEGER_KINDS[run], _INTEGER_KINDS[qrels]]
    if not any(signed for signed, _ in kinds):
        return _INTEGERS[(False, max(bits for _, bits in kinds))]
    # a signed dtype holds an unsigned one of fewer bits
    bits = max(width if signed else 2 * width for signed, width in kinds)
    return _INTEGERS.get((True, bits))


def join_dtype(role: str, name: str, run: pl.DataType, qrels: pl.DataType) -> pl.DataType:
    """The dtype the run's and the judgments' key column `name` join in: theirs when equal; for two integer
    dtypes, the narrowest one holding every value of both (Int32 and Int64: Int64; UInt32 and Int64: Int64;
    UInt32 and Int32: Int64).  Other pairs (UInt64 and a signed integer, which no 64-bit integer holds both of;
    a String and an integer) raise a SchemaError naming both dtypes."""
    if run == qrels:
        return run
    common = _lossless_integer(run, qrels)
    if common is None:
        both_integers = run in _INTEGER_KINDS and qrels in _INTEGER_KINDS
        why = (
            "no integer dtype of at most 64 bits holds every value of both"
            if both_integers
            else "only integer key dtypes are widened to join"
        )
        msg = (
            f"{role} column {name!r} of the run has dtype {run} but {name!r} of qrels has dtype {qrels}, and "
            f"{why}; cast one so they join."
        )
        raise pl.exceptions.SchemaError(msg)
    return common


def check_schema(spec: Spec, schema: pl.Schema, qrels_schema: pl.Schema | None) -> None:
    """Check that the columns exist and have usable dtypes (the frame, and the judgments if any)."""
    where = "the frame"
    _require_columns(schema, where, {"query": spec.query, "by": spec.by, "doc": spec.doc})
    _require_groupable(schema, where, "query", spec.query)
    _require_groupable(schema, where, "by", spec.by)
    _require_groupable(schema, where, "doc", spec.doc)
    _require_numeric(
        value_dtype(schema, where, "score", spec.score), where, "score", spec.score.name, allow_boolean=False
    )
    if qrels_schema is None:
        relevance = value_dtype(schema, where, "relevance", spec.relevance)
        _require_numeric(relevance, where, "relevance", spec.relevance.name, allow_boolean=True)
    if spec.weight is not None:
        weight = value_dtype(schema, where, "weight", spec.weight)
        _require_numeric(weight, where, "weight", spec.weight.name, allow_boolean=False)
    if qrels_schema is None:
        if spec.judged_only:
            msg = (
                "judged_only=True removes the retrieved documents the judgments do not judge (trec_eval -J): "
                "pass qrels=."
            )
            raise ValueError(msg)
        return
    if not spec.doc:
        msg = "qrels= joins judgments on (query, doc): pass doc='<column>' naming the run's document column."
        raise ValueError(msg)
    _refuse_bounds_with_judgments(spec)
    _require_columns(qrels_schema, "qrels", {"query": spec.query, "doc": spec.doc})
    relevance = value_dtype(qrels_schema, "qrels", "relevance", spec.relevance)
    _require_numeric(relevance, "qrels", "relevance", spec.relevance.name, allow_boolean=True)
    for role, names in (("query", spec.query), ("doc", spec.doc)):
        for name in names:
            join_dtype(role, name, schema[name], qrels_schema[name])
    if spec.missing_queries == "zero" and spec.weight is not None:
        msg = "missing_queries='zero' scores judged queries absent from the run, which have no weight; drop weight=."
        raise ValueError(msg)


def check_qrels_frame(qrels: object) -> pl.LazyFrame | None:
    if qrels is None:
        return None
    if not isinstance(qrels, (pl.DataFrame, pl.LazyFrame)):
        msg = f"qrels must be a polars DataFrame or LazyFrame, got {type(qrels).__name__}."
        raise TypeError(msg)
    return qrels.lazy()


# --- one typed spec per metric: the public signatures (namespaces, Spark) forward to these ----------------


def ndcg_spec(
    *,
    query: Keys,
    relevance: IntoColumn,
    score: IntoColumn,
    doc: Keys | None,
    by: Keys | None,
    k: Cutoffs,
    ties: Ties,
    gain: Gain,
    weight: IntoColumn | None,
    no_relevant: NoRelevant,
    missing_queries: MissingQueries,
    max_retrieved: int | None = None,
    judged_only: bool = False,
    prefix: str = "ndcg",
) -> Spec:
    return make_spec(
        measures_of("ndcg", prefix, k),
        query=query,
        relevance=relevance,
        score=score,
        doc=doc,
        by=by,
        ties=ties,
        gain=gain,
        weight=weight,
        no_relevant=no_relevant,
        log_base=2.0,
        threshold=0.0,
        missing_queries=missing_queries,
        max_retrieved=max_retrieved,
        judged_only=judged_only,
    )


def dcg_spec(
    *,
    query: Keys,
    relevance: IntoColumn,
    score: IntoColumn,
    doc: Keys | None,
    by: Keys | None,
    k: Cutoffs,
    ties: Ties,
    gain: Gain,
    weight: IntoColumn | None,
    log_base: float,
    missing_queries: MissingQueries,
    max_retrieved: int | None = None,
    judged_only: bool = False,
) -> Spec:
    return make_spec(
        measures_of("dcg", "dcg", k),
        query=query,
        relevance=relevance,
        score=score,
        doc=doc,
        by=by,
        ties=ties,
        gain=gain,
        weight=weight,
        no_relevant=0.0,
        log_base=log_base,
        threshold=0.0,
        missing_queries=missing_queries,
        max_retrieved=max_retrieved,
        judged_only=judged_only,
    )


def threshold_spec(
    kind: Kind,
    prefix: str,
    *,
    query: Keys,
    relevance: IntoColumn,
    score: IntoColumn,
    doc: Keys | None,
    by: Keys | None,
    k: Cutoffs,
    ties: Ties,
    threshold: float,
    weight: IntoColumn | None,
    no_relevant: NoRelevant,
    missing_queries: MissingQueries,
    max_retrieved: int | None = None,
    judged_only: bool = False,
) -> Spec:
    """The measures that count relevant documents: reciprocal rank, precision, recall, AP, success."""
    return make_spec(
        measures_of(kind, prefix, k),
        query=query,
        relevance=relevance,
        score=score,
        doc=doc,
        by=by,
        ties=ties,
        gain="linear",
        weight=weight,
        no_relevant=no_relevant,
        log_base=2.0,
        threshold=threshold,
        missing_queries=missing_queries,
        max_retrieved=max_retrieved,
        judged_only=judged_only,
    )


def evaluate_spec(
    measures: str | Sequence[str],
    *,
    query: Keys,
    relevance: IntoColumn,
    score: IntoColumn,
    doc: Keys | None,
    by: Keys | None,
    ties: Ties,
    gain: Gain,
    weight: IntoColumn | None,
    no_relevant: NoRelevant,
    threshold: float,
    log_base: float,
    missing_queries: MissingQueries,
    max_retrieved: int | None = None,
    judged_only: bool = False,
    exact_sums: bool = False,
) -> Spec:
    return make_spec(
        parse_measures(measures),
        query=query,
        relevance=relevance,
        score=score,
        doc=doc,
        by=by,
        ties=ties,
        gain=gain,
        weight=weight,
        no_relevant=no_relevant,
        log_base=log_base,
        threshold=threshold,
        missing_queries=missing_queries,
        max_retrieved=max_retrieved,
        judged_only=judged_only,
        exact_sums=exact_sums,
    )


# --- the diversity family (`_diversity`) ------------------------------------------------------------------

_REFUSED_TIES = ("average", "optimistic", "pessimistic")


@dataclass(frozen=True, eq=False)
class DiversitySpec:
    """A diversity call's validated options: its measures, the intent column of the judgments, and the run's
    and judgments' columns and shared options (`base`, whose other options keep their defaults)."""

    measures: tuple[Measure, ...]
    intent: str
    base: Spec

    def definition(self, measure: Measure) -> DiversityDefinition:
        return DIVERSITY[measure.kind]

    def setting(self, measure: Measure) -> Setting:
        return DIVERSITY[measure.kind].setting(dict(measure.options))


def asks_diversity(measures: object, intent: object) -> bool:
    """Whether an evaluate() call asks for the diversity family: an intent column, or a diversity measure."""
    if intent is not None:
        return True
    names = [measures] if isinstance(measures, str) else measures
    if not isinstance(names, Sequence) or isinstance(names, (bytes, bytearray)):
        return False
    return any(diversity_kind(name) is not None for name in names)


def _refuse_option(option: str, value: object, default: object, first: str) -> None:
    if value is not default and value != default:
        msg = (
            f"evaluate(): {option}={value!r} does not apply to the diversity measures ({first}): they take qrels=, "
            "intent=, query=, doc=, score=, relevance= (the judgments' level column), by=, ties= and "
            "missing_queries=."
        )
        raise ValueError(msg)


def diversity_spec(
    measures: str | Sequence[str],
    *,
    intent: object,
    query: Keys,
    relevance: IntoColumn,
    score: IntoColumn,
    doc: Keys | None,
    by: Keys | None,
    ties: Ties,
    gain: Gain,
    weight: IntoColumn | None,
    no_relevant: NoRelevant,
    threshold: float,
    log_base: float,
    missing_queries: MissingQueries,
    max_retrieved: int | None,
    judged_only: bool,
    exact_sums: bool,
) -> DiversitySpec:
    """Check an evaluate() call asking for the diversity family (see `asks_diversity`)."""
    names = [measures] if isinstance(measures, str) else list(measures)
    if not names or not all(isinstance(name, str) for name in names):
        msg = f"measures must be a non-empty list of measure names such as ['alpha_ndcg@20'], got {measures!r}."
        raise TypeError(msg)
    diverse = [name for name in names if diversity_kind(name) is not None]
    others = [name for name in names if diversity_kind(name) is None]
    if not diverse:
        msg = (
            f"intent={intent!r} names the intent column of per-intent judgments, read by the diversity measures "
            f"only (alpha_ndcg@k, err_ia@k, ...); {others[0]!r} reads judgments per document: leave intent= out."
        )
        raise ValueError(msg)
    if others:
        msg = (
            f"evaluate() computes the diversity measures ({diverse[0]!r}) from per-intent judgments and the others "
            f"({others[0]!r}) from judgments per document: call it once with qrels= and intent= for the first, "
            "once with judgments per document for the others, and join the two frames on the query columns."
        )
        raise ValueError(msg)
    if intent is None:
        raise ValueError(diversity_without_intents(diverse[0]))
    if not isinstance(intent, str):
        msg = f"intent must be the name (str) of the judgments' intent column, got {intent!r}."
        raise TypeError(msg)
    parsed = tuple(parse_diversity_measure(name) for name in names)
    columns = [m.column for m in parsed]
    repeated = sorted({c for c in columns if columns.count(c) > 1})
    if repeated:
        msg = f"measures list {repeated[0]!r} more than once."
        raise ValueError(msg)
    first = diverse[0]
    for option, value, default in (
        ("gain", gain, "linear"),
        ("weight", weight, None),
        ("no_relevant", no_relevant, 0.0),
        ("threshold", threshold, 0.0),
        ("log_base", log_base, 2.0),
        ("max_retrieved", max_retrieved, None),
        ("exact_sums", exact_sums, False),
    ):
        _refuse_option(option, value, default, first)
    if ties in _REFUSED_TIES:
        msg = (
            f"ties={ties!r} is refused for {first}: "
            + (REFUSES_AVERAGE if ties == "average" else REFUSES_BOUNDS)
            + ". Pass ties='doc' (ndeval -traditional's order: doc id descending within a score, as trec_eval), or "
            "sort the frame by doc and pass ties='input' (pyndeval's and ir_measures' order: doc id ascending)."
        )
        raise ValueError(msg)
    base = make_spec(
        (),
        query=query,
        relevance=relevance,
        score=score,
        doc=doc,
        by=by,
        ties=ties,
        gain="linear",
        weight=None,
        no_relevant=0.0,
        log_base=2.0,
        threshold=0.0,
        missing_queries=missing_queries,
        judged_only=judged_only,
    )
    if len(base.doc) != 1:
        msg = (
            f"the diversity measures ({first}) join the judgments on (query, doc) and break the ideal's ties by "
            f"the doc id: pass doc='<column>' naming one document column, got {doc!r}."
        )
        raise ValueError(msg)
    if base.by and base.missing_queries == "zero":
        msg = f"missing_queries='zero' with by= is not supported for the diversity measures ({first})."
        raise ValueError(msg)
    if intent in (*base.query, *base.doc):
        msg = f"intent={intent!r} is also a query or doc column: name the judgments' intent column."
        raise ValueError(msg)
    return DiversitySpec(parsed, intent, base)


def check_inputs(spec: DiversitySpec, run: pl.LazyFrame, qrels: pl.LazyFrame | None) -> None:
    """The judgments are given and hold the intent column; the columns' dtypes (`check_schema`)."""
    if qrels is None:
        raise ValueError(diversity_without_intents(spec.measures[0].column))
    schema = qrels.collect_schema()
    check_schema(spec.base, run.collect_schema(), schema)
    _require_columns(schema, "qrels", {"intent": [spec.intent]})
    if schema[spec.intent] == pl.Object:
        msg = f"intent column {spec.intent!r} in qrels has dtype {schema[spec.intent]}, which Polars cannot group on."
        raise pl.exceptions.SchemaError(msg)


def call_spec(
    measures: str | Sequence[str],
    *,
    intent: str | None,
    query: Keys,
    relevance: IntoColumn,
    score: IntoColumn,
    doc: Keys | None,
    by: Keys | None,
    ties: Ties,
    gain: Gain,
    weight: IntoColumn | None,
    no_relevant: NoRelevant,
    threshold: float,
    log_base: float,
    missing_queries: MissingQueries,
    max_retrieved: int | None,
    judged_only: bool,
    exact_sums: bool,
) -> Spec | DiversitySpec:
    """evaluate()'s options: a `DiversitySpec` when the call asks for the diversity family (`asks_diversity`),
    else the `Spec` of `evaluate_spec`."""
    if asks_diversity(measures, intent):
        return diversity_spec(
            measures,
            intent=intent,
            query=query,
            relevance=relevance,
            score=score,
            doc=doc,
            by=by,
            ties=ties,
            gain=gain,
            weight=weight,
            no_relevant=no_relevant,
            threshold=threshold,
            log_base=log_base,
            missing_queries=missing_queries,
            max_retrieved=max_retrieved,
            judged_only=judged_only,
            exact_sums=exact_sums,
        )
    return evaluate_spec(
        measures,
        query=query,
        relevance=relevance,
        score=score,
        doc=doc,
        by=by,
        ties=ties,
        gain=gain,
        weight=weight,
        no_relevant=no_relevant,
        threshold=threshold,
        log_base=log_base,
        missing_queries=missing_queries,
        max_retrieved=max_retrieved,
        judged_only=judged_only,
        exact_sums=exact_sums,
    )
