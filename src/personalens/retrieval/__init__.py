"""The retrieval layer: retrievers behind one protocol, an embedding cache, and IR metrics."""

from personalens.retrieval.bm25 import BM25Retriever
from personalens.retrieval.dense import DenseRetriever
from personalens.retrieval.hybrid import HybridRetriever
from personalens.retrieval.late_interaction import LateInteractionRetriever
from personalens.retrieval.metrics import hit_at_k, mrr, ndcg_at_k, recall_at_k, relevance_matrix
from personalens.retrieval.ranking import (
    Document,
    Index,
    Ranking,
    Retriever,
    ScoringIndex,
    top_k,
)
from personalens.retrieval.registry import RETRIEVER_HELP, get_retriever
from personalens.retrieval.rerank import CrossEncoderReranker, LLMReranker, RerankRetriever
from personalens.retrieval.sparse import SparseRetriever

__all__ = [
    "RETRIEVER_HELP", "BM25Retriever", "CrossEncoderReranker", "DenseRetriever", "Document",
    "HybridRetriever", "Index", "LLMReranker", "LateInteractionRetriever", "Ranking",
    "RerankRetriever", "Retriever", "ScoringIndex", "SparseRetriever", "get_retriever",
    "hit_at_k", "mrr", "ndcg_at_k", "recall_at_k", "relevance_matrix", "top_k",
]
