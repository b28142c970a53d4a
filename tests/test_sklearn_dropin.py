"""`lodestar_polars.sklearn` against scikit-learn itself: documented values, options, errors, and properties."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pytest
import scipy.sparse
import sklearn.metrics
from hypothesis import given, settings
from hypothesis import strategies as st

from lodestar_polars import sklearn as dropin

RELEVANCE = np.asarray([[10, 0, 0, 1, 5]])
SCORES = np.asarray([[0.1, 0.2, 0.3, 4, 70]])
TIED = np.asarray([[1, 0, 0, 0, 1]])
FAST = settings(max_examples=100, deadline=None)


def both(name: str, *args: Any, **kwargs: Any) -> tuple[float, float]:
    """(ours, scikit-learn's) for the same call."""
    ours: Callable[..., float] = getattr(dropin, name)
    theirs: Callable[..., float] = getattr(sklearn.metrics, name)
    return ours(*args, **kwargs), theirs(*args, **kwargs)


def assert_same(name: str, *args: Any, **kwargs: Any) -> None:
    ours, theirs = both(name, *args, **kwargs)
    assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-12)


# --- scikit-learn's docstring examples -------------------------------------------------------------------


def test_dcg_docstring_examples() -> None:
    assert dropin.dcg_score(RELEVANCE, SCORES) == pytest.approx(9.49, abs=0.01)
    assert dropin.dcg_score(RELEVANCE, SCORES, k=2) == pytest.approx(5.63, abs=0.01)
    assert dropin.dcg_score(RELEVANCE, TIED, k=1) == 7.5
    assert dropin.dcg_score(RELEVANCE, TIED, k=1, ignore_ties=True) == 5.0
    for kwargs in ({}, {"k": 2}):
        assert_same("dcg_score", RELEVANCE, SCORES, **kwargs)


def test_ndcg_docstring_examples() -> None:
    other = np.asarray([[0.05, 1.1, 1.0, 0.5, 0.0]])
    assert dropin.ndcg_score(RELEVANCE, SCORES) == pytest.approx(0.69, abs=0.01)
    assert dropin.ndcg_score(RELEVANCE, other) == pytest.approx(0.49, abs=0.01)
    assert dropin.ndcg_score(RELEVANCE, other, k=4) == pytest.approx(0.35, abs=0.01)
    assert dropin.ndcg_score(RELEVANCE, RELEVANCE, k=4) == pytest.approx(1.0, abs=1e-15)
    assert dropin.ndcg_score(RELEVANCE, TIED, k=1) == 0.75
    assert dropin.ndcg_score(RELEVANCE, TIED, k=1, ignore_ties=True) == 0.5
    for scores, kwargs in ((SCORES, {}), (other, {}), (other, {"k": 4}), (RELEVANCE, {"k": 4})):
        assert_same("ndcg_score", RELEVANCE, scores, **kwargs)


def test_known_values() -> None:
    assert dropin.ndcg_score([[3, 2, 1, 0]], [[0.9, 0.5, 0.4, 0.1]]) == 1.0
    assert dropin.ndcg_score([[3, 2, 1, 0]], [[0.1, 0.4, 0.5, 0.9]]) == pytest.approx(0.6138273133441086, rel=1e-12)
    relevance, scores = [[3, 2, 3, 0, 1, 2]], [[0.9, 0.8, 0.7, 0.6, 0.5, 0.4]]
    for k, expected in ((3, 0.9777813616305048), (5, 0.8610441760375026), (10, 0.9608081943360616)):
        assert dropin.ndcg_score(relevance, scores, k=k) == pytest.approx(expected, rel=1e-12)


# --- options ---------------------------------------------------------------------------------------------


def test_returns_a_python_float() -> None:
    assert type(dropin.ndcg_score(RELEVANCE, SCORES)) is float
    assert type(dropin.dcg_score(RELEVANCE, SCORES)) is float


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 6, 100])
def test_k_cuts_the_ranking(k: int) -> None:
    scores = [[0.3, 0.9, 0.3, 0.1, 0.5], [1, 1, 1, 0, 0]]
    relevance = [[3, 0, 2, 1, 0], [0, 1, 2, 0, 4]]
    assert_same("ndcg_score", relevance, scores, k=k)
    assert_same("dcg_score", relevance, scores, k=k)


def test_k_past_the_list_is_the_whole_list() -> None:
    assert dropin.ndcg_score(RELEVANCE, SCORES, k=50) == dropin.ndcg_score(RELEVANCE, SCORES)


def test_k_accepts_numpy_integers_and_true_like_sklearn() -> None:
    assert dropin.ndcg_score(RELEVANCE, SCORES, k=np.int64(2)) == dropin.ndcg_score(RELEVANCE, SCORES, k=2)
    assert_same("ndcg_score", RELEVANCE, SCORES, k=True)  # bool is an Integral for scikit-learn


@pytest.mark.parametrize("log_base", [2, 10, math.e, 1.5, 0.5, np.float64(3.0)])
def test_log_base_sets_the_discount(log_base: float) -> None:
    assert_same("dcg_score", RELEVANCE, SCORES, log_base=log_base)
    assert_same("dcg_score", RELEVANCE, TIED, log_base=log_base, k=2)


def test_log_base_1_gives_zero_like_sklearn() -> None:
    # scikit-learn divides by log(1) = 0, so every discount is 1 / inf = 0
    with pytest.warns(RuntimeWarning):
        assert sklearn.metrics.dcg_score(RELEVANCE, SCORES, log_base=1) == 0.0
    assert dropin.dcg_score(RELEVANCE, SCORES, log_base=1) == 0.0


def test_ndcg_does_not_depend_on_log_base() -> None:
    dcg_2 = dropin.dcg_score(RELEVANCE, SCORES, log_base=2) / dropin.dcg_score(RELEVANCE, RELEVANCE, log_base=2)
    dcg_10 = dropin.dcg_score(RELEVANCE, SCORES, log_base=10) / dropin.dcg_score(RELEVANCE, RELEVANCE, log_base=10)
    assert dcg_2 == pytest.approx(dcg_10, rel=1e-12)
    assert dropin.ndcg_score(RELEVANCE, SCORES) == pytest.approx(dcg_2, rel=1e-12)


def test_sample_weight_is_a_weighted_mean_over_queries() -> None:
    relevance = [[3, 0, 1], [0, 2, 0], [1, 1, 0]]
    scores = [[0.1, 0.5, 0.9], [0.2, 0.3, 0.1], [0.5, 0.5, 0.5]]
    per_query = [dropin.ndcg_score([r], [s]) for r, s in zip(relevance, scores, strict=True)]
    weights = [1.0, 3.0, 0.5]
    expected = float(np.dot(per_query, weights) / sum(weights))
    assert dropin.ndcg_score(relevance, scores, sample_weight=weights) == pytest.approx(expected, rel=1e-12)
    assert_same("ndcg_score", relevance, scores, sample_weight=weights)
    assert_same("dcg_score", relevance, scores, sample_weight=weights, k=2)


def test_negative_sample_weights_are_accepted() -> None:
    relevance, scores = [[1, 0, 2], [2, 1, 0]], [[0.3, 0.2, 0.1], [0.1, 0.2, 0.3]]
    assert_same("ndcg_score", relevance, scores, sample_weight=[2, -1])
    assert_same("dcg_score", relevance, scores, sample_weight=[-0.5, 3.0])


@pytest.mark.parametrize("weights", [[1, -1], [0, 0], [0.5, -0.5]])
@pytest.mark.parametrize("name", ["ndcg_score", "dcg_score"])
def test_weights_summing_to_zero_raise_zero_division(name: str, weights: list[float]) -> None:
    arguments = ([[1, 0, 2], [2, 1, 0]], [[0.3, 0.2, 0.1], [0.1, 0.2, 0.3]])
    with pytest.raises(ZeroDivisionError) as theirs:
        getattr(sklearn.metrics, name)(*arguments, sample_weight=weights)
    with pytest.raises(ZeroDivisionError) as ours:
        getattr(dropin, name)(*arguments, sample_weight=weights)
    assert str(ours.value) == str(theirs.value) == "Weights sum to zero, can't be normalized"


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("weights", [[math.nan, 1.0], [math.inf, 1.0], [math.inf, -math.inf]])
def test_a_non_finite_weight_gives_nan_like_numpy(weights: list[float]) -> None:
    arguments = ([[1, 0, 2], [2, 1, 0]], [[0.3, 0.2, 0.1], [0.1, 0.2, 0.3]])
    with np.errstate(invalid="ignore"):
        assert math.isnan(sklearn.metrics.ndcg_score(*arguments, sample_weight=weights))
    assert math.isnan(dropin.ndcg_score(*arguments, sample_weight=weights))


def test_a_query_without_relevant_documents_scores_zero_and_counts() -> None:
    relevance, scores = [[0, 0, 0], [1, 0, 0]], [[0.3, 0.2, 0.1], [0.3, 0.2, 0.1]]
    assert dropin.ndcg_score(relevance, scores) == 0.5
    assert_same("ndcg_score", relevance, scores)


def test_ties_average_the_gain_of_the_tied_block() -> None:
    # (10 + 5) / 2 at position 1: the tied block straddling k gets partial credit
    assert dropin.dcg_score(RELEVANCE, TIED, k=1) == 7.5
    assert dropin.ndcg_score(RELEVANCE, TIED, k=1) == 0.75
    for k in (None, 1, 2, 3, 4):
        assert_same("ndcg_score", RELEVANCE, TIED, k=k)


def test_negative_zero_ties_with_zero() -> None:
    assert dropin.dcg_score([[1, 0, 3]], [[0.0, -0.0, 0.0]]) == dropin.dcg_score([[1, 0, 3]], [[0, 0, 0]])
    assert_same("dcg_score", [[1, 0, 3]], [[0.0, -0.0, 0.0]])


def test_ignore_ties_puts_the_later_column_first_among_equal_scores() -> None:
    # scores tie at 1 for columns 0 and 4: column 4 (relevance 5) comes first
    assert dropin.dcg_score(RELEVANCE, TIED, k=1, ignore_ties=True) == 5.0
    assert dropin.dcg_score([[5, 0, 10]], [[1, 0, 1]], k=1, ignore_ties=True) == 10.0


def test_ignore_ties_equals_averaging_without_ties() -> None:
    for k in (None, 1, 3):
        assert dropin.ndcg_score(RELEVANCE, SCORES, k=k, ignore_ties=True) == pytest.approx(
            dropin.ndcg_score(RELEVANCE, SCORES, k=k), rel=1e-12
        )


def test_dcg_accepts_negative_relevance() -> None:
    assert_same("dcg_score", [[-1, 2, 0]], [[0.9, 0.5, 0.1]])
    assert_same("dcg_score", [[-1, 2, 0]], [[0.9, 0.5, 0.9]])


@pytest.mark.parametrize(
    ("relevance", "scores"),
    [
        ([[1, 0, 2], [0, 3, 1]], [[1, 2, 3], [3, 2, 1]]),  # lists of ints
        (np.array([[1, 0, 2], [0, 3, 1]], dtype=np.float32), np.array([[0.5, 0.25, 0.5], [1, 2, 3]], np.float32)),
        (np.array([[True, False, True]]), np.array([[0.2, 0.1, 0.3]])),  # multilabel-indicator
        (np.array([[1, 0, 2]], dtype=object), np.array([[1, 2, 3]], dtype=np.uint8)),
        (
            pl.DataFrame({"a": [1, 0], "b": [2, 2], "c": [0, 1]}),
            pl.DataFrame({"a": [0.1, 0.3], "b": [0.3, 0.1], "c": [1.0, 0.0]}),
        ),
    ],
    ids=["lists", "float32", "bool", "object-uint8", "polars"],
)
def test_array_likes_of_any_numeric_dtype(relevance: Any, scores: Any) -> None:
    assert_same("ndcg_score", relevance, scores)
    assert_same("dcg_score", relevance, scores, k=2)


# --- errors: same type and message as scikit-learn, in the same order -------------------------------------

ROW = [[1, 0, 2]]
ERRORS: list[tuple[str, str, tuple[Any, ...], dict[str, Any]]] = [
    ("k-zero", "ndcg_score", (ROW, ROW), {"k": 0}),
    ("k-float", "ndcg_score", (ROW, ROW), {"k": 1.5}),
    ("k-str", "dcg_score", (ROW, ROW), {"k": "3"}),
    ("k-before-log_base", "dcg_score", (ROW, ROW), {"k": 0, "log_base": 0}),
    ("log_base-zero", "dcg_score", (ROW, ROW), {"log_base": 0}),
    ("log_base-negative", "dcg_score", (ROW, ROW), {"log_base": -2.0}),
    ("log_base-inf", "dcg_score", (ROW, ROW), {"log_base": math.inf}),
    ("log_base-nan", "dcg_score", (ROW, ROW), {"log_base": math.nan}),
    ("log_base-str", "dcg_score", (ROW, ROW), {"log_base": "2"}),
    ("y_true-str", "ndcg_score", ("abc", ROW), {}),
    ("y_true-None", "ndcg_score", (None, ROW), {}),
    ("y_score-scalar", "dcg_score", (ROW, 3.0), {}),
    ("sample_weight-str", "ndcg_score", (ROW, ROW), {"sample_weight": "w"}),
    ("ignore_ties-int", "ndcg_score", (ROW, ROW), {"ignore_ties": 1}),
    ("nan-y_true", "ndcg_score", ([[math.nan, 0, 1]], ROW), {}),
    ("nan-y_score", "dcg_score", (ROW, [[math.nan, 0, 1]]), {}),
    ("nan-before-inf", "ndcg_score", (ROW, [[math.inf, math.nan, 1]]), {}),
    ("inf-y_score", "ndcg_score", (ROW, [[math.inf, 0, 1]]), {}),
    ("inf-float32", "ndcg_score", (ROW, np.array([[np.inf, 0, 1]], dtype=np.float32)), {}),
    ("nan-before-length", "ndcg_score", ([[math.nan, 0, 1], [1, 0, 0]], ROW), {}),
    ("inconsistent", "ndcg_score", ([[1, 0], [0, 1]], [[1, 0]]), {}),
    ("inconsistent-weights", "dcg_score", ([[1, 0], [0, 1]], [[1, 0], [0, 1]]), {"sample_weight": [1, 2, 3]}),
    ("negative", "ndcg_score", ([[-1, 0, 1]], ROW), {}),
    ("negative-1d", "ndcg_score", ([-1, 0, 1], [1, 0, 2]), {}),
    ("negative-before-one-document", "ndcg_score", ([[-1], [0]], [[1], [0]]), {}),
    ("one-document", "ndcg_score", ([[1], [0]], [[1], [0]]), {}),
    ("dcg-one-document-binary", "dcg_score", ([[1], [0]], [[1], [0]]), {}),
    ("dcg-one-document-multiclass", "dcg_score", ([[1], [2], [3]], [[1], [0], [2]]), {}),
    ("dcg-one-document-continuous", "dcg_score", ([[1.5], [2.0]], [[1], [0]]), {}),
    ("1d-binary", "ndcg_score", ([1, 0], [1, 0]), {}),
    ("1d-multiclass", "ndcg_score", ([3, 2, 1, 0], [1, 0, 2, 3]), {}),
    ("1d-continuous", "dcg_score", ([0.5, 0.2], [1, 0]), {}),
    ("empty", "ndcg_score", (np.zeros((0, 5)), np.zeros((0, 5))), {}),
    ("empty-list", "dcg_score", ([], []), {}),
    ("no-columns", "ndcg_score", (np.zeros((3, 0)), np.zeros((3, 0))), {}),
    ("3d", "ndcg_score", (np.zeros((2, 2, 2)), np.zeros((2, 2, 2))), {}),
    ("0d-array", "dcg_score", (np.array(1.0), ROW), {}),
    ("strings", "ndcg_score", ([["a", "b"]], [[1, 0]]), {}),
    ("complex", "ndcg_score", (np.array([[1j, 0]]), [[1, 0]]), {}),
    ("ragged", "ndcg_score", ([[1, 0], [1]], [[1, 0], [1]]), {}),
    ("weights-2d", "ndcg_score", ([[1, 0], [0, 1]], [[1, 0], [1, 0]]), {"sample_weight": [[1], [1]]}),
]


@pytest.mark.parametrize(("name", "args", "kwargs"), [case[1:] for case in ERRORS], ids=[c[0] for c in ERRORS])
def test_errors_match_sklearn(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    with pytest.raises(Exception) as theirs:  # the oracle decides the type
        getattr(sklearn.metrics, name)(*args, **kwargs)
    with pytest.raises(Exception) as ours:
        getattr(dropin, name)(*args, **kwargs)
    assert type(ours.value).__name__ == type(theirs.value).__name__
    for builtin in (ValueError, TypeError, ZeroDivisionError):
        assert isinstance(ours.value, builtin) == isinstance(theirs.value, builtin)
    assert str(ours.value) == str(theirs.value)


# --- hostile inputs: pandas nullable data, scipy sparse, boolean scores, non-numeric weights ----------------
# Each call goes to scikit-learn and to the drop-in: both raise the same exception type and message, or both
# return the same number (a nullable frame without pd.NA, a boolean score without ties under ignore_ties).

Y2 = [[3, 0, 1], [0, 2, 1]]
S2 = [[0.1, 0.5, 0.9], [0.3, 0.2, 0.1]]


def _nullable(dtype: str, rows: list[list[Any]]) -> pd.DataFrame:
    return pd.DataFrame({f"c{j}": pd.array([row[j] for row in rows], dtype=dtype) for j in range(len(rows[0]))})


HOSTILE: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    # pandas nullable arrays holding pd.NA (scikit-learn turns them into float64 NaN first)
    ("Int64-NA-y_true", (_nullable("Int64", [[3, pd.NA, 1], [0, 2, 1]]), S2), {}),
    ("Float64-NA-y_true", (_nullable("Float64", [[3.0, 0.0, pd.NA], [0.0, 2.0, 1.0]]), S2), {}),
    ("Float64-NA-y_score", (Y2, _nullable("Float64", [[0.1, pd.NA, 0.9], [0.3, 0.2, 0.1]])), {}),
    ("boolean-NA-y_score", (Y2, _nullable("boolean", [[True, pd.NA, False], [True, False, True]])), {}),
    ("Int64-NA-series", (pd.Series(pd.array([3, pd.NA, 1], dtype="Int64")), [0.1, 0.5, 0.9]), {}),
    ("Int64-NA-array", (pd.array([3, pd.NA, 1], dtype="Int64"), [0.1, 0.5, 0.9]), {}),
    ("Int64-NA-after-length", (_nullable("Int64", [[3, pd.NA, 1], [0, 2, 1]]), S2[:1]), {}),
    ("object-ndarray-with-NA", (np.array([[3, pd.NA, 1], [0, 2, 1]], dtype=object), S2), {}),
    ("list-with-NA", ([[3, pd.NA, 1], [0, 2, 1]], S2), {}),
    ("object-frame-with-None", (pd.DataFrame([[3, None, 1], [0, 2, 1]], dtype=object), S2), {}),
    ("Int64-no-NA", (_nullable("Int64", Y2), S2), {}),
    ("Float64-no-NA-y_score", (Y2, _nullable("Float64", S2)), {}),
    ("boolean-no-NA-y_score", (Y2, _nullable("boolean", [[True, False, True], [False, False, True]])), {}),
    (
        "mixed-nullable-and-numpy",
        (pd.DataFrame({"a": pd.array([3, 0], dtype="Int64"), "b": [0.0, 2.0]}), [[0.1, 0.5], [0.3, 0.2]]),
        {},
    ),
    # scipy sparse input is not an array-like for scikit-learn's parameter check
    ("csr-matrix-y_true", (scipy.sparse.csr_matrix(Y2), S2), {}),
    ("csr-array-y_score", (Y2, scipy.sparse.csr_array(S2)), {}),
    ("coo-y_score", (Y2, scipy.sparse.coo_matrix(S2)), {}),
    ("csr-sample_weight", (Y2, S2), {"sample_weight": scipy.sparse.csr_matrix([[1.0, 2.0]])}),
    ("pandas-all-sparse-y_true", (pd.DataFrame(Y2).astype(pd.SparseDtype("int64", 0)), S2), {}),
    ("pandas-partly-sparse-y_score", (Y2, pd.DataFrame(S2).astype({0: pd.SparseDtype("float64", 0.0)})), {}),
    ("sparse-y_true-before-k", (scipy.sparse.csr_matrix(Y2), S2), {"k": 0}),
    # boolean y_score: scikit-learn's tie averaging negates it, which numpy refuses
    ("bool-y_score", (Y2, np.array([[True, False, True], [False, True, True]])), {}),
    ("numpy-bool-frame-y_score", (Y2, pd.DataFrame([[True, False, True], [False, True, True]])), {}),
    (
        "bool-y_score-with-bad-weights",
        (Y2, np.array([[True, False, True], [False, True, True]])),
        {"sample_weight": ["a", "b"]},
    ),
    ("bool-y_score-ignore_ties", ([[3, 0], [0, 2]], np.array([[True, False], [False, True]])), {"ignore_ties": True}),
    ("bool-y_true", (np.array([[True, False, True], [False, True, False]]), S2), {}),
    # non-numeric sample_weight: numpy's np.average decides
    ("weights-str", (Y2, S2), {"sample_weight": ["a", "b"]}),
    ("weights-numeric-str", (Y2, S2), {"sample_weight": ["1", "2"]}),
    ("weights-bytes-array", (Y2, S2), {"sample_weight": np.array([b"1", b"2"])}),
    ("weights-None-entry", (Y2, S2), {"sample_weight": [1.0, None]}),
    ("weights-objects", (Y2, S2), {"sample_weight": np.array([object(), 1], dtype=object)}),
    ("weights-dict", (Y2, S2), {"sample_weight": {"a": 1.0, "b": 2.0}}),
    ("weights-str-series", (Y2, S2), {"sample_weight": pd.Series(["1", "2"], dtype="string")}),
    ("weights-str-wrong-length", (Y2, S2), {"sample_weight": ["a", "b", "c"]}),
    ("weights-Float64-NA", (Y2, S2), {"sample_weight": pd.array([1.0, pd.NA], dtype="Float64")}),
    ("weights-Int64", (Y2, S2), {"sample_weight": pd.array([1, 3], dtype="Int64")}),
    ("weights-bool", (Y2, S2), {"sample_weight": [True, False]}),
    ("weights-zero-bool", (Y2, S2), {"sample_weight": [False, False]}),
]


def _outcome(function: Callable[..., float], args: tuple[Any, ...], kwargs: dict[str, Any]) -> object:
    """The returned float, or (exception type name, ValueError?, TypeError?, ZeroDivisionError?, message)."""
    try:
        with np.errstate(all="ignore"):
            return function(*args, **kwargs)
    except Exception as error:  # the oracle decides the type
        kinds = tuple(isinstance(error, builtin) for builtin in (ValueError, TypeError, ZeroDivisionError))
        return (type(error).__name__, *kinds, str(error))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.filterwarnings("ignore:pandas.DataFrame with sparse columns:UserWarning")
@pytest.mark.parametrize("name", ["ndcg_score", "dcg_score"])
@pytest.mark.parametrize(("args", "kwargs"), [case[1:] for case in HOSTILE], ids=[case[0] for case in HOSTILE])
def test_hostile_inputs_match_sklearn(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    theirs = _outcome(getattr(sklearn.metrics, name), args, kwargs)
    ours = _outcome(getattr(dropin, name), args, kwargs)
    if isinstance(theirs, float):
        assert isinstance(ours, float), ours
        assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-12, nan_ok=True)
    else:
        assert ours == theirs


@pytest.mark.parametrize("module", [sklearn.metrics, dropin], ids=["sklearn", "dropin"])
def test_a_partly_sparse_frame_warns_and_is_densified(module: Any) -> None:
    scores = pd.DataFrame(S2).astype({0: pd.SparseDtype("float64", 0.0)})
    with pytest.warns(UserWarning, match=r"^pandas\.DataFrame with sparse columns found\.It will be converted"):
        assert module.ndcg_score(Y2, scores) == pytest.approx(sklearn.metrics.ndcg_score(Y2, S2), rel=1e-12)


def test_complex_weights_are_refused() -> None:
    # scikit-learn returns the real part of a complex weighted mean (numpy's ComplexWarning aside); refused here
    arguments = (Y2, S2)
    with pytest.warns(Warning):
        assert isinstance(sklearn.metrics.ndcg_score(*arguments, sample_weight=[1 + 1j, 2]), float)
    with pytest.raises(TypeError, match=r"^sample_weight must be real numbers, got complex values\.$"):
        dropin.ndcg_score(*arguments, sample_weight=[1 + 1j, 2])


def test_a_list_holding_none_is_refused() -> None:
    # scikit-learn keeps such a list as an object array and fails comparing None later (a TypeError whose
    # text depends on where); here None is missing data: the NaN error
    with pytest.raises(TypeError, match="NoneType"):
        sklearn.metrics.ndcg_score([[3, None, 1], [0, 2, 1]], S2)
    with pytest.raises(ValueError, match=r"^Input contains NaN\.$"):
        dropin.ndcg_score([[3, None, 1], [0, 2, 1]], S2)


def test_invalid_parameter_error_is_a_value_and_type_error() -> None:
    with pytest.raises(
        ValueError,
        match=r"^The 'k' parameter of ndcg_score must be an int in the range \[1, inf\) or None\. Got 0 instead\.$",
    ):
        dropin.ndcg_score(ROW, ROW, k=0)
    with pytest.raises(TypeError, match="log_base"):
        dropin.dcg_score(ROW, ROW, log_base=0)


def test_mismatched_columns_raise_a_value_error() -> None:
    # scikit-learn fails inside numpy ("array is not broadcastable to correct shape"); a clearer message here
    with pytest.raises(ValueError, match=r"^array is not broadcastable"):
        sklearn.metrics.ndcg_score([[1, 0, 2]], [[1, 0]])
    with pytest.raises(ValueError, match=r"y_true and y_score must have the same shape, got \(1, 3\) and \(1, 2\)"):
        dropin.ndcg_score([[1, 0, 2]], [[1, 0]])


# --- properties against scikit-learn ---------------------------------------------------------------------


@st.composite
def problems(draw: st.DrawFn, *, tied: bool) -> dict[str, Any]:
    """Dense (queries x documents) relevance and scores, a cut-off and weights, generated from a seed."""
    n_queries, n_documents = draw(st.integers(1, 30)), draw(st.integers(2, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    shape = (n_queries, n_documents)
    if draw(st.booleans()):
        relevance = rng.integers(0, draw(st.integers(1, 5)), size=shape).astype(np.float64)
        relevance[rng.random(n_queries) < 0.2] = 0.0  # queries without a relevant document
    else:
        relevance = np.round(rng.uniform(0, 4, size=shape), 3)
    if not tied:
        distinct = rng.permuted(np.tile(np.arange(n_documents), (n_queries, 1)), axis=1)
        scores = distinct - 7 if draw(st.booleans()) else distinct * 0.37 - 3.0 + rng.normal(0, 0.01, shape)
    else:
        levels = draw(st.integers(1, 5))
        kind = draw(st.sampled_from(["int", "float", "signed-zero"]))
        if kind == "int":
            scores = rng.integers(0, levels, size=shape)
        elif kind == "float":
            scores = rng.choice(np.linspace(-1.0, 1.0, levels) * 0.1, size=shape)
        else:
            scores = rng.choice(np.array([-0.0, 0.0, 0.5, -1.25]), size=shape)
    weights = None
    if draw(st.booleans()):
        weights = rng.uniform(0.1, 10.0, n_queries) if draw(st.booleans()) else rng.integers(1, 6, n_queries)
    k = draw(st.none() | st.integers(1, 50))
    return {"y_true": relevance, "y_score": scores, "k": k, "sample_weight": weights}


@FAST
@given(problems(tied=False))
def test_matches_sklearn_without_ties(problem: dict[str, Any]) -> None:
    assert_same("ndcg_score", **problem)
    assert_same("dcg_score", **problem)
    assert_same("ndcg_score", **problem, ignore_ties=True)
    assert_same("dcg_score", **problem, ignore_ties=True)


@FAST
@given(problems(tied=True), st.sampled_from([2, 10, math.e, 0.5]))
def test_matches_sklearn_with_ties(problem: dict[str, Any], log_base: float) -> None:
    assert_same("ndcg_score", **problem)
    assert_same("dcg_score", **problem, log_base=log_base)


def descending_index_reference(
    y_true: np.ndarray, y_score: np.ndarray, k: int | None, sample_weight: Any, *, normalise: bool, log_base: float
) -> float:
    """Plain-Python DCG / NDCG with ties broken by the later column first (scikit-learn's intended order)."""
    per_query = []
    for relevance, scores in zip(y_true.tolist(), y_score.tolist(), strict=True):
        columns = sorted(range(len(scores)), key=lambda j: (-scores[j], -j))
        cut = len(columns) if k is None else min(k, len(columns))
        discounts = [math.log(log_base) / math.log(i + 2) for i in range(cut)]
        dcg = sum(relevance[j] * d for j, d in zip(columns[:cut], discounts, strict=True))
        if normalise:
            ideal = sum(r * d for r, d in zip(sorted(relevance, reverse=True)[:cut], discounts, strict=True))
            dcg = dcg / ideal if ideal else 0.0
        per_query.append(dcg)
    weights = np.ones(len(per_query)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    return float(np.dot(per_query, weights) / weights.sum())


@FAST
@given(problems(tied=True), st.sampled_from([2, 10, 0.5]))
def test_ignore_ties_on_tied_scores_orders_by_descending_index(problem: dict[str, Any], log_base: float) -> None:
    # scikit-learn's argsort is not stable, so the oracle here is the order it documents
    expected_ndcg = descending_index_reference(**problem, normalise=True, log_base=2.0)
    expected_dcg = descending_index_reference(**problem, normalise=False, log_base=log_base)
    assert dropin.ndcg_score(**problem, ignore_ties=True) == pytest.approx(expected_ndcg, rel=1e-12, abs=1e-12)
    assert dropin.dcg_score(**problem, ignore_ties=True, log_base=log_base) == pytest.approx(
        expected_dcg, rel=1e-12, abs=1e-12
    )
