"""`exprs.sdcg`, `exprs.g` and `exprs.bin_g` against the real tools and every tied order.

Oracles, the judgments being the group's own rows:
- ir_measures' SDCG(min_rel=..., max_rel=...)@k (its cwl_eval provider), the run handed over in ties="doc" order
  (score descending, then doc id descending: cwl_eval keeps the order of tied documents as given);
- the trec_eval binary's G and binG (ties by descending docno: ties="doc"), with its default gains (the levels)
  and a gain mapping (`-m G.1=...`), and binG at a relevance level (`-l 2`: threshold=1.5);
- plain Python below, written from the definitions (G from trec_eval's m_G.c): the mean over every order of the
  tied rows (`measures_reference.tied_sequences`) for ties="average", their greatest and least value for the
  bounds of sdcg and bin_g (G refuses its bounds: not always its extremes, a test below);
- the namespace's `evaluate` on the same frame, in `group_by().agg()` and `.over()`, eager, lazy in-memory and
  streaming (the property in tests/test_invariants.py draws these measures too).
"""

from __future__ import annotations

import functools
import logging
import math
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st
from polars.testing import assert_frame_equal, assert_series_equal

import lodestar_polars  # noqa: F401  (registers .rank_metrics)
from lodestar_polars import exprs
from tests import measures_reference as reference
from tests.test_exprs import ENGINES, SETTINGS, TIES, TOLERANCE, aggregate, broadcast, ragged_frames
from tests.test_exprs_measures import small_tied_frames
from tests.test_exprs_oracles import by_query, random_tied_frame
from tests.trec_eval_binary import TrecEval

# (min_rel, max_rel): ir_measures' default min_rel with a max_rel below the greatest level (4: clipped), at it
# and above it, and a min_rel above 0
SCALES = ((0, 1), (0, 3), (0, 4), (0, 6), (1, 3))


@pytest.fixture
def _quiet_cwl_eval() -> Iterator[None]:
    """ir_measures' cwl_eval provider warns on every call whose levels exceed or fall short of max_rel."""
    logger = logging.getLogger("ir_measures.cwl_eval")
    level = logger.level
    logger.setLevel(logging.ERROR)
    yield
    logger.setLevel(level)


def sdcg_column(min_rel: float, max_rel: float, k: int) -> str:
    return f"sdcg({'' if min_rel == 0 else f'min_rel={min_rel},'}max_rel={max_rel})@{k}"


# --- SDCG: ir_measures (cwl_eval) ----------------------------------------------------------------------------


@pytest.mark.usefixtures("_quiet_cwl_eval")
@pytest.mark.parametrize("seed", range(4))
def test_sdcg_equals_ir_measures_cwl_eval_on_ragged_tied_runs(seed: int) -> None:
    ir_measures = pytest.importorskip("ir_measures", reason="ir_measures is a test dependency")
    pytest.importorskip("cwl", reason="ir_measures computes SDCG with cwl_eval")
    frame = random_tied_frame(seed=seed, queries=40, rows=500)
    in_doc_order = frame.sort(["query", "score", "doc"], descending=[False, True, True])
    qrels = [ir_measures.Qrel(str(q), d, int(r)) for q, d, r in frame.select("query", "doc", "relevance").iter_rows()]
    run = [
        ir_measures.ScoredDoc(str(q), d, float(s))
        for q, d, s in in_doc_order.select("query", "doc", "score").iter_rows()
    ]
    calls = {
        sdcg_column(low, high, k): (ir_measures.SDCG(min_rel=low, max_rel=high) @ k, low, high, k)
        for low, high in SCALES
        for k in (1, 3, 10, 50)
    }
    cwl_eval = ir_measures.providers.registry["cwl_eval"]
    theirs: dict[str, dict[int, float]] = {column: {} for column in calls}
    column_of = {measure: column for column, (measure, *_) in calls.items()}
    for metric in cwl_eval.evaluator([measure for measure, *_ in calls.values()], qrels).iter_calc(run):
        theirs[column_of[metric.measure]][int(metric.query_id)] = metric.value
    ours = frame.group_by("query").agg(
        exprs.sdcg(k=k, min_rel=low, max_rel=high, ties="doc", doc="doc").alias(column)
        for column, (_, low, high, k) in calls.items()
    )
    for column in calls:
        values = by_query(ours, column)
        assert len(values) == len(theirs[column]) == frame["query"].n_unique(), column
        assert values == pytest.approx(theirs[column], rel=1e-12, abs=1e-12), column


# --- G and binG: the trec_eval binary --------------------------------------------------------------------------


def trec_eval_values(trec_eval: TrecEval, arguments: list[str], qrels: Path, run: Path) -> dict[tuple[str, int], float]:
    """{(measure, query): value}; G with gains given prints as `G_1=3.5,...`: read as G."""
    output = trec_eval.run(["-q", *arguments], qrels, run)
    rows = (line.split() for line in output.splitlines())
    return {(name.partition("_")[0], int(q)): float(v) for name, q, v in rows if q != "all"}


@pytest.mark.parametrize("seed", [21, 22])
def test_g_and_bin_g_equal_trec_eval(trec_eval: TrecEval, tmp_path: Path, seed: int) -> None:
    """trec_eval ranks by score descending, then docno descending (ties="doc"); G's gains are the levels, or
    `-m G.1=5.5,2=9.0,4=2.0` (level 3 keeps its gain 3, level 0 its 0: trec_eval sorts the gains for the ideal
    by their difference cast to int, so gains less than 1 apart may come in either order there; these are 1 or
    more apart); binG's relevant rows are those above level 0, or at level 2 or above with `-l 2`; a query
    without a positive gain or a relevant row scores 0 in both (no_relevant=0.0).  Printed to 4 decimals."""
    frame = random_tied_frame(seed=seed, queries=80, rows=1200)
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    judgments = frame.select("query", "doc", "relevance").iter_rows()
    qrels_path.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in judgments))
    run_path.write_text(
        "".join(f"{q} Q0 {d} 0 {s!r} tag\n" for q, d, s in frame.select("query", "doc", "score").iter_rows())
    )
    theirs = trec_eval_values(trec_eval, ["-m", "G", "-m", "binG"], qrels_path, run_path)
    theirs_mapped = trec_eval_values(
        trec_eval, ["-l", "2", "-m", "G.1=5.5,2=9.0,4=2.0", "-m", "binG"], qrels_path, run_path
    )
    mapping = {0: 0.0, 1: 5.5, 2: 9.0, 3: 3.0, 4: 2.0}
    ours = frame.group_by("query").agg(
        exprs.g(ties="doc", doc="doc"),
        exprs.bin_g(ties="doc", doc="doc"),
        exprs.g(ties="doc", doc="doc", gain=mapping).alias("g mapped"),
        exprs.bin_g(ties="doc", doc="doc", threshold=1.5).alias("bin_g at 2"),
    )
    assert len(theirs) == len(theirs_mapped) == 2 * ours.height == 2 * 80
    for row in ours.iter_rows(named=True):
        query = row["query"]
        assert row["g"] == pytest.approx(theirs["G", query], abs=5.1e-5), query
        assert row["bin_g"] == pytest.approx(theirs["binG", query], abs=5.1e-5), query
        assert row["g mapped"] == pytest.approx(theirs_mapped["G", query], abs=5.1e-5), query
        assert row["bin_g at 2"] == pytest.approx(theirs_mapped["binG", query], abs=5.1e-5), query


# --- every tied order ----------------------------------------------------------------------------------------


def scaled(gain: float, min_rel: float, max_rel: float) -> float:
    return (min(max(gain, min_rel), max_rel) - min_rel) / (max_rel - min_rel)


def sdcg_of(scaled_gains: Sequence[float], k: int) -> float:
    """The DCG@k of the scaled gains over the DCG@k of k rows of gain 1."""
    dcg = math.fsum(g / math.log2(p + 1) for p, g in enumerate(scaled_gains[:k], start=1))
    return dcg / math.fsum(1 / math.log2(p + 1) for p in range(1, k + 1))


def bin_g_of(flags: Sequence[float]) -> float:
    """The sum over the relevant rows of 1 / log2(2 + the non-relevant rows above), over R."""
    total, nonrelevant_above = 0.0, 0
    for flag in flags:
        if flag:
            total += 1 / math.log2(2 + nonrelevant_above)
        else:
            nonrelevant_above += 1
    return total / sum(flags)


def g_of(gains: Sequence[float]) -> float:
    """trec_eval's te_calc_G (m_G.c): the ideal walks the gains sorted descending; each position costs the
    ideal's gain there, at least 1 (a position past the positive ideal gains costs 1); a row with a gain adds
    gain / log2(2 + the cost so far - the gain so far); the sum is divided by the positive gains' sum."""
    ideal = [max(gain, 0.0) for gain in sorted(gains, reverse=True)]
    results_g = sum_results = sum_cost = 0.0
    for position, gain in enumerate(gains):
        sum_results += gain
        sum_cost += max(ideal[position], 1.0)
        if gain != 0:
            results_g += gain / math.log2(2 + sum_cost - sum_results)
    return results_g / math.fsum(g for g in gains if g > 0)


def gain_of(relevance: int, gain: Any) -> float:
    if gain == "linear":
        return float(relevance)
    if gain == "exponential":
        return 2.0**relevance - 1.0
    return float(gain[relevance])


def reference_value(
    measure: str, relevance: list[int], score: list[float], doc: list[str], options: dict[str, Any]
) -> float | None:
    """The measure by its definition in the tie mode: a deterministic order, or the mean / greatest / least value
    over every order of the tied rows."""
    ties = options["ties"]
    if measure == "sdcg":
        low, high = options["min_rel"], options["max_rel"]
        values = [scaled(gain_of(r, options["gain"]), low, high) for r in relevance]
        measure_of: Callable[[Sequence[float]], float] = functools.partial(sdcg_of, k=options["k"])
    elif measure == "bin_g":
        values = [1.0 if r > options["threshold"] else 0.0 for r in relevance]
        if not any(values):
            return None  # no_relevant=None
        measure_of = bin_g_of
    else:
        values = [gain_of(r, options["gain"]) for r in relevance]
        if not any(v > 0 for v in values):
            return None
        measure_of = g_of
    if ties in ("optimistic", "pessimistic", "average"):
        outcomes = [measure_of(sequence) for sequence in reference.tied_sequences(values, score)]
        if ties == "average":
            return math.fsum(outcomes) / len(outcomes)
        return max(outcomes) if ties == "optimistic" else min(outcomes)
    order = reference.deterministic_order(values, score, doc, ties)
    return measure_of([values[i] for i in order])


def accepted_ties(measure: str) -> list[str]:
    """The tie modes an expression takes: G refuses "average" and the bounds, the others take every mode."""
    return [t for t in TIES if measure != "g" or t not in ("average", "optimistic", "pessimistic")]


@st.composite
def tied_calls(draw: st.DrawFn, measure: str) -> dict[str, Any]:
    """The options of one expression, every tie mode it accepts (G refuses "average" and the bounds)."""
    options: dict[str, Any] = {"ties": draw(st.sampled_from(accepted_ties(measure)))}
    if measure == "sdcg":
        low = draw(st.sampled_from([0.0, 1.0, 0.5]))
        options |= {
            "k": draw(st.integers(1, 12)),
            "min_rel": low,
            "max_rel": low + draw(st.sampled_from([1.0, 2.0, 4.5])),
        }
    if measure in ("sdcg", "g"):
        options["gain"] = draw(st.sampled_from(["linear", "exponential", {0: 0.5, 1: 0.0, 2: 1.0, 3: 3.0}]))
    if measure == "bin_g":
        options["threshold"] = draw(st.sampled_from([0.0, 1.5, -0.5]))
    if measure != "sdcg":
        options["no_relevant"] = None
    return options


@pytest.mark.parametrize("measure", ["sdcg", "bin_g", "g"])
@SETTINGS
@given(frame=small_tied_frames(), data=st.data())
def test_every_tie_mode_against_every_tied_order(frame: pl.DataFrame, data: st.DataObject, measure: str) -> None:
    options = data.draw(tied_calls(measure))
    result = frame.group_by("query").agg(getattr(exprs, measure)(**options, doc="doc").alias("value"))
    for row in result.iter_rows(named=True):
        rows = frame.filter(pl.col("query") == row["query"])
        relevance, score, doc = rows["relevance"].to_list(), rows["score"].to_list(), rows["doc"].to_list()
        expected = reference_value(measure, relevance, score, doc, options)
        assert row["value"] == (None if expected is None else pytest.approx(expected, rel=1e-12, abs=1e-15)), (
            options,
            row,
        )


def test_the_tie_averaged_bin_g_of_one_block_by_hand() -> None:
    """One block of 4 rows, 2 relevant (m = 2 non-relevant, N = 0 above): each relevant row has 0, 1 or 2
    non-relevant rows above it with probability 1/3, so binG = (1 / log2(2) + 1 / log2(3) + 1 / log2(4)) / 3."""
    frame = pl.DataFrame({"query": [1] * 4, "relevance": [1, 0, 1, 0], "score": [0.5] * 4})
    value = frame.group_by("query").agg(exprs.bin_g())["bin_g"][0]
    assert value == pytest.approx((1 + 1 / math.log2(3) + 0.5) / 3, rel=1e-15)


# --- the namespace, in every engine and tie mode --------------------------------------------------------------


@st.composite
def namespace_calls(draw: st.DrawFn) -> tuple[str, str, dict[str, Any], dict[str, Any]]:
    """A measure, its `evaluate` name, the expression's options and evaluate's."""
    measure = draw(st.sampled_from(["sdcg", "g", "bin_g"]))
    ties = draw(st.sampled_from(accepted_ties(measure)))
    options: dict[str, Any] = {"ties": ties, "doc": "doc"}
    evaluate_options: dict[str, Any] = {"ties": ties, "doc": "doc"}
    name = measure
    if measure in ("sdcg", "g"):
        options["gain"] = evaluate_options["gain"] = draw(
            st.sampled_from(["linear", "exponential", {0: 0.5, 1: 1.0, 2: 3.0, 3: 0.0, 4: 2.0}])
        )
    if measure == "sdcg":
        low = draw(st.sampled_from([0.0, 1.0]))
        high = draw(st.sampled_from([1.0, 3.0, 4.0, 15.0]).filter(lambda high: high > low))
        k = draw(st.integers(1, 45))
        options |= {"k": k, "min_rel": low, "max_rel": high}
        name = sdcg_column(int(low), int(high), k)
    else:
        options["no_relevant"] = evaluate_options["no_relevant"] = draw(st.sampled_from([0.0, 1.0, None]))
    if measure == "bin_g":
        options["threshold"] = evaluate_options["threshold"] = draw(st.sampled_from([0.0, 1.5, 3.0]))
    return measure, name, options, evaluate_options


@pytest.mark.parametrize("engine", ENGINES)
@SETTINGS
@given(frame=ragged_frames(), call=namespace_calls())
def test_group_by_agg_and_over_match_evaluate(
    frame: pl.DataFrame, call: tuple[str, str, dict[str, Any], dict[str, Any]], engine: str
) -> None:
    measure, name, options, evaluate_options = call
    expected = frame.rank_metrics.evaluate([name], **evaluate_options).sort("query")
    expression = getattr(exprs, measure)(**options)
    assert_frame_equal(aggregate(frame, engine, expression), expected, **TOLERANCE)
    broadcast_expected = frame.join(expected, on="query", how="left", maintain_order="left")
    assert_frame_equal(broadcast(frame, engine, expression), broadcast_expected, **TOLERANCE)


def test_their_names_are_evaluates_columns() -> None:
    frame = random_tied_frame(seed=1, queries=3, rows=30)
    built = [
        exprs.sdcg(k=10, max_rel=4),
        exprs.sdcg(k=5, min_rel=1, max_rel=2.5, gain="exponential"),
        exprs.g(ties="input"),
        exprs.bin_g(ties="input"),
    ]
    names = ["sdcg(max_rel=4)@10", "sdcg(min_rel=1,max_rel=2.5)@5", "g", "bin_g"]
    assert frame.group_by("query").agg(built).columns[1:] == names
    assert frame.rank_metrics.evaluate(names, ties="input").columns[1:] == names


# --- errors ---------------------------------------------------------------------------------------------------


def namespace_error(names: list[str], **options: Any) -> str:
    frame = random_tied_frame(seed=0, queries=3, rows=20)
    with pytest.raises(ValueError) as error:
        frame.rank_metrics.evaluate(names, **options)
    return str(error.value)


def test_g_refuses_ties_average_and_the_bounds_with_the_namespaces_message() -> None:
    with pytest.raises(ValueError, match=r"has no exact expectation under ties='average'") as expression_error:
        exprs.g()
    assert str(expression_error.value) == namespace_error(["g"])
    for ties in ("optimistic", "pessimistic"):
        with pytest.raises(ValueError, match=rf"^g has no ties='{ties}' bound \(a low gain") as bound_error:
            exprs.g(ties=ties, doc="doc")
        assert str(bound_error.value) == namespace_error(["ndcg", "g"], ties=ties, doc="doc")
    for ties in ("doc", "input", "reverse"):
        exprs.g(ties=ties, doc="doc")  # the other modes are taken
    exprs.bin_g(ties="average")  # binG has its exact expectation


def test_g_takes_a_negative_gain_as_evaluate_does() -> None:
    """trec_eval's G takes negative gain pairs (tests/test_negative_gains.py and the binary test check the
    namespace's G with them): the expression gives the namespace's values, under every tie mode G has, with a
    tie block holding the negative gain."""
    mapping = {0: 0.0, 1: -1.0, 2: 2.0, 3: 5.0}
    frame = pl.DataFrame(
        {
            "query": [1, 1, 1, 1, 1, 2, 2, 2],
            "doc": [1, 2, 3, 4, 5, 6, 7, 8],
            "relevance": [1, 2, 0, 3, 1, 1, 2, 1],
            "score": [3.0, 3.0, 2.0, 1.0, 1.0, 2.0, 2.0, 1.0],
        }
    )
    for ties in ("doc", "input", "reverse"):
        expression = frame.group_by("query").agg(exprs.g(ties=ties, gain=mapping, doc="doc")).sort("query")
        namespace = frame.rank_metrics.evaluate(["g"], ties=ties, gain=mapping, doc="doc").sort("query")
        assert_series_equal(expression["g"], namespace["g"], check_exact=False, rel_tol=0, abs_tol=1e-12)
    exprs.sdcg(k=5, max_rel=2, gain=mapping)  # sdcg clips it to min_rel, as evaluate does


def test_g_and_bin_g_no_relevant_error() -> None:
    frame = pl.DataFrame({"query": [1, 1, 2, 3], "relevance": [0, 2, 0, 0], "score": [2.0, 1.0, 1.0, 1.0]})
    with pytest.raises(ValueError, match=r"^a group has no positive gain; pass no_relevant"):
        frame.group_by("query").agg(exprs.g(ties="input", no_relevant="error"))
    with pytest.raises(ValueError, match=r"^a group has no document with relevance above 0; pass no_relevant"):
        frame.group_by("query").agg(exprs.bin_g(no_relevant="error"))


def test_sdcg_needs_max_rel_as_evaluate_does() -> None:
    with pytest.raises(TypeError, match=r"missing 1 required keyword-only argument: 'max_rel'"):
        exprs.sdcg(k=10)  # type: ignore[call-arg]  # max_rel left out on purpose
    reason = namespace_error(["sdcg@10"]).split("sdcg needs max_rel, ")[1].split(": write")[0]
    with pytest.raises(
        ValueError, match=rf"^exprs.sdcg needs max_rel, {re.escape(reason)}: write exprs.sdcg\(k=10, max_rel=4\)\.$"
    ):
        exprs.sdcg(k=10, max_rel=None)  # type: ignore[arg-type]  # None on purpose


@pytest.mark.parametrize(
    ("options", "name"),
    [
        ({"max_rel": 0.0}, "sdcg(max_rel=0)@10"),
        ({"max_rel": -2.0}, "sdcg(max_rel=-2)@10"),
        ({"min_rel": -1.0, "max_rel": 2.0}, "sdcg(min_rel=-1,max_rel=2)@10"),
    ],
)
def test_sdcg_refuses_a_scale_as_evaluate_does(options: dict[str, float], name: str) -> None:
    """evaluate words the refusal of an option in a measure name; the expression of a keyword, with the same
    reason."""
    option = "min_rel" if "min_rel" in options else "max_rel"
    reason = namespace_error([name]).split(" is refused: ")[1]
    with pytest.raises(ValueError, match=rf"^option {option}={options[option]!r} is refused: {re.escape(reason)}$"):
        exprs.sdcg(k=10, **options)  # type: ignore[arg-type]  # max_rel is in options


@pytest.mark.parametrize(
    ("options", "name"),
    [
        ({"max_rel": math.inf}, "sdcg(max_rel=inf)@10"),
        ({"max_rel": math.nan}, "sdcg(max_rel=nan)@10"),
        ({"min_rel": math.nan, "max_rel": 2.0}, "sdcg(min_rel=nan,max_rel=2)@10"),
    ],
)
def test_sdcg_refuses_a_scale_that_is_not_finite(options: dict[str, float], name: str) -> None:
    """evaluate reads no nan or inf in a measure name ("it is not a decimal number")."""
    option = "min_rel" if "min_rel" in options else "max_rel"
    assert namespace_error([name]).endswith("is refused: it is not a decimal number.")
    with pytest.raises(
        ValueError, match=rf"^option {option}={options[option]!r} is refused: it is not a finite number\.$"
    ):
        exprs.sdcg(k=10, **options)  # type: ignore[arg-type]  # max_rel is in options


def test_sdcg_refuses_max_rel_not_above_min_rel_with_evaluates_message() -> None:
    with pytest.raises(ValueError, match=r"^sdcg: max_rel=2 must exceed min_rel=3") as expression_error:
        exprs.sdcg(k=10, min_rel=3, max_rel=2)
    assert str(expression_error.value) == namespace_error(["sdcg(min_rel=3,max_rel=2)@10"])
    with pytest.raises(TypeError, match=r"^max_rel must be a float, got '4'\.$"):
        exprs.sdcg(k=10, max_rel="4")  # type: ignore[arg-type]  # the wrong type on purpose


def test_sdcg_needs_one_cutoff_of_at_least_one() -> None:
    with pytest.raises(TypeError, match=r"missing 1 required keyword-only argument: 'k'"):
        exprs.sdcg(max_rel=4)  # type: ignore[call-arg]  # k left out on purpose
    with pytest.raises(ValueError, match=r"^exprs.sdcg takes a cut-off k \(e.g. k=10\), none given"):
        exprs.sdcg(k=None, max_rel=4)  # type: ignore[arg-type]  # None on purpose
    assert "takes a cut-off after '@'" in namespace_error(["sdcg(max_rel=4)"])
    with pytest.raises(ValueError, match=r"^k must be at least 1, got 0\.$") as expression_error:
        exprs.sdcg(k=0, max_rel=4)
    assert str(expression_error.value) == namespace_error(["sdcg(max_rel=4)@0"])
    with pytest.raises(TypeError, match=r"^exprs.sdcg takes one cut-off: give k as one int or None"):
        exprs.sdcg(k=[5, 10], max_rel=4)  # type: ignore[arg-type]  # a list on purpose
    with pytest.raises(TypeError, match=r"k must be"):
        exprs.sdcg(k=2.5, max_rel=4)  # type: ignore[arg-type]  # a float on purpose
