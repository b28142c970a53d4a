"""trec_eval 10's own quicktest (its QUICKTEST.md, commands 1-8, 14 and 15: the qrels-format ones) run through
`lodestar-polars trec_eval`, each compared byte for byte with the expected file trec_eval ships.

A command needing measures the CLI does not compute yet is a strict xfail naming them (read from the CLI's
own table, so the mark goes away when they land); for it, the lines of the measures the CLI does compute
are compared now, which checks the options of the command (-q, -c, -M100, -l2, -Z, comments)."""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass
from pathlib import Path

import pytest

from lodestar_polars import cli


@dataclass(frozen=True)
class Command:
    number: int
    arguments: tuple[str, ...]  # as QUICKTEST.md writes them, files under "test/"
    expected: str

    def measures(self) -> list[str]:
        """The -m values (attached, "-mP.5", or separate, "-m P.5")."""
        values, arguments = [], list(self.arguments)
        for index, argument in enumerate(arguments):
            if argument == "-m":
                values.append(arguments[index + 1])
            elif argument.startswith("-m"):
                values.append(argument[2:])
        return values

    def unparsed(self) -> list[str]:
        """The -m values the CLI refuses (a measure it does not compute, or parameters it does not read)."""
        refused = []
        for value in self.measures():
            try:
                cli.parse_trec_measures([value])
            except cli.UsageError:
                refused.append(value)
        return refused

    def not_computed(self) -> list[str]:
        """The measures trec_eval prints for this command that the CLI does not: members of a nickname it does
        not compute, and the measures of refused -m values."""
        parsed = [value for value in self.measures() if value not in self.unparsed()]
        members = list(cli.parse_trec_measures(parsed).not_computed) if parsed else []
        return [*members, *(value for value in self.unparsed())]

    def computed_arguments(self) -> list[str]:
        """The arguments without the refused -m values."""
        refused, kept, skip = set(self.unparsed()), [], False
        for index, argument in enumerate(self.arguments):
            if skip:
                skip = False
                continue
            if argument == "-m" and self.arguments[index + 1] in refused:
                skip = True
                continue
            if argument.startswith("-m") and argument[2:] in refused:
                continue
            kept.append(argument)
        return kept


QUICKTEST = [
    Command(1, ("test/qrels.test", "test/results.test"), "out.test"),
    Command(2, ("test/qrels.test.with-comments", "test/results.test"), "out.test"),
    Command(3, ("test/qrels.comment.test", "test/results.comment.test"), "out.comment.test"),
    Command(4, ("-m", "all_trec", "test/qrels.test", "test/results.test"), "out.test.a"),
    Command(5, ("-m", "all_trec", "-q", "test/qrels.test", "test/results.test"), "out.test.aq"),
    Command(6, ("-m", "all_trec", "-q", "-c", "test/qrels.test", "test/results.trunc"), "out.test.aqc"),
    Command(7, ("-m", "all_trec", "-q", "-c", "-M100", "test/qrels.test", "test/results.trunc"), "out.test.aqcM"),
    Command(
        8,
        ("-m", "all_trec", "-mrelstring.20", "-q", "-l2", "test/qrels.rel_level", "test/results.test"),
        "out.test.aql",
    ),
    Command(
        14,
        (
            *("-q", "-miprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3", "-m", "recall.20,2000"),
            *("-m", "Rprec_mult.5.0,0.2,0.35", "-mutility.2,-1,0,0", "-m", "11pt_avg..25,.5,.75"),
            *("-mndcg.1=3,2=9,4=4.5", "-mndcg_cut.10,20,23.4", "-msuccess.2,5,20"),
            *("test/qrels.test", "test/results.test"),
        ),
        "out.test.meas_params",
    ),
    Command(
        15, ("-q", "-m", "all_trec", "-Z", "test/zscores_file", "test/qrels.test", "test/results.test"), "out.test.aqZ"
    ),
]


def _in(folder: Path, arguments: list[str] | tuple[str, ...]) -> list[str]:
    return [
        str(folder / argument[len("test/") :]) if argument.startswith("test/") else argument for argument in arguments
    ]


def ours(arguments: list[str]) -> str:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["trec_eval", *arguments])
    assert code == 0, err.getvalue()
    return out.getvalue()


def _full_output_case(command: Command) -> object:
    missing = command.not_computed()
    if not missing:
        return pytest.param(command, id=str(command.number))
    reason = f"needs the measures (or measure parameters) {', '.join(missing)}"
    return pytest.param(command, id=str(command.number), marks=pytest.mark.xfail(strict=True, reason=reason))


@pytest.mark.parametrize("command", [_full_output_case(command) for command in QUICKTEST])
def test_quicktest_output_is_trec_evals(shared_data: Path, command: Command) -> None:
    folder = shared_data / "trec_eval"
    assert ours(_in(folder, command.arguments)) == (folder / command.expected).read_text()


def _name(line: str) -> str:
    return line.split("\t", 1)[0].rstrip()


def _belongs_to(name: str, measures: list[str]) -> bool:
    """Whether trec_eval's printed name (e.g. "Zrelative_P_5", "ndcg_1=3,2=9,4=4.5") is a value of one of
    `measures` (e.g. "relative_P", "ndcg.1=3,2=9,4=4.5")."""
    bare = name.removeprefix("Z")
    return any(bare == m.split(".")[0] or bare.startswith(m.split(".")[0] + "_") for m in measures)


@pytest.mark.parametrize(
    "command", [pytest.param(c, id=str(c.number)) for c in QUICKTEST if c.not_computed()] or [pytest.param(None)]
)
def test_quicktest_lines_of_the_computed_measures_are_trec_evals(shared_data: Path, command: Command | None) -> None:
    if command is None:
        pytest.skip("every quicktest command's measures are computed: the full outputs are compared")
    folder = shared_data / "trec_eval"
    computed = ours(_in(folder, command.computed_arguments()))
    printed = {_name(line) for line in computed.splitlines()}
    expected_lines = (folder / command.expected).read_text().splitlines(keepends=True)
    assert computed == "".join(line for line in expected_lines if _name(line) in printed)
    missing = command.not_computed()
    unprinted = sorted({_name(line) for line in expected_lines} - printed)
    assert [name for name in unprinted if not _belongs_to(name, missing)] == []
    assert len(printed) > 3  # the comparison is not vacuous
