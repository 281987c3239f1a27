"""`personalens pqb eval`: released queries (--queries + --meta) or a built dataset (--data)."""

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from personalens.errors import InputError
from personalens.lenses.pqb.analysis import MAX_K, summarise
from personalens.lenses.pqb.release_format import load_corpus, load_queries
from personalens.lenses.pqb.report_page import build_report
from personalens.models import UsageLedger, merge_usage
from personalens.retrieval import get_retriever
from personalens.runs import RunDirectory, fingerprint, package_versions


@dataclass(frozen=True)
class PqbOptions:
    queries: Path
    meta: Path
    retriever: str
    out: Path
    seed: int = 0

    @classmethod
    def from_data(cls, data: Path, **kwargs) -> "PqbOptions":
        """A `pqb build` folder: its queries.json and corpus.jsonl."""
        for name in ("queries.json", "corpus.jsonl"):
            if not (data / name).is_file():
                raise InputError(f"{data} is not a pqb build folder (no {name})")
        return cls(queries=data / "queries.json", meta=data / "corpus.jsonl", **kwargs)

    def config(self) -> dict:
        return {"lens": "pqb", "queries": str(self.queries.resolve()),
                "meta": str(self.meta.resolve()), "retriever": self.retriever,
                "seed": self.seed}


def run_pqb_eval(options: PqbOptions) -> dict:
    groups = load_queries(options.queries)
    corpus = load_corpus(options.meta)
    known = {d.id for d in corpus}
    for group in groups:
        for record in group.records:
            if record.asin not in known:
                raise InputError(f"asin {record.asin} of item {group.parent_asin} is not in the "
                                 f"meta file {options.meta}", where=str(options.queries))
    ledger = UsageLedger()
    retriever = get_retriever(options.retriever, ledger=ledger)
    files = [options.queries.resolve(), options.meta.resolve()]
    # The data's hash is part of the config: a run never resumes onto changed queries.
    config = {**options.config(),
              "dataset_hash": fingerprint(files, Path(os.path.commonpath(files)))}
    run = RunDirectory.open(options.out, {
        "command": " ".join(["personalens", *sys.argv[1:]]), "config": config,
        "versions": package_versions(), "seeds": {"bootstrap": options.seed},
    })
    status = "interrupted"
    try:
        done = run.successful_records()  # failed rankings are retried
        todo = [(g, r) for g in groups for r in g.records
                if f"{g.parent_asin}/{r.uid}" not in done]
        if todo:
            try:
                _evaluate(run, retriever, corpus, todo)
            finally:
                run.write_manifest(usage=merge_usage(run.previous_usage, ledger.as_dict()))
        records = list(run.records().values())
        metrics = summarise([r for r in records if r["status"] == "ok"], seed=options.seed)
        metrics["retriever"] = options.retriever
        metrics["failures"] = [r for r in records if r["status"] != "ok"]
        run.write_outputs(metrics, build_report(metrics, run.manifest))
        status = "incomplete" if metrics["failures"] else "complete"
    finally:
        run.close(status)
    return metrics


def _evaluate(run, retriever, corpus, todo) -> None:
    index = retriever.index(corpus)
    texts = list(dict.fromkeys(q for _, r in todo for q in _queries(r).values() if q))
    try:
        ranking = index.search(texts, MAX_K)
    finally:
        if hasattr(retriever, "close"):  # an LLM reranker's model, thread and loop
            retriever.close()
    ranked = dict(zip(texts, ranking.ids, strict=True))
    errors = dict(zip(texts, ranking.errors or [None] * len(texts), strict=True))

    def rank(query: str | None, asin: str) -> int | None:
        if query is None or asin not in ranked[query]:
            return None
        return ranked[query].index(asin) + 1

    for group, record in todo:
        queries = _queries(record)
        key = {"key": f"{group.parent_asin}/{record.uid}", "parent_asin": group.parent_asin,
               "asin": record.asin, "uid": record.uid}
        failed = [errors[q] for q in queries.values() if q and errors[q]]
        if failed:
            run.append({**key, "status": "failed", "error": failed[0]})
            continue
        run.append({**key, "status": "ok", "syntax_query": record.syntax_query,
                    "typo_query": record.typo_query,
                    "random_typo_query": record.random_typo_query,
                    **{f"rank_{kind}": rank(q, record.asin) for kind, q in queries.items()}})


def _queries(record) -> dict[str, str | None]:
    """The record's query texts by kind (clean is the release's syntax_query)."""
    return {"clean": record.syntax_query, "typo": record.typo_query,
            "random_typo": record.random_typo_query}
