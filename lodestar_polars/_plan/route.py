"""The route a call's rows take through the plan, chosen once per call from its settings (`route`): one
object the assembly and the per-query sums read, in place of flags passed from function to function."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .._spec import Spec
from .needs import _terms


class TermRows(enum.Enum):
    """The rows the per-query sums of the measures' terms read (the counters and checks read every row)."""

    EVERY_ROW = "every row, after the windows"
    LATE_JUDGED = (
        "with judgments, the rows that can count (within the largest cut-off, or in a tie block reaching it), their"
        " judged level joined after the positions"
    )
    FIRST_RETRIEVED = (
        "without judgments, the first max_retrieved rows of each query (the rows past it still count as judgments:"
        " R, the ideal order)"
    )


@dataclass(frozen=True)
class Route:
    """How one call is computed.

    judged: the call has judgments (`qrels=`): each run row's level comes from them.
    term_rows: the rows the per-query sums read (`TermRows`); `retrieved_limit` is FIRST_RETRIEVED's.
    keeps_row_order: ties="input" / "reverse" read the run's row order, so every join onto the rows before the
        positions keeps it (a plain join may deal rows out of order).
    averages_blocks: ties="average" with a term whose tie blocks change it: a (keys, score) group-by computes the
        blocks' part.
    forks_for_blocks: tie averaging over every row: the rows fork after the windows into the per-row sums (the
        queries in no tie) and the tie blocks (the queries holding one), each branch taking its discounts.
    """

    judged: bool
    term_rows: TermRows
    retrieved_limit: int | None
    keeps_row_order: bool
    averages_blocks: bool

    @property
    def relevance_joined_late(self) -> bool:
        return self.term_rows is TermRows.LATE_JUDGED

    @property
    def forks_for_blocks(self) -> bool:
        return self.averages_blocks and self.term_rows is TermRows.EVERY_ROW


def route(spec: Spec, judged: bool) -> Route:
    """The call's route."""
    limit = None if judged else spec.max_retrieved
    if _joins_relevance_late(spec, judged):
        term_rows = TermRows.LATE_JUDGED
    elif limit is not None:
        term_rows = TermRows.FIRST_RETRIEVED
    else:
        term_rows = TermRows.EVERY_ROW
    return Route(
        judged=judged,
        term_rows=term_rows,
        retrieved_limit=limit,
        keeps_row_order=spec.ties in ("input", "reverse"),
        averages_blocks=_averages_blocks(spec, judged),
    )


def _joins_relevance_late(spec: Spec, judged: bool) -> bool:
    """With qrels, join the relevance onto the rows that can count only, after the positions: possible when
    the positions do not read the relevance (not optimistic / pessimistic ties) and every measure has a
    cut-off, so that only the tie blocks reaching the largest one count."""
    if not judged or spec.ties in ("optimistic", "pessimistic"):
        return False
    # a measure reading its query's totals on every row has no cut-off, so never joins late
    return all(m.cutoff is not None for m in spec.measures)


def _averages_blocks(spec: Spec, judged: bool) -> bool:
    return spec.ties == "average" and any(term.block is not None for term in _terms(spec, judged).values())
