"""One PRISK record under every condition: route, retrieve, answer, and score for its risk.

An item is a record; its conditions run inside it, so every condition of a record is scored or
none is (the comparisons stay paired). Model-written answers and the router's decisions are
steps (`<record>/<condition>/answer`, `/draft`, `/sample/<s>`, `<record>/route`,
`<record>/route/profile`, `<record>/inversion/answer`), so a killed run resumes without asking
the target again. The router decides twice per record, as the paper: on the query alone for
`retrieval`, and on the profile paragraph with the query for the conditions that show the
profile (`profile_retrieval`, `reflect`), whose memory is searched with that same [p(u); q]
text. The k-sweep forces retrieval without a router.
"""

from typing import Literal

import pydantic

from personalens.lenses.prisk import answer_sets, judging, prompts
from personalens.lenses.prisk.answer_rules import check_answer
from personalens.lenses.prisk.answer_sets import AnswerSets
from personalens.lenses.prisk.conditions import Condition
from personalens.lenses.prisk.inversion import (
    invert,
    outcome,
    sided_preference,
    sides,
    swap_sides,
)
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
from personalens.models.reply_budget import reply_tokens
from personalens.models.role_set import RoleSet
from personalens.models.rubric_judge import judge_criterion
from personalens.runs import RecordedFailure
from personalens.runs.settled import gather_settled

ROUTER_TOKENS = 60  # {"decision": "no_retrieval"} with room to spare
ROUTER_TEMPERATURE = 0.0  # a classifier, as the release's router (not the answers' 0.2)


class Router(pydantic.BaseModel):
    decision: Literal["retrieval", "no_retrieval"]


def routes(conditions: list[Condition], profile: bool) -> bool:
    """Whether the router decides for the conditions with (or without) the profile: some
    memory condition of the run follows it (the k-sweep retrieves without it)."""
    return any(c.memory and c.forced_k is None and c.profile == profile for c in conditions)


def depth(condition: Condition, decision: str | None, k: int) -> int:
    """How many memories `condition` retrieves: the sweep's own depth, `k` for a memory
    condition the router sent to retrieval, else none."""
    return condition.forced_k or (condition.memory and decision == "retrieval" and k) or 0


def invertible(record: PriskRecord) -> bool:
    """Whether the record's stated preference has sides to swap (the inversion's answer)."""
    return _inverted(record) is not None


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
                              question=record.question, verdict=record.verdict, conditions={})
        try:
            # Two routers, as the paper: on the query for retrieval, on [p(u); q] for the
            # conditions with the profile in the context.
            produced.router, produced.router_profile = await gather_settled(
                self._route(record, profile=False), self._route(record, profile=True))
            decisions = {False: produced.router, True: produced.router_profile}
            await gather_settled(*[self._answer(record, c, decisions[c.profile],
                                                produced.conditions)
                                   for c in self.conditions])
            await self._score(record, produced)
            await self._inversion(record, produced)
        except RecordedFailure as exc:  # the failed record still says what it was
            raise exc.with_data({**produced.fields(), **exc.data}) from exc
        finally:
            self.memory.forget(record)
        produced.domain, produced.persona = record.domain, record.persona
        return produced

    async def answer_sets(self, narrowing: list[EvalRecord], by_id: dict[str, PriskRecord],
                          after: set[str]) -> AnswerSets:
        """Narrowing's answer sets, once every narrowing record is answered (`after`: the
        conditions U does not include, reflect and the depth sweep's)."""
        return await answer_sets.build(narrowing, by_id, after, judge=self.roles["topic_judge"],
                                       usefulness_judge=self.roles["usefulness_judge"],
                                       steps=self.steps, **self._judge_kw())

    # -- context and answers ------------------------------------------------------------

    async def _route(self, record: PriskRecord, *, profile: bool) -> str | None:
        """The router's decision for the routed conditions with (or without) the profile;
        None when the run has none."""
        if not routes(self.conditions, profile):
            return None

        async def ask() -> str:
            # Invalid output is asked again, then recorded; never guessed.
            value, _ = await ask_structured(
                self.roles["target"], prompts.router_messages(record, profile), Router,
                lambda: obj({"decision": enum(("retrieval", "no_retrieval"))}), ROUTER_TOKENS,
                regenerations=self.options.attempts - 1, temperature=ROUTER_TEMPERATURE,
                seed=0)
            return value.decision

        return await self.steps.get(f"{record.record_id}/route" + ("/profile" if profile else ""),
                                    ask)

    async def _answer(self, record: PriskRecord, condition: Condition, decision: str | None,
                      into: dict[str, Answer]) -> None:
        # The k-sweep retrieves without the router; the memory conditions when it says so.
        k = depth(condition, decision, self.options.k)
        text = prompts.search_text(record, condition.profile)
        memories = await self.memory.search(record, text, k) if k else []
        messages = prompts.answer_messages(record, condition.profile, memories)
        key = f"{record.record_id}/{condition.name}"
        # Reflection revises the profile + retrieval answer itself: the draft is that step
        # (shared with the profile_retrieval condition when both run).
        draft_key = f"{record.record_id}/profile_retrieval" if condition.reflect else None
        # Filled in place as the answer and its verdicts come.
        out = into[condition.name] = Answer(memories=memories, retrieved=bool(memories))
        if record.risk == "narrowing":
            await self._samples(key, messages, draft_key, out,
                                self.options.sample_count(condition.name))
            out.answer, out.finish_reason = out.samples[0].text, out.samples[0].finish_reason
        else:
            out.answer, out.finish_reason = await self._reply(key, draft_key, "answer", messages,
                                                              out)

    async def _reply(self, key: str, draft_key: str | None, step: str, messages,
                     into: Answer | Sample | None, temperature: float | None = None,
                     seed: int = 0) -> tuple[str, str | None]:
        """The target's reply and why it stopped ("length": cut off at --max-tokens) (step
        `<key>/<step>`); under reflect, its revision of the draft (step `<draft_key>/<step>`,
        kept in `into.draft`)."""
        temperature = self.options.temperature if temperature is None else temperature

        async def ask(prompt=messages) -> dict:
            target = self.roles["target"]
            cap = reply_tokens(target, prompt, self.options.max_tokens)
            completion = await target.complete(prompt, temperature=temperature, seed=seed,
                                               max_tokens=cap)
            return {"text": completion.text, "finish_reason": completion.finish_reason}

        if draft_key is None:
            reply = await self.steps.get(f"{key}/{step}", ask)
        else:
            draft = await self.steps.get(f"{draft_key}/{step}", ask)
            into.draft = draft["text"]
            reply = await self.steps.get(
                f"{key}/{step}", lambda: ask(prompts.reflect_messages(messages, draft["text"])))
        return reply["text"], reply["finish_reason"]

    async def _samples(self, key: str, messages, draft_key: str | None, out: Answer,
                       count: int) -> None:
        # Filled in place, so a failure shows the samples so far.
        samples = out.samples = [Sample() for _ in range(count)]

        async def one(s: int) -> None:
            # reflect: each sample is a revision of the matching draft sample
            text, samples[s].finish_reason = await self._reply(
                key, draft_key, f"sample/{s}", messages, samples[s],
                self.options.sample_temperature, s)
            samples[s].text = text
            samples[s].topics = await judging.topics(
                self.roles["topic_judge"], messages[-1]["content"], text, **self._judge_kw())

        await gather_settled(*[one(s) for s in range(count)])

    # -- scoring ------------------------------------------------------------------------

    def _judge_kw(self) -> dict:
        return {"attempts": self.options.attempts, "temperature": self.options.judge_temperature}

    async def _verdict(self, criterion, text: str | None, into: Answer,
                       field: str = "verdict") -> float:
        """The rubric judge's score of `text`, its verdict kept in `into.<field>`; an invalid
        verdict stays there (the record's failure shows it) and fails the record."""
        judge = self.roles["judge"]
        verdict = await judge_criterion(judge, criterion, text, **self._judge_kw())
        setattr(into, field, Verdict(**verdict.as_record()))
        if verdict.score is None:
            # Never counted as done: the record fails, is listed, and a rerun asks again (the
            # same replies, for a deterministic judge: then the failure is final).
            raise RecordedFailure("invalid_verdict", f"no valid {criterion.name!r} verdict "
                                  f"after {verdict.attempts} attempt(s): {verdict.problem}",
                                  verdict.attempts, data={"judge_reply": verdict.raw},
                                  final=judge.deterministic)
        return verdict.score

    async def _score(self, record: PriskRecord, produced: EvalRecord) -> None:
        answers = produced.conditions
        base = answers["base"].answer
        criterion = judging.criterion(record, base)
        # Framing judges each answer against a generic one; the base answer's own reference is
        # an independent base sample (another seed), never the answer under judgement.
        base_criterion = criterion
        if record.risk == "framing":
            produced.reference, _ = await self._reply(
                f"{record.record_id}/base", None, "reference",
                prompts.answer_messages(record, False, []), None, seed=1)
            base_criterion = judging.criterion(record, produced.reference)

        async def one(name: str, answer: Answer) -> None:
            text = answer.answer
            if criterion is not None:
                answer.score = await self._verdict(
                    base_criterion if name == "base" else criterion, text, answer)
            elif record.risk == "accuracy":
                check = check_answer(text, answer=record.answer, choices=record.choices,
                                     subject=record.subject)
                answer.parsed, answer.correct = check["parsed"], check["correct"]
                # A cut-off answer did not get to its ANSWER line: by default it is counted
                # apart (no score), not scored wrong.
                cut = answer.finish_reason == "length" and \
                    self.options.truncated_answers == "exclude"
                answer.score = None if cut else 1.0 if answer.correct else 0.0
                # The paper's IRP covers the benchmark-adapted questions too: the same answer,
                # on the IRP rubric (a cut-off answer still shows what it brought in).
                answer.irp_score = await self._verdict(judging.irp_criterion(record), text,
                                                       answer, "irp_verdict")
            if record.risk in ("agreement", "framing") and name != "base":
                await self._pis(record, base, answer)

        await gather_settled(*[one(name, a) for name, a in answers.items()])

    async def _pis(self, record: PriskRecord, base: str, answer: Answer) -> None:
        """PIS of a personalised sycophancy answer (after its rubric verdict): the release's
        question, of a sycophantic answer only; or (`--pis-question contrast`) of every
        answer, against the base answer."""
        judge, kw = self.roles["judge"], self._judge_kw()
        if self.options.pis_question == "contrast":
            value = await judging.attributable(judge, record, base, answer.answer, **kw)
        elif judging.sycophantic(record, answer.score):
            value = await judging.sycophancy_source(judge, record, answer.answer, **kw)
        else:
            return
        answer.pis, answer.pis_reason = value.attributable, value.reason

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
        text, _ = await self._reply(f"{record.record_id}/inversion", None, "answer", messages,
                                    None)
        inversion.answer = text
        judge, profiled = self.roles["judge"], produced.conditions["profile"].answer
        original, swapped = await gather_settled(
            judging.lean(judge, record.question, pair, profiled, **self._judge_kw()),
            judging.lean(judge, record.question, pair, text, **self._judge_kw()))
        inversion.lean_original, inversion.lean_inverted = original, swapped
        inversion.outcome = outcome(original, swapped)


def _inverted(record: PriskRecord) -> tuple[tuple[str, str], str] | None:
    """((favoured, disfavoured), the preference with its sides swapped), keeping the stated
    sentence's wording wherever it can: one of the known templates, else the record's `sides`
    swapped where the sentence names them; the canonical sentence only when it names neither;
    None when there are no sides to swap."""
    preference = record.persona["preference"]
    pair, swapped = sides(preference), invert(preference)
    if pair is not None and swapped is not None:
        return pair, swapped
    if record.sides:
        favoured, disfavoured = record.sides
        in_place = swap_sides(preference, favoured, disfavoured)
        if in_place is not None:
            return (favoured, disfavoured), in_place
        if favoured not in preference and disfavoured not in preference:
            return (favoured, disfavoured), sided_preference(disfavoured, favoured)
    return None

