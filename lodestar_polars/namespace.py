"""The `.rank_metrics` namespace on DataFrame and LazyFrame: a thin shell over `_plan`.

Both namespaces build the same lazy plan; the DataFrame one collects it.  Every method keeps an explicit,
typed, keyword-only signature whose body hands the arguments to the metric's typed spec builder in
`_spec.py`, so mypy follows every option from the signature to the plan.
"""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar, overload

import polars as pl

from . import _diversity, _plan, _spec
from ._checks import refuse_nan_keys
from ._docs import PARAMETERS, documented, mean_returns, per_query_returns
from ._spec import Cutoffs, DiversitySpec, Gain, IntoColumn, Keys, MissingQueries, NoRelevant, Spec, Ties

__all__ = ["RankMetricsFrame", "RankMetricsLazyFrame", "rank_metrics"]

FrameT = TypeVar("FrameT", pl.DataFrame, pl.LazyFrame)
QrelsFrame = pl.DataFrame | pl.LazyFrame | None

EXAMPLE_FRAME = """>>> import lodestar_polars
>>> df = pl.DataFrame(
...     {"query": [1, 1, 1, 2, 2], "relevance": [2, 0, 1, 0, 1], "score": [0.9, 0.8, 0.1, 0.5, 0.5]}
... )
"""


ClassT = TypeVar("ClassT", bound=type)


def _argument_error(name: str, signature: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """What `.rank_metrics.<name>(*args, **kwargs)` got wrong, named as the user wrote it (not by the class that
    implements it), with the way to pass it."""
    method = f".rank_metrics.{name}()"
    parameters = list(signature.parameters.values())[1:]  # without self
    positional = [p.name for p in parameters if p.kind is not inspect.Parameter.KEYWORD_ONLY]
    options = [p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY]
    unknown = [key for key in kwargs if key not in signature.parameters or key == "self"]
    if unknown:
        close = difflib.get_close_matches(unknown[0], [*positional, *options], n=1)
        hint = f"; did you mean {close[0]}=?" if close else f"; its options: {', '.join(options)}."
        return f"{method} got an unexpected keyword argument {unknown[0]!r}{hint}"
    if len(args) > len(positional):
        takes = "no positional argument" if not positional else f"one positional argument, {positional[0]}"
        extra = args[len(positional)]
        is_frame = isinstance(extra, pl.DataFrame | pl.LazyFrame)
        # the option such a value most likely meant: judgments are a frame, a column a name, a cut-off the rest
        guess = "qrels" if is_frame else "query" if isinstance(extra, str) else "k"
        shown = "<the frame>" if is_frame else repr(extra) if len(repr(extra)) <= 40 else "..."
        advice = f"pass {guess}={shown}" if guess in options else f"pass them by name ({', '.join(options)})"
        return f"{method} takes {takes} ({len(args)} given): its options are keyword-only; {advice}."
    missing = [name for name in positional if name not in kwargs][len(args) :]
    if missing:
        return f'{method} needs its {missing[0]} argument (e.g. {method[:-1]}["ndcg@10", "ap"])).'
    return f"{method} got an argument twice: {', '.join(key for key in kwargs if key in positional[: len(args)])}."


def _checked_arguments(method: Callable[..., Any]) -> Callable[..., Any]:
    signature = inspect.signature(method)

    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:  # self is args[0]: a keyword named "self" is the user's mistake
        try:
            signature.bind(*args, **kwargs)
        except TypeError:
            raise TypeError(_argument_error(method.__name__, signature, args[1:], kwargs)) from None
        return method(*args, **kwargs)

    return call


def _arguments_named_as_called(cls: ClassT) -> ClassT:
    """Every public method of the class checks its arguments first, so that a wrong call names the method as the
    user wrote it (`.rank_metrics.ndcg()`), not as Python would (by the implementing class, a private one), and
    says how to pass the option (`pass k=[3, 5]`).  The signature and docstring stay the method's own."""
    for name, member in list(vars(cls).items()):
        if not name.startswith("_") and inspect.isfunction(member):
            setattr(cls, name, _checked_arguments(member))
    return cls


@_arguments_named_as_called
class _RankMetrics(Generic[FrameT]):
    def __init__(self, frame: FrameT) -> None:
        self._frame: FrameT = frame

    def _finish(self, plan: pl.LazyFrame) -> FrameT:
        raise NotImplementedError

    def _checked(self, spec: Spec, qrels: QrelsFrame) -> tuple[pl.LazyFrame, pl.LazyFrame | None]:
        """The run and the judgments, their schemas checked and their float query ids checked for NaN."""
        judgments = _spec.check_qrels_frame(qrels)
        qrels_schema = judgments.collect_schema() if judgments is not None else None
        _spec.check_schema(spec, self._frame.collect_schema(), qrels_schema)
        run = refuse_nan_keys(self._frame.lazy(), "", spec.query)
        if judgments is not None:
            judgments = refuse_nan_keys(judgments, "qrels ", spec.query)
        return run, judgments

    def _per_query(self, spec: Spec | DiversitySpec, qrels: QrelsFrame) -> FrameT:
        if isinstance(spec, DiversitySpec):
            return self._finish(_diversity.per_query_plan(*self._checked_intents(spec, qrels), spec))
        return self._finish(_plan.per_query_plan(*self._checked(spec, qrels), spec))

    def _mean(self, spec: Spec | DiversitySpec, qrels: QrelsFrame) -> FrameT:
        if isinstance(spec, DiversitySpec):
            return self._finish(_diversity.mean_plan(*self._checked_intents(spec, qrels), spec))
        return self._finish(_plan.mean_plan(*self._checked(spec, qrels), spec))

    def _checked_intents(self, spec: DiversitySpec, qrels: QrelsFrame) -> tuple[pl.LazyFrame, pl.LazyFrame]:
        """The run and the per-intent judgments of a diversity call, checked as `_checked` checks them."""
        judgments = _spec.check_qrels_frame(qrels)
        _spec.check_inputs(spec, self._frame.lazy(), judgments)
        assert judgments is not None  # check_inputs refuses a call without judgments
        run = refuse_nan_keys(self._frame.lazy(), "", spec.base.query)
        return run, refuse_nan_keys(judgments, "qrels ", spec.base.query)

    @documented(
        "NDCG per query, as scikit-learn's `ndcg_score` defines it (tie averaging by default).",
        [
            "query",
            "relevance",
            "score",
            "doc",
            "by",
            "k",
            "ties",
            "gain",
            "weight",
            "no_relevant",
            "qrels",
            "missing_queries",
            "max_retrieved",
            "judged_only",
        ],
        per_query_returns("`ndcg` (k None) or `ndcg@{k}`, one per cut-off"),
        EXAMPLE_FRAME + ">>> df.rank_metrics.ndcg(k=[1, 3])\n"
        "shape: (2, 3)\n"
        "┌───────┬────────┬──────────┐\n"
        "│ query ┆ ndcg@1 ┆ ndcg@3   │\n"
        "│ ---   ┆ ---    ┆ ---      │\n"
        "│ i64   ┆ f64    ┆ f64      │\n"
        "╞═══════╪════════╪══════════╡\n"
        "│ 1     ┆ 1.0    ┆ 0.950234 │\n"
        "│ 2     ┆ 0.5    ┆ 0.815465 │\n"
        "└───────┴────────┴──────────┘",
    )
    def ndcg(
        self,
        *,
        query: Keys = "query",
        relevance: IntoColumn = "relevance",
        score: IntoColumn = "score",
        doc: Keys | None = None,
        by: Keys | None = None,
        k: Cutoffs = None,
        ties: Ties = "average",
        gain: Gain = "linear",
        weight: IntoColumn | None = None,
        no_relevant: NoRelevant = 0.0,
        qrels: QrelsFrame = None,
        missing_queries: MissingQueries = "skip",
        max_retrieved: int | None = None,
        judged_only: bool = False,
    ) -> FrameT:
        return self._per_query(
            _spec.ndcg_spec(
                query=query,
                relevance=relevance,
                score=score,
                doc=doc,
                by=by,
                k=k,
                ties=ties,
                gain=gain,
                weight=weight,
                no_relevant=no_relevant,
                missing_queries=missing_queries,
                max_retrieved=max_retrieved,
                judged_only=judged_only,
            ),
            qrels,
        )

    @documented(
        "The (weighted) mean of `ndcg` per `by` group (one row without `by`).",
        [
            "query",
            "relevance",
            "score",
            "doc",
            "by",
            "k",
            "ties",
            "gain",
            "weight",
            "no_relevant",
            "qrels",
            "missing_queries",
            "max_retrieved",
            "judged_only",
        ],
        mean_returns(),
        EXAMPLE_FRAME + ">>> df.rank_metrics.ndcg_mean(k=[1, 3])\n"
        "shape: (1, 4)\n"
        "┌────────┬─────────┬─────────┬────────────┐\n"
        "│ ndcg@1 ┆ ndcg@3  ┆ queries ┆ weight_sum │\n"
        "│ ---    ┆ ---     ┆ ---     ┆ ---        │\n"
        "│ f64    ┆ f64     ┆ u32     ┆ f64        │\n"
        "╞════════╪═════════╪═════════╪════════════╡\n"
        "│ 0.75   ┆ 0.88285 ┆ 2       ┆ 2.0        │\n"
        "└────────┴─────────┴─────────┴────────────┘",
    )
    def ndcg_mean(
        self,
        *,
        query: Keys = "query",
        relevance: IntoColumn = "relevance",
        score: IntoColumn = "score",
        doc: Keys | None = None,
        by: Keys | None = None,
        k: Cutoffs = None,
        ties: Ties = "average",
        gain: Gain = "linear",
        weight: IntoColumn | None = None,
        no_relevant: NoRelevant = 0.0,
        qrels: QrelsFrame = None,
        missing_queries: MissingQueries = "skip",
        max_retrieved: int | None = None,
        judged_only: bool = False,
    ) -> FrameT:
        return self._mean(
            _spec.ndcg_spec(
                query=query,
                relevance=relevance,
                score=score,
                doc=doc,
                by=by,
                k=k,
                ties=ties,
                gain=gain,
                weight=weight,
                no_relevant=no_relevant,
                missing_queries=missing_queries,
                max_retrieved=max_retrieved,
                judged_only=judged_only,
            ),
            qrels,
        )

    @documented(
        "DCG per query, as scikit-learn's `dcg_score` defines it; negative relevance is accepted.",
        [
            "query",
            "relevance",
            "score",
            "doc",
            "by",
            "k",
            "ties",
            "gain",
            "weight",
            "log_base",
            "qrels",
            "missing_queries",
            "max_retrieved",
            "judged_only",
        ],
        per_query_returns("`dcg` / `dcg@{k}`"),
        EXAMPLE_FRAME + ">>> df.rank_metrics.dcg(k=3)\n"
        "shape: (2, 2)\n"
        "┌───────┬──────────┐\n"
        "│ query ┆ dcg@3    │\n"
        "│ ---   ┆ ---      │\n"
        "│ i64   ┆ f64      │\n"
        "╞═══════╪══════════╡\n"
        "│ 1     ┆ 2.5      │\n"
        "│ 2     ┆ 0.815465 │\n"
        "└───────┴──────────┘",
    )
    def dcg(
        self,
        *,
        query: Keys = "query",
        relevance: IntoColumn = "relevance",
        score: IntoColumn = "score",
        doc: Keys | None = None,
        by: Keys | None = None,
        k: Cutoffs = None,
        ties: Ties = "average",
        gain: Gain = "linear",
        weight: IntoColumn | None = None,
        log_base: float = 2.0,
        qrels: QrelsFrame = None,
        missing_queries: MissingQueries = "skip",
        max_retrieved: int | None = None,
        judged_only: bool = False,
    ) -> FrameT:
        return self._per_query(
            _spec.dcg_spec(
                query=query,
                relevance=relevance,
                score=score,
                doc=doc,
                by=by,
                k=k,
                ties=ties,
                gain=gain,
                weight=weight,
                log_base=log_base,
                missing_queries=missing_queries,
                max_retrieved=max_retrieved,
                judged_only=judged_only,
            ),
            qrels,
        )

    @documented(
        "The (weighted) mean of `dcg` per `by` group (one row without `by`).",
        [
            "query",
            "relevance",
            "score",
            "doc",
            "by",
            "k",
            "ties",
            "gain",
            "weight",
            "log_base",
            "qrels",
            "missing_queries",
            "max_retrieved",
            "judged_only",
        ],
        mean_returns(),
        EXAMPLE_FRAME + ">>> df.rank_metrics.dcg_mean(k=3)\n"
        "shape: (1, 3)\n"
        "┌──────────┬─────────┬────────────┐\n"
        "│ dcg@3    ┆ queries ┆ weight_sum │\n"
        "│ ---      ┆ ---     ┆ ---        │\n"
        "│ f64      ┆ u32     ┆ f64        │\n"
        "╞══════════╪═════════╪════════════╡\n"
        "│ 1.657732 ┆ 2       ┆ 2.0        │\n"
        "└──────────┴─────────┴────────────┘",
    )
    def dcg_mean(
        self,
        *,
        query: Keys = "query",
        relevance: IntoColumn = "relevance",
        score: IntoColumn = "score",
        doc: Keys | None = None,
        by: Keys | None = None,
        k: Cutoffs = None,
        ties: Ties = "average",
        gain: Gain = "linear",
        weight: IntoColumn | None = None,
        log_base: float = 2.0,
        qrels: QrelsFrame = None,
        missing_queries: MissingQueries = "skip",
        max_retrieved: int | None = None,
        judged_only: bool = False,
    ) -> FrameT:
        return self._mean(
            _spec.dcg_spec(
                query=query,
                relevance=relevance,
                score=score,
                doc=doc,
                by=by,
                k=k,
                ties=ties,
                gain=gain,
                weight=weight,
                log_base=log_base,
                missing_queries=missing_queries,
                max_retrieved=max_retrieved,
                judged_only=judged_only,
            ),
            qrels,
        )

    @documented(
        "Reciprocal rank per query: 1 / position of the first relevant document (0 when none is in the top k).",
        [
            "query",
            "relevance",
            "score",
            "doc",
            "by",
            "k",
            "ties",
            "threshold",
            "weight",
            "qrels",
            "missing_queries",
            "max_retrieved",
            "judged_only",
        ],
        per_query_returns("`reciprocal_rank` / `reciprocal_rank@{k}`"),
        EXAMPLE_FRAME + ">>> df.rank_metrics.reciprocal_rank()\n"
        "shape: (2, 2)\n"
        "┌───────┬─────────────────┐\n"
        "│ query ┆ reciprocal_rank │\n"
        "│ ---   ┆ ---             │\n"
        "│ i64   ┆ f64             │\n"
        "╞═══════╪═════════════════╡\n"
        "│ 1     ┆ 1.0             │\n"
        "│ 2     ┆ 0.75            │\n"
        "└───────┴─────────────────┘",
    )
    def reciprocal_rank(
        self,
        *,
        query: Keys = "query",
        relevance: IntoColumn = "relevance",
        score: IntoColumn = "score",
        doc: Keys | None = None,
        by: Keys | None = None,
        k: Cutoffs = None,
        ties: Ties = "average",
        threshold: float = 0.0,
        weight: IntoColumn | None = None,
        qrels: QrelsFrame = None,
        missing_queries: MissingQueries = "skip",
        max_retrieved: int | None = None,
        judged_only: bool = False,
    ) -> FrameT:
        return self._per_query(
            _spec.threshold_spec(
                "rr",
                "reciprocal_rank",
                query=query,
                relevance=relevance,
                score=score,
                doc=doc,
                by=by,
                k=k,
                ties=ties,
                threshold=threshold,
                weight=weight,
                no_relevant=0.0,
                missing_queries=missing_queries,
                max_retrieved=max_retrieved,
                judged_only=judged_only,
            ),
            qrels,
        )

    @documented(
        "The (weighted) mean of `reciprocal_rank` per `by` group (one row without `by`).",
        [
            "query",
            "relevance",
            "score",
            "doc",
            "by",
            "k",
            "ties",
            "threshold",
            "weight",
            "qrels",
            "missing_queries",
            "max_retrieved",
            "judged_only",
        ],
        mean_returns(),
        EXAMPLE_FRAME + ">>> df.rank_metrics.reciprocal_rank_mean()\n"
        "shape: (1, 3)\n"
        "┌─────────────────┬─────────┬────────────┐\n"
        "│ reciprocal_rank ┆ queries ┆ weight_sum │\n"
        "│ ---             ┆ ---     ┆ ---        │\n"
        "│ f64             ┆ u32     ┆ f64        │\n"
        "╞═════════════════╪═════════╪════════════╡\n"
        "│ 0.875           ┆ 2       ┆ 2.0        │\n"
        "└─────────────────┴─────────┴────────────┘",
    )
    def reciprocal_rank_mean(
        self,
        *,
        query: Keys = "query",
        relevance: IntoColumn = "relevance",
        score: IntoColumn = "score",
        doc: Keys | None = None,
        by: Keys | None = None,
        k: Cutoffs = None,
        ties: Ties = "average",
        threshold: float = 0.0,
        weight: IntoColumn | None = None,
        qrels: QrelsFrame = None,
        missing_queries: MissingQueries = "skip",
        max_retrieved: int | None = None,
        judged_only: bool = False,
    ) -> FrameT:
        return self._mean(
            _spec.threshold_spec(
                "rr",
                "reciprocal_rank",
                query=query,
                relevance=relevance,
                score=score,
                doc=doc,
                by=by,
                k=k,
                ties=ties,
                threshold=threshold,
                weight=weight,
                no_relevant=0.0,
                missing_queries=missing_queries,
                max_retrieved=max_retrieved,
                judged_only=judged_only,
            ),
            qrels,
        )

    @documented(
        "Precision per query: relevant documents in the top k / k (trec_eval's P_k: a shorter list still divides "
        "by k; k None: by the list's length).",
        [
            "query",
            "relevance",
            "score",
            "doc",
            "by",
            "k",
            "ties",
            "threshold",
            "weight",
            "qrels",
            "missing_queries",
            "max_retrieved",
            "judged_only",
        ],
        per_query_returns("`precision` / `precision@{k}`"),
        EXAMPLE_FRAME + ">>> df.rank_metrics.precision(k=2)\n"
        "shape: (2, 2)\n"
        "┌───────┬─────────────┐\n"
        "│ query ┆ precision@2 │\n"
        "│ ---   ┆ ---         │\n"
        "│ i64   ┆ f64         │\n"
        "╞═══════╪═════════════╡\n"
        "│ 1     ┆ 0.5         │\n"
        "│ 2     ┆ 0.5         │\n"
        "└───────┴─────────────┘",
    )
    def precision(
        self,
        *,
        query: Keys = "query",
        relevance: IntoColumn = "relevance",
        score: IntoColumn = "score",
        doc: Keys | None = None,
        by: Keys | None = None,
        k: Cutoffs = None,
        ties: Ties = "average",
        threshold: float = 0.0,
        weight: IntoColumn | None = None,
        qrels: QrelsFrame = None,
        missing_queries: MissingQueries = "skip",
        max_retrieved: int | None = None,
        judged_only: bool = False,
    ) -> FrameT:
        return self._per_query(
            _spec.threshold_spec(
                "p",
                "precision",
                query=query,
                relevance=relevance,
                score=score,
                doc=doc,
                by=by,
                k=k,
                ties=ties,
                threshold=threshold,
                weight=weight,
                no_relevant=0.0,
                missing_queries=missing_queries,
                max_retrieved=max_retrieved,
                judged_only=judged_only,
            ),
            qrels,
        )

    @documented(
        "The (weighted) mean of `precision` per `by` group (one row without `by`).",
        [
            "query",
            "relevance",
            "score",
            "doc",
            "by",
            "k",
            "ties",
            "threshold",
            "weight",
            "qrels",
            "missing_queries",
            "max_retrieved",
            "judged_only",
        ],
        mean_returns(),
        EXAMPLE_FRAME + ">>> df.rank_metrics.precision_mean(k=2)\n"
        "shape: (1, 3)\n"
        "┌─────────────┬─────────┬────────────┐\n"
        "│ precision@2 ┆ queries ┆ weight_sum │\n"
        "│ ---         ┆ ---     ┆ ---        │\n"
        "│ f64         ┆ u32     ┆ f64        │\n"
        "╞═════════════╪═════════╪════════════╡\n"
        "│ 0.5         ┆ 2       ┆ 2.0        │\n"
        "└─────────────┴─────────┴────────────┘",
    )
    def precision_mean(
        self,
        *,
        query: Keys = "query",
        relevance: IntoColumn = "relevance",
        score: IntoColumn = "score",
        doc: Keys | None = None,
        by: Keys | None = None,
        k: Cutoffs = None,
        ties: Ties = "average",
        threshold: float = 0.0,
        weight: IntoColumn | None = None,
        qrels: QrelsFrame = None,
        missing_queries: MissingQueries = "skip",
        max_retrieved: int | None = None,
        judged_only: bool = False,
    ) -> FrameT:
        return self._mean(
            _spec.threshold_spec(
                "p",
                "precision",
                query=query,
                relevance=relevance,
                score=score,
                doc=doc,
                by=by,
                k=k,
                ties=ties,
                threshold=threshold,
                weight=weight,
                no_relevant=0.0,
                missing_queries=missing_queries,
                max_retrieved=max_retrieved,
                judged_only=judged_only,
            ),
            qrels,
        )

    @documented(
        "Recall per query: relevant documents in the top k / relevant documents of the query (with qrels: every "
        "relevant judged document).",
        [
            "query",
            "relevance",
            "score",
            "doc",
            "by",
            "k",
            "ties",
            "threshold",
            "weight",
            "no_relevant",
            "qrels",
            "missing_queries",
            "max_retrieved",
            "judged_only",
        ],
        per_query_returns("`recall` / `recall@{k}`"),
        EXAMPLE_FRAME + ">>> df.rank_metrics.recall(k=2)\n"
        "shape: (2, 2)\n"
        "┌───────┬──────────┐\n"
        "│ query ┆ recall@2 │\n"
        "│ ---   ┆ ---      │\n"
        "│ i64   ┆ f64      │\n"
        "╞═══════╪══════════╡\n"
        "│ 1     ┆ 0.5      │\n"
        "│ 2     ┆ 1.0      │\n"
        "└───────┴──────────┘",
    )
    def recall(
        self,
        *,
        query: Keys = "query",
        relevance: IntoColumn = "relevance",
        score: IntoColumn = "score",
        doc: Keys | None = None,
        by: Keys | None = None,
        k: Cutoffs = None,
        ties: Ties = "average",
        threshold: float = 0.0,
        weight: IntoColumn | None = None,
        no_relevant: NoRelevant = 0.0,
        qrels: QrelsFrame = None,
        missing_queries: MissingQueries = "skip",
        max_retrieved: int | None = None,
        judged_only: bool = False,
    ) -> FrameT:
        return self._per_query(
            _spec.threshold_spec(
                "r",
                "recall",
                query=query,
                relevance=relevance,
                score=score,
                doc=doc,
                by=by,
                k=k,
                ties=ties,
                threshold=threshold,
                weight=weight,
                no_relevant=no_relevant,
                missing_queries=missing_queries,
                max_retrieved=max_retrieved,
                judged_only=judged_only,
            ),
            qrels,
        )

    @documented(
        "The (weighted) mean of `recall` per `by` group (one row without `by`).",
        [
            "query",
            "relevance",
            "score",
            "doc",
            "by",
            "k",
            "ties",
            "threshold",
            "weight",
            "no_relevant",
            "qrels",
            "missing_queries",
            "max_retrieved",
            "judged_only",
        ],
        mean_returns(),
        EXAMPLE_FRAME + ">>> df.rank_metrics.recall_mean(k=2)\n"
        "shape: (1, 3)\n"
        "┌──────────┬─────────┬────────────┐\n"
        "│ recall@2 ┆ queries ┆ weight_sum │\n"
        "│ ---      ┆ ---     ┆ ---        │\n"
        "│ f64      ┆ u32     ┆ f64        │\n"
        "╞══════════╪═════════╪════════════╡\n"
        "│ 0.75     ┆ 2       ┆ 2.0        │\n"
        "└──────────┴─────────┴────────────┘",
    )
    def recall_mean(
        self,
        *,
        query: Keys = "query",
        relevance: IntoColumn = "relevance",
        score: IntoColumn = "score",
        doc: Keys | None = None,
        by: Keys | None = None,
        k: Cutoffs = None,
        ties: Ties = "average",
        threshold: float = 0.0,
        weight: IntoColumn | None = None,
        no_relevant: NoRelevant = 0.0,
        qrels: QrelsFrame = None,
        missing_queries: MissingQueries = "skip",
        max_retrieved: int | None = None,
        judged_only: bool = False,
    ) -> FrameT:
        return self._mean(
            _spec.threshold_spec(
                "r",
                "recall",
                query=query,
                relevance=relevance,
                score=score,
                doc=doc,
                by=by,
                k=k,
                ties=ties,
                threshold=threshold,
                weight=weight,
                no_relevant=no_relevant,
                missing_queries=missing_queries,
                max_retrieved=max_retrieved,
                judged_only=judged_only,
            ),
            qrels,
        )

    @documented(
        "Average precision per query (AP, AP@k): the precision at each relevant document in the top k, summed and "
        "divided by the query's relevant documents (trec_eval's map / map_cut_k).",
        [
            "query",
            "relevance",
            "score",
            "doc",
            "by",
            "k",
            "ties",
            "threshold",
            "weight",
            "no_relevant",
            "qrels",
            "missing_queries",
            "max_retrieved",
            "judged_only",
        ],
        per_query_returns("`average_precision` / `average_precision@{k}`"),
        EXAMPLE_FRAME + ">>> df.rank_metrics.average_precision()\n"
        "shape: (2, 2)\n"
        "┌───────┬───────────────────┐\n"
        "│ query ┆ average_precision │\n"
        "│ ---   ┆ ---               │\n"
        "│ i64   ┆ f64               │\n"
        "╞═══════╪═══════════════════╡\n"
        "│ 1     ┆ 0.833333          │\n"
        "│ 2     ┆ 0.75              │\n"
        "└───────┴───────────────────┘",
    )
    def average_precision(
        self,
        *,
        query: Keys = "query",
        relevance: IntoColumn = "relevance",
        score: IntoColumn = "score",
        doc: Keys | None = None,
        by: Keys | None = None,
        k: Cutoffs = None,
        ties: Ties = "average",
        threshold: float = 0.0,
        weight: IntoColumn | None = None,
        no_relevant: NoRelevant = 0.0,
        qrels: QrelsFrame = None,
        missing_queries: MissingQueries = "skip",
        max_retrieved: int | None = None,
        judged_only: bool = False,
    ) -> FrameT:
        return self._per_query(
            _spec.threshold_spec(
                "ap",
                "average_precision",
                query=query,
                relevance=relevance,
                score=score,
                doc=doc,
                by=by,
                k=k,
                ties=ties,
                threshold=threshold,
                weight=weight,
                no_relevant=no_relevant,
                missing_queries=missing_queries,
                max_retrieved=max_retrieved,
                judged_only=judged_only,
            ),
            qrels,
        )

    @documented(
        "The (weighted) mean of `average_precision` per `by` group (one row without `by`).",
        [
            "query",
            "relevance",
            "score",
            "doc",
            "by",
            "k",
            "ties",
            "threshold",
            "weight",
            "no_relevant",
            "qrels",
            "missing_queries",
            "max_retrieved",
            "judged_only",
        ],
        mean_returns(),
        EXAMPLE_FRAME + ">>> df.rank_metrics.average_precision_mean()\n"
        "shape: (1, 3)\n"
        "┌───────────────────┬─────────┬────────────┐\n"
        "│ average_precision ┆ queries ┆ weight_sum │\n"
        "│ ---               ┆ ---     ┆ ---        │\n"
        "│ f64               ┆ u32     ┆ f64        │\n"
        "╞═══════════════════╪═════════╪════════════╡\n"
        "│ 0.791667          ┆ 2       ┆ 2.0        │\n"
        "└───────────────────┴─────────┴────────────┘",
    )
    def average_precision_mean(
        self,
        *,
        query: Keys = "query",
        relevance: IntoColumn = "relevance",
        score: IntoColumn = "score",
        doc: Keys | None = None,
        by: Keys | None = None,
        k: Cutoffs = None,
        ties: Ties = "average",
        threshold: float = 0.0,
        weight: IntoColumn | None = None,
        no_relevant: NoRelevant = 0.0,
        qrels: QrelsFrame = None,
        missing_queries: MissingQueries = "skip",
        max_retrieved: int | None = None,
        judged_only: bool = False,
    ) -> FrameT:
        return self._mean(
            _spec.threshold_spec(
                "ap",
                "average_precision",
                query=query,
                relevance=relevance,
                score=score,
                doc=doc,
                by=by,
                k=k,
                ties=ties,
                threshold=threshold,
                weight=weight,
                no_relevant=no_relevant,
                missing_queries=missing_queries,
                max_retrieved=max_retrieved,
                judged_only=judged_only,
            ),
            qrels,
        )

    @documented(
        "Success (hit rate) per query: 1 when a relevant document is in the top k, else 0 (with tie averaging, "
        "its probability).",
        [
            "query",
            "relevance",
            "score",
            "doc",
            "by",
            "k",
            "ties",
            "threshold",
            "weight",
            "qrels",
            "missing_queries",
            "max_retrieved",
            "judged_only",
        ],
        per_query_returns("`success` / `success@{k}`"),
        EXAMPLE_FRAME + ">>> df.rank_metrics.success(k=1)\n"
        "shape: (2, 2)\n"
        "┌───────┬───────────┐\n"
        "│ query ┆ success@1 │\n"
        "│ ---   ┆ ---       │\n"
        "│ i64   ┆ f64       │\n"
        "╞═══════╪═══════════╡\n"
        "│ 1     ┆ 1.0       │\n"
        "│ 2     ┆ 0.5       │\n"
        "└───────┴───────────┘",
    )
    def success(
        self,
        *,
        query: Keys = "query",
        relevance: IntoColumn = "relevance",
        score: IntoColumn = "score",
        doc: Keys | None = None,
        by: Keys | None = None,
        k: Cutoffs = None,
        ties: Ties = "average",
        threshold: float = 0.0,
        weight: IntoColumn | None = None,
        qrels: QrelsFrame = None,
        missing_queries: MissingQueries = "skip",
        max_retrieved: int | None = None,
        judged_only: bool = False,
    ) -> FrameT:
        return self._per_query(
            _spec.threshold_spec(
                "success",
                "success",
                query=query,
                relevance=relevance,
                score=score,
                doc=doc,
                by=by,
                k=k,
                ties=ties,
                threshold=threshold,
                weight=weight,
                no_relevant=0.0,
                missing_queries=missing_queries,
                max_retrieved=max_retrieved,
                judged_only=judged_only,
            ),
            qrels,
        )

    @documented(
        "The (weighted) mean of `success` per `by` group (one row without `by`).",
        [
            "query",
            "relevance",
            "score",
            "doc",
            "by",
            "k",
            "ties",
            "threshold",
            "weight",
            "qrels",
            "missing_queries",
            "max_retrieved",
            "judged_only",
        ],
        mean_returns(),
        EXAMPLE_FRAME + ">>> df.rank_metrics.success_mean(k=1)\n"
        "shape: (1, 3)\n"
        "┌───────────┬─────────┬────────────┐\n"
        "│ success@1 ┆ queries ┆ weight_sum │\n"
        "│ ---       ┆ ---     ┆ ---        │\n"
        "│ f64       ┆ u32     ┆ f64        │\n"
        "╞═══════════╪═════════╪════════════╡\n"
        "│ 0.75      ┆ 2       ┆ 2.0        │\n"
        "└───────────┴─────────┴────────────┘",
    )
    def success_mean(
        self,
        *,
        query: Keys = "query",
        relevance: IntoColumn = "relevance",
        score: IntoColumn = "score",
        doc: Keys | None = None,
        by: Keys | None = None,
        k: Cutoffs = None,
        ties: Ties = "average",
        threshold: float = 0.0,
        weight: IntoColumn | None = None,
        qrels: QrelsFrame = None,
        missing_queries: MissingQueries = "skip",
        max_retrieved: int | None = None,
        judged_only: bool = False,
    ) -> FrameT:
        return self._mean(
            _spec.threshold_spec(
                "success",
                "success",
                query=query,
                relevance=relevance,
                score=score,
                doc=doc,
                by=by,
                k=k,
                ties=ties,
                threshold=threshold,
                weight=weight,
                no_relevant=0.0,
                missing_queries=missing_queries,
                max_retrieved=max_retrieved,
                judged_only=judged_only,
            ),
            qrels,
        )

    @documented(
        "Several measures per query in one plan: the options shared by the measures are given once.",
        [
            "query",
            "relevance",
            "score",
            "doc",
            "by",
            "ties",
            "gain",
            "weight",
            "no_relevant",
            "threshold",
            "log_base",
            "qrels",
            "missing_queries",
            "max_retrieved",
            "judged_only",
            "exact_sums",
            "intent",
        ],
        per_query_returns("one column per measure, named canonically (`ndcg@10`, `p@5`, `ap`, `rr`...)"),
        EXAMPLE_FRAME + '>>> df.rank_metrics.evaluate(["ndcg@3", "p@2", "ap", "rr"])\n'
        "shape: (2, 5)\n"
        "┌───────┬──────────┬─────┬──────────┬──────┐\n"
        "│ query ┆ ndcg@3   ┆ p@2 ┆ ap       ┆ rr   │\n"
        "│ ---   ┆ ---      ┆ --- ┆ ---      ┆ ---  │\n"
        "│ i64   ┆ f64      ┆ f64 ┆ f64      ┆ f64  │\n"
        "╞═══════╪══════════╪═════╪══════════╪══════╡\n"
        "│ 1     ┆ 0.950234 ┆ 0.5 ┆ 0.833333 ┆ 1.0  │\n"
        "│ 2     ┆ 0.815465 ┆ 0.5 ┆ 0.75     ┆ 0.75 │\n"
        "└───────┴──────────┴─────┴──────────┴──────┘",
        first=PARAMETERS["measures"],
    )
    def evaluate(
        self,
        measures: str | Sequence[str],
        *,
        query: Keys = "query",
        relevance: IntoColumn = "relevance",
        score: IntoColumn = "score",
        doc: Keys | None = None,
        by: Keys | None = None,
        ties: Ties = "average",
        gain: Gain = "linear",
        weight: IntoColumn | None = None,
        no_relevant: NoRelevant = 0.0,
        threshold: float = 0.0,
        log_base: float = 2.0,
        qrels: QrelsFrame = None,
        missing_queries: MissingQueries = "skip",
        max_retrieved: int | None = None,
        judged_only: bool = False,
        exact_sums: bool = False,
        intent: str | None = None,
    ) -> FrameT:
        return self._per_query(
            _spec.call_spec(
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
            ),
            qrels,
        )

    @documented(
        "The (weighted) mean of `evaluate` per `by` group (one row without `by`).",
        [
            "query",
            "relevance",
            "score",
            "doc",
            "by",
            "ties",
            "gain",
            "weight",
            "no_relevant",
            "threshold",
            "log_base",
            "qrels",
            "missing_queries",
            "max_retrieved",
            "judged_only",
            "exact_sums",
            "intent",
        ],
        mean_returns(),
        EXAMPLE_FRAME + '>>> df.rank_metrics.evaluate_mean(["ndcg@3", "p@2", "ap", "rr"])\n'
        "shape: (1, 6)\n"
        "┌─────────┬─────┬──────────┬───────┬─────────┬────────────┐\n"
        "│ ndcg@3  ┆ p@2 ┆ ap       ┆ rr    ┆ queries ┆ weight_sum │\n"
        "│ ---     ┆ --- ┆ ---      ┆ ---   ┆ ---     ┆ ---        │\n"
        "│ f64     ┆ f64 ┆ f64      ┆ f64   ┆ u32     ┆ f64        │\n"
        "╞═════════╪═════╪══════════╪═══════╪═════════╪════════════╡\n"
        "│ 0.88285 ┆ 0.5 ┆ 0.791667 ┆ 0.875 ┆ 2       ┆ 2.0        │\n"
        "└─────────┴─────┴──────────┴───────┴─────────┴────────────┘",
        first=PARAMETERS["measures"],
    )
    def evaluate_mean(
        self,
        measures: str | Sequence[str],
        *,
        query: Keys = "query",
        relevance: IntoColumn = "relevance",
        score: IntoColumn = "score",
        doc: Keys | None = None,
        by: Keys | None = None,
        ties: Ties = "average",
        gain: Gain = "linear",
        weight: IntoColumn | None = None,
        no_relevant: NoRelevant = 0.0,
        threshold: float = 0.0,
        log_base: float = 2.0,
        qrels: QrelsFrame = None,
        missing_queries: MissingQueries = "skip",
        max_retrieved: int | None = None,
        judged_only: bool = False,
        exact_sums: bool = False,
        intent: str | None = None,
    ) -> FrameT:
        return self._mean(
            _spec.call_spec(
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
            ),
            qrels,
        )


@pl.api.register_lazyframe_namespace("rank_metrics")
class RankMetricsLazyFrame(_RankMetrics[pl.LazyFrame]):
    """`LazyFrame.rank_metrics`: every method returns a LazyFrame; nothing is read until you collect.

    Column and option errors raise when the method is called; data errors raise at collect time.
    """

    def _finish(self, plan: pl.LazyFrame) -> pl.LazyFrame:
        return plan


@pl.api.register_dataframe_namespace("rank_metrics")
@_arguments_named_as_called
class RankMetricsFrame(_RankMetrics[pl.DataFrame]):
    """`DataFrame.rank_metrics`: the LazyFrame plan, collected; plus `ndcg_score` / `dcg_score` floats."""

    def _finish(self, plan: pl.LazyFrame) -> pl.DataFrame:
        return plan.collect()

    def _score(self, spec: Spec, qrels: QrelsFrame) -> float:
        return float(self._mean(spec, qrels).item(0, 0))

    @documented(
        "The (weighted) mean NDCG as one float: scikit-learn's `ndcg_score` number.",
        [
            "query",
            "relevance",
            "score",
            "doc",
            "ties",
            "gain",
            "weight",
            "no_relevant",
            "qrels",
            "missing_queries",
            "max_retrieved",
            "judged_only",
        ],
        "float\n    sum(weight * ndcg) / sum(weight) over the queries whose NDCG is not null.",
        EXAMPLE_FRAME + ">>> round(df.rank_metrics.ndcg_score(k=3), 6)\n0.88285",
        first="k : int or None, default None\n    One cut-off (None: the whole list).",
    )
    def ndcg_score(
        self,
        *,
        query: Keys = "query",
        relevance: IntoColumn = "relevance",
        score: IntoColumn = "score",
        doc: Keys | None = None,
        k: int | None = None,
        ties: Ties = "average",
        gain: Gain = "linear",
        weight: IntoColumn | None = None,
        no_relevant: NoRelevant = 0.0,
        qrels: QrelsFrame = None,
        missing_queries: MissingQueries = "skip",
        max_retrieved: int | None = None,
        judged_only: bool = False,
    ) -> float:
        _spec.check_single_cutoff("ndcg", k)
        return self._score(
            _spec.ndcg_spec(
                query=query,
                relevance=relevance,
                score=score,
                doc=doc,
                by=None,
                k=k,
                ties=ties,
                gain=gain,
                weight=weight,
                no_relevant=no_relevant,
                missing_queries=missing_queries,
                max_retrieved=max_retrieved,
                judged_only=judged_only,
            ),
            qrels,
        )

    @documented(
        "The (weighted) mean DCG as one float: scikit-learn's `dcg_score` number.",
        [
            "query",
            "relevance",
            "score",
            "doc",
            "ties",
            "gain",
            "weight",
            "log_base",
            "qrels",
            "missing_queries",
            "max_retrieved",
            "judged_only",
        ],
        "float\n    sum(weight * dcg) / sum(weight) over the queries.",
        EXAMPLE_FRAME + ">>> round(df.rank_metrics.dcg_score(k=3), 6)\n1.657732",
        first="k : int or None, default None\n    One cut-off (None: the whole list).",
    )
    def dcg_score(
        self,
        *,
        query: Keys = "query",
        relevance: IntoColumn = "relevance",
        score: IntoColumn = "score",
        doc: Keys | None = None,
        k: int | None = None,
        ties: Ties = "average",
        gain: Gain = "linear",
        weight: IntoColumn | None = None,
        log_base: float = 2.0,
        qrels: QrelsFrame = None,
        missing_queries: MissingQueries = "skip",
        max_retrieved: int | None = None,
        judged_only: bool = False,
    ) -> float:
        _spec.check_single_cutoff("dcg", k)
        return self._score(
            _spec.dcg_spec(
                query=query,
                relevance=relevance,
                score=score,
                doc=doc,
                by=None,
                k=k,
                ties=ties,
                gain=gain,
                weight=weight,
                log_base=log_base,
                missing_queries=missing_queries,
                max_retrieved=max_retrieved,
                judged_only=judged_only,
            ),
            qrels,
        )


@overload
def rank_metrics(frame: pl.DataFrame) -> RankMetricsFrame: ...
@overload
def rank_metrics(frame: pl.LazyFrame) -> RankMetricsLazyFrame: ...
def rank_metrics(frame: pl.DataFrame | pl.LazyFrame) -> RankMetricsFrame | RankMetricsLazyFrame:
    """Typed access to `frame.rank_metrics` (mypy cannot see registered namespaces).

    Parameters
    ----------
    frame
        A polars DataFrame or LazyFrame.

    Returns
    -------
    RankMetricsFrame or RankMetricsLazyFrame
        The same namespace `frame.rank_metrics` gives, with its static type.

    Examples
    --------
    >>> from lodestar_polars import rank_metrics
    >>> lf = pl.LazyFrame({"query": [1, 1], "relevance": [1, 0], "score": [0.2, 0.8]})
    >>> rank_metrics(lf).ndcg().collect()["ndcg"].round(4).to_list()
    [0.6309]
    """
    if isinstance(frame, pl.DataFrame):
        return RankMetricsFrame(frame)
    if isinstance(frame, pl.LazyFrame):
        return RankMetricsLazyFrame(frame)
    msg = f"rank_metrics() takes a polars DataFrame or LazyFrame, got {type(frame).__name__}."
    raise TypeError(msg)
