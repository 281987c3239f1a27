"""Running a PersonaBench evaluation: retrieve per person, answer per question, record each."""

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from personalens.lenses.personabench.answering import answer
from personalens.lenses.personabench.scoring import (
    category,
    outdated_recall,
    score_answer,
    score_retrieval,
)
from personalens.models import ChatModel, ModelCallFailed
from personalens.population.release_reader import Community, Question, Session
from personalens.retrieval import Document, Retriever
from personalens.runs import RunDirectory

GT_CONTEXT = "gt-context"


@dataclass(frozen=True)
class Item:
    """One scored question under one (retriever, noise) condition."""

    community: Community
    noise: str
    retriever: str
    person: str
    question: Question

    @property
    def key(self) -> str:
        return "/".join((self.community.name, self.noise, self.retriever, self.question.q_id))


def plan(communities: list[Community], noises: list[str], retrievers: list[str]) -> list[Item]:
    """Every item of the run in a stable order; Subjective questions are not scored, so skipped."""
    return [
        Item(community, noise, retriever, person, question)
        for retriever in retrievers
        for community in communities
        for noise in noises
        for person in community.people(noise)
        for question in community.questions[person]
        if category(question.type, question.difficulty) is not None
    ]


def gt_context_ids(alternatives: dict[str, list[str]], k: int) -> list[str]:
    """The release's ground-truth context: each item's first session, repeated cyclically to k.

    Questions with more answer items than k get all of their first sessions (the release raises).
    """
    firsts = [ids[0] for ids in alternatives.values()]
    return firsts if len(firsts) >= k else [firsts[i % len(firsts)] for i in range(k)]


class Evaluation:
    def __init__(self, run: RunDirectory, retrievers: dict[str, Retriever | None], k: int,
                 model: ChatModel | None, on_record: Callable[[dict], None] = lambda r: None):
        self.run = run
        self.retrievers = retrievers
        self.k = k
        self.model = model
        self.on_record = on_record

    async def run_items(self, items: list[Item]) -> None:
        """Evaluate `items` (already filtered to those not done), grouped per person's index."""
        groups: dict[tuple, list[Item]] = {}
        for item in items:
            groups.setdefault((item.retriever, item.community.name, item.noise, item.person),
                              []).append(item)
        try:
            for group in groups.values():
                await self._run_group(group)
        finally:
            if self.model is not None:
                await self.model.aclose()

    async def _run_group(self, group: list[Item]) -> None:
        first = group[0]
        level = first.community.levels[first.noise]
        sessions = level.sessions[first.person]
        by_id = {s.segment_id: s for s in sessions}
        retrieved = self._retrieve(first.retriever, sessions, group, level.ground_truth)
        # Run the person's questions concurrently; the model's limiter bounds real parallelism.
        await asyncio.gather(*(
            self._finish(item, ids, [by_id[i].text for i in ids], level.ground_truth)
            for item, ids in zip(group, retrieved, strict=True)
        ))

    def _retrieve(self, name: str, sessions: list[Session], group: list[Item],
                  truth: dict[str, dict[str, list[str]]]) -> list[list[str]]:
        if name == GT_CONTEXT:
            return [gt_context_ids(truth[item.question.q_id], self.k) for item in group]
        index = self.retrievers[name].index([Document(s.segment_id, s.text) for s in sessions])
        return index.search([item.question.question for item in group], self.k).ids

    async def _finish(self, item: Item, ids: list[str], chunks: list[str],
                      truth: dict[str, dict[str, list[str]]]) -> None:
        q = item.question
        alternatives = truth[q.q_id]
        retrieval = score_retrieval(ids, alternatives)
        record = {
            "key": item.key, "status": "ok", "community": item.community.name,
            "noise": item.noise, "retriever": item.retriever, "person": item.person,
            "q_id": q.q_id, "question": q.question, "type": q.type, "difficulty": q.difficulty,
            "category": category(q.type, q.difficulty), "answer": q.answer,
            "outdated_value": q.outdated_value, "ground_truth": alternatives,
            "retrieved_ids": ids, "retrieval": {"recall": retrieval.recall,
                                                "ndcg": retrieval.ndcg},
        }
        if self.model is not None:
            record.update(await self._answer(q, chunks))
        self.run.append(record)
        self.on_record(record)

    async def _answer(self, q: Question, chunks: list[str]) -> dict:
        try:
            completion = await answer(self.model, q.question, chunks)
        except ModelCallFailed as exc:
            return {"status": "failed", "error": {"kind": exc.kind, "message": str(exc),
                                                  "attempts": exc.attempts}}
        scores = score_answer(q.answer, completion.text)
        out = {
            "prediction": completion.text,
            "end_to_end": {"precision": scores.precision, "recall": scores.recall,
                           "f1": scores.f1},
            "usage": {"prompt_tokens": completion.usage.prompt_tokens,
                      "completion_tokens": completion.usage.completion_tokens},
            "cached": completion.cached,
        }
        if q.outdated_value is not None:
            out["outdated_recall"] = outdated_recall(q.outdated_value, completion.text,
                                                     q.answer)
        return out
