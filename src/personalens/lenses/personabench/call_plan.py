"""`personabench eval --dry-run`: the questions a run would score and the calls it would make.

One target call per scored question and condition (none with --no-answer); a `rerank-llm`
retriever adds one reranker call per question. Prompt tokens come from the question and the
mean length of the sessions it would read; an answer is capped at 48 tokens.
"""

from statistics import fmean

from personalens.lenses.personabench.answering import ANSWER_PARAMS, answer_messages
from personalens.lenses.personabench.evaluation import plan
from personalens.lenses.personabench.options import EvalOptions
from personalens.population.release_reader import load_communities
from personalens.retrieval.registry import reranks_with_a_model
from personalens.retrieval.rerank import rerank_call_estimate
from personalens.runs.call_plan import CallPlan, estimated_tokens


def plan_calls(options: EvalOptions) -> CallPlan:
    communities = load_communities(options.data.resolve(), options.noise)
    items = plan(communities, options.noise, options.retriever)
    out = CallPlan("personabench eval", len(items), "questions scored")
    for item in items:
        sessions = item.community.levels[item.noise].sessions[item.person]
        mean_chars = fmean(len(s.text) for s in sessions) if sessions else 0.0
        if reranks_with_a_model(item.retriever):
            calls, chars, cap = rerank_call_estimate(item.question.question, len(sessions),
                                                     mean_chars)
            out.add("reranker", calls, estimated_tokens(chars), cap)
        if options.target is not None:
            read = min(options.k, len(sessions))
            prompt = len(answer_messages(item.question.question, [""] * read)[0]["content"])
            out.add("target", 1, estimated_tokens(prompt + int(read * mean_chars)),
                    ANSWER_PARAMS["max_tokens"])
    return out
