"""`personalens pqb eval`: released queries (--queries + --meta) or a built dataset (--data)."""

import os
from dataclasses import dataclass, field
from pathlib import Path

from personalens.errors import InputError
from personalens.input_files import read_json
from personalens.lenses.pqb.analysis import MAX_K, scored, summarise
from personalens.lenses.pqb.metrics import PqbMetrics
from personalens.lenses.pqb.release_format import QueryGroup, QueryRecord, load_corpus, load_queries
from personalens.lenses.pqb.report_page import (
    SHOWN,
    browser_entries,
    corpus_titles,
    report_sections,
)
from personalens.models import ModelSettings
from personalens.report.run_page import run_page
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
from personalens.runs.executor import Executor, LocalExecutor


@dataclass(frozen=True)
class PqbOptions:
    queries: Path
    meta: Path
    retriever: str
    out: Path
    seed: int = 0
    endpoint: ModelSettings | None = None  # for a retriever's model (rerank-llm:<spec>)
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)
    # Where the corpus is encoded; not part of the run's identity (the records are the same).
    executor: Executor = field(default_factory=LocalExecutor)

    @classmethod
    def from_data(cls, data: Path, **kwargs) -> "PqbOptions":
        """A `pqb build` folder: its queries.json and corpus.jsonl."""
        for name in ("queries.json", "corpus.jsonl"):
            if not (data / name).is_file():
                raise InputError(f"{data} is not a pqb build folder (no {name})")
        return cls(queries=data / "queries.json", meta=data / "corpus.jsonl", **kwargs)

    @classmethod
    def from_flags(cls, data: Path | None, queries: Path | None, meta: Path | None,
                   **kwargs) -> "PqbOptions":
        """--data DIR, or --queries with --meta; anything else is refused."""
        if data is not None and (queries or meta):
            raise InputError("give --data, or --queries with --meta, not both")
        if data is None and not (queries and meta):
            raise InputError("give --data DIR (a pqb build folder), or both --queries and "
                             "--meta")
        if data is not None:
            return cls.from_data(data, **kwargs)
        return cls(queries=queries, meta=meta, **kwargs)

    def config(self) -> dict:
        return {"lens": "pqb", "queries": str(self.queries.resolve()),
                "meta": str(self.meta.resolve()), "retriever": self.retriever,
                "seed": self.seed}


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


@dataclass
class _Ranked:
    ids: dict[str, list[str]] = field(default_factory=dict)  # query text -> top MAX_K ids
    errors: dict[str, str | None] = field(default_factory=dict)


class PqbEval(Lens):
    """Flip rate, Hit@K and MRR of one retriever for every released (or built) query record."""

    name = "pqb eval"
    title = "personalens · PersonalQuery-Benchmark evaluation"

    def __init__(self, options: PqbOptions):
        super().__init__(options.prices)
        self.options = options
        self.groups = load_queries(options.queries)
        self.corpus = load_corpus(options.meta)
        known = {d.id for d in self.corpus}
        for group in self.groups:
            for record in group.records:
                if record.asin not in known:
                    raise InputError(f"asin {record.asin} of item {group.parent_asin} is not in "
                                     f"the meta file {options.meta}", where=str(options.queries))
        self.retriever = get_retriever(options.retriever, ledger=self.ledger,
                                       endpoint=options.endpoint, executor=options.executor)
        self.ranked = _Ranked()

    def identity(self) -> RunIdentity:
        files = [self.options.queries.resolve(), self.options.meta.resolve()]
        return RunIdentity(config=self.options.config(),
                           dataset_hash=fingerprint(files, Path(os.path.commonpath(files))),
                           seeds={"bootstrap": self.options.seed})

    def plan(self) -> list[QueryItem]:
        return [QueryItem(g, r) for g in self.groups for r in g.records]

    async def prepare(self, todo: list[QueryItem]) -> None:
        """One index of the corpus and one batched search for every query text still to do."""
        texts = list(dict.fromkeys(q for item in todo for q in item.texts().values() if q))
        if not texts:
            return

        def search():
            return self.retriever.index(self.corpus).search(texts, MAX_K)
        ranking = await run_blocking(search)
        self.ranked.ids = dict(zip(texts, ranking.ids, strict=True))
        self.ranked.errors = dict(zip(texts, ranking.errors or [None] * len(texts), strict=True))

    async def run_item(self, item: QueryItem) -> dict:
        record = item.record
        fields = {"parent_asin": item.group.parent_asin, "asin": record.asin, "uid": record.uid}
        fields |= {"syntax_query": record.syntax_query, "typo_query": record.typo_query,
                   "random_typo_query": record.random_typo_query}
        errors = {kind: self.ranked.errors[q] for kind, q in item.texts().items()
                  if q and self.ranked.errors[q]}
        ranked = {kind: q for kind, q in item.texts().items() if kind not in errors}
        # Ranks and the head of each ranking (for the report's browser); a failed item keeps
        # those of its queries that were ranked, beside the errors of the others.
        fields |= {**{f"rank_{kind}": self._rank(q, record.asin) for kind, q in ranked.items()},
                   **{f"top_{kind}": self.ranked.ids[q][:SHOWN] if q else None
                      for kind, q in ranked.items()}}
        if errors:
            raise RecordedFailure("rerank_failed", next(iter(errors.values())),
                                  data={**fields, "ranking_errors": errors})
        return fields

    def _rank(self, query: str | None, asin: str) -> int | None:
        if query is None or asin not in self.ranked.ids[query]:
            return None
        return self.ranked.ids[query].index(asin) + 1

    def summarise(self, records: ItemRecords, tally: Tally) -> PqbMetrics:
        metrics = summarise([scored(r) for r in records if r["status"] == "ok"],
                            seed=self.options.seed)
        return PqbMetrics.model_validate({**metrics, "retriever": self.options.retriever,
                                          "failures": tally.failures})

    def render_report(self, metrics: PqbMetrics, tally: Tally, manifest: dict,
                      records: ItemRecords) -> str:
        config = manifest["config"]
        return run_page(
            self.title, tally, manifest,
            summary=(f"Queries: {config['queries']} · corpus: {config['meta']} · retriever: "
                     f"{config['retriever']} · {metrics.n_queries} queries, "
                     f"{metrics.n_pairs} user pairs, {metrics.n_typo} typo queries"),
            sections=lambda report: report_sections(report, metrics, config["retriever"]),
            browser=browser_entries(records, corpus_titles(self.corpus), self._released()))

    def _released(self) -> dict[tuple[str, str], dict]:
        """The dataset's own query records by (parent_asin, uid): a built dataset's hold how
        each typo was made (`typo_edits`) or why a query has none (`typo_skipped`)."""
        raw = read_json(self.options.queries)
        return {(parent, r["uid"]): r for parent, rs in raw.items() for r in rs
                if isinstance(r, dict) and isinstance(r.get("uid"), str)}

    async def aclose(self) -> None:
        await run_blocking(self.retriever.close)


def run_pqb_eval(options: PqbOptions, *, progress: bool = True) -> Outcome:
    return run_lens(PqbEval(options), options.out, progress=progress)
