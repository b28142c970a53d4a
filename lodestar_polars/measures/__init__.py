"""The measure layer: one module per measure, one registry line per measure.

Each module declares a `MEASURE` (`_base.Definition`): its names (canonical, evaluate()'s aliases,
trec_eval's, ir_measures' and ranx's), its family (reads the gain, or counts the rows above the threshold),
the shared per-row and per-query quantities it needs, its per-query terms (row form and tie-block form, with
the block sums they read), its finish, whether `no_relevant` applies, its bounds and its summary over
queries; its docstring says how it treats ties.  `_plan/` computes each quantity a call's measures need
once, sums the union of their terms, and finishes each measure with its own expression.  Machinery two
measures share lives in a module of its own: `_hits` (precision, recall) and `_first_relevant` (reciprocal
rank, success).

The diversity (intent-aware) family, whose judgments are per intent, is declared apart, one declaration per
measure in `diversity.py` (its own `DIVERSITY` registry), and computed by its own plan (`_diversity.py`):
its per-row quantities are per (row, intent), not those of `_plan.py`.

To add a measure:

1. write `measures/<measure>.py`, declaring `MEASURE = Definition(...)` from the shared vocabulary of
   `_base` (reuse its quantities and terms; a new shared quantity is a `Quantity` member plus one
   `QuantityPlan` line in `_plan/registry.py`, saying what it reads and what it adds at each site of the plan);
   if trec_eval has it, also its `trec_eval_forms`: one `TrecEvalForm` per row of trec_eval's measure table
   (ndcg is trec_eval's ``ndcg``, with gain pairs, and ``ndcg_cut``, with cut-offs), saying trec_eval's name,
   its default cut-offs or recall levels, how it prints (a float, a count, the summary line only) and how it
   reads ``-m name.parameters`` (cut-offs, recall levels, gain pairs, or a reader of its own, built from
   `_trec_parameters`);
2. add one line to `REGISTRY` in `_registry.py`.

evaluate() then takes its names (`MEASURE_NAMES` in `_spec`), and the tests parametrised over the registry
(tests/test_registry.py) check it in every engine against its declared bounds.  ``lodestar-polars trec_eval``
prints a measure from its forms: the front end (`trec_eval.measures`) holds only what is trec_eval's own, its
print order (measures.c's list of names, where a new form's name goes, or the import fails saying so), its
nicknames and its rows that are no measure (runid, num_q, relstring); tests/test_trec_eval_forms.py checks each
form's printed names against the measure's `trec_eval` spelling.  The measure layer imports no front end.

The layer is internal: this package exports nothing (no API page describes it, and its names may change in any
release).  The package's own modules import `REGISTRY` from `_registry`, `Definition` and `Quantity` from
`_base`; a user names measures as `evaluate` does (`"ndcg@10"`, `"rbp(p=0.8)@10"`).
"""

__all__: list[str] = []
