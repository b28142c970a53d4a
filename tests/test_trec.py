"""Run + qrels evaluation as trec_eval does it: the TREC readers, trec_eval's own output files, and
pytrec_eval-terrier (trec_eval's C code) on real and random runs."""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
import pytrec_eval
from hypothesis import HealthCheck, assume, given, settings

import lodestar_polars  # noqa: F401  (registers .rank_metrics)
from lodestar_polars import rank_metrics
from lodestar_polars.io import scan_trec_qrels, scan_trec_run
from tests.cases import Qrels, Run, qrels_frame, run_and_qrels, run_frame

TREC_CUTOFFS = [5, 10, 15, 20, 30, 100, 200, 500, 1000]
ALL_CUTOFFS: list[int | None] = [None, *TREC_CUTOFFS]
PRINTED = 5e-5  # trec_eval prints 4 decimals
EXACT = 1e-12


def trec_name(cutoff: int | None) -> str:
    return "ndcg" if cutoff is None else f"ndcg_cut_{cutoff}"


def our_name(cutoff: int | None) -> str:
    return "ndcg" if cutoff is None else f"ndcg@{cutoff}"


def trec_eval_output(path: Path) -> dict[str, dict[str, float]]:
    """trec_eval -q output as {query or 'all': {measure: value}} for the numeric measures."""
    values: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        measure, query, value = line.split()
        if measure in ("runid", "relstring"):
            continue
        values.setdefault(query, {})[measure] = float(value)
    return values


def _open_text(path: Path) -> Iterator[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as handle:
        yield from handle


def read_run_dict(path: Path) -> Run:
    """The run as pytrec_eval takes it, read with plain Python (independent of lodestar_polars.io)."""
    run: Run = {}
    for line in _open_text(path):
        fields = line.split()
        if fields:
            run.setdefault(fields[0], {})[fields[2]] = float(fields[4])
    return run


def read_qrels_dict(path: Path) -> Qrels:
    qrels: Qrels = {}
    for line in _open_text(path):
        fields = line.split()
        if fields:
            qrels.setdefault(fields[0], {})[fields[2]] = int(fields[3])
    return qrels


def pytrec_values(qrels: Qrels, run: Run, cutoffs: list[int]) -> dict[str, dict[str, float]]:
    measures = {"ndcg", "recip_rank", "ndcg_cut." + ",".join(str(k) for k in cutoffs)}
    result: dict[str, dict[str, float]] = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    return result


def ndcg_per_query(run: pl.DataFrame | pl.LazyFrame, qrels: pl.DataFrame | pl.LazyFrame, **options: object) -> dict:
    frame = rank_metrics(run.lazy()).ndcg(doc="doc", ties="doc", qrels=qrels, **options).collect()  # type: ignore[arg-type]
    return {row["query"]: row for row in frame.iter_rows(named=True)}


# --------------------------------------------------------------------------------------------------------
# trec_eval's own test files


class TestTrecEvalOutput:
    """qrels.test + results.test -> out.test.aq; qrels.test + results.trunc with -c -> out.test.aqc."""

    def test_ndcg_and_ndcg_cut_per_query(self, shared_data: Path) -> None:
        folder = shared_data / "trec_eval"
        expected = trec_eval_output(folder / "out.test.aq")
        run, qrels = scan_trec_run(folder / "results.test"), scan_trec_qrels(folder / "qrels.test")
        ours = ndcg_per_query(run, qrels, k=ALL_CUTOFFS, gain="linear")
        assert sorted(ours) == sorted(q for q in expected if q != "all")
        for query, row in ours.items():
            for cutoff in ALL_CUTOFFS:
                assert row[our_name(cutoff)] == pytest.approx(expected[query][trec_name(cutoff)], abs=PRINTED)

    def test_ndcg_and_ndcg_cut_means(self, shared_data: Path) -> None:
        folder = shared_data / "trec_eval"
        expected = trec_eval_output(folder / "out.test.aq")["all"]
        run, qrels = scan_trec_run(folder / "results.test"), scan_trec_qrels(folder / "qrels.test")
        mean = rank_metrics(run).ndcg_mean(doc="doc", ties="doc", qrels=qrels, k=ALL_CUTOFFS).collect()
        for cutoff in ALL_CUTOFFS:
            assert mean[our_name(cutoff)].item() == pytest.approx(expected[trec_name(cutoff)], abs=PRINTED)
        assert mean["queries"].item() == expected["num_q"]
        assert mean["queries_without_judgments"].item() == 0

    def test_reciprocal_rank(self, shared_data: Path) -> None:
        folder = shared_data / "trec_eval"
        expected = trec_eval_output(folder / "out.test.aq")
        run, qrels = scan_trec_run(folder / "results.test"), scan_trec_qrels(folder / "qrels.test")
        per_query = rank_metrics(run).reciprocal_rank(doc="doc", ties="doc", qrels=qrels).collect()
        for query, value in per_query.iter_rows():
            assert value == pytest.approx(expected[query]["recip_rank"], abs=PRINTED)
        mean = rank_metrics(run).reciprocal_rank_mean(doc="doc", ties="doc", qrels=qrels).collect()
        assert mean["reciprocal_rank"].item() == pytest.approx(expected["all"]["recip_rank"], abs=PRINTED)

    def test_missing_queries_zero_is_trec_eval_dash_c(self, shared_data: Path) -> None:
        folder = shared_data / "trec_eval"
        expected = trec_eval_output(folder / "out.test.aqc")
        run, qrels = scan_trec_run(folder / "results.trunc"), scan_trec_qrels(folder / "qrels.test")
        ours = ndcg_per_query(run, qrels, k=ALL_CUTOFFS, missing_queries="zero")
        assert sorted(ours) == sorted(q for q in expected if q != "all")  # 302 is judged but not in the run
        for query, row in ours.items():
            for cutoff in ALL_CUTOFFS:
                assert row[our_name(cutoff)] == pytest.approx(expected[query][trec_name(cutoff)], abs=PRINTED)
        mean = (
            rank_metrics(run)
            .ndcg_mean(doc="doc", ties="doc", qrels=qrels, k=ALL_CUTOFFS, missing_queries="zero")
            .collect()
        )
        for cutoff in ALL_CUTOFFS:
            assert mean[our_name(cutoff)].item() == pytest.approx(expected["all"][trec_name(cutoff)], abs=PRINTED)
        assert mean["queries"].item() == expected["all"]["num_q"]
        rr = (
            rank_metrics(run).reciprocal_rank_mean(doc="doc", ties="doc", qrels=qrels, missing_queries="zero").collect()
        )
        assert rr["reciprocal_rank"].item() == pytest.approx(expected["all"]["recip_rank"], abs=PRINTED)

    def test_skip_leaves_out_judged_queries_missing_from_the_run(self, shared_data: Path) -> None:
        folder = shared_data / "trec_eval"
        run, qrels = scan_trec_run(folder / "results.trunc"), scan_trec_qrels(folder / "qrels.test")
        assert sorted(ndcg_per_query(run, qrels)) == ["301", "303"]

    def test_graded_levels_with_negative_judgments(self, shared_data: Path) -> None:
        folder = shared_data / "trec_eval"
        run, qrels = scan_trec_run(folder / "results.test"), scan_trec_qrels(folder / "qrels.rel_level")
        expected = pytrec_values(
            read_qrels_dict(folder / "qrels.rel_level"), read_run_dict(folder / "results.test"), TREC_CUTOFFS
        )
        ours = ndcg_per_query(run, qrels, k=ALL_CUTOFFS)
        assert sorted(ours) == sorted(expected)
        for query, row in ours.items():
            for cutoff in ALL_CUTOFFS:
                assert row[our_name(cutoff)] == pytest.approx(expected[query][trec_name(cutoff)], abs=EXACT, rel=0)
        mean = rank_metrics(run).ndcg_mean(doc="doc", ties="doc", qrels=qrels, k=[None, 5, 10]).collect()
        assert mean.select("ndcg", "ndcg@5", "ndcg@10").row(0) == pytest.approx((0.3894, 0.2768, 0.2656), abs=PRINTED)


@pytest.mark.parametrize("engine", ["in-memory", "streaming"])
def test_robust03_matches_pytrec_eval(shared_data: Path, engine: str) -> None:
    folder = shared_data / "robust03"
    run_path, qrels_path = folder / "input.uic0301.gz", folder / "robust03_cs_qrels.txt.gz"
    expected = pytrec_values(read_qrels_dict(qrels_path), read_run_dict(run_path), TREC_CUTOFFS)
    run, qrels = scan_trec_run(run_path), scan_trec_qrels(qrels_path)
    plan = rank_metrics(run).ndcg(doc="doc", ties="doc", qrels=qrels, k=ALL_CUTOFFS)
    ours = plan.collect(engine=engine)  # type: ignore[call-overload]  # engine is a valid literal
    assert ours["query"].to_list() == sorted(expected)
    for row in ours.iter_rows(named=True):
        for cutoff in ALL_CUTOFFS:
            assert row[our_name(cutoff)] == pytest.approx(expected[row["query"]][trec_name(cutoff)], abs=EXACT, rel=0)
    rr = rank_metrics(run).reciprocal_rank(doc="doc", ties="doc", qrels=qrels).collect()
    assert rr["reciprocal_rank"].to_list() == pytest.approx(
        [expected[q]["recip_rank"] for q in rr["query"]], abs=EXACT, rel=0
    )


# --------------------------------------------------------------------------------------------------------
# random runs and judgments against pytrec_eval (no shared data needed)

# doc ids whose byte order differs from their "natural" order: trec_eval compares them with strcmp


RANDOM_CUTOFFS = [1, 2, 3, 5, 10]


def _evaluated(run: Run, qrels: Qrels) -> dict[str, dict[str, float]]:
    return pytrec_values(qrels, run, RANDOM_CUTOFFS)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=run_and_qrels())
def test_random_ndcg_matches_pytrec_eval(data: tuple[Run, Qrels]) -> None:
    run, qrels = data
    expected = _evaluated(run, qrels)
    ours = ndcg_per_query(run_frame(run), qrels_frame(qrels), k=[None, *RANDOM_CUTOFFS])
    assert sorted(ours) == sorted(expected)
    for query, row in ours.items():
        for cutoff in [None, *RANDOM_CUTOFFS]:
            assert row[our_name(cutoff)] == pytest.approx(expected[query][trec_name(cutoff)], abs=EXACT, rel=0)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=run_and_qrels())
def test_random_reciprocal_rank_matches_pytrec_eval(data: tuple[Run, Qrels]) -> None:
    run, qrels = data
    expected = _evaluated(run, qrels)
    frame = run_frame(run).rank_metrics.reciprocal_rank(doc="doc", ties="doc", qrels=qrels_frame(qrels), threshold=0)
    assert frame["query"].to_list() == sorted(expected)
    assert frame["reciprocal_rank"].to_list() == pytest.approx(
        [expected[q]["recip_rank"] for q in frame["query"]], abs=EXACT, rel=0
    )


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=run_and_qrels())
def test_random_means_skip_and_zero(data: tuple[Run, Qrels]) -> None:
    """skip: the mean over judged queries in the run (pytrec_eval's queries); zero: judged queries missing
    from the run count 0 in the mean (trec_eval -c)."""
    run, qrels = data
    expected = _evaluated(run, qrels)
    judged_missing = [q for q in qrels if q not in run]
    unjudged = [q for q in run if q not in qrels]
    assume(expected)
    for missing, extra in (("skip", 0), ("zero", len(judged_missing))):
        mean = run_frame(run).rank_metrics.ndcg_mean(
            doc="doc",
            ties="doc",
            qrels=qrels_frame(qrels),
            k=[None, 5],
            missing_queries=missing,  # type: ignore[arg-type]  # one of the two literals
        )
        count = len(expected) + extra
        for cutoff in (None, 5):
            total = sum(values[trec_name(cutoff)] for values in expected.values())
            assert mean[our_name(cutoff)].item() == pytest.approx(total / count, abs=EXACT, rel=0)
        assert mean["queries"].item() == count
        assert mean["queries_without_judgments"].item() == len(unjudged)


PYTREC_EVAL_CRASHES = "pytrec_eval-terrier 0.5.11 corrupts memory on a query judged only below 0"


@pytest.mark.parametrize("level", [-1, -2, -5, -127])
def test_all_negative_judgments(level: int) -> None:
    """A query judged only below 0 scores as one judged 0 everywhere (trec_eval: negative = not relevant).
    The oracle is pytrec_eval on the judgments with negative levels replaced by 0 (see PYTREC_EVAL_CRASHES)."""
    run: Run = {"q": {"a": 2.0, "b": 1.0, "c": 1.0}, "r": {"a": 1.0, "x": 0.5}}
    qrels: Qrels = {"q": {"a": level, "b": 1, "d": level}, "r": {"a": level, "z": level}}
    clamped = {q: {d: max(level, 0) for d, level in docs.items()} for q, docs in qrels.items()}
    expected = _evaluated(run, clamped)
    ours = ndcg_per_query(run_frame(run), qrels_frame(qrels), k=[None, *RANDOM_CUTOFFS])
    for query in ("q", "r"):
        for cutoff in [None, *RANDOM_CUTOFFS]:
            assert ours[query][our_name(cutoff)] == pytest.approx(expected[query][trec_name(cutoff)], abs=EXACT, rel=0)
    rr = run_frame(run).rank_metrics.reciprocal_rank(doc="doc", ties="doc", qrels=qrels_frame(qrels))
    assert rr["reciprocal_rank"].to_list() == pytest.approx([expected["q"]["recip_rank"], 0.0], abs=EXACT)
    assert ours["r"]["ndcg"] == 0.0


def test_ties_doc_is_pytrec_evals_order() -> None:
    """pytrec_eval (trec_eval) puts the greatest doc id first among equal scores; so does ties='doc'."""
    qrels: Qrels = {"q": {"a": 1, "b": 0, "z": 0}}
    run: Run = {"q": {"a": 1.0, "b": 1.0, "z": 1.0}}
    assert pytrec_values(qrels, run, [1])["q"]["recip_rank"] == pytest.approx(1 / 3)
    ours = run_frame(run).rank_metrics.reciprocal_rank(doc="doc", ties="doc", qrels=qrels_frame(qrels))
    assert ours["reciprocal_rank"].item() == pytest.approx(1 / 3)


def test_random_run_through_the_readers(tmp_path: Path) -> None:
    """Files written with mixed separators read back to the same numbers as the frames they came from."""
    run: Run = {"7": {"D1": 2.0, "D10": 1.0, "D2": 1.0, "x": 0.5}, "8": {"a": 1.0}, "9": {"b": 3.0}}
    qrels: Qrels = {"7": {"D10": 2, "D2": 1, "y": 3, "x": -1}, "8": {"a": 0}, "10": {"c": 1}}
    run_lines = [f"{q} \tQ0  {d}\t{i} {s}  tag" for q, docs in run.items() for i, (d, s) in enumerate(docs.items())]
    (tmp_path / "run").write_text("\n".join(run_lines) + "\n\n")
    with gzip.open(tmp_path / "qrels.gz", "wt") as handle:
        handle.write("".join(f"{q}\t0 {d}   {r}\n" for q, docs in qrels.items() for d, r in docs.items()))
    from_files = ndcg_per_query(scan_trec_run(tmp_path / "run"), scan_trec_qrels(tmp_path / "qrels.gz"), k=[None, 2])
    from_frames = ndcg_per_query(run_frame(run), qrels_frame(qrels), k=[None, 2])
    assert from_files == from_frames
    expected = _evaluated(run, qrels)
    assert sorted(from_files) == sorted(expected) == ["7", "8"]
    assert from_files["7"]["ndcg@2"] == pytest.approx(expected["7"]["ndcg_cut_2"], abs=EXACT, rel=0)


# --------------------------------------------------------------------------------------------------------
# the readers


class TestReaders:
    def test_run_columns_and_dtypes(self, tmp_path: Path) -> None:
        path = tmp_path / "run.txt"
        path.write_text("301 Q0 FR940202-2-00150 1 2.129133 STANDARD\n301\tQ0\tdoc-2\t2\t  -1e-3\tSTANDARD\n")
        frame = scan_trec_run(path).collect()
        assert frame.schema == pl.Schema(
            {
                "query": pl.String,
                "q0": pl.String,
                "doc": pl.String,
                "rank": pl.Int64,
                "score": pl.Float64,
                "tag": pl.String,
            }
        )
        assert frame.rows() == [
            ("301", "Q0", "FR940202-2-00150", 1, 2.129133, "STANDARD"),
            ("301", "Q0", "doc-2", 2, -0.001, "STANDARD"),
        ]

    def test_qrels_columns_and_dtypes(self, tmp_path: Path) -> None:
        path = tmp_path / "qrels.txt"
        path.write_text("301 0 CR93E-10279 0\n  0301\t0   d2 -1  \n")
        frame = scan_trec_qrels(path).collect()
        assert frame.schema == pl.Schema(
            {"query": pl.String, "iteration": pl.String, "doc": pl.String, "relevance": pl.Int64}
        )
        assert frame.rows() == [("301", "0", "CR93E-10279", 0), ("0301", "0", "d2", -1)]  # ids stay strings

    def test_readers_are_lazy(self, tmp_path: Path) -> None:
        path = tmp_path / "run.txt"
        path.write_text("1 Q0 d 1 1.0 t\n")
        assert isinstance(scan_trec_run(path), pl.LazyFrame)
        assert isinstance(scan_trec_qrels(path), pl.LazyFrame)

    def test_gzip(self, tmp_path: Path) -> None:
        path = tmp_path / "run.gz"
        with gzip.open(path, "wt") as handle:
            handle.write("1 Q0 d 1 1.5 t\n2 Q0 e 1 0.5 t\n")
        assert scan_trec_run(path).collect()["score"].to_list() == [1.5, 0.5]

    def test_blank_lines_and_windows_line_ends_are_skipped(self, tmp_path: Path) -> None:
        path = tmp_path / "qrels.txt"
        path.write_bytes(b"1 0 a 1\r\n\r\n   \n1 0 b 0\r\n")
        assert scan_trec_qrels(path).collect()["doc"].to_list() == ["a", "b"]

    def test_a_lone_carriage_return_ends_a_line(self, tmp_path: Path) -> None:
        """Files with classic Mac line ends (CR only), and files mixing CR, LF and CRLF, read as their lines."""
        run = tmp_path / "run.txt"
        run.write_bytes(b"1 Q0 a 1 0.5 t\r1 Q0 b 2 0.4 t\r\r2 Q0 c 1 0.3 t\r")
        assert scan_trec_run(run).collect()["doc"].to_list() == ["a", "b", "c"]
        qrels = tmp_path / "qrels.txt"
        qrels.write_bytes(b"1 0 a 1\r\n1 0 b 0\r1 0 c 2\n1 0 d 1")
        assert scan_trec_qrels(qrels).collect()["doc"].to_list() == ["a", "b", "c", "d"]

    def test_a_malformed_line_is_counted_with_cr_line_ends(self, tmp_path: Path) -> None:
        qrels = tmp_path / "qrels.txt"
        qrels.write_bytes(b"1 0 a 1\r\n1 0 b 0\r1 0 c 2\n1 0 d\r1 0 e 1\n")
        with pytest.raises(ValueError, match=r"qrels.txt, line 4\): expected 4 whitespace-separated fields, got 3"):
            scan_trec_qrels(qrels).collect()

    @pytest.mark.parametrize("chunk_bytes", [1, 2, 3, 5, 1 << 20])
    def test_the_python_error_path_splits_lines_as_bytes_splitlines_does(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk_bytes: int
    ) -> None:
        """Read in chunks: a CRLF split across two chunks is still one line end (oracle: bytes.splitlines,
        which ends lines at LF, CRLF and CR)."""
        from lodestar_polars import io as trec_io

        monkeypatch.setattr(trec_io, "_CHUNK_BYTES", chunk_bytes)
        data = b"a\n\r\nb\r\r\nc\rd\r\n\re\x0bf\x0c\r"
        path = tmp_path / "lines.txt"
        path.write_bytes(data)
        assert list(trec_io._raw_lines(str(path))) == data.splitlines()

    def test_run_fields_after_the_sixth_are_ignored_as_trec_eval_does(self, tmp_path: Path) -> None:
        path = tmp_path / "run.txt"
        path.write_text("301\tQ0\tFBIS3-27619\t99\t  2.138276\tSTANDARD more junk at\n")
        assert scan_trec_run(path).collect().row(0) == ("301", "Q0", "FBIS3-27619", 99, 2.138276, "STANDARD")

    def test_shared_files_read_completely(self, shared_data: Path) -> None:
        assert scan_trec_run(shared_data / "robust03" / "input.uic0301.gz").collect().height == 99_969
        assert scan_trec_qrels(shared_data / "robust03" / "robust03_cs_qrels.txt.gz").collect().height == 128_796
        assert scan_trec_run(shared_data / "trec_eval" / "results.trunc").collect().height == 584

    def test_missing_file(self, tmp_path: Path) -> None:
        with pytest.raises(FileNotFoundError, match="not found"):
            scan_trec_run(tmp_path / "nope")


def _error_message(path: Path, line: int) -> str:
    return re.escape(f"{path}, line {line}")


class TestReaderErrors:
    @pytest.mark.parametrize(
        ("bad_line", "reason"),
        [
            ("1 Q0 d3 3 0.5", "expected at least 6 whitespace-separated fields, got 5"),
            ("1 Q0 d3 three 0.5 t", "rank field 'three' is not an integer rank"),
            ("1 Q0 d3 3.0 0.5 t", "rank field '3.0' is not an integer rank"),
            ("1 Q0 d3 3 high t", "score field 'high' is not a numeric score"),
            ("1 Q0 d3 3 0,5 t", "score field '0,5' is not a numeric score"),
        ],
    )
    @pytest.mark.parametrize("engine", ["in-memory", "streaming"])
    def test_malformed_run_line(self, tmp_path: Path, bad_line: str, reason: str, engine: str) -> None:
        path = tmp_path / "run.txt"
        path.write_text(f"1 Q0 d1 1 0.9 t\n\n1 Q0 d2 2 0.7 t\n{bad_line}\n1 Q0 d4 4 0.1 t\n")
        with pytest.raises(ValueError, match=_error_message(path, 4)) as error:
            scan_trec_run(path).collect(engine=engine)  # type: ignore[call-overload]  # a valid literal
        assert reason in str(error.value)

    @pytest.mark.parametrize(
        ("bad_line", "reason"),
        [
            ("1 0 d3", "expected 4 whitespace-separated fields, got 3"),
            ("1 0 d3 1 extra", "expected 4 whitespace-separated fields, got 5"),
            ("1 0 d3 high", "relevance field 'high' is not an integer relevance level"),
            ("1 0 d3 1.5", "relevance field '1.5' is not an integer relevance level"),
        ],
    )
    def test_malformed_qrels_line(self, tmp_path: Path, bad_line: str, reason: str) -> None:
        path = tmp_path / "qrels.txt"
        path.write_text(f"1 0 d1 1\n1 0 d2 0\n{bad_line}\n")
        with pytest.raises(ValueError, match=_error_message(path, 3)) as error:
            scan_trec_qrels(path).collect()
        assert reason in str(error.value)

    def test_error_names_the_first_malformed_line_of_a_large_gzip_file(self, tmp_path: Path) -> None:
        path = tmp_path / "run.gz"
        lines = [f"{i // 100} Q0 d{i} {i} {1 / (i + 1)} t" for i in range(200_000)]
        lines[150_000] = "oops"
        lines[170_000] = "1 Q0 d 1 x t"
        with gzip.open(path, "wt") as handle:
            handle.write("\n".join(lines) + "\n")
        for engine in ("in-memory", "streaming"):
            with pytest.raises(ValueError, match=_error_message(path, 150_001)):
                scan_trec_run(path).collect(engine=engine)  # type: ignore[call-overload]  # a valid literal

    def test_the_check_survives_projection(self, tmp_path: Path) -> None:
        path = tmp_path / "run.txt"
        path.write_text("1 Q0 d1 1 0.9 t\n1 Q0 d2 x 0.7 t\n")
        with pytest.raises(ValueError, match=_error_message(path, 2)):
            scan_trec_run(path).select("query").collect()

    def test_the_error_surfaces_through_rank_metrics(self, tmp_path: Path) -> None:
        run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
        run.write_text("1 Q0 d1 1 0.9 t\n")
        qrels.write_text("1 0 d1 1\n1 0 d2\n")
        plan = rank_metrics(scan_trec_run(run)).ndcg(doc="doc", ties="doc", qrels=scan_trec_qrels(qrels))
        with pytest.raises(ValueError, match=_error_message(qrels, 2)):
            plan.collect()


class TestEncodingAndOverflow:
    @pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
    @pytest.mark.parametrize("engine", ["in-memory", "streaming"])
    @pytest.mark.parametrize("kind", ["run", "qrels"])
    def test_a_non_utf8_line_is_named(self, tmp_path: Path, kind: str, engine: str, compress: bool) -> None:
        good, bad = (
            (b"1 Q0 d1 1 0.9 t\n", b"1 Q0 d\xe92 2 0.7 t\n") if kind == "run" else (b"1 0 d1 1\n", b"1 0 d\xe92 0\n")
        )
        content = good + b"\n" + good.replace(b"d1", b"d0") + bad + good.replace(b"d1", b"d3")
        path = tmp_path / (f"{kind}.gz" if compress else f"{kind}.txt")
        path.write_bytes(gzip.compress(content) if compress else content)
        reader = scan_trec_run if kind == "run" else scan_trec_qrels
        with pytest.raises(ValueError, match=_error_message(path, 4)) as error:
            reader(path).collect(engine=engine)  # type: ignore[call-overload]  # a valid literal
        assert f"malformed TREC {kind} line" in str(error.value)
        offset = bad.index(0xE9) + 1  # 1-based
        assert f"not UTF-8 text (byte 0xe9 at byte {offset} of the line)" in str(error.value)
        assert repr(bad.rstrip(b"\n")) in str(error.value)

    @pytest.mark.parametrize("engine", ["in-memory", "streaming"])
    def test_the_first_bad_line_wins_whether_encoding_or_fields(self, tmp_path: Path, engine: str) -> None:
        lines = [f"{i // 100} Q0 d{i} {i} {1 / (i + 1)} t".encode() for i in range(200_000)]
        lines[120_000] = b"1 Q0 d 1 x t"  # a bad score before the bad byte: named first
        lines[160_000] = b"1 Q0 d\xff 1 0.5 t"
        path = tmp_path / "run.gz"
        path.write_bytes(gzip.compress(b"\n".join(lines) + b"\n"))
        with pytest.raises(ValueError, match=_error_message(path, 120_001) + ".*score field 'x'"):
            scan_trec_run(path).collect(engine=engine)  # type: ignore[call-overload]  # a valid literal
        lines[120_000] = b"1 Q0 d 1 0.5 t"
        lines[180_000] = b"oops"  # a bad line after the bad byte: the byte is named
        path.write_bytes(gzip.compress(b"\n".join(lines) + b"\n"))
        with pytest.raises(ValueError, match=_error_message(path, 160_001) + ".*not UTF-8 text \\(byte 0xff"):
            scan_trec_run(path).collect(engine=engine)  # type: ignore[call-overload]  # a valid literal

    def test_valid_utf8_is_read_as_text(self, tmp_path: Path) -> None:
        path = tmp_path / "qrels.txt"
        path.write_text("1 0 d\u00e9\ufffd 1\n", encoding="utf-8")  # U+FFFD itself is valid text
        assert scan_trec_qrels(path).collect()["doc"].to_list() == ["d\u00e9\ufffd"]

    @pytest.mark.parametrize(
        ("kind", "line", "field"),
        [
            ("qrels", "1 0 d1 9223372036854775808", "relevance"),
            ("qrels", "1 0 d1 -9223372036854775809", "relevance"),
            ("qrels", "1 0 d1 99999999999999999999999", "relevance"),
            ("run", "1 Q0 d1 9223372036854775808 0.5 t", "rank"),
        ],
    )
    def test_an_integer_too_large_for_int64_says_so(self, tmp_path: Path, kind: str, line: str, field: str) -> None:
        path = tmp_path / f"{kind}.txt"
        path.write_text(f"{line}\n")
        reader = scan_trec_run if kind == "run" else scan_trec_qrels
        value = line.split()[3]
        bounds = "(range -9223372036854775808 to 9223372036854775807)"
        expected = f"{field} field '{value}' is an integer too large for Int64 {bounds}"
        with pytest.raises(ValueError, match=_error_message(path, 1) + ".*" + re.escape(expected)):
            reader(path).collect()

    def test_the_largest_int64_is_read(self, tmp_path: Path) -> None:
        path = tmp_path / "qrels.txt"
        path.write_text("1 0 d1 9223372036854775807\n1 0 d2 -9223372036854775808\n")
        assert scan_trec_qrels(path).collect()["relevance"].to_list() == [2**63 - 1, -(2**63)]


class TestQrelsErrors:
    def test_duplicated_judgment(self) -> None:
        run = pl.DataFrame({"query": ["1", "1"], "doc": ["a", "b"], "score": [1.0, 0.5]})
        qrels = pl.DataFrame({"query": ["1", "1", "1"], "doc": ["a", "b", "a"], "relevance": [1, 0, 2]})
        with pytest.raises(ValueError, match=r"qrels list doc 'a' twice for query '1'"):
            run.rank_metrics.ndcg(doc="doc", ties="doc", qrels=qrels)

    def test_duplicated_judgment_from_a_file(self, tmp_path: Path) -> None:
        run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
        run.write_text("1 Q0 d1 1 0.9 t\n")
        qrels.write_text("1 0 d1 1\n1 0 d1 0\n")
        with pytest.raises(ValueError, match="twice"):
            rank_metrics(scan_trec_run(run)).ndcg(doc="doc", ties="doc", qrels=scan_trec_qrels(qrels)).collect()

    def test_duplicated_doc_in_the_run(self) -> None:
        run = pl.DataFrame({"query": ["1", "1"], "doc": ["a", "a"], "score": [1.0, 0.5]})
        qrels = pl.DataFrame({"query": ["1"], "doc": ["a"], "relevance": [1]})
        with pytest.raises(ValueError, match="more than once"):
            run.rank_metrics.ndcg(doc="doc", ties="doc", qrels=qrels)

    def test_query_dtype_mismatch(self) -> None:
        run = pl.DataFrame({"query": [1], "doc": ["a"], "score": [1.0]})
        qrels = pl.DataFrame({"query": ["1"], "doc": ["a"], "relevance": [1]})
        with pytest.raises(pl.exceptions.SchemaError, match=r"query column 'query'.*cast one"):
            run.rank_metrics.ndcg(doc="doc", qrels=qrels)

    def test_doc_dtype_mismatch_from_the_readers(self, tmp_path: Path) -> None:
        qrels = tmp_path / "qrels.txt"
        qrels.write_text("1 0 7 1\n")
        run = pl.LazyFrame({"query": ["1"], "doc": [7], "score": [1.0]})
        with pytest.raises(pl.exceptions.SchemaError, match=r"doc column 'doc'"):
            rank_metrics(run).ndcg(doc="doc", qrels=scan_trec_qrels(qrels))


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b"\r"])
def test_the_first_malformed_line_is_found_again_from_python(tmp_path: Path, ending: bytes) -> None:
    """The error path of a running plan reads the file again in Python (never a second Polars query, which
    can deadlock the plan's threads): the first malformed line, or a non-UTF-8 line before it (hand-made
    files: line 4 is malformed, line 6 is not UTF-8, line 2 is blank; then the reverse)."""
    from lodestar_polars import io as trec_io

    lines = [b"q 0 a 1", b"", b"q 0 b +2", b"q 0 c x", b"q 0 d 1", b"q 0 \xff 1"]
    malformed_first = tmp_path / "a.txt"
    malformed_first.write_bytes(ending.join(lines) + ending)
    assert trec_io._first_malformed_line_of_file(str(malformed_first), trec_io._QRELS) == (4, "q 0 c x")
    not_utf8_first = tmp_path / "b.txt"
    not_utf8_first.write_bytes(ending.join([*lines[:3], lines[5], lines[3]]) + ending)
    with pytest.raises(ValueError, match=r"line 4\): not UTF-8 text \(byte 0xff at byte 5 of the line\)"):
        trec_io._first_malformed_line_of_file(str(not_utf8_first), trec_io._QRELS)
    clean = tmp_path / "c.txt"
    clean.write_bytes(ending.join([*lines[:3], b"q 0 e 13"]) + ending)
    assert trec_io._first_malformed_line_of_file(str(clean), trec_io._QRELS) is None
