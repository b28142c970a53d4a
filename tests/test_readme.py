"""Every code block of README.md and of the guide's pages (docs/**/*.md) runs here as written, page by page.

Each page runs in its own temporary folder and namespace, its blocks in the page's order.  A block whose fence
carries markdown-exec's `exec="on"` is run by `mkdocs build` instead (its output is what the page shows), so it
is not run here.

- ```python blocks run in one shared namespace, as a reader running the README top to bottom would run them.
  An expression statement followed directly by comment lines that draw a table (`# query  ndcg@3 ...` or a
  Polars frame's box) is evaluated and its frame compared with the table, column names and every cell (numbers
  to the digits shown); an expression whose comment starts with a number (`# 0.75: ...`, `# 11/12 = 0.916667`)
  is compared with it (a float, or the last column of a one-row frame).  The Spark block runs in a subprocess
  (it stops its session), and skips with the reason where Spark cannot run, unless LODESTAR_REQUIRE_SPARK=1.
- ```bash blocks run their `lodestar-polars ...` commands through `lodestar_polars.cli.main`, in process.
- ```text blocks that start with `$ ` are shell transcripts: each `lodestar-polars` command runs, `echo $?`
  prints its exit code, and the lines shown after the commands are compared with what they print (stdout and
  stderr).  Any other ```text or bare ``` block is the printed output of the code block before it, compared
  with what that block prints (trailing spaces and blank edge lines aside).

An HTML comment right before a block, `<!-- readme-test: DIRECTIVE; DIRECTIVE -->`, says how to run it:
`skip (reason)` skips the block with that reason; `setup (reason)` runs the block before all others (it
writes data that examples above it read); `given FILE, FILE` writes those files first, in TREC format, from
the package's `example_systems()` (a name with "qrels" in it gets judgments, any other a run: they stand for
the reader's own TREC files); `skip PROGRAM lines (reason)` runs a bash block's other lines only;
`uses PAGE (reason)` first runs the setup blocks of PAGE (a path from the repository root) in this page's folder
and namespace (the data they write is read here); `needs MODULE (reason)` runs the block where MODULE can be
imported and skips it with the reason elsewhere (a tool outside the test extra: the page says so too).
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import os
import re
import shlex
import subprocess
import sys
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from lodestar_polars import cli
from lodestar_polars.example import example_systems
from tests.conftest import REPO_ROOT
from tests.spark_support import spark_unavailable

PAGES = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```(\w*)(.*)$")
BUILD_TIME = re.compile(r"\bexec=\"on\"")
MARKER = re.compile(r"^<!-- readme-test: (.*) -->$")
SKIP_LINES = re.compile(r"^skip (\S+) lines \((.+)\)$")
SKIP = re.compile(r"^skip \((.+)\)$")
SETUP = re.compile(r"^setup(?: \((.+)\))?$")
GIVEN = re.compile(r"^given (.+)$")
USES = re.compile(r"^uses (\S+)(?: \((.+)\))?$")
NEEDS = re.compile(r"^needs (\S+) \((.+)\)$")
VALUE_COMMENT = re.compile(r"^#\s*(?:[^:=#]*=\s*)?(-?\d+(?:\.\d+)?)(?=[:\s]|$)")
BOX_EDGE = re.compile(r"^[┌╞├└]")
CLI_PROGRAM = "lodestar-polars"


@dataclass
class Block:
    """One fenced block of a page: its page, first code line (1-based), language, code and directives."""

    page: str
    line: int
    language: str
    code: str
    directives: list[str] = field(default_factory=list)
    output: str | None = None  # the printed output the page shows for it

    @property
    def label(self) -> str:
        return f"{self.page}:{self.line} ({self.language})"

    def where(self, line_offset: int) -> str:
        return f"{self.page}:{self.line + line_offset}"

    def directive(self, pattern: re.Pattern[str]) -> re.Match[str] | None:
        return next((match for d in self.directives if (match := pattern.match(d))), None)

    @property
    def is_transcript(self) -> bool:
        return self.language == "text" and self.code.startswith("$ ")


def page_blocks(page: str, text: str) -> list[Block]:
    """A page's runnable blocks in order, each output block attached to the runnable block before it; blocks
    that run at build time (`exec="on"`) and their output are left out."""
    lines = text.splitlines()
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        end = lines.index("```", index + 1)
        before = next((line.strip() for line in reversed(lines[:index]) if line.strip()), "")
        marker = MARKER.match(before)
        directives = [d.strip() for d in marker.group(1).split(";")] if marker else []
        block = Block(page, index + 2, opening.group(1), "\n".join(lines[index + 1 : end]), directives)
        if BUILD_TIME.search(opening.group(2)):
            index = end + 1
            continue
        if block.language in ("", "text") and not block.is_transcript:
            assert blocks, f"{block.where(0)}: an output block with no code block before it"
            assert blocks[-1].output is None, f"{block.where(0)}: a second output block for {blocks[-1].label}"
            blocks[-1].output = block.code
        else:
            assert block.language in ("python", "bash", "text"), f"{block.label}: no runner for this language"
            blocks.append(block)
        index = end + 1
    return blocks


def page_name(path: Path) -> str:
    return path.relative_to(REPO_ROOT).as_posix()


BLOCKS_BY_PAGE = {page_name(path): page_blocks(page_name(path), path.read_text(encoding="utf-8")) for path in PAGES}
BLOCKS = [block for blocks in BLOCKS_BY_PAGE.values() for block in blocks]


def normalised(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines()).strip("\n")


# --- comparing what an expression shows -------------------------------------------------------------------


def shown_table(comment_lines: list[str]) -> tuple[list[str], list[list[str]]]:
    """The header and rows of a table drawn in comments: whitespace-separated, or a Polars frame's box."""
    lines = [line.lstrip("#").strip() for line in comment_lines]
    if lines[0].startswith("┌"):
        cells = [
            [cell.strip() for cell in line.strip("│").split("┆")]
            for line in lines
            if line.startswith("│") and not set(line) <= set("│┆- ")
        ]
    else:
        cells = [line.split() for line in lines if not BOX_EDGE.match(line)]
    return cells[0], cells[1:]


def decimals(number: str) -> int:
    return len(number.partition(".")[2])


def assert_cell_shown(actual: object, shown: str, where: str) -> None:
    if shown == "null":
        assert actual is None, f"{where}: shows null, the frame holds {actual!r}"
    elif isinstance(actual, float):
        assert f"{actual:.{decimals(shown)}f}" == shown, f"{where}: shows {shown}, is {actual!r}"
    else:
        assert str(actual) == shown, f"{where}: shows {shown}, the frame holds {actual!r}"


def assert_frame_shown(value: object, comment_lines: list[str], where: str) -> None:
    assert isinstance(value, pl.DataFrame), f"{where}: a table is shown for a {type(value).__name__}"
    header, rows = shown_table(comment_lines)
    assert header == value.columns, f"{where}: shows columns {header}, the frame has {value.columns}"
    assert len(rows) == value.height, f"{where}: shows {len(rows)} rows, the frame has {value.height}"
    for row_number, (shown_row, row) in enumerate(zip(rows, value.iter_rows(), strict=True)):
        assert len(shown_row) == len(row), f"{where}, row {row_number}: shows {shown_row}"
        for column, shown, actual in zip(value.columns, shown_row, row, strict=True):
            assert_cell_shown(actual, shown, f"{where}, row {row_number}, column {column!r}")


def assert_value_shown(value: object, shown: str, where: str) -> None:
    if isinstance(value, pl.DataFrame):
        assert value.height == 1, f"{where}: a number is shown for a frame of {value.height} rows"
        value = value.item(0, -1)
    assert isinstance(value, float), f"{where}: a number is shown for a {type(value).__name__}"
    assert_cell_shown(value, shown, where)


# --- runners -------------------------------------------------------------------------------------------------


def comments_by_line(code: str) -> dict[int, str]:
    tokens = tokenize.generate_tokens(io.StringIO(code).readline)
    return {token.start[0]: token.string for token in tokens if token.type == tokenize.COMMENT}


def run_python(block: Block, namespace: dict[str, Any]) -> str:
    """Run a block statement by statement, checking what its expressions show; returns what it printed."""
    source_lines = block.code.splitlines()
    comments = comments_by_line(block.code)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for statement in ast.parse(block.code).body:
            assert statement.end_lineno is not None
            where = block.where(statement.lineno - 1)
            if not isinstance(statement, ast.Expr):
                module = ast.Module(body=[statement], type_ignores=[])
                exec(compile(module, where, "exec"), namespace)
                continue
            value = eval(compile(ast.Expression(statement.value), where, "eval"), namespace)
            table = []
            for line in source_lines[statement.end_lineno :]:
                if not line.lstrip().startswith("#"):
                    break
                table.append(line.strip())
            if table:
                assert_frame_shown(value, table, where)
            inline = VALUE_COMMENT.match(comments.get(statement.end_lineno, ""))
            if inline is not None:
                assert_value_shown(value, inline.group(1), where)
    return printed.getvalue()


def run_spark(block: Block, folder: Path) -> str:
    """The Spark block in its own Python process (it starts and stops its own session)."""
    reason = spark_unavailable()
    if reason is not None and os.environ.get("LODESTAR_REQUIRE_SPARK") != "1":
        pytest.skip(f"{block.label}: {reason}")
    environment = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), environment.get("PYTHONPATH")]))
    environment.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    result = subprocess.run(
        [sys.executable, "-c", block.code], cwd=folder, env=environment, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, f"{block.label} failed:\n{result.stderr[-5000:]}"
    return result.stdout


def run_cli(command: str) -> tuple[int, str]:
    """A `lodestar-polars ...` command line through `cli.main`: its exit code and what it printed."""
    arguments = shlex.split(command, comments=True)
    assert arguments[0] == CLI_PROGRAM, f"no runner for {arguments[0]!r} in {command!r}"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        code = cli.main(arguments[1:])
    return code, printed.getvalue()


def shell_commands(code: str) -> Iterator[str]:
    for line in re.sub(r"\\\n\s*", " ", code).splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            yield line.strip()


def run_bash(block: Block) -> str:
    skipped = block.directive(SKIP_LINES)
    printed = []
    for command in shell_commands(block.code):
        if skipped is not None and shlex.split(command)[0] == skipped.group(1):
            continue
        code, output = run_cli(command)
        assert code == 0, f"{block.label}: `{command}` exited {code}:\n{output}"
        printed.append(output)
    return "".join(printed)


def run_transcript(block: Block) -> None:
    """`$ command` lines, each followed by what it prints; `echo $?` prints the last exit code."""
    printed, shown = [], []
    last_code = 0
    for line in block.code.splitlines():
        if not line.startswith("$ "):
            shown.append(line)
            continue
        command = line.removeprefix("$ ")
        if command == "echo $?":
            printed.append(f"{last_code}\n")
        else:
            last_code, output = run_cli(command)
            printed.append(output)
    assert normalised("".join(printed)) == normalised("\n".join(shown)), f"{block.label} prints otherwise"


def write_given_trec_files(names: str, folder: Path) -> None:
    """TREC files standing for the reader's own: bm25's ranking of `example_systems()` and its judgments."""
    systems = example_systems(n_queries=50).filter(pl.col("model") == "bm25")
    for name in (part.strip() for part in names.split(",")):
        if "qrels" in name:
            lines = systems.select(pl.format("{} 0 {} {}", "query_id", "doc_id", "relevance"))
        else:
            ranked = systems.with_columns(
                rank=pl.col("score").rank("ordinal", descending=True).over("query_id").cast(pl.Int64)
            )
            lines = ranked.select(pl.format("{} Q0 {} {} {} bm25", "query_id", "doc_id", "rank", "score"))
        (folder / name).write_text("\n".join(lines.to_series()) + "\n", encoding="utf-8")


# --- the tests -----------------------------------------------------------------------------------------------


class PageRun:
    """One page's blocks run once each, in order (setup blocks first), in one folder and one namespace."""

    def __init__(self, page: str, folder: Path) -> None:
        self.page = page
        self.folder = folder
        self.namespace: dict[str, Any] = {"__name__": "__readme__"}
        self.done: set[int] = set()
        self.used: set[str] = set()

    def run(self, block: Block) -> None:
        """Run `block` after every setup block and every block before it that has not run yet."""
        blocks = BLOCKS_BY_PAGE[self.page]
        order = [b for b in blocks if b.directive(SETUP)] + [b for b in blocks if not b.directive(SETUP)]
        for earlier in order[: order.index(block)]:
            if earlier.line not in self.done:
                with contextlib.suppress(Exception, pytest.skip.Exception):
                    self.run_one(earlier)
        self.run_one(block)

    def run_one(self, block: Block) -> None:
        self.done.add(block.line)
        skipped = block.directive(SKIP)
        if skipped is not None:
            pytest.skip(f"{block.label}: {skipped.group(1)}")
        needs = block.directive(NEEDS)
        if needs is not None and importlib.util.find_spec(needs.group(1)) is None:
            pytest.skip(f"{block.label}: {needs.group(1)} is not installed: {needs.group(2)}")
        uses = block.directive(USES)
        if uses is not None and uses.group(1) not in self.used:
            self.used.add(uses.group(1))
            for setup in (b for b in BLOCKS_BY_PAGE[uses.group(1)] if b.directive(SETUP)):
                run_python(setup, self.namespace)
        given = block.directive(GIVEN)
        if given is not None:
            write_given_trec_files(given.group(1), self.folder)
        with pl.Config(restore_defaults=True):
            if block.is_transcript:
                run_transcript(block)
                return
            if block.language == "bash":
                printed = run_bash(block)
            elif "pyspark" in block.code:
                printed = run_spark(block, self.folder)
            else:
                printed = run_python(block, self.namespace)
        if block.output is not None:
            assert normalised(printed) == normalised(block.output), (
                f"{block.label} prints otherwise than the page shows:\n{printed}"
            )


@pytest.fixture(scope="module")
def page_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, PageRun]:
    return {page: PageRun(page, tmp_path_factory.mktemp(Path(page).stem)) for page in BLOCKS_BY_PAGE}


@pytest.mark.parametrize("block", BLOCKS, ids=[block.label for block in BLOCKS])
def test_block_runs_as_written(block: Block, page_runs: dict[str, PageRun], monkeypatch: pytest.MonkeyPatch) -> None:
    page_run = page_runs[block.page]
    monkeypatch.chdir(page_run.folder)
    page_run.run(block)


def test_directives_are_known_and_every_python_block_runs() -> None:
    known = (SKIP, SKIP_LINES, SETUP, GIVEN, USES, NEEDS)
    for block in BLOCKS:
        for directive in block.directives:
            assert any(pattern.match(directive) for pattern in known), f"{block.label}: unknown directive {directive!r}"
        if block.language == "python":
            assert block.directive(SKIP) is None, f"{block.label}: a Python block is skipped"
        uses = block.directive(USES)
        if uses is not None:
            assert any(b.directive(SETUP) for b in BLOCKS_BY_PAGE.get(uses.group(1), [])), (
                f"{block.label}: {uses.group(1)} has no setup block to use"
            )
    assert sum(block.language == "python" for block in BLOCKS) >= 15


def test_readme_relative_links_resolve() -> None:
    """Every relative link of the README (the front page, read on a code host too) names a file that exists."""
    readme = REPO_ROOT / "README.md"
    targets = re.findall(r"\]\(([^)\s]+)\)", readme.read_text(encoding="utf-8"))
    relative = [target for target in targets if not re.match(r"^[a-z]+:|^#", target)]
    assert relative, "the README links no page of the guide"
    missing = [target for target in relative if not (REPO_ROOT / target.partition("#")[0]).exists()]
    assert not missing, f"README.md links files that do not exist: {missing}"


def test_quick_start_example_runs(tmp_path: Path) -> None:
    """The example the Quick start runs (after making its virtual environment, which the suite does not)."""
    result = subprocess.run(
        [sys.executable, "-m", "lodestar_polars.example", "--out", str(tmp_path)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    assert "weighted mean over queries" in result.stdout
    assert "against bm25" in result.stdout


def quick_start(page: Path) -> str:
    """The text of a page's `## Quick start` section, up to the next heading."""
    text = page.read_text(encoding="utf-8")
    start = text.index("## Quick start\n")
    return text[start : text.index("\n## ", start + 1)]


def test_the_quick_start_is_one_text_in_the_readme_and_the_guide() -> None:
    """The README's Quick start (its commands, and the test dependencies it lists) and the getting-started page's
    are the same words: a change to one is made to both."""
    assert quick_start(REPO_ROOT / "README.md") == quick_start(REPO_ROOT / "docs" / "getting-started.md")
