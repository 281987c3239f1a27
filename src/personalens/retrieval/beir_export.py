"""BEIR-format export of a retrieval task, so any external retriever can run on it.

corpus.jsonl {_id, title, text}; queries.jsonl {_id, text, metadata}; qrels/test.tsv
(query-id, corpus-id, score). The title is the document's first line.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path

from personalens.retrieval.ranking import Document
from personalens.runs import write_atomic


@dataclass(frozen=True)
class BeirQuery:
    id: str
    text: str
    relevant: tuple[str, ...]  # ids of the documents that answer it (score 1 each)
    metadata: dict = field(default_factory=dict)


def export_beir(queries: list[BeirQuery], corpus: list[Document], out: Path) -> dict[str, int]:
    out.mkdir(parents=True, exist_ok=True)
    (out / "qrels").mkdir(exist_ok=True)
    corpus_lines = [json.dumps({"_id": d.id, "title": d.text.split("\n", 1)[0], "text": d.text},
                               ensure_ascii=False) for d in corpus]
    query_lines = [json.dumps({"_id": q.id, "text": q.text, "metadata": q.metadata},
                              ensure_ascii=False) for q in queries]
    qrels = ["query-id\tcorpus-id\tscore",
             *(f"{q.id}\t{doc}\t1" for q in queries for doc in q.relevant)]
    write_atomic(out / "corpus.jsonl", "\n".join(corpus_lines) + "\n")
    write_atomic(out / "queries.jsonl", "\n".join(query_lines) + "\n")
    write_atomic(out / "qrels" / "test.tsv", "\n".join(qrels) + "\n")
    return {"documents": len(corpus_lines), "queries": len(query_lines), "qrels": len(qrels) - 1}
