"""The paper's step for benchmark questions: a GSM8K / MMLU / CommonsenseQA row rewritten as a
conversational question a user might ask their assistant, with its gold answer kept.

The generator rewrites the question text only (a choice question keeps its options and gold
letter as they were). A rewrite must keep every number of the original (a GSM8K problem that
loses one is a different problem); one that does not is drafted again with the problem named,
up to `attempts` times, and after that the record keeps the original wording: the build counts
it (`rewrites_kept_original`) instead of failing the record, as the paper's human check would
have sent the row back. Each draft is a step, so a rerun replays the same decisions.
"""

import re
from dataclasses import replace

import pydantic

from personalens.lenses.prisk.output_formats import ask_structured, chat, obj, string
from personalens.lenses.prisk.query_sources import Query
from personalens.models import ChatModel
from personalens.models.dialogue import Steps

QUESTION_CHARS = 600


class Rewrite(pydantic.BaseModel):
    question: str = pydantic.Field(min_length=10, max_length=QUESTION_CHARS)


def _numbers(text: str) -> list[str]:
    return re.findall(r"\d+(?:\.\d+)?", text.replace(",", ""))


def lost_numbers(original: str, rewritten: str) -> list[str]:
    """The numbers of `original` that `rewritten` no longer holds (each as often as it
    occurs)."""
    kept = _numbers(rewritten)
    lost = []
    for number in _numbers(original):
        if number in kept:
            kept.remove(number)
        else:
            lost.append(number)
    return lost


def _messages(query: Query, rejected_because: str) -> list:
    again = (f"\n\nAn earlier rewrite was rejected: {rejected_because}. Keep every number."
             if rejected_because else "")
    return chat(
        "You rewrite benchmark questions as messages a user types to their personal assistant. "
        "Reply with JSON only.",
        f"Benchmark question:\n\"{query.question}\"\n\nRewrite it as a natural, conversational "
        "message from a user asking their assistant, in the first person. Keep the same "
        "question, every number, name and fact needed to answer it, and nothing that changes "
        "the answer. Do not answer it and do not list answer options." + again)


async def _draft(generator: ChatModel, query: Query, attempt: int, rejected_because: str, *,
                 temperature: float, seed: int) -> dict:
    draft, _ = await ask_structured(
        generator, _messages(query, rejected_because), Rewrite,
        lambda: obj({"question": string(QUESTION_CHARS, 10)}), 400, regenerations=2,
        temperature=temperature, seed=seed * 1000 + attempt)
    lost = lost_numbers(query.question, draft.question)
    return {"question": draft.question.strip(),
            "problem": f"it drops the number(s) {', '.join(lost)}" if lost else None}


async def conversational(generator: ChatModel, steps: Steps, query: Query, *, attempts: int,
                         temperature: float, seed: int) -> tuple[Query, dict]:
    """(the query as asked, {original, drafts, kept}): the first draft that keeps every number,
    else the original (kept = "original")."""
    drafts: list[dict] = []
    for attempt in range(attempts):
        previous = drafts[-1]["problem"] if drafts else ""
        draft = await steps.get(
            f"rewrite/{query.query_id}/{attempt}",
            lambda a=attempt, p=previous: _draft(generator, query, a, p,
                                                 temperature=temperature, seed=seed))
        drafts.append(draft)
        if draft["problem"] is None:
            return (replace(query, question=draft["question"]),
                    {"original": query.question, "drafts": drafts, "kept": "rewrite"})
    return query, {"original": query.question, "drafts": drafts, "kept": "original"}
