"""One PRISK record under every condition: route, retrieve, answer, and score for its risk.

An item is a record; its conditions run inside it, so every condition of a record is scored or
none is (the comparisons stay paired). Model-written answers are steps (`<record>/<condition>/
answer`, `/draft`, `/sample/<s>`, `<record>/route`, `<record>/inversion/answer`), so a killed
run resumes without asking the target again. The router answers once per record (it sees only
the query); the k-sweep forces retrieval without it.
"""

from typing import Literal

import pydantic

from personalens.lenses.prisk import answer_sets, judging, prompts
from personalens.lenses.prisk.answer_rules import check_answer
from personalens.lenses.prisk.answer_sets import AnswerSets
from personalens.lenses.prisk.conditions import Condition, applies
from personalens.lenses.prisk.inversion import invert, sided_preference, sides
from personalens.lenses.prisk.memory_index import MemoryIndexes
from personalens.lenses.prisk.options import EvalOptions
from personalens.lenses.prisk.output_formats import ask_structured, enum, obj
from personalens.lenses.prisk.records import (
    Answer,
    EvalRecord,
    Inversion,
    PriskRecord,
    Sample,
    Verdict,
)
from personalens.models.dialogue import Steps
from personalens.models.role_set import RoleSet
from personalens.models.rubric_judge import judge_criterion
from personalens.runs import RecordedFailure
from personalens.runs.settled import gather_settled


class Router(pydantic.BaseModel):
    decision: Literal["retrieval", "no_retrieval"]


class Evaluation:
    def __init__(self, roles: RoleSet, memory: MemoryIndexes, conditions: list[Condition],
                 options: EvalOptions, steps: Steps):
        self.roles = roles
        self.memory = memory
        self.conditions = conditions
        self.options = options
        self.steps = steps

    async def record(self, record: PriskRecord) -> EvalRecord:
        # Filled in as the record goes: a failure carries what was produced before it (the
        # router's decision, each condition's memories, answers and verdicts so far).
        produced = EvalRecord(record_id=record.record_id, risk=record.risk,
                              query_id=record.query_id, persona_id=record.persona_id,
                              question=record.question, conditions={})
        try:
            decision = produced.router = await self._route(record)
            await gather_settled(*[self._answer(record, c, decision, produced.conditions)
                                   for c in self.conditions if applies(c, record.risk)])
            await self._score(record, produced.conditions)
            await self._inversion(record, produced)
        except RecordedFailure as exc:  # the failed record still says what it was
            raise exc.with_data({**produced.fields(), **exc.data}) from exc
        finally:
            self.memory.forget(record)
        produced.domain, produced.persona = record.domain, record.persona
        return produced

    async def answer_sets(self, narrowing: list[EvalRecord],
                          by_id: dict[str, PriskRecord]) -> AnswerSets:
        """Narrowing's answer sets, once every narrowing record is answered."""
        return await answer_sets.build(narrowing, by_id, judge=self.roles["topic_judge"],
                                       usefulness_judge=self.roles["usefulness_judge"],
                                       steps=self.steps, **self._judge_kw())

    # -- context and answers ------------------------------------------------------------

    async def _route(self, record: PriskRecord) -> str | None:
        if not any(c.memory and c.forced_k is None for c in self.conditions):
            return None

        async def ask() -> str:
            # Invalid output is asked again, then recorded; never guessed.
            value, _ = await ask_structured(
                self.roles["target"], prompts.router_messages(record), Router,
                lambda: obj({"decision": enum(("retrieval", "no_retrieval"))}), 60,
                regenerations=self.options.attempts - 1, temperature=self.options.temperature,
                seed=0)
            return value.decision

        return await self.steps.get(f"{record.record_id}/route", ask)

    async def _answer(self, record: PriskRecord, condition: Condition, decision: str | None,
                      into: dict[str, Answer]) -> None:
        # The k-sweep retrieves without the router; the memory conditions when it says so.
        k = condition.forced_k or (condition.memory and decision == "retrieval" and self.options.k)
        memories = await self.memory.search(record, k) if k else []
        messages = prompts.answer_messages(record, condition.profile, memories)
        key = f"{record.record_id}/{condition.name}"
        # Reflection revises the profile + retrieval answer itself: the draft is that step
        # (shared with the profile_retrieval condition when both run).
        draft_key = f"{record.record_id}/profile_retrieval" if condition.reflect else None
        # Filled in place as the answer and its verdicts come.
        out = into[condition.name] = Answer(memories=memories, retrieved=bool(memories))
        if record.risk == "narrowing":
            await self._samples(key, messages, draft_key, out)
            out.answer = out.samples[0].text
        else:
            out.answer = await self._reply(key, draft_key, "answer", messages, out)

    async def _reply(self, key: str, draft_key: str | None, step: str, messages,
                     into: Answer | Sample | Inversion, temperature: float | None = None,
                     seed: int = 0) -> str:
        """The target's reply (step `<key>/<step>`); under reflect, its revision of the draft
        (step `<draft_key>/<step>`, kept in `into.draft`)."""
        temperature = self.options.temperature if temperature is None else temperature

        async def ask(prompt=messages) -> str:
            completion = await self.roles["target"].complete(
                prompt, temperature=temperature, seed=seed, max_tokens=self.options.answer_tokens)
            return completion.text

        if draft_key is None:
            return await self.steps.get(f"{key}/{step}", ask)
        draft = into.draft = await self.steps.get(f"{draft_key}/{step}", ask)
        return await self.steps.get(f"{key}/{step}",
                                    lambda: ask(prompts.reflect_messages(messages, draft)))

    async def _samples(self, key: str, messages, draft_key: str | None, out: Answer) -> None:
        # Filled in place, so a failure shows the samples so far.
        samples = out.samples = [Sample() for _ in range(self.options.samples)]

        async def one(s: int) -> None:
            # reflect: each sample is a revision of the matching draft sample
            text = samples[s].text = await self._reply(
                key, draft_key, f"sample/{s}", messages, samples[s],
                self.options.sample_temperature, s)
            samples[s].topics = await judging.topics(
                self.roles["topic_judge"], messages[-1]["content"], text, **self._judge_kw())

        await gather_settled(*[one(s) for s in range(self.options.samples)])

    # -- scoring ------------------------------------------------------------------------

    def _judge_kw(self) -> dict:
        return {"attempts": self.options.attempts, "temperature": self.options.judge_temperature}

    async def _verdict(self, criterion, answer: Answer) -> None:
        """The answer's verdict and score; an invalid verdict stays in the answer (the record's
        failure shows it) and fails the record."""
        judge = self.roles["judge"]
        verdict = await judge_criterion(judge, criterion, answer.answer, **self._judge_kw())
        answer.verdict = Verdict(**verdict.as_record())
        if verdict.score is None:
            # Never counted as done: the record fails, is listed, and a rerun asks again (the
            # same replies, for a deterministic judge: then the failure is final).
            raise RecordedFailure("invalid_verdict", f"no valid {criterion.name!r} verdict "
                                  f"after {verdict.attempts} attempt(s): {verdict.problem}",
                                  verdict.attempts, data={"judge_reply": verdict.raw},
                                  final=judge.deterministic)
        answer.score = verdict.score

    async def _score(self, record: PriskRecord, answers: dict[str, Answer]) -> None:
        base = answers["base"].answer
        criterion = judging.criterion(record, base)

        async def one(name: str, answer: Answer) -> None:
            text = answer.answer
            if criterion is not None:
                await self._verdict(criterion, answer)
            elif record.risk == "accuracy":
                check = check_answer(text, answer=record.answer, choices=record.choices,
                                     subject=record.subject)
                answer.parsed, answer.correct = check["parsed"], check["correct"]
                answer.score = 1.0 if answer.correct else 0.0
            if record.risk in ("agreement", "framing") and name != "base":
                pis = await judging.attributable(self.roles["judge"], record, base, text,
                                                 **self._judge_kw())
                answer.pis, answer.pis_reason = pis.attributable, pis.reason

        await gather_settled(*[one(name, a) for name, a in answers.items()])

    async def _inversion(self, record: PriskRecord, produced: EvalRecord) -> None:
        """Framing records under the profile condition: answer again with the preference's
        sides swapped, and see whether the lean follows the preference."""
        if record.risk != "framing" or "profile" not in produced.conditions:
            return
        swap = _inverted(record)
        if swap is None:
            produced.inversion = Inversion(invertible=False)
            return
        pair, inverted = swap
        messages = prompts.answer_messages(record, True, [], persona_preference=inverted)
        inversion = produced.inversion = Inversion(invertible=True, sides=list(pair),
                                                   preference=inverted)
        text = inversion.answer = await self._reply(f"{record.record_id}/inversion", None,
                                                    "answer", messages, inversion)
        judge, profiled = self.roles["judge"], produced.conditions["profile"].answer
        original, swapped = await gather_settled(
            judging.lean(judge, record.question, pair, profiled, **self._judge_kw()),
            judging.lean(judge, record.question, pair, text, **self._judge_kw()))
        inversion.lean_original, inversion.lean_inverted = original, swapped
        inversion.flipped = original != swapped and "neither" not in (original, swapped)


def _inverted(record: PriskRecord) -> tuple[tuple[str, str], str] | None:
    """((favoured, disfavoured), the preference with its sides swapped): the stated sentence
    rewritten in its own template when it is one of the known ones, else the record's `sides`
    in the canonical sentence; None when neither is available."""
    preference = record.persona["preference"]
    pair, swapped = sides(preference), invert(preference)
    if pair is not None and swapped is not None:
        return pair, swapped
    if record.sides:
        favoured, disfavoured = record.sides
        return (favoured, disfavoured), sided_preference(disfavoured, favoured)
    return None

