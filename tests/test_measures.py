"""precision, recall, average_precision, success (issue 12) with reciprocal_rank and ndcg beside them, and
`evaluate` / `evaluate_mean`, tested against:

- the plain-Python reference `tests/measures_reference.py` (every tie mode; ties="average" by brute-force
  enumeration of the orders of the tied documents), itself checked against pytrec_eval and ranx in
  `tests/test_measures_reference.py`;
- pytrec_eval (trec_eval's code) with `qrels=` and ties="doc", on random runs and the shared TREC data, and
  trec_eval's own output file out.test.aq / out.test.aqc (4 decimals);
- ranx on tie-free runs;
- the single-measure methods, for `evaluate`, in every engine.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import polars.selectors as cs
import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import lodestar_polars  # noqa: F401  (registers .rank_metrics)
from lodestar_polars import rank_metrics
from lodestar_polars.io import scan_trec_qrels, scan_trec_run
from tests import measures_reference as ref
from tests.cases import Qrels, Run, qrels_frame, ranx_values, run_and_qrels, run_frame, tie_free_case

EXACT = 1e-12
PRINTED = 5e-5  # trec_eval prints 4 decimals
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DETERMINISTIC = list(ref.DETERMINISTIC_TIE_MODES)
BINARY = ["precision", "recall", "average_precision", "success", "reciprocal_rank"]
WITH_NO_RELEVANT = {"recall", "average_precision", "ndcg"}
WITH_THRESHOLD = set(BINARY)


def column(method: str, k: int | None) -> str:
    return method if k is None else f"{method}@{k}"


# --------------------------------------------------------------------------------------------------------
# random ragged frames with heavy ties

# doc ids whose text order differs from their numeric order ("9" > "10")
DOC_IDS = ["1", "10", "2", "9", "a", "B", "b", "Z", "x10", "x9", "d-1", "d_1", "D", "zz", "0", "11"]


@st.composite
def ragged_frames(draw: st.DrawFn, max_docs: int = 16, max_level: int = 4) -> pl.DataFrame:
    """1-6 queries of 1-`max_docs` documents, rows of different queries interleaved, heavy score ties
    (-0.0 ties 0.0), some queries without any relevant document."""
    rows: list[dict[str, Any]] = []
    for q in range(draw(st.integers(1, 6))):
        size = draw(st.integers(1, max_docs))
        docs = draw(st.lists(st.sampled_from(DOC_IDS), min_size=size, max_size=size, unique=True))
        weight = draw(st.sampled_from([0.5, 1.0, 2.0, 3.25]))
        top = draw(st.sampled_from([0, max_level, max_level]))  # a third of the queries all-zero
        for doc in docs:
            rows.append(
                {
                    "query": f"q{q}",
                    "doc": doc,
                    "score": draw(st.sampled_from([-0.0, 0.0, 0.5, 1.0, 1.0, 2.0])),
                    "relevance": draw(st.integers(0, top)),
                    "weight": weight,
                }
            )
    order = draw(st.permutations(range(len(rows))))
    return pl.DataFrame(
        [rows[i] for i in order],
        schema={"query": pl.String, "doc": pl.String, "score": pl.Float64, "relevance": pl.Int64, "weight": pl.Float64},
    )


# None, cut-offs inside the lists, past them (the lists hold at most 16), several at once
cutoff_lists = st.lists(st.sampled_from([None, 1, 2, 3, 4, 5, 7, 10, 20, 100]), min_size=1, max_size=4, unique=True)
thresholds = st.sampled_from([0.0, 0.0, 0.5, 1.0, 2.0, -1.0])
no_relevant_policies = st.sampled_from([0.0, 1.0, 0.25, None])


def queries_in_row_order(frame: pl.DataFrame) -> dict[str, dict[str, list[Any]]]:
    grouped: dict[str, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    for row in frame.iter_rows(named=True):
        for name, value in row.items():
            grouped[row["query"]][name].append(value)
    return grouped


def reference_value(
    method: str,
    query: dict[str, list[Any]],
    k: int | None,
    ties: str,
    threshold: float,
    no_relevant: float | None,
    gain: str = "linear",
) -> float | None:
    relevance, score, doc = query["relevance"], query["score"], query["doc"]
    if method == "precision":
        return ref.precision(relevance, score, k, ties, doc, threshold)
    if method == "recall":
        return ref.recall(relevance, score, k, ties, doc, threshold, no_relevant=no_relevant)
    if method == "average_precision":
        return ref.average_precision(relevance, score, k, ties, doc, threshold, no_relevant=no_relevant)
    if method == "success":
        return ref.success(relevance, score, k, ties, doc, threshold)
    if method == "reciprocal_rank":
        return ref.reciprocal_rank(relevance, score, k, ties, doc, threshold)
    if method == "ndcg":
        return ref.ndcg(relevance, score, k, ties, doc, gain, no_relevant=no_relevant)
    raise AssertionError(method)


def method_options(method: str, threshold: float, no_relevant: float | None, gain: str = "linear") -> dict[str, Any]:
    options: dict[str, Any] = {}
    if method in WITH_THRESHOLD:
        options["threshold"] = threshold
    if method in WITH_NO_RELEVANT:
        options["no_relevant"] = no_relevant
    if method == "ndcg":
        options["gain"] = gain
    return options


def assert_matches_reference(
    frame: pl.DataFrame,
    method: str,
    ks: Sequence[int | None],
    ties: str,
    threshold: float,
    no_relevant: float | None,
    gain: str = "linear",
) -> None:
    options = method_options(method, threshold, no_relevant, gain)
    result = getattr(frame.rank_metrics, method)(k=list(ks), ties=ties, doc="doc", weight="weight", **options)
    queries = queries_in_row_order(frame)
    assert result["query"].to_list() == sorted(queries)
    for row in result.iter_rows(named=True):
        query = queries[row["query"]]
        assert row["weight"] == query["weight"][0]
        for k in ks:
            expected = reference_value(method, query, k, ties, threshold, no_relevant, gain)
            got = row[column(method, k)]
            if expected is None:
                assert got is None, (method, row["query"], k)
            else:
                assert got == pytest.approx(expected, abs=EXACT, rel=0), (method, row["query"], k)


# --------------------------------------------------------------------------------------------------------
# per-query values against the reference


class TestAgainstTheReference:
    @pytest.mark.parametrize("method", [*BINARY, "ndcg"])
    @SETTINGS
    @given(
        frame=ragged_frames(),
        ks=cutoff_lists,
        ties=st.sampled_from(DETERMINISTIC),
        threshold=thresholds,
        no_relevant=no_relevant_policies,
    )
    def test_deterministic_tie_modes(
        self, method: str, frame: pl.DataFrame, ks: list[int | None], ties: str, threshold: float, no_relevant: Any
    ) -> None:
        assert_matches_reference(frame, method, ks, ties, threshold, no_relevant)

    @pytest.mark.parametrize("method", BINARY)
    @SETTINGS
    @given(frame=ragged_frames(max_docs=8), ks=cutoff_lists, threshold=thresholds, no_relevant=no_relevant_policies)
    def test_tie_average_is_the_expectation_over_every_order(
        self, method: str, frame: pl.DataFrame, ks: list[int | None], threshold: float, no_relevant: Any
    ) -> None:
        """Brute-force enumeration of the orders of the tied documents (the reference), to 1e-12."""
        assert_matches_reference(frame, method, ks, "average", threshold, no_relevant)

    @SETTINGS
    @given(
        frame=ragged_frames(max_docs=8, max_level=2),
        ks=cutoff_lists,
        gain=st.sampled_from(["linear", "exponential"]),
        no_relevant=no_relevant_policies,
    )
    def test_tie_averaged_ndcg_is_the_expectation_over_every_order(
        self, frame: pl.DataFrame, ks: list[int | None], gain: str, no_relevant: Any
    ) -> None:
        assert_matches_reference(frame, "ndcg", ks, "average", 0.0, no_relevant, gain)

    @pytest.mark.parametrize("ties", DETERMINISTIC)
    @SETTINGS
    @given(frame=ragged_frames(), ks=cutoff_lists, gain=st.sampled_from(["linear", "exponential"]))
    def test_ndcg_gains(self, ties: str, frame: pl.DataFrame, ks: list[int | None], gain: str) -> None:
        assert_matches_reference(frame, "ndcg", ks, ties, 0.0, 0.0, gain)


@pytest.mark.parametrize("method", ["precision", "recall", "average_precision", "success"])
@SETTINGS
@given(frame=ragged_frames(max_docs=16), ks=cutoff_lists, seed=st.integers(0, 2**32 - 1))
def test_tie_average_on_large_blocks_is_the_closed_form(
    method: str, frame: pl.DataFrame, ks: list[int | None], seed: int
) -> None:
    """Blocks too large to enumerate: the per-block formulas (checked against the enumeration in
    test_measures_reference.py) on queries of up to 200 documents with 3 score levels."""
    rng = np.random.default_rng(seed)
    size = int(rng.integers(20, 200))
    big = pl.DataFrame(
        {
            "query": ["big"] * size,
            "doc": [f"d{i}" for i in range(size)],
            "score": rng.integers(0, 3, size).astype(float),
            "relevance": rng.integers(0, 2, size) * rng.integers(0, 3, size),
            "weight": [1.0] * size,
        }
    )
    frame = pl.concat([frame, big])
    result = getattr(frame.rank_metrics, method)(k=ks, doc="doc")
    for query, rows in queries_in_row_order(frame).items():
        relevant = ref.flags(rows["relevance"], 0.0)
        count = sum(relevant)
        row = result.row(by_predicate=pl.col("query") == query, named=True)
        for k in ks:
            if method == "precision":
                expected = ref.expected_precision_closed_form(relevant, rows["score"], k)
            elif method == "success":
                expected = ref.expected_success_closed_form(relevant, rows["score"], k)
            elif count == 0:
                expected = Fraction(0)  # no_relevant=0.0
            elif method == "recall":
                expected = ref.expected_recall_closed_form(relevant, rows["score"], k, count)
            else:
                expected = ref.expected_average_precision_closed_form(relevant, rows["score"], k, count)
            assert row[column(method, k)] == pytest.approx(float(expected), abs=EXACT, rel=0), (query, k)


class TestByHand:
    """Small cases worked out by hand (the derivation is in each comment)."""

    def test_precision_divides_by_k_past_the_list(self) -> None:
        df = pl.DataFrame({"query": [1, 1, 1], "relevance": [1, 0, 1], "score": [3.0, 2.0, 1.0]})
        result = df.rank_metrics.precision(k=[None, 2, 10], ties="input")
        # 2 relevant of 3 listed; 1 of the top 2; 2 / 10 for k = 10
        assert result.select("precision", "precision@2", "precision@10").row(0) == pytest.approx((2 / 3, 1 / 2, 0.2))

    def test_tie_block_straddling_k(self) -> None:
        # one irrelevant document, then 4 tied documents holding 2 relevant (positions 2..5); k = 2 takes one
        # slot of the block: E[relevant there] = 2/4
        df = pl.DataFrame({"query": [1] * 5, "relevance": [0, 1, 1, 0, 0], "score": [9.0, 1.0, 1.0, 1.0, 1.0]})
        assert df.rank_metrics.precision(k=2)["precision@2"].item() == pytest.approx(0.5 / 2, abs=EXACT)
        assert df.rank_metrics.recall(k=2)["recall@2"].item() == pytest.approx(0.5 / 2, abs=EXACT)
        assert df.rank_metrics.success(k=2)["success@2"].item() == pytest.approx(0.5, abs=EXACT)
        # AP@2: relevant at position 2 with probability 1/2, precision 1/2 there, R = 2
        assert df.rank_metrics.average_precision(k=2)["average_precision@2"].item() == pytest.approx(
            0.5 * 0.5 / 2, abs=EXACT
        )

    def test_average_precision_whole_list_and_cut(self) -> None:
        # relevant at 1 and 3: AP = (1/1 + 2/3) / 2; AP@2 = (1/1) / 2
        df = pl.DataFrame({"query": [1] * 4, "relevance": [1, 0, 1, 0], "score": [4.0, 3.0, 2.0, 1.0]})
        result = df.rank_metrics.average_precision(k=[None, 2])
        assert result.select("average_precision", "average_precision@2").row(0) == pytest.approx(((1 + 2 / 3) / 2, 0.5))

    def test_threshold_decides_relevance(self) -> None:
        df = pl.DataFrame({"query": [1] * 3, "relevance": [1, 2, 3], "score": [3.0, 2.0, 1.0]})
        assert df.rank_metrics.precision(threshold=1)["precision"].item() == pytest.approx(2 / 3)  # levels 2, 3
        assert df.rank_metrics.success(k=2, threshold=2)["success@2"].item() == 0.0  # level 3 is at position 3

    @pytest.mark.parametrize("method", ["recall", "average_precision"])
    def test_no_relevant_policy(self, method: str) -> None:
        df = pl.DataFrame({"query": [1, 1, 2, 2], "relevance": [0, 0, 1, 0], "score": [1.0, 0.5, 1.0, 0.5]})
        metrics = df.rank_metrics
        assert getattr(metrics, method)()[method].to_list() == [0.0, 1.0]
        assert getattr(metrics, method)(no_relevant=None)[method].to_list() == [None, 1.0]
        assert getattr(metrics, method)(no_relevant=0.5)[method].to_list() == [0.5, 1.0]
        with pytest.raises(ValueError):  # a data error: raised at collect time, here on the eager call
            getattr(metrics, method)(no_relevant="error")
        assert getattr(df.filter(pl.col("query") == 2).rank_metrics, method)(no_relevant="error")[method].item() == 1

    def test_no_relevant_none_is_left_out_of_the_mean(self) -> None:
        df = pl.DataFrame({"query": [1, 1, 2, 2], "relevance": [0, 0, 0, 1], "score": [1.0, 0.5, 1.0, 0.5]})
        mean = df.rank_metrics.average_precision_mean(no_relevant=None)
        assert mean["average_precision"].item() == pytest.approx(0.5)  # query 2 alone: 1/2 / 1
        assert mean["queries"].item() == 1


@pytest.mark.parametrize("method", BINARY)
@SETTINGS
@given(frame=ragged_frames(), ks=cutoff_lists, ties=st.sampled_from(ref.TIE_MODES))
def test_mean_is_the_weighted_mean_of_the_per_query_values(
    method: str, frame: pl.DataFrame, ks: list[int | None], ties: str
) -> None:
    per_query = getattr(frame.rank_metrics, method)(k=ks, ties=ties, doc="doc", weight="weight")
    mean = getattr(frame.rank_metrics, f"{method}_mean")(k=ks, ties=ties, doc="doc", weight="weight")
    weights = per_query["weight"].to_numpy()
    for k in ks:
        expected = float(np.average(per_query[column(method, k)].to_numpy(), weights=weights))
        assert mean[column(method, k)].item() == pytest.approx(expected, abs=EXACT, rel=1e-12)
    assert mean["queries"].item() == per_query.height
    assert mean["weight_sum"].item() == pytest.approx(weights.sum())


# --------------------------------------------------------------------------------------------------------
# qrels= and ties="doc" against pytrec_eval (trec_eval)

TREC_CUTOFFS = [5, 10, 15, 20, 30, 100, 200, 500, 1000]
RANDOM_CUTOFFS = [1, 2, 3, 5, 10, 15]


def trec_eval_measures(cutoffs: Sequence[int]) -> set[str]:
    cut = ",".join(str(k) for k in cutoffs)
    return {f"P.{cut}", f"recall.{cut}", "map", f"map_cut.{cut}", f"success.{cut}", "recip_rank", f"ndcg_cut.{cut}"}


def pytrec_values(qrels: Qrels, run: Run, cutoffs: Sequence[int]) -> dict[str, dict[str, float]]:
    result: dict[str, dict[str, float]] = pytrec_eval.RelevanceEvaluator(qrels, trec_eval_measures(cutoffs)).evaluate(
        run
    )
    return result


# our column -> trec_eval's measure
def trec_names(cutoffs: Sequence[int]) -> dict[str, str]:
    names = {"average_precision": "map", "reciprocal_rank": "recip_rank"}
    for k in cutoffs:
        names |= {
            f"precision@{k}": f"P_{k}",
            f"recall@{k}": f"recall_{k}",
            f"average_precision@{k}": f"map_cut_{k}",
            f"success@{k}": f"success_{k}",
            f"ndcg@{k}": f"ndcg_cut_{k}",
        }
    return names


METHOD_CUTOFFS: dict[str, Callable[[Sequence[int]], list[int | None]]] = {
    "precision": lambda ks: list(ks),
    "recall": lambda ks: list(ks),
    "average_precision": lambda ks: [None, *ks],
    "success": lambda ks: list(ks),
    "reciprocal_rank": lambda ks: [None],
    "ndcg": lambda ks: list(ks),
}


def per_query_with_qrels(
    run: pl.DataFrame | pl.LazyFrame,
    qrels: pl.DataFrame | pl.LazyFrame,
    cutoffs: Sequence[int],
    engine: str = "in-memory",
    **options: Any,
) -> pl.DataFrame:
    """Every measure at every cut-off, one row per query, from the single-measure methods."""
    frames = [
        getattr(rank_metrics(run.lazy()), method)(
            k=make_ks(cutoffs), doc="doc", ties="doc", qrels=qrels.lazy(), **options
        ).collect(engine=engine)
        for method, make_ks in METHOD_CUTOFFS.items()
    ]
    frames = [frame.drop("weight", strict=False) for frame in frames]
    joined = frames[0]
    for frame in frames[1:]:
        joined = joined.join(frame, on="query", how="left", maintain_order="left")
    return joined


def assert_per_query_equal(
    ours: pl.DataFrame, expected: dict[str, dict[str, float]], cutoffs: Sequence[int], tolerance: float
) -> None:
    assert ours["query"].to_list() == sorted(expected)
    for row in ours.iter_rows(named=True):
        for our_name, trec_name in trec_names(cutoffs).items():
            assert row[our_name] == pytest.approx(expected[row["query"]][trec_name], abs=tolerance, rel=0), (
                row["query"],
                our_name,
            )


class TestQrelsAgainstPytrecEval:
    @SETTINGS
    @given(case=run_and_qrels(max_run_docs=12))
    def test_random_runs_with_ties(self, case: tuple[Run, Qrels]) -> None:
        run, qrels = case
        expected = pytrec_values(qrels, run, RANDOM_CUTOFFS)
        ours = per_query_with_qrels(run_frame(run), qrels_frame(qrels), RANDOM_CUTOFFS)
        assert_per_query_equal(ours, expected, RANDOM_CUTOFFS, EXACT)

    @SETTINGS
    @given(case=run_and_qrels(max_run_docs=12))
    def test_missing_queries_zero_fills_judged_queries_missing_from_the_run(self, case: tuple[Run, Qrels]) -> None:
        run, qrels = case
        expected = pytrec_values(qrels, run, RANDOM_CUTOFFS)
        zero = dict.fromkeys(trec_names(RANDOM_CUTOFFS).values(), 0.0)
        expected |= {query: zero for query in qrels if query not in run}  # trec_eval -c
        ours = per_query_with_qrels(run_frame(run), qrels_frame(qrels), RANDOM_CUTOFFS, missing_queries="zero")
        assert_per_query_equal(ours, expected, RANDOM_CUTOFFS, EXACT)
        for method, make_ks in METHOD_CUTOFFS.items():
            mean_of = getattr(run_frame(run).rank_metrics, f"{method}_mean")
            options = {"doc": "doc", "ties": "doc", "qrels": qrels_frame(qrels), "missing_queries": "zero"}
            if not expected:  # nothing judged: no query to average
                with pytest.raises(ValueError, match="no query to average"):
                    mean_of(k=make_ks(RANDOM_CUTOFFS), **options)
                continue
            mean = mean_of(k=make_ks(RANDOM_CUTOFFS), **options)
            assert mean["queries"].item() == len(expected)
            assert mean["queries_without_judgments"].item() == len(set(run) - set(qrels))
            names = trec_names(RANDOM_CUTOFFS)
            for k in make_ks(RANDOM_CUTOFFS):
                trec_name = names[column(method, k)]
                value = float(np.mean([expected[q][trec_name] for q in expected]))
                assert mean[column(method, k)].item() == pytest.approx(value, abs=EXACT)

    @SETTINGS
    @given(case=run_and_qrels(max_run_docs=12), threshold=st.sampled_from([1, 2]))
    def test_threshold_is_trec_evals_relevance_level(self, case: tuple[Run, Qrels], threshold: int) -> None:
        """threshold=t with integer levels: relevant means level >= t + 1, trec_eval's `-l t+1`."""
        run, qrels = case
        expected = pytrec_eval.RelevanceEvaluator(
            qrels, trec_eval_measures(RANDOM_CUTOFFS), relevance_level=threshold + 1
        ).evaluate(run)
        names = {name: trec for name, trec in trec_names(RANDOM_CUTOFFS).items() if not name.startswith("ndcg")}
        for method in BINARY:
            result = getattr(run_frame(run).rank_metrics, method)(
                k=METHOD_CUTOFFS[method](RANDOM_CUTOFFS),
                doc="doc",
                ties="doc",
                qrels=qrels_frame(qrels),
                threshold=float(threshold),
            )
            assert result["query"].to_list() == sorted(expected)
            for row in result.iter_rows(named=True):
                for name in set(row) & set(names):
                    assert row[name] == pytest.approx(expected[row["query"]][names[name]], abs=EXACT, rel=0), name

    def test_all_negative_judgments_make_a_query_without_relevant_documents(self) -> None:
        # derived by hand from trec_eval's definitions (pytrec_eval-terrier 0.5.11 can crash on such qrels):
        # the query is judged, nothing is relevant, so every measure is 0 (no_relevant=0.0 for recall / AP)
        run = pl.DataFrame({"query": ["q", "q"], "doc": ["a", "b"], "score": [1.0, 0.5]})
        qrels = pl.DataFrame({"query": ["q", "q"], "doc": ["a", "c"], "relevance": [-1, -2]})
        ours = per_query_with_qrels(run, qrels, [1, 5])
        assert ours.drop("query").row(0) == tuple([0.0] * (ours.width - 1))
        recall = run.rank_metrics.recall(doc="doc", ties="doc", qrels=qrels, no_relevant=None)
        assert recall["recall"].to_list() == [None]


def trec_eval_output(path: Path) -> dict[str, dict[str, float]]:
    """trec_eval -q output as {query or 'all': {measure: value}} for the numeric measures."""
    values: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        measure, query, value = line.split()
        if measure in ("runid", "relstring"):
            continue
        values.setdefault(query, {})[measure] = float(value)
    return values


# out.test.aq prints P_k, recall_k, map_cut_k and ndcg_cut_k at the default cut-offs, success at 1, 5, 10
def printed_names() -> dict[str, str]:
    names = {name: trec for name, trec in trec_names(TREC_CUTOFFS).items() if not name.startswith("success")}
    return names | {f"success@{k}": f"success_{k}" for k in (1, 5, 10)}


def read_trec_file(path: Path, *, qrels: bool) -> dict[str, dict[str, Any]]:
    """The file as pytrec_eval takes it, read with plain Python (independent of lodestar_polars.io)."""
    import gzip

    opener: Any = gzip.open if path.suffix == ".gz" else open
    values: dict[str, dict[str, Any]] = {}
    with opener(path, "rt") as handle:
        for line in handle:
            fields = line.split()
            if fields:
                values.setdefault(fields[0], {})[fields[2]] = int(fields[3]) if qrels else float(fields[4])
    return values


def shared_per_query(run_path: Path, qrels_path: Path, engine: str = "in-memory", **options: Any) -> pl.DataFrame:
    run, qrels = scan_trec_run(run_path), scan_trec_qrels(qrels_path)
    ours = per_query_with_qrels(run, qrels, TREC_CUTOFFS, engine, **options)
    success = rank_metrics(run).success(k=[1, 5, 10], doc="doc", ties="doc", qrels=qrels, **options)
    return ours.drop(cs.starts_with("success")).join(success.collect(engine=engine), on="query", maintain_order="left")


class TestSharedTrecData:
    def test_trec_eval_output_per_query_and_means(self, shared_data: Path) -> None:
        folder = shared_data / "trec_eval"
        expected = trec_eval_output(folder / "out.test.aq")
        ours = shared_per_query(folder / "results.test", folder / "qrels.test")
        assert ours["query"].to_list() == sorted(q for q in expected if q != "all")
        for row in ours.iter_rows(named=True):
            for our_name, trec_name in printed_names().items():
                assert row[our_name] == pytest.approx(expected[row["query"]][trec_name], abs=PRINTED), (
                    row["query"],
                    our_name,
                )
        for our_name, trec_name in printed_names().items():
            assert ours[our_name].mean() == pytest.approx(expected["all"][trec_name], abs=PRINTED), our_name

    def test_trec_eval_dash_c_output(self, shared_data: Path) -> None:
        folder = shared_data / "trec_eval"
        expected = trec_eval_output(folder / "out.test.aqc")
        ours = shared_per_query(folder / "results.trunc", folder / "qrels.test", missing_queries="zero")
        assert ours["query"].to_list() == sorted(q for q in expected if q != "all")
        for row in ours.iter_rows(named=True):
            for our_name, trec_name in printed_names().items():
                assert row[our_name] == pytest.approx(expected[row["query"]][trec_name], abs=PRINTED), our_name
        for our_name, trec_name in printed_names().items():
            assert ours[our_name].mean() == pytest.approx(expected["all"][trec_name], abs=PRINTED), our_name

    @pytest.mark.parametrize("qrels_name", ["qrels.test", "qrels.rel_level"])
    def test_trec_eval_data_exactly_as_pytrec_eval(self, shared_data: Path, qrels_name: str) -> None:
        folder = shared_data / "trec_eval"
        run_path, qrels_path = folder / "results.test", folder / qrels_name
        expected = pytrec_values(
            read_trec_file(qrels_path, qrels=True), read_trec_file(run_path, qrels=False), TREC_CUTOFFS
        )
        ours = per_query_with_qrels(scan_trec_run(run_path), scan_trec_qrels(qrels_path), TREC_CUTOFFS)
        assert_per_query_equal(ours, expected, TREC_CUTOFFS, EXACT)

    @pytest.mark.parametrize("engine", ["in-memory", "streaming"])
    def test_robust03_exactly_as_pytrec_eval(self, shared_data: Path, engine: str) -> None:
        folder = shared_data / "robust03"
        run_path, qrels_path = folder / "input.uic0301.gz", folder / "robust03_cs_qrels.txt.gz"
        expected = pytrec_values(
            read_trec_file(qrels_path, qrels=True), read_trec_file(run_path, qrels=False), TREC_CUTOFFS
        )
        ours = per_query_with_qrels(scan_trec_run(run_path), scan_trec_qrels(qrels_path), TREC_CUTOFFS, engine)
        assert_per_query_equal(ours, expected, TREC_CUTOFFS, EXACT)


# --------------------------------------------------------------------------------------------------------
# ranx on tie-free runs

RANX_CUTOFFS = [1, 3, 5, 10, 50]


@pytest.mark.parametrize("seed", range(4))
def test_ranx_on_tie_free_runs(seed: int) -> None:
    """ranx precision@k, recall@k, map@k (divides by R, as trec_eval's map_cut_k), hit_rate@k, map, precision."""
    run, qrels = tie_free_case(seed)
    pairs = {"precision": "precision", "average_precision": "map"}
    for k in RANX_CUTOFFS:
        pairs |= {
            f"precision@{k}": f"precision@{k}",
            f"recall@{k}": f"recall@{k}",
            f"average_precision@{k}": f"map@{k}",
            f"success@{k}": f"hit_rate@{k}",
        }
    expected = ranx_values(run, qrels, list(pairs.values()))
    frame, judgments = run_frame(run), qrels_frame(qrels)
    ks: list[int | None] = [None, *RANX_CUTOFFS]
    for method in ("precision", "recall", "average_precision", "success"):
        result = getattr(frame.rank_metrics, method)(k=ks, doc="doc", ties="input", qrels=judgments)
        assert result["query"].to_list() == sorted(run)
        for row in result.iter_rows(named=True):
            for k in ks:
                name = column(method, k)
                if name in pairs:
                    assert row[name] == pytest.approx(expected[row["query"]][pairs[name]], abs=EXACT, rel=0), name


# --------------------------------------------------------------------------------------------------------
# evaluate / evaluate_mean

# evaluate's canonical column -> (single-measure method, k, its column)
EVALUATE_PAIRS: dict[str, tuple[str, int | None, str]] = {
    "ndcg": ("ndcg", None, "ndcg"),
    "ndcg@10": ("ndcg", 10, "ndcg@10"),
    "dcg@5": ("dcg", 5, "dcg@5"),
    "p@5": ("precision", 5, "precision@5"),
    "p@1": ("precision", 1, "precision@1"),
    "r@100": ("recall", 100, "recall@100"),
    "r@3": ("recall", 3, "recall@3"),
    "ap": ("average_precision", None, "average_precision"),
    "ap@10": ("average_precision", 10, "average_precision@10"),
    "ap@2": ("average_precision", 2, "average_precision@2"),
    "rr": ("reciprocal_rank", None, "reciprocal_rank"),
    "rr@10": ("reciprocal_rank", 10, "reciprocal_rank@10"),
    "success@1": ("success", 1, "success@1"),
    "success@10": ("success", 10, "success@10"),
}
# options `evaluate` takes once; each method gets the ones it has
METHOD_PARAMETERS = {
    "ndcg": {"gain", "no_relevant"},
    "dcg": {"gain", "log_base"},
    "precision": {"threshold"},
    "recall": {"threshold", "no_relevant"},
    "average_precision": {"threshold", "no_relevant"},
    "reciprocal_rank": {"threshold"},
    "success": {"threshold"},
}
ENGINES = ["eager", "in-memory", "streaming"]


def collect(frame: pl.DataFrame, engine: str, build: Callable[[Any], Any]) -> pl.DataFrame:
    """Build on the DataFrame namespace (eager) or the LazyFrame one, collected with the engine."""
    if engine == "eager":
        result = build(frame.rank_metrics)
        assert isinstance(result, pl.DataFrame)
        return result
    lazy = build(frame.lazy().rank_metrics)
    assert isinstance(lazy, pl.LazyFrame)
    return lazy.collect(engine=engine)


def single_measure_columns(frame: pl.DataFrame, names: Sequence[str], *, mean: bool, **options: Any) -> pl.DataFrame:
    """The evaluate columns, computed one method at a time (eagerly) and renamed to evaluate's names."""
    shared = {key: options[key] for key in ("ties", "doc", "weight", "qrels") if key in options}
    columns = []
    for name in names:
        method, k, method_column = EVALUATE_PAIRS[name]
        own = {key: value for key, value in options.items() if key in METHOD_PARAMETERS[method]}
        result = getattr(frame.rank_metrics, f"{method}_mean" if mean else method)(k=k, **shared, **own)
        columns.append(result.select(pl.col(method_column).alias(name)))
    return pl.concat(columns, how="horizontal")


def evaluation_frame(seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A tied run over 30 queries with relevance, and judgments for the qrels= path."""
    rng = np.random.default_rng(seed)
    rows, judgments = [], []
    for q in range(30):
        size = int(rng.integers(1, 40))
        docs = [f"d{i}" for i in rng.permutation(60)[:size]]
        levels = rng.integers(0, 4 if q % 5 else 1, size)  # every 5th query without relevant documents
        for doc, score, level in zip(docs, rng.integers(0, 6, size) / 2, levels, strict=True):
            rows.append((f"q{q:02d}", doc, float(score), int(level), 1.0 + q % 3))
        for doc in rng.choice([*docs, "u1", "u2", "u3"], size=min(size, 8), replace=False):
            judgments.append((f"q{q:02d}", str(doc), int(rng.integers(-1, 3))))
    frame = pl.DataFrame(rows, schema=["query", "doc", "score", "relevance", "weight"], orient="row")
    qrels = pl.DataFrame(judgments, schema=["query", "doc", "relevance"], orient="row")
    return frame, qrels


EVALUATE_OPTIONS: list[dict[str, Any]] = [
    {},
    {"ties": "doc", "doc": "doc", "weight": "weight", "gain": "exponential", "no_relevant": None, "threshold": 1.0},
    {"ties": "optimistic", "doc": "doc", "no_relevant": 0.5, "log_base": 10.0},
    {"ties": "input", "doc": "doc", "weight": "weight", "threshold": 0.5},
]


class TestEvaluate:
    @pytest.mark.parametrize("engine", ENGINES)
    @pytest.mark.parametrize("options", EVALUATE_OPTIONS, ids=["defaults", "doc", "optimistic", "input"])
    def test_equals_the_single_measure_methods(self, engine: str, options: dict[str, Any]) -> None:
        frame, _ = evaluation_frame(0)
        names = list(EVALUATE_PAIRS)
        result = collect(frame, engine, lambda metrics: metrics.evaluate(measures=names, **options))
        assert result["query"].to_list() == sorted(set(frame["query"]))
        expected = single_measure_columns(frame, names, mean=False, **options)
        assert_frame_equal(result.select(names), expected, abs_tol=EXACT, rel_tol=0)

    @pytest.mark.parametrize("engine", ENGINES)
    def test_with_qrels(self, engine: str) -> None:
        frame, qrels = evaluation_frame(1)
        run = frame.drop("relevance")
        names = list(EVALUATE_PAIRS)
        options = {"ties": "doc", "doc": "doc", "qrels": qrels}
        result = collect(run, engine, lambda metrics: metrics.evaluate(measures=names, **options))
        expected = single_measure_columns(run, names, mean=False, **options)
        assert_frame_equal(result.select(names), expected, abs_tol=EXACT, rel_tol=0)

    @pytest.mark.parametrize("engine", ENGINES)
    @pytest.mark.parametrize("options", EVALUATE_OPTIONS, ids=["defaults", "doc", "optimistic", "input"])
    def test_evaluate_mean_equals_the_mean_methods(self, engine: str, options: dict[str, Any]) -> None:
        frame, _ = evaluation_frame(2)
        names = list(EVALUATE_PAIRS)
        result = collect(frame, engine, lambda metrics: metrics.evaluate_mean(measures=names, **options))
        assert result.height == 1
        expected = single_measure_columns(frame, names, mean=True, **options)
        assert_frame_equal(result.select(names), expected, abs_tol=EXACT, rel_tol=0)
        if options.get("no_relevant", 0.0) is not None:  # every query has a value in every column
            per_query = frame.unique("query", keep="first")
            assert result["queries"].item() == per_query.height
            weight_sum = per_query["weight"].sum() if "weight" in options else per_query.height
            assert result["weight_sum"].item() == pytest.approx(weight_sum)

    @pytest.mark.parametrize("engine", ENGINES)
    def test_by_equals_evaluating_each_group_alone(self, engine: str) -> None:
        first, _ = evaluation_frame(6)
        second, _ = evaluation_frame(7)
        frame = pl.concat([first.with_columns(system=pl.lit("b")), second.with_columns(system=pl.lit("a"))])
        names = list(EVALUATE_PAIRS)
        options = {"ties": "doc", "doc": "doc", "weight": "weight"}
        result = collect(frame, engine, lambda metrics: metrics.evaluate(measures=names, by="system", **options))
        assert result.select("system", "query").rows() == sorted(set(frame.select("system", "query").rows()))
        for system in ("a", "b"):
            alone = frame.filter(pl.col("system") == system).drop("system")
            expected = alone.rank_metrics.evaluate(measures=names, **options)
            got = result.filter(pl.col("system") == system)
            assert_frame_equal(got.select("query", *names), expected.select("query", *names), abs_tol=EXACT, rel_tol=0)
        means = collect(frame, engine, lambda metrics: metrics.evaluate_mean(measures=names, by="system", **options))
        assert means["system"].to_list() == ["a", "b"]
        for system in ("a", "b"):
            alone = frame.filter(pl.col("system") == system).drop("system")
            expected = alone.rank_metrics.evaluate_mean(measures=names, **options)
            got = means.filter(pl.col("system") == system)
            assert_frame_equal(got.select(*names), expected.select(*names), abs_tol=EXACT, rel_tol=0)

    def test_names_are_case_insensitive_with_ir_measures_spellings(self) -> None:
        frame, _ = evaluation_frame(3)
        spellings = ["nDCG@10", "P@5", "R@100", "AP", "RR", "Success@10", "AP@10", "RR@10", "NDCG", "DCG@5"]
        canonical = ["ndcg@10", "p@5", "r@100", "ap", "rr", "success@10", "ap@10", "rr@10", "ndcg", "dcg@5"]
        result = frame.rank_metrics.evaluate(measures=spellings)
        assert set(canonical) <= set(result.columns)
        assert not set(spellings) - set(canonical) & set(result.columns)  # the spellings are not column names
        assert_frame_equal(result.select(canonical), frame.rank_metrics.evaluate(measures=canonical).select(canonical))
        assert_frame_equal(result.select(canonical), single_measure_columns(frame, canonical, mean=False))

    def test_a_name_close_to_a_known_one_gets_the_suggestion(self) -> None:
        frame, _ = evaluation_frame(4)
        for metrics in (frame.rank_metrics, frame.lazy().rank_metrics):
            with pytest.raises(ValueError, match=r"^unknown measure 'success@'; did you mean 'success'\?$"):
                metrics.evaluate(measures=["ndcg@10", "success@"])

    @pytest.mark.parametrize("bad", ["bogus", "p@x", "ndcg@ten"])
    def test_unknown_measure_names_the_known_ones(self, bad: str) -> None:
        frame, _ = evaluation_frame(4)
        for metrics in (frame.rank_metrics, frame.lazy().rank_metrics):
            with pytest.raises(ValueError, match="ndcg") as error:  # an option error: raised at the call
                metrics.evaluate(measures=["ndcg@10", bad])
            message = str(error.value)
            assert repr(bad) in message or bad in message
            for known in ("ap", "rr", "success", "dcg"):
                assert known in message.lower()
            with pytest.raises(ValueError):
                metrics.evaluate_mean(measures=[bad])

    def test_cutoff_zero_is_refused(self) -> None:
        frame, _ = evaluation_frame(4)
        with pytest.raises(ValueError):
            frame.lazy().rank_metrics.evaluate(measures=["ndcg@0"])

    def test_one_measure_one_column(self) -> None:
        frame, _ = evaluation_frame(5)
        result = frame.rank_metrics.evaluate(measures=["ap@10"])
        expected = frame.rank_metrics.average_precision(k=10)
        assert result["query"].to_list() == expected["query"].to_list()
        assert result["ap@10"].to_list() == pytest.approx(expected["average_precision@10"].to_list(), abs=EXACT)
