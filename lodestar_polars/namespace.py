"""The `.rank_metrics` namespace on DataFrame and LazyFrame: a thin shell over `_plan`.

Both namespaces build the same lazy plan; the DataFrame one collects it.
"""

from __future__ import annotations

from typing import Generic, Literal, TypeVar, overload

import polars as pl

from . import _plan
from ._options import (
    Cutoffs,
    Gain,
    Metric,
    MetricOptions,
    NoRelevant,
    check_schema,
    check_single_cutoff,
    make_options,
)

FrameT = TypeVar("FrameT", pl.DataFrame, pl.LazyFrame)
Ties = Literal["average", "reverse", "input", "doc", "optimistic", "pessimistic"]
MissingQueries = Literal["skip", "zero"]
QrelsFrame = pl.DataFrame | pl.LazyFrame | None


class _RankMetrics(Generic[FrameT]):
    def __init__(self, frame: FrameT) -> None:
        self._frame: FrameT = frame

    def _finish(self, plan: pl.LazyFrame) -> FrameT:
        raise NotImplementedError

    def _options(self, metric: Metric, **arguments: object) -> MetricOptions:
        options = make_options(metric, **arguments)  # type: ignore[arg-type]  # every caller passes the typed keywords
        check_schema(options, self._frame.collect_schema())
        return options

    def _per_query(self, metric: Metric, **arguments: object) -> FrameT:
        return self._finish(_plan.per_query_plan(self._frame.lazy(), self._options(metric, **arguments)))

    def _mean(self, metric: Metric, **arguments: object) -> FrameT:
        return self._finish(_plan.mean_plan(self._frame.lazy(), self._options(metric, **arguments)))

    def ndcg(
        self,
        *,
        query: str = "query",
        relevance: str = "relevance",
        score: str = "score",
        doc: str | None = None,
        k: Cutoffs = None,
        ties: Ties = "average",
        gain: Gain = "linear",
        weight: str | None = None,
        no_relevant: NoRelevant = 0.0,
        qrels: QrelsFrame = None,
        missing_queries: MissingQueries = "skip",
    ) -> FrameT:
        """NDCG per query, as scikit-learn's `ndcg_score` defines it, one row per query sorted by query.

        Parameters
        ----------
        query, relevance, score
            Column names: the query id, the graded relevance (gain source) and the model score.
        doc
            Document id column: enables the duplicate (query, doc) check, `ties="doc"` and `qrels=`.
        k
            None (the whole list), a cut-off, or a list of cut-offs computed in one pass.
            Output columns are `ndcg`, `ndcg@{k}`, one per value.
        ties
            "average" (scikit-learn), "reverse" (descending row order), "input" (row order: LightGBM),
            "doc" (doc id descending: trec_eval), "optimistic", "pessimistic".
        gain
            "linear" (relevance), "exponential" (2**relevance - 1) or a mapping label -> gain
            (a sequence is read as LightGBM's `label_gain`: index -> gain).
        weight
            Column with one weight per query, carried to the output and used by the means.
        no_relevant
            NDCG of a query whose ideal DCG is 0: a float, None (null, left out of the means) or "error".
        qrels, missing_queries
            Judgments (columns `query`, `doc`, `relevance`): the frame is then a run (query, doc, score)
            evaluated as trec_eval does; see the README.

        Examples
        --------
        >>> import polars as pl
        >>> import lodestar_polars  # registers .rank_metrics
        >>> df = pl.DataFrame({"query": [1, 1, 1, 1], "relevance": [3, 2, 1, 0], "score": [0.1, 0.4, 0.5, 0.9]})
        >>> df.rank_metrics.ndcg()["ndcg"].round(6).to_list()
        [0.613827]
        """
        return self._per_query(
            "ndcg",
            query=query,
            relevance=relevance,
            score=score,
            doc=doc,
            k=k,
            ties=ties,
            gain=gain,
            weight=weight,
            no_relevant=no_relevant,
            qrels=qrels,
            missing_queries=missing_queries,
        )

    def dcg(
        self,
        *,
        query: str = "query",
        relevance: str = "relevance",
        score: str = "score",
        doc: str | None = None,
        k: Cutoffs = None,
        ties: Ties = "average",
        gain: Gain = "linear",
        weight: str | None = None,
        log_base: float = 2.0,
        qrels: QrelsFrame = None,
        missing_queries: MissingQueries = "skip",
    ) -> FrameT:
        """DCG per query (scikit-learn's `dcg_score`); options as `ndcg`, plus `log_base` of the discount.

        Negative relevance is accepted, as scikit-learn accepts it.  Output columns `dcg` / `dcg@{k}`.
        """
        return self._per_query(
            "dcg",
            query=query,
            relevance=relevance,
            score=score,
            doc=doc,
            k=k,
            ties=ties,
            gain=gain,
            weight=weight,
            log_base=log_base,
            qrels=qrels,
            missing_queries=missing_queries,
        )

    def reciprocal_rank(
        self,
        *,
        query: str = "query",
        relevance: str = "relevance",
        score: str = "score",
        doc: str | None = None,
        k: Cutoffs = None,
        ties: Ties = "average",
        threshold: float = 0.0,
        weight: str | None = None,
        qrels: QrelsFrame = None,
        missing_queries: MissingQueries = "skip",
    ) -> FrameT:
        """Reciprocal rank per query: 1 / position of the first document with relevance above `threshold`,
        0 when there is none or it lies past k.  Output columns `reciprocal_rank` / `reciprocal_rank@{k}`.

        With `ties="average"` it is the exact expected value over every order of the tied documents.
        """
        return self._per_query(
            "reciprocal_rank",
            query=query,
            relevance=relevance,
            score=score,
            doc=doc,
            k=k,
            ties=ties,
            gain="linear",
            weight=weight,
            threshold=threshold,
            qrels=qrels,
            missing_queries=missing_queries,
        )

    def ndcg_mean(
        self,
        *,
        query: str = "query",
        relevance: str = "relevance",
        score: str = "score",
        doc: str | None = None,
        k: Cutoffs = None,
        ties: Ties = "average",
        gain: Gain = "linear",
        weight: str | None = None,
        no_relevant: NoRelevant = 0.0,
        qrels: QrelsFrame = None,
        missing_queries: MissingQueries = "skip",
    ) -> FrameT:
        """One row: the (weighted) mean NDCG per cut-off, `queries` (how many entered it) and `weight_sum`.

        mean = sum(weight * ndcg) / sum(weight) over queries whose NDCG is not null.  With qrels there is
        also `queries_without_judgments`: run queries left out because nothing in them was judged.
        """
        return self._mean(
            "ndcg",
            query=query,
            relevance=relevance,
            score=score,
            doc=doc,
            k=k,
            ties=ties,
            gain=gain,
            weight=weight,
            no_relevant=no_relevant,
            qrels=qrels,
            missing_queries=missing_queries,
        )

    def dcg_mean(
        self,
        *,
        query: str = "query",
        relevance: str = "relevance",
        score: str = "score",
        doc: str | None = None,
        k: Cutoffs = None,
        ties: Ties = "average",
        gain: Gain = "linear",
        weight: str | None = None,
        log_base: float = 2.0,
        qrels: QrelsFrame = None,
        missing_queries: MissingQueries = "skip",
    ) -> FrameT:
        """One row: the (weighted) mean DCG per cut-off, `queries` and `weight_sum` (see `ndcg_mean`)."""
        return self._mean(
            "dcg",
            query=query,
            relevance=relevance,
            score=score,
            doc=doc,
            k=k,
            ties=ties,
            gain=gain,
            weight=weight,
            log_base=log_base,
            qrels=qrels,
            missing_queries=missing_queries,
        )

    def reciprocal_rank_mean(
        self,
        *,
        query: str = "query",
        relevance: str = "relevance",
        score: str = "score",
        doc: str | None = None,
        k: Cutoffs = None,
        ties: Ties = "average",
        threshold: float = 0.0,
        weight: str | None = None,
        qrels: QrelsFrame = None,
        missing_queries: MissingQueries = "skip",
    ) -> FrameT:
        """One row: the (weighted) mean reciprocal rank (MRR) per cut-off, `queries` and `weight_sum`."""
        return self._mean(
            "reciprocal_rank",
            query=query,
            relevance=relevance,
            score=score,
            doc=doc,
            k=k,
            ties=ties,
            gain="linear",
            weight=weight,
            threshold=threshold,
            qrels=qrels,
            missing_queries=missing_queries,
        )


@pl.api.register_lazyframe_namespace("rank_metrics")
class RankMetricsLazyFrame(_RankMetrics[pl.LazyFrame]):
    """`LazyFrame.rank_metrics`: every method returns a LazyFrame; nothing is read until you collect.

    Column and option errors raise when the method is called; data errors raise at collect time.
    """

    def _finish(self, plan: pl.LazyFrame) -> pl.LazyFrame:
        return plan


@pl.api.register_dataframe_namespace("rank_metrics")
class RankMetricsFrame(_RankMetrics[pl.DataFrame]):
    """`DataFrame.rank_metrics`: the LazyFrame plan, collected; plus `ndcg_score` / `dcg_score` floats."""

    def _finish(self, plan: pl.LazyFrame) -> pl.DataFrame:
        return plan.collect()

    def _score(self, metric: Metric, k: int | None, **arguments: object) -> float:
        check_single_cutoff(metric, k)
        mean = self._mean(metric, k=k, **arguments)
        return float(mean.item(0, 0))

    def ndcg_score(
        self,
        *,
        query: str = "query",
        relevance: str = "relevance",
        score: str = "score",
        doc: str | None = None,
        k: int | None = None,
        ties: Ties = "average",
        gain: Gain = "linear",
        weight: str | None = None,
        no_relevant: NoRelevant = 0.0,
        qrels: QrelsFrame = None,
        missing_queries: MissingQueries = "skip",
    ) -> float:
        """The (weighted) mean NDCG as one float: scikit-learn's `ndcg_score` number."""
        return self._score(
            "ndcg",
            k,
            query=query,
            relevance=relevance,
            score=score,
            doc=doc,
            ties=ties,
            gain=gain,
            weight=weight,
            no_relevant=no_relevant,
            qrels=qrels,
            missing_queries=missing_queries,
        )

    def dcg_score(
        self,
        *,
        query: str = "query",
        relevance: str = "relevance",
        score: str = "score",
        doc: str | None = None,
        k: int | None = None,
        ties: Ties = "average",
        gain: Gain = "linear",
        weight: str | None = None,
        log_base: float = 2.0,
        qrels: QrelsFrame = None,
        missing_queries: MissingQueries = "skip",
    ) -> float:
        """The (weighted) mean DCG as one float: scikit-learn's `dcg_score` number."""
        return self._score(
            "dcg",
            k,
            query=query,
            relevance=relevance,
            score=score,
            doc=doc,
            ties=ties,
            gain=gain,
            weight=weight,
            log_base=log_base,
            qrels=qrels,
            missing_queries=missing_queries,
        )


@overload
def rank_metrics(frame: pl.DataFrame) -> RankMetricsFrame: ...
@overload
def rank_metrics(frame: pl.LazyFrame) -> RankMetricsLazyFrame: ...
def rank_metrics(frame: pl.DataFrame | pl.LazyFrame) -> RankMetricsFrame | RankMetricsLazyFrame:
    """Typed access to `frame.rank_metrics` (mypy cannot see registered namespaces).

    >>> import polars as pl
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
