"""MkDocs hooks: the benchmark results of `benchmarks/` become pages of the site.

The guide links them as `../benchmarks/...` (the path from `docs/` on a code host); the site serves them under
`benchmarks/`, with the files they link to, and the links are rewritten to that place.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

REPO_ROOT = Path(__file__).resolve().parents[1]
BENCHMARK_FILES = ["RESULTS.md", "sink_results.md", "ab_results/*"]


def on_files(files: Files, config: Any) -> Files:
    for pattern in BENCHMARK_FILES:
        for path in sorted((REPO_ROOT / "benchmarks").glob(pattern)):
            uri = path.relative_to(REPO_ROOT).as_posix()
            files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    if page.file.src_uri.startswith("benchmarks/"):
        return markdown
    depth = page.file.src_uri.count("/")
    return markdown.replace("](../" + "../" * depth + "benchmarks/", "](" + "../" * depth + "benchmarks/")
