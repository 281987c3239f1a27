"""BEIR-format export of released PQB queries, so any external retriever can run on them.

corpus.jsonl {_id, title, text}; queries.jsonl {_id, text, metadata}; qrels/test.tsv
(query-id, corpus-id, score). Query ids are <parent_asin>/<uid>/clean, .../typo and, for built
data, .../random_typo. The title is the document's first line (the item title when it has one).
"""

import json
from pathlib import Path

from personalens.lenses.pqb.release_format import QueryGroup
from personalens.retrieval import Document
from personalens.runs import write_atomic


def export_beir(groups: list[QueryGroup], corpus: list[Document], out: Path) -> dict[str, int]:
    out.mkdir(parents=True, exist_ok=True)
    (out / "qrels").mkdir(exist_ok=True)
    corpus_lines = [json.dumps({"_id": d.id, "title": d.text.split("\n", 1)[0], "text": d.text},
                               ensure_ascii=False) for d in corpus]
    queries, qrels = [], ["query-id\tcorpus-id\tscore"]
    for group in groups:
        for record in group.records:
            for kind, text in (("clean", record.syntax_query), ("typo", record.typo_query),
                               ("random_typo", record.random_typo_query)):
                if text is None:
                    continue
                query_id = f"{group.parent_asin}/{record.uid}/{kind}"
                queries.append(json.dumps({"_id": query_id, "text": text, "metadata": {
                    "uid": record.uid, "kind": kind, "parent_asin": group.parent_asin}},
                    ensure_ascii=False))
                qrels.append(f"{query_id}\t{record.asin}\t1")
    write_atomic(out / "corpus.jsonl", "\n".join(corpus_lines) + "\n")
    write_atomic(out / "queries.jsonl", "\n".join(queries) + "\n")
    write_atomic(out / "qrels" / "test.tsv", "\n".join(qrels) + "\n")
    return {"documents": len(corpus_lines), "queries": len(queries), "qrels": len(qrels) - 1}
