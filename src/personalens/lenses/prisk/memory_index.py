"""The user's memory as indexes from the retrieval layer: past conversations are documents.

Scope `persona` (the default, as the release's generate.py): one store per persona and risk,
pooling the conversations of every record of that persona in the run (the same text once), so
a record's search can return a conversation, or a decoy, that came with another record of the
same user. Scope `record`: each record's own conversations only. A store is indexed once, off
the event loop, with whatever retriever the run uses, and dropped when its last record is done;
a search returns the conversations with their scores, which the record keeps so the report can
show what the model was shown.
"""

import asyncio
from collections import Counter

from personalens.lenses.prisk.options import MemoryScope
from personalens.lenses.prisk.records import Conversation, Memory, PriskRecord
from personalens.retrieval import Document, Retriever
from personalens.retrieval.ranking import Index
from personalens.runs.blocking import run_blocking


def store_key(record: PriskRecord, scope: MemoryScope) -> str:
    """The store a record searches: its persona's within its risk (one release run per risk
    dataset), or its own."""
    return f"{record.risk}/{record.persona_id}" if scope == "persona" else record.record_id


def stores(records: list[PriskRecord], scope: MemoryScope) -> dict[str, dict[str, Conversation]]:
    """Each store's conversations by document id (`<record>/<index>` of the first record that
    carries the text), in record order."""
    out: dict[str, dict[str, Conversation]] = {}
    seen: dict[str, set[str]] = {}
    for record in records:
        key = store_key(record, scope)
        docs, texts = out.setdefault(key, {}), seen.setdefault(key, set())
        for i, conversation in enumerate(record.conversations):
            text = conversation.text()
            if text not in texts:
                texts.add(text)
                docs[f"{record.record_id}/{i}"] = conversation
    return out


class MemoryIndexes:
    def __init__(self, retriever: Retriever, records: list[PriskRecord], scope: MemoryScope):
        self.retriever = retriever
        self.scope = scope
        self._docs = stores(records, scope)
        self._pending = Counter(store_key(r, scope) for r in records)
        self._indexes: dict[str, asyncio.Task] = {}

    async def search(self, record: PriskRecord, text: str, k: int) -> list[Memory]:
        """Top-k conversations of the record's store for `text`, best first."""
        key = store_key(record, self.scope)
        docs = self._docs.get(key, {})
        if not docs:
            return []
        index: Index = await self._index(key, docs)
        ranking = await run_blocking(index.search, [text], min(k, len(docs)))
        return [Memory(id=doc_id, focal_attribute=docs[doc_id].focal_attribute,
                       decoy=docs[doc_id].decoy, score=float(score), text=docs[doc_id].text())
                for doc_id, score in zip(ranking.ids[0], ranking.scores[0], strict=True)]

    def _index(self, key: str, docs: dict[str, Conversation]) -> asyncio.Task:
        # One build per store even when several conditions (or records) ask at once.
        if key not in self._indexes:
            documents = [Document(doc_id, c.text()) for doc_id, c in docs.items()]
            self._indexes[key] = asyncio.ensure_future(
                run_blocking(self.retriever.index, documents))
        return self._indexes[key]

    def forget(self, record: PriskRecord) -> None:
        """A record is done: drop its store's index once no record of the run needs it (memory
        stays bounded over a long run; a resumed run keeps the stores of records done before,
        at most one per persona and risk)."""
        key = store_key(record, self.scope)
        self._pending[key] -= 1
        if self._pending[key] <= 0:
            self._indexes.pop(key, None)
