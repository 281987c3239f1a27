"""One PRISK record under every condition: route, retrieve, answer, and score for its risk.

An item is a record; its conditions run inside it, so every condition of a record is scored or
none is (the comparisons stay paired). Model-written answers are steps (`<record>/<condition>/
answer`, `/draft`, `/sample/<s>`, `<record>/route`, `<record>/inversion/answer`), so a killed
run resumes without asking the target again. The router answers once per record (it sees only
the query); the k-sweep forces retrieval without it.
"""

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Literal

import pydantic

from personalens.lenses.prisk import judging, prompts
from personalens.lenses.prisk.answer_rules import check_answer
from personalens.lenses.prisk.conditions import Condition, applies
from personalens.lenses.prisk.inversion import invert, sided_preference, sides
from personalens.lenses.prisk.memory_index import MemoryIndexes
from personalens.lenses.prisk.output_formats import asked_format, enum, obj
from personalens.lenses.prisk.records import PriskRecord
from personalens.models import ChatModel, complete_structured
from personalens.models.dialogue import Steps
from personalens.models.rubric_judge import judge_criterion
from personalens.runs import RecordedFailure
from personalens.runs.settled import gather_settled

RISK_GROUPS = {"irp": ("irp", "accuracy"), "sycophancy": ("agreement", "framing"),
               "narrowing": ("narrowing",)}


@dataclass(frozen=True)
class Item:
    record: PriskRecord

    @property
    def key(self) -> str:
        return self.record.record_id


@dataclass(frozen=True)
class Temperatures:
    target: float = 0.2  # the paper's generation temperature
    samples: float = 0.8  # narrowing samples
    judge: float = 0.0


@dataclass
class Roles:
    target: ChatModel
    judge: ChatModel
    topic_judge: ChatModel
    usefulness_judge: ChatModel


API_ANSWER_TOKENS = 512
# An in-process model on a CPU (the bundled SmolLM2-135M) seldom ends an answer before the cap,
# and each token costs tens of milliseconds: its answers default to a shorter cap.
LOCAL_ANSWER_TOKENS = 128


def answer_tokens(max_tokens: int | None, target_spec: str) -> int:
    """The answers' max_tokens: the one asked for, else the default for where the target runs."""
    if max_tokens is not None:
        return max_tokens
    return LOCAL_ANSWER_TOKENS if target_spec.startswith("local/") else API_ANSWER_TOKENS


@dataclass(frozen=True)
class Settings:
    k: int = 3
    samples: int = 5
    attempts: int = 3
    max_tokens: int = API_ANSWER_TOKENS
    temperatures: Temperatures = Temperatures()


class Router(pydantic.BaseModel):
    decision: Literal["retrieval", "no_retrieval"]


class Evaluation:
    def __init__(self, roles: Roles, memory: MemoryIndexes, conditions: list[Condition],
                 settings: Settings):
        self.roles = roles
        self.memory = memory
        self.conditions = conditions
        self.settings = settings
        self.steps: Steps | None = None

    async def record(self, item: Item) -> dict:
        record = item.record
        # Filled in as the record goes: a failure carries what was produced before it (the
        # router's decision, each condition's memories, answers and verdicts so far).
        produced: dict = {"conditions": {}}
        try:
            return await self._evaluate(record, produced)
        except RecordedFailure as exc:  # the failed record still says what it was
            raise exc.with_data({"record_id": record.record_id, "risk": record.risk,
                                 "query_id": record.query_id, "persona_id": record.persona_id,
                                 "question": record.question, **produced, **exc.data}) from exc
        finally:
            self.memory.forget(record)

    async def _evaluate(self, record: PriskRecord, produced: dict) -> dict:
        decision = produced["router"] = await self._route(record)
        conditions = [c for c in self.conditions if applies(c, record.risk)]
        by_condition = produced["conditions"]
        await gather_settled(*[self._answer(record, c, decision, by_condition)
                               for c in conditions])
        by_condition = {c.name: by_condition[c.name] for c in conditions}  # in condition order
        produced["conditions"] = by_condition
        await self._score(record, by_condition)
        extra = await self._inversion(record, by_condition, produced)
        return {"record_id": record.record_id, "risk": record.risk, "query_id": record.query_id,
                "persona_id": record.persona_id, "domain": record.domain,
                "persona": record.persona, "question": record.question,
                "router": decision, "conditions": by_condition, **extra}

    # -- context and answers ------------------------------------------------------------

    async def _step(self, key: str, compute):
        if self.steps is None:
            return await compute()
        return await self.steps.get(key, compute)

    async def _route(self, record: PriskRecord) -> str | None:
        if not any(c.memory and c.forced_k is None for c in self.conditions):
            return None

        async def ask() -> str:
            # Invalid output is asked again, then recorded; never guessed.
            schema, max_tokens = asked_format(
                self.roles.target, Router,
                lambda: obj({"decision": enum(("retrieval", "no_retrieval"))}), 60)
            value, _ = await complete_structured(
                self.roles.target, prompts.router_messages(record), schema,
                regenerations=self.settings.attempts - 1,
                temperature=self.settings.temperatures.target, seed=0, max_tokens=max_tokens)
            return value.decision

        return await self._step(f"{record.record_id}/route", ask)

    async def _answer(self, record: PriskRecord, condition: Condition, decision: str | None,
                      into: dict[str, dict]) -> dict:
        memories: list[dict] = []
        if condition.forced_k is not None:
            memories = await self.memory.search(record, condition.forced_k)
        elif condition.memory and decision == "retrieval":
            memories = await self.memory.search(record, self.settings.k)
        messages = prompts.answer_messages(record, condition.profile, memories)
        key = f"{record.record_id}/{condition.name}"
        # Reflection revises the profile + retrieval answer itself: the draft is that step
        # (shared with the profile_retrieval condition when both run).
        draft_key = f"{record.record_id}/profile_retrieval" if condition.reflect else None
        out: dict = {"memories": memories, "retrieved": bool(memories)}
        into[condition.name] = out  # filled in place as the answer and its verdicts come
        if record.risk == "narrowing":
            await self._samples(key, messages, draft_key, out)
            out["answer"] = out["samples"][0]["text"]
            return out
        if draft_key is None:
            out["answer"] = await self._step(f"{key}/answer", lambda: self._complete(messages))
            return out
        draft = out["draft"] = await self._step(f"{draft_key}/answer",
                                                lambda: self._complete(messages))
        out["answer"] = await self._step(
            f"{key}/answer", lambda: self._complete(prompts.reflect_messages(messages, draft)))
        return out

    async def _complete(self, messages, *, temperature: float | None = None,
                        seed: int = 0) -> str:
        temperature = self.settings.temperatures.target if temperature is None else temperature
        completion = await self.roles.target.complete(
            messages, temperature=temperature, seed=seed, max_tokens=self.settings.max_tokens)
        return completion.text

    async def _samples(self, key: str, messages, draft_key: str | None,
                       out: dict) -> list[dict]:
        temperature = self.settings.temperatures.samples

        samples: list[dict] = [{} for _ in range(self.settings.samples)]
        out["samples"] = samples  # filled in place, so a failure shows the samples so far

        async def one(s: int) -> None:
            def sample(prompt=messages) -> Awaitable[str]:
                return self._complete(prompt, temperature=temperature, seed=s)

            if draft_key is None:
                text = await self._step(f"{key}/sample/{s}", sample)
            else:  # reflect: each sample is a revision of the matching draft sample
                draft = samples[s]["draft"] = await self._step(f"{draft_key}/sample/{s}", sample)
                text = await self._step(f"{key}/sample/{s}", lambda: sample(
                    prompts.reflect_messages(messages, draft)))
            samples[s]["text"] = text
            samples[s]["topics"] = await judging.topics(
                self.roles.topic_judge, messages[-1]["content"], text, **self._judge_kw())

        await gather_settled(*[one(s) for s in range(self.settings.samples)])
        return samples

    # -- scoring ------------------------------------------------------------------------

    def _judge_kw(self) -> dict:
        return {"attempts": self.settings.attempts,
                "temperature": self.settings.temperatures.judge}

    async def _verdict(self, criterion, answer: dict) -> None:
        """answer["verdict"] and answer["score"]; an invalid verdict stays in the answer (the
        record's failure shows it) and fails the record."""
        verdict = await judge_criterion(self.roles.judge, criterion, answer["answer"],
                                        attempts=self.settings.attempts,
                                        temperature=self.settings.temperatures.judge)
        answer["verdict"] = verdict.as_record()
        if verdict.score is None:
            # Never counted as done: the record fails, is listed, and a rerun asks again (the
            # same replies, for a deterministic judge: then the failure is final).
            raise RecordedFailure("invalid_verdict", f"no valid {criterion.name!r} verdict "
                                  f"after {verdict.attempts} attempt(s): {verdict.problem}",
                                  verdict.attempts, data={"judge_reply": verdict.raw},
                                  final=self.roles.judge.deterministic)
        answer["score"] = verdict.score

    async def _score(self, record: PriskRecord, answers: dict[str, dict]) -> None:
        base = answers["base"]["answer"]

        async def one(name: str, answer: dict) -> None:
            text = answer["answer"]
            if record.risk == "irp":
                await self._verdict(judging.irp_criterion(record), answer)
            elif record.risk == "accuracy":
                answer.update(check_answer(text, answer=record.answer, choices=record.choices,
                                           subject=record.subject))
                answer["score"] = 1.0 if answer["correct"] else 0.0
            elif record.risk == "agreement":
                await self._verdict(judging.agreement_criterion(record), answer)
            elif record.risk == "framing":
                # The framing judge always sees the generic answer it compares against.
                criterion = judging.framing_criterion(record, record.persona["preference"], base)
                await self._verdict(criterion, answer)
            if record.risk in ("agreement", "framing") and name != "base":
                pis = await judging.attributable(self.roles.judge, record, base, text,
                                                 **self._judge_kw())
                answer["pis"], answer["pis_reason"] = pis.attributable, pis.reason

        await gather_settled(*[one(name, a) for name, a in answers.items()])

    async def _inversion(self, record: PriskRecord, answers: dict[str, dict],
                         produced: dict) -> dict:
        """Framing records under the profile condition: answer again with the preference's
        sides swapped, and see whether the lean follows the preference."""
        if record.risk != "framing" or "profile" not in answers:
            return {}
        swap = _inverted(record)
        if swap is None:
            return {"inversion": {"invertible": False}}
        pair, inverted = swap
        messages = prompts.answer_messages(record, True, [], persona_preference=inverted)
        produced["inversion"] = {"invertible": True, "sides": list(pair),
                                 "preference": inverted}
        text = produced["inversion"]["answer"] = await self._step(
            f"{record.record_id}/inversion/answer", lambda: self._complete(messages))
        original, swapped = await gather_settled(
            judging.lean(self.roles.judge, record.question, pair, answers["profile"]["answer"],
                         **self._judge_kw()),
            judging.lean(self.roles.judge, record.question, pair, text, **self._judge_kw()))
        flipped = original != swapped and "neither" not in (original, swapped)
        return {"inversion": {"invertible": True, "sides": list(pair), "preference": inverted,
                              "answer": text, "lean_original": original,
                              "lean_inverted": swapped, "flipped": flipped}}


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

