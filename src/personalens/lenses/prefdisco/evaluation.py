"""One (instance, condition): get the target's final answer, check it, and judge it per criterion.

Conditions: `baseline` (the problem alone), `oracle` (every preference given), `discovery` (a
conversation with the simulated user, at most `--turns` questions) and `fixed_<N>` (exactly N
questions). Under `--protocol release` (the default) a dialogue is followed by a separate final
prompt, and that answer is the one scored; under `--protocol personalens` the answer the target
gives in the dialogue is. What is judged is the scored answer with the protocol wrapper
stripped; its finish reason is recorded (a reply cut off at the token limit is "length").

A target that decodes under a grammar (local llama.cpp) answers under one: its final answer
ends with an `ANSWER:` line of the problem's shape, within the grammar's bound. A local
target's max_tokens is capped to leave room for the prompt (`reply_budget`). A failed item's
record keeps what was produced before the failure (the conversation so far, the answer when
judging failed), and the failure is final when a rerun would ask the same deterministic model
the same thing.
"""

from dataclasses import asdict, dataclass

import pydantic

from personalens.lenses.prefdisco import protocol, release_protocol, scoring, turn_grammar
from personalens.lenses.prefdisco.answer_check import grade
from personalens.lenses.prefdisco.options import EvalOptions
from personalens.lenses.prefdisco.preference_reveal import revealed
from personalens.lenses.prefdisco.problems import Problem
from personalens.lenses.prefdisco.records import PrefdiscoRecord
from personalens.lenses.prefdisco.release_format import Criterion, Instance
from personalens.lenses.prefdisco.reply_budget import TEMPLATE_TOKENS, reply_tokens
from personalens.lenses.prefdisco.simulated_user import user_instructions
from personalens.models import ChatModel, complete_structured, schema_bounded
from personalens.models.completion import Message
from personalens.models.dialogue import DialogueResult, SimulatedUser, Steps, run_dialogue
from personalens.models.rubric_judge import (
    RubricCriterion,
    UnparseableVerdict,
    Wording,
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


def plan_items(instances: list[Instance], conditions: list[str]) -> list[Item]:
    """The run's items: every instance under every condition, instance by instance."""
    return [Item(instance, condition) for instance in instances for condition in conditions]


# A local judge decodes under the schema: bounded, its justification cannot run on.
OPEN_VERDICT_JUSTIFICATION_CHARS = 300


class OpenVerdict(pydantic.BaseModel):
    correct: bool
    justification: str = schema_bounded(OPEN_VERDICT_JUSTIFICATION_CHARS, default="")


def fixed_questions(condition: str) -> int | None:
    return int(condition.removeprefix("fixed_")) if condition.startswith("fixed_") else None


def target_messages(instance: Instance, condition: str, turns: int,
                    protocol_name: str = "release") -> list[Message]:
    """What the target is told in `condition` under a protocol before it answers or asks (no
    system prompt in baseline); `turns` is the discovery budget."""
    prompts = release_protocol if protocol_name == "release" else protocol
    problem = instance.problem
    if condition == "baseline":
        return prompts.baseline_messages(problem)
    if condition == "oracle":
        return prompts.oracle_messages(problem, instance.persona, instance.preferences)
    fixed = fixed_questions(condition)
    return prompts.discovery_messages(problem, fixed or turns, fixed is not None)


def conversation(opening: list[Message], turns: list[dict]) -> list[Message]:
    """The messages of a finished dialogue as the target saw them: each accepted turn and the
    user's reply to it."""
    messages = list(opening)
    for turn in turns:
        messages.append({"role": "assistant", "content": turn["raw"]})
        if turn.get("reply") is not None:
            messages.append({"role": "user", "content": turn["reply"]})
    return messages


def rubric(instance: Instance, criterion: Criterion) -> RubricCriterion:
    """What the judge is told about one criterion: its levels and this user's value for it."""
    preference = instance.preferences[criterion.preference]
    return RubricCriterion(criterion.preference, criterion.description, criterion.levels,
                           str(preference.get("value")), preference.get("justification"))


def correctness_is_judged(problem: Problem) -> bool:
    """An open-ended gold is judged by the (first) judge; the other kinds are checked by rule."""
    return problem.kind == "open"


_CORRECTNESS = {  # (system, question, reference, answer): "b" is the judge audit's rewording
    "a": ("You check whether an answer reaches the reference answer. Reply with JSON "
          '{"correct": true|false, "justification": "..."}.', "Question", "Reference answer",
          "Answer to check"),
    "b": ("Decide if the given answer arrives at the same result as the reference. Answer with "
          'JSON {"correct": true|false, "justification": "..."}.', "Problem", "Expected answer",
          "Answer under review"),
}


def correctness_messages(problem: Problem, response: str, wording: Wording = "a"
                         ) -> list[Message]:
    """The judge's request for an open-ended answer: does it reach the reference answer?"""
    system, question, reference, answer = _CORRECTNESS[wording]
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": f"{question}:\n{problem.question}\n\n{reference}:\n"
                                    f"{problem.gold}\n\n{answer}:\n{response}"}]


@dataclass
class Evaluation:
    """The target, the simulated user and the judge(s) on one item."""

    options: EvalOptions
    target: ChatModel
    user: ChatModel
    judges: list[ChatModel]
    steps: Steps

    async def record(self, item: Item) -> PrefdiscoRecord:
        instance = item.instance
        done = {"task": instance.task, "problem_id": instance.problem_id,
                "instance": instance.key, "condition": item.condition}  # a failure keeps it
        try:
            done.update(await self._answer(item))
        except RecordedFailure as exc:
            so_far = dict(exc.data)  # a dialogue's accepted turns, and the failing turn's
            if "turns" in so_far:  # rejected replies
                so_far["transcript"] = so_far.pop("turns")
            raise exc.with_data({**done, **so_far}) from exc
        try:
            done["criteria"] = criteria = await self._judge(instance, done["response"])
            prefalign = self._prefalign(criteria)
            if prefalign is None:
                raise RecordedFailure("no_valid_criterion", "the judge gave no valid verdict "
                                      "for any criterion", self.options.attempts,
                                      final=all(j.deterministic for j in self.judges))
            correctness = await self._correctness(instance, done["response"])
        except UnparseableVerdict as exc:
            # The release drops the instance when a judge reply has no JSON: recorded, listed,
            # and left out of every condition (its pairing is gone).
            return PrefdiscoRecord(**done, dropped=exc.failure.message, criteria=[], prefalign=None)
        except RecordedFailure as exc:  # judging failed: the answer (and criteria) are kept
            raise exc.with_data(done) from exc
        return PrefdiscoRecord(**done, prefalign=prefalign, correctness=correctness,
                               dropped=None, flagged=any(c["score"] is None for c in criteria))

    async def _answer(self, item: Item) -> dict:
        instance, condition, options = item.instance, item.condition, self.options
        messages = target_messages(instance, condition, options.turns, options.protocol)
        if condition in SINGLE_TURN:
            reply = await self._single_answer(messages, instance)
            return {**reply, "transcript": [], "questions": {"turns": 0, "questions": 0},
                    "revealed": []}
        dialogue = await self._dialogue(item, messages)
        transcript = [{**turn, "revealed": revealed(turn["reply"], instance.preferences)}
                      if turn["action"] == "ask" else turn for turn in dialogue.turns]
        done = {"transcript": transcript,
                "questions": {"turns": len(dialogue.questions),
                              "questions": scoring.count_questions(dialogue.questions)},
                "revealed": [name for name in instance.preferences
                             if any(name in t.get("revealed", []) for t in transcript)]}
        if options.protocol == "personalens":
            return {**done, "response": dialogue.final,
                    "finish_reason": dialogue.turns[-1].get("finish_reason"),
                    "max_tokens": self._dialogue_tokens(item, messages)}
        final = release_protocol.with_final_prompt(conversation(messages, dialogue.turns),
                                                   instance.problem)
        try:
            reply = await self.steps.get(f"{item.key}/final",
                                         lambda: self._single_answer(final, instance))
        except RecordedFailure as exc:  # the failure keeps the dialogue
            raise exc.with_data(done) from exc
        return {**done, **reply}

    async def _single_answer(self, messages: list[Message], instance: Instance) -> dict:
        """One answer to `messages` (baseline, oracle, the release's final prompt)."""
        max_tokens = reply_tokens(self.target, messages, self.options.max_tokens)
        completion = await self.target.complete(
            messages, grammar=turn_grammar.answer_grammar(instance.problem, max_tokens),
            temperature=self.options.temperature, seed=0, max_tokens=max_tokens)
        response = protocol.strip_wrapper(completion.text)
        raw = {"raw": completion.text} if response != completion.text else {}
        return {"response": response, **raw, "finish_reason": completion.finish_reason,
                "max_tokens": max_tokens}

    def _dialogue_tokens(self, item: Item, opening: list[Message]) -> int:
        """max_tokens of every turn of the item's dialogue: the cap leaves room for the
        longest dialogue the grammars admit (each question and each reply)."""
        questions = fixed_questions(item.condition) or self.options.turns
        later = questions * (turn_grammar.QUESTION_CHARS + turn_grammar.USER_REPLY_CHARS
                             + 2 * TEMPLATE_TOKENS)
        return reply_tokens(self.target, opening, self.options.max_tokens, later)

    async def _dialogue(self, item: Item, messages: list[Message]) -> DialogueResult:
        instance, options = item.instance, self.options
        fixed = fixed_questions(item.condition)
        user = SimulatedUser(self.user, user_instructions(
            instance.persona, instance.preferences, options.user),
            temperature=options.user_temperature, attempts=options.attempts,
            grammar=turn_grammar.reply_grammar(turn_grammar.USER_REPLY_CHARS))
        max_tokens = self._dialogue_tokens(item, messages)
        return await run_dialogue(
            self.target, messages, user, protocol.WireFormat(instance.problem, max_tokens),
            questions=fixed or options.turns, exact=fixed is not None,
            temperature=options.temperature, max_tokens=max_tokens, attempts=options.attempts,
            # The release sends its final prompt as soon as the budget is spent; ours asks for
            # the answer inside the dialogue.
            answer_turn=options.protocol == "personalens", key=item.key, steps=self.steps)

    async def _judge(self, instance: Instance, response: str) -> list[dict]:
        async def one(criterion: Criterion) -> dict:
            verdicts = await gather_settled(*[
                judge_criterion(judge, rubric(instance, criterion), response,
                                mode=self.options.scoring, attempts=self.options.attempts,
                                temperature=self.options.judge_temperature)
                for judge in self.judges])
            valid = [v.score for v in verdicts if v.score is not None]
            return {**asdict(criterion), "verdicts": [v.as_record() for v in verdicts],
                    "score": sum(valid) / len(valid) if valid else None}

        return await gather_settled(*[one(c) for c in instance.criteria])

    def _prefalign(self, criteria: list[dict]) -> float | None:
        if self.options.scoring == "release":
            return scoring.prefalign_release([(c["score"], c["weight"]) for c in criteria])
        return scoring.prefalign_strict([(c["score"], c["normalised_weight"]) for c in criteria])

    async def _correctness(self, instance: Instance, response: str) -> dict:
        problem = instance.problem
        if not correctness_is_judged(problem):
            return {**grade(response, problem.kind, problem.gold, problem.options).as_record(),
                    "judged": False}
        verdict, _ = await complete_structured(
            self.judges[0], correctness_messages(problem, response), OpenVerdict,
            regenerations=self.options.attempts - 1, temperature=self.options.judge_temperature)
        return {"correct": verdict.correct, "parsed": response[-200:], "unparsed": False,
                "judged": True, "justification": verdict.justification}

