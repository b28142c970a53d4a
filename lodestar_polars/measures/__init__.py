"""The measure layer: one module per measure, one registry line per measure.

Each module declares a `MEASURE` (`_base.Definition`): its names (canonical, evaluate()'s aliases,
trec_eval's, ir_measures' and ranx's), its family (reads the gain, or counts the rows above the threshold),
the shared per-row and per-query quantities it needs, its per-query terms (row form and tie-block form, with
the block sums they read), its finish, whether `no_relevant` applies, its bounds and its summary over
queries; its docstring says how it treats ties.  `_plan.py` computes each quantity a call's measures need
once, sums the union of their terms, and finishes each measure with its own expression.  Machinery two
measures share lives in a module of its own: `_hits` (precision, recall) and `_first_relevant` (reciprocal
rank, success).

To add a measure:

1. write `measures/<measure>.py`, declaring `MEASURE = Definition(...)` from the shared vocabulary of
   `_base` (reuse its quantities and terms; a new shared quantity is a `Quantity` the plan learns to compute);
2. add one line to `REGISTRY` below.

evaluate() then takes its names (`MEASURE_NAMES` in `_spec`), and the tests parametrised over the registry
(tests/test_registry.py) check it in every engine against its declared bounds.
"""

from __future__ import annotations

from . import (
    average_precision,
    bin_g,
    bpm,
    bpref,
    dcg,
    eleven_point_average,
    err,
    f1,
    g,
    gm_bpref,
    gm_map,
    ideal_dcg,
    infap,
    insq,
    inst,
    iprec_at_recall,
    judged,
    ndcg,
    ndcg_rel,
    nerr,
    nerr8,
    nerr9,
    nerr10,
    nerr11,
    num_nonrel_judged_ret,
    num_rel,
    num_rel_ret,
    num_ret,
    precision,
    rbp,
    rbp_resid,
    recall,
    reciprocal_rank,
    relative_precision,
    rndcg,
    rprec,
    rprec_mult,
    sdcg,
    set_f,
    set_map,
    set_precision,
    set_recall,
    set_relative_precision,
    success,
    unjudged,
    utility,
    yaap,
)
from ._base import Definition, Quantity

REGISTRY: dict[str, Definition] = {
    ndcg.MEASURE.name: ndcg.MEASURE,
    dcg.MEASURE.name: dcg.MEASURE,
    reciprocal_rank.MEASURE.name: reciprocal_rank.MEASURE,
    precision.MEASURE.name: precision.MEASURE,
    recall.MEASURE.name: recall.MEASURE,
    average_precision.MEASURE.name: average_precision.MEASURE,
    success.MEASURE.name: success.MEASURE,
    num_ret.MEASURE.name: num_ret.MEASURE,
    num_rel.MEASURE.name: num_rel.MEASURE,
    num_rel_ret.MEASURE.name: num_rel_ret.MEASURE,
    gm_map.MEASURE.name: gm_map.MEASURE,
    rprec.MEASURE.name: rprec.MEASURE,
    bpref.MEASURE.name: bpref.MEASURE,
    iprec_at_recall.MEASURE.name: iprec_at_recall.MEASURE,
    infap.MEASURE.name: infap.MEASURE,
    err.MEASURE.name: err.MEASURE,
    nerr.MEASURE.name: nerr.MEASURE,
    num_nonrel_judged_ret.MEASURE.name: num_nonrel_judged_ret.MEASURE,
    set_precision.MEASURE.name: set_precision.MEASURE,
    set_recall.MEASURE.name: set_recall.MEASURE,
    set_relative_precision.MEASURE.name: set_relative_precision.MEASURE,
    set_map.MEASURE.name: set_map.MEASURE,
    set_f.MEASURE.name: set_f.MEASURE,
    utility.MEASURE.name: utility.MEASURE,
    gm_bpref.MEASURE.name: gm_bpref.MEASURE,
    relative_precision.MEASURE.name: relative_precision.MEASURE,
    unjudged.MEASURE.name: unjudged.MEASURE,
    judged.MEASURE.name: judged.MEASURE,
    f1.MEASURE.name: f1.MEASURE,
    rbp.MEASURE.name: rbp.MEASURE,
    rbp_resid.MEASURE.name: rbp_resid.MEASURE,
    rprec_mult.MEASURE.name: rprec_mult.MEASURE,
    bin_g.MEASURE.name: bin_g.MEASURE,
    eleven_point_average.MEASURE.name: eleven_point_average.MEASURE,
    g.MEASURE.name: g.MEASURE,
    ndcg_rel.MEASURE.name: ndcg_rel.MEASURE,
    rndcg.MEASURE.name: rndcg.MEASURE,
    sdcg.MEASURE.name: sdcg.MEASURE,
    ideal_dcg.MEASURE.name: ideal_dcg.MEASURE,
    yaap.MEASURE.name: yaap.MEASURE,
    nerr8.MEASURE.name: nerr8.MEASURE,
    nerr9.MEASURE.name: nerr9.MEASURE,
    bpm.MEASURE.name: bpm.MEASURE,
    insq.MEASURE.name: insq.MEASURE,
    nerr10.MEASURE.name: nerr10.MEASURE,
    nerr11.MEASURE.name: nerr11.MEASURE,
    inst.MEASURE.name: inst.MEASURE,
}

__all__ = ["REGISTRY", "Definition", "Quantity"]
