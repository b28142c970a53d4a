"""Measures averaged over judgment groups (`lodestar_polars.judgment_groups`, `trec_eval -R qrels_jg`): a small
case derived by hand, the CLI against the real trec_eval 10 binary on random qrels_jg files (several groups per
query, groups without a relevant document, tied scores, queries missing on either side; -q, -c, -M, -J, -l and
measure parameters), `-R qrels` on such a file (trec_eval ignores the second field), and the refusals."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lodestar_polars import judgment_groups, rank_metrics
from tests.cases import DOC_IDS, SCORES, Run
from tests.helpers import call_ours, ours
from tests.trec_eval_binary import TrecEval

JudgmentGroups = list[tuple[str, str, str, int]]  # (query, group, doc, level)

# group ids whose string order (trec_eval adds a query's groups in strcmp order) differs from a numeric one
GROUP_IDS = ["0", "1", "10", "2", "U", "u"]
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


# --- a small case by hand -----------------------------------------------------------------------------------

# run q1: a 3.0, b 2.0, c 1.0, d 1.0 -> with ties="doc" (doc id descending within a tie): a, b, d, c
RUN = pl.DataFrame(
    {
        "query": ["q1", "q1", "q1", "q1", "q3"],
        "doc": ["a", "b", "c", "d", "a"],
        "score": [3.0, 2.0, 1.0, 1.0, 1.0],
    }
)
# u1: a and c relevant (R = 2); u2: b, d and x (not retrieved) relevant (R = 3); u3: nothing relevant (c is
# judged at a negative level: in the pool, not assessed); q2 is judged but not in the run, q3 in the run only
QRELS = pl.DataFrame(
    [
        ("q1", "u1", "a", 1),
        ("q1", "u1", "c", 1),
        ("q1", "u1", "b", 0),
        ("q1", "u2", "b", 2),
        ("q1", "u2", "d", 1),
        ("q1", "u2", "x", 1),
        ("q1", "u3", "a", 0),
        ("q1", "u3", "c", -1),
        ("q2", "u1", "a", 1),
    ],
    schema={"query": pl.String, "group": pl.String, "doc": pl.String, "relevance": pl.Int64},
    orient="row",
)
MEASURES = ["ap", "p@2", "rprec_mult@0.5"]


def test_hand_derived_averages_over_the_groups() -> None:
    """Ranking a, b, d, c.  u1 (relevant a at 1, c at 4; R 2): AP (1/1 + 2/4) / 2 = 3/4, P@2 1/2, Rprec_mult
    at 0.5: c = floor(0.5 x 2 + 0.9) = 1, P@1 = 1.  u2 (relevant b at 2, d at 3, x not retrieved; R 3): AP
    (1/2 + 2/3) / 3 = 7/18, P@2 1/2, c = floor(1.5 + 0.9) = 2, P@2 = 1/2.  u3 (R 0): 0 for each.  q1 averages
    its three groups: AP (3/4 + 7/18 + 0) / 3 = 41/108, P@2 (1/2 + 1/2 + 0) / 3 = 1/3, Rprec_mult (1 + 1/2 + 0)
    / 3 = 1/2.  q3 has no judgments: dropped; q2 is not in the run: skipped, or 0 with missing_queries="zero"."""
    got = judgment_groups.evaluate(RUN, QRELS, MEASURES, ties="doc")
    assert got.columns == ["query", *MEASURES]
    assert got.rows() == [("q1", pytest.approx(41 / 108), pytest.approx(1 / 3), pytest.approx(1 / 2))]
    zero = judgment_groups.evaluate(RUN, QRELS, MEASURES, ties="doc", missing_queries="zero")
    assert zero.rows()[1] == ("q2", 0.0, 0.0, 0.0)


def test_hand_derived_options_apply_per_group() -> None:
    """judged_only removes each group's unjudged documents: u1 keeps a, b, c (AP (1/1 + 2/3) / 2 = 5/6), u2 keeps
    b, d (AP (1/1 + 2/2) / 3 = 2/3), u3 keeps a (c's level is negative; AP 0): (5/6 + 2/3 + 0) / 3 = 1/2.  With
    no_relevant=None, u3 has no AP and leaves the average: (3/4 + 7/18) / 2 = 41/72.  threshold=1 (trec_eval
    -l 2): only u2's b is relevant anywhere (R 1, at 2: AP 1/2; u1 and u3 score 0): (0 + 1/2 + 0) / 3 = 1/6."""
    judged = judgment_groups.evaluate(RUN, QRELS, ["ap"], ties="doc", judged_only=True)
    assert judged["ap"].to_list() == [pytest.approx(1 / 2)]
    left_out = judgment_groups.evaluate(RUN, QRELS, ["ap"], ties="doc", no_relevant=None)
    assert left_out["ap"].to_list() == [pytest.approx(41 / 72)]
    level_two = judgment_groups.evaluate(RUN, QRELS, ["ap"], ties="doc", threshold=1)
    assert level_two["ap"].to_list() == [pytest.approx(1 / 6)]


def test_hand_derived_case_through_the_command_line(tmp_path: Path) -> None:
    """The same case as trec_eval -R qrels_jg prints it (the binary agrees: test_cli_equals_trec_eval)."""
    qrels_path, run_path = write_files(tmp_path, dict_run(RUN), list(QRELS.iter_rows()))
    out = ours(
        ["-q", "-c", "-R", "qrels_jg", "-m", "map_avgjg", "-m", "P_avgjg.2", "-m", "Rprec_mult_avgjg.0.5"],
        qrels_path,
        run_path,
    )
    assert out == (
        "map_avgjg             \tq1\t0.3796\n"
        "P_avgjg_2             \tq1\t0.3333\n"
        "Rprec_mult_avgjg_0.50 \tq1\t0.5000\n"
        "map_avgjg             \tq2\t0.0000\n"
        "P_avgjg_2             \tq2\t0.0000\n"
        "Rprec_mult_avgjg_0.50 \tq2\t0.0000\n"
        "map_avgjg             \tall\t0.1898\n"
        "P_avgjg_2             \tall\t0.1667\n"
        "Rprec_mult_avgjg_0.50 \tall\t0.2500\n"
    )


def test_lazy_in_lazy_out() -> None:
    plan = judgment_groups.evaluate(RUN.lazy(), QRELS.lazy(), "ap", ties="doc")
    assert isinstance(plan, pl.LazyFrame)
    assert plan.collect()["ap"].to_list() == [pytest.approx(41 / 108)]


def test_adds_the_groups_in_group_id_order_as_trec_eval() -> None:
    """P@20 of groups "0" (no hit), "10" (2 hits), "2" (4) and "3" (6): trec_eval adds them one by one in the
    order of their ids as strings, ((0 + 0.1) + 0.2) + 0.3 = 0.6000000000000001, then divides by 4:
    0.15000000000000002.  In numeric order ("0", "2", "3", "10") the sum is 0.6, and Polars' mean of the four
    gives 0.15."""
    run = pl.DataFrame(
        {"query": ["q"] * 20, "doc": [f"d{i:02d}" for i in range(20)], "score": [20.0 - i for i in range(20)]}
    )
    hits = {"0": 0, "2": 4, "3": 6, "10": 2}  # listed in numeric order
    qrels = pl.DataFrame(
        [("q", "0", "unretrieved", 1)]
        + [("q", group, f"d{i:02d}", 1) for group, count in hits.items() for i in range(count)],
        schema={"query": pl.String, "group": pl.String, "doc": pl.String, "relevance": pl.Int64},
        orient="row",
    )
    got = judgment_groups.evaluate(run, qrels, ["p@20"], ties="doc")["p@20"].item()
    assert got == (0 / 20 + 2 / 20 + 4 / 20 + 6 / 20) / 4 == 0.15000000000000002


def test_precision_divides_exactly_by_its_cutoff() -> None:
    """3 hits at P@20 are 3 / 20 = 0.15 as C divides, also beside another query (where Polars 2.1 divides a
    column by the scalar 20 as a product with 1 / 20, 0.15000000000000002)."""
    run = pl.DataFrame({"query": ["q", "q", "q", "r"], "doc": ["a", "b", "c", "a"], "score": [3.0, 2.0, 1.0, 1.0]})
    qrels = pl.DataFrame({"query": ["q"] * 3, "doc": ["a", "b", "c"], "relevance": [1, 1, 1]})
    got = rank_metrics(run).evaluate(["p@20"], doc="doc", ties="doc", qrels=qrels)
    assert got["p@20"].to_list() == [3 / 20]


@pytest.mark.parametrize(
    ("qrels", "run", "message"),
    [
        (QRELS.drop("group"), RUN, "judgment group column 'group' not found in qrels"),
        (QRELS, RUN.with_columns(group=pl.lit("u1")), "judgment group column 'group' is in the run too"),
        (QRELS, RUN.with_columns(pl.col("query").cast(pl.Categorical)), "query column 'query' is Categorical"),
    ],
)
def test_refuses_bad_columns(qrels: pl.DataFrame, run: pl.DataFrame, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        judgment_groups.evaluate(run, qrels, ["ap"])


def test_a_document_judged_twice_by_one_group_is_an_error() -> None:
    twice = pl.concat([QRELS, QRELS.head(1)])
    with pytest.raises(ValueError, match="qrels list doc 'a' twice for query"):
        judgment_groups.evaluate(RUN, twice, ["ap"], ties="doc")


RUN_SCHEMA = {"query": pl.String, "doc": pl.String, "score": pl.Float64}


def bad_run_rows(column: str, values: list[object]) -> pl.DataFrame:
    """q1 (a, b, c, d) and q2 (a, b): `values` replaces `column`'s six values; q1 is judged by groups u2 and u1
    (listed in that order), q2 by u1, u2 and u3."""
    run = pl.DataFrame(
        {
            "query": ["q1"] * 4 + ["q2"] * 2,
            "doc": ["a", "b", "c", "d", "a", "b"],
            "score": [4.0, 3.0, 2.0, 1.0, 2.0, 1.0],
        }
    )
    return run.with_columns(pl.Series(column, values, dtype=run.schema[column]))


JUDGED_BY_GROUPS = pl.DataFrame(
    [("q1", "u2", "a", 1), ("q1", "u1", "b", 1), ("q2", "u1", "a", 1), ("q2", "u2", "b", 1), ("q2", "u3", "a", 0)],
    schema={"query": pl.String, "group": pl.String, "doc": pl.String, "relevance": pl.Int64},
    orient="row",
)


@pytest.mark.parametrize(
    ("column", "values", "message"),
    [
        (
            "score",
            [4.0, float("nan"), float("inf"), 1.0, None, 1.0],
            "score column 'score' has 3 null, NaN or infinite value(s), the first in query (query='q1', group='u1').",
        ),
        (
            "doc",
            ["a", None, "c", "d", "a", None],
            "doc column 'doc' has 2 null value(s), the first in query (query='q1', group='u1').",
        ),
    ],
)
def test_a_bad_run_row_is_counted_once_whatever_its_groups(column: str, values: list[object], message: str) -> None:
    """The run is evaluated once per group of its query: q1's rows twice (u1, u2), q2's three times.  The run
    has 3 bad scores (q1's NaN and inf, q2's null) or 2 null docs (one in each query): counted per (query, group)
    they would be 2 x 2 + 1 x 3 = 7 and 1 x 2 + 1 x 3 = 5.  The message counts the run's rows and names q1's
    first group, u1 (the least id, though the qrels list u2 first)."""
    run = bad_run_rows(column, values)
    with pytest.raises(ValueError) as error:
        judgment_groups.evaluate(run, JUDGED_BY_GROUPS, ["ap", "p@2"], ties="doc")
    assert str(error.value) == message
    with pytest.raises(ValueError) as error:
        judgment_groups.evaluate(run.lazy(), JUDGED_BY_GROUPS.lazy(), ["ap"], ties="doc").collect(engine="streaming")
    assert str(error.value) == message


def test_a_run_query_without_judgments_is_checked_then_skipped() -> None:
    """q3 is in the run only.  Its rows are under no group: a bad score there is refused, as
    `rank_metrics.evaluate(qrels=...)` refuses it in a run query without judgments, naming the query with a null
    group; with good scores q3 is skipped, as trec_eval skips a run query the judgments do not have, and the
    other queries keep their values (q1: a retrieved first, judged by u2 only; u1's relevant b is second, so u1's
    AP is 1/2, u2's is 1, and q1 averages 3/4)."""
    q3 = pl.DataFrame({"query": ["q3", "q3"], "doc": ["a", "e"], "score": [None, 1.0]}, schema=RUN_SCHEMA)
    run = bad_run_rows("score", [4.0, 3.0, 2.0, 1.0, 2.0, 1.0])
    with pytest.raises(ValueError) as error:
        judgment_groups.evaluate(pl.concat([run, q3]), JUDGED_BY_GROUPS, ["ap"], ties="doc")
    message = "score column 'score' has 1 null, NaN or infinite value(s), the first in query (query='q3', group=None)."
    assert str(error.value) == message
    good = pl.concat([run, q3.with_columns(pl.col("score").fill_null(2.0))])
    for missing_queries in ("skip", "zero"):
        values = judgment_groups.evaluate(good, JUDGED_BY_GROUPS, ["ap"], ties="doc", missing_queries=missing_queries)
        assert values["query"].to_list() == ["q1", "q2"]
        assert values.filter(pl.col("query") == "q1")["ap"].item() == 0.75


# --- the command line against the binary ------------------------------------------------------------------


def dict_run(frame: pl.DataFrame) -> Run:
    run: Run = {}
    for query, doc, score in frame.iter_rows():
        run.setdefault(query, {})[doc] = score
    return run


def write_files(folder: Path, run: Run, qrels: JudgmentGroups) -> tuple[Path, Path]:
    qrels_path, run_path = folder / "qrels_jg.txt", folder / "run.txt"
    run_path.write_text("".join(f"{q} Q0 {d} 0 {s!r} tag\n" for q, docs in run.items() for d, s in docs.items()))
    qrels_path.write_text("".join(f"{q} {g} {d} {r}\n" for q, g, d, r in qrels))
    return qrels_path, run_path


@st.composite
def run_and_judgment_groups(draw: st.DrawFn) -> tuple[Run, JudgmentGroups]:
    """1-4 queries, each in the run and judged, or in one of them only; a judged query has 1-4 groups of 1-8
    judgments at levels -2..3 (a group may have no relevant document, or no document judged >= 0), listed in a
    shuffled order; tied scores."""
    run: Run = {}
    qrels: JudgmentGroups = []
    for q in range(draw(st.integers(1, 4))):
        query = f"Q{q}"
        in_run, judged = draw(st.sampled_from([(True, True), (True, True), (True, False), (False, True)]))
        if in_run:
            docs = draw(st.lists(st.sampled_from(DOC_IDS), min_size=1, max_size=10, unique=True))
            run[query] = {d: draw(st.sampled_from(SCORES)) for d in docs}
        if judged:
            for group in draw(st.lists(st.sampled_from(GROUP_IDS), min_size=1, max_size=4, unique=True)):
                docs = draw(st.lists(st.sampled_from(DOC_IDS), min_size=1, max_size=8, unique=True))
                qrels += [(query, group, d, draw(st.integers(-2, 3))) for d in docs]
    return run, draw(st.permutations(qrels))


OPTIONS = st.lists(
    st.sampled_from(
        [("-c",), ("-J",), ("-M3",), ("-l2",), ("-l", "0"), ("-m", "P_avgjg.3,7"), ("-m", "Rprec_mult_avgjg.0.5,2.0")]
    ),
    max_size=3,
    unique=True,
)


@SETTINGS
@given(case=run_and_judgment_groups(), options=OPTIONS, query_lines=st.booleans())
def test_cli_equals_trec_eval(
    trec_eval: TrecEval,
    tmp_path: Path,
    case: tuple[Run, JudgmentGroups],
    options: list[tuple[str, ...]],
    query_lines: bool,
) -> None:
    run, qrels = case
    flags = [flag for option in options for flag in option]
    if "-c" not in flags:  # trec_eval 10 stops (exit 4) at a judged query missing from the run; the CLI skips it
        qrels = [judgment for judgment in qrels if judgment[0] in run]
    if not run or not qrels:
        return  # trec_eval cannot read an empty file
    arguments = [*(["-q"] if query_lines else []), "-R", "qrels_jg", "-m", "qrels_jg", *flags]
    qrels_path, run_path = write_files(tmp_path, run, qrels)
    theirs = trec_eval.call(arguments, qrels_path, run_path)
    code, out, err = call_ours(arguments, qrels_path, run_path)
    if "No queries with both results and relevance info" in theirs.stderr:
        assert code == 1, (out, err)
        return
    assert theirs.returncode == 0, theirs.stderr
    assert code == 0, err
    assert out == theirs.stdout


def test_hand_derived_case_equals_trec_eval(trec_eval: TrecEval, tmp_path: Path) -> None:
    qrels_path, run_path = write_files(tmp_path, dict_run(RUN), list(QRELS.iter_rows()))
    for flags in (["-c"], ["-c", "-J"], ["-c", "-l2"], ["-c", "-M2"]):
        arguments = ["-q", *flags, "-R", "qrels_jg", "-m", "qrels_jg", "-m", "P_avgjg.2", "-m", "Rprec_mult_avgjg.0.5"]
        assert ours(arguments, qrels_path, run_path) == trec_eval.run(arguments, qrels_path, run_path)


def test_plain_precision_summary_equals_trec_eval_at_a_rounding_boundary(trec_eval: TrecEval, tmp_path: Path) -> None:
    """-R qrels: eight queries, the last with 3 relevant documents in its top 20, the others none: trec_eval's
    P_20 summary is (3.0 / 20) / 8 = 0.01875 - 2^-60 or so, printed 0.0187 (P@20 as 3 x (1 / 20) printed 0.0188)."""
    run = {f"q{k}": {f"d{i}": float(10 - i) for i in range(5)} for k in range(1, 9)}
    qrels = [(f"q{k}", "0", "d9", 1) for k in range(1, 9)] + [("q8", "0", f"d{i}", 1) for i in range(3)]
    qrels_path, run_path = write_files(tmp_path, run, qrels)
    expected = trec_eval.run(["-m", "P.20"], qrels_path, run_path)
    assert expected == "P_20                  \tall\t0.0187\n"
    assert ours(["-m", "P.20"], qrels_path, run_path) == expected


# --- -R qrels on a qrels_jg file, and the refusals ----------------------------------------------------------


def test_plain_qrels_ignore_the_group_field(trec_eval: TrecEval, tmp_path: Path) -> None:
    """-R qrels (the default) reads the second field as trec_eval's ignored iteration: a qrels_jg file whose
    documents are each judged once gives what the same file with every group "0" gives, as the binary prints;
    a document judged by two groups is a (query, doc) judged twice, refused as trec_eval refuses it."""
    run = dict_run(RUN)
    once = [("q1", "u1", "a", 1), ("q1", "u2", "b", 2), ("q1", "u3", "c", 0), ("q3", "u9", "a", 1)]
    qrels_path, run_path = write_files(tmp_path, run, once)
    arguments = ["-q", "-m", "map", "-m", "P.2", "-m", "num_rel"]
    expected = trec_eval.run(arguments, qrels_path, run_path)
    assert ours(arguments, qrels_path, run_path) == expected
    plain = tmp_path / "plain"
    plain.mkdir()
    plain_path, _ = write_files(plain, run, [(q, "0", d, r) for q, _, d, r in once])
    assert ours(arguments, plain_path, run_path) == expected
    twice_path, _ = write_files(tmp_path, run, list(QRELS.iter_rows()))
    theirs = trec_eval.call(arguments, twice_path, run_path)
    assert theirs.returncode == 4
    assert "duplicate docs" in theirs.stderr
    code, _, err = call_ours(arguments, twice_path, run_path)
    assert code == 1
    assert "qrels list doc 'a' twice for query 'q1'" in err


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["-R", "qrels_pref"], "-R 'qrels_pref' is not supported; supported: qrels (the default), prefs"),
        (["-R", "qrels_prefs", "-m", "map"], "trec_eval measure 'map' is not a preference measure"),
        (["-R", "qrels_jg"], "trec_eval's default measures (official) are not computed on judgment groups"),
        (["-R", "qrels_jg", "-m", "map"], "trec_eval measure 'map' is not computed with -R qrels_jg"),
        (["-R", "qrels_jg", "-m", "qrels_jg", "-Z", "z.txt"], "-Z is not implemented with -R qrels_jg"),
        (["-R", "qrels_jg", "-m", "map_avgjg.5"], "'map_avgjg' takes no parameters"),
        (["-R", "qrels_jg", "-m", "P_avgjg.0"], "cut-offs must be positive"),
        (["-m", "map_avgjg"], "'map_avgjg' averages over judgment groups: it needs -R qrels_jg"),
        (["-m", "qrels_jg"], "'qrels_jg' averages over judgment groups: it needs -R qrels_jg"),
    ],
)
def test_usage_errors(tmp_path: Path, arguments: list[str], message: str) -> None:
    qrels_path, run_path = write_files(tmp_path, dict_run(RUN), list(QRELS.iter_rows()))
    code, out, err = call_ours(arguments, qrels_path, run_path)
    assert (code, out) == (2, "")
    assert message in err
