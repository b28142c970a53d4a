"""gm_bpref: per query, bpref (`bpref`, as trec_eval computes it); over queries, trec_eval's geometric mean:
exp of the (weighted) mean of log(max(bpref, 1e-5)), so that a query with bpref = 0 counts as 1e-5 (trec_eval's
MIN_GEO_MEAN).  A query with R = 0 scores `no_relevant` (null: left out of the summary; trec_eval: 0, so the
floor).

Ties: as bpref: under ties="average" each query's bpref is its exact expectation over the orders of its tie
blocks (the geometric summary then takes those); the bounds order a tie block relevant rows first
(optimistic) or last (pessimistic).
"""

from __future__ import annotations

from dataclasses import replace

from . import bpref
from ._base import NO_SPELLING, TrecEvalForm

MEASURE = replace(
    bpref.MEASURE,
    name="gm_bpref",
    oracle="trec_eval binary; every tied order enumerated (per query)",
    trec_eval_forms=(TrecEvalForm("gm_bpref", printed="summary"),),
    ir_measures=NO_SPELLING,
    ranx=NO_SPELLING,
    summary="geometric",
)
