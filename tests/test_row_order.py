"""The trec_eval mode prints the same bytes whatever the order of the lines of its files, run after run (the
reproducer of issue 46: AP at a rounding tie of its fourth decimal).  The property over every measure, engine
and option is `test_invariants.test_no_value_depends_on_the_order_of_the_run_or_judgment_rows`."""

from __future__ import annotations

import contextlib
import io
import math
import random
from pathlib import Path

import polars as pl
import pytest

import lodestar_polars  # noqa: F401  (registers .rank_metrics)
from lodestar_polars import cli
from tests.trec_eval_binary import TrecEval

# eight relevant documents, five of them retrieved at ranks 1, 3, 4, 5 and 6 of seven
QRELS = ["q 0 d 1", "q 0 a 1", "q 0 x 1", "q 0 y 1", "q 0 c 1", "q 0 f 1", "q 0 e 1", "q 0 z 1"]
RUN = ["q Q0 a 1 7 r", "q Q0 b 2 6 r", "q Q0 c 3 5 r", "q Q0 d 4 4 r", "q Q0 e 5 3 r", "q Q0 f 6 2 r", "q Q0 g 7 1 r"]
# AP = (1/1 + 2/3 + 3/4 + 4/5 + 5/6) / 8 = 4.05 / 8 = 0.50625, a tie at the fourth decimal: trec_eval sums the
# terms in rank order and prints 0.5062 (below); a sum in another order may land on 0.50625000000000009
EXPECTED = "map                   \tq\t0.5062\n"


def write(folder: Path, lines: list[str], name: str) -> Path:
    path = folder / name
    path.write_text("".join(f"{line}\n" for line in lines), encoding="ascii")
    return path


def map_line(qrels: Path, run: Path) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(["trec_eval", "-q", "-m", "map", str(qrels), str(run)]) == 0
    return out.getvalue().splitlines(keepends=True)[0]


def test_the_map_line_is_the_same_for_every_order_of_the_lines_run_after_run(tmp_path: Path) -> None:
    rng = random.Random(46)
    printed = set()
    for attempt in range(40):
        qrels, run = QRELS.copy(), RUN.copy()
        if attempt % 2:  # every other attempt reads the files as given, again and again
            rng.shuffle(qrels)
            rng.shuffle(run)
        printed.add(map_line(write(tmp_path, qrels, "h.qrels"), write(tmp_path, run, "h.run")))
    assert printed == {EXPECTED}


def test_trec_eval_prints_the_same_map_line(trec_eval: TrecEval, tmp_path: Path) -> None:
    output = trec_eval.run(["-q", "-m", "map"], write(tmp_path, QRELS, "h.qrels"), write(tmp_path, RUN, "h.run"))
    assert output.splitlines(keepends=True)[0] == EXPECTED


def test_exact_sums_must_be_a_bool() -> None:
    frame = pl.DataFrame({"query": [1, 1], "relevance": [1, 0], "score": [0.5, 0.2]})
    with pytest.raises(TypeError, match=r"^exact_sums must be True or False, got 'yes'\.$"):
        frame.rank_metrics.evaluate(["ap"], exact_sums="yes")  # type: ignore[arg-type]  # the refusal under test


def test_exact_sums_give_the_correctly_rounded_sum() -> None:
    """The exact sum of AP's terms rounded once: math.fsum's (a correctly rounded sum) of the same terms, over 200
    queries of random relevance; divided by R as the plan divides."""
    rng = random.Random(7)
    rows: list[dict[str, object]] = []
    expected = {}
    for query in range(200):
        relevance = [rng.randint(0, 1) for _ in range(rng.randint(1, 60))]
        rows += [{"query": query, "relevance": r, "score": -float(p)} for p, r in enumerate(relevance)]
        hits, terms = 0, []
        for position, r in enumerate(relevance, start=1):
            if r:
                hits += 1
                terms.append(hits / position)
        expected[query] = math.fsum(terms) / hits if hits else 0.0
    frame = pl.DataFrame(rows).sample(fraction=1.0, shuffle=True, seed=3)
    got = frame.rank_metrics.evaluate(["ap"], exact_sums=True)
    assert dict(zip(got["query"], got["ap"], strict=True)) == expected


def test_spark_refuses_exact_sums() -> None:
    pytest.importorskip("pyspark")
    from lodestar_polars import spark as lodestar_spark

    with pytest.raises(ValueError, match=r"^exact_sums=True is not available on Spark"):
        lodestar_spark.evaluate(None, ["ap"], exact_sums=True)  # type: ignore[arg-type]  # refused before any data
