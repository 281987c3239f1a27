"""What a retriever may be called, as help texts say it: light to import, so the options models
and the CLI's --help load no retriever (`retrieval.registry` turns a name into one)."""

RETRIEVER_HELP = (
    "bm25; minilm (bundled all-MiniLM-L6-v2) or any sentence-transformers model name or local "
    "path; splade[:<model>]; colbert[:<model>] (needs personalens[colbert]); "
    "hybrid[:<a>+<b>[+<c>]] (default bm25+minilm; weights as bm25=0.3+minilm=0.7); "
    "rerank-ce[:<cross-encoder>] or rerank-llm[:<model spec>] (rerank BM25's top 25)"
)
