"""How `personalens compare` reads `pqb eval` runs: a system is a run's retriever; its units
are the queries (hits, MRR) and the pairs of users asking for one item (flip rate).

The main table is the one `pqb compare` always showed (flip rate at every K, Hit@K clean and
typo, MRR), each figure now with its 95 % CI, recomputed from the records by the lens's own
`summarise` (so, over all of a run's items, it equals the run's metrics.json).
"""

from collections.abc import Mapping
from typing import Any

import numpy as np

from personalens.errors import InputError
from personalens.lenses.commands import Comparison, Headline, Table
from personalens.lenses.pqb.analysis import KS, pairs, scored, summarise
from personalens.lenses.pqb.records import EvalRecord
from personalens.report import grouped_bars, line_plot
from personalens.retrieval.metrics import flip_rate
from personalens.runs import ItemRecords

HEADLINE_K = (1, 20)  # the K of the headline flips and hits: the top result, the whole list
TYPO_KINDS = ("clean_on_typo", "typo", "random_typo")


def _hit(rank: int | None, k: int) -> float:
    return float(rank is not None and rank <= k)


def _paper_flip_rate(rows: np.ndarray) -> float | None:
    return flip_rate(rows[:, 0], rows[:, 1], conditioned=True)


class PqbComparison(Comparison):
    record_model = EvalRecord

    def systems(self, records: ItemRecords[EvalRecord],
                manifest: Mapping[str, Any]) -> dict[str, list[EvalRecord]]:
        """One system, named by the run's retriever (its records do not name it)."""
        retriever = (manifest.get("config") or {}).get("retriever")
        if not isinstance(retriever, str):
            raise InputError("the run's manifest.json names no retriever (config.retriever)")
        return {retriever: sorted(records.ok(), key=lambda r: r.key)}

    def item(self, record: EvalRecord) -> str:
        return record.key

    def headlines(self, records: list[EvalRecord]) -> dict[str, Headline]:
        """Keys are the metrics.json paths of the same figures."""
        out: dict[str, Headline] = {}
        both = pairs(records)
        typo = [r for r in records if r.typo_query is not None]
        for k in HEADLINE_K:
            out[f"flip_rate.paper.{k}"] = Headline(
                f"flip rate @{k} (paper)",
                {a.parent_asin + "|" + a.uid + "|" + b.uid: (_hit(a.rank_clean, k),
                                                             _hit(b.rank_clean, k))
                 for a, b in both}, statistic=_paper_flip_rate)
        out["hit.clean.20"] = Headline("Hit@20 clean", {r.key: _hit(r.rank_clean, 20)
                                                        for r in records}, binary=True)
        out["hit.typo.20"] = Headline("Hit@20 typo", {r.key: _hit(r.rank_typo, 20)
                                                      for r in typo}, binary=True)
        for k in HEADLINE_K:
            out[f"hit.drop.{k}"] = Headline(f"Hit@{k} drop (clean - typo)", {
                r.key: _hit(r.rank_clean, k) - _hit(r.rank_typo, k) for r in typo})
        out["mrr.clean"] = Headline("MRR clean", {
            r.key: 0.0 if r.rank_clean is None else 1.0 / r.rank_clean for r in records})
        return out

    def tables(self, systems: Mapping[str, list[EvalRecord]], seed: int) -> list[Table]:
        summaries = {name: summarise([scored(r) for r in records], seed=seed)
                     for name, records in systems.items()}
        flips = [Table(f"Flip rate against K ({title})", ["system", *(f"flip@{k}" for k in KS)],
                       [[name, *(m["flip_rate"][definition][str(k)] for k in KS)]
                        for name, m in summaries.items()])
                 for definition, title in (("paper", "paper: pairs where either user hits"),
                                           ("all_pairs", "all pairs"))]
        hits = Table("Hit@K and MRR for clean and personal-typo queries",
                     ["system", *(f"hit@{k} clean" for k in KS),
                      *(f"hit@{k} typo" for k in KS), "MRR clean", "MRR typo"],
                     [[name, *(m["hit"]["clean"][str(k)] for k in KS),
                       *(m["hit"]["typo"][str(k)] for k in KS), m["mrr"]["clean"],
                       m["mrr"]["typo"]] for name, m in summaries.items()])
        # Runs of released queries have no random-typo version: those cells are empty.
        typos = Table("Clean vs typo queries (the queries with a typo version)",
                      ["system", *(f"hit@{k} {kind}" for k in HEADLINE_K for kind in TYPO_KINDS)],
                      [[name, *(m["hit"][kind][str(k)] for k in HEADLINE_K for kind in TYPO_KINDS)]
                       for name, m in summaries.items()])
        return [*flips, hits, typos]

    def figures(self, tables: list[Table]) -> list[tuple[bytes, str]]:
        paper, all_pairs, _, typos = tables
        out = [(line_plot({row[0]: [(k, cell.value) for k, cell in zip(KS, row[1:],
                                                                      strict=True)]
                           for row in table.rows}, "K", "flip rate",
                          f"Flip rate vs K ({definition})"),
                f"Flip rate against K per retriever ({definition} definition)")
               for table, definition in ((paper, "paper"), (all_pairs, "all_pairs"))]
        for k in HEADLINE_K:
            bars = {}
            for row in typos.rows:
                cells = dict(zip(typos.headers[1:], row[1:], strict=True))
                bars[row[0]] = {kind: cells[f"hit@{k} {kind}"].value for kind in TYPO_KINDS}
            out.append((grouped_bars(bars, f"Hit@{k}", f"Clean vs typo queries, Hit@{k}"),
                        f"Hit@{k} for clean, personal-typo and random-typo queries per "
                        "retriever"))
        return out

    def unit_text(self, records: list[EvalRecord]) -> dict[str, tuple[str, str]]:
        return {r.key: (f"item {r.parent_asin}, user {r.uid}: {r.syntax_query}",
                        "\n".join(_ranking(r, kind) for kind in ("clean", "typo")
                                  if r.query(kind))) for r in records}


def _ranking(record: EvalRecord, kind: str) -> str:
    rank = getattr(record, f"rank_{kind}")
    top = ", ".join(getattr(record, f"top_{kind}") or [])
    return (f"{kind} query: {record.query(kind)}\n  rank of the item: "
            f"{'not in the top 20' if rank is None else rank}; top: {top or '–'}")


COMPARISON = PqbComparison()
