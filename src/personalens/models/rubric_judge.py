"""A rubric judge: one call scores one response on one criterion, 1-5, with a justification.

Strict (the default): the reply must hold a JSON object whose `score` is an integer in 1-5.
Anything else is asked again (a fresh sample, never the cached invalid reply); still invalid,
the verdict is *excluded* (score None) and the caller renormalises over the rest. A verdict is
never given a default score.

`release` reproduces PrefDisco's released scorer for like-for-like comparisons: a missing score
counts as 1, numeric strings are coerced, a boolean counts as 1 (true) or 0 (false), any number
is used as it is (a 7 stays 7), and a reply with no JSON at all (or a score that is neither a
number nor a boolean) raises `UnparseableVerdict`, which drops the whole instance there.
"""

import json
import re
from dataclasses import dataclass, field
from typing import Literal

from personalens.models.chat_model import ChatModel
from personalens.models.completion import Message
from personalens.runs.failures import RecordedFailure

ScoringMode = Literal["strict", "release"]
# "a" is the wording every run uses; "b" says the same in other words, so the judge audit can
# see whether a judge's scores depend on how the rubric is phrased (docs/judges.md).
Wording = Literal["a", "b"]
SCALE = (1, 5)

_SYSTEM = {
    "a": ("You grade one response against one rubric criterion. Reply with a JSON object only: "
          '{"score": <integer 1-5>, "justification": "<one or two sentences>"}.'),
    "b": ("Your task is to rate a single answer on a single rubric dimension. Answer with nothing "
          'but a JSON object: {"score": <whole number from 1 to 5>, "justification": '
          '"<a sentence or two>"}.'),
}
_LABELS = {  # criterion, measures, levels, preference, reason, material, response, instruction
    "a": ("Criterion", "What it measures", "Levels", "This user's preference",
          "Why it matters to them", "Material for grading", "Response to grade",
          "Compare the response with each level, pick the level it reaches, and reply with the "
          "JSON object only."),
    "b": ("Rubric dimension", "What is assessed", "Anchored scores", "What this user prefers",
          "The user's reason", "Context for the rating", "Answer to rate",
          "Read the answer, decide which anchored score it reaches, and answer with the JSON "
          "object alone."),
}

# A judge that decodes under the schema (a local model) gets its justification bounded: left
# unbounded, a small model repeats a sentence until max_tokens cuts the JSON off, and at a fixed
# seed every attempt alike. 240 characters close well within the 400-token default. An API
# judge is asked with the unbounded schema, as before (same request, same cache key).
JUSTIFICATION_CHARS = 240
# Every judge call's token budget (the release's evaluator allows 4096 with high reasoning
# effort): a verdict is a short JSON object.
MAX_TOKENS = 400


def _verdict_schema(justification: dict) -> dict:
    return {"type": "json_schema", "json_schema": {"name": "RubricVerdict", "schema": {
        "type": "object",
        "properties": {"score": {"type": "integer", "minimum": 1, "maximum": 5},
                       "justification": justification},
        "required": ["score", "justification"]}}}


_VERDICT_SCHEMA = _verdict_schema({"type": "string"})
_BOUNDED_VERDICT_SCHEMA = _verdict_schema({"type": "string", "maxLength": JUSTIFICATION_CHARS})


@dataclass(frozen=True)
class RubricCriterion:
    """What the judge sees besides the response: the criterion, its anchored levels, and the
    user's value for it (with the reason, when known)."""

    name: str
    description: str
    levels: list[dict] = field(default_factory=list)  # [{score, description}]
    value: str | None = None
    context: str | None = None
    material: str | None = None  # what the grade depends on besides the response (a query, a
    # reference answer, the personal context the model was given)


@dataclass(frozen=True)
class Verdict:
    score: float | None  # None: excluded (strict mode, still invalid after every attempt)
    justification: str
    attempts: int
    raw: str  # the last reply, as the judge wrote it
    problem: str | None = None  # why the reply was invalid (strict) or was coerced (release)

    @property
    def valid(self) -> bool:
        return self.score is not None

    def as_record(self) -> dict:
        return {"score": self.score, "justification": self.justification,
                "attempts": self.attempts, "raw": self.raw, "problem": self.problem}


class UnparseableVerdict(RecordedFailure):
    """Release mode: a reply with no JSON object; the release drops the instance."""

    def __init__(self, criterion: str, raw: str):
        super().__init__("unparseable_verdict",
                         f"judge reply for {criterion!r} holds no JSON object: {raw[:120]!r}")


def judge_prompt(criterion: RubricCriterion, response: str, *, wording: Wording = "a",
                 swapped: bool = False) -> list[Message]:
    """The judge's request. `swapped` puts the response before the material (where the material
    holds a second text, such as framing's reference answer, the two texts change places)."""
    (name, measures, levels_label, preference, reason, material, graded,
     instruction) = _LABELS[wording]
    levels = "\n".join(f"- {level.get('score')}: {level.get('description', '')}"
                       for level in criterion.levels) or "- (no anchored levels given)"
    user = [f"{name}: {criterion.name}", f"{measures}: {criterion.description}",
            f"{levels_label}:\n{levels}"]
    if criterion.value is not None:
        user.append(f"{preference}: {criterion.value}")
    if criterion.context:
        user.append(f"{reason}: {criterion.context}")
    texts = [f"{graded}:\n<<<\n{response}\n>>>"]
    if criterion.material:
        texts.insert(len(texts) if swapped else 0, f"{material}:\n{criterion.material}")
    user += [*texts, instruction]
    return [{"role": "system", "content": _SYSTEM[wording]},
            {"role": "user", "content": "\n\n".join(user)}]


async def judge_criterion(model: ChatModel, criterion: RubricCriterion, response: str, *,
                          mode: ScoringMode = "strict", attempts: int = 3,
                          temperature: float = 0.0, seed: int = 0,
                          max_tokens: int = MAX_TOKENS, wording: Wording = "a",
                          swapped: bool = False) -> Verdict:
    """Score `response` on `criterion`. Model-call failures propagate as `ModelCallFailed`.
    `wording` and `swapped` are the judge audit's variants of the request (`judge_prompt`)."""
    messages = judge_prompt(criterion, response, wording=wording, swapped=swapped)
    schema = _BOUNDED_VERDICT_SCHEMA if model.constrains_output else _VERDICT_SCHEMA
    params = {"temperature": temperature, "response_format": schema, "max_tokens": max_tokens}
    if mode == "release":
        completion = await model.complete(messages, seed=seed, **params)
        return release_verdict(criterion.name, completion.text)
    problem, raw = "no attempt", ""
    for attempt in range(attempts):
        # A new seed per attempt: the same request would replay the same invalid reply.
        completion = await model.complete(messages, accept=lambda t: strict_verdict(t)[0] is not
                                          None, seed=seed + attempt, **params)
        raw = completion.text
        score, justification, problem = strict_verdict(raw)
        if score is not None:
            return Verdict(score, justification, attempt + 1, raw)
    model.ledger.failure(model.role, "invalid_verdict")
    return Verdict(None, "", attempts, raw, problem)


def strict_verdict(text: str) -> tuple[int | None, str, str | None]:
    """(score, justification, problem): score None with the problem when the reply is invalid."""
    verdict = json_object(text)
    if verdict is None:
        return None, "", "no JSON object"
    score = verdict.get("score")
    if "score" not in verdict:
        return None, "", "no score"
    if isinstance(score, bool) or not isinstance(score, int):
        return None, "", f"score {score!r} is not an integer"
    if not SCALE[0] <= score <= SCALE[1]:
        return None, "", f"score {score} is outside {SCALE[0]}-{SCALE[1]}"
    return score, str(verdict.get("justification", "")), None


def release_verdict(criterion: str, text: str) -> Verdict:
    """The released scorer's reading of a reply (see the module docstring)."""
    verdict = json_object(text)
    if verdict is None:
        raise UnparseableVerdict(criterion, text)
    score = verdict.get("score", 1)
    problem = None if "score" in verdict else "no score: counted as 1"
    if isinstance(score, str):
        try:
            score = float(score)
        except ValueError:
            raise UnparseableVerdict(criterion, text) from None
        problem = "numeric string coerced"
    if isinstance(score, bool):  # the release multiplies it by the weight: true is 1, false 0
        problem = f"boolean {json.dumps(score)} counted as {int(score)}"
    elif not isinstance(score, int | float):
        raise UnparseableVerdict(criterion, text)
    return Verdict(float(score), str(verdict.get("justification", "")), 1, text, problem)


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def json_object(text: str) -> dict | None:
    """The first JSON object in a reply (bare, fenced, or after some prose), else None."""
    fenced = _FENCE.search(text)
    candidates = [fenced.group(1)] if fenced else []
    candidates.append(text)
    decoder = json.JSONDecoder()
    for candidate in candidates:
        start = candidate.find("{")
        while start != -1:
            try:
                value, _ = decoder.raw_decode(candidate[start:])
            except json.JSONDecodeError:
                start = candidate.find("{", start + 1)
                continue
            if isinstance(value, dict):
                return value
            start = candidate.find("{", start + 1)
    return None
