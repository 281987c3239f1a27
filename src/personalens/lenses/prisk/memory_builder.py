"""The memory of a PRISK record: attribute conversations, and a decoy checked for orthogonality.

Attribute conversations: one short user/assistant conversation per persona attribute, consistent
with the whole profile, in which that attribute comes up (focal_attribute = its name).

Decoy: per record, one conversation close to the query's topic that does not answer it. This is
the paper's orthogonality constraint: memory that is worth retrieving but holds no shortcut to
the answer, so retrieval difficulty is not confounded with reasoning. Both halves are checked,
not only asked for: a judge's structured verdict (does the conversation answer the query or
contain its answer? it must not; a judge that says it does must quote the words that do, and
a quote that is not in the conversation does not uphold the claim) and a similarity cap
(embedding cosine between decoy and query at most `--decoy-max-similarity`). A failing draft is
regenerated, told why; every attempt is a step (`decoy/<record>/<attempt>`), and a decoy that
never passes fails its record (final: a rerun replays the same recorded attempts).
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pydantic

from personalens.lenses.prisk.options import BuildOptions
from personalens.lenses.prisk.output_formats import (
    ask_structured,
    chat,
    exchanges_schema,
    obj,
    repaired_turns,
    string,
)
from personalens.lenses.prisk.profile_source import describe
from personalens.lenses.prisk.records import RELEASE_NAMES, turns_text
from personalens.models import ChatModel
from personalens.runs import RecordedFailure, StepStore

Encode = Callable[[list[str]], Awaitable[np.ndarray]]


_WRITER = ("You write realistic past conversations between a user and an AI assistant. Reply "
           "with JSON only.")


class Turn(pydantic.BaseModel):
    role: Literal["user", "assistant"]
    content: str = pydantic.Field(min_length=1, max_length=2000)


class ConversationDraft(pydantic.BaseModel):
    turns: list[Turn] = pydantic.Field(min_length=2, max_length=10)

    @pydantic.model_validator(mode="before")
    @classmethod
    def _repair(cls, data: object) -> object:
        # Before asking again: what a deterministic repair fixes is not worth another call.
        return repaired_turns(data)

    @pydantic.field_validator("turns")
    @classmethod
    def _alternating(cls, turns: list[Turn]) -> list[Turn]:
        if [t.role for t in turns] != ["user", "assistant"] * (len(turns) // 2) + \
                ["user"] * (len(turns) % 2):
            raise ValueError("turns must alternate user, assistant, ... starting with the user")
        return turns

    def as_turns(self) -> list[dict]:
        return [{"role": t.role, "content": t.content.strip()} for t in self.turns]


class DecoyVerdict(pydantic.BaseModel):
    answers_query: bool
    reason: str = pydantic.Field(max_length=500)
    # The words of the conversation that answer the query ("" when none do): a judge that says
    # the decoy answers must point at where, and the quote must be in the conversation.
    evidence: str = pydantic.Field(default="", max_length=500)


def _tight_verdict() -> dict:
    # The reason first: a small model decides better after saying why.
    return obj({"reason": string(160), "answers_query": {"type": "boolean"},
                "evidence": string(200, 0)})


def quoted(evidence: str, text: str) -> bool:
    """Whether `evidence` (at least a few words) appears in `text`, ignoring case, spacing and
    the quotes and punctuation around it."""
    def norm(value: str) -> str:
        return " ".join(value.lower().split())
    quote = norm(evidence).strip(" \"'.,;:!?…")
    return len(quote) >= 8 and quote in norm(text)


async def attribute_conversation(model: ChatModel, persona: dict[str, str], attribute: str, *,
                                 turns: int, temperature: float, seed: int) -> dict:
    """{focal_attribute, turns}: a past conversation in which `attribute` comes up."""
    draft, _ = await ask_structured(model, chat(
        _WRITER, f"The user:\n{describe(persona)}\n\nWrite a short past conversation of {turns} "
        "turns (user first, alternating) in which the user asks the assistant for help with "
        f"something in their life where their {attribute.replace('_', ' ')} "
        f"({persona[attribute]}) matters, and it comes up naturally. Keep it consistent with "
        "the whole profile."), ConversationDraft, lambda: exchanges_schema(turns), 900,
        regenerations=2, temperature=temperature, seed=seed)
    return {"focal_attribute": attribute, "turns": draft.as_turns()[:turns]}


@dataclass(frozen=True)
class DecoyTarget:
    """What a decoy must stay close to without answering."""

    record_id: str
    risk: str
    persona: dict[str, str]
    question: str  # what retrieval searches with; the similarity is measured against it
    shown_question: str  # the question as the user sees it (with a choice question's options)
    answer: str = ""  # a gold answer the judge looks for, when there is one


async def build_decoy(generator: ChatModel, judge: ChatModel, encode: Encode, steps: StepStore,
                      target: DecoyTarget, options: BuildOptions) -> dict:
    """{conversation, drafts, rejections, similarity}; RecordedFailure("decoy_rejected") with
    the same summary as data when no draft passes within `options.decoy_attempts`
    regenerations."""
    attempts: list[dict] = []
    for attempt in range(options.decoy_attempts + 1):
        previous = attempts[-1]["reason"] if attempts else ""
        checked = await steps.get(
            f"decoy/{target.record_id}/{attempt}",
            lambda a=attempt, p=previous: _checked_draft(generator, judge, encode, target,
                                                         options, a, p))
        attempts.append(checked)
        if checked["passed"]:
            # The decoy's focal attribute is the risk, as the release's target_risk names it.
            return {"conversation": {"focal_attribute": RELEASE_NAMES[target.risk],
                                     "turns": checked["turns"]}, **_summary(attempts)}
    summary = _summary(attempts)
    reasons = "; ".join(f"{r['check']}: {r['reason']}" for r in summary["rejections"])
    raise RecordedFailure("decoy_rejected", f"no decoy passed the orthogonality checks in "
                                            f"{len(attempts)} draft(s): {reasons}",
                          len(attempts), data={"risk": target.risk, "decoy": summary},
                          final=True)  # every draft and check is a recorded step a rerun replays


def _summary(attempts: list[dict]) -> dict:
    return {"drafts": len(attempts), "similarity": attempts[-1]["similarity"],
            "rejections": [{"attempt": i, "check": a["check"], "similarity": a["similarity"],
                            "reason": a["reason"]} for i, a in enumerate(attempts)
                           if not a["passed"]]}


async def _checked_draft(generator: ChatModel, judge: ChatModel, encode: Encode,
                         target: DecoyTarget, options: BuildOptions, attempt: int,
                         rejected_because: str) -> dict:
    draft, _ = await ask_structured(
        generator, _decoy_messages(target, options.turns, rejected_because), ConversationDraft,
        lambda: exchanges_schema(options.turns), 900, regenerations=2,
        temperature=options.temperature, seed=options.seed * 1000 + attempt)
    turns = draft.as_turns()[:options.turns]
    text = turns_text(turns)
    vectors = await encode([text, target.question])
    similarity = round(float(_cosine(vectors[0], vectors[1])), 6)
    result = {"turns": turns, "similarity": similarity, "answers_query": None}
    if similarity > options.decoy_max_similarity:
        return {**result, "passed": False, "check": "similarity",
                "reason": f"cosine {similarity:.3f} to the query is above the cap "
                          f"{options.decoy_max_similarity:g}"}
    verdict, _ = await ask_structured(judge, _judge_messages(target, text), DecoyVerdict,
                                      _tight_verdict, 300, regenerations=2, temperature=0.0,
                                      seed=attempt)
    judged = {"answers_query": verdict.answers_query, "evidence": verdict.evidence,
              "reason": verdict.reason, "evidence_found": quoted(verdict.evidence, text)}
    if verdict.answers_query and judged["evidence_found"]:
        return {**result, "answers_query": True, "judge": judged, "passed": False,
                "check": "judge", "reason": f"the judge found the answer in it: "
                                            f"\"{verdict.evidence}\" ({verdict.reason})"}
    # A claim that it answers, without words of the conversation that do, is not upheld.
    return {**result, "answers_query": False, "judge": judged, "passed": True, "check": None,
            "reason": ""}


def _decoy_messages(target: DecoyTarget, turns: int, rejected_because: str) -> list[dict]:
    retry = (f"\n\nA previous draft was rejected: {rejected_because}. Move further away from "
             "the question itself.") if rejected_because else ""
    return chat(_WRITER, f"The user:\n{describe(target.persona)}\n\nA question this user will "
                         f"ask later:\n\"{target.shown_question}\"\n\nWrite an earlier "
                         f"conversation of {turns} turns (user first, alternating) on a topic "
                         "close to that question: the same subject area, related words and "
                         "ideas. It must NOT answer the question: no definition, fact, number, "
                         "option, verdict or recommendation that answers it may appear, and the "
                         f"question itself is never asked or discussed.{retry}")


def _judge_messages(target: DecoyTarget, text: str) -> list[dict]:
    gold = f"\n(Its correct answer: {target.answer})" if target.answer else ""
    return chat("You check test data for a study of personalised assistants. Reply with JSON "
                'only: {"answers_query": true|false, "reason": "...", "evidence": "..."}, where '
                "evidence copies the words of the conversation that answer the question (empty "
                "when none do).",
                f"Question:\n\"{target.shown_question}\"{gold}\n\nConversation:\n{text}\n\n"
                "Does this conversation answer the question, or contain information from which "
                "its answer can be read off (a definition, fact, number, option, verdict or "
                "recommendation that answers it)?")


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / max(np.linalg.norm(a) * np.linalg.norm(b), 1e-12))
