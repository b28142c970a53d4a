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
2. add one line to `REGISTRY` in `_registry.py`.

evaluate() then takes its names (`MEASURE_NAMES` in `_spec`), and the tests parametrised over the registry
(tests/test_registry.py) check it in every engine against its declared bounds.

The layer is internal: this package exports nothing (no API page describes it, and its names may change in any
release).  The package's own modules import `REGISTRY` from `_registry`, `Definition` and `Quantity` from
`_base`; a user names measures as `evaluate` does (`"ndcg@10"`, `"rbp(p=0.8)@10"`).
"""

__all__: list[str] = []
