"""Two-stage retrieval: a first stage's top `depth` documents, reordered by a stronger model.

Two rerankers share one stage. The cross-encoder (`rerank-ce`) scores each (query, document)
pair. The LLM (`rerank-llm`) reads all candidates of a query at once and returns their order
(listwise, as RankGPT does), so a query costs one model call rather than `depth` calls.

A query whose LLM call fails after the models layer's retries keeps the first stage's order,
with NaN scores and its error in `Ranking.errors`, so callers record it as failed rather than
score a ranking the reranker never produced.
"""

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from typing import Annotated, Protocol

import numpy as np
import pydantic

from personalens.errors import InputError
from personalens.models.chat_model import ChatModel
from personalens.models.completion import Message
from personalens.models.failures import ModelCallFailed
from personalens.models.structured import complete_structured
from personalens.retrieval.bm25 import BM25Retriever
from personalens.retrieval.model_source import load_model_once, resolve_model_source
from personalens.retrieval.ranking import Document, Index, Ranking, Retriever
from personalens.runs.blocking import call_on_loop, on_worker

MS_MARCO_CROSS_ENCODER = "cross-encoder/ms-marco-MiniLM-L-6-v2"
DEPTH = 25


@dataclass(frozen=True)
class Rescored:
    """A reranker's verdict on one query: a score per candidate (first-stage order), or why not."""

    scores: np.ndarray | None
    error: str | None = None


class Reranker(Protocol):
    name: str

    def rescore(self, queries: list[str], candidates: list[list[str]]) -> list[Rescored]: ...


class RerankRetriever:
    """`first_stage` (BM25 by default) retrieves `depth` candidates; `reranker` reorders them."""

    def __init__(self, reranker: Reranker, *, first_stage: Retriever | None = None,
                 depth: int = DEPTH, name: str | None = None):
        if depth < 1:
            raise InputError(f"rerank depth must be at least 1 (got {depth})")
        self.reranker = reranker
        self.first_stage = first_stage if first_stage is not None else BM25Retriever()
        self.depth = depth
        self.name = name or reranker.name

    def index(self, docs: list[Document]) -> "RerankIndex":
        return RerankIndex(self, docs)

    def close(self) -> None:
        """Release the reranker's model (the cross-encoder holds nothing to release)."""
        if hasattr(self.reranker, "close"):
            self.reranker.close()


class RerankIndex:
    def __init__(self, retriever: RerankRetriever, docs: list[Document]):
        self.retriever = retriever
        self.first: Index = retriever.first_stage.index(docs)
        self.text_of = {d.id: d.text for d in docs}

    def search(self, queries: list[str], k: int) -> Ranking:
        """Top k per query, the first `depth` of them in the reranker's order.

        When k > depth, the first stage's order continues below `depth` with NaN scores:
        those documents were never reranked.
        """
        depth = self.retriever.depth
        first = self.first.search(queries, max(k, depth))
        candidates = [[self.text_of[i] for i in ids[:depth]] for ids in first.ids]
        verdicts = self.retriever.reranker.rescore(queries, candidates)
        rows = [_reordered(ids, depth, verdict, k)
                for ids, verdict in zip(first.ids, verdicts, strict=True)]
        errors = [verdict.error for verdict in verdicts]
        width = min(k, len(self.text_of))
        return Ranking(ids=[ids for ids, _ in rows],
                       scores=np.array([s for _, s in rows], dtype=np.float64).reshape(-1, width),
                       errors=errors if any(e is not None for e in errors) else None)


def _reordered(ids: list[str], depth: int, verdict: Rescored,
               k: int) -> tuple[list[str], list[float]]:
    head, tail = ids[:depth], ids[depth:]
    if verdict.scores is None:
        return ids[:k], [float("nan")] * len(ids[:k])
    order = np.argsort(-verdict.scores, kind="stable")  # ties keep the first stage's order
    ranked = [head[j] for j in order] + tail
    scores = [float(verdict.scores[j]) for j in order] + [float("nan")] * len(tail)
    return ranked[:k], scores[:k]


class CrossEncoderReranker:
    """`rerank-ce` or `rerank-ce:<model name or path>`: a sentence-transformers CrossEncoder."""

    def __init__(self, model: str = MS_MARCO_CROSS_ENCODER, *, name: str | None = None,
                 batch_size: int = 32):
        self.name = name or f"rerank-ce:{model}"
        self.source, self.identity = resolve_model_source(model, self.name)
        self.batch_size = batch_size
        self._model = None

    def load(self):
        """The CrossEncoder (loaded once); InputError if it cannot load."""
        if self._model is None:
            from sentence_transformers import CrossEncoder

            self._model = load_model_once(lambda: CrossEncoder(self.source, device="cpu"),
                                          self.name, "CrossEncoder")
        return self._model

    def rescore(self, queries: list[str], candidates: list[list[str]]) -> list[Rescored]:
        # Every pair of every query in one predict call, so batches stay full across queries.
        pairs = [(q, text) for q, texts in zip(queries, candidates, strict=True) for text in texts]
        flat = np.zeros(0)
        if pairs:
            flat = np.asarray(self.load().predict(pairs, batch_size=self.batch_size,
                                                  show_progress_bar=False), dtype=np.float64)
        if flat.ndim != 1:
            raise InputError(f"retriever {self.name!r}: the cross-encoder gives {flat.shape[1]} "
                             "scores per pair; reranking needs a single relevance score")
        bounds = np.cumsum([0] + [len(texts) for texts in candidates])
        return [Rescored(flat[a:b]) for a, b in pairwise(bounds)]


_SYSTEM = ("You are the ranking stage of a search engine. You order candidate documents by how "
           "well each one satisfies the user's search query.")


def ranking_prompt(query: str, texts: list[str], max_chars: int) -> list[Message]:
    """The listwise request: the query, numbered candidates, and the JSON reply it expects."""
    listed = "\n".join(f"[{n}] {_clipped(text, max_chars)}" for n, text in enumerate(texts, 1))
    return [
        {"role": "system", "content": _SYSTEM},
        {"role": "user", "content": (
            f"Search query: {query}\n\nCandidates:\n{listed}\n\n"
            f"Order all {len(texts)} candidates from most to least relevant to the search "
            'query. Reply with only a JSON object {"ranking": [candidate numbers, most '
            f'relevant first]}} that lists each number from 1 to {len(texts)} once.')},
    ]


def _clipped(text: str, max_chars: int) -> str:
    """One line of at most max_chars: long documents would crowd the others out of context."""
    flat = re.sub(r"\s+", " ", text).strip()
    return flat if len(flat) <= max_chars else flat[:max_chars - 1].rstrip() + "…"


@cache
def order_schema(n: int) -> type[pydantic.BaseModel]:
    """The reply schema for n candidates: numbers 1..n, at most n of them.

    The bounds go into the JSON schema too, so grammar-constrained servers (llama.cpp, vLLM)
    cannot produce a number that names no candidate.
    """
    number = Annotated[int, pydantic.Field(ge=1, le=n)]
    return pydantic.create_model(
        "CandidateOrder",
        ranking=(list[number], pydantic.Field(min_length=1, max_length=n)),
    )


def order_scores(ranking: list[int], n: int) -> np.ndarray:
    """Scores n..1 from the model's order (1-based numbers).

    Repeats count once; candidates the model left out follow in first-stage order. Small models
    often stop early, and this keeps their partial order rather than discarding it.
    """
    stated = list(dict.fromkeys(ranking))
    seen = set(stated)
    order = stated + [j for j in range(1, n + 1) if j not in seen]
    scores = np.empty(n)
    scores[[j - 1 for j in order]] = np.arange(n, 0, -1, dtype=np.float64)
    return scores


class LLMReranker:
    """`rerank-llm` or `rerank-llm:<model spec>`: listwise reranking by a chat model.

    Calls go through the models layer (response cache, retries, the endpoint's concurrency
    limit); all queries of a search are in flight together and that limit bounds them.

    Inside a run, `search` runs on the harness's blocking worker (runs.blocking), and the model
    calls go back to the run's own event loop. Called synchronously outside a run (a script),
    the reranker runs them on an event loop of its own, created on first use.
    `make_model` is called once, here: a spec that cannot load raises its InputError before
    any run starts.
    """

    def __init__(self, make_model: Callable[[], ChatModel], *, name: str | None = None,
                 max_chars: int = 300, regenerations: int = 1):
        self.model = make_model()
        self.name = name or f"rerank-llm:{self.model.spec}"
        self.max_chars = max_chars
        self.regenerations = regenerations
        self._runner: asyncio.Runner | None = None  # only for use outside a run

    def rescore(self, queries: list[str], candidates: list[list[str]]) -> list[Rescored]:
        def rescore_all():
            return self._rescore_all(queries, candidates)
        if on_worker():
            return call_on_loop(rescore_all)
        if self._runner is None:
            self._runner = asyncio.Runner()
        return self._runner.run(rescore_all())

    async def _rescore_all(self, queries: list[str],
                           candidates: list[list[str]]) -> list[Rescored]:
        # A TaskGroup, not gather: if one query hits a bug, the others are cancelled with it.
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(self._rescore_one(q, texts))
                     for q, texts in zip(queries, candidates, strict=True)]
        return [task.result() for task in tasks]

    async def _rescore_one(self, query: str, texts: list[str]) -> Rescored:
        if len(texts) < 2:  # nothing to order, so nothing to ask
            return Rescored(np.ones(len(texts)))
        try:
            reply, _ = await complete_structured(
                self.model, ranking_prompt(query, texts, self.max_chars), order_schema(len(texts)),
                regenerations=self.regenerations, temperature=0.0,
                max_tokens=48 + 8 * len(texts))  # pretty-printed JSON: ~4-6 tokens a number
        except ModelCallFailed as exc:
            return Rescored(None, f"rerank failed: {exc}")
        return Rescored(order_scores(reply.ranking, len(texts)))

    def close(self) -> None:
        """Close the model's connections: on the run's loop inside a run, else on our own."""
        if on_worker():
            call_on_loop(self.model.aclose)
            return
        if self._runner is None:
            self._runner = asyncio.Runner()
        self._runner.run(self.model.aclose())
        self._runner.close()
        self._runner = None


def rerank_call_estimate(query: str, candidates: int, mean_chars: float,
                         max_chars: int = 300) -> tuple[int, int, int]:
    """What `rerank-llm` asks for one query over `candidates` documents of `mean_chars` on
    average: (calls, prompt characters, completion token cap), as a dry run counts them."""
    depth = min(candidates, DEPTH)
    if depth < 2:  # nothing to order, so nothing to ask (as `_rescore_one`)
        return 0, 0, 0
    prompt = len(query) + 400 + depth * (min(mean_chars, max_chars) + 8)
    return 1, int(prompt), 48 + 8 * depth
