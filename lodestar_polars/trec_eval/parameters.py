"""trec_eval's parameter grammar of a kind of measure: the text after the first dot of ``-m name.parameters``
read as trec_eval reads it (cut-offs with C's atol, recall levels, gain pairs ``level=gain``), each refused with a
message naming the measure where trec_eval would read something else than the user meant.  A measure's
`TrecEvalForm` says which kind it takes; the grammar of one measure (set_F's beta, utility's coefficients,
Rprec_mult's multipliers, rbp's persistence, 11pt_avg's levels) is declared with the measure, in its module, from
the pieces of `measures._trec_parameters`.
"""

from __future__ import annotations

import itertools
import re

from .._command_errors import UsageError
from ..measures._trec_parameters import refuse_duplicates, sorted_decimals

_LEADING_INTEGER = re.compile(r"\s*([+-]?[0-9]+)")
LARGEST_CUTOFF = 2**63 - 1  # trec_eval reads a cut-off as a C long (atol)


_GAIN_PAIR = re.compile(r"([0-9]+)=([+-]?(?:[0-9]*\.?[0-9]+|[0-9]+\.))")


def parse_gain_pairs(name: str, parameters: str) -> dict[int, float]:
    """trec_eval's gain pairs (``ndcg.1=3,2=-1,4=4.5``): relevance level -> gain, levels >= 0, gains any decimal
    number, negative and 0 included (trec_eval: "Gains are allowed to be 0 or negative, and relevance level 0
    can be given a gain").

    A level given twice with two gains (``G.1=5,1=3``, ``ndcg.1=3,01=5``) is refused: trec_eval keeps both
    pairs, its run's DCG takes the lesser gain (the first of its table sorted by gain) and its ideal DCG the gain
    of the first pair typed, so that it prints neither gain's value."""
    pairs: dict[int, float] = {}
    for pair in parameters.split(","):
        match = _GAIN_PAIR.fullmatch(pair.strip())
        if match is None:
            msg = (
                f"measure '{name}.{parameters}': gain pairs are level=gain, a level >= 0 and a gain (a decimal "
                f"number, negative or 0 allowed), separated by commas (e.g. '{name}.1=3,2=-1'), got {pair!r}."
            )
            raise UsageError(msg)
        level, gain = int(match.group(1)), float(match.group(2))
        if pairs.get(level, gain) != gain:
            msg = (
                f"measure '{name}.{parameters}': level {level} is given two gains, {pairs[level]:g} and {gain:g}: "
                "trec_eval scores the run's documents of that level with the lesser and the ideal list with the "
                "first, which is not reproduced here; give each level one gain."
            )
            raise UsageError(msg)
        pairs[level] = gain
    return pairs


def gain_mapping(name: str, parameters: str, greatest: int, ideal: bool = True) -> dict[float, float]:
    """The gain of every level 0..`greatest` (its own level, trec_eval's default), and the pairs'.

    trec_eval sorts these gains with a comparator that truncates their difference to an integer: two gains
    less than 1 apart compare equal, and the order it then gives them (its C library's sort) sets the ideal
    ordering of ndcg, G, ndcg_rel and Rndcg (`-m ndcg.1=0.5` ranks level 0's gain 0 above 0.5 and scores every
    query 0; `-m ndcg.1=0.4,0=-0.5` ranks -0.5 above 0.4, as typed, and scores every query 0, where
    `-m ndcg.0=-0.5,1=0.4` does not).  Such gains, where one of them is positive, are refused rather than printed
    otherwise than trec_eval; non-positive gains less than 1 apart (-0.5 and 0) are taken: they end the ideal
    list whatever their order, and a positive gain at least 1 from every other compares exactly.  Without
    `ideal` (the pairs are `dcg`'s only, which reads no ideal order) any gains are taken: each level has one."""
    pairs = parse_gain_pairs(name, parameters)
    mapping = {float(level): float(level) for level in range(greatest + 1)} | {
        float(level): gain for level, gain in pairs.items()
    }
    gains = sorted(set(mapping.values())) if ideal else []
    for low, high in itertools.pairwise(gains):
        if high - low < 1 and high > 0:
            levels = {gain: next(int(level) for level, g in mapping.items() if g == gain) for gain in (low, high)}
            msg = (
                f"measure '{name}.{parameters}': gains {low:g} (level {levels[low]}) and {high:g} (level "
                f"{levels[high]}) are less than 1 apart: trec_eval compares gains by their difference truncated "
                "to an integer, so its ideal ordering of these two depends on its C library's sort and is not "
                "reproduced here; give gains that are equal or at least 1 apart."
            )
            raise UsageError(msg)
    return mapping


def parse_cutoffs(name: str, parameters: str) -> tuple[int, ...]:
    """Cut-offs as trec_eval reads them, with C's atol: the integer each item starts with ("23.4" is 23)."""
    leading = [_LEADING_INTEGER.match(value) for value in parameters.split(",")]
    # `ndcg_cut.0=-1,2=5`: trec_eval reads no gain pairs here, each item's leading integer is a cut-off
    pairs = (
        f" ({name} takes cut-offs, not gain pairs: trec_eval reads each item's leading integer as a cut-off and "
        "takes the judged levels as gains; gain pairs go with G, dcg, ideal_dcg, ndcg, ndcg_rel and Rndcg, e.g. "
        f"'ndcg.{parameters}')"
        if "=" in parameters
        else ""
    )
    if not all(leading):
        msg = f"measure '{name}.{parameters}': cut-offs must be integers (ASCII digits) separated by commas{pairs}."
        raise UsageError(msg)
    cutoffs = sorted(int(match.group(1)) for match in leading if match)
    if cutoffs[0] <= 0:
        msg = f"measure '{name}.{parameters}': cut-offs must be positive{pairs}."
        raise UsageError(msg)
    if cutoffs[-1] > LARGEST_CUTOFF:
        msg = (
            f"measure '{name}.{parameters}': cut-off {cutoffs[-1]} is above {LARGEST_CUTOFF}, the largest trec_eval "
            "reads (a C long: its atol would read this one as that largest value)."
        )
        raise UsageError(msg)
    if len(set(cutoffs)) != len(cutoffs):
        msg = f"measure '{name}.{parameters}': duplicate cut-offs."
        raise UsageError(msg)
    return tuple(cutoffs)


def parse_levels(name: str, parameters: str) -> tuple[float, ...]:
    """Recall levels as trec_eval takes them (``iprec_at_recall..10,.20``: the text after the first dot),
    sorted ascending as trec_eval prints them."""
    levels = sorted_decimals(name, parameters, "recall levels")
    if levels[-1] > 1.0:
        msg = f"measure '{name}.{parameters}': recall levels must lie from 0 to 1."
        raise UsageError(msg)
    return refuse_duplicates(name, parameters, levels, "recall levels")
