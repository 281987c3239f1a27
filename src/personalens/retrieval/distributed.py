"""Retrieval on a distributed executor: corpus encoding on Ray Data, per-person search as tasks.

Only retrievers that call no model can search remotely (an LLM reranker's calls belong to the
driver's endpoint, limiter and usage ledger); they stay in the driver and still encode on Ray.
"""

import functools

from personalens.retrieval.ranking import Document, Retriever


def searches_remotely(name: str) -> bool:
    return not name.startswith("rerank-llm")


@functools.cache
def _worker_retriever(name: str) -> Retriever:
    from personalens.retrieval.registry import get_retriever

    return get_retriever(name)  # one per worker process, model loaded on first use


def search_by_name(name: str, docs: list[tuple[str, str]], queries: list[str],
                   k: int) -> list[list[str]]:
    """Top-k ids per query over `docs` (id, text): a task body, so plain data in and out."""
    index = _worker_retriever(name).index([Document(i, t) for i, t in docs])
    return index.search(queries, k).ids
