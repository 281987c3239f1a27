"""Each record's memory as an index from the retrieval layer: its conversations are documents.

The index is built once per record (its decoy belongs to it), off the event loop, with whatever
retriever the run uses; a search returns the conversations with their scores, which the record
keeps so the report can show what the model was shown.
"""

import asyncio

from personalens.lenses.prisk.records import Memory, PriskRecord
from personalens.retrieval import Document, Retriever
from personalens.retrieval.ranking import Index
from personalens.runs.blocking import run_blocking


class MemoryIndexes:
    def __init__(self, retriever: Retriever):
        self.retriever = retriever
        self._indexes: dict[str, asyncio.Task] = {}

    async def search(self, record: PriskRecord, text: str, k: int) -> list[Memory]:
        """Top-k conversations of the record's memory for `text`, best first."""
        if not record.conversations:
            return []
        index: Index = await self._index(record)
        ranking = await run_blocking(index.search, [text], min(k, len(record.conversations)))
        by_id = {f"{record.record_id}/{i}": c for i, c in enumerate(record.conversations)}
        return [Memory(id=doc_id, focal_attribute=by_id[doc_id].focal_attribute,
                       decoy=by_id[doc_id].decoy, score=float(score), text=by_id[doc_id].text())
                for doc_id, score in zip(ranking.ids[0], ranking.scores[0], strict=True)]

    def _index(self, record: PriskRecord) -> asyncio.Task:
        # One build per record even when several conditions ask at once.
        if record.record_id not in self._indexes:
            docs = [Document(f"{record.record_id}/{i}", c.text())
                    for i, c in enumerate(record.conversations)]
            self._indexes[record.record_id] = asyncio.ensure_future(
                run_blocking(self.retriever.index, docs))
        return self._indexes[record.record_id]

    def forget(self, record: PriskRecord) -> None:
        """Drop a finished record's index (memory stays bounded over a long run)."""
        self._indexes.pop(record.record_id, None)
