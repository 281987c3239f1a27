"""`personalens pqb eval`: released queries (--queries + --meta) or a built dataset (--data)."""

import os
from dataclasses import dataclass
from pathlib import Path

from personalens.errors import InputError
from personalens.input_files import read_json
from personalens.lenses.pqb.analysis import MAX_K, scored, summarise
from personalens.lenses.pqb.metrics import PqbMetrics
from personalens.lenses.pqb.options import EvalOptions
from personalens.lenses.pqb.records import EvalRecord
from personalens.lenses.pqb.release_format import QueryGroup, QueryRecord, load_corpus, load_queries
from personalens.lenses.pqb.report_page import (
    SHOWN,
    browser_entries,
    corpus_titles,
    report_sections,
)
from personalens.report import BrowserItems, HtmlReport
from personalens.retrieval import get_retriever
from personalens.runs import (
    ItemRecords,
    Lens,
    Outcome,
    RecordedFailure,
    RunIdentity,
    Tally,
    fingerprint,
    run_lens,
)
from personalens.runs.blocking import run_blocking


@dataclass(frozen=True)
class QueryItem:
    group: QueryGroup
    record: QueryRecord

    @property
    def key(self) -> str:
        return f"{self.group.parent_asin}/{self.record.uid}"

    def texts(self) -> dict[str, str | None]:
        """The record's query texts by kind (clean is the release's syntax_query)."""
        return {"clean": self.record.syntax_query, "typo": self.record.typo_query,
                "random_typo": self.record.random_typo_query}


class PqbEval(Lens[EvalOptions, EvalRecord, PqbMetrics]):
    """Flip rate, Hit@K and MRR of one retriever for every released (or built) query record."""

    name = "pqb eval"
    title = "personalens · PersonalQuery-Benchmark evaluation"
    record_model = EvalRecord

    def __init__(self, options: EvalOptions):
        super().__init__(options, options.models.prices)
        self.queries, self.meta = options.queries_file.resolve(), options.meta_file.resolve()
        self.groups = load_queries(self.queries)
        self.corpus = load_corpus(self.meta)
        known = {d.id for d in self.corpus}
        for group in self.groups:
            for record in group.records:
                if record.asin not in known:
                    raise InputError(f"asin {record.asin} of item {group.parent_asin} is not in "
                                     f"the meta file {options.meta_file}",
                                     where=str(options.queries_file))
        self.retriever = get_retriever(options.retriever, ledger=self.ledger,
                                       endpoint=options.models.endpoint,
                                       executor=options.make_executor())
        self.ranked: dict[str, list[str]] = {}  # query text -> top MAX_K ids
        self.ranking_errors: dict[str, str | None] = {}  # query text -> why it was not ranked

    def identity(self) -> RunIdentity:
        files = [self.queries, self.meta]
        return RunIdentity(options=self.options,
                           dataset_hash=fingerprint(files, Path(os.path.commonpath(files))),
                           seeds={"bootstrap": self.options.seed})

    def plan(self) -> list[QueryItem]:
        return [QueryItem(g, r) for g in self.groups for r in g.records]

    async def prepare(self, todo: list[QueryItem]) -> None:
        """One index of the corpus and one batched search for every query text still to do."""
        texts = list(dict.fromkeys(q for item in todo for q in item.texts().values() if q))
        if not texts:
            return
        ranking = await run_blocking(lambda: self.retriever.index(self.corpus).search(texts, MAX_K))
        self.ranked = dict(zip(texts, ranking.ids, strict=True))
        self.ranking_errors = dict(zip(texts, ranking.errors or [None] * len(texts), strict=True))

    async def run_item(self, item: QueryItem) -> EvalRecord:
        record = item.record
        errors = {kind: self.ranking_errors[q] for kind, q in item.texts().items()
                  if q and self.ranking_errors[q]}
        ranked = {kind: q for kind, q in item.texts().items() if kind not in errors}
        # Ranks and the head of each ranking (for the report's browser); a failed item keeps
        # those of its queries that were ranked, beside the errors of the others.
        result = EvalRecord(
            parent_asin=item.group.parent_asin, **record.model_dump(),  # asin, uid, queries
            **{f"rank_{kind}": self._rank(q, record.asin) for kind, q in ranked.items()},
            **{f"top_{kind}": self.ranked[q][:SHOWN] if q else None
               for kind, q in ranked.items()})
        if errors:
            raise RecordedFailure("rerank_failed", next(iter(errors.values())),
                                  data={**result.fields(), "ranking_errors": errors})
        return result

    def _rank(self, query: str | None, asin: str) -> int | None:
        if query is None or asin not in self.ranked[query]:
            return None
        return self.ranked[query].index(asin) + 1

    def summarise(self, records: ItemRecords[EvalRecord], tally: Tally) -> PqbMetrics:
        metrics = summarise([scored(r) for r in records.ok()], seed=self.options.seed)
        return PqbMetrics.model_validate({**metrics, "retriever": self.options.retriever,
                                          "failures": tally.failures})

    def summary_line(self, metrics: PqbMetrics) -> str:
        return (f"Queries: {self.queries} · corpus: {self.meta} · retriever: "
                f"{self.options.retriever} · {metrics.n_queries} queries, "
                f"{metrics.n_pairs} user pairs, {metrics.n_typo} typo queries")

    def report_sections(self, report: HtmlReport, metrics: PqbMetrics,
                        records: ItemRecords[EvalRecord]) -> None:
        report_sections(report, metrics, self.options.retriever)

    def browser(self, records: ItemRecords[EvalRecord]) -> BrowserItems:
        return browser_entries(records, corpus_titles(self.corpus), self._released())

    def _released(self) -> dict[tuple[str, str], dict]:
        """The dataset's own query records by (parent_asin, uid): a built dataset's hold how
        each typo was made (`typo_edits`) or why a query has none (`typo_skipped`)."""
        raw = read_json(self.queries)
        return {(parent, r["uid"]): r for parent, rs in raw.items() for r in rs
                if isinstance(r, dict) and isinstance(r.get("uid"), str)}

    async def aclose(self) -> None:
        await run_blocking(self.retriever.close)


def run_eval(options: EvalOptions, *, progress: bool = True) -> Outcome:
    """Validate inputs (nothing is written if any is bad), then evaluate into options.out."""
    return run_lens(PqbEval(options), options.out, progress=progress)
