"""The PQB sections of report.html: flip rate against K, clean vs typo hits, MRR, and a browser
of every item's pair of users with their queries and rankings."""

import heapq
from collections.abc import Iterable, Mapping

from personalens.lenses.pqb.analysis import KS, MAX_K, pairs, scored
from personalens.lenses.pqb.metrics import PqbMetrics
from personalens.lenses.pqb.records import EvalRecord
from personalens.population.typo_habits import KINDS
from personalens.report import (
    ENTRY_LIMIT,
    BrowserEntry,
    BrowserItems,
    HtmlReport,
    failure_fields,
    grouped_bars,
    line_plot,
)
from personalens.runs import ItemFailure, ItemRecords

SHOWN = 10  # ranking ids kept per query for the browser
FACETS = ["flip@1", "flip@10", "typo hurt"]


def report_sections(report: HtmlReport, metrics: PqbMetrics, retriever: str) -> None:
    report.heading("Flip rate")
    rows = [[name, k, v.value, v.ci_low, v.ci_high]
            for name, by_k in metrics.flip_rate.items() for k, v in by_k.items()]
    report.table(["definition", "K", "flip rate", "95% CI low", "95% CI high"], rows)
    flips = {f"{retriever} ({name})": [(k, metrics.flip_rate[name][str(k)].value) for k in KS]
             for name in ("paper", "all_pairs")}
    if any(v is not None for points in flips.values() for _, v in points):
        report.figure(line_plot(flips, "K", "flip rate", "Flip rate vs K"),
                      "Flip rate against K: paper (pairs with at least one hit) and all pairs")
    else:
        report.paragraph("Flip rate vs K: nothing scored (no pair of users' queries was "
                         "ranked).")
    hit = metrics.hit
    report.heading("Clean vs typo queries")
    report.paragraph(f"All {metrics.n_queries} clean queries, and the {metrics.n_typo} that "
                     "have a typo version: on those, clean and typo hits are paired (the same "
                     "queries), so their difference is the drop.")
    report.table(["K", "hit clean (all)", "hit clean (typo subset)", "hit typo",
                  "drop (paired)", "drop CI low", "drop CI high"],
                 [[k, hit["clean"][str(k)].value, hit["clean_on_typo"][str(k)].value,
                   hit["typo"][str(k)].value, hit["drop"][str(k)].value,
                   hit["drop"][str(k)].ci_low, hit["drop"][str(k)].ci_high] for k in KS])
    kinds = ("clean_on_typo", "typo", "random_typo") if metrics.n_random_typo else (
        "clean_on_typo", "typo")
    # A kind with no scored query would be drawn as bars of height 0: it is left out, and with
    # none left the page says so instead of drawing empty axes.
    bars = {q: {f"Hit@{k}": hit[q][str(k)].value for k in KS} for q in kinds
            if any(hit[q][str(k)].value is not None for k in KS)}
    if bars:
        report.figure(grouped_bars(bars, "hit rate", "Clean vs typo"),
                      "Hit@K for clean, personal-typo and (built data) random-typo queries")
    else:
        report.paragraph("Clean vs typo Hit@K: nothing scored (no query has a typo version).")
    if metrics.n_random_typo:
        report.heading("Personal vs random typos")
        report.paragraph(f"{metrics.n_random_typo} queries have both a personal typo version "
                         "and a random one with as many edited words. Negative personal − "
                         "random means the users' own typos hurt retrieval more than random ones.")
        report.table(["K", "hit random typo", "drop (random)", "personal − random", "CI low",
                      "CI high"],
                     [[k, hit["random_typo"][str(k)].value, hit["random_drop"][str(k)].value,
                       hit["personal_minus_random"][str(k)].value,
                       hit["personal_minus_random"][str(k)].ci_low,
                       hit["personal_minus_random"][str(k)].ci_high] for k in KS])
    report.table(["queries", "MRR@20", "CI low", "CI high", "n"],
                 [[q, v.value, v.ci_low, v.ci_high, v.n] for q, v in metrics.mrr.items()])
    edits = metrics.typo_edit_kinds
    report.heading("Typo edits by kind")
    report.table(["kind", "personal typo queries", "random typo queries"],
                 [[kind, edits["typo"].get(kind, 0), edits["random_typo"].get(kind, 0)]
                  for kind in KINDS])


def browser_entries(records: ItemRecords[EvalRecord], titles: Mapping[str, str] | None = None,
                    released: Mapping[tuple[str, str], dict] | None = None) -> BrowserItems:
    """One entry per failed query, then one per pair of users asking for the same item, flips
    first.

    Each pair's entry shows, for both users, the clean query and its typo versions, how each
    typo was made (`released`: the dataset's own query records by (parent_asin, uid), whose
    `typo_edits` a built dataset holds), each query's top ids with the item texts' first lines
    (`titles`, from the corpus the lens has loaded), the gold item, and the hit and flip
    verdicts. The pairs are ranked from each record's scored fields alone; a second pass over
    the records keeps only the shown pairs' records, so a large run never holds them all.
    """
    titles, released = titles or {}, released or {}
    ranks, failed = [], []
    for r in records:
        if not isinstance(r, ItemFailure):
            ranks.append(scored(r))
        elif len(failed) < ENTRY_LIMIT:
            failed.append(r)
    ranked = pairs(ranks)
    shown = heapq.nsmallest(ENTRY_LIMIT - len(failed), ranked, key=lambda p: (
        _flips(*p, 1) != "flips", f"item {p[0].parent_asin}"))
    wanted = {r.key for pair in shown for r in pair}
    full = {r.key: r for r in records.ok() if r.key in wanted}
    entries = [_failed_entry(f, records.produced(f), titles, released) for f in failed]
    entries += [_pair_entry(full[a.key], full[b.key], titles, released) for a, b in shown]
    return BrowserItems(entries, FACETS, total=len(ranked) + len(failed))


TITLE_CHARS = 90  # an item's text shown in a ranking: its first line (the title), cut here


def _title(titles: Mapping[str, str], item: str) -> str:
    text = titles.get(item)
    if text is None:
        return "(not in the corpus)"
    first = text.split("\n", 1)[0]
    return first if len(first) <= TITLE_CHARS else first[:TITLE_CHARS - 1] + "…"


def corpus_titles(documents: Iterable) -> dict[str, str]:
    """Each corpus item's first line (its title), by id, as the browser shows it."""
    return {d.id: _title({d.id: d.text}, d.id) for d in documents}


def _hit(rank: int | None, k: int) -> bool:
    return rank is not None and rank <= k


def _flips(a: EvalRecord, b: EvalRecord, k: int) -> str:
    return "flips" if _hit(a.rank_clean, k) != _hit(b.rank_clean, k) else "same"


_LABELS = {"clean": "clean query", "typo": "typo query", "random_typo": "random-typo query"}


def _query_fields(record: EvalRecord, titles: Mapping[str, str],
                  released: Mapping[tuple[str, str], dict]) -> list[tuple[str, str]]:
    """Each of the user's queries: its text, how its typos were made, verdicts and ranking."""
    source = released.get((record.parent_asin, record.uid), {})
    gold = record.asin or record.parent_asin
    errors = record.ranking_errors or {}
    fields = []
    for kind, label in _LABELS.items():
        text = record.query(kind)
        if text is None:
            skipped = source.get(f"{kind}_skipped")
            if kind != "clean" and skipped:
                fields.append((f"{record.uid} · {label}", f"none: {skipped}"))
            continue
        lines = [text]
        edits = source.get(f"{kind}_edits") or []
        if edits:
            lines.append("typed as: " + "; ".join(
                f"{e.get('word')} → {e.get('typed')} ({e.get('kind')}, {e.get('source')})"
                for e in edits))
        if not record.ranked(kind):
            lines.append(f"not ranked: {errors.get(kind, 'the item failed (see the error)')}")
            fields.append((f"{record.uid} · {label} (failed)", "\n".join(lines)))
            continue
        rank = getattr(record, f"rank_{kind}")
        lines.append("hit@K: " + ", ".join(
            f"{k} {'yes' if _hit(rank, k) else 'no'}" for k in KS))
        top = getattr(record, f"top_{kind}") or []
        lines.append(f"top {len(top)}:")
        lines += [f"{i:>2}. {item} · {_title(titles, item)}{'  ← gold' if item == gold else ''}"
                  for i, item in enumerate(top, start=1)]
        fields.append((f"{record.uid} · {label} (rank {rank or f'>{MAX_K}'})",
                       "\n".join(lines)))
    return fields


def _gold(record: EvalRecord, titles: Mapping[str, str]) -> str:
    gold = record.asin or record.parent_asin
    return f"{gold} · {_title(titles, gold)}"


def _pair_entry(a: EvalRecord, b: EvalRecord, titles: Mapping[str, str],
                released: Mapping[tuple[str, str], dict]) -> BrowserEntry:
    hurt = any(r.typo_query is not None and _hit(r.rank_clean, 10)
               and not _hit(r.rank_typo, 10) for r in (a, b))
    golds = dict.fromkeys(_gold(r, titles) for r in (a, b))
    fields = [("gold item", "\n".join(golds))]
    for record in (a, b):
        fields += _query_fields(record, titles, released)
    fields.append(("pair verdict (clean queries)", "\n".join(
        f"flip@{k}: {_flips(a, b, k)} ({a.uid} {'hit' if _hit(a.rank_clean, k) else 'miss'}"
        f", {b.uid} {'hit' if _hit(b.rank_clean, k) else 'miss'})" for k in KS)))
    return BrowserEntry(title=f"item {a.parent_asin}", fields=fields, facets={
        "flip@1": _flips(a, b, 1), "flip@10": _flips(a, b, 10),
        "typo hurt": "yes (hit@10 lost)" if hurt else "no"})


def _failed_entry(failure: ItemFailure, record: EvalRecord | None, titles: Mapping[str, str],
                  released: Mapping[tuple[str, str], dict]) -> BrowserEntry:
    """A query that could not be ranked: what it asked, the rankings it did get, the failure."""
    if record is None:  # it kept too little to read: what its key names
        parent_asin, _, uid = failure.key.partition("/")
        record = EvalRecord(parent_asin=parent_asin, uid=uid)
    if record.syntax_query is None:  # an older record: the queries are in the data
        source = released.get((record.parent_asin, record.uid), {})
        record = record.model_copy(update={name: source.get(name) for name in (
            "syntax_query", "typo_query", "random_typo_query")})
    fields = [("gold item", _gold(record, titles)), *_query_fields(record, titles, released),
              *failure_fields(failure)]
    return BrowserEntry(title=f"item {record.parent_asin} · {record.uid} (failed)",
                        fields=fields, facets=dict.fromkeys(FACETS, "failed"))
