"""Retriever names -> retrievers: bm25, minilm (bundled), or any sentence-transformers model."""

from personalens.retrieval.bm25 import BM25Retriever
from personalens.retrieval.dense import DenseRetriever
from personalens.retrieval.ranking import Retriever

RETRIEVER_HELP = ("bm25, minilm (bundled all-MiniLM-L6-v2), or any sentence-transformers model "
                  "name or local path")


def get_retriever(name: str) -> Retriever:
    if name == "bm25":
        return BM25Retriever()
    return DenseRetriever(name)
