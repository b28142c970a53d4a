"""No message a user sees names the package's internals: a representative set of errors is provoked over every
public method of both namespaces and over the public functions, and each message is scanned for private names
(the namespace's implementing class `_RankMetrics`, the plan's `__lodestar_*` columns, a private module or
function such as `_spec.check_schema`)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import lodestar_polars
from lodestar_polars import RankMetricsFrame, RankMetricsLazyFrame, cli, exprs, io, partitions, plot, sklearn

# a name starting with an underscore, not inside a word: `_RankMetrics`, `__lodestar_x`, `lodestar_polars._spec`
INTERNAL = re.compile(r"(?<![A-Za-z0-9])_+[A-Za-z]\w*")

FRAME_METHODS = sorted({name for cls in RankMetricsFrame.__mro__ for name in vars(cls) if not name.startswith("_")})
LAZY_METHODS = sorted({name for cls in RankMetricsLazyFrame.__mro__ for name in vars(cls) if not name.startswith("_")})


def frame() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "query": [1, 1, 2, 2],
            "doc": ["a", "b", "a", "b"],
            "relevance": [1, 0, 2, 1],
            "score": [0.5, 0.2, 0.1, 0.3],
        }
    )


# each a way to call a method wrongly: (what is wrong, the frame to call it on, positional arguments, options)
PROVOCATIONS: list[tuple[str, pl.DataFrame, tuple[Any, ...], dict[str, Any]]] = [
    ("an option passed by position", frame(), ([3, 5],), {}),
    ("a judgments frame passed by position", frame(), (frame(),), {}),
    ("a misspelt option", frame(), (), {"kk": 3}),
    ("a keyword named self", frame(), (), {"self": 1}),
    ("a missing column", frame(), (), {"relevance": "label"}),
    ("an unknown tie mode", frame(), (), {"ties": "random"}),
    ("an unknown gain", frame(), (), {"gain": "cubic"}),
    ("a null score", frame().with_columns(score=pl.Series([0.5, None, 0.1, 0.3])), (), {}),
    ("a NaN relevance", frame().with_columns(relevance=pl.Series([1.0, float("nan"), 2.0, 1.0])), (), {}),
    ("a negative relevance", frame().with_columns(relevance=pl.Series([1, -1, 2, 1])), (), {}),
    ("a doc listed twice", frame().with_columns(doc=pl.Series(["a", "a", "a", "b"])), (), {"doc": "doc"}),
    ("a null doc", frame().with_columns(doc=pl.Series(["a", None, "a", "b"])), (), {"doc": "doc"}),
    ("a weight differing within a query", frame().with_columns(w=pl.Series([1.0, 2.0, 1.0, 1.0])), (), {"weight": "w"}),
    ("judgments without doc=", frame(), (), {"qrels": frame()}),
    (
        "no relevant document, no_relevant='error'",
        frame().with_columns(relevance=pl.lit(0)),
        (),
        {"no_relevant": "error"},
    ),
    ("a query column clashing with an output", frame().rename({"query": "ndcg"}), (), {"query": "ndcg"}),
    ("a non-numeric score", frame().with_columns(score=pl.lit("x")), (), {}),
    ("an empty frame to average", frame().clear(), (), {}),
]


def _call(namespace: Any, method: str, args: tuple[Any, ...], options: dict[str, Any]) -> object:
    if method.startswith("evaluate"):
        args = (["ndcg@3", "ap"], *args)
    result = getattr(namespace, method)(*args, **options)
    return result.collect() if isinstance(result, pl.LazyFrame) else result


def _message(run: Callable[[], object]) -> str | None:
    try:
        run()
    except Exception as error:  # every error a user can see is scanned, whatever its type
        return f"{type(error).__name__}: {error}"
    return None


def _internal_names(messages: list[str]) -> list[str]:
    return [message for message in messages if INTERNAL.search(message)]


@pytest.mark.parametrize(
    ("kind", "method"), [("DataFrame", m) for m in FRAME_METHODS] + [("LazyFrame", m) for m in LAZY_METHODS]
)
def test_namespace_errors_name_no_internal(kind: str, method: str) -> None:
    messages = []
    for _, data, args, options in PROVOCATIONS:
        subject = data if kind == "DataFrame" else data.lazy()
        message = _message(functools.partial(_call, subject.rank_metrics, method, args, options))
        if message is not None:
            messages.append(message)
    assert len(messages) >= 12, f"only {len(messages)} of the provocations raised: {messages}"
    assert _internal_names(messages) == []


def test_a_positional_option_names_the_public_method_and_the_keyword() -> None:
    """Python's own message named the implementing class: `_RankMetrics.ndcg() takes 1 positional argument but
    2 were given`."""
    with pytest.raises(TypeError) as raised:
        frame().rank_metrics.ndcg([3, 5])  # type: ignore[misc]  # the mistake under test
    assert str(raised.value) == (
        ".rank_metrics.ndcg() takes no positional argument (1 given): its options are keyword-only; pass k=[3, 5]."
    )
    with pytest.raises(TypeError, match=r"^\.rank_metrics\.ndcg\(\) got an unexpected keyword argument 'kk'; did you"):
        frame().lazy().rank_metrics.ndcg(kk=3)  # type: ignore[call-arg]  # the mistake under test


def _per_query() -> pl.DataFrame:
    systems = pl.concat([frame().with_columns(system=pl.lit(s)) for s in ("a", "b")])
    return systems.rank_metrics.evaluate(["ndcg@3", "ap"], by="system")


FUNCTIONS: list[tuple[str, Callable[[], object]]] = [
    ("mean, a misspelt option", lambda: lodestar_polars.mean(_per_query(), byy="system")),  # type: ignore[call-arg]
    ("mean, a missing by column", lambda: lodestar_polars.mean(_per_query(), by="model")),
    ("mean, a NaN metric", lambda: lodestar_polars.mean(_per_query().with_columns(ap=pl.lit(float("nan"))))),
    (
        "compare, its query column not found",
        lambda: lodestar_polars.compare(_per_query(), system="system", query="topic"),
    ),
    ("compare, an unknown baseline", lambda: lodestar_polars.compare(_per_query(), system="system", baseline="z")),
    ("report, not a comparison", lambda: lodestar_polars.report(_per_query())),
    ("plot.means, not a comparison", lambda: plot.means(_per_query())),
    (
        "plot.per_query_delta, a repeated row",
        lambda: plot.per_query_delta(pl.concat([_per_query()] * 2), system="system", baseline="a", metric="ap"),
    ),
    ("plot.cutoff_curve, a per-query frame", lambda: plot.cutoff_curve(_per_query())),
    ("plot.distribution, an unknown metric", lambda: plot.distribution(_per_query(), system="system", metric="x")),
    ("io.scan_trec_run, no such file", lambda: io.scan_trec_run("/nonexistent/run.txt").collect()),
    ("partitions.combine_means, no frame", lambda: partitions.combine_means([])),
    ("sklearn.ndcg_score, ragged", lambda: sklearn.ndcg_score([[1, 0]], [[0.5]])),
    ("exprs.ndcg, a misspelt option", lambda: exprs.ndcg(kk=3)),  # type: ignore[call-arg]
]


@pytest.mark.parametrize(("what", "run"), FUNCTIONS, ids=[what for what, _ in FUNCTIONS])
def test_function_errors_name_no_internal(what: str, run: Callable[[], object]) -> None:
    pytest.importorskip("scipy")  # compare
    pytest.importorskip("altair")  # plot
    message = _message(run)
    assert message is not None, f"{what}: no error raised"
    assert _internal_names([message]) == []


CLI_CALLS: list[tuple[str, list[str]]] = [
    ("an unknown measure", ["evaluate", "{run}", "-m", "ndgc@10"]),
    ("a cut-off of 0", ["evaluate", "{run}", "-m", "ndcg@0"]),
    ("a missing column", ["evaluate", "{run}", "--relevance", "label"]),
    ("a negative label", ["evaluate", "{negative}", "-m", "ndcg@3"]),
    ("a null score", ["evaluate", "{null_score}"]),
    ("a run file that does not exist", ["evaluate", "{folder}/absent.parquet"]),
    ("trec_eval on a run that does not exist", ["trec_eval", "{folder}/qrels.txt", "{folder}/absent.txt"]),
]


@pytest.mark.parametrize(("what", "argv"), CLI_CALLS, ids=[what for what, _ in CLI_CALLS])
def test_command_line_errors_name_no_internal(
    what: str, argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = {
        "run": frame(),
        "negative": frame().with_columns(relevance=pl.Series([1, -1, 2, 1])),
        "null_score": frame().with_columns(score=pl.Series([0.5, None, 0.1, 0.3])),
    }
    paths = {name: tmp_path / f"{name}.parquet" for name in files}
    for name, data in files.items():
        data.write_parquet(paths[name])
    (tmp_path / "qrels.txt").write_text("1 0 a 1\n", encoding="utf-8")
    arguments = [a.format(folder=tmp_path, **{name: str(path) for name, path in paths.items()}) for a in argv]
    code = cli.main(arguments)
    printed = capsys.readouterr()
    assert code in (1, 2), f"{what}: exit code {code}"
    message = printed.err.strip()
    assert message, f"{what}: nothing on standard error"
    assert _internal_names([message]) == []


def test_the_scan_sees_an_internal_name() -> None:
    """Guard: the pattern finds the names this test is about, and passes the public words around them."""
    assert _internal_names(["TypeError: _RankMetrics.ndcg() takes 1 positional argument but 2 were given"])
    assert _internal_names(["ValueError: column '__lodestar_score' not found"])
    assert _internal_names(["TypeError: lodestar_polars._spec.check_schema() got an unexpected keyword"])
    assert not _internal_names(["ValueError: no_relevant='error': query 3 has no relevant document; pass k=[3, 5]."])
