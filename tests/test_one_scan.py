"""The per-query frame and its mean from one read of the source: collect the per-query plan, average it with
`lodestar_polars.mean`.  Measured as the bytes the process reads (Linux's /proc/self/io `rchar`)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import lodestar_polars
from lodestar_polars.io import scan_trec_qrels, scan_trec_run

PROC_IO = Path("/proc/self/io")


def bytes_read() -> int:
    for line in PROC_IO.read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


@pytest.fixture(scope="module")
def parquet_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(3)
    rows = 400_000
    frame = pl.DataFrame(
        {
            "query": np.repeat(np.arange(rows // 20), 20),
            "relevance": rng.integers(0, 4, rows),
            "score": rng.integers(0, 6, rows).astype(float),  # ties: the tie-averaged path
        }
    )
    path = tmp_path_factory.mktemp("one_scan") / "eval.parquet"
    frame.write_parquet(path)
    return path


@pytest.mark.skipif(not PROC_IO.exists(), reason="needs Linux's /proc/self/io to count the bytes read")
@pytest.mark.parametrize("engine", ["in-memory", "streaming"])
def test_per_query_frame_and_mean_read_the_source_once(
    parquet_file: Path, engine: Literal["in-memory", "streaming"]
) -> None:
    size = parquet_file.stat().st_size
    source = pl.scan_parquet(parquet_file)
    before = bytes_read()
    per_query = source.rank_metrics.ndcg(k=[5, 10]).collect(engine=engine)
    mean = lodestar_polars.mean(per_query)
    read = bytes_read() - before
    assert read < 1.5 * size, f"read {read / size:.2f}x the file's bytes"
    expected = source.rank_metrics.ndcg_mean(k=[5, 10]).collect()
    assert_frame_equal(mean, expected, rel_tol=1e-12, abs_tol=1e-12)


@pytest.mark.skipif(not PROC_IO.exists(), reason="needs Linux's /proc/self/io to count the bytes read")
def test_the_two_plan_collect_all_reads_it_twice(parquet_file: Path) -> None:
    """What the README warns against: Polars 2.1's collect_all does not share a scan between two plans."""
    size = parquet_file.stat().st_size
    source = pl.scan_parquet(parquet_file)
    before = bytes_read()
    pl.collect_all([source.rank_metrics.ndcg(k=10), source.rank_metrics.ndcg_mean(k=10)])
    assert bytes_read() - before > 1.5 * size


@pytest.fixture(scope="module")
def trec_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A TREC run (200 queries x 50 documents, tied scores) and judgments of a fifth of its documents plus
    some it did not retrieve, as text files."""
    rng = np.random.default_rng(5)
    folder = tmp_path_factory.mktemp("one_scan_trec")
    run_lines, qrels_lines = [], []
    for query in range(200):
        for rank, doc in enumerate(rng.choice(1000, 50, replace=False)):
            run_lines.append(f"q{query} Q0 d{doc} {rank + 1} {rng.integers(0, 20) / 4} sys\n")
            if rng.random() < 0.2:
                qrels_lines.append(f"q{query} 0 d{doc} {rng.integers(0, 3)}\n")
        qrels_lines += [f"q{query} 0 u{doc} {rng.integers(0, 3)}\n" for doc in range(5)]
    run, qrels = folder / "run.txt", folder / "qrels.txt"
    run.write_text("".join(run_lines))
    qrels.write_text("".join(qrels_lines))
    return run, qrels


# measures reading the judgments in different branches: the judged rows, the query totals (map, Rprec, bpref),
# the ideal order (ndcg, G's prefixes), the judged documents' count (num_rel)
JUDGED_MEASURES = ["ndcg@10", "ap", "rprec", "bpref", "g", "num_rel", "p@5"]


@pytest.mark.skipif(not PROC_IO.exists(), reason="needs Linux's /proc/self/io to count the bytes read")
def test_a_trec_qrels_file_is_parsed_once_per_plan(trec_files: tuple[Path, Path]) -> None:
    """The judgments are read by several branches of a plan; scan_trec_qrels caches them, so the file is read
    once (each branch parsed it again before: the plan held 4 reads of it for these measures)."""
    run_path, qrels_path = trec_files
    run = scan_trec_run(run_path)
    qrels = scan_trec_qrels(qrels_path)
    plan = run.rank_metrics.evaluate(JUDGED_MEASURES, qrels=qrels, doc="doc", ties="doc")
    assert plan.explain().count("TREC qrels lines") == 1
    before = bytes_read()
    per_query = plan.collect(engine="streaming")
    read = bytes_read() - before
    size = run_path.stat().st_size + qrels_path.stat().st_size
    assert read < 1.5 * size, f"read {read / size:.2f}x the two files' bytes"
    # the same numbers as from the frames read beforehand (to the last bits: the sums follow the rows' order)
    expected = (
        run.collect()
        .lazy()
        .rank_metrics.evaluate(JUDGED_MEASURES, qrels=qrels.collect().lazy(), doc="doc", ties="doc")
        .collect()
    )
    assert_frame_equal(per_query, expected, rel_tol=1e-12, abs_tol=1e-12)


@pytest.mark.skipif(not PROC_IO.exists(), reason="needs Linux's /proc/self/io to count the bytes read")
def test_the_trec_eval_mode_reads_the_run_and_judgments_once(
    trec_files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """`trec_eval -m all_trec` collects the evaluation with the run id (the last line's tag), the judgments'
    count and the gainful queries: one parse of each file (before: 2.7x the two files' bytes)."""
    from lodestar_polars import cli

    run_path, qrels_path = trec_files
    before = bytes_read()
    assert cli.main(["trec_eval", "-m", "all_trec", str(qrels_path), str(run_path)]) == 0
    read = bytes_read() - before
    size = run_path.stat().st_size + qrels_path.stat().st_size
    assert read < 1.5 * size, f"read {read / size:.2f}x the two files' bytes"
    assert "runid                 \tall\tsys\n" in capsys.readouterr().out


@pytest.mark.skipif(not PROC_IO.exists(), reason="needs Linux's /proc/self/io to count the bytes read")
@pytest.mark.parametrize("engine", ["in-memory", "streaming"])
def test_by_over_a_string_column_reads_the_source_once(
    tmp_path: Path, engine: Literal["in-memory", "streaming"]
) -> None:
    """Hashed keys (a String `by` column): each group's key values come from a second consumer of the run's
    rows (the distinct keys), which reads the cached rows, not the file again (without the cache: 1.35x)."""
    rng = np.random.default_rng(5)
    rows = 400_000
    frame = pl.DataFrame(
        {
            "system": pl.Series(rng.choice([f"system_{i}" for i in range(10)], rows)),
            "query": rng.integers(0, 4_000, rows),
            "relevance": rng.integers(0, 4, rows),
            "score": rng.random(rows),
        }
    )
    path = tmp_path / "by.parquet"
    frame.write_parquet(path)
    size = path.stat().st_size
    before = bytes_read()
    per_query = pl.scan_parquet(path).rank_metrics.ndcg(by="system", k=10).collect(engine=engine)
    read = bytes_read() - before
    assert read < 1.15 * size, f"read {read / size:.2f}x the file's bytes"
    # the numbers of one call per system (integer query keys: no hashing)
    per_system = pl.concat(
        frame.filter(pl.col("system") == system)
        .rank_metrics.ndcg(k=10)
        .select(pl.lit(system).alias("system"), pl.all())
        for system in sorted(frame["system"].unique())
    )
    assert_frame_equal(per_query, per_system, rel_tol=1e-12, abs_tol=1e-12)
