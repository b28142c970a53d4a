"""The public API is defined once: the namespace methods and the Spark functions take the same options, and
every public function says what it takes, returns and does, with an example that runs (the doctests)."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import lodestar_polars
from lodestar_polars import RankMetricsFrame, RankMetricsLazyFrame, io, partitions, sklearn
from lodestar_polars import spark as lodestar_spark

# the frame-level (not Spark) methods: every public method of the DataFrame namespace
FRAME_METHODS = sorted({name for cls in RankMetricsFrame.__mro__ for name in vars(cls) if not name.startswith("_")})
LAZY_METHODS = sorted({name for cls in RankMetricsLazyFrame.__mro__ for name in vars(cls) if not name.startswith("_")})


def _parameters(function: Callable[..., Any]) -> list[tuple[str, Any, Any, Any]]:
    """(name, kind, default, annotation) of each parameter but the frame (`self` / `frame`); the annotation of
    `qrels` differs by design (a Polars frame or a Spark frame), so it is left out."""
    parameters = list(inspect.signature(function).parameters.values())[1:]
    return [(p.name, p.kind, p.default, None if p.name == "qrels" else p.annotation) for p in parameters]


def test_the_spark_module_offers_every_frame_method_and_nothing_else() -> None:
    assert sorted(lodestar_spark.__all__) == FRAME_METHODS


def test_the_lazy_namespace_is_the_frame_namespace_without_the_float_forms() -> None:
    assert sorted(set(FRAME_METHODS) - set(LAZY_METHODS)) == ["dcg_score", "ndcg_score"]
    assert set(LAZY_METHODS) <= set(FRAME_METHODS)


@pytest.mark.parametrize("name", FRAME_METHODS)
def test_namespace_and_spark_signatures_are_identical(name: str) -> None:
    assert _parameters(getattr(lodestar_spark, name)) == _parameters(getattr(RankMetricsFrame, name))
    if name in LAZY_METHODS:
        assert _parameters(getattr(RankMetricsLazyFrame, name)) == _parameters(getattr(RankMetricsFrame, name))


@pytest.mark.parametrize("name", FRAME_METHODS)
def test_options_are_keyword_only(name: str) -> None:
    parameters = list(inspect.signature(getattr(RankMetricsFrame, name)).parameters.values())[1:]
    positional = [p.name for p in parameters if p.kind is not inspect.Parameter.KEYWORD_ONLY]
    assert positional == (["measures"] if name.startswith("evaluate") else [])


def test_the_comparison_sees_a_difference() -> None:
    """Guard: the signature comparison is not blind to a renamed option or a changed default."""

    def one(frame: object, *, query: str = "query", k: int | None = None) -> None: ...
    def renamed(frame: object, *, query: str = "query", cutoff: int | None = None) -> None: ...
    def other_default(frame: object, *, query: str = "qid", k: int | None = None) -> None: ...

    assert _parameters(one) != _parameters(renamed)
    assert _parameters(one) != _parameters(other_default)


# --- docstrings ---------------------------------------------------------------------------------------------


def _public_functions(module: ModuleType) -> list[tuple[str, Callable[..., Any]]]:
    names = getattr(module, "__all__", [])
    return [(f"{module.__name__}.{n}", getattr(module, n)) for n in names if inspect.isfunction(getattr(module, n))]


PUBLIC: dict[str, Callable[..., Any]] = {
    **{f"DataFrame.rank_metrics.{n}": getattr(RankMetricsFrame, n) for n in FRAME_METHODS},
    **{f"LazyFrame.rank_metrics.{n}": getattr(RankMetricsLazyFrame, n) for n in LAZY_METHODS},
    **dict(_public_functions(lodestar_spark)),
    **dict(_public_functions(io)),
    **dict(_public_functions(sklearn)),
    "lodestar_polars.mean": lodestar_polars.mean,
    "lodestar_polars.rank_metrics": lodestar_polars.rank_metrics,
    "lodestar_polars.report": lodestar_polars.report,
    "lodestar_polars.partitions.combine_means": partitions.combine_means,
}


def _section(doc: str, title: str) -> str | None:
    """The text of a numpy-style section: from its underlined title to the next underlined title."""
    lines = doc.splitlines()
    starts = [i for i in range(len(lines) - 1) if lines[i].strip() and re.fullmatch(r"-{3,}", lines[i + 1].strip())]
    for index, start in enumerate(starts):
        if lines[start].strip() == title:
            end = starts[index + 1] if index + 1 < len(starts) else len(lines)
            return "\n".join(lines[start + 2 : end])
    return None


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_public_functions_have_numpy_docstrings_with_a_doctested_example(name: str) -> None:
    doc = inspect.getdoc(PUBLIC[name])
    assert doc, f"{name} has no docstring"
    for title in ("Parameters", "Returns", "Examples"):
        assert _section(doc, title) is not None, f"{name}'s docstring has no {title} section"
    examples = _section(doc, "Examples")
    assert examples is not None and ">>>" in examples, f"{name}'s Examples section has no doctest"


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_every_parameter_is_documented(name: str) -> None:
    doc = inspect.getdoc(PUBLIC[name]) or ""
    section = _section(doc, "Parameters") or ""
    documented = set(re.findall(r"^(\w+)(?: :|$)", section, re.M))
    parameters = [p for p in inspect.signature(PUBLIC[name]).parameters if p not in ("self", "args", "kwargs")]
    missing = [p for p in parameters if p not in documented]
    assert missing == [], f"{name} does not document {missing}"


def test_the_measure_layer_exports_nothing() -> None:
    """The registry is internal (docs/development.md, "The measure registry is internal"): no public name of
    `lodestar_polars.measures` but its measure modules, and its `__all__` empty."""
    from lodestar_polars import measures

    public = [
        name
        for name, value in vars(measures).items()
        if not name.startswith("_") and not inspect.ismodule(value) and name != "annotations"
    ]
    assert public == []
    assert measures.__all__ == []


def test_the_version_is_the_same_in_pyproject_the_package_and_the_changelog() -> None:
    """docs/changelog.md's first section is the version pyproject.toml and `__version__` give, unreleased or
    released: a behaviour change raises all three."""
    root = Path(__file__).resolve().parents[1]
    declared = re.search(r'^version = "([^"]+)"$', (root / "pyproject.toml").read_text(encoding="utf-8"), re.M)
    assert declared is not None
    assert lodestar_polars.__version__ == declared.group(1)
    sections = re.findall(r"^## (.+)$", (root / "docs" / "changelog.md").read_text(encoding="utf-8"), re.M)
    assert sections[0] in (f"Unreleased ({declared.group(1)})", declared.group(1)) or sections[0].startswith(
        f"{declared.group(1)} ("
    ), sections[0]
