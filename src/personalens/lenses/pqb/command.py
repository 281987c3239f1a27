"""`personalens pqb eval --queries RELEASE.json --meta meta_<Category>.jsonl`."""

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from personalens.errors import InputError
from personalens.lenses.pqb.analysis import MAX_K, summarise
from personalens.lenses.pqb.release_format import load_corpus, load_queries
from personalens.lenses.pqb.report_page import build_report
from personalens.retrieval import get_retriever
from personalens.runs import RunDirectory, fingerprint, package_versions


@dataclass(frozen=True)
class PqbOptions:
    queries: Path
    meta: Path
    retriever: str
    out: Path
    seed: int = 0

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
    retriever = get_retriever(options.retriever)
    files = [options.queries.resolve(), options.meta.resolve()]
    run = RunDirectory.open(options.out, {
        "command": " ".join(["personalens", *sys.argv[1:]]), "config": options.config(),
        "versions": package_versions(), "seeds": {"bootstrap": options.seed},
        "dataset_hash": fingerprint(files, Path(os.path.commonpath(files))),
    })
    status = "interrupted"
    try:
        done = run.records()
        todo = [(g, r) for g in groups for r in g.records
                if f"{g.parent_asin}/{r.uid}" not in done]
        if todo:
            _evaluate(run, retriever, corpus, todo)
        metrics = summarise(list(run.records().values()), seed=options.seed)
        metrics["retriever"] = options.retriever
        run.write_outputs(metrics, build_report(metrics, run.manifest))
        status = "complete"
    finally:
        run.close(status)
    return metrics


def _evaluate(run, retriever, corpus, todo) -> None:
    index = retriever.index(corpus)
    texts = [r.syntax_query for _, r in todo] + [r.typo_query for _, r in todo if r.typo_query]
    ranked = dict(zip(texts, index.search(texts, MAX_K).ids, strict=True))

    def rank(query: str | None, asin: str) -> int | None:
        if query is None or asin not in ranked[query]:
            return None
        return ranked[query].index(asin) + 1

    for group, record in todo:
        run.append({"key": f"{group.parent_asin}/{record.uid}", "status": "ok",
                    "parent_asin": group.parent_asin, "asin": record.asin, "uid": record.uid,
                    "syntax_query": record.syntax_query, "typo_query": record.typo_query,
                    "rank_clean": rank(record.syntax_query, record.asin),
                    "rank_typo": rank(record.typo_query, record.asin)})
