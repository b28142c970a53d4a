"""An ir_measures provider computing ir_measures' measures with this package: keep your ir_measures code (measure
objects, qrels and runs as dicts of dicts, namedtuple iterables, pandas or Polars frames, `iter_calc`,
`calc_aggregate`, `calc`, `evaluator`) and get this package's numbers, from one lazy Polars plan per call.

ir_measures wraps its tools (pytrec_eval, cwl_eval, gdeval, ranx...) as providers registered through
`ir_measures.providers.register`; importing this module registers `PROVIDER` the same way, under the name
"lodestar_polars" (`ir_measures.providers.registry["lodestar_polars"]`), and `PIPELINE` tries it first and
ir_measures' default providers for every measure it does not compute.

The measures it computes are those whose module (`lodestar_polars/measures/`) gives an ir_measures spelling,
with their parameters: the cut-off or recall level, `rel` (a level >= rel is relevant: `threshold=rel - 1`),
`judged_only`, and the measure's own options (SetF's `beta`; the `min_rel` and `max_rel` of SDCG, NERR8-11,
BPM, INSQ and INST, the `T` of BPM, INSQ, INST and NERR11, NERR10's `p`, Compat's `p` and `normalize`; the
diversity family's `alpha`, `beta` and `rel`, from the judgments per intent: the qrels' `iteration`, as ir_measures'
pyndeval provider reads it; not with `judged_only=True`, which ir_measures 0.4 fails on there); nDCG with
its default `dcg="log2"` and no `gains`.  RBP is left to ir_measures: its default provider (cwl_eval) takes a binary
`rel`, where this package's rbp brings graded levels into [0, 1].  Compat's ideal ranking orders the documents of
one level that share a score as the run ranks them, where ir_measures' compat provider reads its qrels' order
(`lodestar_polars.measures.compat`): the two agree when the qrels list such documents by ascending doc id and no
relevant document is scored exactly 0.

Tied scores are ordered as the provider ir_measures' default pipeline would choose for the measure:
trec_eval's order (doc id descending, `ties="doc"`) for pytrec_eval's and gdeval's measures, doc id ascending
for Judged, RR@k, Compat and the diversity family (its judged, msmarco, compat and pyndeval providers), the
order the run gives for the C/W/L measures (SDCG, NERR8-11, BPM, INSQ, INST: cwl_eval keeps it);
`LodestarProvider(ties=...)` takes one of this package's tie modes for every measure instead (`"average"`: the
expectation over the tied orders).

Examples
--------
>>> import ir_measures
>>> from ir_measures import AP, P, nDCG
>>> from lodestar_polars.ir_measures_provider import PROVIDER
>>> qrels = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d4": 1}}
>>> run = {"q1": {"d1": 0.2, "d2": 0.9, "d3": 0.5}, "q2": {"d4": 0.4, "d5": 0.4}}
>>> ours = PROVIDER.calc_aggregate([nDCG @ 3, P @ 2, AP], qrels, run)
>>> theirs = ir_measures.calc_aggregate([nDCG @ 3, P @ 2, AP], qrels, run)
>>> all(abs(ours[measure] - theirs[measure]) < 1e-12 for measure in theirs)
True
>>> round(ours[nDCG @ 3], 6)
0.625418
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from ._spec import check_ties
from .measures._base import Definition, option_text
from .measures._registry import REGISTRY
from .measures.diversity import DIVERSITY, DiversityDefinition
from .namespace import rank_metrics

try:
    import ir_measures
    from ir_measures import providers
    from ir_measures.measures.base import Measure
except ImportError as error:  # pragma: no cover - exercised without the extra
    msg = 'lodestar_polars.ir_measures_provider needs ir_measures: pip install "lodestar-polars[ir-measures]"'
    raise ImportError(msg) from error

__all__ = ["PIPELINE", "PROVIDER", "LodestarProvider"]

QUERY, DOC, SCORE, RELEVANCE = "query_id", "doc_id", "score", "relevance"
# ir_measures' qrels field holding the subtopic (intent) of a diversity judgment ("0" when absent)
INTENT = "iteration"
_DOC_ASCENDING = "doc_ascending"

# the tie order of the providers of ir_measures' default pipeline (`Evaluator` sorts of each)
_PROVIDER_TIES = {
    "judged": _DOC_ASCENDING,
    "msmarco": _DOC_ASCENDING,
    "compat": _DOC_ASCENDING,
    "pyndeval": _DOC_ASCENDING,
    "cwl_eval": "input",
}
_TREC_EVAL_TIES = "doc"


def _stem(template: str) -> str:
    match = re.match(r"[A-Za-z_][A-Za-z0-9_]*", template)
    return match.group() if match else template


def _by_ir_measures_name() -> dict[str, Definition]:
    """Our measures by ir_measures' name, from each measure's ir_measures spelling (`SetRelP`, `NumRelRet`: the
    aliases ir_measures writes as SetP(relative=True) and NumRet(rel=1))."""
    named: dict[str, Definition] = {}
    for definition in REGISTRY.values():
        template = definition.ir_measures.whole or definition.ir_measures.cut
        if template is not None:
            named[_stem(template)] = definition
    return named


_DEFINITIONS = _by_ir_measures_name()
# the diversity family by ir_measures' name (`alpha_nDCG`, `ERR_IA`, `StRecall`, ...)
_DIVERSITY_DEFINITIONS: dict[str, DiversityDefinition] = {
    _stem(str(definition.ir_measures.whole or definition.ir_measures.cut)): definition
    for definition in DIVERSITY.values()
    if definition.ir_measures.whole or definition.ir_measures.cut
}
# left to ir_measures (see the module docstring)
_NOT_PROVIDED_HERE = frozenset({"RBP"})


@dataclass(frozen=True)
class _Setting:
    """The call-wide options a group of measures shares: one evaluate() per setting, all in one plan."""

    ties: str
    threshold: float
    judged_only: bool
    # the diversity family: computed from the judgments per intent (ir_measures' `iteration`), judged queries
    # missing from the run scored 0 (as ir_measures' pyndeval provider scores them)
    per_intent: bool = False


@dataclass(frozen=True)
class _Ask:
    name: str
    setting: _Setting


def _default_ties(measure: Measure) -> str:
    """The tie order of the provider ir_measures' default pipeline would compute `measure` with."""
    for provider in ir_measures.DefaultPipeline.providers:
        if provider.supports(measure) and provider.is_available():
            return _PROVIDER_TIES.get(provider.NAME, _TREC_EVAL_TIES)
    return _TREC_EVAL_TIES


def _ask(measure: Measure, ties: str | None) -> _Ask | None:
    """Our measure name and call setting for an ir_measures measure, or None when this package does not compute
    it with those parameters."""
    params: Mapping[str, Any] = measure.params
    stem = str(measure.NAME)
    if stem == "SetP" and measure["relative"]:
        stem = "SetRelP"
    if stem == "NumRet" and "rel" in params:
        stem = "NumRelRet"
    if stem in _DIVERSITY_DEFINITIONS:
        return _ask_per_intent(measure, _DIVERSITY_DEFINITIONS[stem], ties)
    definition = _DEFINITIONS.get(stem)
    if definition is None or stem in _NOT_PROVIDED_HERE:
        return None
    # our options by ir_measures' parameter name (ours are lower case: BPM's T is `t`)
    options = {name: option.name for option in definition.options for name in params if name.lower() == option.name}
    handled = {measure.AT_PARAM, "rel", "judged_only", "relative", *options}
    if set(params) - handled - {"dcg"} or params.get("dcg", "log2") != "log2":
        return None  # nDCG's gains, exp-log2, or a parameter this package has no counterpart for
    chosen = {ours: params[theirs] for theirs, ours in sorted(options.items(), key=lambda pair: pair[1])}
    name = definition.name
    if chosen:
        name += "(" + ",".join(f"{key}={option_text(float(value))}" for key, value in chosen.items()) + ")"
    if measure.AT_PARAM in params:
        name += f"@{params[measure.AT_PARAM]}"
    elif definition.parameter in ("required_cutoff", "recall_level", "multiplier"):
        return None
    # a level >= rel is relevant; NumRet without rel, and the measures without it, read no threshold
    rel = measure["rel"] if "rel" in measure.SUPPORTED_PARAMS else None
    threshold = float(rel - 1) if isinstance(rel, int) else 0.0
    judged_only = bool(params.get("judged_only", False))
    return _Ask(name, _Setting(ties or _default_ties(measure), threshold, judged_only))


def _ask_per_intent(measure: Measure, definition: DiversityDefinition, ties: str | None) -> _Ask | None:
    """A diversity measure's name with ir_measures' parameters (alpha, beta, rel; each measure's own, as ndeval's
    invocation reads them); None with judged_only, which ir_measures 0.4 fails on for this family."""
    params: Mapping[str, Any] = measure.params
    if params.get("judged_only", False):
        return None
    ours = {option.name for option in definition.options}
    chosen = {name: measure[name] for name in sorted(ours) if name in measure.SUPPORTED_PARAMS}
    name = definition.name + "(" + ",".join(f"{key}={option_text(float(value))}" for key, value in chosen.items()) + ")"
    if measure.AT_PARAM in params:
        name += f"@{params[measure.AT_PARAM]}"
    elif definition.parameter == "required_cutoff":
        return None
    return _Ask(name, _Setting(ties or _default_ties(measure), 0.0, False, per_intent=True))


def _intent_frame(data: object) -> pl.LazyFrame:
    """Diversity qrels as query_id, iteration (the intent), doc_id, relevance: the `iteration` field or column
    where the qrels have one (TREC's diversity qrels, ir_measures' GenericQrel), else one intent "0"."""
    schema = {QUERY: pl.String, INTENT: pl.String, DOC: pl.String, RELEVANCE: pl.Int64}
    if isinstance(data, pl.LazyFrame | pl.DataFrame):
        frame = data.lazy()
        if INTENT not in frame.collect_schema().names():
            frame = frame.with_columns(pl.lit("0").alias(INTENT))
    elif hasattr(data, "itertuples"):  # a pandas frame
        pandas_frame: Any = data
        columns = [QUERY, DOC, RELEVANCE] + ([INTENT] if INTENT in pandas_frame.columns else [])
        frame = pl.from_pandas(pandas_frame[columns]).lazy()
        if INTENT not in columns:
            frame = frame.with_columns(pl.lit("0").alias(INTENT))
    elif isinstance(data, dict):
        frame = _frame(data, RELEVANCE).with_columns(pl.lit("0").alias(INTENT))
    else:  # namedtuples (ir_measures.Qrel, GenericQrel)
        rows = [(row.query_id, str(getattr(row, INTENT, "0")), row.doc_id, row.relevance) for row in _rows(data)]
        frame = pl.LazyFrame(rows, schema=schema, orient="row")
    return frame.select(pl.col(name).cast(dtype) for name, dtype in schema.items())


def _frame(data: object, value: str) -> pl.LazyFrame:
    """qrels (`value` "relevance") or a run ("score") as a lazy frame of query_id, doc_id and the value."""
    schema = {QUERY: pl.String, DOC: pl.String, value: pl.Int64 if value == RELEVANCE else pl.Float64}
    if isinstance(data, pl.LazyFrame | pl.DataFrame):
        frame = data.lazy()
    elif isinstance(data, dict):  # dict of dicts: flat columns (lists of lists build 3x slower)
        columns = {
            QUERY: [query for query, docs in data.items() for _ in range(len(docs))],
            DOC: [doc for docs in data.values() for doc in docs],
            value: [level for docs in data.values() for level in docs.values()],
        }
        frame = pl.LazyFrame(columns, schema=schema, strict=False)
    elif hasattr(data, "itertuples"):  # a pandas frame
        pandas_frame: Any = data
        frame = pl.from_pandas(pandas_frame[[QUERY, DOC, value]]).lazy()
    else:  # namedtuples (ir_measures.Qrel, ScoredDoc)
        rows = [(row.query_id, row.doc_id, getattr(row, value)) for row in _rows(data)]
        frame = pl.LazyFrame(rows, schema=schema, orient="row")
    return frame.select(pl.col(name).cast(dtype) for name, dtype in schema.items())


def _rows(data: object) -> Iterable[Any]:
    if not isinstance(data, Iterable):
        msg = (
            f"expected qrels or a run as a dict of dicts, an iterable of namedtuples, a pandas or Polars frame; got "
            f"{type(data).__name__}"
        )
        raise TypeError(msg)
    return data


class LodestarProvider(providers.Provider):
    """ir_measures' measures computed by lodestar_polars (see the module docstring).

    Parameters
    ----------
    ties : str | None
        One of this package's tie modes for every measure ("doc", "average", "input", ...), or None (the
        default): each measure's tied scores ordered as ir_measures' default provider for it orders them.
    """

    NAME = "lodestar_polars"

    def __init__(self, ties: str | None = None) -> None:
        super().__init__()
        self.ties = None if ties is None else check_ties(ties, has_doc=True)

    def supports(self, measure: Measure) -> bool:
        measure.validate_params()
        return _ask(measure, self.ties) is not None

    def _evaluator(self, measures: Iterable[Measure], qrels: object) -> _LodestarEvaluator:
        asks: dict[Measure, _Ask] = {}
        for measure in measures:
            ask = _ask(measure, self.ties)
            if ask is None:
                msg = f"lodestar_polars does not compute {measure} (use ir_measures' own providers for it)"
                raise ValueError(msg)
            asks[measure] = ask
        per_intent = any(ask.setting.per_intent for ask in asks.values())
        judged = _frame(qrels, RELEVANCE).collect()
        by_intent = _intent_frame(qrels).collect() if per_intent else None
        return _LodestarEvaluator(asks, judged, by_intent)


class _LodestarEvaluator(providers.Evaluator):
    def __init__(self, asks: dict[Measure, _Ask], qrels: pl.DataFrame, by_intent: pl.DataFrame | None) -> None:
        super().__init__(list(asks), set(qrels[QUERY].unique().to_list()))
        self.asks = asks
        self.qrels = qrels
        self.by_intent = by_intent

    def _per_query(self, run: pl.LazyFrame) -> pl.LazyFrame:
        """Every measure per query, as (query_id, measure index, value) rows: one evaluate() per setting,
        concatenated into one plan."""
        settings: dict[_Setting, list[tuple[int, str]]] = {}
        for index, ask in enumerate(self.asks.values()):
            settings.setdefault(ask.setting, []).append((index, ask.name))
        parts = []
        for setting, named in settings.items():
            names = list(dict.fromkeys(name for _, name in named))
            ordered = run.sort(DOC) if setting.ties == _DOC_ASCENDING else run
            ties = check_ties("input" if setting.ties == _DOC_ASCENDING else setting.ties, has_doc=True)
            columns_named: dict[str, Any] = {"query": QUERY, "doc": DOC, "score": SCORE, "relevance": RELEVANCE}
            if setting.per_intent:  # the judgments per intent; a judged query missing from the run scores 0
                assert self.by_intent is not None
                options: dict[str, Any] = {"qrels": self.by_intent.lazy(), "intent": INTENT, "missing_queries": "zero"}
            else:
                options = {
                    "qrels": self.qrels.lazy(),
                    "threshold": setting.threshold,
                    "judged_only": setting.judged_only,
                    "no_relevant": 0.0,
                }
            per_query = rank_metrics(ordered).evaluate(names, ties=ties, **columns_named, **options)
            # evaluate's columns follow the names given, after the query
            columns = dict(zip(names, per_query.collect_schema().names()[1:], strict=True))
            parts += [
                per_query.select(
                    pl.col(QUERY), pl.lit(index, pl.Int64).alias("measure"), pl.col(columns[name]).alias("value")
                )
                for index, name in named
            ]
        return pl.concat(parts)

    def _iter_calc(self, run: object) -> Iterator[ir_measures.Metric]:
        measures = list(self.asks)
        values = self._per_query(_frame(run, SCORE)).collect()
        for query_id, index, value in values.iter_rows():
            yield ir_measures.Metric(query_id=query_id, measure=measures[index], value=value)


PROVIDER = providers.register(LodestarProvider())
PIPELINE = providers.FallbackProvider([PROVIDER, *ir_measures.DefaultPipeline.providers])
