"""`by=`, composite keys and expression inputs.

The defining property of `by`: evaluating all groups in one call gives, group for group, what evaluating each
group's rows on their own gives (the frame filtered to the group, no `by`), with the group's values put in front
and the rows sorted by (by..., query).  The property tests check it on random frames (mixed by dtypes, nulls in
by values, composite query and doc keys, every tie mode, gains, weights, judgments) for every per-query method,
its mean form and `lodestar_polars.mean`, through each engine of the `engine` fixture.  The oracle is the
method without `by` on filtered frames, which the rest of the suite checks against scikit-learn, trec_eval,
LightGBM and ranx.
"""

from __future__ import annotations

import inspect
import math
import uuid
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import lodestar_polars
from lodestar_polars import RankMetricsFrame
from tests.conftest import Engine

TOLERANCE = 1e-12
# the `engine` fixture is stateless (it names an engine), so sharing it across generated examples is safe
SETTINGS = settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
TIES = ["average", "reverse", "input", "doc", "optimistic", "pessimistic"]
METHODS = [
    "ndcg",
    "dcg",
    "reciprocal_rank",
    "precision",
    "recall",
    "average_precision",
    "success",
    "evaluate",
]
MEASURES = ["ndcg", "ndcg@3", "dcg@2", "rr", "rr@2", "p@2", "r", "r@3", "ap", "ap@4", "success@1", "success"]
# by columns: name -> (dtype, values, None among them); the names are not metric-like, so mean() finds the metrics
BY_COLUMNS: dict[str, tuple[pl.DataType, list[Any]]] = {
    "system": (pl.String(), ["bm25", "dense", "é x", None]),
    "locale": (pl.Int16(), [3, -1, None]),
    "fresh": (pl.Boolean(), [True, False, None]),
    "device": (pl.Categorical(), ["phone", "desktop", None]),
}
GAINS: list[Any] = ["linear", "exponential", {0: 0.0, 1: 1.0, 2: 3.0, 3: 7.5}, {0: 2.0, 1: 0.0, 2: 1.0, 3: 5.0}]


@dataclass
class Case:
    """A run (with relevance, or judged by `qrels`), its by, query and doc keys, and the method's options."""

    frame: pl.DataFrame
    by: list[str]
    query: list[str]
    doc: list[str]
    qrels: pl.DataFrame | None
    method: str
    measures: list[str] | None
    options: dict[str, Any]

    @property
    def args(self) -> tuple[Any, ...]:
        return (self.measures,) if self.measures is not None else ()

    def call_options(self, by: bool) -> dict[str, Any]:
        options = {"query": keys(self.query), "doc": keys(self.doc), **self.options}
        if self.qrels is not None:
            options["qrels"] = self.qrels
        if by:
            options["by"] = keys(self.by)
        return options


def keys(names: list[str]) -> str | list[str]:
    """A single key as a plain string (the common call), several as a list."""
    return names[0] if len(names) == 1 else names


def accepted(method: str) -> set[str]:
    return set(inspect.signature(getattr(RankMetricsFrame, method)).parameters)


def doc_values(doc: list[str], document: int) -> dict[str, Any]:
    """Document `document` under one key (doc_id) or two (site, doc_id: the same doc_id on two sites)."""
    if doc == ["doc_id"]:
        return {"site": "a", "doc_id": document}
    return {"site": "ab"[document % 2], "doc_id": document // 2}


@st.composite
def cases(draw: st.DrawFn, judged: bool) -> Case:
    by = draw(st.lists(st.sampled_from(sorted(BY_COLUMNS)), min_size=1, max_size=2, unique=True))
    query = ["qid", "session"][: draw(st.integers(1, 2))]
    doc = ["doc_id"] if draw(st.booleans()) else ["site", "doc_id"]
    # the query pool: (qid, session) pairs; sessions make the pair, not qid alone, the key
    pool = [(qid, session) for qid in range(4) for session in (["s1", "s2"] if len(query) == 2 else ["s1"])]
    n_groups = draw(st.integers(1, 4))
    group_values = draw(
        st.lists(
            st.tuples(*(st.sampled_from(BY_COLUMNS[name][1]) for name in by)),
            min_size=n_groups,
            max_size=n_groups,
            unique=True,
        )
    )
    integer_scores = draw(st.booleans())
    scores = st.integers(-1, 2) if integer_scores else st.sampled_from([-0.5, 0.0, 0.5, 0.5000000001, 1.0])
    rows: list[dict[str, Any]] = []
    for values in group_values:
        for qid, session in draw(st.lists(st.sampled_from(pool), min_size=1, max_size=4, unique=True)):
            weight = draw(st.sampled_from([0.5, 1.0, 2.5]))  # one weight per (by..., query)
            for document in draw(st.lists(st.integers(0, 11), min_size=1, max_size=7, unique=True)):
                row = dict(zip(by, values, strict=True))
                row |= {"qid": qid, "session": session, **doc_values(doc, document)}
                row |= {"relevance": draw(st.integers(0, 3)), "score": draw(scores), "w": weight}
                rows.append(row)
    order = draw(st.permutations(range(len(rows))))
    schema = {name: BY_COLUMNS[name][0] for name in by}
    schema |= {"qid": pl.Int64(), "session": pl.String(), "site": pl.String(), "doc_id": pl.Int32()}
    schema |= {"relevance": pl.Int64(), "score": pl.Int64() if integer_scores else pl.Float64(), "w": pl.Float64()}
    frame = pl.DataFrame([rows[i] for i in order], schema=schema)
    qrels = None
    if judged:
        judgments = []
        for qid, session in draw(st.lists(st.sampled_from(pool), min_size=1, max_size=len(pool), unique=True)):
            for document in draw(st.lists(st.integers(0, 11), min_size=1, max_size=8, unique=True)):
                judgments.append(
                    {"qid": qid, "session": session, **doc_values(doc, document), "relevance": draw(st.integers(0, 3))}
                )
        qrels = pl.DataFrame(
            judgments, schema={n: schema[n] for n in ("qid", "session", "site", "doc_id", "relevance")}
        )
        frame = frame.drop("relevance")
    method = draw(st.sampled_from(METHODS))
    measures = None
    if method == "evaluate":
        measures = draw(st.lists(st.sampled_from(MEASURES), min_size=1, max_size=4, unique=True))
    options: dict[str, Any] = {
        "k": draw(
            st.one_of(st.none(), st.integers(1, 6), st.lists(st.integers(1, 6), min_size=1, max_size=3, unique=True))
        ),
        "ties": draw(st.sampled_from(TIES)),
        "gain": draw(st.sampled_from(GAINS)),
        "no_relevant": draw(st.sampled_from([0.0, 1.0, None])),
        "threshold": draw(st.sampled_from([0.0, 1.0, 1.5])),
        "log_base": draw(st.sampled_from([2.0, 10.0])),
        "weight": draw(st.sampled_from(["w", None])),
        "missing_queries": draw(st.sampled_from(["skip", "zero"])) if judged else "skip",
    }
    if options["missing_queries"] == "zero":
        options["weight"] = None  # judged queries missing from a run have no weight; the core refuses both
    options = {name: value for name, value in options.items() if name in accepted(method)}
    return Case(frame, by, query, doc, qrels, method, measures, options)


# --- the oracle: each group's rows evaluated on their own ---------------------------------------------------


def group_frames(case: Case) -> list[tuple[pl.DataFrame, pl.DataFrame]]:
    """(the group's by values as a one-row frame with the by dtypes, the group's rows) for each group."""
    groups = case.frame.select(case.by).unique(maintain_order=True)
    result = []
    for index in range(groups.height):
        values = groups.slice(index, 1)
        condition = pl.all_horizontal(pl.col(name).eq_missing(values[name].item()) for name in case.by)
        result.append((values, case.frame.filter(condition)))
    return result


def per_group(case: Case, method: str) -> pl.DataFrame | type[Exception]:
    """The method without `by` on each group's rows, the group's values in front, sorted by (by..., query);
    or the type of the error a group raises."""
    parts = []
    for values, rows in group_frames(case):
        try:
            result = getattr(rows.rank_metrics, method)(*case.args, **case.call_options(by=False))
        except (ValueError, ZeroDivisionError) as error:
            return type(error)
        parts.append(values.join(result, how="cross"))
    keys_ = case.by + (case.query if not method.endswith("_mean") else [])
    return pl.concat(parts).sort(keys_, nulls_last=True)


def assert_same(got: pl.DataFrame, expected: pl.DataFrame) -> None:
    assert_frame_equal(got, expected, check_exact=False, rel_tol=0.0, abs_tol=TOLERANCE)


def check_case(engine: Engine, case: Case) -> None:
    expected = per_group(case, case.method)
    mean_method = f"{case.method}_mean"
    expected_mean = per_group(case, mean_method)
    if isinstance(expected, type):
        with pytest.raises(expected):
            engine(case.frame, case.method, *case.args, **case.call_options(by=True))
        return
    got = engine(case.frame, case.method, *case.args, **case.call_options(by=True))
    assert got.columns[: len(case.by)] == case.by
    assert [got.schema[name] for name in case.by] == [case.frame.schema[name] for name in case.by]
    assert_same(got, expected)
    if isinstance(expected_mean, type):
        with pytest.raises(expected_mean, match="group"):
            engine(case.frame, mean_method, *case.args, **case.call_options(by=True))
        return
    got_mean = engine(case.frame, mean_method, *case.args, **case.call_options(by=True))
    assert_same(got_mean, expected_mean)
    # the mean of the per-query frame is the mean form's frame (which adds the judgment count with qrels)
    weight = case.options.get("weight")
    metrics = [c for c in got.columns if c not in (*case.by, *case.query, weight)]
    from_per_query = lodestar_polars.mean(got, by=keys(case.by), weight=weight, metrics=metrics)
    assert isinstance(from_per_query, pl.DataFrame)
    assert_same(from_per_query, got_mean.drop("queries_without_judgments", strict=False))


@SETTINGS
@given(case=cases(judged=False))
def test_by_equals_each_group_evaluated_on_its_own(engine: Engine, case: Case) -> None:
    check_case(engine, case)


@SETTINGS
@given(case=cases(judged=True))
def test_by_with_qrels_equals_each_group_evaluated_on_its_own(engine: Engine, case: Case) -> None:
    """The judgments belong to the query: each group is evaluated against the same qrels."""
    check_case(engine, case)


# --- documented behaviour, derived by hand ------------------------------------------------------------------

LOG2_3 = math.log2(3)


def two_models() -> pl.DataFrame:
    # model a: query 1 ranks the relevant doc first, query 2 second; model b (null model name too): the reverse
    return pl.DataFrame(
        {
            "model": ["b", "a", "a", "b", None, "a", "a", None],
            "locale": pl.Series([2, 1, 1, 2, 1, 1, 1, 1], dtype=pl.Int8),
            "query": ["q1", "q1", "q1", "q1", "q2", "q2", "q2", "q2"],
            "relevance": [1, 1, 0, 0, 1, 0, 1, 0],
            "score": [0.1, 0.9, 0.1, 0.9, 0.9, 0.9, 0.1, 0.1],
        }
    )


def test_per_query_layout_by_columns_first_sorted_nulls_last(engine: Engine) -> None:
    result = engine(two_models(), "ndcg", by=["model", "locale"], k=[1, None])
    assert result.schema == pl.Schema(
        {"model": pl.String, "locale": pl.Int8, "query": pl.String, "ndcg@1": pl.Float64, "ndcg": pl.Float64}
    )
    # hand: relevant doc first -> 1.0; second -> 1 / log2(3); ndcg@1 then 0
    assert result.rows() == [
        ("a", 1, "q1", 1.0, 1.0),
        ("a", 1, "q2", 0.0, pytest.approx(1 / LOG2_3)),
        ("b", 2, "q1", 0.0, pytest.approx(1 / LOG2_3)),
        (None, 1, "q2", 1.0, 1.0),
    ]


def test_mean_layout_one_row_per_group(engine: Engine) -> None:
    result = engine(two_models(), "ndcg_mean", by="model", k=1)
    assert result.schema == pl.Schema(
        {"model": pl.String, "ndcg@1": pl.Float64, "queries": pl.UInt32, "weight_sum": pl.Float64}
    )
    assert result.rows() == [("a", 0.5, 2, 2.0), ("b", 0.0, 1, 1.0), (None, 1.0, 1, 1.0)]


def test_qrels_are_shared_by_every_group_and_missing_queries_count_per_group(engine: Engine) -> None:
    run = pl.DataFrame(
        {
            "system": ["x", "x", "x", "y", "y"],
            "query": [1, 1, 3, 1, 1],
            "doc": ["d1", "d2", "d9", "d2", "d3"],
            "score": [2.0, 1.0, 1.0, 2.0, 1.0],
        }
    )
    # query 1 judges d1 and d3 relevant; query 2 is judged but retrieved by no system; query 3 is unjudged
    qrels = pl.DataFrame({"query": [1, 1, 2], "doc": ["d1", "d3", "d5"], "relevance": [1, 1, 1]})
    per_query = engine(run, "recall", by="system", doc="doc", qrels=qrels, missing_queries="zero")
    # hand: x retrieves d1 of {d1, d3} -> 1/2; y retrieves d3 -> 1/2; query 2 scores 0 in both groups
    assert per_query.rows() == [("x", 1, 0.5), ("x", 2, 0.0), ("y", 1, 0.5), ("y", 2, 0.0)]
    mean = engine(run, "recall_mean", by="system", doc="doc", qrels=qrels, missing_queries="zero")
    assert mean.columns == ["system", "recall", "queries", "weight_sum", "queries_without_judgments"]
    # x ran the unjudged query 3, y did not
    assert mean.rows() == [("x", 0.25, 2, 2.0, 1), ("y", 0.25, 2, 2.0, 0)]
    skip = engine(run, "recall_mean", by="system", doc="doc", qrels=qrels)
    assert skip.rows() == [("x", 0.5, 1, 1.0, 1), ("y", 0.5, 1, 1.0, 0)]


def test_ideal_dcg_comes_from_the_judgments_not_the_group_run(engine: Engine) -> None:
    run = pl.DataFrame({"system": ["x", "y"], "query": [1, 1], "doc": ["d1", "d2"], "score": [1.0, 1.0]})
    qrels = pl.DataFrame({"query": [1, 1], "doc": ["d1", "d2"], "relevance": [2, 1]})
    result = engine(run, "ndcg", by="system", doc="doc", qrels=qrels)
    # hand: ideal DCG of query 1 = 2 + 1 / log2(3) for both systems; x finds gain 2, y gain 1, at position 1
    ideal = 2 + 1 / LOG2_3
    assert result["ndcg"].to_list() == pytest.approx([2 / ideal, 1 / ideal], abs=1e-15)


@pytest.mark.parametrize("method", ["ndcg_score", "dcg_score"])
def test_score_forms_refuse_by(method: str) -> None:
    with pytest.raises(TypeError, match="by"):
        getattr(two_models().rank_metrics, method)(by="model")


def test_weights_are_one_per_group_and_query(engine: Engine) -> None:
    frame = two_models().drop_nulls("model").with_columns(w=pl.when(pl.col("model") == "a").then(1.0).otherwise(3.0))
    per_query = engine(frame, "ndcg", by="model", weight="w")
    assert per_query["w"].to_list() == [1.0, 1.0, 3.0]
    mean = engine(frame, "ndcg_mean", by="model", weight="w")
    assert mean["weight_sum"].to_list() == [2.0, 3.0]
    with pytest.raises(ValueError, match=r"weight column 'w' differs within query"):
        engine(frame.with_columns(w=pl.int_range(pl.len()).cast(pl.Float64)), "ndcg", by="model", weight="w")


def huge_query_ids(frame: pl.DataFrame) -> pl.DataFrame:
    """The query ids as Int64 beyond 2**31: too large for a packed group's slot, so the keys are hashed."""
    return frame.with_columns(pl.col("query").replace_strict({"q1": 2**40, "q2": -(2**40)}, return_dtype=pl.Int64))


@pytest.mark.parametrize(
    ("by", "keys", "frame"),
    [
        (
            ["model", "locale", "site"],
            "'model', 'locale', 'site', 'query'",
            two_models().drop_nulls("model").with_columns(site=pl.lit("web")),
        ),
        (["model", "locale"], "'model', 'locale', 'query'", huge_query_ids(two_models().drop_nulls("model"))),
        ("model", "'model', 'query'", huge_query_ids(two_models().drop_nulls("model"))),
    ],
)
def test_keys_grouped_by_their_hash_detect_a_collision(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, by: str | list[str], keys: str, frame: pl.DataFrame
) -> None:
    """With four key columns, or two or three whose values do not fit a packed group (an integer beyond 2**40),
    the plan groups rows by a 64-bit hash of the keys; a collision (two keys, one hash) must raise, never merge two
    queries.  Real collisions are too rare to meet in a test, so the group hash is replaced by a constant: every
    key then collides."""
    from lodestar_polars._plan import inputs
    from lodestar_polars._plan import keys as plan_keys

    for module in (inputs, plan_keys):  # the rows are hashed in one, the distinct keys in the other
        monkeypatch.setattr(module, "_key_hash", lambda keys: pl.lit(7, pl.UInt64))
    with pytest.raises(RuntimeError, match=rf"two different keys \({keys}\) share one 64-bit hash"):
        engine(frame, "ndcg", by=by)
    monkeypatch.undo()
    assert engine(frame, "ndcg", by=by).height == 3


@pytest.mark.parametrize("by", ["model", None, ["model", "locale"]])
def test_keys_that_fit_a_packed_group_never_meet_the_hash(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, by: str | list[str] | None
) -> None:
    """A String query, or one or two `by` columns beside it (String, Int8), are grouped by their exact codes: a
    hash that collides for every key changes nothing."""
    from lodestar_polars._plan import inputs
    from lodestar_polars._plan import keys as plan_keys

    frame = two_models().drop_nulls("model")
    expected = engine(frame, "ndcg", by=by)
    for module in (inputs, plan_keys):  # the rows are hashed in one, the distinct keys in the other
        monkeypatch.setattr(module, "_key_hash", lambda keys: pl.lit(7, pl.UInt64))
    assert_frame_equal(engine(frame, "ndcg", by=by), expected)


# key values of each dtype for a packed group: a slot holds a category code or a non-negative integer below
# 2**31 - 1 (2**31 - 2 the largest); a negative or larger integer is hashed instead
BY_KEYS: dict[str, tuple[pl.DataType, list[Any]]] = {
    "String": (pl.String(), ["a", "b", None]),
    "Categorical": (pl.Categorical(), ["a", "b", None]),
    "Enum": (pl.Enum(["z", "b", "a"]), ["a", "b", None]),
    "Int8": (pl.Int8(), [-128, 127, None]),
    "UInt8": (pl.UInt8(), [0, 255, None]),
    "Int32": (pl.Int32(), [-(2**31), 2**31 - 1, None]),
    "UInt64": (pl.UInt64(), [2**64 - 1, 2**31 - 2, None]),
}
QUERY_KEYS: dict[str, tuple[pl.DataType, list[Any]]] = {
    "String": (pl.String(), ["q1", "q2"]),
    "Categorical": (pl.Categorical(), ["q2", "q1"]),
    "Int64": (pl.Int64(), [-1, 3, 2**40]),
    "UInt32": (pl.UInt32(), [2**31 - 2, 2**31 - 1]),
}


@pytest.mark.parametrize("by_kind", sorted(BY_KEYS))
@pytest.mark.parametrize("query_kind", sorted(QUERY_KEYS))
def test_packed_and_hashed_keys_come_back_exactly(engine: Engine, by_kind: str, query_kind: str) -> None:
    """A `by` column and a query column, each a String, Categorical, Enum or integer, are packed into one exact
    group where their values fit and hashed where they do not: both kinds of group, and null `by` keys, in one
    call, each key returned as given and in its dtype, no two groups merged."""
    by_dtype, by_values = BY_KEYS[by_kind]
    query_dtype, query_values = QUERY_KEYS[query_kind]
    groups = [(b, q) for b in by_values for q in query_values]
    # each group: two documents, the relevant one first (hand: ndcg 1) or second (1 / log2(3)), alternating, so
    # that two groups merged into one would give neither value
    expected = {group: 1.0 if i % 2 == 0 else 1 / LOG2_3 for i, group in enumerate(groups)}
    rows = []
    for (b, q), value in expected.items():
        first = value == 1.0
        rows += [(b, q, 1, 0.9 if first else 0.1), (b, q, 0, 0.1 if first else 0.9)]
    schema = {"system": by_dtype, "query": query_dtype, "relevance": pl.Int64(), "score": pl.Float64()}
    frame = pl.DataFrame(rows, schema=schema, orient="row")
    result = engine(frame, "ndcg", by="system")
    assert result.schema == pl.Schema({"system": by_dtype, "query": query_dtype, "ndcg": pl.Float64()})
    got = {(b, q): value for b, q, value in result.rows()}
    assert got.keys() == expected.keys()
    for group, value in expected.items():
        assert got[group] == pytest.approx(value, abs=1e-15), group


# three keys get 21-bit slots: a code below 2**21 - 1 fits (2**21 - 2 the largest), 2**21 - 1 does not (it
# would with two keys); a negative or larger integer is hashed
THREE_KEYS: dict[str, tuple[pl.DataType, list[Any]]] = {
    "String": (pl.String(), ["a", None, "b"]),
    "Categorical": (pl.Categorical(), [None, "b", "a"]),
    "Enum": (pl.Enum(["z", "b", "a"]), ["a", "b", None]),
    "Int32": (pl.Int32(), [2**21 - 1, -1, 2**21 - 2, None]),
    "UInt64": (pl.UInt64(), [0, 2**64 - 1, 2**21 - 2]),
}


@pytest.mark.parametrize("first_kind", sorted(THREE_KEYS))
@pytest.mark.parametrize("second_kind", sorted(THREE_KEYS))
@pytest.mark.parametrize("query_kind", ["String", "Int64"])
def test_three_packed_and_hashed_keys_come_back_exactly(
    engine: Engine, first_kind: str, second_kind: str, query_kind: str
) -> None:
    """Two `by` columns and a query column are packed into one exact group of three 21-bit slots where their
    values fit and hashed where they do not: every group comes back with its own keys and value."""
    first_dtype, first_values = THREE_KEYS[first_kind]
    second_dtype, second_values = THREE_KEYS[second_kind]
    query_dtype, query_values = (pl.String(), ["q1", "q2"]) if query_kind == "String" else (pl.Int64(), [3, 2**21 - 1])
    groups = [(a, b, q) for a in first_values for b in second_values for q in query_values]
    # hand, as in test_packed_and_hashed_keys_come_back_exactly: ndcg 1 or 1 / log2(3), alternating
    expected = {group: 1.0 if i % 2 == 0 else 1 / LOG2_3 for i, group in enumerate(groups)}
    rows = []
    for (a, b, q), value in expected.items():
        first = value == 1.0
        rows += [(a, b, q, 1, 0.9 if first else 0.1), (a, b, q, 0, 0.1 if first else 0.9)]
    schema = {
        "one": first_dtype,
        "two": second_dtype,
        "query": query_dtype,
        "relevance": pl.Int64(),
        "score": pl.Float64(),
    }
    frame = pl.DataFrame(rows, schema=schema, orient="row")
    result = engine(frame, "ndcg", by=["one", "two"])
    assert result.schema == pl.Schema(
        {"one": first_dtype, "two": second_dtype, "query": query_dtype, "ndcg": pl.Float64()}
    )
    got = {(a, b, q): value for a, b, q, value in result.rows()}
    assert got.keys() == expected.keys()
    for group, value in expected.items():
        assert got[group] == pytest.approx(value, abs=1e-15), group


def test_three_string_keys_whose_codes_do_not_fit_are_hashed(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """A String key's code is its place among the strings Polars' global Categorical holds while any column of it
    lives: with 2**21 other strings held, the codes of new ones no longer fit a 21-bit slot, so three String keys
    are hashed (a hash that collides for every key is caught) and still come back exactly."""
    from lodestar_polars._plan import inputs
    from lodestar_polars._plan import keys as plan_keys

    held = pl.int_range(2**21, eager=True).cast(pl.String).cast(pl.Categorical)
    fresh = f"{uuid.uuid4().hex}-"  # strings the global Categorical cannot hold yet: their codes come after
    keys = ("model", "locale", "query")
    frame = (
        two_models()
        .drop_nulls("model")
        .select(*((fresh + pl.col(key).cast(pl.String)).alias(key) for key in keys), pl.all().exclude(keys))
    )
    for key in keys:  # the premise: no code fits
        assert frame[key].cast(pl.Categorical).to_physical().min() >= 2**21 - 1, key
    result = engine(frame, "ndcg", by=["model", "locale"])
    # hand, as in test_per_query_layout_by_columns_first_sorted_nulls_last
    assert result.rows() == [
        (fresh + "a", fresh + "1", fresh + "q1", 1.0),
        (fresh + "a", fresh + "1", fresh + "q2", pytest.approx(1 / LOG2_3)),
        (fresh + "b", fresh + "2", fresh + "q1", pytest.approx(1 / LOG2_3)),
    ]
    for module in (inputs, plan_keys):  # the rows are hashed in one, the distinct keys in the other
        monkeypatch.setattr(module, "_key_hash", lambda keys: pl.lit(7, pl.UInt64))
    with pytest.raises(RuntimeError, match=r"two different keys \('model', 'locale', 'query'\) share one 64-bit hash"):
        engine(frame, "ndcg", by=["model", "locale"])
    assert held.len() == 2**21


def test_a_null_group_of_plain_by_keys_keeps_its_tie_blocks(engine: Engine) -> None:
    """A Float `by` column is grouped by its plain values, a null one as a group of its own.  With tie
    averaging, a tied query longer than the largest cut-off counts only the tie blocks reaching it, found by a
    join on the keys: that join dropped the null group's rows (every measure below was 0.0 there)."""
    frame = pl.DataFrame(
        {
            "locale": pl.Series([None, None, None, 1.0, 1.0, 1.0], dtype=pl.Float64),
            "query": [1, 1, 1, 1, 1, 1],
            "relevance": [3, 1, 0, 3, 1, 0],
            "score": [0.5, 0.5, 0.1, 0.5, 0.5, 0.1],
        }
    )
    measures = ["ndcg@1", "dcg@1", "P@1", "recall@1", "success@1", "map@1"]
    result = engine(frame, "evaluate", measures, by="locale")
    # hand: the top tie block (gains 3 and 1, both relevant) spans positions 1-2; at position 1 its mean gain
    # 2.0 (dcg@1), over the ideal 3.0 (ndcg@1); a relevant document there in every order: P@1 1, success@1 1,
    # recall@1 1/2 (two relevant), AP@1 (1/1) / 2
    expected = [2 / 3, 2.0, 1.0, 0.5, 1.0, 0.5]
    assert result["locale"].to_list() == [1.0, None]
    for row in result.drop("locale", "query").rows():
        assert list(row) == pytest.approx(expected)


def test_float_by_keys_are_grouped_without_hashing(engine: Engine) -> None:
    """A float key is grouped by its values (a hash would tell -0.0 from 0.0), and still per group."""
    frame = two_models().drop_nulls("model").with_columns(pl.col("locale").cast(pl.Float64))
    by = engine(frame, "ndcg", by="locale", k=[1, None])
    for locale in frame["locale"].unique().sort():
        alone = engine(frame.filter(pl.col("locale") == locale), "ndcg", k=[1, None])
        assert_frame_equal(by.filter(pl.col("locale") == locale).drop("locale"), alone)


# --- composite keys: the same numbers as one fused key ----------------------------------------------------


def test_composite_query_and_doc_keys_with_qrels_equal_one_fused_key(engine: Engine) -> None:
    run = pl.DataFrame(
        {
            "model": ["m", "m", "m", "m", "n", "n"],
            "session": ["s1", "s1", "s2", "s2", "s1", "s1"],
            "qid": [1, 1, 1, 1, 1, 1],
            "site": ["a", "b", "a", "a", "b", "a"],
            "doc_id": [7, 7, 7, 8, 7, 7],
            "score": [0.3, 0.2, 0.3, 0.3, 0.9, 0.1],
        }
    )
    # the same doc_id on two sites are two documents; the same qid in two sessions are two queries
    qrels = pl.DataFrame(
        {
            "session": ["s1", "s1", "s2", "s2"],
            "qid": [1, 1, 1, 1],
            "site": ["b", "a", "a", "b"],
            "doc_id": [7, 7, 8, 9],
            "relevance": [2, 0, 1, 3],
        }
    )
    composite = {"by": "model", "query": ["session", "qid"], "doc": ["site", "doc_id"], "qrels": qrels}
    measures = ["ndcg", "ap", "r@1", "rr"]
    got = engine(run, "evaluate", measures, missing_queries="zero", **composite)
    assert got.columns[:3] == ["model", "session", "qid"]

    def fused(frame: pl.DataFrame) -> pl.DataFrame:
        return frame.with_columns(
            q=pl.concat_str("session", pl.col("qid").cast(pl.String), separator="|"),
            d=pl.concat_str("site", pl.col("doc_id").cast(pl.String), separator="|"),
        )

    expected = fused(run).rank_metrics.evaluate(
        measures, by="model", query="q", doc="d", qrels=fused(qrels), missing_queries="zero"
    )
    assert_same(got.drop("session", "qid"), expected.drop("q"))
    assert got.height == 4  # (m, s1), (m, s2), (n, s1), and (n, s2) judged but not retrieved by n: scored 0


# --- expression inputs ----------------------------------------------------------------------------------


def expression_frame() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "model": ["x", "x", "x", "y", "y", "y", "y"],
            "query": [1, 1, 2, 1, 1, 2, 2],
            "distance": [0.2, 0.7, 0.1, 0.5, 0.5, 0.3, 0.9],
            "a": [1.0, 3.0, 2.0, 0.0, 1.0, 5.0, 5.0],
            "b": [0.5, 0.5, 1.0, 2.0, 0.0, 1.0, 0.0],
            "label": [2, 0, 1, 1, 3, 0, 2],
            "w": [1.0, 1.0, 2.0, 3.0, 3.0, 0.5, 0.5],
        }
    )


@pytest.mark.parametrize("method", ["evaluate", "evaluate_mean"])
def test_expression_inputs_equal_the_same_values_as_columns(engine: Engine, method: str) -> None:
    frame = expression_frame()
    measures = ["ndcg@2", "dcg", "rr", "p@1", "r", "ap", "success@1"]
    expressions = {
        "score": -pl.col("distance"),
        "relevance": pl.col("label").cast(pl.Int8),
        "weight": pl.col("w") * 2,
    }
    got = engine(frame, method, measures, by="model", **expressions)
    precomputed = frame.with_columns(
        neg_distance=-pl.col("distance"), label_i8=pl.col("label").cast(pl.Int8), w2=pl.col("w") * 2
    )
    expected = getattr(precomputed.rank_metrics, method)(
        measures, by="model", score="neg_distance", relevance="label_i8", weight="w2"
    )
    assert_same(got, expected.rename({"w2": "w"}, strict=False))


def test_a_score_expression_of_two_columns(engine: Engine) -> None:
    frame = expression_frame()
    got = engine(frame, "ndcg", by="model", k=[1, 2], score=pl.col("a") - pl.col("b"), relevance="label")
    expected = frame.with_columns(margin=pl.col("a") - pl.col("b")).rank_metrics.ndcg(
        by="model", k=[1, 2], score="margin", relevance="label"
    )
    assert_same(got, expected)


def test_errors_about_an_expression_name_its_output(engine: Engine) -> None:
    frame = expression_frame().with_columns(
        distance=pl.when(pl.col("query") == 2).then(None).otherwise(pl.col("distance"))
    )
    with pytest.raises(ValueError, match=r"score column 'distance' has 3 null, NaN or infinite value"):
        engine(frame, "ndcg", by="model", score=-pl.col("distance"), relevance="label")
    with pytest.raises(ValueError, match=r"weight column 'w' differs within query"):
        engine(expression_frame(), "ndcg", relevance="label", score="a", weight=pl.col("w") * pl.col("a"))
    with pytest.raises(pl.exceptions.SchemaError, match=r"relevance column 'label' in the frame must be numeric"):
        engine(expression_frame(), "ndcg", score="a", relevance=pl.col("label").cast(pl.String))


@pytest.mark.parametrize("role", ["score", "relevance", "weight"])
def test_an_expression_over_an_unknown_column_names_its_role(engine: Engine, role: str) -> None:
    options: dict[str, Any] = {"score": "a", "relevance": "label", role: pl.col("nope") * 2}
    with pytest.raises(pl.exceptions.ColumnNotFoundError, match=rf"^{role} expression .*nope"):
        engine(expression_frame(), "ndcg", **options)


ROW_CHANGING = [
    ("score", pl.col("a").head(2), r"slice"),
    ("score", pl.col("a").filter(pl.col("b") > 0.7), r"filter"),
    ("relevance", pl.col("label").unique(), r"unique"),
    ("weight", pl.col("w").drop_nulls(), r"drop_nulls"),
    ("score", pl.col("a").sort().head(3).over("model"), r"over"),
]


@pytest.mark.parametrize(("role", "expression", "shown"), ROW_CHANGING, ids=[e[2] for e in ROW_CHANGING])
def test_an_expression_that_changes_the_number_of_rows_is_refused_at_call_time(
    role: str, expression: pl.Expr, shown: str
) -> None:
    """Polars would raise "zip node received non-equal length inputs" at collect; the method refuses it when
    called, on a LazyFrame too, naming the role and the expression."""
    options: dict[str, Any] = {"score": "a", "relevance": "label", role: expression}
    pattern = rf"^{role} expression .*{shown}.* changes the number of rows"
    with pytest.raises(pl.exceptions.ShapeError, match=pattern):
        expression_frame().lazy().rank_metrics.ndcg(**options)
    with pytest.raises(pl.exceptions.ShapeError, match=pattern):
        expression_frame().lazy().rank_metrics.evaluate(["ap", "ndcg@2"], **options)


def test_a_relevance_expression_over_the_judgments_that_changes_the_rows_is_refused() -> None:
    run = pl.DataFrame({"query": [1, 1], "doc": ["a", "b"], "score": [0.5, 0.2]})
    qrels = pl.DataFrame({"query": [1, 1, 1], "doc": ["a", "b", "c"], "relevance": [1, 0, 2]})
    with pytest.raises(pl.exceptions.ShapeError, match=r"^relevance expression .* of qrels it gives"):
        run.rank_metrics.ndcg(doc="doc", qrels=qrels, relevance=pl.col("relevance").head(2))


def test_aggregate_and_window_expression_inputs_stay_accepted(engine: Engine) -> None:
    """An aggregation broadcasts its one value to every row; a window gives one value per row."""
    frame = expression_frame()
    centred = (pl.col("a") - pl.col("a").mean()).abs()
    by_model = pl.col("a") - pl.col("a").median().over("model")
    got = engine(frame, "ndcg", k=[1, 2], score=centred, relevance="label", weight=pl.col("w").max().over("query"))
    expected = frame.with_columns(s=centred, m=pl.col("w").max().over("query")).rank_metrics.ndcg(
        k=[1, 2], score="s", relevance="label", weight="m"
    )
    assert_same(got, expected.rename({"m": "w"}))
    got = engine(frame, "average_precision", score=by_model, relevance=pl.col("label") > pl.col("label").mean())
    precomputed = frame.with_columns(s=by_model, r=pl.col("label") > pl.col("label").mean())
    expected = precomputed.rank_metrics.average_precision(score="s", relevance="r")
    assert_same(got, expected)


# --- regression: judgments joined in without losing the run's row order ---------------------------------


@pytest.mark.parametrize("ties", ["input", "reverse"])
def test_order_reading_tie_modes_with_qrels_read_the_run_order(engine: Engine, ties: str) -> None:
    """ties='input' / 'reverse' rank tied rows by the run's row order, also when the relevance comes from
    qrels.  The oracle joins the judgments in run order and evaluates without qrels (for reciprocal rank the
    two agree: no judged-document count enters it).  Large enough that a parallel join deals rows out of order
    (it did before the join kept the left order: a different answer on every call)."""
    rng = np.random.default_rng(0)
    n_queries, per_query = 2_000, 100
    query = np.repeat(np.arange(n_queries), per_query)
    doc = rng.permutation(len(query))
    run = pl.DataFrame({"query": query, "doc": doc, "score": np.zeros(len(query))})
    qrels = pl.DataFrame({"query": query, "doc": doc, "relevance": rng.integers(0, 2, len(query))}).sample(
        fraction=1.0, shuffle=True, seed=1
    )
    in_run_order = run.join(qrels, on=["query", "doc"], how="left", maintain_order="left")
    expected = in_run_order.rank_metrics.reciprocal_rank(ties=ties, k=[None, 5])
    got = engine(run, "reciprocal_rank", ties=ties, k=[None, 5], doc="doc", qrels=qrels)
    assert_same(got, expected)


# --- errors about by ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"by": "nope"}, pl.exceptions.ColumnNotFoundError, r"^by column 'nope' not found in the frame"),
        ({"by": ["model", "model"]}, ValueError, r"`by` lists column 'model' twice"),
        ({"by": "query"}, ValueError, r"column 'query' is both a `by` and a `query` column"),
        ({"by": ["model", 3]}, TypeError, r"`by` must be a column name \(str\) or a non-empty list of them, or None"),
        ({"by": []}, TypeError, r"`by` must be a column name"),
    ],
)
def test_bad_by_arguments_raise_when_the_method_is_called(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        two_models().lazy().rank_metrics.ndcg(**options)  # raises before any collect


def test_mean_of_the_per_query_frame_finds_the_metrics_itself(engine: Engine) -> None:
    per_query = engine(two_models(), "ndcg", by=["model", "locale"], k=[1, None])
    means = lodestar_polars.mean(per_query, by=["model", "locale"])
    assert isinstance(means, pl.DataFrame)
    assert_same(means, engine(two_models(), "ndcg_mean", by=["model", "locale"], k=[1, None]))


def mean_input() -> pl.DataFrame:
    return pl.DataFrame({"model": ["a", "a", "b"], "query": [1, 2, 3], "ndcg": [0.5, 0.2, 0.9], "w": [1.0, 2.0, 1.0]})


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("bad", [None, float("nan"), float("inf")])
def test_mean_refuses_a_bad_weight_as_the_methods_do(lazy: bool, bad: float | None) -> None:
    """Before: a null weight was left out of the mean but counted in `queries` (3 queries, weight_sum 2.0)."""
    frame = mean_input().with_columns(w=pl.Series([1.0, bad, 1.0]))
    methods_message = r"weight column 'w' has 1 null, NaN or infinite value\(s\)"
    run = pl.DataFrame({"query": [1, 2, 3], "relevance": [1, 1, 1], "score": [1.0, 1.0, 1.0], "w": frame["w"]})
    with pytest.raises(ValueError, match=methods_message):
        run.rank_metrics.ndcg_mean(weight="w")
    per_query = frame.lazy() if lazy else frame
    with pytest.raises(ValueError, match=methods_message + r"\.$"):
        lodestar_polars.mean(per_query, weight="w").lazy().collect()
    with pytest.raises(ValueError, match=methods_message + r", the first in group model='a'\.$"):
        lodestar_polars.mean(per_query, weight="w", by="model").lazy().collect()


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_mean_names_a_nan_or_infinite_metric_value(bad: float) -> None:
    frame = mean_input().with_columns(ndcg=pl.Series([0.5, 0.2, bad]))
    with pytest.raises(ValueError, match=r"^metric column 'ndcg' has 1 NaN or infinite value\(s\)\.$"):
        lodestar_polars.mean(frame)
    with pytest.raises(
        ValueError, match=r"^metric column 'ndcg' has 1 NaN or infinite value\(s\), the first in group model='b'"
    ):
        lodestar_polars.mean(frame.lazy(), by="model", weight="w").collect()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"metrics": ["ndcg", "ndcg"]}, r"^`metrics` lists column 'ndcg' twice"),
        ({"by": ["model", "model"]}, r"^`by` lists column 'model' twice"),
        ({"by": "ndcg", "metrics": ["ndcg"]}, r"^column 'ndcg' is both a `by` column and a metric"),
        ({"by": ["model", "ndcg"], "metrics": "ndcg"}, r"^column 'ndcg' is both a `by` column and a metric"),
    ],
)
def test_mean_refuses_a_column_named_twice(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        lodestar_polars.mean(mean_input().lazy(), **options)


def test_mean_never_averages_the_weight_column_as_a_metric() -> None:
    """A weight column named like a metric ("p") is the weight, not a metric, when metrics=None."""
    frame = mean_input().rename({"w": "p"})
    got = lodestar_polars.mean(frame, weight="p")
    # by hand: (1 * 0.5 + 2 * 0.2 + 1 * 0.9) / (1 + 2 + 1) = 1.8 / 4
    assert got.columns == ["ndcg", "queries", "weight_sum"]
    assert got.row(0) == pytest.approx((0.45, 3, 4.0))


def test_an_empty_frame_keeps_the_by_and_query_dtypes(engine: Engine) -> None:
    frame = pl.DataFrame(schema={"model": pl.Categorical, "query": pl.Int32, "relevance": pl.Int8, "score": pl.Float32})
    result = engine(frame, "ndcg", by="model", k=3)
    assert result.schema == pl.Schema({"model": pl.Categorical(), "query": pl.Int32, "ndcg@3": pl.Float64})
    assert result.height == 0
