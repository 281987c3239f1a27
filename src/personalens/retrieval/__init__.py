"""The retrieval layer: retrievers behind one protocol, an embedding cache, and IR metrics.

Names load on first use (lazy_loader), so importing one of them loads its module
only: `personalens --help` and the options models stay light.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "bm25": ["BM25Retriever"],
    "dense": ["DenseRetriever"],
    "hybrid": ["HybridRetriever"],
    "late_interaction": ["LateInteractionRetriever"],
    "metrics": ["hit_at_k", "mrr", "ndcg_at_k", "recall_at_k", "relevance_matrix"],
    "ranking": ["Document", "Index", "Ranking", "Retriever", "ScoringIndex", "top_k"],
    "registry": ["get_retriever"],
    "retriever_names": ["RETRIEVER_HELP"],
    "rerank": ["CrossEncoderReranker", "LLMReranker", "RerankRetriever"],
    "sparse": ["SparseRetriever"],
})
