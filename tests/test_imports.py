"""The package's modules import each other without a circle, no module imports the command line, and the measure
layer (`measures/`) imports none of the front ends (the commands import the measures, never the reverse: what the
trec_eval command prints of a measure is declared on the measure, `TrecEvalForm`).

Every ``import`` and ``from ... import`` of every module is read with `ast` (those inside functions too, where a
circle hides from the import system until the function runs; those under ``if TYPE_CHECKING:`` are left out,
as they never run), each resolved to the package module it names, and the graph searched for a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import lodestar_polars

PACKAGE_ROOT = Path(lodestar_polars.__file__).parent
PACKAGE = "lodestar_polars"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE_ROOT.rglob("*.py"))}


def _is_type_checking_block(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _import_nodes(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []
    for node in ast.iter_child_nodes(tree):
        if _is_type_checking_block(node):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        found += _import_nodes(node)
    return found


def _package_of(name: str) -> str:
    return name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]


def imported_modules(name: str, source: str) -> set[str]:
    """The package modules `source` (module `name`) imports: `from .x import y` names x, or x.y when y is a
    module; `from . import y` names the module y."""
    imported: set[str] = set()
    for node in _import_nodes(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names if alias.name in MODULES}
            continue
        if node.level:
            base = _package_of(name)
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            target = f"{base}.{node.module}" if node.module else base
        else:
            target = node.module or ""
        if target not in MODULES:
            continue
        for alias in node.names:
            submodule = f"{target}.{alias.name}"
            imported.add(submodule if submodule in MODULES else target)
    imported.discard(name)
    return imported


def import_graph(sources: dict[str, str]) -> dict[str, set[str]]:
    return {name: imported_modules(name, source) for name, source in sources.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of `graph` (its modules in order, the first repeated last), or None."""
    visiting: list[str] = []
    done: set[str] = set()

    def visit(name: str) -> list[str] | None:
        if name in visiting:
            return [*visiting[visiting.index(name) :], name]
        if name in done:
            return None
        visiting.append(name)
        for imported in sorted(graph.get(name, ())):
            cycle = visit(imported)
            if cycle is not None:
                return cycle
        visiting.pop()
        done.add(name)
        return None

    for name in sorted(graph):
        cycle = visit(name)
        if cycle is not None:
            return cycle
    return None


SOURCES = {name: path.read_text(encoding="utf-8") for name, path in MODULES.items()}


def test_the_package_has_no_import_circle() -> None:
    assert find_cycle(import_graph(SOURCES)) is None


def test_no_module_imports_the_command_line() -> None:
    graph = import_graph(SOURCES)
    importers = sorted(name for name, imported in graph.items() if f"{PACKAGE}.cli" in imported)
    assert importers == [f"{PACKAGE}.__main__"]


# the command-line front ends: the measure layer imports none of them
FRONT_ENDS = (f"{PACKAGE}.cli", f"{PACKAGE}.__main__", f"{PACKAGE}._evaluate_command", f"{PACKAGE}.trec_eval")


def front_end_imports_of_the_measures(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(module of `measures/`, front-end module it imports) for every such import."""
    return sorted(
        (name, imported)
        for name, imports in graph.items()
        if name.startswith(f"{PACKAGE}.measures")
        for imported in imports
        if any(imported == front or imported.startswith(f"{front}.") for front in FRONT_ENDS)
    )


def test_the_measures_import_no_front_end() -> None:
    assert front_end_imports_of_the_measures(import_graph(SOURCES)) == []


def test_a_measure_importing_a_front_end_is_found() -> None:
    """The control for the test above: a measure module reading the trec_eval front end's parameters."""
    sources = {**SOURCES, f"{PACKAGE}.measures.set_f": "from ..trec_eval.parameters import parse_cutoffs\n"}
    assert front_end_imports_of_the_measures(import_graph(sources)) == [
        (f"{PACKAGE}.measures.set_f", f"{PACKAGE}.trec_eval.parameters")
    ]
    assert f"{PACKAGE}.measures._trec_parameters" in import_graph(SOURCES)[f"{PACKAGE}.measures.set_f"]


def test_the_trec_eval_package_is_read() -> None:
    """The control for the two tests above: the graph holds the trec_eval package's edges."""
    graph = import_graph(SOURCES)
    assert f"{PACKAGE}.trec_eval.qrels_jg" in graph[f"{PACKAGE}.trec_eval.command"]
    assert f"{PACKAGE}.judgment_groups" in graph[f"{PACKAGE}.trec_eval.qrels_jg"]


@pytest.mark.parametrize(
    "circle",
    [
        # the circle this package had: the judgment-group adapter imported cli's helpers, cli imported it in a
        # function
        {
            f"{PACKAGE}.cli": "def run():\n    from . import _jg\n",
            f"{PACKAGE}._jg": "from .cli import UsageError\n",
        },
        {
            f"{PACKAGE}.trec_eval.a": "from .b import x\n",
            f"{PACKAGE}.trec_eval.b": "from . import a\n",
        },
    ],
)
def test_a_circle_is_found(circle: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The detector fires on a circle through a function-level import and on one through `from . import`."""
    modules = {**MODULES, **{name: PACKAGE_ROOT / "module.py" for name in circle}}
    monkeypatch.setattr(f"{__name__}.MODULES", modules)
    cycle = find_cycle(import_graph({**SOURCES, **circle}))
    assert cycle is not None
    assert set(cycle) == set(circle)
