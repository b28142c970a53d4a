"""``lodestar-polars trec_eval``: the judgments' format (``-R``) picks the adapter that evaluates and prints."""

from __future__ import annotations

import argparse
import tempfile

from .._command_errors import UsageError
from . import prefs, qrels, qrels_jg

FORMATS = {
    "qrels": qrels.trec_eval,
    "prefs": prefs.trec_eval,
    "qrels_prefs": prefs.trec_eval,
    "qrels_jg": qrels_jg.trec_eval,
}


def command_trec_eval(args: argparse.Namespace) -> int:
    """Run the parsed ``trec_eval`` command (`options.add_parser`); returns the exit code."""
    adapter = FORMATS.get(args.rel_format)
    if adapter is None:
        msg = f"-R {args.rel_format!r} is not supported; supported: qrels (the default), prefs, qrels_prefs, qrels_jg."
        raise UsageError(msg)
    with tempfile.TemporaryDirectory(prefix="lodestar-trec-eval-") as scratch:
        return adapter(args, scratch)
