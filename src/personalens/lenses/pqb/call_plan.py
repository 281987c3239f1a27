"""`pqb eval --dry-run`: the query records a run would score and the calls it would make.

Retrieval alone calls no model; a `rerank-llm` retriever makes one reranker call per distinct
query text (clean, typo and random-typo queries are searched once each, as `PqbEval.prepare`).
"""

from statistics import fmean

from personalens.lenses.pqb.options import EvalOptions
from personalens.lenses.pqb.release_format import load_corpus, load_queries
from personalens.retrieval.registry import reranks_with_a_model
from personalens.retrieval.rerank import rerank_call_estimate
from personalens.runs.call_plan import CallPlan, estimated_tokens


def plan_calls(options: EvalOptions) -> CallPlan:
    groups = load_queries(options.queries_file.resolve())
    records = [r for g in groups for r in g.records]
    out = CallPlan("pqb eval", len(records), "query records")
    if not reranks_with_a_model(options.retriever):
        return out
    corpus = load_corpus(options.meta_file.resolve())
    mean_chars = fmean(len(d.text) for d in corpus) if corpus else 0.0
    texts = dict.fromkeys(q for r in records
                          for q in (r.syntax_query, r.typo_query, r.random_typo_query) if q)
    for text in texts:
        calls, chars, cap = rerank_call_estimate(text, len(corpus), mean_chars)
        out.add("reranker", calls, estimated_tokens(chars), cap)
    return out
