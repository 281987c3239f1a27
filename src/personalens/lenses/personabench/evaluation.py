"""Running a PersonaBench evaluation: retrieve per person, answer per question, record each."""

import asyncio
from dataclasses import dataclass

from personalens.lenses.personabench.answering import (
    ANSWER_PARAMS,
    answer_messages,
    prompt_digest,
)
from personalens.lenses.personabench.records import (
    AnswerScores,
    PersonabenchRecord,
    RetrievalScores,
    TokenUsage,
)
from personalens.lenses.personabench.scoring import (
    category,
    outdated_recall,
    score_answer,
    score_retrieval,
)
from personalens.models import ChatModel, Message, ModelCallFailed
from personalens.population.release_reader import Community, Question
from personalens.retrieval import Document, Retriever
from personalens.retrieval.distributed import search_by_name, searches_remotely
from personalens.runs.blocking import run_blocking
from personalens.runs.executor import Executor, LocalExecutor

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
    """Retrieval per person (once per person, index and condition), then an answer per question.

    Retrieval blocks (encoding, a reranker's model calls), so it runs off the event loop; the
    questions of one person share one index and one batched search.
    """

    def __init__(self, retrievers: dict[str, Retriever | None], k: int,
                 model: ChatModel | None, executor: Executor | None = None):
        self.retrievers = retrievers
        self.executor = executor or LocalExecutor()
        self.k = k
        self.model = model
        self._retrieved: dict[tuple, asyncio.Task] = {}
        self._groups: dict[tuple, list[Item]] = {}

    def group(self, items: list[Item]) -> None:
        """Remember which items share a person's index, so one search serves all of them."""
        self._groups = {}
        for item in items:
            self._groups.setdefault(_group_key(item), []).append(item)

    async def record(self, item: Item) -> PersonabenchRecord:
        """The item's record; RecordedFailure (with the retrieval scores) if answering fails
        for good."""
        key = _group_key(item)
        if key not in self._retrieved:
            self._retrieved[key] = asyncio.ensure_future(self._retrieve_group(key))
        ids = (await self._retrieved[key])[item.key]
        level = item.community.levels[item.noise]
        by_id = {s.segment_id: s for s in level.sessions[item.person]}
        record = _retrieval_record(item, ids, level.ground_truth[item.question.q_id])
        if self.model is None:
            return record
        # The prompt is k session texts: the record keeps its digest, and the report rebuilds
        # it from the retrieved ids and the data (checked against the digest).
        messages = answer_messages(item.question.question, [by_id[i].text for i in ids])
        record.prompt_sha256 = prompt_digest(messages)
        try:
            answer = await self._answer(item.question, messages)
        except ModelCallFailed as exc:
            raise exc.with_data(record.fields()) from exc
        return PersonabenchRecord(**record.model_dump(exclude_unset=True), **answer)

    async def _retrieve_group(self, key: tuple) -> dict[str, list[str]]:
        group = self._groups[key]
        first = group[0]
        level = first.community.levels[first.noise]
        if first.retriever == GT_CONTEXT:
            return {item.key: gt_context_ids(level.ground_truth[item.question.q_id], self.k)
                    for item in group}
        sessions = level.sessions[first.person]
        retriever = self.retrievers[first.retriever]
        queries = [item.question.question for item in group]
        if self.executor.distributed and searches_remotely(first.retriever):
            ids = await self.executor.call(search_by_name, first.retriever,
                                           [(s.segment_id, s.text) for s in sessions], queries,
                                           self.k)
        else:
            def search() -> list[list[str]]:
                index = retriever.index([Document(s.segment_id, s.text) for s in sessions])
                return index.search(queries, self.k).ids
            ids = await run_blocking(search)
        return {item.key: found for item, found in zip(group, ids, strict=True)}

    async def _answer(self, q: Question, messages: list[Message]) -> dict:
        completion = await self.model.complete(messages, **ANSWER_PARAMS)
        scores = score_answer(q.answer, completion.text)
        out = {
            "prediction": completion.text,
            "end_to_end": AnswerScores(precision=scores.precision, recall=scores.recall,
                                       f1=scores.f1),
            "usage": TokenUsage(prompt_tokens=completion.usage.prompt_tokens,
                                completion_tokens=completion.usage.completion_tokens),
            "cached": completion.cached,
        }
        if q.outdated_value is not None:
            out["outdated_recall"] = outdated_recall(q.outdated_value, completion.text,
                                                     q.answer)
        return out

    async def aclose(self) -> None:
        """Close the answering model and every retriever (a reranker holds a model)."""
        for retriever in self.retrievers.values():
            if retriever is not None:
                await run_blocking(retriever.close)
        if self.model is not None:
            await self.model.aclose()


def _group_key(item: Item) -> tuple:
    return (item.retriever, item.community.name, item.noise, item.person)


def _retrieval_record(item: Item, ids: list[str],
                      alternatives: dict[str, list[str]]) -> PersonabenchRecord:
    q = item.question
    retrieval = score_retrieval(ids, alternatives)
    return PersonabenchRecord(
        community=item.community.name, noise=item.noise, retriever=item.retriever,
        person=item.person, q_id=q.q_id, question=q.question, type=q.type,
        difficulty=q.difficulty, category=category(q.type, q.difficulty),
        answer=q.answer, outdated_value=q.outdated_value,
        ground_truth=alternatives, retrieved_ids=ids,
        retrieval=RetrievalScores(recall=retrieval.recall, ndcg=retrieval.ndcg))
