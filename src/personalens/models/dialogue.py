"""A multi-turn conversation between a target model and a simulated user.

The target either asks a question or gives its final answer each turn; a `TurnFormat` (the
lens's wire format) reads which. The runner holds the question budget: with `exact`, the target
must ask exactly `questions` questions and then answer; otherwise at most that many. With
`answer_turn=False` the dialogue ends when the budget is spent, without asking for an answer
turn (the caller then asks for the answer its own way, as PrefDisco's release does). A target
that decodes under a grammar (a local llama.cpp model) is sent the format's grammar for the
turn, with the action the budget requires, so it cannot break the format; an API model's
request is unchanged. A turn that breaks the format (or the budget) is repaired when the format
can do so without asking (`TurnFormat.repair`), else asked again with a one-line correction,
then recorded as a `protocol` failure carrying the conversation so far; with a deterministic
target that failure is final (a rerun would get the same replies). Every turn and every user
reply is a step of the run (`steps.get`), so a killed conversation resumes at the turn it
reached.
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from personalens.models.chat_model import ChatModel
from personalens.models.completion import Message
from personalens.runs.failures import RecordedFailure

Action = Literal["ask", "final"]


class FormatBreak(ValueError):
    """The turn does not follow the wire format; the message says how."""


@dataclass(frozen=True)
class ParsedTurn:
    action: Action
    text: str  # the turn's content with the protocol wrapper stripped


class TurnFormat(Protocol):
    def parse(self, reply: str) -> ParsedTurn: ...

    def correction(self, problem: str, must: Action | None) -> str:
        """The user message that asks again after a broken turn."""

    def grammar(self, must: Action | None) -> str | None:
        """GBNF for one turn (only `must` allowed, when given), or None; sent only to a model
        that decodes under a grammar."""

    def repair(self, reply: str, must: Action | None) -> ParsedTurn | None:
        """The turn read from a broken reply when that needs no guess, else None."""


class Steps(Protocol):
    """The run's step store (`runs.StepStore`): values recorded under a key, replayed on rerun."""

    async def get(self, key: str, compute: Callable[[], Awaitable[Any]]) -> Any: ...


class _NoSteps:
    async def get(self, key: str, compute: Callable[[], Awaitable[Any]]) -> Any:
        return await compute()


class ProtocolFailure(RecordedFailure):
    def __init__(self, message: str, attempts: int, data: dict | None = None, *,
                 final: bool = False):
        super().__init__("protocol", message, attempts, data, final=final)


@dataclass
class SimulatedUser:
    """A chat model playing the user: it sees its own instructions (`system`) and the questions,
    and replies in plain text. Its side of the history is the target's questions as user turns."""

    model: ChatModel
    system: str
    temperature: float = 0.0
    attempts: int = 3
    max_tokens: int = 300
    grammar: str | None = None  # GBNF of a reply, for a model that decodes under one

    async def reply(self, asked: list[str], answers: list[str]) -> str:
        messages: list[Message] = [{"role": "system", "content": self.system}]
        for question, answer in zip(asked, [*answers, None], strict=False):
            messages.append({"role": "user", "content": question})
            if answer is not None:
                messages.append({"role": "assistant", "content": answer})
        for attempt in range(self.attempts):
            completion = await self.model.complete(
                messages, accept=lambda t: bool(t.strip()), grammar=self.grammar,
                temperature=self.temperature, seed=attempt, max_tokens=self.max_tokens)
            if completion.text.strip():
                return completion.text.strip()
        raise RecordedFailure("user_reply", f"the simulated user gave {self.attempts} empty "
                                            "replies", self.attempts,
                              final=self.model.deterministic)


@dataclass
class DialogueResult:
    turns: list[dict]  # per target turn: {action, text, raw, finish_reason, attempts,
    # rejected, repaired?, reply?}
    final: str | None  # the final answer, wrapper stripped; None when the budget ran out first

    @property
    def questions(self) -> list[str]:
        return [t["text"] for t in self.turns if t["action"] == "ask"]


async def run_dialogue(target: ChatModel, opening: list[Message], user: SimulatedUser,
                       turn_format: TurnFormat, *, questions: int, exact: bool = False,
                       temperature: float = 0.0, max_tokens: int = 1024, attempts: int = 3,
                       answer_turn: bool = True, key: str = "dialogue",
                       steps: Steps | None = None) -> DialogueResult:
    """Converse until the target answers; raises `ProtocolFailure` when a turn stays broken.

    At most `questions` question turns and one answer: once the budget is spent the turn must
    be the answer (`answer_turn`) or the dialogue ends unanswered, so the loop cannot run longer.
    """
    steps = steps or _NoSteps()
    messages = list(opening)
    turns: list[dict] = []  # every turn but the last is a question with its reply
    for index in range(questions + 1 if answer_turn else questions):
        must: Action | None = "final" if index == questions else ("ask" if exact else None)
        turn = await steps.get(f"{key}/turn/{index}", lambda m=must, i=index: _target_turn(
            target, messages, turn_format, must=m, temperature=temperature, attempts=attempts,
            turns=turns, seed=i, max_tokens=max_tokens))
        messages.append({"role": "assistant", "content": turn["raw"]})
        if turn["action"] == "final":
            turns.append(turn)
            return DialogueResult(turns, turn["text"])
        asked = [*[t["text"] for t in turns], turn["text"]]
        replies = [t["reply"] for t in turns]
        try:
            reply = await steps.get(f"{key}/user/{index}",
                                    lambda q=asked, r=replies: user.reply(q, r))
        except RecordedFailure as exc:  # the failure keeps the conversation up to the question
            raise _with_turns(exc, [*turns, turn]) from exc
        turns.append({**turn, "reply": reply})
        messages.append({"role": "user", "content": reply})
    if answer_turn:
        raise AssertionError("unreachable: the last allowed turn must be the answer")
    return DialogueResult(turns, None)


async def _target_turn(target: ChatModel, messages: list[Message], turn_format: TurnFormat, *,
                       must: Action | None, temperature: float, attempts: int, turns: list[dict],
                       seed: int, max_tokens: int) -> dict:
    tries = list(messages)
    rejected: list[dict] = []
    grammar = turn_format.grammar(must)
    for attempt in range(attempts):
        completion = await target.complete(tries, grammar=grammar, temperature=temperature,
                                           seed=seed * 100 + attempt, max_tokens=max_tokens)
        try:
            parsed, repaired = _read_turn(turn_format, completion.text, must)
        except FormatBreak as exc:
            rejected.append({"raw": completion.text, "problem": str(exc)})
            tries = [*tries, {"role": "assistant", "content": completion.text},
                     {"role": "user", "content": turn_format.correction(str(exc), must)}]
            continue
        turn = {"action": parsed.action, "text": parsed.text, "raw": completion.text,
                "finish_reason": completion.finish_reason, "attempts": attempt + 1,
                "rejected": rejected}
        return {**turn, "repaired": repaired} if repaired else turn
    raise ProtocolFailure(f"turn {seed} broke the format {attempts} times "
                          f"(last: {rejected[-1]['problem']})", attempts,
                          {"turns": turns, "rejected": rejected}, final=target.deterministic)


def _read_turn(turn_format: TurnFormat, reply: str,
               must: Action | None) -> tuple[ParsedTurn, str | None]:
    """(the turn, what was repaired or None); FormatBreak when it is broken past repair."""
    try:
        parsed, repaired = turn_format.parse(reply), None
    except FormatBreak as exc:
        parsed = turn_format.repair(reply, must)
        if parsed is None:
            raise
        repaired = str(exc)
    if must is not None and parsed.action != must:
        wanted = "a question" if must == "ask" else "the final answer"
        raise FormatBreak(f"the turn must be {wanted}")
    return parsed, repaired


def _with_turns(exc: RecordedFailure, turns: list[dict]) -> RecordedFailure:
    failure = exc.failure
    return RecordedFailure(failure.kind, failure.message, failure.attempts,
                           {**exc.data, "turns": turns}, exc.steps, final=failure.final)
