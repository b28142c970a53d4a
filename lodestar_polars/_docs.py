"""Docstrings of the public methods, shared by the namespaces and the Spark functions.

Each front end keeps its explicit, typed signature; `documented` gives it a numpy-style docstring assembled
from the one description of each parameter below, so the two front ends cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

F = TypeVar("F", bound=Callable[..., object])

FRAME = (
    "frame : pyspark.sql.DataFrame\n"
    "    The rows, one per (query, document): the columns the options name (a qrels run: query, doc, score)."
)

PARAMETERS: dict[str, str] = {
    "measures": (
        "measures : str or list of str\n"
        "    Measure names, case-insensitive, each optionally with a cut-off: 'ndcg', 'ndcg@10', 'dcg@5', 'rr',\n"
        "    'rr@10', 'p@5', 'r@100', 'ap', 'ap@10', 'success@1' (also 'nDCG@10', 'P@5', 'R@100', 'AP', 'RR',\n"
        "    'Success@10', 'map', 'mrr', 'precision', 'recall', 'hit_rate').  Output columns are the canonical\n"
        "    lower-case names ('ndcg@10', 'p@5', 'r@100', 'ap', 'rr', 'success@1', 'dcg@5')."
    ),
    "query": (
        "query : str or list of str, default 'query'\n"
        "    The query id column, or several columns forming a composite key (e.g. ['session', 'query_id'])."
    ),
    "relevance": (
        "relevance : str or Expr, default 'relevance'\n"
        "    The graded relevance (numeric or boolean): a column name or an elementwise expression.  With\n"
        "    `qrels`, it is read from the judgments."
    ),
    "score": (
        "score : str or Expr, default 'score'\n"
        "    The model score, ranked descending: a column or an expression (e.g. -pl.col('distance'))."
    ),
    "doc": (
        "doc : str or list of str, optional\n"
        "    Document id column(s): enables the duplicate (query, doc) check, ties='doc' and `qrels`."
    ),
    "by": (
        "by : str or list of str, optional\n"
        "    Group columns (system, model, segment...): the measures are computed per (by..., query), all\n"
        "    groups in one plan; the output starts with these columns."
    ),
    "k": (
        "k : int, None or list of them, default None\n"
        "    Cut-off(s): None is the whole list; a list gives one column per value, computed in one pass."
    ),
    "ties": (
        "ties : {'average', 'reverse', 'input', 'doc', 'optimistic', 'pessimistic'}, default 'average'\n"
        "    'average': the exact expectation over every order of tied scores (scikit-learn); 'input': the earlier\n"
        "    row first (LightGBM, XGBoost); 'reverse': the later row first; 'doc': the doc id's text descending\n"
        "    (trec_eval); 'optimistic' / 'pessimistic': most / least relevant first."
    ),
    "gain": (
        "gain : 'linear', 'exponential', mapping or sequence, default 'linear'\n"
        "    The gain of a relevance label: the label, 2 ** label - 1, a mapping label -> gain, or a sequence\n"
        "    (LightGBM's label_gain: label i -> gain i).  A mapping may give negative gains (trec_eval's gain\n"
        "    pairs): the DCG sums them, the ideal DCG takes the positive gains only; rbp refuses them."
    ),
    "weight": (
        "weight : str or Expr, optional\n"
        "    One weight per query (equal on every row of the query), carried to the output and used by the means."
    ),
    "no_relevant": (
        "no_relevant : float, None or 'error', default 0.0\n"
        "    The value of a query with nothing to normalise by (ideal DCG 0, or no relevant document for recall\n"
        "    and AP): a float (0.0 scikit-learn and trec_eval, 1.0 LightGBM), None (null, left out of the\n"
        "    means) or 'error'."
    ),
    "log_base": "log_base : float, default 2.0\n    Base of the logarithm of the discount 1 / log(position + 1).",
    "threshold": (
        "threshold : float, default 0.0\n    A document is relevant when its relevance is above `threshold`."
    ),
    "qrels": (
        "qrels : DataFrame or LazyFrame, optional\n"
        "    Judgments with the `query`, `doc` and `relevance` columns: the frame is then a run (query, doc,\n"
        "    score) evaluated as trec_eval does (unjudged documents count 0, negative levels count 0, the ideal\n"
        "    from every judged document).  Their query and doc columns have the run's dtypes, or integer dtypes\n"
        "    of other widths, joined in the narrowest integer dtype holding both (Int32 and Int64: Int64; UInt32\n"
        "    and Int64: Int64; UInt64 and a signed integer: refused); the output's query column keeps the run's\n"
        "    dtype."
    ),
    "missing_queries": (
        "missing_queries : {'skip', 'zero'}, default 'skip'\n"
        "    With `qrels`: judged queries missing from the run (from a `by` group's run) are left out, or scored\n"
        "    0 (trec_eval -c)."
    ),
    "max_retrieved": (
        "max_retrieved : int, optional\n"
        "    At most this many documents per query count as retrieved: the first in the tie-broken order (trec_eval\n"
        "    -M, with ties='doc').  The rows cut still count as judgments, as trec_eval's judgments file does:\n"
        "    without `qrels`, their relevance still enters the relevant count R, the ideal orders (ndcg's ideal\n"
        "    DCG) and the judged counts (bpref).  Needs ties 'doc', 'input' or 'reverse'."
    ),
    "judged_only": (
        "judged_only : bool, default False\n"
        "    With `qrels`: retrieved documents not judged (or judged at a negative level) are removed before any\n"
        "    measure, the rest keep their order (trec_eval -J); a query left with none retrieved scores as one\n"
        "    that retrieved nothing."
    ),
    "exact_sums": (
        "exact_sums : bool, default False\n"
        "    Every sum (per query, per tie block, over queries) exact and rounded once, so that no value depends\n"
        "    on the order of the rows, to the last bit (a float sum adds in the order the rows arrive, and the\n"
        "    streaming engine's threads deal them in any order: a value may move by a unit in its last place).\n"
        "    It costs CPU time (benchmarks/RESULTS.md); the command line's trec_eval mode always uses it.  Not\n"
        "    available on Spark."
    ),
    "intent": (
        "intent : str, optional\n"
        "    The intent (subtopic) column of per-intent judgments passed as `qrels` (one row per query, intent,\n"
        "    doc and relevance level): the call then computes the diversity measures (alpha_ndcg@k, err_ia@k,\n"
        "    nerr_ia@k, alpha_dcg@k, p_ia@k, st_recall@k, ap_ia, nrbp, nnrbp) as ndeval does.  Not with other\n"
        "    measures in one call; not available on Spark."
    ),
}


def documented(
    summary: str, parameters: Sequence[str], returns: str, example: str, *, first: str | None = None
) -> Callable[[F], F]:
    """Give a function its numpy-style docstring: summary, Parameters, Returns, Examples."""
    lines = [summary.strip(), "", "Parameters", "----------"]
    if first is not None:
        lines.append(first)
    for name in parameters:
        lines.append(PARAMETERS[name])
    lines += ["", "Returns", "-------", returns.strip(), "", "Examples", "--------", example.strip("\n")]
    text = "\n".join(lines)

    def decorate(function: F) -> F:
        function.__doc__ = text
        return function

    return decorate


def per_query_returns(columns: str, kind: str = "DataFrame or LazyFrame (as the frame)") -> str:
    return (
        f"{kind}\n    One row per (by..., query), sorted by them: the by columns, the query column(s), {columns},\n"
        "    then the weight column when `weight` is given."
    )


def mean_returns(kind: str = "DataFrame or LazyFrame (as the frame)") -> str:
    return (
        f"{kind}\n    One row per `by` group, sorted by it: the by columns, one mean per measure, `queries` (how many\n"
        "    queries entered the mean), `weight_sum` (their weight), and with `qrels` `queries_without_judgments`."
    )
