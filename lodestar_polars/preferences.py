"""trec_eval's preference measures (``-R prefs``, ``-R qrels_prefs``) as one lazy Polars plan.

Judgments are preferences: within a judgment sub-group (JSG) of a judgment group (JG), a document at a higher
level is preferred to one at a lower level.  A JG with one JSG is a complete ordering by level ("EC" in
trec_eval's form_prefs_counts.c); a JG with several JSGs is the transitive closure of their preferences ("PA").
A preference A > B is *fulfilled* when A is retrieved and ranks above B (B below it or not retrieved); it is
*retrieved* when both are retrieved, *implied* when one is, and *not occurring* when neither is.  The run is
ordered as trec_eval orders it here: score descending, then doc id ascending (its prefs code breaks ties the
other way round from its qrels code), cut at ``max_retrieved``.

Counting, not pairing: an EC group's counts come from its level histogram and, for the fulfilled retrieved
pairs, from one row per (retrieved doc, level of the group): the work grows with documents x distinct levels,
not with pairs (~585k possible preferences for a query of the quicktest).  Pairs are materialised only for
the preferences of PA groups (a transitive closure, by at most `CLOSURE_STEPS` joins).

``prefs_pair*`` average, over the doc pairs that carry a preference, the pair's fulfilled fraction f / k (k
preferences on the pair from different JGs, f of them fulfilled).  A pair with k = 1 adds what the group counts
already hold, so only the pairs with k >= 2 are accounted apart, by category, as (number of pairs, sum of k,
sum of f, sum of f / k) (`_shared_pairs`).  For the EC groups these are counted, not paired: a doc judged in
two or more EC groups has a *level signature* (its level in each of them), and two docs with the same
signature carry the same preferences to any other doc, so the pairs between signature classes A and B all
have k(A, B) = the EC groups judging both at different levels and f(A, B) = those preferring A; per class
pair, the both-retrieved pairs ranked A first come from a running count over the retrieved docs (retrieved
docs x classes rows), the implied and not-occurring ones from the classes' sizes.  The work grows with the
shared documents x distinct signatures plus signatures^2 x groups: with graded levels a few dozen classes
(two groups over 2,000 docs at 5 levels: 0.14 GB, against 0.48 GB pairing).  Where nearly every shared doc
has its own signature (near-continuous levels) that is more than the pairs, so per query the plan counts
only when its rows, weighted by `PAIRING_COST_RATIO`, are at most the pairs, and forms the pairs otherwise
(`_pair_rows`; the same numbers either way): the groups' own counts (documents x distinct levels) are then
of the order of the pairs too.  No count over the JGs separately
gives f / k, a ratio of two sums over the same JGs of one pair: for two groups, inclusion-exclusion over the
pairs tied in g1, in g2 and in both (with running counts per level inside each tie class) would give it in
documents x levels rows, but with one term per subset of the query's JGs, which a plan built before the data
is seen cannot enumerate.  The f's are summed as integers per k and divided once per k.  A PA group's
preferences are pairs already: each pair it prefers (between docs judged in two or more JGs) is corrected
pair by pair, its EC preferences looked up per group, so this part grows with the PA closure.

trec_eval's quirks kept: ``prefs_avgjg_Rnonrel*`` scores a query 0 when any JG's ratio is 0 / 0, and when it
keeps only R non-relevant documents of an EC group it counts them against every judged document, the
non-relevant ones too; the ``_ret`` variant of a PA group keeps as many retrieved non-relevant documents as
the group has relevant documents (retrieved or not).  Refused (trec_eval accepts them or crashes): negative or
non-finite levels, one doc twice in a JSG, a doc at level 0 and above 0 in one PA group, contradictory
preferences in one PA group, a duplicated doc in a query of the run.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from ._checks import DataCheck, apply_checks, message
from .io import PathLike, _Field, _Format, _scan

__all__ = [
    "ALL_PREFS",
    "NICKNAMES",
    "OFFICIAL_PREFS",
    "evaluate",
    "scan_trec_prefs",
]

ALL_PREFS = (
    *("prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret"),
    *("prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel"),
    *("prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret"),
    *("prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp"),
)
OFFICIAL_PREFS = ALL_PREFS[:6]
COUNTS = frozenset(ALL_PREFS[:3])  # summed over queries, printed as integers
NICKNAMES = {"all_prefs": ("runid", "num_q", *ALL_PREFS), "prefs": ("runid", "num_q", *OFFICIAL_PREFS)}
CLOSURE_STEPS = 16  # a PA group's preferences may chain through up to 17 sub-groups

Q, JG, JSG, DOC, LEVEL = "query", "jg", "jsg", "doc", "level"


def _format(kind: str, names: Sequence[str]) -> _Format:
    fields = [_Field(i, name, pl.String()) for i, name in enumerate(names[:-1])]
    level = _Field(len(fields), LEVEL, pl.Float64(), "a number", "atof")
    return _Format(kind, (*fields, level), len(names), len(names), "#")  # '#' first on the line: a comment


_PREFS = _format("prefs", (Q, JG, JSG, DOC, LEVEL))
_QRELS_PREFS = _format("qrels_prefs", (Q, JG, DOC, LEVEL))


def scan_trec_prefs(path: PathLike, *, qrels: bool = False, lenient: bool = False) -> pl.LazyFrame:
    """Scan a trec_eval prefs file (``qid jg jsg docno level``) or, with `qrels`, a qrels file read as prefs
    (``qid iter docno level``: the iteration is the JG, every line in JSG "0"), as get_prefs.c and
    get_qrels_prefs.c read them: whitespace-separated fields, a line starting with ``#`` is a comment, the
    level a number.  Columns ``query, jg, jsg, doc`` (String) and ``level`` (Float64); a malformed line raises
    a ValueError naming the file, the line and the field when collected.  With `lenient` the level is read
    as trec_eval reads it, with C's ``atof``: the number its field starts with ("2x" is 2.0, "x" 0.0; a
    hexadecimal float is still an error)."""
    frame = _scan(path, _QRELS_PREFS if qrels else _PREFS, None, lenient=lenient)
    return frame.select(Q, JG, pl.lit("0").alias(JSG), DOC, LEVEL) if qrels else frame


def evaluate(
    run: pl.LazyFrame,
    prefs: pl.LazyFrame,
    measures: Sequence[str] = ALL_PREFS,
    *,
    max_retrieved: int | None = None,
    complete: bool = False,
) -> pl.LazyFrame:
    """Per query, trec_eval's preference measures (`ALL_PREFS` names) of `run` against `prefs`.

    Parameters
    ----------
    run
        ``query, doc, score``: the ranking (score descending, ties by doc id ascending).
    prefs
        ``query, jg, jsg, doc, level``, as `scan_trec_prefs` reads them.
    measures
        Which columns to return, of `ALL_PREFS`.
    max_retrieved
        trec_eval's ``-M``: only the first documents of each query's ranking count.
    complete
        trec_eval's ``-c``: also score the judged queries missing from the run (nothing retrieved); without
        it they are left out.

    Returns
    -------
    LazyFrame
        ``query`` and one column per measure (Int64 counts, Float64 ratios), sorted by query.  Ids are
        compared as strings.  A bad input (see the module's docstring) raises a ValueError when collected.
    """
    unknown = [name for name in measures if name not in ALL_PREFS]
    if unknown:
        msg = f"not a preference measure: {', '.join(map(repr, unknown))}; known: {', '.join(ALL_PREFS)}."
        raise ValueError(msg)
    if max_retrieved is not None and max_retrieved < 1:
        msg = f"max_retrieved must be a positive integer, got {max_retrieved!r}."
        raise ValueError(msg)
    ids = [pl.col(c).cast(pl.String) for c in (Q, JG, JSG, DOC)]
    # each read several times below: cached, so that the inputs are read and ranked once
    prefs = prefs.select(*ids, pl.col(LEVEL).cast(pl.Float64)).cache()
    run = run.select(pl.col(Q).cast(pl.String), pl.col(DOC).cast(pl.String), pl.col("score").cast(pl.Float64))
    ranked = run.sort([Q, "score", DOC], descending=[False, True, False]).with_columns(
        pl.int_range(pl.len()).over(Q).alias("position")
    )
    if max_retrieved is not None:
        ranked = ranked.filter(pl.col("position") < max_retrieved)
    ranked = ranked.cache()
    # docid ranks (form_prefs_counts.c): the judged retrieved docs in run order, then the others by doc id
    docs = (
        prefs.select(Q, DOC)
        .unique()
        .join(ranked.select(Q, DOC, "position").unique([Q, DOC]), on=[Q, DOC], how="left")
        .sort([Q, "position", DOC], nulls_last=True)
        .select(Q, DOC, pl.int_range(pl.len()).over(Q).alias("rank"), pl.col("position").is_not_null().alias("ret"))
    )
    judged = (
        prefs.join(docs, on=[Q, DOC])
        .with_columns((pl.col(JSG).n_unique().over(Q, JG) > 1).alias("pa"), (pl.col(LEVEL) > 0).alias("rel"))
        .cache()
    )
    pa = judged.filter("pa")
    edges, unfinished = _pa_edges(pa)
    edges = edges.cache()
    groups = pl.concat([_ec_groups(judged.filter(~pl.col("pa"))), _pa_groups(pa, edges)], how="diagonal")
    pairs_wanted = any(name.startswith("prefs_pair") for name in measures)
    per_query = _per_query(groups, _shared_pairs(judged if pairs_wanted else judged.head(0), edges))
    checks, check_columns = _checks(ranked, prefs, pa, edges, unfinished)
    per_query = per_query.join(check_columns, on=Q, how="left").with_columns(
        pl.col(check.column).fill_null(0) for check in checks
    )
    queries = ranked.select(Q).unique()
    per_query = apply_checks(per_query, lambda keys: repr(keys[Q]), [Q], [Q, *ALL_PREFS], checks)
    if not complete:
        per_query = per_query.join(queries, on=Q, how="semi")
    return per_query.select(Q, *measures).sort(Q)


def _rev_after(flag: pl.Expr) -> pl.Expr:
    """How many rows after this one (in rank order, within the JG) have `flag`."""
    flag = flag.cast(pl.Int64)
    return (flag.cum_sum(reverse=True) - flag).over(Q, JG)


def _ec_groups(ec: pl.LazyFrame) -> pl.LazyFrame:
    """Per EC group: the counts of form_prefs_counts.c, and those of the Rnonrel recalculation."""
    ret = pl.col("ret")
    histogram = (
        ec.group_by(Q, JG, LEVEL)
        .agg(ret.sum().cast(pl.Int64).alias("n_ret"), (~ret).sum().cast(pl.Int64).alias("n_un"))
        .sort(Q, JG, LEVEL)
        .with_columns((pl.col("n_un").cum_sum() - pl.col("n_un")).over(Q, JG).alias("un_below"))
    )
    n_ret, n_un = pl.col("n_ret"), pl.col("n_un")
    total_ret, total_un = n_ret.sum(), n_un.sum()
    counts = histogram.group_by(Q, JG).agg(
        ((total_ret * total_ret - (n_ret * n_ret).sum()) // 2).alias("poss_ret"),
        (total_ret * total_un - (n_ret * n_un).sum()).alias("poss_imp"),
        ((total_un * total_un - (n_un * n_un).sum()) // 2).alias("notoccur"),
        (n_ret * pl.col("un_below")).sum().alias("ful_imp"),
    )
    # fulfilled retrieved pairs: per retrieved doc and higher level, the docs of that level ranked above it
    retrieved = ec.filter("ret").select(Q, JG, LEVEL, "rank")
    levels = histogram.filter(n_ret > 0).select(Q, JG, pl.col(LEVEL).alias("above"))
    at_level = (pl.col(LEVEL) == pl.col("above")).cast(pl.Int64)
    ful_ret = (
        retrieved.join(levels, on=[Q, JG])
        .sort(Q, JG, "above", "rank")
        .with_columns((at_level.cum_sum() - at_level).over(Q, JG, "above").alias("before"))
        .filter(pl.col("above") > pl.col(LEVEL))
        .group_by(Q, JG)
        .agg(pl.col("before").sum().alias("ful_ret"))
    )
    # Rnonrel: only the first R non-relevant docs (rank order) stay; m_prefs_avgjg_Rnonrel*.c recalculate()
    rel, nonrel = pl.col("rel"), ~pl.col("rel")
    ordinal = (nonrel.cast(pl.Int64).cum_sum() - nonrel.cast(pl.Int64)).over(Q, JG)
    docs = (
        ec.sort(Q, JG, "rank")
        .with_columns(
            rel.sum().over(Q, JG).alias("R"),
            (rel & ret).sum().over(Q, JG).alias("Rr"),
            ordinal.alias("ordinal"),
        )
        .with_columns(
            _rev_after(nonrel).alias("nonrel_after"),
            _rev_after(nonrel & ret).alias("nonrel_ret_after"),
            _rev_after(nonrel & (pl.col("ordinal") < pl.col("R"))).alias("kept_after"),
            _rev_after(nonrel & (pl.col("ordinal") < pl.col("Rr"))).alias("kept_ret_after"),
        )
        .group_by(Q, JG)
        .agg(
            *_doc_counts(),
            pl.col("nonrel_after").filter(rel & ret).sum().alias("rel_nonrel_ful"),
            pl.col("nonrel_ret_after").filter(rel & ret).sum().alias("rel_nonrel_ful_ret"),
            pl.col("kept_after").filter(ret).sum().alias("kept_ful"),
            pl.col("kept_ret_after").filter(ret).sum().alias("kept_ful_ret"),
        )
    )
    R, N, Rr, Nr = (pl.col(c) for c in ("num_rel", "num_nonrel", "num_rel_ret", "num_nonrel_ret"))
    groups = (
        counts.join(ful_ret, on=[Q, JG], how="left").join(docs, on=[Q, JG]).with_columns(pl.col("ful_ret").fill_null(0))
    )
    ful_all = pl.col("ful_ret") + pl.col("ful_imp")
    poss_all = pl.col("poss_ret") + pl.col("poss_imp") + pl.col("notoccur")
    return groups.with_columns(
        (ful_all - pl.col("rel_nonrel_ful") + pl.col("kept_ful")).alias("kept_ful"),
        (poss_all - R * N + (R + N) * R).alias("kept_poss"),
        (pl.col("ful_ret") - pl.col("rel_nonrel_ful_ret") + pl.col("kept_ful_ret")).alias("kept_ful_ret"),
        (pl.col("poss_ret") - Rr * Nr + (Rr + Nr) * Rr).alias("kept_poss_ret"),
    ).select(Q, JG, *_GROUP_COLUMNS)


_GROUP_COLUMNS = (
    *("ful_ret", "poss_ret", "ful_imp", "poss_imp", "notoccur"),
    *("num_rel", "num_nonrel", "num_rel_ret", "num_nonrel_ret"),
    *("kept_ful", "kept_poss", "kept_ful_ret", "kept_poss_ret"),
)


def _doc_counts() -> list[pl.Expr]:
    rel, ret = pl.col("rel"), pl.col("ret")
    return [
        rel.sum().cast(pl.Int64).alias("num_rel"),
        (~rel).sum().cast(pl.Int64).alias("num_nonrel"),
        (rel & ret).sum().cast(pl.Int64).alias("num_rel_ret"),
        (~rel & ret).sum().cast(pl.Int64).alias("num_nonrel_ret"),
    ]


def _pa_edges(pa: pl.LazyFrame) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """A PA group's preferences (query, jg, a, b as docid ranks): the closure of its sub-groups' preferences
    after `CLOSURE_STEPS` joins, and the preferences one more step would add (none if it is complete)."""
    rows = pa.select(Q, JG, JSG, LEVEL, "rank")
    direct = (
        rows.join(rows, on=[Q, JG, JSG], suffix="_b")
        .filter(pl.col(LEVEL) > pl.col("level_b"))
        .select(Q, JG, pl.col("rank").alias("a"), pl.col("rank_b").alias("b"))
        .unique()
    )
    # one step: the paths so far, extended by a direct preference or by nothing (the identity)
    step = pl.concat([direct, rows.select(Q, JG, pl.col("rank").alias("a"), pl.col("rank").alias("b")).unique()])
    edges = direct
    for _ in range(CLOSURE_STEPS):
        edges = _compose(edges, step).unique()
    return edges, _compose(edges, direct).join(edges, on=[Q, JG, "a", "b"], how="anti")


def _compose(left: pl.LazyFrame, right: pl.LazyFrame) -> pl.LazyFrame:
    joined = left.join(right, left_on=[Q, JG, "b"], right_on=[Q, JG, "a"])
    return joined.select(Q, JG, "a", pl.col("b_right").alias("b"))


def _pa_docs(pa: pl.LazyFrame) -> pl.LazyFrame:
    rel, ret = pl.col("rel"), pl.col("ret")
    nonrel = (~rel).cast(pl.Int64)
    return (
        pa.group_by(Q, JG, DOC)
        .agg(pl.col("rank").first(), ret.first(), rel.any(), (~rel).any().alias("zero"))
        .sort(Q, JG, "rank")
        .with_columns(
            rel.sum().over(Q, JG).alias("R"),
            (nonrel.cum_sum() - nonrel).over(Q, JG).alias("ordinal"),
            ((nonrel * ret).cum_sum() - nonrel * ret).over(Q, JG).alias("ret_ordinal"),
        )
        .with_columns(
            (rel | (pl.col("ordinal") < pl.col("R"))).alias("kept"),
            (rel | (ret & (pl.col("ret_ordinal") < pl.col("R")))).alias("kept_ret"),
        )
    )


def _pa_groups(pa: pl.LazyFrame, edges: pl.LazyFrame) -> pl.LazyFrame:
    """Per PA group: the counts of form_prefs_counts.c over its closure, and of the Rnonrel recalculation."""
    docs = _pa_docs(pa)
    ends = docs.select(Q, JG, "rank", "ret", "kept", "kept_ret")
    pairs = edges.join(ends, left_on=[Q, JG, "a"], right_on=[Q, JG, "rank"]).join(
        ends, left_on=[Q, JG, "b"], right_on=[Q, JG, "rank"], suffix="_b"
    )
    ret_a, ret_b = pl.col("ret"), pl.col("ret_b")
    ful = ret_a & (pl.col("a") < pl.col("b"))
    both, one = ret_a & ret_b, ret_a ^ ret_b
    kept = pl.col("kept") & pl.col("kept_b")
    kept_ret = pl.col("kept_ret") & pl.col("kept_ret_b") & both
    counts = pairs.group_by(Q, JG).agg(
        (ful & both).sum().alias("ful_ret"),
        both.sum().alias("poss_ret"),
        (ful & one).sum().alias("ful_imp"),
        one.sum().alias("poss_imp"),
        (~ret_a & ~ret_b).sum().alias("notoccur"),
        (ful & kept).sum().alias("kept_ful"),
        kept.sum().alias("kept_poss"),
        (ful & kept_ret).sum().alias("kept_ful_ret"),
        kept_ret.sum().alias("kept_poss_ret"),
    )
    group_docs = docs.group_by(Q, JG).agg(*_doc_counts())
    return group_docs.join(counts, on=[Q, JG], how="left").select(
        Q, JG, pl.col(_GROUP_COLUMNS).cast(pl.Int64).fill_null(0)
    )


def _shared_pairs(judged: pl.LazyFrame, edges: pl.LazyFrame) -> pl.LazyFrame:
    """Per query, what prefs_pair* need beyond the group counts, by retrieval category (ret, imp, none) of the doc
    pairs that carry two or more preferences: how many such pairs (``sh_n``), their preferences (``sh_k``),
    the fulfilled ones (``sh_ful``) and the sum of their fulfilled fractions (``sh_sum``).

    Built from rows (query, category, k, n, fwd): n doc pairs carrying k preferences each, fwd of them
    fulfilled in all; a pair counted by the EC level signatures (`_signature_pairs`) and corrected for its
    PA preferences (`_pa_pair_corrections`) is a row with n = -1 and a row with n = +1.  A query whose
    counting rows would outnumber its pairs (`_counted_queries`) has its pairs formed (`_pair_rows`)."""
    docs = _signature_docs(judged)
    counted = _counted_queries(judged, docs)
    judged_counted = judged.join(counted, on=Q, how="semi")
    rows = pl.concat(
        [
            _signature_pairs(docs.join(counted, on=Q, how="semi")),
            _pa_pair_corrections(judged_counted, edges),
            _pair_rows(judged.join(counted, on=Q, how="anti"), edges),
        ]
    )
    by_k = rows.group_by(Q, "category", "k").agg(pl.col("n").sum(), pl.col("fwd").sum())
    aggregations = []
    for category in ("ret", "imp", "none"):
        mine = pl.col("category") == category
        aggregations += [
            pl.col("fwd").filter(mine).sum().alias(f"sh_ful_{category}"),
            (pl.col("n") * pl.col("k")).filter(mine).sum().alias(f"sh_k_{category}"),
            (pl.col("fwd") / pl.col("k")).filter(mine).sum().alias(f"sh_sum_{category}"),
            pl.col("n").filter(mine).sum().alias(f"sh_n_{category}"),
        ]
    return by_k.group_by(Q).agg(aggregations)


def _category(ret_first: pl.Expr, ret_second: pl.Expr) -> pl.Expr:
    """A doc pair's category, its first doc (in docid rank) retrieved or not, its second too."""
    return pl.when(ret_second).then(pl.lit("ret")).when(ret_first).then(pl.lit("imp")).otherwise(pl.lit("none"))


def _signature_docs(judged: pl.LazyFrame) -> pl.LazyFrame:
    """The docs judged in two or more EC groups of a query: rank, retrieved, level signature (its groups and
    levels) and class (a dense rank of the signature in the query)."""
    ec = judged.filter(~pl.col("pa")).select(Q, JG, DOC, LEVEL, "rank", "ret")
    ec = ec.filter(pl.len().over(Q, DOC) > 1)
    return (
        ec.group_by(Q, DOC)
        .agg(pl.col("rank").first(), pl.col("ret").first(), pl.struct(JG, LEVEL).sort_by(JG).alias("signature"))
        .with_columns(pl.col("signature").rank("dense").over(Q).alias("class"))
        .cache()
    )


PAIRING_COST_RATIO = 2  # a row of the signature count costs about as much as two formed pairs (measured)


def _counted_queries(judged: pl.LazyFrame, docs: pl.LazyFrame) -> pl.LazyFrame:
    """The queries whose shared pairs are counted by signature: the count's rows (retrieved shared docs x
    classes, plus classes^2 x EC groups), weighted by `PAIRING_COST_RATIO`, at most the formed pairs (shared
    docs^2 x EC groups / 2).  Both ways give the same numbers; only the work differs."""
    groups = judged.filter(~pl.col("pa")).group_by(Q).agg(pl.col(JG).n_unique().cast(pl.Int64).alias("m"))
    sizes = docs.group_by(Q).agg(
        pl.len().cast(pl.Int64).alias("n"),
        pl.col("ret").sum().cast(pl.Int64).alias("n_ret"),
        pl.col("class").max().cast(pl.Int64).alias("s"),
    )
    n, n_ret, s, m = (pl.col(c) for c in ("n", "n_ret", "s", "m"))
    counting, pairing = (n_ret * s + s * s * m) * PAIRING_COST_RATIO, n * n * m // 2
    return sizes.join(groups, on=Q).filter(counting <= pairing).select(Q)


def _signature_pairs(docs: pl.LazyFrame) -> pl.LazyFrame:
    """The EC groups' preferences between docs judged in two or more EC groups of a query (`_signature_docs`),
    counted by level signature: docs with the same levels in the same EC groups (a class) carry the same
    preferences to any other doc, so class A's docs prefer class B's in f(A, B) groups and the reverse in
    k(A, B) - f(A, B).  Rows per class pair with k >= 2: the ordered pairs ranked A first, both retrieved
    (``before``, a running count over the retrieved docs: retrieved docs x classes rows); A retrieved, B not
    (sizes multiplied); neither retrieved (sizes multiplied, each unordered class pair once)."""
    ret = pl.col("ret")
    classes = docs.group_by(Q, "class").agg(
        pl.col("signature").first(),
        ret.sum().cast(pl.Int64).alias("n_ret"),
        (~ret).sum().cast(pl.Int64).alias("n_un"),
    )
    levels = classes.select(Q, "class", "signature").explode("signature").unnest("signature")
    # each unordered class pair once, then both ways round (B over A in k - f groups)
    unordered = (
        levels.join(levels, on=[Q, JG], suffix="_b")
        .filter(pl.col("class") < pl.col("class_b"))
        .group_by(Q, "class", "class_b")
        .agg(
            (pl.col(LEVEL) > pl.col("level_b")).sum().cast(pl.Int64).alias("f"),
            (pl.col(LEVEL) != pl.col("level_b")).sum().cast(pl.Int64).alias("k"),
        )
        .filter(pl.col("k") > 1)
    )
    reversed_pairs = unordered.select(
        Q,
        pl.col("class_b").alias("class"),
        pl.col("class").alias("class_b"),
        (pl.col("k") - pl.col("f")).alias("f"),
        "k",
    )
    class_pairs = (
        pl.concat([unordered, reversed_pairs])
        .join(classes.select(Q, "class", "n_ret", "n_un"), on=[Q, "class"])
        .join(classes.select(Q, pl.col("class").alias("class_b"), "n_ret", "n_un"), on=[Q, "class_b"], suffix="_b")
    )
    # per retrieved doc (class B) and class A: the retrieved docs of A ranked above it
    in_class = (pl.col("class") == pl.col("class_b")).cast(pl.Int64)
    before = (
        docs.filter("ret")
        .select(Q, pl.col("class").alias("class_b"), "rank")
        .join(classes.filter(pl.col("n_ret") > 0).select(Q, "class"), on=Q)
        .sort(Q, "class", "rank")
        .with_columns((in_class.cum_sum() - in_class).over(Q, "class").alias("before"))
        .group_by(Q, "class", "class_b")
        .agg(pl.col("before").sum().cast(pl.Int64))
    )
    both = class_pairs.join(before, on=[Q, "class", "class_b"]).select(
        Q,
        pl.lit("ret").alias("category"),
        "k",
        pl.col("before").alias("n"),
        (pl.col("before") * pl.col("f")).alias("fwd"),
    )
    one = pl.col("n_ret") * pl.col("n_un_b")
    implied = class_pairs.select(
        Q, pl.lit("imp").alias("category"), "k", one.alias("n"), (one * pl.col("f")).alias("fwd")
    )
    neither = class_pairs.filter(pl.col("class") < pl.col("class_b")).select(
        Q,
        pl.lit("none").alias("category"),
        "k",
        (pl.col("n_un") * pl.col("n_un_b")).alias("n"),
        pl.lit(0, pl.Int64).alias("fwd"),
    )
    return pl.concat([both, implied, neither])


def _pa_pair_corrections(judged: pl.LazyFrame, edges: pl.LazyFrame) -> pl.LazyFrame:
    """The doc pairs that carry a PA group's preference (pair by pair, as the PA closure already is), between
    docs judged in two or more groups: each replaces what `_signature_pairs` counted for it (its EC preferences
    alone, when two or more) by all its preferences."""
    shared = judged.group_by(Q, DOC).agg(pl.col(JG).n_unique().alias("jgs")).filter(pl.col("jgs") > 1)
    ranks = judged.join(shared, on=[Q, DOC], how="semi").select(Q, "rank", "ret").unique()
    lo, hi = pl.min_horizontal("a", "b"), pl.max_horizontal("a", "b")
    pairs = (
        edges.join(ranks, left_on=[Q, "a"], right_on=[Q, "rank"], how="semi")
        .join(ranks, left_on=[Q, "b"], right_on=[Q, "rank"], how="semi")
        .group_by(Q, lo.alias("lo"), hi.alias("hi"))
        .agg(pl.len().cast(pl.Int64).alias("k_pa"), (pl.col("a") < pl.col("b")).sum().cast(pl.Int64).alias("f_pa"))
    )
    ec = judged.filter(~pl.col("pa")).select(Q, JG, "rank", LEVEL)
    ec_counts = (
        pairs.select(Q, "lo", "hi")
        .join(ec, left_on=[Q, "lo"], right_on=[Q, "rank"])
        .join(ec, left_on=[Q, JG, "hi"], right_on=[Q, JG, "rank"], suffix="_hi")
        .group_by(Q, "lo", "hi")
        .agg(
            (pl.col(LEVEL) > pl.col("level_hi")).sum().cast(pl.Int64).alias("f_ec"),
            (pl.col(LEVEL) != pl.col("level_hi")).sum().cast(pl.Int64).alias("k_ec"),
        )
    )
    pairs = (
        pairs.join(ec_counts, on=[Q, "lo", "hi"], how="left")
        .with_columns(pl.col("f_ec", "k_ec").fill_null(0))
        .join(ranks, left_on=[Q, "lo"], right_on=[Q, "rank"])
        .join(ranks, left_on=[Q, "hi"], right_on=[Q, "rank"], suffix="_hi")
        .with_columns(_category(pl.col("ret"), pl.col("ret_hi")).alias("category"))
    )
    added = pairs.select(
        Q,
        "category",
        (pl.col("k_pa") + pl.col("k_ec")).alias("k"),
        pl.lit(1, pl.Int64).alias("n"),
        (pl.col("f_pa") + pl.col("f_ec")).alias("fwd"),
    )
    removed = pairs.filter(pl.col("k_ec") > 1).select(
        Q, "category", pl.col("k_ec").alias("k"), pl.lit(-1, pl.Int64).alias("n"), (-pl.col("f_ec")).alias("fwd")
    )
    return pl.concat([added, removed])


def _pair_rows(judged: pl.LazyFrame, edges: pl.LazyFrame) -> pl.LazyFrame:
    """The preferences between docs judged in two or more JGs of a query, pair by pair (each EC group's pairs
    of different levels, each PA group's closure): one row (n = 1) per doc pair with k >= 2."""
    shared = judged.group_by(Q, DOC).agg(pl.col(JG).n_unique().alias("jgs")).filter(pl.col("jgs") > 1)
    rows = judged.join(shared, on=[Q, DOC], how="semi")
    ec = rows.filter(~pl.col("pa")).select(Q, JG, LEVEL, "rank")
    ec_edges = (
        ec.join(ec, on=[Q, JG], suffix="_b")
        .filter(pl.col(LEVEL) > pl.col("level_b"))
        .select(Q, JG, pl.col("rank").alias("a"), pl.col("rank_b").alias("b"))
    )
    pa_ranks = rows.filter("pa").select(Q, JG, "rank").unique()
    pa_edges = edges.join(pa_ranks, left_on=[Q, JG, "a"], right_on=[Q, JG, "rank"], how="semi").join(
        pa_ranks, left_on=[Q, JG, "b"], right_on=[Q, JG, "rank"], how="semi"
    )
    ret = judged.select(Q, "rank", "ret").unique()
    lo, hi = pl.min_horizontal("a", "b"), pl.max_horizontal("a", "b")
    return (
        pl.concat([ec_edges, pa_edges])
        .group_by(Q, lo.alias("lo"), hi.alias("hi"))
        .agg(pl.len().cast(pl.Int64).alias("k"), (pl.col("a") < pl.col("b")).sum().cast(pl.Int64).alias("fwd"))
        .filter(pl.col("k") > 1)
        .join(ret, left_on=[Q, "lo"], right_on=[Q, "rank"])
        .join(ret, left_on=[Q, "hi"], right_on=[Q, "rank"], suffix="_hi")
        .select(
            Q, _category(pl.col("ret"), pl.col("ret_hi")).alias("category"), "k", pl.lit(1, pl.Int64).alias("n"), "fwd"
        )
    )


def _ratio(numerator: pl.Expr, denominator: pl.Expr) -> pl.Expr:
    """numerator / denominator, 0 when the denominator is 0 (as trec_eval leaves the value at 0)."""
    return pl.when(denominator > 0).then(numerator.cast(pl.Float64) / denominator).otherwise(0.0)


def _per_query(groups: pl.LazyFrame, shared: pl.LazyFrame) -> pl.LazyFrame:
    c = {name: pl.col(name) for name in _GROUP_COLUMNS}
    ful, poss = c["ful_ret"] + c["ful_imp"], c["poss_ret"] + c["poss_imp"] + c["notoccur"]
    R, N, Rr, Nr = c["num_rel"], c["num_nonrel"], c["num_rel_ret"], c["num_nonrel_ret"]
    rnonrel_ful = pl.when(R >= N).then(ful + Rr * (R - N)).otherwise(c["kept_ful"])
    rnonrel_poss = pl.when(R >= N).then(poss + R * (R - N)).otherwise(c["kept_poss"])
    rnonrel_ret_ful = pl.when(Rr >= Nr).then(c["ful_ret"] + Rr * (Rr - Nr)).otherwise(c["kept_ful_ret"])
    rnonrel_ret_poss = pl.when(Rr >= Nr).then(c["poss_ret"] + R * (Rr - Nr)).otherwise(c["kept_poss_ret"])
    per_group = groups.sort(Q, JG).with_columns(
        _ratio(ful, poss).alias("avgjg"),
        _ratio(c["ful_ret"], c["poss_ret"]).alias("avgjg_ret"),
        _ratio(ful, c["poss_ret"] + c["poss_imp"]).alias("avgjg_imp"),
        (rnonrel_ful.cast(pl.Float64) / rnonrel_poss).alias("rnonrel"),  # 0 / 0 is NaN, as in trec_eval
        (rnonrel_ret_ful.cast(pl.Float64) / rnonrel_ret_poss).alias("rnonrel_ret"),
    )
    sums = [pl.col(name).sum() for name in ("ful_ret", "poss_ret", "ful_imp", "poss_imp", "notoccur")]
    # trec_eval adds the groups' ratios one by one, in JG order; "if (sum > 0.0)" leaves a NaN sum at 0
    in_order = [
        pl.col(name).cum_sum().last().alias(name)
        for name in ("avgjg", "avgjg_ret", "avgjg_imp", "rnonrel", "rnonrel_ret")
    ]
    totals = per_group.group_by(Q, maintain_order=True).agg(*sums, *in_order, pl.len().alias("jgs"))
    totals = totals.join(shared, on=Q, how="left").with_columns(pl.col("^sh_.*$").fill_null(0))
    t = {name: pl.col(name) for name in ("ful_ret", "poss_ret", "ful_imp", "poss_imp", "notoccur")}
    # prefs_pair*: each preference between docs not both shared is its own doc pair; shared pairs average
    pair_sum = {cat: t[f"ful_{cat}"] - pl.col(f"sh_ful_{cat}") + pl.col(f"sh_sum_{cat}") for cat in ("ret", "imp")}
    pairs = {
        cat: t[name] - pl.col(f"sh_k_{cat}") + pl.col(f"sh_n_{cat}")
        for cat, name in (("ret", "poss_ret"), ("imp", "poss_imp"), ("none", "notoccur"))
    }
    all_ful = t["ful_ret"] + t["ful_imp"]

    def mean_over_groups(name: str) -> pl.Expr:
        total = pl.col(name)
        return pl.when(total.is_nan() | (total <= 0)).then(0.0).otherwise(total / pl.col("jgs"))

    return totals.select(
        Q,
        (t["poss_ret"] + t["poss_imp"] + t["notoccur"]).alias("prefs_num_prefs_poss"),
        all_ful.alias("prefs_num_prefs_ful"),
        t["ful_ret"].alias("prefs_num_prefs_ful_ret"),
        _ratio(all_ful, t["poss_ret"] + t["poss_imp"] + t["notoccur"]).alias("prefs_simp"),
        _ratio(pair_sum["ret"] + pair_sum["imp"], pairs["ret"] + pairs["imp"] + pairs["none"]).alias("prefs_pair"),
        mean_over_groups("avgjg").alias("prefs_avgjg"),
        mean_over_groups("rnonrel").alias("prefs_avgjg_Rnonrel"),
        _ratio(t["ful_ret"], t["poss_ret"]).alias("prefs_simp_ret"),
        _ratio(pair_sum["ret"], pairs["ret"]).alias("prefs_pair_ret"),
        mean_over_groups("avgjg_ret").alias("prefs_avgjg_ret"),
        mean_over_groups("rnonrel_ret").alias("prefs_avgjg_Rnonrel_ret"),
        _ratio(all_ful, t["poss_ret"] + t["poss_imp"]).alias("prefs_simp_imp"),
        _ratio(pair_sum["ret"] + pair_sum["imp"], pairs["ret"] + pairs["imp"]).alias("prefs_pair_imp"),
        mean_over_groups("avgjg_imp").alias("prefs_avgjg_imp"),
    )


_WHERE = "the first in query {query}"
_REPEATED_RUN_DOC = "the run repeats a doc id {total} time(s), " + _WHERE + ": {value}."
_BAD_LEVEL = "a preference level must be a finite number >= 0; {total} are not, " + _WHERE + ": {value}."
_REPEATED_JUDGMENT = (
    "a doc is judged again in the same judgment sub-group {total} time(s), " + _WHERE + ": doc {value}."
)
_ZERO_AND_ABOVE = (
    "a doc is judged 0 and above 0 in one judgment group with several sub-groups (trec_eval refuses it too), "
    "{total} time(s), " + _WHERE + ": doc {value}."
)
_CONTRADICTION = (
    "judgment group {value} of query {query} prefers two docs to each other, directly or through other docs "
    "(trec_eval aborts); {total} such preference(s) in all."
)
_LONG_CHAIN = (
    f"judgment group {{value}} of query {{query}} chains preferences through more than {CLOSURE_STEPS + 1} "
    "sub-groups, more than this module follows; {total} such group(s) in all."
)


def _checks(
    ranked: pl.LazyFrame, prefs: pl.LazyFrame, pa: pl.LazyFrame, edges: pl.LazyFrame, unfinished: pl.LazyFrame
) -> tuple[list[DataCheck], pl.LazyFrame]:
    """The data checks and, per query, their counters (with the first offending value of each)."""
    level = pl.col(LEVEL)
    bad_level = level.is_nan() | level.is_infinite() | (level < 0)
    repeated_line = ~pl.struct(JG, JSG, DOC).is_first_distinct()
    reversed_edges = edges.select(Q, JG, pl.col("b").alias("a"), pl.col("a").alias("b"))
    conflicts = edges.join(reversed_edges, on=[Q, JG, "a", "b"], how="semi")
    always = pl.lit(value=True)
    counted = [
        (ranked, ~pl.col(DOC).is_first_distinct(), DOC, _REPEATED_RUN_DOC),
        (prefs, bad_level, LEVEL, _BAD_LEVEL),
        (prefs, repeated_line, DOC, _REPEATED_JUDGMENT),
        (_pa_docs(pa).filter("rel", "zero"), always, DOC, _ZERO_AND_ABOVE),
        (conflicts, always, JG, _CONTRADICTION),
        (unfinished, always, JG, _LONG_CHAIN),
    ]
    checks, frames = [], []
    for index, (frame, bad, shown, template) in enumerate(counted):
        check = DataCheck(
            f"__prefs_check_{index}", bad.sum(), message(ValueError, template), pl.col(shown).filter(bad).first()
        )
        checks.append(check)
        frames.append(frame.group_by(Q).agg(check.aggregations()))
    per_query = frames[0]
    for frame in frames[1:]:
        per_query = per_query.join(frame, on=Q, how="full", coalesce=True)
    return checks, per_query
