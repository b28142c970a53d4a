"""The trec_eval emulator behind ``lodestar-polars trec_eval``: trec_eval 10's arguments and output, byte for
byte, for the measures the package computes.

Its modules, by concern:

- `options`: trec_eval's command-line options and their value grammar (the ``trec_eval`` subcommand);
- `command`: the judgments' format (``-R``) picks the adapter: `qrels` (the default), `prefs`
  (``-R prefs`` / ``-R qrels_prefs``, over the library's `lodestar_polars.preferences`), `qrels_jg`
  (``-R qrels_jg``, over the library's `lodestar_polars.judgment_groups`);
- `measures`: trec_eval's measure table, built from the forms each package measure declares (`TrecEvalForm`:
  trec_eval's name, default parameters, how it prints) in trec_eval's print order, its nicknames, and the ``-m``
  values read into a request; `parameters`: the grammar of the text after ``-m name.`` that a kind of form takes
  (cut-offs, recall levels, gain pairs);
- `files`: reading trec_eval's files (judgments, run or standard input, the ``-Z`` file);
- `quirks`: what trec_eval computes otherwise than the package, reproduced on the per-query frame;
- `relstring`: trec_eval's relstring; `summary`: its output lines and summaries.

No module here imports `lodestar_polars.cli`, which only dispatches to `command.command_trec_eval`.
"""

from __future__ import annotations

from .command import command_trec_eval
from .measures import TREC_BY_NAME, TREC_MEASURES, TREC_NICKNAMES, TrecMeasure, parse_trec_measures, printed_columns
from .options import add_parser

__all__ = [
    "TREC_BY_NAME",
    "TREC_MEASURES",
    "TREC_NICKNAMES",
    "TrecMeasure",
    "add_parser",
    "command_trec_eval",
    "parse_trec_measures",
    "printed_columns",
]
