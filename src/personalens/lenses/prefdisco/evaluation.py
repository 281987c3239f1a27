"""One (instance, condition): get the target's final answer, check it, and judge it per criterion.

Conditions: `baseline` (the problem alone), `oracle` (every preference given), `discovery` (a
conversation with the simulated user, at most `--turns` questions) and `fixed_<N>` (exactly N
questions). What is judged is the final answer with the protocol wrapper stripped.

A target that decodes under a grammar (local llama.cpp) answers under one: its final answer
ends with an `ANSWER:` line of the problem's shape, within `max_tokens`. A failed item's record
keeps what was produced before the failure (the conversation so far, the answer when judging
failed), and the failure is final when a rerun would ask the same deterministic model the same
thing.
"""

from dataclasses import dataclass

import pydantic

from personalens.lenses.prefdisco import protocol, turn_grammar
from personalens.lenses.prefdisco.answer_check import grade
from personalens.lenses.prefdisco.preference_reveal import revealed
from personalens.lenses.prefdisco.release_format import Instance
from personalens.lenses.prefdisco.scoring import (
    count_questions,
    prefalign_release,
    prefalign_strict,
)
from personalens.lenses.prefdisco.simulated_user import UserKind, user_instructions
from personalens.models import ChatModel, complete_structured, schema_bounded
from personalens.models.dialogue import SimulatedUser, Steps, run_dialogue
from personalens.models.rubric_judge import (
    RubricCriterion,
    ScoringMode,
    UnparseableVerdict,
    judge_criterion,
)
from personalens.runs import RecordedFailure
from personalens.runs.settled import gather_settled

SINGLE_TURN = ("baseline", "oracle")


@dataclass(frozen=True)
class Item:
    instance: Instance
    condition: str

    @property
    def key(self) -> str:
        return f"{self.instance.key}/{self.condition}"


@dataclass(frozen=True)
class Temperatures:
    target: float = 0.0
    user: float = 0.4
    judge: float = 0.0


@dataclass
class Roles:
    target: ChatModel
    user: ChatModel
    judges: list[ChatModel]


class OpenVerdict(pydantic.BaseModel):
    correct: bool
    justification: str = schema_bounded(300, default="")


def fixed_questions(condition: str) -> int | None:
    return int(condition.removeprefix("fixed_")) if condition.startswith("fixed_") else None


class Evaluation:
    def __init__(self, roles: Roles, *, turns: int, user_kind: UserKind, scoring: ScoringMode,
                 temperatures: Temperatures, attempts: int = 3, max_tokens: int = 1024):
        self.roles = roles
        self.max_tokens = max_tokens  # per target turn: a small local model may never stop
        self.turns = turns
        self.user_kind = user_kind
        self.scoring = scoring
        self.temperatures = temperatures
        self.attempts = attempts
        self.steps: Steps | None = None

    async def record(self, item: Item) -> dict:
        instance = item.instance
        try:
            answer = await self._answer(item)
        except RecordedFailure as exc:  # the failed record still says what it was
            raise exc.with_data({**self._base(item), **_conversation_so_far(exc.data)}) from exc
        try:
            criteria = await self._judge(instance, answer["response"])
        except UnparseableVerdict as exc:
            # The release drops the instance when a judge reply has no JSON: recorded, listed,
            # and left out of every condition (its pairing is gone).
            return {**self._base(item), **answer, "dropped": exc.failure.message,
                    "criteria": [], "prefalign": None}
        except RecordedFailure as exc:  # a judge call failed: the answer is kept
            raise exc.with_data({**self._base(item), **answer}) from exc
        prefalign = self._prefalign(criteria)
        if prefalign is None:
            raise RecordedFailure("no_valid_criterion", "the judge gave no valid verdict for "
                                  "any criterion", self.attempts,
                                  {**self._base(item), **answer, "criteria": criteria},
                                  final=all(j.deterministic for j in self.roles.judges))
        try:
            correctness = await self._correctness(instance, answer["response"])
        except RecordedFailure as exc:
            raise exc.with_data({**self._base(item), **answer, "criteria": criteria}) from exc
        return {**self._base(item), **answer, "criteria": criteria, "prefalign": prefalign,
                "correctness": correctness, "dropped": None,
                "flagged": any(c["score"] is None for c in criteria)}

    def _base(self, item: Item) -> dict:
        instance = item.instance
        return {"task": instance.task, "problem_id": instance.problem_id,
                "instance": instance.key, "condition": item.condition}

    async def _answer(self, item: Item) -> dict:
        instance, condition = item.instance, item.condition
        problem = instance.problem
        if condition in SINGLE_TURN:
            messages = (protocol.baseline_messages(problem) if condition == "baseline" else
                        protocol.oracle_messages(problem, instance.persona, instance.preferences))
            completion = await self.roles.target.complete(
                messages, grammar=protocol.answer_grammar(problem, self.max_tokens),
                temperature=self.temperatures.target, seed=0, max_tokens=self.max_tokens)
            response = protocol.strip_wrapper(completion.text)
            raw = {"raw": completion.text} if response != completion.text else {}
            return {"response": response, **raw, "transcript": [],
                    "questions": {"turns": 0, "questions": 0}, "revealed": []}
        fixed = fixed_questions(condition)
        user = SimulatedUser(self.roles.user, user_instructions(
            instance.persona, instance.preferences, self.user_kind),
            temperature=self.temperatures.user, attempts=self.attempts,
            grammar=turn_grammar.reply_grammar(turn_grammar.USER_REPLY_CHARS))
        dialogue = await run_dialogue(
            self.roles.target, protocol.discovery_messages(problem, fixed or self.turns,
                                                           fixed is not None),
            user, protocol.WireFormat(problem, self.max_tokens), questions=fixed or self.turns,
            exact=fixed is not None,
            temperature=self.temperatures.target, max_tokens=self.max_tokens,
            attempts=self.attempts, key=item.key,
            steps=self.steps)
        transcript = [{**turn, "revealed": revealed(turn["reply"], instance.preferences)}
                      if turn["action"] == "ask" else turn for turn in dialogue.turns]
        found = [name for name in instance.preferences
                 if any(name in t.get("revealed", []) for t in transcript)]
        return {"response": dialogue.final, "transcript": transcript,
                "questions": {"turns": len(dialogue.questions),
                              "questions": count_questions(dialogue.questions)},
                "revealed": found}

    async def _judge(self, instance: Instance, response: str) -> list[dict]:
        async def one(criterion) -> dict:
            preference = instance.preferences[criterion.preference]
            rubric = RubricCriterion(criterion.preference, criterion.description,
                                     criterion.levels, str(preference.get("value")),
                                     preference.get("justification"))
            verdicts = await gather_settled(*[
                judge_criterion(judge, rubric, response, mode=self.scoring,
                                attempts=self.attempts, temperature=self.temperatures.judge)
                for judge in self.roles.judges])
            valid = [v.score for v in verdicts if v.score is not None]
            return {**criterion.as_record(), "verdicts": [v.as_record() for v in verdicts],
                    "score": sum(valid) / len(valid) if valid else None}

        return await gather_settled(*[one(c) for c in instance.criteria])

    def _prefalign(self, criteria: list[dict]) -> float | None:
        if self.scoring == "release":
            return prefalign_release([(c["score"], c["weight"]) for c in criteria])
        return prefalign_strict([(c["score"], c["normalised_weight"]) for c in criteria])

    async def _correctness(self, instance: Instance, response: str) -> dict:
        problem = instance.problem
        if problem.kind != "open":
            return {**grade(response, problem.kind, problem.gold, problem.options).as_record(),
                    "judged": False}
        verdict, _ = await complete_structured(self.roles.judges[0], [
            {"role": "system", "content": "You check whether an answer reaches the reference "
                                          'answer. Reply with JSON {"correct": true|false, '
                                          '"justification": "..."}.'},
            {"role": "user", "content": f"Question:\n{problem.question}\n\nReference answer:\n"
                                        f"{problem.gold}\n\nAnswer to check:\n{response}"}],
            OpenVerdict, regenerations=self.attempts - 1, temperature=self.temperatures.judge)
        return {"correct": verdict.correct, "parsed": response[-200:], "unparsed": False,
                "judged": True, "justification": verdict.justification}

    async def aclose(self) -> None:
        for model in {id(m): m for m in [self.roles.target, self.roles.user,
                                          *self.roles.judges]}.values():
            await model.aclose()


def _conversation_so_far(data: dict) -> dict:
    """A failed dialogue's data as the record shows it: the accepted turns (with the user's
    replies) as `transcript`, the failing turn's rejected replies as `rejected`."""
    if "turns" not in data:
        return data
    rest = {k: v for k, v in data.items() if k != "turns"}
    return {**rest, "transcript": data["turns"]}
