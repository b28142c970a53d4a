"""The diversity (intent-aware) family, as ndeval computes it (and ir_measures through ndeval): alpha_dcg,
alpha_ndcg, err_ia, nerr_ia, nrbp, nnrbp, p_ia, ap_ia and st_recall, one declaration each below.

A query's judgments are per intent (TREC's subtopics): a document is relevant to intent j when its level for j
is at least `rel` (default 1, inclusive, ir_measures' `rel`; ndeval's own reader clips every level to 0 or 1).
S is the number of the query's intents with a relevant document (ndeval's "actual subtopics"; an intent whose
documents are all judged non-relevant does not count).  In the run, the row at position p relevant to intent j
after c earlier rows relevant to j has the intent-aware gain (1 - alpha)^c for j, and the row's gain g(p) is
the sum over its intents.  With d(p) = 1 / log2(p + 1):

    alpha_dcg@k  = sum over p <= k of g(p) d(p) / (S x sum over i < k of (1 - alpha)^i d(i + 1))
    err_ia@k     = sum over p <= k of g(p) / p  / (S x sum over i < k of (1 - alpha)^i / (i + 1))
    alpha_ndcg@k = sum over p <= k of g(p) d(p) / the same sum over the ideal ranking
    nerr_ia@k    = sum over p <= k of g(p) / p  / the same sum over the ideal ranking
    nrbp         = (1 - (1 - alpha) beta) / S x sum over every p of g(p) beta^(p - 1)
    nnrbp        = nrbp / the same over the ideal ranking
    p_ia@k       = (the (row, intent) relevant pairs within k) / (k S)
    st_recall@k  = (the intents with a relevant row within k) / S
    ap_ia        = the mean over the S intents of AP_j = sum over the rows relevant to j of (their rank among
                   them) / p, over R_j (the documents judged relevant to j), over every row

The denominators of alpha_dcg and err_ia are ndeval's "ideal ideal" (every position covering every intent),
the same for every run of the query.  ndeval does not divide at k = 1 (its loop starts at the second
position): alpha_dcg@1 and err_ia@1 are the raw g(1), as ndeval prints them; alpha_ndcg@1 and nerr_ia@1 are
unaffected (both sides raw).  A query with S = 0 scores 0 everywhere (ndeval's nNRBP is then 0 / 0 = NaN).

The ideal ranking is ndeval's greedy one (the true ideal is NP-hard): at each position, the judged document
whose gain given the documents already placed is greatest, ties to the greatest doc id (C's strcmp: byte
order of the id's text).  ndeval places every judged document; only the first k positions count for a
measure at cut-off k, so the plan runs the greedy steps up to the call's largest cut-off of alpha_ndcg and
nerr_ia (`_diversity`).  ndeval computes every cut-off measure over the first 20 positions (its DEPTH) and
pyndeval refuses a cut-off above 20: here any cut-off is computed by the same formulas, and the greedy ideal
is bounded by `GREATEST_IDEAL_CUTOFF`.  nnrbp's ideal is built to the position where beta^(p - 1) becomes
negligible (`nrbp_depth`); a query with more relevant documents than that at a beta near 1 raises an error
rather than give a value ndeval would not (its ideal is every relevant document).

The run's order: ndeval orders a run file by its rank column, or with -traditional by descending score then
descending doc id (trec_eval's order: ties="doc" here); pyndeval (and so ir_measures) by descending score then
ascending doc id: sort the frame by doc and pass ties="input" for that order.  No exact expectation over tied
orders is known for these measures (ties="average" is refused), nor are the most / least gainful orders of a
tie block always their greatest / least values (the tie bounds are refused).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, NamedTuple

import polars as pl

from ._base import PREFIX, Option, Spelling, option_text

# the largest cut-off of alpha_ndcg and nerr_ia: the plan unrolls one greedy step of the ideal per position
GREATEST_IDEAL_CUTOFF = 100

ORACLE = "ndeval (pyndeval, and ir_measures through it); hand derivations"
# why the family refuses ties="average" and the tie bounds (`_spec.diversity_spec`)
REFUSES_AVERAGE = (
    "a row's gain depends on which rows above it cover its intents, and no closed-form expectation over the "
    "orders of tied rows is known"
)
REFUSES_BOUNDS = (
    "a gainful row ranked early lowers the gains of the rows after it that share its intents, so the most / least "
    "gainful order of a tie block is not always the greatest / least value"
)
# the least weight beta^(p - 1) of a position nnrbp's greedy ideal is built to (`nrbp_depth`): below it, the
# positions left out cannot change the ideal NRBP's double (checked per query by the plan)
NEGLIGIBLE = 2.0**-60


class Setting(NamedTuple):
    """The option values a family member reads: the relevance level `rel`, alpha and beta (defaults where the
    measure has no such option); two measures of one setting share their sums."""

    rel: float
    alpha: float
    beta: float


class Need(enum.Enum):
    """A per-query sum the plan computes for a setting (and a cut-off k, or the whole list)."""

    RUN_DCG = "the run's sum over positions p <= k of g(p) / log2(p + 1)"
    IDEAL_DCG = "the greedy ideal ranking's sum over positions p <= k of g(p) / log2(p + 1)"
    RUN_ERR = "the run's sum over positions p <= k of g(p) / p"
    IDEAL_ERR = "the greedy ideal ranking's sum over positions p <= k of g(p) / p"
    PAIRS = "the (row, intent) relevant pairs within k"
    COVERED = "the intents with a relevant row within k"
    RUN_NRBP = "the run's sum over every position of g(p) beta^(p - 1)"
    IDEAL_NRBP = "the greedy ideal ranking's sum over its positions of g(p) beta^(p - 1)"
    AP = "the sum over every relevant (row, intent) pair of (its rank among the intent's rows) / p / R_j"


# the depth a need reads: within the cut-off, or the whole list
WHOLE_LIST_NEEDS = frozenset({Need.RUN_NRBP, Need.IDEAL_NRBP, Need.AP})
IDEAL_NEEDS = frozenset({Need.IDEAL_DCG, Need.IDEAL_ERR, Need.IDEAL_NRBP})


def nrbp_depth(beta: float) -> int:
    """The positions nnrbp's greedy ideal is built to: until beta^(p - 1) falls below `NEGLIGIBLE` (a greedy
    ideal's gains never grow, so the positions after weigh less than g(p) beta^p / (1 - beta)), at most
    `GREATEST_IDEAL_CUTOFF`.  ndeval places every relevant document: where the positions left out could change
    the ideal NRBP's last bit (a query with more relevant documents, at a beta near 1), the plan raises."""
    if beta <= 0.0:
        return 1
    if beta >= 1.0:
        return GREATEST_IDEAL_CUTOFF
    return min(GREATEST_IDEAL_CUTOFF, 1 + math.ceil(math.log(NEGLIGIBLE) / math.log(beta)))


def column(need: Need, setting: Setting, cutoff: int | None) -> str:
    """The per-query column of a need at a setting and cut-off."""
    values = "_".join(option_text(value) for value in setting)
    return f"{PREFIX}div_{need.name.lower()}_{values}_{'all' if cutoff is None else cutoff}"


def intents(setting: Setting) -> str:
    """The per-query column S: the intents with a document judged at level >= rel."""
    return f"{PREFIX}div_intents_{option_text(setting.rel)}"


def discount(position: int) -> float:
    """ndeval's discount at a 1-based position: log(2) / log(position + 1)."""
    return math.log(2.0) / math.log(position + 1.0)


def ideal_ideal_dcg(alpha: float, cutoff: int) -> float:
    """ndeval's normaliser of alpha-DCG@k per intent: every position covering every intent."""
    return sum((1.0 - alpha) ** i * discount(i + 1) for i in range(cutoff))


def ideal_ideal_err(alpha: float, cutoff: int) -> float:
    """ndeval's normaliser of ERR-IA@k per intent."""
    return sum((1.0 - alpha) ** i / (i + 1) for i in range(cutoff))


def _refused_alpha(alpha: float) -> str | None:
    return None if 0.0 <= alpha <= 1.0 else "alpha, the redundancy intolerance, lies in [0, 1]"


def _refused_beta(beta: float) -> str | None:
    return None if 0.0 <= beta <= 1.0 else "beta, the patience, lies in [0, 1]"


def _refused_rel(rel: float) -> str | None:
    return None if math.isfinite(rel) else "rel is a finite relevance level"


ALPHA = Option(
    "alpha", 0.5, "redundancy intolerance: each earlier row of an intent scales its gain by 1 - alpha", _refused_alpha
)
BETA = Option("beta", 0.5, "patience: position p weighs beta^(p - 1)", _refused_beta)
REL = Option("rel", 1.0, "the least level relevant to an intent (inclusive)", _refused_rel)

Value = Callable[[Setting, int | None], pl.Expr]


@dataclass(frozen=True)
class DiversityDefinition:
    """One member of the family: its canonical name (evaluate's column `name@k`), the other names evaluate takes
    (lower case: ndeval's among them), ir_measures' and ndeval's spellings, whether it takes a cut-off
    ("required_cutoff": `name@k` only) or none, its options, the per-query sums it reads (`Need`) and its finish
    `value(setting, k)` from them and S (`intents`)."""

    name: str
    aliases: tuple[str, ...]
    ir_measures: Spelling
    ndeval: Spelling
    parameter: Literal["required_cutoff", "none"]
    options: tuple[Option, ...]
    needs: frozenset[Need]
    value: Value
    oracle: str = ORACLE

    def setting(self, values: dict[str, float]) -> Setting:
        """The measure's setting from its option values (defaults filled in)."""
        chosen = {option.name: values.get(option.name, option.default) for option in (ALPHA, BETA, REL)}
        return Setting(float(chosen["rel"] or 0.0), float(chosen["alpha"] or 0.0), float(chosen["beta"] or 0.0))


def _per_intent(setting: Setting, total: pl.Expr) -> pl.Expr:
    """A per-query total over S, 0 where S = 0."""
    count = pl.col(intents(setting)).cast(pl.Float64)
    return pl.when(count > 0).then(total / count).otherwise(0.0)


def _cutoff(cutoff: int | None) -> int:
    if cutoff is None:
        msg = "the diversity cut-off measures are computed at a cut-off: the plan asks them with one"
        raise AssertionError(msg)
    return cutoff


def _ideal_ideal(need: Need, normaliser: Callable[[float, int], float]) -> Value:
    def value(setting: Setting, cutoff: int | None) -> pl.Expr:
        k = _cutoff(cutoff)
        total = pl.col(column(need, setting, k))
        if k == 1:  # ndeval leaves its first position undivided
            return pl.when(pl.col(intents(setting)) > 0).then(total).otherwise(0.0)
        return _per_intent(setting, total / normaliser(setting.alpha, k))

    return value


def _over_ideal(run: Need, ideal: Need) -> Value:
    def value(setting: Setting, cutoff: int | None) -> pl.Expr:
        k = None if run in WHOLE_LIST_NEEDS else _cutoff(cutoff)
        total = pl.col(column(run, setting, k))
        return pl.when(total > 0).then(total / pl.col(column(ideal, setting, k))).otherwise(0.0)

    return value


def _precision(setting: Setting, cutoff: int | None) -> pl.Expr:
    k = _cutoff(cutoff)
    return _per_intent(setting, pl.col(column(Need.PAIRS, setting, k)).cast(pl.Float64) / float(k))


def _subtopic_recall(setting: Setting, cutoff: int | None) -> pl.Expr:
    return _per_intent(setting, pl.col(column(Need.COVERED, setting, _cutoff(cutoff))).cast(pl.Float64))


def _average_precision(setting: Setting, cutoff: int | None) -> pl.Expr:
    return _per_intent(setting, pl.col(column(Need.AP, setting, None)))


def _nrbp(setting: Setting, cutoff: int | None) -> pl.Expr:
    scale = 1.0 - (1.0 - setting.alpha) * setting.beta
    return _per_intent(setting, pl.col(column(Need.RUN_NRBP, setting, None)) * scale)


ALPHA_DCG = DiversityDefinition(
    name="alpha_dcg",
    aliases=("alpha-dcg",),
    ir_measures=Spelling(None, "alpha_DCG@{k}"),
    ndeval=Spelling(None, "alpha-DCG@{k}"),
    parameter="required_cutoff",
    options=(ALPHA, REL),
    needs=frozenset({Need.RUN_DCG}),
    value=_ideal_ideal(Need.RUN_DCG, ideal_ideal_dcg),
)
ALPHA_NDCG = DiversityDefinition(
    name="alpha_ndcg",
    aliases=("alpha-ndcg",),
    ir_measures=Spelling(None, "alpha_nDCG@{k}"),
    ndeval=Spelling(None, "alpha-nDCG@{k}"),
    parameter="required_cutoff",
    options=(ALPHA, REL),
    needs=frozenset({Need.RUN_DCG, Need.IDEAL_DCG}),
    value=_over_ideal(Need.RUN_DCG, Need.IDEAL_DCG),
)
ERR_IA = DiversityDefinition(
    name="err_ia",
    aliases=("err-ia",),
    ir_measures=Spelling(None, "ERR_IA@{k}"),
    ndeval=Spelling(None, "ERR-IA@{k}"),
    parameter="required_cutoff",
    options=(ALPHA, REL),
    needs=frozenset({Need.RUN_ERR}),
    value=_ideal_ideal(Need.RUN_ERR, ideal_ideal_err),
)
NERR_IA = DiversityDefinition(
    name="nerr_ia",
    aliases=("nerr-ia",),
    ir_measures=Spelling(None, "nERR_IA@{k}"),
    ndeval=Spelling(None, "nERR-IA@{k}"),
    parameter="required_cutoff",
    options=(ALPHA, REL),
    needs=frozenset({Need.RUN_ERR, Need.IDEAL_ERR}),
    value=_over_ideal(Need.RUN_ERR, Need.IDEAL_ERR),
)
P_IA = DiversityDefinition(
    name="p_ia",
    aliases=("p-ia",),
    ir_measures=Spelling(None, "P_IA@{k}"),
    ndeval=Spelling(None, "P-IA@{k}"),
    parameter="required_cutoff",
    options=(REL,),
    needs=frozenset({Need.PAIRS}),
    value=_precision,
)
ST_RECALL = DiversityDefinition(
    name="st_recall",
    aliases=("strecall", "strec"),
    ir_measures=Spelling(None, "StRecall@{k}"),
    ndeval=Spelling(None, "strec@{k}"),
    parameter="required_cutoff",
    options=(REL,),
    needs=frozenset({Need.COVERED}),
    value=_subtopic_recall,
)
AP_IA = DiversityDefinition(
    name="ap_ia",
    aliases=("map_ia", "map-ia"),
    ir_measures=Spelling("AP_IA", None),
    ndeval=Spelling("MAP-IA", None),
    parameter="none",
    options=(REL,),
    needs=frozenset({Need.AP}),
    value=_average_precision,
)
NRBP = DiversityDefinition(
    name="nrbp",
    aliases=(),
    ir_measures=Spelling("NRBP", None),
    ndeval=Spelling("NRBP", None),
    parameter="none",
    options=(ALPHA, BETA, REL),
    needs=frozenset({Need.RUN_NRBP}),
    value=_nrbp,
)


NNRBP = DiversityDefinition(
    name="nnrbp",
    aliases=(),
    ir_measures=Spelling("nNRBP", None),
    ndeval=Spelling("nNRBP", None),
    parameter="none",
    options=(ALPHA, BETA, REL),
    needs=frozenset({Need.RUN_NRBP, Need.IDEAL_NRBP}),
    value=_over_ideal(Need.RUN_NRBP, Need.IDEAL_NRBP),
)

DIVERSITY: dict[str, DiversityDefinition] = {
    measure.name: measure for measure in (ALPHA_DCG, ALPHA_NDCG, ERR_IA, NERR_IA, NRBP, NNRBP, P_IA, AP_IA, ST_RECALL)
}
