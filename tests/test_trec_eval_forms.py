"""trec_eval's measure table as the measures declare it (`TrecEvalForm`s on each `Definition`).

- each form prints the names the measure's own trec_eval spelling (`Definition.trec_eval`) gives its columns,
  at trec_eval's default parameters and at others;
- the table is in trec_eval's print order and its nicknames are trec_eval's, read from trec_eval 10's measures.c
  (in ../shared/reference's source tarball; skipped cleanly where it is absent);
- the table refuses a form missing from the print order, a name of the order that no measure declares, and a
  name declared twice.

That the table prints what it printed before is the trec_eval tests' (tests/test_trec_quicktest.py compares
``-m all_trec -q`` with trec_eval's own output byte for byte).
"""

from __future__ import annotations

import re
import tarfile
from dataclasses import asdict, fields, replace

import pytest

from lodestar_polars._spec import parse_measure
from lodestar_polars.measures._base import TrecEvalForm
from lodestar_polars.measures._registry import REGISTRY
from lodestar_polars.trec_eval.measures import (
    TREC_BY_NAME,
    TREC_MEASURES,
    TREC_NICKNAMES,
    TREC_ORDER,
    TREC_OWN_ROWS,
    print_table,
    printed_columns,
)
from tests.trec_eval_binary import TARBALL

FORMS = [(family, form) for family, definition in REGISTRY.items() for form in definition.trec_eval_forms]


def spelled(printed_and_columns: list[tuple[str, str]], family: str) -> list[tuple[str, str | None]]:
    """(trec_eval's printed name, the name the measure's trec_eval spelling gives the column printed)."""
    pairs: list[tuple[str, str | None]] = []
    for printed, column in printed_and_columns:
        measure = parse_measure(column)
        assert measure.kind == family, f"{printed} prints {column}, not a column of {family}"
        parameter = measure.cutoff if measure.cutoff is not None else measure.level
        pairs.append((printed, REGISTRY[family].trec_eval.name(parameter)))
    return pairs


@pytest.mark.parametrize(("family", "form"), FORMS, ids=[form.name for _, form in FORMS])
def test_a_form_prints_the_names_of_the_measures_trec_eval_spelling(family: str, form: TrecEvalForm) -> None:
    """``ndcg_cut`` at its default cut-offs prints ``ndcg_cut_5``, ... and ndcg's spelling at 5 is ``ndcg_cut_5``;
    ``Rprec_mult`` prints ``Rprec_mult_0.20`` for the column ``rprec_mult@0.2``, spelled ``Rprec_mult_0.20``."""
    pairs = spelled(printed_columns(form.name, form.cutoffs), family)
    assert pairs
    assert [printed for printed, _ in pairs] == [spelling for _, spelling in pairs]


CUSTOM = {"cutoffs": ((3, 7, 42), "{name}_{k}"), "levels": ((0.05, 0.25, 0.5), "{name}_{k:.2f}")}


@pytest.mark.parametrize(
    ("family", "form"), [(f, form) for f, form in FORMS if form.cutoffs], ids=lambda x: getattr(x, "name", x)
)
def test_a_form_at_other_parameters_prints_the_spellings_names(family: str, form: TrecEvalForm) -> None:
    parameters, template = CUSTOM["levels" if form.levels else "cutoffs"]
    pairs = spelled(printed_columns(form.name, parameters), family)
    assert [printed for printed, _ in pairs] == [template.format(name=form.name, k=k) for k in parameters]
    assert [printed for printed, _ in pairs] == [spelling for _, spelling in pairs]


def test_rprec_mult_at_other_multipliers_prints_the_spellings_names() -> None:
    pairs = spelled(printed_columns("Rprec_mult", "1.5,0.25"), "rprec_mult")
    assert pairs == [("Rprec_mult_0.25", "Rprec_mult_0.25"), ("Rprec_mult_1.50", "Rprec_mult_1.50")]


def test_every_form_is_a_row_of_the_table_mapped_to_its_measure() -> None:
    for family, form in FORMS:
        row = TREC_BY_NAME[form.name]
        assert row.family == family
        assert {field.name: getattr(row, field.name) for field in fields(form)} == asdict(form)
    assert [row.name for row in TREC_MEASURES] == list(TREC_ORDER)
    assert {row.name for row in TREC_MEASURES} == {form.name for _, form in FORMS} | {r.name for r in TREC_OWN_ROWS}


def measures_c() -> str:
    if not TARBALL.is_file():
        pytest.skip(f"trec_eval's source tarball not found at {TARBALL} (set LODESTAR_TREC_EVAL_SOURCE)")
    with tarfile.open(TARBALL) as archive:
        member = next(m for m in archive.getmembers() if m.name.endswith("/measures.c") or m.name == "measures.c")
        extracted = archive.extractfile(member)
        assert extracted is not None
        return extracted.read().decode()


def c_names(source: str, array: str) -> list[str]:
    """The quoted strings of measures.c's ``static char *ARRAY[] = {...}``."""
    match = re.search(rf"\*{array}\[\]\s*=\s*\{{(.*?)\}};", source, re.S)
    assert match is not None, array
    return re.findall(r'"([^"]+)"', match.group(1))


def test_the_table_is_in_trec_evals_print_order() -> None:
    """measures.c's `te_trec_measures` is trec_eval's print order; its preference and judgment-group measures
    (prefs_*, *_avgjg) are printed by the -R prefs / qrels_jg front ends, not from this table."""
    source = measures_c()
    listed = re.search(r"te_trec_measures\[\]\s*=\s*\{(.*?)\};", source, re.S)
    assert listed is not None
    order = re.findall(r"&te_meas_(\w+)", listed.group(1))
    assert len(order) > 50  # the control: the list was read
    elsewhere = [name for name in order if name.startswith("prefs_") or name.endswith("_avgjg")]
    assert [row.name for row in TREC_MEASURES] == [name for name in order if name not in elsewhere]


def test_the_nicknames_are_trec_evals() -> None:
    source = measures_c()
    assert list(TREC_NICKNAMES["official"]) == c_names(source, "off_names")
    assert list(TREC_NICKNAMES["all_trec"]) == c_names(source, "trec_names")


def test_a_form_missing_from_the_order_fails_naming_it() -> None:
    registry = {"ndcg": REGISTRY["ndcg"]}
    with pytest.raises(
        RuntimeError, match=r"not in trec_eval's print order \(TREC_ORDER\): 'ndcg_cut' \(measure 'ndcg'\)"
    ):
        print_table(registry, ("ndcg",), ())
    assert [row.name for row in print_table(registry, ("ndcg", "ndcg_cut"), ())] == ["ndcg", "ndcg_cut"]


def test_a_name_of_the_order_no_form_declares_fails_naming_it() -> None:
    with pytest.raises(RuntimeError, match=r"in TREC_ORDER but declared by no measure's trec_eval_forms: 'P'"):
        print_table({"ndcg": REGISTRY["ndcg"]}, ("ndcg", "ndcg_cut", "P"), ())


def test_a_name_declared_twice_fails_naming_both() -> None:
    twice = replace(REGISTRY["p"], trec_eval_forms=(TrecEvalForm("ndcg"),))
    with pytest.raises(RuntimeError, match=r"'ndcg' is declared twice: by measure 'ndcg' and by measure 'p'"):
        print_table({"ndcg": REGISTRY["ndcg"], "p": twice}, ("ndcg", "ndcg_cut"), ())
