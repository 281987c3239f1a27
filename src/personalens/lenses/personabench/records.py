"""A PersonaBench item's record: one question under one (retriever, noise) condition."""

from typing import Any

import pydantic

from personalens.runs import LensRecord


class RetrievalScores(pydantic.BaseModel):
    recall: float
    ndcg: float


class AnswerScores(pydantic.BaseModel):
    precision: float
    recall: float
    f1: float


class TokenUsage(pydantic.BaseModel):
    prompt_tokens: int
    completion_tokens: int


class PersonabenchRecord(LensRecord):
    """Retrieval fields always; answer fields when a model answered (a failed answer keeps the
    retrieval fields and the prompt's digest)."""

    schema_name = "personabench.eval"

    community: str
    noise: str
    retriever: str
    person: str
    q_id: str
    question: str
    type: str
    difficulty: str
    category: str
    answer: Any
    outdated_value: Any = None
    ground_truth: dict[str, list[str]]  # answer item -> its alternative session ids
    retrieved_ids: list[str]
    retrieval: RetrievalScores
    prompt_sha256: str | None = None  # the report rebuilds the prompt and checks it
    prediction: str | None = None
    end_to_end: AnswerScores | None = None
    usage: TokenUsage | None = None
    cached: bool | None = None
    outdated_recall: float | None = None  # only for questions whose value changed

    @property
    def answered(self) -> bool:
        return self.prediction is not None
