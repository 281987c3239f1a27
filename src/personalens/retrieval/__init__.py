"""The retrieval layer: retrievers behind one protocol, an embedding cache, and IR metrics."""

from personalens.retrieval.bm25 import BM25Retriever
from personalens.retrieval.dense import DenseRetriever
from personalens.retrieval.metrics import hit_at_k, mrr, ndcg_at_k, recall_at_k, relevance_matrix
from personalens.retrieval.ranking import Document, Index, Ranking, Retriever, top_k
from personalens.retrieval.registry import RETRIEVER_HELP, get_retriever

__all__ = [
    "RETRIEVER_HELP", "BM25Retriever", "DenseRetriever", "Document", "Index", "Ranking",
    "Retriever", "get_retriever", "hit_at_k", "mrr", "ndcg_at_k", "recall_at_k",
    "relevance_matrix", "top_k",
]
