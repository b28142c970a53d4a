"""The real trec_eval 10 binary as an oracle: built once per test process from the source tarball in
``../shared/reference`` (gcc and make), into a temporary folder of its own (each pytest-xdist worker that needs
it builds its copy in the worker's folder, about 3 s of CPU: no two processes write one file).

Tests that use it skip cleanly where the tarball or a C toolchain is absent, and fail instead when
``LODESTAR_REQUIRE_TREC_EVAL=1`` (CI sets it: there, the binary must be built).

    def test_x(trec_eval: TrecEval, tmp_path: Path) -> None:
        output = trec_eval.run(["-q", "-m", "all_trec"], qrels_path, run_path)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
TARBALL = Path(
    os.environ.get(
        "LODESTAR_TREC_EVAL_SOURCE", REPO_ROOT.parent / "shared" / "reference" / "trec_eval-10.0-source.tar.gz"
    )
)
REQUIRED = os.environ.get("LODESTAR_REQUIRE_TREC_EVAL") == "1"


def unavailable() -> str | None:
    """Why the trec_eval binary cannot be built here, or None."""
    if not TARBALL.is_file():
        return f"trec_eval's source tarball not found at {TARBALL} (set LODESTAR_TREC_EVAL_SOURCE)"
    missing = [tool for tool in ("gcc", "make") if shutil.which(tool) is None]
    if missing:
        return f"no {' or '.join(missing)} to build trec_eval from its source"
    return None


@dataclass(frozen=True)
class TrecEval:
    """The built binary."""

    path: Path

    def run(self, arguments: Sequence[str], qrels: Path | str, results: Path | str, stdin: str | None = None) -> str:
        """trec_eval's standard output for `trec_eval ARGUMENTS QRELS RESULTS` (it must exit 0)."""
        completed = self.call(arguments, qrels, results, stdin)
        if completed.returncode != 0:
            msg = f"trec_eval {' '.join(arguments)} failed ({completed.returncode}): {completed.stderr}"
            raise AssertionError(msg)
        return completed.stdout

    def call(
        self, arguments: Sequence[str], qrels: Path | str, results: Path | str, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """`trec_eval ARGUMENTS QRELS RESULTS`, whatever its exit code."""
        return subprocess.run(
            [str(self.path), *arguments, str(qrels), str(results)],
            capture_output=True,
            text=True,
            input=stdin,
            check=False,
        )


def build(folder: Path) -> TrecEval:
    with tarfile.open(TARBALL) as archive:
        archive.extractall(folder, filter="data")
    sources = next(path.parent for path in folder.rglob("trec_eval.c"))
    subprocess.run(["make", "-s", "trec_eval"], cwd=sources, check=True, capture_output=True)
    return TrecEval(sources / "trec_eval")


@pytest.fixture(scope="session")
def trec_eval(tmp_path_factory: pytest.TempPathFactory) -> TrecEval:
    """The real trec_eval 10, built from its source (skips cleanly where it cannot be built)."""
    reason = unavailable()
    if reason is not None:
        if REQUIRED:
            pytest.fail(f"LODESTAR_REQUIRE_TREC_EVAL=1 but {reason}")
        pytest.skip(reason)
    return build(tmp_path_factory.mktemp("trec_eval"))
