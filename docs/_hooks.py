"""MkDocs hooks: the benchmark results of `benchmarks/` become pages of the site, and the pictures of the guide
are made when the site is built.

The guide links the benchmark results as `../benchmarks/...` (the path from `docs/` on a code host); the site
serves them under `benchmarks/`, with the files they link to, and the links are rewritten to that place.

The pages of `PICTURE_PAGES` show pictures (and an HTML report) that their own code blocks write: the hook
runs each page's ```python blocks in order, in one namespace, in a temporary folder, as a reader would, and
every file they write there becomes a file of the site beside the page.  Nothing is written to the source
tree, and a picture cannot differ from the code the page shows.

Each word of an inline code span (`--missing-queries zero`, `num_rel_ret`) becomes an `unbroken` span, which the
site's stylesheet keeps on one line: a code span wraps only at its spaces, never inside a name or an option.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

REPO_ROOT = Path(__file__).resolve().parents[1]
BENCHMARK_FILES = ["RESULTS.md", "HISTORY.md", "sink_results.md", "ab_results/*"]
PICTURE_PAGES = ["compare.md", "plots.md"]
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)
# an inline code span of plain text (a code block's <code> follows <pre> or holds highlighting spans)
INLINE_CODE = re.compile(r"(?<!<pre>)<code>([^<]*)</code>")
WORD = re.compile(r"\S+")


def on_files(files: Files, config: Any) -> Files:
    for pattern in BENCHMARK_FILES:
        for path in sorted((REPO_ROOT / "benchmarks").glob(pattern)):
            uri = path.relative_to(REPO_ROOT).as_posix()
            files.append(File.generated(config, uri, abs_src_path=str(path)))
    made: dict[str, str] = {}
    for page in PICTURE_PAGES:
        for name, content in page_outputs(Path(config["docs_dir"]) / page).items():
            uri = (Path(page).parent / name).as_posix()
            if uri in made or files.get_file_from_path(uri) is not None:
                msg = f"{page} writes {name}, which {made.get(uri, 'the docs folder')} has too"
                raise ValueError(msg)
            made[uri] = page
            files.append(File.generated(config, uri, content=content))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    if page.file.src_uri.startswith("benchmarks/"):
        return markdown
    depth = page.file.src_uri.count("/")
    return markdown.replace("](../" + "../" * depth + "benchmarks/", "](" + "../" * depth + "benchmarks/")


def on_page_content(html: str, page: Any, config: Any, files: Files) -> str:
    return INLINE_CODE.sub(unbroken_words, html)


def unbroken_words(code: re.Match[str]) -> str:
    """`<code>a-b c</code>` -> `<code><span class="unbroken">a-b</span> <span class="unbroken">c</span></code>`."""
    return "<code>" + WORD.sub(r'<span class="unbroken">\g<0></span>', code[1]) + "</code>"


def page_outputs(page: Path) -> dict[str, bytes]:
    """The files a page's ```python blocks write, run in order in a new folder: name -> content."""
    blocks = PYTHON_BLOCK.findall(page.read_text(encoding="utf-8"))
    namespace: dict[str, Any] = {"__name__": f"__{page.stem}__"}
    printed = io.StringIO()
    with tempfile.TemporaryDirectory() as folder, working_directory(Path(folder)), contextlib.redirect_stdout(printed):
        for number, code in enumerate(blocks, start=1):
            exec(compile(code, f"{page.name}, python block {number}", "exec"), namespace)
        return {path.name: path.read_bytes() for path in sorted(Path(folder).iterdir()) if path.is_file()}


@contextlib.contextmanager
def working_directory(folder: Path) -> Iterator[None]:
    previous = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(previous)
