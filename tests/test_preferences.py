"""trec_eval's preference measures (`lodestar_polars.preferences`, `trec_eval -R prefs / -R qrels_prefs`):
against the real trec_eval 10 binary on random judgments and runs, byte for byte; hand-derived cases for
each measure family; the errors."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lodestar_polars import preferences
from lodestar_polars.preferences import ALL_PREFS, evaluate
from tests.helpers import call_our_trec_eval, our_trec_eval
from tests.trec_eval_binary import TrecEval

DOCS = [f"d{i}" for i in range(8)]
FLAGS = [["-q"], ["-q", "-c"], [], ["-q", "-M", "3"], ["-q", "-c", "-M", "2"], ["-q", "-n"], ["-q", "-J", "-l", "2"]]

Prefs = list[tuple[str, str, str, str, float]]  # query, jg, jsg, doc, level
RunRows = list[tuple[str, str, float]]  # query, doc, score


@st.composite
def judgment_groups(draw: st.DrawFn, query: str, jg: str, pool: list[str]) -> Prefs:
    """One JG: each doc has a hidden level (ties likely, 0 = non-relevant); each sub-group judges some docs at a
    non-decreasing map of it that keeps 0 at 0, so the sub-groups never contradict each other."""
    docs = draw(st.lists(st.sampled_from(pool), min_size=min(2, len(pool)), max_size=len(pool), unique=True))
    hidden = {doc: draw(st.integers(0, 3)) for doc in docs}
    rows: Prefs = []
    for jsg in range(draw(st.integers(1, 4))):
        steps = [draw(st.sampled_from([0.0, 0.5, 1.0])) for _ in range(3)]
        level = {0: 0.0, 1: 1.0, 2: 1.0 + steps[0], 3: 1.0 + steps[0] + steps[1]}
        judged = draw(st.lists(st.sampled_from(docs), min_size=2, max_size=3, unique=True))  # chains: a>b, b>c
        rows += [(query, jg, f"s{jsg}", doc, level[hidden[doc]]) for doc in judged]
    return rows


@st.composite
def prefs_and_runs(draw: st.DrawFn) -> tuple[Prefs, RunRows]:
    prefs: Prefs = []
    for query in draw(st.lists(st.sampled_from(["q1", "q2", "q3"]), min_size=1, max_size=3, unique=True)):
        pool = draw(st.lists(st.sampled_from(DOCS), min_size=2, max_size=7, unique=True))  # JGs share docs
        for jg in draw(st.lists(st.sampled_from(["g1", "g2", "g3"]), min_size=1, max_size=3, unique=True)):
            prefs += draw(judgment_groups(query, jg, pool))
    run: RunRows = []
    for query in draw(st.lists(st.sampled_from(["q1", "q2", "q3", "q4"]), min_size=1, max_size=4, unique=True)):
        docs = draw(st.lists(st.sampled_from([*DOCS, "u1", "u2"]), min_size=1, max_size=8, unique=True))
        run += [(query, doc, draw(st.sampled_from([0.5, 1.0, 2.0, 3.0]))) for doc in docs]
    return prefs, run


def write(folder: Path, prefs: Prefs, run: RunRows) -> tuple[Path, Path]:
    prefs_path, run_path = folder / "prefs.txt", folder / "run.txt"
    prefs_path.write_text("".join(f"{q} {g} {s} {d} {level}\n" for q, g, s, d, level in prefs))
    run_path.write_text("".join(f"{q} Q0 {d} 0 {score} tag\n" for q, d, score in run))
    return prefs_path, run_path


def theirs(trec_eval: TrecEval, arguments: list[str], prefs: Prefs, run: RunRows, folder: Path) -> str:
    """trec_eval's output; without -c on the judged queries the run has (it stops at a missing one, where
    lodestar-polars skips it, as for qrels)."""
    if "-c" not in arguments:
        queries = {query for query, _, _ in run}
        prefs = [row for row in prefs if row[0] in queries]
    prefs_path, run_path = write(folder / "theirs", prefs, run)
    return trec_eval.run(arguments, prefs_path, run_path)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=prefs_and_runs(), flags=st.sampled_from(FLAGS))
def test_prefs_equal_trec_eval(
    trec_eval: TrecEval, tmp_path: Path, case: tuple[Prefs, RunRows], flags: list[str]
) -> None:
    prefs, run = case
    (tmp_path / "theirs").mkdir(exist_ok=True)
    if "-c" not in flags and not {q for q, *_ in prefs} & {q for q, *_ in run}:
        return  # nothing to evaluate: both stop (tested below)
    prefs_path, run_path = write(tmp_path, prefs, run)
    arguments = [*flags, "-m", "all_prefs", "-R", "prefs"]
    assert our_trec_eval([*arguments, str(prefs_path), str(run_path)]) == theirs(
        trec_eval, arguments, prefs, run, tmp_path
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=prefs_and_runs(), flags=st.sampled_from(FLAGS))
def test_qrels_prefs_equal_trec_eval(
    trec_eval: TrecEval, tmp_path: Path, case: tuple[Prefs, RunRows], flags: list[str]
) -> None:
    """The qrels read as preferences: the iteration field is the JG (several here), one doc once per JG."""
    prefs, run = case
    (tmp_path / "theirs").mkdir(exist_ok=True)
    qrels = {(q, g, d): int(level) for q, g, _, d, level in prefs}  # one sub-group: a doc's last level
    if "-c" not in flags and not {q for q, *_ in qrels} & {q for q, *_ in run}:
        return
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    queries = {q for q, *_ in run}
    lines = {
        mine: "".join(f"{q} {g} {d} {level}\n" for (q, g, d), level in qrels.items() if mine or q in queries)
        for mine in (True, False)
    }
    qrels_path.write_text(lines[True])
    run_path.write_text("".join(f"{q} Q0 {d} 0 {score} tag\n" for q, d, score in run))
    arguments = [*flags, "-m", "all_prefs", "-R", "qrels_prefs"]
    if "-c" not in flags:
        (tmp_path / "theirs" / "qrels.txt").write_text(lines[False])
        expected = trec_eval.run(arguments, tmp_path / "theirs" / "qrels.txt", run_path)
    else:
        expected = trec_eval.run(arguments, qrels_path, run_path)
    assert our_trec_eval([*arguments, str(qrels_path), str(run_path)]) == expected


@st.composite
def shared_groups_and_runs(draw: st.DrawFn) -> tuple[Prefs, RunRows]:
    """Two to four JGs per query over one pool of docs (each judging all of it or part of it), two in three EC
    groups with levels 0-2 (many docs sharing a level signature across the groups), some of several sub-groups
    (`judgment_groups`); a run retrieving some of the pool (tied scores likely) and unjudged docs."""
    prefs: Prefs = []
    pool = [f"d{i:02d}" for i in range(12)]
    for query in draw(st.lists(st.sampled_from(["q1", "q2"]), min_size=1, max_size=2, unique=True)):
        for jg in range(draw(st.integers(2, 4))):
            if draw(st.integers(0, 2)) == 0:
                prefs += draw(judgment_groups(query, f"g{jg}", pool))
                continue
            docs = pool if draw(st.booleans()) else draw(st.lists(st.sampled_from(pool), min_size=2, unique=True))
            prefs += [(query, f"g{jg}", "s", doc, float(draw(st.integers(0, 2)))) for doc in docs]
    run: RunRows = []
    for query in ("q1", "q2"):
        docs = draw(st.lists(st.sampled_from([*pool, "u1", "u2"]), max_size=14, unique=True))
        run += [(query, doc, draw(st.sampled_from([0.5, 1.0, 2.0, 3.0]))) for doc in docs]
    return prefs, run


@pytest.fixture(params=["counted", "paired"])
def shared_pairs_by(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """prefs_pair*'s pairs judged in several groups counted by level signature in every query, or formed pair by
    pair in every query (the plan picks per query by cost; both must give trec_eval's numbers)."""
    monkeypatch.setattr(preferences, "PAIRING_COST_RATIO", 0 if request.param == "counted" else 10**12)


@pytest.mark.usefixtures("shared_pairs_by")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=shared_groups_and_runs(), flags=st.sampled_from([["-q"], ["-q", "-c"], ["-q", "-M", "5"]]))
def test_pairs_judged_in_several_groups_equal_trec_eval(
    trec_eval: TrecEval, tmp_path: Path, case: tuple[Prefs, RunRows], flags: list[str]
) -> None:
    """prefs_pair* where doc pairs carry preferences from several groups, agreeing, conflicting or tied in some
    (counted by level signature, and pair by pair where a group has several sub-groups)."""
    prefs, run = case
    (tmp_path / "theirs").mkdir(exist_ok=True)
    if not run or ("-c" not in flags and not {q for q, *_ in prefs} & {q for q, *_ in run}):
        return  # trec_eval refuses an empty run; nothing to evaluate: both stop (tested below)
    prefs_path, run_path = write(tmp_path, prefs, run)
    arguments = [*flags, "-m", "prefs_pair", "-m", "prefs_pair_ret", "-m", "prefs_pair_imp", "-R", "prefs"]
    assert our_trec_eval([*arguments, str(prefs_path), str(run_path)]) == theirs(
        trec_eval, arguments, prefs, run, tmp_path
    )


@pytest.mark.usefixtures("shared_pairs_by")
def test_pairs_judged_in_three_groups_by_hand() -> None:
    """EC groups g1 a b:2 > c f:1 > d e:0; g2 a b f d:1 > c e:0; g3 a b c:1 > d:0.  Retrieved a, c, b (docid
    ranks a0 c1 b2), then d3 e4 f5.  a and b tie everywhere (no pair).  Retrieved pairs {a,c}: g1, g2 a>c: 1;
    {c,b}: g1, g2 b>c: 0.  Implied: {a,d} g1, g3: 1; {c,d} c>d in g1, g3, d>c in g2: 2/3; {b,d} 1; {a,e},
    {b,e} 1 (g1, g2); {c,e} 1 (g1 only); {a,f}, {b,f} 1 (g1); {c,f} 0 (g2 f>c).  Neither retrieved: {d,e}
    (g1, g2 d>e), {e,f} (g1, g2), {d,f} (g1).  pair (1 + 23/3) / (2 + 9 + 3); _ret 1/2; _imp (1 + 23/3) / 11."""
    levels = {
        "g1": {"a": 2, "b": 2, "c": 1, "f": 1, "d": 0, "e": 0},
        "g2": {"a": 1, "b": 1, "f": 1, "d": 1, "c": 0, "e": 0},
        "g3": {"a": 1, "b": 1, "c": 1, "d": 0},
    }
    prefs: Prefs = [("q", jg, "s", doc, level) for jg, docs in levels.items() for doc, level in docs.items()]
    values = per_query(prefs, [("q", "a", 3.0), ("q", "c", 2.0), ("q", "b", 1.0)])["q"]
    assert values["prefs_pair"] == pytest.approx((1 + 23 / 3) / 14, abs=1e-12)
    assert values["prefs_pair_ret"] == pytest.approx(1 / 2, abs=1e-12)
    assert values["prefs_pair_imp"] == pytest.approx((1 + 23 / 3) / 11, abs=1e-12)


@pytest.mark.usefixtures("shared_pairs_by")
def test_pair_preferred_by_two_ec_groups_and_a_closure_by_hand() -> None:
    """g1 a:1 > b:0 and g2 a:2 > b:1 (EC); g3 sub-groups b:2 > a:1 and a:2 > c:1, so b>c by transitivity.
    Retrieved a, b (c not).  {a,b} carries 3 preferences, 2 fulfilled: 2/3; {a,c} and {b,c} 1 each (implied):
    pair (2/3 + 2) / 3; _ret 2/3; _imp as pair."""
    prefs: Prefs = [
        ("q", "g1", "s", "a", 1), ("q", "g1", "s", "b", 0), ("q", "g2", "s", "a", 2), ("q", "g2", "s", "b", 1),
        ("q", "g3", "s1", "b", 2), ("q", "g3", "s1", "a", 1), ("q", "g3", "s2", "a", 2), ("q", "g3", "s2", "c", 1),
    ]  # fmt: skip
    values = per_query(prefs, [("q", "a", 2.0), ("q", "b", 1.0)])["q"]
    assert values["prefs_pair"] == values["prefs_pair_imp"] == pytest.approx((2 / 3 + 2) / 3, abs=1e-12)
    assert values["prefs_pair_ret"] == pytest.approx(2 / 3, abs=1e-12)


def per_query(prefs: Prefs, run: RunRows, **options: object) -> dict[str, dict[str, float]]:
    judged = pl.LazyFrame(prefs, schema=["query", "jg", "jsg", "doc", "level"], orient="row")
    ranking = pl.LazyFrame(run, schema=["query", "doc", "score"], orient="row")
    frame = evaluate(ranking, judged, **options).collect()  # type: ignore[arg-type]
    return {row.pop("query"): row for row in frame.iter_rows(named=True)}


def test_simp_ret_imp_and_pair_by_hand() -> None:
    """One EC group a:2 > b, e:1 > c, d:0; retrieved c, a, (x unjudged), b.  Docid ranks c0 a1 b2, then the
    unretrieved d3 e4.  a>b fulfilled (retrieved); a>c, b>c not (retrieved); a>e, a>d, b>d fulfilled
    (implied); e>c not (implied); e>d neither retrieved.  Retrieved 1 of 3, implied 3 of 4, 1 not occurring.
    Rnonrel: R = 3 >= N = 2, so (4 + Rr (R - N)) / (8 + R (R - N)) = (4 + 2) / (8 + 3); _ret: Rr = 2, Nr = 1:
    (1 + 2 * 1) / (3 + R * 1) = 3 / 6 (trec_eval adds R, not Rr, possible preferences)."""
    prefs = [("q", "g", "s", doc, level) for doc, level in (("a", 2), ("b", 1), ("e", 1), ("c", 0), ("d", 0))]
    run = [("q", "c", 4.0), ("q", "a", 3.0), ("q", "x", 2.0), ("q", "b", 1.0)]
    values = per_query(prefs, run)["q"]
    expected = {
        "prefs_num_prefs_poss": 8, "prefs_num_prefs_ful": 4, "prefs_num_prefs_ful_ret": 1,
        "prefs_simp": 4 / 8, "prefs_simp_ret": 1 / 3, "prefs_simp_imp": 4 / 7,
        "prefs_pair": 4 / 8, "prefs_pair_ret": 1 / 3, "prefs_pair_imp": 4 / 7,
        "prefs_avgjg": 4 / 8, "prefs_avgjg_ret": 1 / 3, "prefs_avgjg_imp": 4 / 7,
        "prefs_avgjg_Rnonrel": 6 / 11, "prefs_avgjg_Rnonrel_ret": 3 / 6,
    }  # fmt: skip
    assert values == pytest.approx(expected, abs=1e-12)


def test_rnonrel_keeps_r_nonrelevant_docs_by_hand() -> None:
    """a:1, b c d:0; retrieved a, b, c.  R = 1 < N = 3: only the first non-relevant doc (b) stays, and trec_eval
    counts it against every judged doc, the non-relevant ones too: a>b fulfilled; b, c, d vs b not: 1 / 4.
    _ret: Rr = 1 < Nr = 2, the retrieved a, b, c against b: 1 / 3.  Every other measure: all 3 fulfilled."""
    prefs = [("q", "g", "s", doc, level) for doc, level in (("a", 1), ("b", 0), ("c", 0), ("d", 0))]
    run = [("q", "a", 4.0), ("q", "b", 3.0), ("q", "c", 2.0)]
    values = per_query(prefs, run)["q"]
    assert values["prefs_avgjg_Rnonrel"] == pytest.approx(1 / 4)
    assert values["prefs_avgjg_Rnonrel_ret"] == pytest.approx(1 / 3)
    assert values["prefs_simp"] == values["prefs_simp_ret"] == values["prefs_avgjg"] == 1.0


def test_rnonrel_ret_keeps_as_many_as_retrieved_relevant_in_an_ec_group_by_hand() -> None:
    """a e:1, b c d:0; retrieved a, b, c (docid ranks a0 b1 c2, then d3 e4).  Rnonrel: R = 2 < N = 3, b and c
    stay, against all 5 judged docs: a<b, a<c, b<c fulfilled of 10.  _ret: Rr = 1 < Nr = 2, only b stays (Rr
    of them, not R), against the retrieved a, b, c: a<b of 3."""
    prefs = [("q", "g", "s", doc, level) for doc, level in (("a", 1), ("e", 1), ("b", 0), ("c", 0), ("d", 0))]
    values = per_query(prefs, [("q", "a", 4.0), ("q", "b", 3.0), ("q", "c", 2.0)])["q"]
    assert values["prefs_avgjg_Rnonrel"] == pytest.approx(3 / 10)
    assert values["prefs_avgjg_Rnonrel_ret"] == pytest.approx(1 / 3)


def test_rnonrel_ret_keeps_as_many_as_relevant_in_a_pa_group_by_hand() -> None:
    """Sub-groups a:1 > b c:0 and e:1 > c; retrieved b, a, c (e not).  _ret: Rr = 1 < Nr = 2, and a group of
    several sub-groups keeps R = 2 retrieved non-relevant docs (b and c; an EC group would keep Rr = 1): a>b
    not fulfilled, a>c fulfilled: 1 / 2.  Rnonrel: R = N = 2, nothing added: a>c of a>b, a>c, e>c: 1 / 3."""
    prefs = [("q", "g", "s1", "a", 1), ("q", "g", "s1", "b", 0), ("q", "g", "s1", "c", 0)]
    prefs += [("q", "g", "s2", "e", 1), ("q", "g", "s2", "c", 0)]
    values = per_query(prefs, [("q", "b", 4.0), ("q", "a", 3.0), ("q", "c", 2.0)])["q"]
    assert values["prefs_avgjg_Rnonrel_ret"] == pytest.approx(1 / 2)
    assert values["prefs_avgjg_Rnonrel"] == pytest.approx(1 / 3)


def test_groups_closure_and_pairs_by_hand() -> None:
    """Three JGs on a, b, c, retrieved in that order: g1 a>b (fulfilled), g2 b>a (not), g3 two sub-groups
    a>c and c>b, so a>b by transitivity: a>c, a>b fulfilled, c>b not.  simp 3 / 5; avgjg (1 + 0 + 2/3) / 3;
    pair over the doc pairs {a,b} 2/3, {a,c} 1, {b,c} 0: 5/9; Rnonrel: g1 1, g2 0, g3 (R = 3, N = 0)
    (2 + 3 * 3) / (3 + 3 * 3) = 11/12, averaged."""
    prefs: Prefs = [
        ("q", "g1", "s", "a", 1), ("q", "g1", "s", "b", 0), ("q", "g2", "s", "a", 0), ("q", "g2", "s", "b", 1),
        ("q", "g3", "s1", "a", 2), ("q", "g3", "s1", "c", 1), ("q", "g3", "s2", "c", 2), ("q", "g3", "s2", "b", 1),
    ]  # fmt: skip
    run = [("q", "a", 3.0), ("q", "b", 2.0), ("q", "c", 1.0)]
    values = per_query(prefs, run)["q"]
    assert values["prefs_num_prefs_poss"] == 5
    assert values["prefs_num_prefs_ful"] == values["prefs_num_prefs_ful_ret"] == 3
    assert values["prefs_simp"] == values["prefs_simp_ret"] == values["prefs_simp_imp"] == pytest.approx(3 / 5)
    assert values["prefs_avgjg"] == values["prefs_avgjg_ret"] == pytest.approx(5 / 9)
    assert values["prefs_pair"] == values["prefs_pair_ret"] == values["prefs_pair_imp"] == pytest.approx(5 / 9)
    assert values["prefs_avgjg_Rnonrel"] == pytest.approx((1 + 0 + 11 / 12) / 3)
    # without a prefs_pair measure the shared pairs are not formed; the other values stay
    others = [name for name in ALL_PREFS if not name.startswith("prefs_pair")]
    assert per_query(prefs, run, measures=others)["q"] == {name: values[name] for name in others}


def test_ties_max_retrieved_and_complete_by_hand() -> None:
    """Tied scores rank by doc id ascending (a, b, c: every preference fulfilled); -M 2 drops c, so b>c is
    implied; a judged query missing from the run scores 0 with complete=True and is left out without it."""
    prefs = [("q", "g", "s", doc, level) for doc, level in (("a", 2), ("b", 1), ("c", 0))]
    prefs += [("m", "g", "s", "a", 1), ("m", "g", "s", "b", 0)]
    run = [("q", "c", 1.0), ("q", "b", 1.0), ("q", "a", 1.0)]
    assert set(per_query(prefs, run)) == {"q"}
    assert per_query(prefs, run)["q"]["prefs_simp_ret"] == 1.0
    cut = per_query(prefs, run, max_retrieved=2)["q"]
    assert (cut["prefs_num_prefs_ful_ret"], cut["prefs_simp_imp"]) == (1, 1.0)
    assert per_query(prefs, run, complete=True)["m"] == pytest.approx(
        dict.fromkeys(ALL_PREFS, 0) | {"prefs_num_prefs_poss": 1}
    )


def assert_error(result: tuple[int, str, str], exit_code: int, fragment: str) -> None:
    code, out, err = result
    assert (code, out) == (exit_code, ""), err
    assert fragment in err, err


@pytest.mark.parametrize(
    ("lines", "fragment"),
    [
        ("q g s a 1\nq g s b\n", "prefs.txt, line 2): expected 5 whitespace-separated fields, got 4"),
        # trec_eval reads a level with atof, as the CLI does ("high" is 0): only a hexadecimal one is refused
        ("# c\nq g s a 0x1p1\n", "prefs.txt, line 2): level field '0x1p1' is a hexadecimal number"),
        ("q g s a -1\nq g s b 0\n", "finite number >= 0; 1 are not, the first in query 'q': -1.0"),
        (
            "q g s a 1\nq g s a 1\n",
            "judged again in the same judgment sub-group 1 time(s), the first in query 'q': doc 'a'",
        ),
        ("q g s1 a 1\nq g s1 b 0\nq g s2 a 0\nq g s2 c 1\n", "judged 0 and above 0 in one judgment group"),
        ("q g s1 a 2\nq g s1 b 1\nq g s2 b 2\nq g s2 a 1\n", "judgment group 'g' of query 'q' prefers two docs"),
    ],
)
def test_bad_prefs_exit_1(tmp_path: Path, lines: str, fragment: str) -> None:
    (tmp_path / "prefs.txt").write_text(lines)
    (tmp_path / "run.txt").write_text("q Q0 a 1 1 tag\nq Q0 b 2 0.5 tag\nq Q0 c 3 0.2 tag\n")
    arguments = ["-m", "all_prefs", "-R", "prefs", str(tmp_path / "prefs.txt"), str(tmp_path / "run.txt")]
    assert_error(call_our_trec_eval(arguments), 1, fragment)


def test_duplicated_run_doc_exit_1(tmp_path: Path) -> None:
    (tmp_path / "prefs.txt").write_text("q g s a 1\nq g s b 0\n")
    (tmp_path / "run.txt").write_text("q Q0 a 1 1 tag\nq Q0 a 2 0.5 tag\n")
    arguments = ["-m", "prefs_simp", "-R", "prefs", str(tmp_path / "prefs.txt"), str(tmp_path / "run.txt")]
    assert_error(call_our_trec_eval(arguments), 1, "the run repeats a doc id 1 time(s), the first in query 'q': 'a'")


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        (["-R", "qrels_jg", "-m", "prefs_simp"], "trec_eval measure 'prefs_simp' is not computed with -R qrels_jg"),
        (["-R", "prefs"], "name the measures: -m all_prefs"),
        (["-R", "prefs", "-m", "map"], "'map' is not a preference measure"),
        (["-R", "prefs", "-m", "prefs_simp.5"], "takes no parameters"),
        (["-R", "prefs", "-m", "prefs", "-Z", "z.txt"], "-Z is not supported with -R prefs"),
        (["-m", "prefs_simp"], "'prefs_simp' needs -R prefs or -R qrels_prefs"),
        (["-m", "all_prefs"], "'all_prefs' needs -R prefs or -R qrels_prefs"),
    ],
)
def test_usage_errors_exit_2(tmp_path: Path, arguments: list[str], fragment: str) -> None:
    (tmp_path / "prefs.txt").write_text("q g s a 1\n")
    (tmp_path / "run.txt").write_text("q Q0 a 1 1 tag\n")
    assert_error(call_our_trec_eval([*arguments, str(tmp_path / "prefs.txt"), str(tmp_path / "run.txt")]), 2, fragment)


def test_nothing_to_evaluate_exit_1(tmp_path: Path) -> None:
    (tmp_path / "prefs.txt").write_text("q g s a 1\n")
    (tmp_path / "run.txt").write_text("other Q0 a 1 1 tag\n")
    arguments = ["-m", "prefs", "-R", "prefs", str(tmp_path / "prefs.txt"), str(tmp_path / "run.txt")]
    assert_error(call_our_trec_eval(arguments), 1, "no query has both results and preferences")
