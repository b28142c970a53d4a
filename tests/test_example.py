"""The built-in example (`python -m lodestar_polars.example`, the Quick start's command): it leaves nothing in
the temp directory and prints small p-values readably."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from lodestar_polars import example


def test_the_example_leaves_nothing_in_the_temp_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # what TMPDIR sets, read once by tempfile
    example.main(["--queries", "40"])
    printed = capsys.readouterr().out
    assert str(tmp_path) in printed, "the example did not write under the temp directory given"
    assert list(tmp_path.iterdir()) == []


def test_the_example_keeps_its_files_in_the_folder_given(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    example.main(["--queries", "40", "--out", str(tmp_path / "out")])
    capsys.readouterr()
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == [
        "evaluation_log.parquet",
        "ndcg_per_query.parquet",
        "three_models.parquet",
    ]


def test_the_comparison_table_prints_no_zero_p_value(capsys: pytest.CaptureFixture[str]) -> None:
    """hybrid against bm25 on NDCG@10 over the 200 built-in queries: p ~ 1e-6 (far below 1e-4), which the
    table printed as 0.0000 with Polars' float_precision=4."""
    pytest.importorskip("scipy")
    example.main(["--queries", "40"])
    comparison = capsys.readouterr().out.partition("against bm25")[2]
    assert "< 1e-4" in comparison
    assert "0.0000" not in comparison


@pytest.mark.parametrize(
    ("p_value", "printed"),
    [
        (0.0, "< 1e-4"),
        (3.2e-9, "< 1e-4"),
        (9.99e-5, "< 1e-4"),
        (1e-4, "0.0001"),
        (0.00081, "0.0008"),
        (0.5, "0.5000"),
        (1.0, "1.0000"),
    ],
)
def test_format_p_value(p_value: float, printed: str) -> None:
    assert example.format_p_value(p_value) == printed
