"""scikit-learn's `ndcg_score` and `dcg_score`, computed by the Polars plan.

Same signatures, results, exception types and messages as scikit-learn 1.9.  The shell does only what
scikit-learn does to the arrays before ranking anything (parameter checks, `check_array`,
`check_consistent_length`, the target-type check), in scikit-learn's order; then it lays the dense
(n_queries, n_documents) arrays out as a long frame, one row per (query, document), and asks the plan for
the weighted mean.  `ignore_ties=True` becomes `ties="reverse"`: scikit-learn orders by
`argsort(y_score)[::-1]`, whose intended order among equal scores is the later column first (its numpy
sort is not stable, so scikit-learn itself may differ on tied scores).

The checks follow scikit-learn's own code: pandas nullable and boolean data are converted as `check_array`
converts them (pd.NA becomes NaN, so "Input contains NaN."), scipy sparse input is not an array-like, a
boolean `y_score` gets numpy's TypeError for negating booleans (scikit-learn's tie averaging negates the
scores; `ignore_ties=True` accepts it), and the weights go through numpy's own `np.average` first, so weights
numpy cannot add raise numpy's error.  Two deliberate differences: complex weights raise a TypeError
(scikit-learn returns the real part of a complex mean), and a plain list holding None raises "Input contains
NaN." (scikit-learn fails later, comparing None).

>>> import numpy as np
>>> from lodestar_polars.sklearn import dcg_score, ndcg_score
>>> true_relevance = np.asarray([[10, 0, 0, 1, 5]])
>>> scores = np.asarray([[0.1, 0.2, 0.3, 4, 70]])
>>> round(dcg_score(true_relevance, scores), 3)
9.499
>>> round(ndcg_score(true_relevance, scores), 3)
0.696
>>> tied = np.asarray([[1, 0, 0, 0, 1]])
>>> ndcg_score(true_relevance, tied, k=1)
0.75
>>> ndcg_score(true_relevance, tied, k=1, ignore_ties=True)
0.5
"""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Callable
from numbers import Integral, Real
from typing import Any, Literal

import numpy as np
import polars as pl
from numpy.typing import ArrayLike, NDArray

from .namespace import rank_metrics

__all__ = ["InvalidParameterError", "dcg_score", "ndcg_score"]

_SUPPORTED_TARGETS = ("multilabel-indicator", "continuous-multioutput", "multiclass-multioutput")


class InvalidParameterError(ValueError, TypeError):
    """A parameter of the wrong type or out of range: like scikit-learn's, both a ValueError and a TypeError."""


def _is_sparse(value: object) -> bool:
    """scipy's `issparse`, without importing scipy: a sparse matrix exists only if scipy.sparse was imported."""
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and bool(sparse.issparse(value))


def _is_array_like(value: object) -> bool:
    """scikit-learn's "array-like" constraint: has a length, shape or `__array__`; not a scalar, not sparse."""
    if _is_sparse(value):
        return False
    has_length = hasattr(value, "__len__") or hasattr(value, "shape") or hasattr(value, "__array__")
    return has_length and not np.isscalar(value)


def _is_positive_int_or_none(value: object) -> bool:
    return value is None or (isinstance(value, Integral) and int(value) >= 1)


def _is_positive_finite_real(value: object) -> bool:
    return isinstance(value, Real) and 0.0 < float(value) < math.inf


_CONSTRAINTS: dict[str, tuple[str, Callable[[object], bool]]] = {
    "y_true": ("an array-like", _is_array_like),
    "y_score": ("an array-like", _is_array_like),
    "k": ("an int in the range [1, inf) or None", _is_positive_int_or_none),
    "log_base": ("a float in the range (0.0, inf)", _is_positive_finite_real),
    "sample_weight": ("an array-like or None", lambda value: value is None or _is_array_like(value)),
    "ignore_ties": ("an instance of 'bool' or an instance of 'numpy.bool'", lambda v: isinstance(v, (bool, np.bool_))),
}


def _check_parameters(caller: str, arguments: dict[str, object]) -> None:
    """scikit-learn's `validate_params`: the first failing argument, in signature order."""
    for name, value in arguments.items():
        description, is_valid = _CONSTRAINTS[name]
        if not is_valid(value):
            msg = f"The {name!r} parameter of {caller} must be {description}. Got {value!r} instead."
            raise InvalidParameterError(msg)


def _pandas_needs_early_conversion(pandas: Any, dtype: object) -> bool:
    """scikit-learn's `_pandas_dtype_needs_early_conversion`: bool, nullable integer and nullable float columns."""
    types = pandas.api.types
    if types.is_bool_dtype(dtype):
        return True
    if isinstance(dtype, pandas.SparseDtype) or not types.is_extension_array_dtype(dtype):
        return False
    return bool(types.is_float_dtype(dtype) or types.is_integer_dtype(dtype))


def _pandas_converted(value: Any) -> Any:
    """scikit-learn's early `astype` of pandas nullable and boolean data (pd.NA becomes NaN); else `value`.

    A DataFrame of numpy dtypes only goes to their common dtype (numpy bools stay bool), anything else
    (a nullable column, an object column) to float64; a Series or extension array of a nullable dtype to
    float64.  Without pandas imported, `value` cannot be a pandas object.
    """
    pandas = sys.modules.get("pandas")
    if pandas is None:
        return value
    if isinstance(value, pandas.DataFrame):
        dtypes = list(value.dtypes)
        if hasattr(value, "sparse") and all(isinstance(dtype, pandas.SparseDtype) for dtype in dtypes):
            # scikit-learn turns an all-sparse frame into a scipy sparse matrix, which it refuses here
            msg = (
                "Sparse data was passed, but dense data is required. "
                "Use '.toarray()' to convert to a dense numpy array."
            )
            raise TypeError(msg)
        if any(isinstance(dtype, pandas.SparseDtype) for dtype in dtypes):
            warnings.warn(
                "pandas.DataFrame with sparse columns found.It will be converted to a dense numpy array.",
                UserWarning,
                stacklevel=6,  # the caller of ndcg_score / dcg_score
            )
        if not any(_pandas_needs_early_conversion(pandas, dtype) for dtype in dtypes):
            return value
        common = np.result_type(*dtypes) if all(isinstance(dtype, np.dtype) for dtype in dtypes) else None
        return value.astype(np.float64 if common is None or common.kind == "O" else common)
    dtype = getattr(value, "dtype", None)
    is_pandas_like = hasattr(dtype, "na_value") or hasattr(value, "iloc")
    if dtype is not None and is_pandas_like and _pandas_needs_early_conversion(pandas, dtype):
        return value.astype(dtype if isinstance(dtype, np.dtype) else np.float64)
    return value


def _check_array(value: ArrayLike) -> NDArray[Any]:
    """scikit-learn's `check_array(value, ensure_2d=False)`: a finite numeric array of 1 or 2 dimensions."""
    value = _pandas_converted(value)
    if getattr(getattr(value, "dtype", None), "kind", None) == "O":
        array = np.asarray(value, dtype=np.float64)  # scikit-learn asks numpy for float64 from an object array
    else:
        array = np.asarray(value)
    if array.dtype.kind == "O":
        # built from a sequence of objects: scikit-learn's NaN check on object data (x != x), whose
        # comparison of pd.NA raises pandas' own TypeError, as there
        if (array != array).any():
            msg = "Input contains NaN"
            raise ValueError(msg)
        array = array.astype(np.float64)
    if array.dtype.kind == "c":
        msg = f"Complex data not supported\n{array}\n"
        raise ValueError(msg)
    if array.dtype.kind in "USV":
        msg = (
            "dtype='numeric' is not compatible with arrays of bytes/strings."
            "Convert your data to numeric values explicitly instead."
        )
        raise ValueError(msg)
    if array.ndim >= 3:
        msg = f"Found array with dim {array.ndim}, while dim <= 2 is required."
        raise ValueError(msg)
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        kind = "NaN" if np.isnan(array).any() else f"infinity or a value too large for {array.dtype!r}"
        msg = f"Input contains {kind}."
        raise ValueError(msg)
    _num_samples(array)  # a 0-d array: scikit-learn's TypeError
    if array.shape[0] < 1:
        msg = f"Found array with 0 sample(s) (shape={array.shape}) while a minimum of 1 is required."
        raise ValueError(msg)
    if array.ndim == 2 and array.shape[1] < 1:
        msg = f"Found array with 0 feature(s) (shape={array.shape}) while a minimum of 1 is required."
        raise ValueError(msg)
    return array


def _num_samples(value: Any) -> int:
    """scikit-learn's `_num_samples`: the length of the first axis, with its errors."""
    message = f"Expected sequence or array-like, got {type(value)}"
    if callable(getattr(value, "fit", None)):
        raise TypeError(message)
    shape = getattr(value, "shape", None)
    if shape is not None:
        if len(shape) == 0:
            msg = (
                "Input should have at least 1 dimension i.e. satisfy `len(x.shape) > 0`, "
                f"got scalar `{value!r}` instead."
            )
            raise TypeError(msg)
        if isinstance(shape[0], Integral):
            return int(shape[0])
    if not hasattr(value, "__len__") and shape is None:
        if not hasattr(value, "__array__"):
            raise TypeError(message)
        value = np.asarray(value)
    try:
        return len(value)
    except TypeError as error:
        raise TypeError(message) from error


def _check_consistent_length(*arrays: Any) -> None:
    lengths = [_num_samples(array) for array in arrays if array is not None]
    if len(set(lengths)) > 1:
        msg = f"Found input variables with inconsistent numbers of samples: {lengths!r}"
        raise ValueError(msg)


def _check_target_type(y_true: NDArray[Any]) -> None:
    """scikit-learn's `type_of_target` must find several documents (columns) per query."""
    if y_true.ndim == 2 and y_true.shape[1] > 1:
        return  # multilabel-indicator, continuous-multioutput or multiclass-multioutput: all supported
    if y_true.dtype.kind == "f" and np.any(y_true != np.trunc(y_true)):
        target = "continuous"
    elif np.unique(y_true).size > 2:
        target = "multiclass"
    else:
        target = "binary"
    msg = f"Only {_SUPPORTED_TARGETS} formats are supported. Got {target} instead"
    raise ValueError(msg)


def _checked_weights(sample_weight: Any, n_queries: int) -> NDArray[np.float64] | None:
    """The weights, checked by numpy's own `np.average` over float64 per-query values, as scikit-learn averages.

    So weights numpy cannot add (strings, None, arbitrary objects), of the wrong shape or summing to zero
    raise numpy's exception and message.  A NaN or infinite sum gives NaN there and here (see `_score`).
    """
    if sample_weight is None:
        return None
    with np.errstate(invalid="ignore"):
        mean = np.average(np.zeros(n_queries), weights=sample_weight)
    if np.iscomplexobj(mean):
        # scikit-learn returns the real part of a complex weighted mean: refused here rather than copied
        msg = "sample_weight must be real numbers, got complex values."
        raise TypeError(msg)
    return np.asarray(sample_weight, dtype=np.float64)


def _checked_inputs(
    caller: str, y_true: ArrayLike, y_score: ArrayLike, sample_weight: ArrayLike | None, *, ignore_ties: bool
) -> tuple[NDArray[Any], NDArray[Any], NDArray[np.float64] | None]:
    true = _check_array(y_true)
    score = _check_array(y_score)
    _check_consistent_length(true, score, sample_weight)
    if caller == "ndcg_score":
        if true.min() < 0:
            msg = "ndcg_score should not be used on negative y_true values."
            raise ValueError(msg)
        if true.ndim > 1 and true.shape[1] <= 1:
            msg = f"Computing NDCG is only meaningful when there is more than 1 document. Got {true.shape[1]} instead."
            raise ValueError(msg)
    _check_target_type(true)
    if score.shape != true.shape:
        msg = f"y_true and y_score must have the same shape, got {true.shape} and {score.shape}."
        raise ValueError(msg)
    if score.dtype.kind == "b" and not ignore_ties:
        # scikit-learn's tie averaging groups -y_score: numpy refuses to negate booleans (its TypeError)
        np.negative(score)
    return true, score, _checked_weights(sample_weight, true.shape[0])


def _long_frame(y_true: NDArray[Any], y_score: NDArray[Any], weights: NDArray[np.float64] | None) -> pl.DataFrame:
    """One row per (query, document): query = the row index of the dense arrays."""
    n_queries, n_documents = y_true.shape
    if y_score.dtype.kind == "b":
        y_score = y_score.astype(np.int8)
    elif y_score.dtype.kind == "f":
        y_score = y_score.astype(np.float64)  # exact: widening keeps every tie and every order
    columns: dict[str, NDArray[Any]] = {
        "query": np.repeat(np.arange(n_queries, dtype=np.int64), n_documents),
        "relevance": y_true.astype(np.float64).ravel(),
        "score": y_score.ravel(),
    }
    if weights is not None:
        columns["weight"] = np.repeat(weights, n_documents)
    return pl.DataFrame(columns)


def _score(
    metric: Literal["ndcg", "dcg"],
    y_true: ArrayLike,
    y_score: ArrayLike,
    k: int | np.integer[Any] | None,
    log_base: float,
    sample_weight: ArrayLike | None,
    ignore_ties: bool,
) -> float:
    true, score, weights = _checked_inputs(f"{metric}_score", y_true, y_score, sample_weight, ignore_ties=ignore_ties)
    if weights is not None and not math.isfinite(weights.sum()):
        return math.nan  # numpy's weighted average with a NaN or infinite weight (a zero sum raised above)
    metrics = rank_metrics(_long_frame(true, score, weights))
    options: dict[str, Any] = {
        "k": None if k is None else int(k),
        "ties": "reverse" if ignore_ties else "average",
        "weight": None if weights is None else "weight",
    }
    if metric == "ndcg":
        return metrics.ndcg_score(no_relevant=0.0, **options)
    if log_base == 1:
        # scikit-learn divides by log(1) = 0: every discount is 1 / inf = 0 (the weights are still checked)
        return 0.0 * metrics.dcg_score(**options)
    return metrics.dcg_score(log_base=float(log_base), **options)


def ndcg_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    k: int | np.integer[Any] | None = None,
    sample_weight: ArrayLike | None = None,
    ignore_ties: bool = False,
) -> float:
    """Normalized DCG averaged over queries: `sklearn.metrics.ndcg_score`, computed by the Polars plan.

    Parameters
    ----------
    y_true : array-like of shape (n_queries, n_documents)
        Non-negative graded relevance; its columns are the documents of each query (row).
    y_score : array-like of shape (n_queries, n_documents)
        Predicted scores, ranked descending.
    k : int, default=None
        Only the k highest scores count; None for all.
    sample_weight : array-like of shape (n_queries,), default=None
        Query weights of the mean; negative weights are accepted, a zero sum raises ZeroDivisionError.
    ignore_ties : bool, default=False
        False averages the gain over tied scores (scikit-learn); True puts the later document first.

    Returns
    -------
    float
        The (weighted) mean NDCG over the queries.

    Examples
    --------
    >>> from lodestar_polars.sklearn import ndcg_score
    >>> ndcg_score([[3, 2, 1, 0]], [[0.1, 0.4, 0.5, 0.9]])
    0.6138273133441086
    """
    _check_parameters(
        "ndcg_score",
        {"y_true": y_true, "y_score": y_score, "k": k, "sample_weight": sample_weight, "ignore_ties": ignore_ties},
    )
    return _score("ndcg", y_true, y_score, k, 2.0, sample_weight, ignore_ties)


def dcg_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    k: int | np.integer[Any] | None = None,
    log_base: float = 2,
    sample_weight: ArrayLike | None = None,
    ignore_ties: bool = False,
) -> float:
    """DCG averaged over queries: `sklearn.metrics.dcg_score`, computed by the Polars plan.

    Parameters
    ----------
    y_true : array-like of shape (n_queries, n_documents)
        Graded relevance (negative values are accepted); its columns are the documents of each query (row).
    y_score : array-like of shape (n_queries, n_documents)
        Predicted scores, ranked descending.
    k : int, default=None
        Only the k highest scores count; None for all.
    log_base : float, default=2
        Base of the logarithm in the discount 1 / log(position + 1).
    sample_weight : array-like of shape (n_queries,), default=None
        Query weights of the mean; negative weights are accepted, a zero sum raises ZeroDivisionError.
    ignore_ties : bool, default=False
        False averages the gain over tied scores (scikit-learn); True puts the later document first.

    Returns
    -------
    float
        The (weighted) mean DCG over the queries.

    Examples
    --------
    >>> from lodestar_polars.sklearn import dcg_score
    >>> dcg_score([[10, 0, 0, 1, 5]], [[1, 0, 0, 0, 1]], k=1)
    7.5
    """
    _check_parameters(
        "dcg_score",
        {
            "y_true": y_true,
            "y_score": y_score,
            "k": k,
            "log_base": log_base,
            "sample_weight": sample_weight,
            "ignore_ties": ignore_ties,
        },
    )
    return _score("dcg", y_true, y_score, k, log_base, sample_weight, ignore_ties)
