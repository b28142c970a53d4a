"""Hostile inputs (issue 8): no silently wrong number, whatever the column names, dtypes and options.

Each class of issue 8 is closed by a test here:

1. any column name works in every role (names like the plan's internal ones, like the outputs, odd text);
2. judgments (`qrels=`) are checked as strictly as run rows;
3. `ties="doc"` orders by the doc id's text, as trec_eval (checked against pytrec_eval);
4.-7. gains, non-finite results, options validated even when unused, messages naming the user's columns;
12. hypothesis: random names, dtypes and options either give the reference numbers (tests/reference.py,
    scikit-learn, or an enumeration of tie orders) or one of the documented exceptions, whose message names
    no internal column.

Every expected number is from a real tool (scikit-learn, pytrec_eval), from tests/reference.py (written
from the definitions, sharing no code with the package), or derived by hand in a comment.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Mapping
from typing import Any

import numpy as np
import polars as pl
import pytest
import pytrec_eval
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from sklearn.metrics import ndcg_score as sk_ndcg_score

import lodestar_polars
from tests import reference

ENGINES = ("eager", "in-memory", "streaming")
PER_QUERY = ("ndcg", "dcg", "reciprocal_rank", "precision", "recall", "average_precision", "success")
ALL_MEASURES = ["ndcg", "ndcg@2", "dcg@2", "rr", "p@2", "r", "ap", "success@1"]
INTERNAL = "__lodestar"


def call(
    frame: pl.DataFrame, engine: str, method: str, *args: Any, qrels: pl.DataFrame | None = None, **kw: Any
) -> Any:
    """`method` on the DataFrame (eager) or on its LazyFrame collected by `engine`."""
    if engine == "eager":
        return getattr(frame.rank_metrics, method)(*args, qrels=qrels, **kw)
    lazy_qrels = qrels.lazy() if qrels is not None else None
    plan = getattr(frame.lazy().rank_metrics, method)(*args, qrels=lazy_qrels, **kw)
    return plan.collect(engine=engine)


def assert_raises_everywhere(
    frame: pl.DataFrame, method: str, error: type[Exception], text: str, *args: Any, **kw: Any
) -> None:
    """The same exception type and whole message, eager and on both lazy engines."""
    for engine in ENGINES:
        with pytest.raises(error) as raised:
            call(frame, engine, method, *args, **kw)
        assert str(raised.value) == text, engine


# --- 1. any column name in any role --------------------------------------------------------------------------

PLAIN = {"query": "q", "relevance": "rel", "score": "s", "doc": "d", "weight": "w", "by": "g"}

HOSTILE_NAMES = {
    # the plan's own internal names, each in a role it is not
    "internal": {
        "query": "__lodestar_key_0",
        "relevance": "__lodestar_score",
        "score": "__lodestar_relevance",
        "doc": "__lodestar_doc_0",
        "weight": "__lodestar_weight_min",
        "by": "__lodestar_key_1",
    },
    "internal_same_role": {
        "query": "__lodestar_metric_0",
        "relevance": "__lodestar_relevance",
        "score": "__lodestar_score",
        "doc": "__lodestar_duplicated",
        "weight": "__lodestar_weight",
        "by": "__lodestar_group_0",
    },
    # the weighted-mean module's and the checks' internal names
    "internal_mean": {
        "query": "__lodestar_queries",
        "relevance": "__lodestar_weighted_sum_0",
        "score": "__lodestar_check_0_total",
        "doc": "__lodestar_no_queries",
        "weight": "__lodestar_weight_sum_0",
        "by": "__lodestar_queries_without_judgments",
    },
    # the default names of other roles, and output names of the metrics (not of the keys or weight)
    "other_roles": {
        "query": "score",
        "relevance": "ndcg@2",
        "score": "queries",
        "doc": "weight_sum",
        "weight": "relevance",
        "by": "doc",
    },
    "odd_text": {
        "query": "query id",
        "relevance": "rel.level",
        "score": "scöre ✓",
        "doc": "doc.id",
        "weight": "w e i g h t",
        "by": "模型 (v2)",
    },
}


def _run_frame(seed: int = 3, queries: int = 6) -> pl.DataFrame:
    """Ragged queries, coarse scores (ties), two `by` groups, one weight per query."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 7, queries)
    q = np.repeat(np.arange(queries), sizes)
    n = len(q)
    return pl.DataFrame(
        {
            "g": np.repeat(rng.integers(0, 2, queries), sizes),
            "q": q,
            "d": [f"doc{i}" for i in rng.permutation(n)],
            "rel": rng.integers(0, 3, n),
            "s": rng.integers(0, 4, n) / 2.0,
            "w": np.repeat(rng.uniform(0.5, 2.0, queries), sizes),
        }
    )


def _options(method: str, names: Mapping[str, str], with_by: bool) -> dict[str, Any]:
    options: dict[str, Any] = {role: names[role] for role in ("query", "relevance", "score", "doc", "weight")}
    if with_by:
        options["by"] = names["by"]
    if method.startswith("evaluate"):
        return options
    options["k"] = [2, None]
    if method.startswith("ndcg"):
        options["no_relevant"] = 1.0
    return options


# the roles whose column names reach the output (the others may share a name with an output column)
OUTPUT_ROLES = ("query", "by", "weight")
METHODS = [*PER_QUERY, *(f"{m}_mean" for m in PER_QUERY), "evaluate", "evaluate_mean"]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name_set", sorted(HOSTILE_NAMES))
@pytest.mark.parametrize("method", METHODS)
def test_any_column_name_in_any_role(method: str, name_set: str, engine: str) -> None:
    names = HOSTILE_NAMES[name_set]
    plain = _run_frame()
    hostile = plain.rename({PLAIN[role]: names[role] for role in PLAIN})
    args = [ALL_MEASURES] if method.startswith("evaluate") else []
    back = {names[role]: PLAIN[role] for role in OUTPUT_ROLES}
    for with_by in (False, True):
        expected = call(plain, engine, method, *args, **_options(method, PLAIN, with_by))
        got = call(hostile, engine, method, *args, **_options(method, names, with_by))
        assert_frame_equal(got.rename(back, strict=False), expected)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name_set", sorted(HOSTILE_NAMES))
def test_any_column_name_with_qrels(name_set: str, engine: str) -> None:
    names = HOSTILE_NAMES[name_set]
    plain = _run_frame(seed=5)
    qrels = plain.select("q", "d", "rel").filter(pl.col("rel") > 0)
    # a judged document the run did not retrieve, and a judged query the run lacks
    qrels = pl.concat([qrels, pl.DataFrame({"q": [0, 99], "d": ["unretrieved", "x"], "rel": [2, 1]})])
    run = plain.drop("rel")
    rename = {PLAIN[role]: names[role] for role in PLAIN}
    hostile_run = run.rename({c: rename[c] for c in run.columns})
    hostile_qrels = qrels.rename({c: rename[c] for c in qrels.columns})
    back = {names[role]: PLAIN[role] for role in OUTPUT_ROLES}
    for method, args in (("evaluate", [ALL_MEASURES]), ("evaluate_mean", [ALL_MEASURES]), ("ndcg", [])):
        for missing in ("skip", "zero"):
            plain_options = _options(method, PLAIN, with_by=False) | {"missing_queries": missing}
            options = _options(method, names, with_by=False) | {"missing_queries": missing}
            if missing == "zero":  # judged queries absent from the run have no weight
                plain_options.pop("weight")
                options.pop("weight")
            expected = call(run, engine, method, *args, qrels=qrels, **plain_options)
            got = call(hostile_run, engine, method, *args, qrels=hostile_qrels, **options)
            assert_frame_equal(got.rename(back, strict=False), expected)


@pytest.mark.parametrize("name_set", sorted(HOSTILE_NAMES))
def test_any_column_name_in_the_score_forms_and_mean(name_set: str) -> None:
    names = HOSTILE_NAMES[name_set]
    plain = _run_frame(seed=11)
    hostile = plain.rename({PLAIN[role]: names[role] for role in PLAIN})
    for method in ("ndcg_score", "dcg_score"):
        options = {role: names[role] for role in ("query", "relevance", "score", "doc", "weight")}
        plain_options = {role: PLAIN[role] for role in options}
        got = getattr(hostile.rank_metrics, method)(k=3, **options)
        assert got == getattr(plain.rank_metrics, method)(k=3, **plain_options)
    # lodestar_polars.mean over a per-query frame whose weight and group columns have hostile names
    per_query = hostile.rank_metrics.ndcg(by=names["by"], **{r: names[r] for r in ("query", "relevance", "score")})
    weights = hostile.group_by(names["by"], names["query"]).agg(pl.col(names["weight"]).first())
    per_query = per_query.join(weights, on=[names["by"], names["query"]])
    got_mean = lodestar_polars.mean(per_query, by=names["by"], weight=names["weight"])
    expected_mean = plain.rank_metrics.ndcg_mean(by="g", weight="w", query="q", relevance="rel", score="s")
    assert_frame_equal(got_mean.rename({names["by"]: "g"}), expected_mean)


WEIGHT_IS_QUERY = (
    "weight column 'q' is also a query column: the output would hold two columns of that name; pass a copy, "
    "e.g. weight=pl.col(name).alias('weight')."
)


@pytest.mark.parametrize("method", ["ndcg", "ndcg_mean", "reciprocal_rank", "evaluate_mean"])
def test_weight_that_is_the_query_column_is_a_clear_error(method: str) -> None:
    frame = _run_frame().with_columns(pl.col("q").cast(pl.Float64) + 1.0)
    args = [["ndcg", "rr"]] if method.startswith("evaluate") else []
    options = {"query": "q", "relevance": "rel", "score": "s", "weight": "q"}
    assert_raises_everywhere(frame, method, ValueError, WEIGHT_IS_QUERY, *args, **options)
    # the remedy the message gives works, and weights each query by its own id + 1 (hand-checked against
    # a weighted mean of the unweighted per-query values below)
    remedy = options | {"weight": pl.col("q").alias("weight")}
    for engine in ENGINES:
        got = call(frame, engine, method, *args, **remedy)
        if method.endswith("mean"):
            per_query = call(frame, engine, method.removesuffix("_mean"), *args, query="q", relevance="rel", score="s")
            metric = got.columns[0]
            expected = reference.weighted_mean(per_query[metric].to_list(), per_query["q"].to_list())
            assert got[metric].item() == pytest.approx(expected, rel=1e-12)
        else:
            assert got["weight"].to_list() == got["q"].to_list()


# --- 2. judgments are checked as strictly as run rows ------------------------------------------------------

RUN = pl.DataFrame({"qid": ["q1", "q1", "q2"], "docno": ["a", "b", "a"], "s": [0.9, 0.5, 0.3]})
QRELS = pl.DataFrame({"qid": ["q1", "q1", "q2"], "docno": ["a", "c", "a"], "label": [1, 2, 1]})
JUDGED = {"query": "qid", "doc": "docno", "score": "s", "relevance": "label"}


def test_unretrieved_judged_doc_with_an_unmapped_label_raises() -> None:
    # Hand derivation of the number the check prevents: q1 retrieves a (label 1, gain 1) at position 1,
    # DCG = 1.  The unretrieved c has label 2, absent from the mapping.  Dropping c's gain while c keeps
    # the first ideal position (it has the highest label) leaves ideal DCG = 1 / log2(3), so NDCG = log2(3).
    dropped = 1.0 / (1.0 / math.log2(3))
    assert dropped > 1.0
    text = "qrels relevance column 'label': relevance label 2.0 (query 'q1') has no gain in the gain mapping."
    for method in ("ndcg", "ndcg_mean", "dcg"):
        assert_raises_everywhere(RUN, method, ValueError, text, qrels=QRELS, gain={0: 0.0, 1: 1.0}, **JUDGED)
    assert_raises_everywhere(
        RUN, "evaluate", ValueError, text, ["rr", "ndcg@5"], qrels=QRELS, gain={0: 0.0, 1: 1.0}, **JUDGED
    )
    # mapped (label 2 -> gain 0), q1's ideal is a at position 1: NDCG 1 exactly (by hand)
    for engine in ENGINES:
        got = call(RUN, engine, "ndcg", qrels=QRELS, gain={0: 0.0, 1: 1.0, 2: 0.0}, **JUDGED)
        assert got["ndcg"].to_list() == [1.0, 1.0]


def test_unmapped_label_in_the_run_raises() -> None:
    run = pl.DataFrame({"qid": ["q1", "q1"], "label": [5, 1], "s": [0.1, 0.2]})
    text = "relevance label 5 (query 'q1') has no gain in the gain mapping."
    options = {"query": "qid", "score": "s", "relevance": "label", "gain": {0: 0.0, 1: 1.0}}
    assert_raises_everywhere(run, "ndcg", ValueError, text, **options)


@pytest.mark.parametrize(
    ("qrels", "text"),
    [
        (
            QRELS.with_columns(docno=pl.Series(["a", None, "a"])),
            "qrels doc column 'docno' has 1 null value(s), the first in query 'q1'.",
        ),
        (QRELS.with_columns(qid=pl.Series(["q1", None, "q2"])), "qrels query column 'qid' has null values."),
        (
            QRELS.with_columns(label=pl.Series([1.0, float("nan"), 1.0])),
            "qrels relevance column 'label' has 1 null, NaN or infinite value(s), the first in query 'q1'.",
        ),
        (
            QRELS.with_columns(label=pl.Series([1.0, 1.0, float("inf")])),
            "qrels relevance column 'label' has 1 null, NaN or infinite value(s), the first in query 'q2'.",
        ),
        (
            pl.concat([QRELS, QRELS.head(1)]),
            "qrels list doc 'a' twice for query 'q1' ('qid', 'docno'); each (query, doc) pair must be judged once.",
        ),
    ],
    ids=["null-doc", "null-query", "nan-relevance", "inf-relevance", "duplicate"],
)
@pytest.mark.parametrize("method", ["ndcg", "reciprocal_rank_mean", "precision", "average_precision"])
def test_bad_judgments_raise_whatever_the_measure(method: str, qrels: pl.DataFrame, text: str) -> None:
    assert_raises_everywhere(RUN, method, ValueError, text, qrels=qrels, **JUDGED)


def _many_judged_queries(seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A run and judgments over 3,000 queries q0000..q2999 (two docs each), both in shuffled row order."""
    queries = [f"q{i:04d}" for i in range(3000) for _ in range(2)]
    docs = ["a", "b"] * 3000
    run = pl.DataFrame({"qid": queries, "docno": docs, "s": [0.9, 0.5] * 3000})
    qrels = pl.DataFrame({"qid": queries, "docno": docs, "label": [1.0, 0.0] * 3000})
    return run.sample(fraction=1.0, shuffle=True, seed=seed), qrels.sample(fraction=1.0, shuffle=True, seed=seed + 1)


@pytest.mark.parametrize("seed", [0, 1])
def test_a_bad_judgment_is_named_by_its_first_query_in_key_order(seed: int) -> None:
    """Two queries' judgments fail a check, the greater key first in the rows: the message names the lesser
    ('q0100' < 'q2999'), and its offending value, on every engine and whatever order the rows come in."""
    run, qrels = _many_judged_queries(seed)
    duplicated = pl.DataFrame({"qid": ["q2999", "q0100"], "docno": ["b", "a"], "label": [0.0, 1.0]})
    text = "qrels list doc 'a' twice for query 'q0100' ('qid', 'docno'); each (query, doc) pair must be judged once."
    assert_raises_everywhere(run, "ndcg", ValueError, text, qrels=pl.concat([duplicated, qrels]), **JUDGED)
    unreadable = pl.col("qid").is_in(["q2999", "q0100"]) & (pl.col("docno") == "b")
    bad_labels = qrels.with_columns(label=pl.when(unreadable).then(float("nan")).otherwise(pl.col("label")))
    text = "qrels relevance column 'label' has 2 null, NaN or infinite value(s), the first in query 'q0100'."
    assert_raises_everywhere(run, "ndcg", ValueError, text, qrels=bad_labels, **JUDGED)


@pytest.mark.parametrize("seed", [0, 1])
def test_a_bad_run_row_is_named_by_its_first_query_in_key_order(seed: int) -> None:
    """The same on the run's side, with and without judgments: NaN scores and a repeated doc id in 'q2999'
    (its rows first) and 'q0100'."""
    run, qrels = _many_judged_queries(seed)
    unreadable = pl.col("qid").is_in(["q2999", "q0100"]) & (pl.col("docno") == "b")
    bad_scores = run.with_columns(s=pl.when(unreadable).then(float("nan")).otherwise(pl.col("s")))
    text = "score column 's' has 2 null, NaN or infinite value(s), the first in query 'q0100'."
    assert_raises_everywhere(bad_scores, "ndcg", ValueError, text, qrels=qrels, **JUDGED)
    in_frame = {"query": "qid", "score": "s", "relevance": "label"}
    bad_scores_in_frame = bad_scores.join(qrels, on=["qid", "docno"])
    assert_raises_everywhere(bad_scores_in_frame, "ndcg", ValueError, text, **in_frame)
    repeated = pl.DataFrame({"qid": ["q2999", "q0100"], "docno": ["b", "a"], "s": [0.1, 0.2]})
    text = (
        "query 'q0100' lists doc 'a' more than once (columns 'qid', 'docno'); a duplicated (query, doc) pair, "
        "often from a join fan-out, would inflate the metric."
    )
    assert_raises_everywhere(pl.concat([repeated, run]), "ndcg", ValueError, text, qrels=qrels, **JUDGED)


# --- 3. ties="doc" orders by the doc id's text, as trec_eval --------------------------------------------------


def _doc_ids(kind: str, rng: np.random.Generator, n: int) -> tuple[pl.Series, list[str]]:
    """n distinct doc ids of `kind` and their text (trec_eval's docnos)."""
    numbers = rng.choice(np.array([1, 2, 9, 10, 11, 19, 90, 99, 100, 101, 109, 110, 900, 1000, 1001]), n, replace=False)
    texts = [str(x) for x in numbers]
    if kind == "int":
        return pl.Series("d", numbers, dtype=pl.Int64), texts
    if kind == "uint16":
        return pl.Series("d", numbers, dtype=pl.UInt16), texts
    if kind == "enum":
        # categories in numeric order, which is not the text order
        categories = [str(x) for x in sorted({1, 2, 9, 10, 11, 19, 90, 99, 100, 101, 109, 110, 900, 1000, 1001})]
        return pl.Series("d", texts, dtype=pl.Enum(categories)), texts
    if kind == "categorical":
        return pl.Series("d", texts, dtype=pl.Categorical()), texts
    return pl.Series("d", texts, dtype=pl.String), texts


@pytest.mark.parametrize("kind", ["int", "uint16", "enum", "categorical", "string"])
@pytest.mark.parametrize("seed", range(4))
def test_doc_ties_match_pytrec_eval(kind: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    run_parts, qrels_parts = [], []
    trec_run: dict[str, dict[str, float]] = {}
    trec_qrels: dict[str, dict[str, int]] = {}
    for query in range(12):
        n = int(rng.integers(2, 10))
        ids, texts = _doc_ids(kind, rng, n)
        scores = rng.integers(0, 3, n) / 2.0  # many ties
        labels = rng.integers(0, 3, n) * (rng.random(n) < 0.7)
        judged = rng.random(n) < 0.8
        run_parts.append(pl.DataFrame({"q": [query] * n, "d": ids, "s": scores}))
        qrels_parts.append(pl.DataFrame({"q": [query] * n, "d": ids, "rel": labels}).filter(pl.Series(judged)))
        trec_run[str(query)] = dict(zip(texts, scores.tolist(), strict=True))
        trec_qrels[str(query)] = {t: int(lab) for t, lab, j in zip(texts, labels, judged, strict=True) if j}
    run, qrels = pl.concat(run_parts), pl.concat(qrels_parts)
    trec_qrels = {q: judgments for q, judgments in trec_qrels.items() if judgments}
    measures = {"ndcg", "ndcg_cut_3", "recip_rank", "P_3", "recall_3", "map", "map_cut_3"}
    expected = pytrec_eval.RelevanceEvaluator(trec_qrels, measures).evaluate(trec_run)
    options = {"query": "q", "doc": "d", "score": "s", "relevance": "rel", "ties": "doc", "qrels": qrels}
    names = {"ndcg": "ndcg", "ndcg@3": "ndcg_cut_3", "rr": "recip_rank", "p@3": "P_3", "r@3": "recall_3"}
    names |= {"ap": "map", "ap@3": "map_cut_3"}
    for engine in ENGINES:
        got = call(run, engine, "evaluate", list(names), **options)
        assert sorted(str(q) for q in got["q"]) == sorted(expected)
        for row in got.iter_rows(named=True):
            for ours, theirs in names.items():
                assert row[ours] == pytest.approx(expected[str(row["q"])][theirs], abs=1e-12), (ours, row["q"])
        ndcg = call(run, engine, "ndcg", k=[None, 3], **options)
        rr = call(run, engine, "reciprocal_rank", **options)
        for table, column, theirs in (
            (ndcg, "ndcg", "ndcg"),
            (ndcg, "ndcg@3", "ndcg_cut_3"),
            (rr, "reciprocal_rank", "recip_rank"),
        ):
            for q, value in zip(table["q"], table[column], strict=True):
                assert value == pytest.approx(expected[str(q)][theirs], abs=1e-12)


def test_doc_ties_order_nine_before_ten_and_hundred() -> None:
    # trec_eval sorts tied docnos descending as strings: "9" > "100" > "10"; only 10 is relevant, so it
    # lands at position 3 (hand-derived; pytrec_eval agrees in test_doc_ties_match_pytrec_eval)
    run = pl.DataFrame({"q": [1, 1, 1], "d": [10, 9, 100], "s": [1.0, 1.0, 1.0], "rel": [1, 0, 0]})
    for engine in ENGINES:
        got = call(run, engine, "reciprocal_rank", query="q", doc="d", score="s", relevance="rel", ties="doc")
        assert got["reciprocal_rank"].to_list() == [1.0 / 3.0]


# --- 4. gains --------------------------------------------------------------------------------------------

SMALL = pl.DataFrame({"q": [1, 1, 2, 2], "rel": [0, 1, 2, 0], "s": [0.1, 0.2, 0.3, 0.3]})
COLUMNS = {"query": "q", "relevance": "rel", "score": "s"}
GAIN_KINDS = "gain must be 'linear', 'exponential', a mapping label -> gain, or a sequence of gains"


@pytest.mark.parametrize(
    ("gain", "error", "text"),
    [
        (b"linear", TypeError, f"{GAIN_KINDS}; got b'linear'."),
        ("exp", ValueError, f"{GAIN_KINDS}; got 'exp'."),
        (3.0, TypeError, f"{GAIN_KINDS}; got 3.0."),
        ({0: "a", 1: 1.0}, ValueError, "gain mapping gain must be a finite number, got 'a' (label 0)."),
        (["0", "1", "3"], ValueError, "gain mapping gain must be a finite number, got '0' (label 0)."),
        ({"0": 0.0}, ValueError, "gain mapping label must be a finite number, got '0' (label '0')."),
        ({0: 0.0, 1: float("nan")}, ValueError, "gain mapping gain must be a finite number, got nan (label 1)."),
        ({}, ValueError, "gain mapping is empty."),
    ],
)
@pytest.mark.parametrize("method", ["ndcg", "ndcg_mean", "dcg"])
def test_bad_gains_are_refused(method: str, gain: object, error: type[Exception], text: str) -> None:
    assert_raises_everywhere(SMALL, method, error, text, gain=gain, **COLUMNS)


RBP_REFUSES = (
    "which {rbp} refuses (it brings the gains into [0, 1] by the query's greatest gain, as trec_eval's rbp, and an "
    "unjudged document has gain 0: a negative gain would weigh below it); ndcg, dcg, g, ndcg_rel and rndcg take "
    "negative gains (sdcg clips them to its min_rel)."
)


@pytest.mark.parametrize(
    ("gain", "text"),
    [
        ({0: 0.0, 1: -1.0, 2: 3.0}, f"gain mapping gives label 1 the negative gain -1.0, {RBP_REFUSES}"),
        ([0.0, -0.5, 3.0], f"gain mapping gives label 1 the negative gain -0.5, {RBP_REFUSES}"),
    ],
)
def test_negative_gains_are_refused_by_rbp_only(gain: object, text: str) -> None:
    """rbp refuses a negative gain, named with its label, as soon as it is among the measures; ndcg and dcg
    (and g, ndcg_rel, rndcg: tests/test_negative_gains.py) take it."""
    for rbp in ("rbp", "rbp(p=0.5)@2"):  # the measure named as the call names it
        named = text.format(rbp=rbp)
        assert_raises_everywhere(SMALL, "evaluate", ValueError, named, ["dcg", "ndcg@1", rbp], gain=gain, **COLUMNS)
    for engine in ENGINES:
        got = call(SMALL, engine, "evaluate", ["dcg", "ndcg@1"], gain=gain, **COLUMNS)
        assert got.columns == ["q", "dcg", "ndcg@1"]


def test_dcg_accepts_negative_gains() -> None:
    gain = {0: 0.0, 1: -1.0, 2: 3.0}
    for engine in ENGINES:
        for method, args, column in (("dcg", [], "dcg"), ("evaluate", [["dcg"]], "dcg")):
            got = call(SMALL, engine, method, *args, gain=gain, **COLUMNS)
            # query 1: rel 1 (gain -1) at position 1 -> -1.  query 2: a tie of gains 3 and 0 -> scikit-learn
            expected_2 = reference.sklearn_dcg([3.0, 0.0], [0.3, 0.3], None)
            assert got[column].to_list() == pytest.approx([-1.0, expected_2], abs=1e-12)


# --- 5. non-finite results are errors ------------------------------------------------------------------------


def test_exponential_gain_overflow_names_the_relevance_and_query() -> None:
    big = SMALL.with_columns(rel=pl.Series([0, 1, 1100, 0]))
    text = "relevance 1100 (query 2) has an exponential gain 2 ** relevance - 1 that overflows Float64."
    for method in ("ndcg", "dcg_mean", "ndcg_mean"):
        assert_raises_everywhere(big, method, ValueError, text, gain="exponential", **COLUMNS)
    qrels = big.select("q", "rel").with_columns(d=pl.Series(["a", "b", "c", "d"]))
    run = big.drop("rel").with_columns(d=pl.Series(["a", "b", "x", "d"]))  # c (label 1100) unretrieved
    text = (
        "qrels relevance column 'rel': relevance 1100.0 (query 2) has an exponential gain 2 ** relevance - 1 "
        "that overflows Float64."
    )
    assert_raises_everywhere(run, "ndcg", ValueError, text, gain="exponential", qrels=qrels, doc="d", **COLUMNS)


def test_measure_overflow_is_an_error() -> None:
    huge = SMALL.with_columns(rel=pl.lit(1e308))  # two gains of 1e308 sum past Float64's maximum
    for method, column in (("dcg", "dcg"), ("ndcg", "ndcg")):
        text = f"a measure ({column}) is not finite for query 2: the gains or their sums overflow Float64."
        assert_raises_everywhere(huge, method, ValueError, text, **COLUMNS)


def test_weight_sums_that_overflow_name_the_weight_column() -> None:
    weighted = SMALL.with_columns(w=pl.lit(1e308))  # two queries of weight 1e308: the sum overflows
    text = "a mean is not finite: the sums of weight x metric or of the weights ('w') overflow Float64."
    for method in ("ndcg_mean", "dcg_mean", "reciprocal_rank_mean"):
        assert_raises_everywhere(weighted, method, ValueError, text, weight="w", **COLUMNS)
    grouped = weighted.with_columns(g=pl.lit("x"))
    text = "a mean is not finite in group g='x': the sums of weight x metric or of the weights ('w') overflow Float64."
    assert_raises_everywhere(grouped, "ndcg_mean", ValueError, text, weight="w", by="g", **COLUMNS)
    with pytest.raises(ValueError) as raised:
        grouped.rank_metrics.ndcg_score(weight="w", **COLUMNS)
    assert (
        str(raised.value)
        == "a mean is not finite: the sums of weight x metric or of the weights ('w') overflow Float64."
    )


# --- 6. every option is validated, used or not ---------------------------------------------------------------


@pytest.mark.parametrize("method", ["ndcg", "dcg_mean", "reciprocal_rank", "evaluate"])
def test_missing_queries_is_validated_without_qrels(method: str) -> None:
    args = [["ndcg"]] if method == "evaluate" else []
    text = "missing_queries must be 'skip' or 'zero', got 'all'."
    for lazy in (False, True):
        frame = SMALL.lazy() if lazy else SMALL
        with pytest.raises(ValueError) as raised:
            getattr(frame.rank_metrics, method)(*args, missing_queries="all", **COLUMNS)  # no collect: at the call
        assert str(raised.value) == text


@pytest.mark.parametrize("k", [np.int64(1), np.int32(1), np.uint8(1), np.int16(1)])
def test_numpy_integers_are_cut_offs(k: object) -> None:
    # scikit-learn accepts numpy integers as k: the same numbers as k=1 from scikit-learn itself
    expected = [float(sk_ndcg_score([[0, 1]], [[0.1, 0.2]], k=1)), float(sk_ndcg_score([[2, 0]], [[0.3, 0.3]], k=1))]
    for engine in ENGINES:
        got = call(SMALL, engine, "ndcg", k=k, **COLUMNS)
        assert got.columns == ["q", "ndcg@1"]
        assert got["ndcg@1"].to_list() == pytest.approx(expected, abs=1e-12)
        got = call(SMALL, engine, "ndcg", k=[k, np.int64(2)], **COLUMNS)
        assert got.columns == ["q", "ndcg@1", "ndcg@2"]
        got = call(SMALL, engine, "reciprocal_rank_mean", k=k, **COLUMNS)
        assert got.columns == ["reciprocal_rank@1", "queries", "weight_sum"]
    assert SMALL.rank_metrics.ndcg_score(k=k, **COLUMNS) == pytest.approx(sum(expected) / 2, abs=1e-12)


@pytest.mark.parametrize(
    ("options", "error", "text"),
    [
        (
            {"k": np.float64(2.0)},
            TypeError,
            "k must be a positive int, None, or a list of them; got np.float64(2.0) (float64).",
        ),
        ({"k": True}, TypeError, "k must be a positive int, None, or a list of them; got True (bool)."),
        ({"k": np.int64(0)}, ValueError, "k must be at least 1, got 0."),
        (
            {"ties": "first"},
            ValueError,
            "ties must be one of 'average', 'reverse', 'input', 'doc', 'optimistic', 'pessimistic'; got 'first'.",
        ),
        ({"no_relevant": float("inf")}, ValueError, "no_relevant must be finite, got inf."),
        ({"no_relevant": "zero"}, TypeError, "no_relevant must be a float, None or 'error'; got 'zero'."),
    ],
)
def test_unused_options_are_still_validated(options: dict[str, Any], error: type[Exception], text: str) -> None:
    for lazy in (False, True):
        frame = SMALL.lazy() if lazy else SMALL
        with pytest.raises(error) as raised:
            frame.rank_metrics.ndcg(**options, **COLUMNS)
        assert str(raised.value) == text


@pytest.mark.parametrize(
    ("method", "options", "text"),
    [
        ("reciprocal_rank", {"threshold": float("nan")}, "threshold must be a finite number, got nan."),
        ("dcg", {"log_base": 1}, "log_base must be a finite float above 0 and not 1, got 1."),
        ("evaluate", {"log_base": -2.0}, "log_base must be a finite float above 0 and not 1, got -2.0."),
        ("evaluate", {"threshold": float("inf")}, "threshold must be a finite number, got inf."),
    ],
)
def test_options_of_other_measures_are_validated(method: str, options: dict[str, Any], text: str) -> None:
    # evaluate(["ndcg"]) uses neither log_base nor threshold, and still checks them
    args = [["ndcg"]] if method == "evaluate" else []
    for lazy in (False, True):
        frame = SMALL.lazy() if lazy else SMALL
        with pytest.raises(ValueError) as raised:
            getattr(frame.rank_metrics, method)(*args, **options, **COLUMNS)
        assert str(raised.value) == text


# --- 7. messages name the user's column, never an internal one ------------------------------------------------


@pytest.mark.parametrize(
    ("role", "text"),
    [
        ("query", "query column 'q' in the frame has dtype Object, which Polars cannot group or join on."),
        ("doc", "doc column 'd' in the frame has dtype Object, which Polars cannot group or join on."),
        ("by", "by column 'g' in the frame has dtype Object, which Polars cannot group or join on."),
    ],
)
def test_object_keys_get_a_schema_error_naming_the_column(role: str, text: str) -> None:
    column = {"query": "q", "doc": "d", "by": "g"}[role]
    frame = SMALL.with_columns(pl.Series(column, [object()] * 4, dtype=pl.Object))
    options = dict(COLUMNS) | ({} if role == "query" else {role: column})
    for method in ("ndcg", "ndcg_mean", "evaluate"):
        args = [["ndcg", "rr"]] if method == "evaluate" else []
        for lazy in (False, True):
            target = frame.lazy() if lazy else frame
            with pytest.raises(pl.exceptions.SchemaError) as raised:
                getattr(target.rank_metrics, method)(*args, **options)
            assert str(raised.value) == text


@pytest.mark.parametrize("name", ["s{x}", "s{", "}", "{0}", "s{total}", "{query}"])
def test_braces_in_column_names_reach_the_message_verbatim(name: str) -> None:
    # error messages are templates filled with the offending query: a user's column name is not a template
    frame = pl.DataFrame({"q": [1, 1], "rel": [1, 0], name: [0.1, None]})
    text = f"score column {name!r} has 1 null, NaN or infinite value(s), the first in query 1."
    assert_raises_everywhere(frame, "ndcg", ValueError, text, query="q", relevance="rel", score=name)
    weighted = pl.DataFrame({"q": [1, 2], "rel": [1, 1], "s": [0.1, 0.2], name: [1e308, 1e308]})
    text = f"a mean is not finite: the sums of weight x metric or of the weights ({name!r}) overflow Float64."
    assert_raises_everywhere(
        weighted, "ndcg_mean", ValueError, text, query="q", relevance="rel", score="s", weight=name
    )


# --- 12. hypothesis: random names, dtypes and options ----------------------------------------------------------

NAME_POOL = [
    "q",
    "query",
    "relevance",
    "score",
    "doc",
    "weight",
    "ndcg",
    "ndcg@10",
    "ndcg@3",
    "dcg",
    "dcg@2",
    "reciprocal_rank",
    "queries",
    "weight_sum",
    "queries_without_judgments",
    "__lodestar_key_0",
    "__lodestar_score",
    "__lodestar_relevance",
    "__lodestar_weight",
    "__lodestar_weight_min",
    "__lodestar_doc_0",
    "__lodestar_metric_0",
    "__lodestar_queries",
    "__",
    "a b",
    "a.b",
    "ü ✓",
    "s{x}",
]
# what each role's column may be cast to; None: a dtype the role refuses (SchemaError at the call)
QUERY_DTYPES = [pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt64, pl.Float64, pl.String, pl.Categorical]
DOC_DTYPES = [pl.Int64, pl.UInt16, pl.String, pl.Categorical]
NUMBERS = [pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64, pl.Float32, pl.Float64]
RELEVANCE_DTYPES = [*NUMBERS, pl.Decimal(10, 2), pl.Boolean, pl.String, pl.Categorical]
SCORE_DTYPES = [*NUMBERS, pl.Decimal(10, 2), pl.Boolean, pl.String]
WEIGHT_DTYPES = [pl.Float32, pl.Float64, pl.Int32, pl.UInt8, pl.Decimal(10, 2), pl.String]

# option values and the exception each should raise (None: valid)
K_VALUES: list[tuple[object, type[Exception] | None]] = [
    (None, None),
    (1, None),
    (3, None),
    (10, None),
    (np.int64(2), None),
    ([1, None], None),
    (0, ValueError),
    (-1, ValueError),
    (2.5, TypeError),
    (True, TypeError),
    ("3", TypeError),
    ([], ValueError),
]
TIES_VALUES = ["average", "reverse", "input", "doc", "optimistic", "pessimistic", "bogus"]
GAIN_VALUES: list[object] = [
    "linear",
    "exponential",
    {0: 0.0, 1: 1.0, 2: 3.0, 3: 7.0},
    [0.0, 2.0, 1.0, 5.0],  # not monotone in the label
    {0: 0.0, 1: 1.0},  # labels 2 and 3 unmapped
    {0: 0.0, 1: -1.0, 2: 2.0, 3: 3.0},  # negative: taken, outside the ideal (trec_eval)
    b"linear",
    "squared",
]


def _cast(series: pl.Series, dtype: Any) -> pl.Series:
    if dtype == pl.Categorical:
        return series.cast(pl.String).cast(pl.Categorical)
    return series.cast(dtype)


def _gain_of(label: float, gain: object) -> float:
    if gain == "linear":
        return label
    if gain == "exponential":
        return 2.0**label - 1.0
    mapping = dict(enumerate(gain)) if isinstance(gain, list) else gain
    assert isinstance(mapping, dict)
    return float(mapping[int(label)])


def _expected_rr(
    labels: list[float], scores: list[float], docs: list[str], ties: str, k: int | None, threshold: float
) -> float:
    """Reciprocal rank from the definition: for ties="average" the mean over every order of the documents
    consistent with the scores (each equally likely), else the order of `reference.ordered`."""
    n = len(scores)

    def rr(order: tuple[int, ...] | list[int]) -> float:
        for position, row in enumerate(order, start=1):
            if (k is None or position <= k) and labels[row] > threshold:
                return 1.0 / position
        return 0.0

    if ties == "average":
        orders = [
            p for p in itertools.permutations(range(n)) if all(scores[a] >= scores[b] for a, b in itertools.pairwise(p))
        ]
        return sum(rr(p) for p in orders) / len(orders)
    relevant = [1.0 if label > threshold else 0.0 for label in labels]
    return rr(reference.ordered(relevant, scores, docs, ties))


def _sometimes(draw: st.DrawFn, valid: list[Any], invalid: list[Any]) -> Any:
    """A valid value most of the time (so most calls reach the numbers), an invalid one one time in six."""
    if invalid and draw(st.integers(0, 5)) == 5:  # hypothesis leans to small integers: 0 is the valid side
        return draw(st.sampled_from(invalid))
    return draw(st.sampled_from(valid))


@st.composite
def hostile_case(draw: st.DrawFn) -> dict[str, Any]:
    queries = draw(st.integers(1, 4))
    sizes = draw(st.lists(st.integers(1, 5), min_size=queries, max_size=queries))
    rows = sum(sizes)
    labels = draw(st.lists(st.integers(0, 3), min_size=rows, max_size=rows))
    scores = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 1.5]), min_size=rows, max_size=rows))
    weights = draw(st.lists(st.sampled_from([0.5, 1.0, 2.0, 3.0]), min_size=queries, max_size=queries))
    names = draw(
        st.lists(
            st.sampled_from(NAME_POOL) | st.text(alphabet="ab_ .@é", min_size=1, max_size=5),
            min_size=5,
            max_size=5,
            unique=True,
        )
    )
    k, k_error = _sometimes(draw, [v for v in K_VALUES if v[1] is None], [v for v in K_VALUES if v[1] is not None])
    return {
        "sizes": sizes,
        "labels": labels,
        "scores": scores,
        "weights": weights,
        "names": dict(zip(("query", "relevance", "score", "doc", "weight"), names, strict=True)),
        "dtypes": {
            "query": draw(st.sampled_from(QUERY_DTYPES)),
            "relevance": _sometimes(draw, RELEVANCE_DTYPES[:-2], RELEVANCE_DTYPES[-2:]),
            "score": _sometimes(draw, SCORE_DTYPES[:-2], SCORE_DTYPES[-2:]),
            "doc": draw(st.sampled_from(DOC_DTYPES)),
            "weight": _sometimes(draw, WEIGHT_DTYPES[:-1], WEIGHT_DTYPES[-1:]),
        },
        "method": draw(st.sampled_from(["ndcg", "dcg", "reciprocal_rank"])),
        "mean": draw(st.booleans()),
        "engine": draw(st.sampled_from(ENGINES)),
        "use_doc": draw(st.integers(0, 3)) > 0,
        "use_weight": draw(st.booleans()),
        "use_qrels": draw(st.booleans()),
        "judged": draw(st.lists(st.booleans(), min_size=rows, max_size=rows)),
        "k": k,
        "k_error": k_error,
        "ties": _sometimes(draw, TIES_VALUES[:-1], TIES_VALUES[-1:]),
        "gain": _sometimes(draw, GAIN_VALUES[:4], GAIN_VALUES[4:]),
        "no_relevant": _sometimes(draw, [0.0, 1.0, None, "error"], [float("nan"), "none"]),
        "threshold": _sometimes(draw, [0.0, 0.5, 1, 2.5], [float("nan")]),
        "log_base": _sometimes(draw, [2.0, 10, math.e], [1, 0, -2.0]),
        "missing_queries": _sometimes(draw, ["skip", "zero"], ["bogus"]),
    }


def _call_errors(case: dict[str, Any]) -> list[type[Exception]]:
    """The exceptions the call may raise before reading data, by the documented rules ([]: valid).  When
    several arguments are wrong, whichever is checked first raises: any of them is accepted."""
    errors: list[type[Exception]] = []
    method, names, dtypes = case["method"], case["names"], case["dtypes"]
    if case["k_error"] is not None:
        errors.append(case["k_error"])
    if case["ties"] == "bogus" or (case["ties"] == "doc" and not case["use_doc"]):
        errors.append(ValueError)
    if case["missing_queries"] == "bogus":
        errors.append(ValueError)
    if method in ("ndcg", "dcg"):
        gain = case["gain"]
        if isinstance(gain, bytes):
            errors.append(TypeError)
        if gain == "squared":
            errors.append(ValueError)
    if method == "ndcg" and case["no_relevant"] == "none":
        errors.append(TypeError)
    if method == "ndcg" and isinstance(case["no_relevant"], float) and math.isnan(case["no_relevant"]):
        errors.append(ValueError)
    if method == "reciprocal_rank" and math.isnan(case["threshold"]):
        errors.append(ValueError)
    if method == "dcg" and not (case["log_base"] > 0 and case["log_base"] != 1):
        errors.append(ValueError)
    outputs = {"queries", "weight_sum", "queries_without_judgments", *_metric_columns(case)}
    if names["query"] in outputs or (case["use_weight"] and names["weight"] in outputs):
        errors.append(ValueError)
    if dtypes["score"] in (pl.Boolean, pl.String) or (case["use_weight"] and dtypes["weight"] == pl.String):
        errors.append(pl.exceptions.SchemaError)
    if dtypes["relevance"] in (pl.String, pl.Categorical):
        errors.append(pl.exceptions.SchemaError)
    if case["use_qrels"] and not case["use_doc"]:
        errors.append(ValueError)
    if case["use_qrels"] and case["missing_queries"] == "zero" and case["use_weight"]:
        errors.append(ValueError)
    return errors


def _metric_columns(case: dict[str, Any]) -> list[str]:
    k = case["k"]
    cutoffs = k if isinstance(k, list) else [k]
    if case["k_error"] is not None:
        return []
    return [case["method"] if c is None else f"{case['method']}@{int(c)}" for c in cutoffs]


def _frames(case: dict[str, Any]) -> tuple[pl.DataFrame, pl.DataFrame | None, dict[str, list[Any]]]:
    """The run (and judgments) under the case's names and dtypes, and the plain per-row values."""
    sizes, names, dtypes = case["sizes"], case["names"], case["dtypes"]
    query = [q for q, size in enumerate(sizes) for _ in range(size)]
    doc = [7 + 3 * i for i in range(len(query))]  # text order is not numeric order: 10 < 7 as text
    labels = case["labels"]
    if dtypes["relevance"] == pl.Boolean:
        labels = [min(label, 1) for label in labels]
    plain = {
        "query": query,
        "doc": doc,
        "relevance": labels,
        "score": case["scores"],
        "weight": [case["weights"][q] for q in query],
    }
    columns = {role: _cast(pl.Series(names[role], values), dtypes[role]) for role, values in plain.items()}
    run = pl.DataFrame(list(columns.values()))
    # the reference reads the values as cast (an integer score dtype truncates 1.5 to 1, a tie)
    for role in ("relevance", "score", "weight"):
        if dtypes[role] not in (pl.String, pl.Categorical):
            plain[role] = columns[role].cast(pl.Float64).to_list()
    if not case["use_qrels"]:
        return run, None, plain
    judged = pl.Series(case["judged"])
    # an extra judged, unretrieved doc in query 0 and a judged query absent from the run
    extra = pl.DataFrame({"query": [0, len(sizes)], "doc": [1, 2], "relevance": [2, 1]})
    base = pl.DataFrame({"query": query, "doc": doc, "relevance": labels}).filter(judged)
    table = pl.concat([base, extra], how="vertical_relaxed")
    qrels = pl.DataFrame(
        [_cast(table[role].rename(names[role]), dtypes[role]) for role in ("query", "doc", "relevance")]
    )
    # the judgments as the reference reads them: labels as cast (a Boolean dtype turns 2 into True)
    cast_labels = qrels[names["relevance"]]
    labels_as_cast = (
        cast_labels.cast(pl.Float64).to_list()
        if cast_labels.dtype.is_numeric() or cast_labels.dtype == pl.Boolean
        else table["relevance"].to_list()
    )
    plain["qrels"] = list(zip(table["query"].to_list(), table["doc"].to_list(), labels_as_cast, strict=True))
    return run.drop(names["relevance"]), qrels, plain


def _expected(
    case: dict[str, Any], plain: dict[str, list[Any]]
) -> tuple[dict[int, dict[str, float | None]], type[Exception] | None]:
    """Per query the reference value of each metric column; or the data error the call must raise."""
    method, ties, gain, k = case["method"], case["ties"], case["gain"], case["k"]
    cutoffs = k if isinstance(k, list) else [k]
    columns = _metric_columns(case)
    judged_rows: dict[int, dict[int, float]] = {}
    if case["use_qrels"]:
        for q, d, label in plain["qrels"]:
            judged_rows.setdefault(q, {})[d] = float(label)
    expected: dict[int, dict[str, float | None]] = {}
    by_query: dict[int, list[int]] = {}
    for row, q in enumerate(plain["query"]):
        by_query.setdefault(q, []).append(row)
    queries = sorted(judged_rows) if case["use_qrels"] and case["missing_queries"] == "zero" else sorted(by_query)
    for q in queries:
        if case["use_qrels"] and q not in judged_rows:
            continue
        rows = by_query.get(q, [])
        if case["use_qrels"]:
            labels = [judged_rows[q].get(plain["doc"][r], 0.0) for r in rows]
            ideal_labels = list(judged_rows[q].values())
        else:
            labels = [float(plain["relevance"][r]) for r in rows]
            ideal_labels = labels
        scores = [float(plain["score"][r]) for r in rows]
        docs = [str(plain["doc"][r]) for r in rows]
        values: dict[str, float | None] = {}
        for column, cutoff in zip(columns, cutoffs, strict=True):
            if method == "reciprocal_rank":
                values[column] = (
                    _expected_rr(labels, scores, docs, ties, cutoff, float(case["threshold"])) if rows else 0.0
                )
                continue
            try:
                gains = [_gain_of(label, gain) for label in labels]
                # a negative gain (a mapping's) adds nothing to the ideal: trec_eval's ideal loop stops at the
                # first gain <= 0 (m_ndcg.c), the documented definition
                ideal_gains = [max(_gain_of(label, gain), 0.0) for label in ideal_labels]
            except KeyError:
                return {}, ValueError  # an unmapped label
            log_base = float(case["log_base"]) if method == "dcg" else 2.0
            value = reference.dcg(gains, scores, cutoff, ties, docs, log_base) if rows else 0.0
            if method == "dcg":
                values[column] = value
                continue
            ideal = reference.ideal_dcg(ideal_gains, cutoff)
            if ideal == 0:
                if case["no_relevant"] == "error":
                    return {}, ValueError
                values[column] = case["no_relevant"]
            else:
                values[column] = value / ideal
                if not case["use_qrels"] and len(rows) > 1 and ties == "average" and gain == "linear":
                    # scikit-learn itself, on the query as one dense row
                    sk = float(sk_ndcg_score([labels], [scores], k=cutoff))
                    assert values[column] == pytest.approx(sk, abs=1e-12)
        expected[q] = values
    return expected, None


def _assert_no_internal_name(error: BaseException, names: Mapping[str, str]) -> None:
    """The message names no internal column (the user's own names may start with `__lodestar`)."""
    text = str(error)
    for name in sorted(names.values(), key=len, reverse=True):
        text = text.replace(repr(name), "").replace(name, "")
    assert INTERNAL not in text, str(error)


@settings(
    max_examples=int(os.environ.get("LODESTAR_HOSTILE_EXAMPLES", "200")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(case=hostile_case())
def test_hostile_inputs_give_the_reference_or_a_documented_error(case: dict[str, Any]) -> None:
    names = case["names"]
    method = case["method"] + ("_mean" if case["mean"] else "")
    options: dict[str, Any] = {
        "query": names["query"],
        "score": names["score"],
        "relevance": names["relevance"],
        "k": case["k"],
    }
    options["ties"] = case["ties"]
    options["missing_queries"] = case["missing_queries"]
    if case["use_doc"]:
        options["doc"] = names["doc"]
    if case["use_weight"]:
        options["weight"] = names["weight"]
    if case["method"] in ("ndcg", "dcg"):
        options["gain"] = case["gain"]
    if case["method"] == "ndcg":
        options["no_relevant"] = case["no_relevant"]
    if case["method"] == "dcg":
        options["log_base"] = case["log_base"]
    if case["method"] == "reciprocal_rank":
        options["threshold"] = case["threshold"]
    run, qrels, plain = _frames(case)
    documented = (
        TypeError,
        ValueError,
        ZeroDivisionError,
        pl.exceptions.ColumnNotFoundError,
        pl.exceptions.SchemaError,
        pl.exceptions.InvalidOperationError,
    )
    errors = _call_errors(case)
    expected, data_error = ({}, None) if errors else _expected(case, plain)
    if data_error is not None:
        errors.append(data_error)
    if not errors and case["mean"]:
        entered = [q for q, values in expected.items() if next(iter(values.values())) is not None]
        if not entered:
            errors.append(ValueError)  # no query to average
        elif case["use_weight"] and sum(plain["weight"][plain["query"].index(q)] for q in entered) == 0:
            errors.append(ZeroDivisionError)  # an integer weight dtype truncated the weights to 0
    event(f"raises {errors[0].__name__}" if errors else f"compared ({method}, qrels={case['use_qrels']})")
    if errors:
        with pytest.raises(documented) as raised:
            call(run, case["engine"], method, qrels=qrels, **options)
        assert isinstance(raised.value, tuple(errors)), raised.value
        _assert_no_internal_name(raised.value, names)
        return
    got = call(run, case["engine"], method, qrels=qrels, **options)
    columns = _metric_columns(case)
    for column in columns:
        finite = got[column].drop_nulls()
        assert finite.is_finite().all()
    if case["mean"]:
        weight_of = {q: plain["weight"][plain["query"].index(q)] if case["use_weight"] else 1.0 for q in expected}
        for column in columns:
            values = [expected[q][column] for q in expected]
            want = reference.weighted_mean(values, [weight_of[q] for q in expected])
            assert got[column].item() == pytest.approx(want, abs=1e-9), column
        return
    query_values = [int(str(q)) if not isinstance(q, float) else int(q) for q in got[names["query"]]]
    assert (
        query_values == sorted(expected)
        if case["dtypes"]["query"] not in (pl.String, pl.Categorical)
        else sorted(query_values) == sorted(expected)
    )
    for row, q in zip(got.iter_rows(named=True), query_values, strict=True):
        for column in columns:
            want = expected[q][column]
            if want is None:
                assert row[column] is None
            else:
                assert row[column] == pytest.approx(want, abs=1e-9), (column, q)
        if case["use_weight"]:
            assert float(row[names["weight"]]) == pytest.approx(plain["weight"][plain["query"].index(q)])


@pytest.mark.parametrize(("ties", "expected"), [("input", [0.5, 1 / 3]), ("reverse", [0.25, 1.0])])
def test_input_and_reverse_ties_keep_the_run_order_with_qrels(ties: str, expected: list[float]) -> None:
    # all scores tie: "input" keeps the run's row order, "reverse" reverses it.  q0 lists docs 0..4 and
    # doc 1 is relevant: position 2 (input) or 4 (reverse); q1 lists 5, 6, 7 and 7 is relevant: position 3
    # or 1 (hand-derived).  The join with the judgments must not shuffle the rows: repeated to catch it.
    run = pl.DataFrame({"q": [0] * 5 + [1] * 3, "d": list(range(8)), "s": [0.0] * 8})
    qrels = pl.DataFrame({"q": [0, 1], "d": [1, 7], "rel": [1, 1]})
    for _ in range(10):
        for engine in ENGINES:
            got = call(
                run, engine, "reciprocal_rank", query="q", doc="d", score="s", relevance="rel", ties=ties, qrels=qrels
            )
            assert got["reciprocal_rank"].to_list() == pytest.approx(expected, abs=1e-15)
