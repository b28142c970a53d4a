"""Argument checking: turns the keyword arguments of every entry point into one frozen `MetricOptions`.

Everything that can be checked without reading the data is checked here, when the method is called, so a
LazyFrame pipeline fails at the line that built it.  Checks that need the data live in `_checks.py`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import polars as pl

Metric = Literal["dcg", "ndcg", "reciprocal_rank"]
Ties = Literal["average", "reverse", "input", "doc", "optimistic", "pessimistic"]
GainName = Literal["linear", "exponential"]
Gain = GainName | Mapping[float, float] | Sequence[float]
NoRelevant = float | None | Literal["error"]
Cutoff = int | None
Cutoffs = int | None | Sequence[Cutoff]

TIES: tuple[str, ...] = ("average", "reverse", "input", "doc", "optimistic", "pessimistic")
GAINS: tuple[str, ...] = ("linear", "exponential")
METRIC_COLUMN_PREFIX = {"dcg": "dcg", "ndcg": "ndcg", "reciprocal_rank": "reciprocal_rank"}


@dataclass(frozen=True)
class Qrels:
    """Judgments for run evaluation: the frame and its column names."""

    frame: pl.LazyFrame
    query: str
    doc: str
    relevance: str
    missing_queries: Literal["skip", "zero"]


@dataclass(frozen=True)
class MetricOptions:
    """The validated options the plan builder reads."""

    metric: Metric
    query: str
    relevance: str
    score: str
    doc: str | None
    cutoffs: tuple[Cutoff, ...]
    ties: Ties
    gain: GainName | tuple[tuple[float, float], ...]
    weight: str | None
    no_relevant: float | Literal["error"] | None
    log_base: float
    threshold: float
    qrels: Qrels | None

    def column_name(self, cutoff: Cutoff) -> str:
        prefix = METRIC_COLUMN_PREFIX[self.metric]
        return prefix if cutoff is None else f"{prefix}@{cutoff}"

    @property
    def metric_columns(self) -> list[str]:
        return [self.column_name(k) for k in self.cutoffs]


def _check_name(argument: str, value: object) -> str:
    if not isinstance(value, str):
        msg = f"`{argument}` must be a column name (str), got {value!r}."
        raise TypeError(msg)
    return value


def _check_cutoff(value: object) -> Cutoff:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        msg = f"k must be a positive int, None, or a list of them; got {value!r} ({type(value).__name__})."
        raise TypeError(msg)
    if value < 1:
        msg = f"k must be at least 1, got {value}."
        raise ValueError(msg)
    return value


def check_cutoffs(k: object) -> tuple[Cutoff, ...]:
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


NO_QUERY_MESSAGE = "no query to average: the frame has no query (or every query's metric is null)."
ZERO_WEIGHTS_MESSAGE = "Weights sum to zero, can't be normalized"  # scikit-learn's (np.average's) words


def check_single_cutoff(metric: str, k: object) -> None:
    """The `*_score` forms return one number, so they take one cut-off."""
    if isinstance(k, (list, tuple)):
        msg = f"{metric}_score returns one number: give k as one int or None, not {k!r}."
        raise TypeError(msg)


def _check_gain(gain: object) -> GainName | tuple[tuple[float, float], ...]:
    if isinstance(gain, str):
        if gain not in GAINS:
            msg = f"gain must be 'linear', 'exponential', or a mapping label -> gain; got {gain!r}."
            raise ValueError(msg)
        return gain  # type: ignore[return-value]  # narrowed by the membership test above
    if isinstance(gain, Mapping):
        pairs = list(gain.items())
    elif isinstance(gain, Sequence):
        pairs = list(enumerate(gain))
    else:
        msg = f"gain must be 'linear', 'exponential', or a mapping label -> gain; got {gain!r}."
        raise TypeError(msg)
    if not pairs:
        msg = "gain mapping is empty."
        raise ValueError(msg)
    checked: list[tuple[float, float]] = []
    for label, value in pairs:
        for what, number in (("label", label), ("gain", value)):
            if isinstance(number, bool) or not isinstance(number, (int, float)) or not math.isfinite(number):
                msg = f"gain mapping {what} must be a finite number, got {number!r} (label {label!r})."
                raise ValueError(msg)
        checked.append((float(label), float(value)))
    return tuple(checked)


def _check_no_relevant(metric: Metric, no_relevant: object) -> float | Literal["error"] | None:
    if no_relevant is None or no_relevant == "error":
        return no_relevant  # None or the literal "error"
    if isinstance(no_relevant, bool) or not isinstance(no_relevant, (int, float)):
        msg = f"no_relevant must be a float, None or 'error'; got {no_relevant!r}."
        raise TypeError(msg)
    if not math.isfinite(no_relevant):
        msg = f"no_relevant must be finite, got {no_relevant!r}."
        raise ValueError(msg)
    return float(no_relevant)


def _check_log_base(log_base: object) -> float:
    if isinstance(log_base, bool) or not isinstance(log_base, (int, float)):
        msg = f"log_base must be a float, got {log_base!r}."
        raise TypeError(msg)
    if not (log_base > 0 and math.isfinite(log_base)) or log_base == 1:
        msg = f"log_base must be a finite float above 0 and not 1, got {log_base!r}."
        raise ValueError(msg)
    return float(log_base)


def make_options(
    metric: Metric,
    *,
    query: str,
    relevance: str,
    score: str,
    doc: str | None,
    k: Cutoffs,
    ties: str,
    gain: Gain,
    weight: str | None,
    no_relevant: NoRelevant = 0.0,
    log_base: float = 2.0,
    threshold: float = 0.0,
    qrels: pl.LazyFrame | pl.DataFrame | None = None,
    missing_queries: str = "skip",
) -> MetricOptions:
    """Check every argument that does not need the data and freeze them."""
    names = {"query": query, "relevance": relevance, "score": score}
    for argument, value in names.items():
        _check_name(argument, value)
    for argument, optional in (("doc", doc), ("weight", weight)):
        if optional is not None:
            _check_name(argument, optional)
    if ties not in TIES:
        msg = f"ties must be one of {', '.join(repr(t) for t in TIES)}; got {ties!r}."
        raise ValueError(msg)
    if ties == "doc" and doc is None:
        msg = "ties='doc' breaks ties by the doc column: pass doc='<column>'."
        raise ValueError(msg)
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not math.isfinite(threshold):
        msg = f"threshold must be a finite number, got {threshold!r}."
        raise ValueError(msg)
    checked_qrels = None
    if qrels is not None:
        if doc is None:
            msg = "qrels= joins judgments on (query, doc): pass doc='<column>' naming the run's document column."
            raise ValueError(msg)
        if not isinstance(qrels, (pl.DataFrame, pl.LazyFrame)):
            msg = f"qrels must be a polars DataFrame or LazyFrame, got {type(qrels).__name__}."
            raise TypeError(msg)
        if missing_queries not in ("skip", "zero"):
            msg = f"missing_queries must be 'skip' or 'zero', got {missing_queries!r}."
            raise ValueError(msg)
        if missing_queries == "zero" and weight is not None:
            msg = (
                "missing_queries='zero' scores judged queries absent from the run, which have no weight; drop weight=."
            )
            raise ValueError(msg)
        checked_qrels = Qrels(
            frame=qrels.lazy(),
            query=query,
            doc=doc,
            relevance=relevance,
            missing_queries=missing_queries,  # type: ignore[arg-type]  # checked just above
        )
    options = MetricOptions(
        metric=metric,
        query=query,
        relevance=relevance,
        score=score,
        doc=doc,
        cutoffs=check_cutoffs(k),
        ties=ties,  # type: ignore[arg-type]  # checked against TIES above
        gain=_check_gain(gain),
        weight=weight,
        no_relevant=_check_no_relevant(metric, no_relevant),
        log_base=_check_log_base(log_base),
        threshold=float(threshold),
        qrels=checked_qrels,
    )
    clashing = {query, *(weight or "",)} & set(options.metric_columns)
    if clashing:
        msg = f"column name {sorted(clashing)[0]!r} clashes with an output column; rename it first."
        raise ValueError(msg)
    return options


def _require_columns(schema: pl.Schema, where: str, columns: dict[str, str]) -> None:
    for role, name in columns.items():
        if name not in schema:
            msg = f"{role} column {name!r} not found in {where}; its columns are: {', '.join(schema.names())}."
            raise pl.exceptions.ColumnNotFoundError(msg)


def _require_numeric(schema: pl.Schema, where: str, role: str, name: str, *, allow_boolean: bool) -> None:
    dtype = schema[name]
    if dtype.is_numeric() or (allow_boolean and dtype == pl.Boolean):
        return
    kinds = "numeric or boolean" if allow_boolean else "numeric"
    msg = f"{role} column {name!r} in {where} must be {kinds}, got dtype {dtype}."
    raise pl.exceptions.SchemaError(msg)


def check_schema(options: MetricOptions, schema: pl.Schema) -> None:
    """Check that the columns exist and have usable dtypes (the frame, and the judgments if any)."""
    o = options
    columns = {"query": o.query, "score": o.score}
    if o.qrels is None:
        columns["relevance"] = o.relevance
    if o.doc is not None:
        columns["doc"] = o.doc
    if o.weight is not None:
        columns["weight"] = o.weight
    _require_columns(schema, "the frame", columns)
    _require_numeric(schema, "the frame", "score", o.score, allow_boolean=False)
    if o.qrels is None:
        _require_numeric(schema, "the frame", "relevance", o.relevance, allow_boolean=True)
    if o.weight is not None:
        _require_numeric(schema, "the frame", "weight", o.weight, allow_boolean=False)
    if o.qrels is not None:
        q = o.qrels
        qrels_schema = q.frame.collect_schema()
        _require_columns(qrels_schema, "qrels", {"query": q.query, "doc": q.doc, "relevance": q.relevance})
        _require_numeric(qrels_schema, "qrels", "relevance", q.relevance, allow_boolean=True)
        for role, run_name, qrels_name in (("query", o.query, q.query), ("doc", o.doc, q.doc)):
            assert run_name is not None
            if schema[run_name] != qrels_schema[qrels_name]:
                msg = (
                    f"{role} column {run_name!r} of the run has dtype {schema[run_name]} but {qrels_name!r} of "
                    f"qrels has dtype {qrels_schema[qrels_name]}; cast one so they join."
                )
                raise pl.exceptions.SchemaError(msg)
