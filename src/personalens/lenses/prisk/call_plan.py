"""`prisk eval --dry-run`: the records a run would evaluate and the calls it would make.

Per record, as `Evaluation.record` asks them when every reply is valid at its first attempt:
- target: the router on the query when `retrieval` runs, and on the profile with the query
  when `profile_retrieval` or `reflect` does; an answer per condition (narrowing: one per
  sample), with reflect's revision and its draft (the draft is profile_retrieval's answer when
  that condition runs); for framing, the independent base reference and, under `profile` with
  sides to swap, the answer to the inverted preference.
- judge: a rubric verdict per condition (IRP, agreement, framing; IRP also of each benchmark
  answer), a PIS verdict per condition but base (agreement on a YTA post, framing: with the
  default --pis-question, only of answers judged sycophantic, which the plan assumes all are),
  and two leans per inverted framing record.
- topic_judge: the topics of every narrowing sample; the canonical labels of each narrowing
  query's options, then of the options only the depth sweep's samples name.
- usefulness_judge: the useful set of each narrowing record.
- reranker (`--retriever rerank-llm`): one listwise call per memory search over two or more
  conversations.
Prompt tokens come from the prompts the lens builds, with answers at their full cap and the
record's first conversations standing in for the memories a search would return.
"""

import inspect
from dataclasses import dataclass
from statistics import fmean

from personalens.lenses.prisk import judging
from personalens.lenses.prisk.answer_sets import CHUNK
from personalens.lenses.prisk.command import eval_records
from personalens.lenses.prisk.conditions import Condition, conditions_for
from personalens.lenses.prisk.evaluation import ROUTER_TOKENS, depth, invertible, routes
from personalens.lenses.prisk.memory_index import store_key, stores
from personalens.lenses.prisk.options import EvalOptions
from personalens.lenses.prisk.prompts import (
    answer_messages,
    reflect_messages,
    router_messages,
    search_text,
)
from personalens.lenses.prisk.records import Conversation, Memory, PriskRecord
from personalens.models.completion import Message
from personalens.models.rubric_judge import judge_criterion, judge_prompt
from personalens.retrieval.registry import reranks_with_a_model
from personalens.retrieval.rerank import rerank_call_estimate
from personalens.runs.call_plan import CHARS_PER_TOKEN, CallPlan, estimated_tokens

# The rubric judge's own cap, read from its signature so the plan follows it.
RUBRIC_TOKENS = inspect.signature(judge_criterion).parameters["max_tokens"].default
# The instructions and labels around the inputs of a structured verdict (topics, labels,
# usefulness, PIS, lean): their system prompts are 140-330 characters.
VERDICT_TEMPLATE_CHARS = 300
NOTES = {
    "first": "every answer, router decision and verdict valid at its first attempt (an invalid "
             "one is asked again, up to --attempts); completion tokens at each call's "
             "max_tokens cap (an upper bound)",
    "router": "the router is assumed to send every record to retrieval: a no_retrieval "
              "decision makes the same target calls with shorter prompts, and skips the "
              "memory search (with rerank-llm, its reranker call)",
    "narrowing": "each narrowing query's options fit one labelling call (at most 60 distinct "
                 "options; each further 60 adds one) and its answer set is not empty (one "
                 "usefulness verdict per record)",
    "sweep": "the samples of reflect and of the depth sweep name options the 2x2's samples do "
             "not: one more labelling call per narrowing query (none when they name no new "
             "option)",
    "pis": "every personalised agreement (YTA) and framing answer is judged sycophantic, so "
           "each gets a PIS verdict (an upper bound: PIS is asked of sycophantic answers only)",
}


def plan_calls(options: EvalOptions) -> CallPlan:
    records = eval_records(options)
    conditions = conditions_for(options.conditions, options.k_sweep)
    plan = CallPlan("prisk eval", len(records), "records")
    calls = _Calls(plan, options, conditions, "x" * (options.max_tokens * CHARS_PER_TOKEN),
                   stores(records, options.memory_scope))
    for record in records:
        calls.record(record)
    narrowing = [r for r in records if r.risk == "narrowing"]
    calls.answer_sets(narrowing)
    plan.notes.append(NOTES["first"])
    if any(c.memory and c.forced_k is None for c in conditions):
        plan.notes.append(NOTES["router"])
    if narrowing:
        plan.notes.append(NOTES["narrowing"])
    if narrowing and any(not c.in_universe for c in conditions):
        plan.notes.append(NOTES["sweep"])
    if options.pis_question == "sycophantic" and any(
            judging.pis_applies(r) for r in records):
        plan.notes.append(NOTES["pis"])
    return plan


def _chars(messages: list[Message]) -> int:
    return sum(len(m["content"]) for m in messages)


def _stand_ins(record: PriskRecord, k: int) -> list[Memory]:
    """The record's first k conversations, in place of the k a search would return."""
    return [Memory(id=str(i), focal_attribute=c.focal_attribute, decoy=c.decoy, score=0.0,
                   text=c.text()) for i, c in enumerate(record.conversations[:k])]


@dataclass
class _Calls:
    plan: CallPlan
    options: EvalOptions
    conditions: list[Condition]
    answer: str  # an answer at its full length, where a prompt quotes one
    stores: dict[str, dict[str, Conversation]]  # memory stores, as the run builds them

    def add(self, role: str, calls: int, prompt_chars: int, cap: int) -> None:
        """`calls` calls of `role` with `prompt_chars` in all, each capped at `cap` tokens."""
        if calls:  # a role the run never calls is not in its manifest
            self.plan.add(role, calls, estimated_tokens(prompt_chars), calls * cap)

    def verdicts(self, role: str, calls: int, *inputs: str) -> None:
        """Structured verdicts (`judging._structured`) over `inputs` with their template."""
        self.add(role, calls, calls * (VERDICT_TEMPLATE_CHARS + sum(map(len, inputs))),
                 judging.VERDICT_TOKENS)

    def record(self, record: PriskRecord) -> None:
        for profile in (False, True):
            if routes(self.conditions, profile):
                self.add("target", 1, _chars(router_messages(record, profile)), ROUTER_TOKENS)
        for condition in self.conditions:
            self.condition(record, condition)
        if record.risk != "narrowing":
            self.scores(record)

    def condition(self, record: PriskRecord, condition: Condition) -> None:
        """One condition's search, answers (narrowing: samples) and their topics."""
        k = depth(condition, "retrieval", self.options.k)
        if k and reranks_with_a_model(self.options.retriever):
            store = self.stores[store_key(record, self.options.memory_scope)].values()
            mean_chars = fmean(len(c.text()) for c in store) if store else 0.0
            calls, chars, cap = rerank_call_estimate(search_text(record, condition.profile),
                                                     len(store), mean_chars)
            self.add("reranker", calls, chars, cap)
        messages = answer_messages(record, condition.profile, _stand_ins(record, k))
        answers = self.options.sample_count(condition.name) if record.risk == "narrowing" else 1
        cap = self.options.max_tokens
        if condition.reflect:
            # The drafts are profile_retrieval's answers when that condition runs too.
            shared = any(c.name == "profile_retrieval" for c in self.conditions)
            drafts = 0 if shared else answers
            self.add("target", drafts, drafts * _chars(messages), cap)
            self.add("target", answers, answers * _chars(reflect_messages(messages, self.answer)),
                     cap)
        else:
            self.add("target", answers, answers * _chars(messages), cap)
        if record.risk == "narrowing":
            self.verdicts("topic_judge", answers, messages[-1]["content"], self.answer)

    def scores(self, record: PriskRecord) -> None:
        """The verdicts on every condition's answer, and framing's reference and inversion."""
        n = len(self.conditions)
        criterion = judging.criterion(record, self.answer)
        if record.risk == "accuracy":  # the benchmark's answers are judged for IRP too
            criterion = judging.irp_criterion(record)
        if criterion is not None:
            self.add("judge", n, n * _chars(judge_prompt(criterion, self.answer)),
                     RUBRIC_TOKENS)
        if self.options.pis_question == "contrast" and record.risk in ("agreement", "framing"):
            self.verdicts("judge", n - 1, record.profile_text(), record.question, self.answer,
                          self.answer)  # PIS: each answer against base's
        elif judging.pis_applies(record):  # PIS of each answer, if judged sycophantic
            self.verdicts("judge", n - 1, judging.source_material(record), self.answer)
        if record.risk != "framing":
            return
        generic = _chars(answer_messages(record, False, []))
        self.add("target", 1, generic, self.options.max_tokens)
        if any(c.name == "profile" for c in self.conditions) and invertible(record):
            self.add("target", 1, _chars(answer_messages(record, True, [])),
                     self.options.max_tokens)
            self.verdicts("judge", 2, record.question, self.answer)

    def answer_sets(self, narrowing: list[PriskRecord]) -> None:
        """Per query: its options labelled (the sweep's new ones after), each record's useful
        set chosen from them."""
        by_query: dict[str, list[PriskRecord]] = {}
        for record in narrowing:
            by_query.setdefault(record.query_id, []).append(record)
        samples = sum(self.options.sample_count(c.name) for c in self.conditions
                      if c.in_universe)
        for group in by_query.values():
            # Up to TOPICS options per sample, as many as one labelling call takes.
            options = min(CHUNK, judging.TOPICS * samples * len(group))
            listed = "x" * (options * (judging.TOPIC_CHARS // 2 + 5))
            labelling = 1 + any(not c.in_universe for c in self.conditions)
            self.verdicts("topic_judge", labelling, group[0].question, listed)
            universe = "x" * (options * (judging.LABEL_CHARS // 2 + 3))
            for record in group:
                self.verdicts("usefulness_judge", 1, record.profile_text(), record.question,
                              universe)
