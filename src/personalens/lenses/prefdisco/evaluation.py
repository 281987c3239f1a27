"""One (instance, condition): get the target's final answer, check it, and judge it per criterion.

Conditions: `baseline` (the problem alone), `oracle` (every preference given), `discovery` (a
conversation with the simulated user, at most `--turns` questions) and `fixed_<N>` (exactly N
questions). Under `--protocol release` (the default) a dialogue is followed by a separate final
prompt, and that answer is the one scored; under `--protocol personalens` the answer the target
gives in the dialogue is. What is judged is the scored answer with the protocol wrapper
stripped; its finish reason is recorded (a reply cut off at the token limit is "length").

Correctness (`--correctness`): `judge`, the release's, has the first judge read every scored
answer against the gold answer, and no prompt asks for an `ANSWER:` line; `rules` asks every
prompt for one and checks it by rule (a judge only for open-ended golds). Under `judge` the
rules' verdict is also recorded, as `correctness_rules`, for an answer that carries an
`ANSWER:` line anyway (it costs no call). A judge reply still invalid after `--attempts` fails
the item: a correctness is never guessed.

A target that decodes under a grammar (local llama.cpp) answers under one, within the grammar's
bound; its final answer ends with an `ANSWER:` line of the problem's shape when the rules read
it. A local
target's max_tokens is capped to leave room for the prompt (`reply_budget`). A failed item's
record keeps what was produced before the failure (the conversation so far, the answer when
judging failed), and the failure is final when a rerun would ask the same deterministic model
the same thing.
"""

from dataclasses import asdict, dataclass
from typing import Literal

import pydantic

from personalens.lenses.prefdisco import protocol, release_protocol, scoring, turn_grammar
from personalens.lenses.prefdisco.answer_check import answer_line, grade
from personalens.lenses.prefdisco.options import Correctness, EvalOptions
from personalens.lenses.prefdisco.preference_reveal import revealed
from personalens.lenses.prefdisco.problems import Problem
from personalens.lenses.prefdisco.records import PrefdiscoRecord
from personalens.lenses.prefdisco.release_format import Criterion, Instance
from personalens.lenses.prefdisco.simulated_user import user_instructions
from personalens.models import ChatModel, complete_structured, schema_bounded
from personalens.models.completion import Message
from personalens.models.dialogue import DialogueResult, SimulatedUser, Steps, run_dialogue
from personalens.models.reply_budget import TEMPLATE_TOKENS, reply_tokens
from personalens.models.rubric_judge import (
    MAX_TOKENS,
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


def _untitled(schema: dict) -> None:
    """No `title`s in the verdict's schema: they constrain nothing, and Inspect's bridge drops
    them, so a run through Inspect sends the judge the very request a run of the lens does."""
    schema.pop("title", None)
    for field in schema.get("properties", {}).values():
        field.pop("title", None)


class OpenVerdict(pydantic.BaseModel):
    """The correctness judge's verdict as the release asks for it: a one-sentence
    justification first, then 1 (correct) or 0 (true and false are read as 1 and 0)."""

    model_config = pydantic.ConfigDict(json_schema_extra=_untitled)

    justification: str = schema_bounded(OPEN_VERDICT_JUSTIFICATION_CHARS, default="")
    correct: Literal[0, 1]


def fixed_questions(condition: str) -> int | None:
    return int(condition.removeprefix("fixed_")) if condition.startswith("fixed_") else None


def target_messages(instance: Instance, condition: str, turns: int,
                    protocol_name: str = "release", answer_line: bool = True) -> list[Message]:
    """What the target is told in `condition` under a protocol before it answers or asks (no
    system prompt in baseline); `turns` is the discovery budget; `answer_line`: the rules
    check correctness, so the prompts ask for an ANSWER: line."""
    prompts = release_protocol if protocol_name == "release" else protocol
    problem = instance.problem
    if condition == "baseline":
        return prompts.baseline_messages(problem, answer_line)
    if condition == "oracle":
        return prompts.oracle_messages(problem, instance.persona, instance.preferences,
                                       answer_line)
    fixed = fixed_questions(condition)
    return prompts.discovery_messages(problem, fixed or turns, fixed is not None, answer_line)


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


def correctness_is_judged(problem: Problem, method: Correctness) -> bool:
    """Under `judge` every answer's correctness is judged (by the first judge); under `rules`
    only an open-ended gold's, the other kinds being checked by rule."""
    return method == "judge" or problem.kind == "open"


# The correctness judge: the release's request in our words and in its order (what counts,
# the problem with its options, the gold answer, the response, then a one-sentence
# justification and 0 or 1 as JSON). "b" says the same in other words, for the judge audit.
_CORRECTNESS = {
    "a": {"system": "You check a model's final response against the correct answer. Reply "
                    "with valid JSON only.",
          "task": "Decide whether the model's final response is correct by comparing it with "
                  "the correct answer. Only whether it is objectively right counts; its style, "
                  "length and tone do not.",
          "labels": ("Problem", "Correct answer", "Model's final response"),
          "reply": "Give a one-sentence justification of your decision, then the verdict: 1 if "
                   "the response is correct, 0 if it is not. Reply as JSON: "
                   '{"justification": "<one sentence>", "correct": <1 or 0>}'},
    "b": {"system": "Your job is to say whether an answer is right, given the known solution. "
                    "Answer with a JSON object and nothing else.",
          "task": "Is the answer under review right? Compare it with the known solution and "
                  "judge only whether it is factually correct, not how it is presented.",
          "labels": ("Task", "Known solution", "Answer under review"),
          "reply": "Write one sentence that explains your decision, and mark the answer 1 if "
                   "it is right or 0 if it is wrong, as JSON: "
                   '{"justification": "<one sentence>", "correct": <1 or 0>}'},
}


def correctness_messages(problem: Problem, response: str, wording: Wording = "a"
                         ) -> list[Message]:
    """The correctness judge's request: is the response right, against the gold answer?"""
    asked = _CORRECTNESS[wording]
    problem_label, gold_label, response_label = asked["labels"]
    user = [asked["task"], f"{problem_label}:\n{protocol.problem_text(problem)}",
            f"{gold_label}:\n{problem.gold}", f"{response_label}:\n{response}", asked["reply"]]
    return [{"role": "system", "content": asked["system"]},
            {"role": "user", "content": "\n\n".join(user)}]


async def judge_correctness(judge: ChatModel, problem: Problem, response: str, *,
                            attempts: int, temperature: float, seed: int = 0,
                            wording: Wording = "a") -> OpenVerdict:
    """The judge's verdict, asked again (a new sample) while invalid; still invalid after
    `attempts`, `ModelCallFailed` (the item fails: a correctness is never guessed)."""
    verdict, _ = await complete_structured(
        judge, correctness_messages(problem, response, wording), OpenVerdict,
        regenerations=attempts - 1, temperature=temperature, seed=seed, max_tokens=MAX_TOKENS)
    return verdict


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
        return PrefdiscoRecord(**done, **correctness, prefalign=prefalign, dropped=None,
                               flagged=any(c["score"] is None for c in criteria))

    async def _answer(self, item: Item) -> dict:
        instance, condition, options = item.instance, item.condition, self.options
        messages = target_messages(instance, condition, options.turns, options.protocol,
                                   options.asks_answer_line)
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
                                                   instance.problem, options.asks_answer_line)
        try:
            reply = await self.steps.get(f"{item.key}/final",
                                         lambda: self._single_answer(final, instance))
        except RecordedFailure as exc:  # the failure keeps the dialogue
            raise exc.with_data(done) from exc
        return {**done, **reply}

    async def _single_answer(self, messages: list[Message], instance: Instance) -> dict:
        """One answer to `messages` (baseline, oracle, the release's final prompt)."""
        max_tokens = reply_tokens(self.target, messages, self.options.max_tokens)
        grammar = turn_grammar.answer_grammar(instance.problem, max_tokens,
                                              self.options.asks_answer_line)
        completion = await self.target.complete(
            messages, grammar=grammar,
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
            self.target, messages, user,
            protocol.WireFormat(instance.problem, max_tokens, options.asks_answer_line),
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
        """The record's `correctness` by the run's method, and under `judge` the rules' verdict
        (`correctness_rules`) when the answer carries an ANSWER: line anyway."""
        problem, options = instance.problem, self.options
        rules = None if problem.kind == "open" else {
            **grade(response, problem.kind, problem.gold, problem.options).as_record(),
            "judged": False}
        if not correctness_is_judged(problem, options.correctness):
            return {"correctness": rules}
        verdict = await judge_correctness(self.judges[0], problem, response,
                                          attempts=options.attempts,
                                          temperature=options.correctness_temperature)
        judged = {"correct": verdict.correct == 1, "parsed": response[-200:], "unparsed": False,
                  "judged": True, "justification": verdict.justification}
        if rules is None or answer_line(response) is None:
            return {"correctness": judged}
        return {"correctness": judged, "correctness_rules": rules}

