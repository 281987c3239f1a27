"""A multi-turn conversation between a target model and a simulated user.

The target either asks a question or gives its final answer each turn; a `TurnFormat` (the
lens's wire format) reads which. The runner holds the question budget: with `exact`, the target
must ask exactly `questions` questions and then answer; otherwise at most that many. A turn
that breaks the format (or the budget) is asked again with a one-line correction, then recorded
as a `protocol` failure. Every turn and every user reply is a step of the run (`steps.get`), so
a killed conversation resumes at the turn it reached.
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


class Steps(Protocol):
    """The run's step store (`runs.StepStore`): values recorded under a key, replayed on rerun."""

    async def get(self, key: str, compute: Callable[[], Awaitable[Any]]) -> Any: ...


class _NoSteps:
    async def get(self, key: str, compute: Callable[[], Awaitable[Any]]) -> Any:
        return await compute()


class ProtocolFailure(RecordedFailure):
    def __init__(self, message: str, attempts: int, data: dict | None = None):
        super().__init__("protocol", message, attempts, data)


@dataclass
class SimulatedUser:
    """A chat model playing the user: it sees its own instructions (`system`) and the questions,
    and replies in plain text. Its side of the history is the target's questions as user turns."""

    model: ChatModel
    system: str
    temperature: float = 0.0
    attempts: int = 3
    max_tokens: int = 300

    async def reply(self, asked: list[str], answers: list[str]) -> str:
        messages: list[Message] = [{"role": "system", "content": self.system}]
        for question, answer in zip(asked, [*answers, None], strict=False):
            messages.append({"role": "user", "content": question})
            if answer is not None:
                messages.append({"role": "assistant", "content": answer})
        for attempt in range(self.attempts):
            completion = await self.model.complete(
                messages, accept=lambda t: bool(t.strip()), temperature=self.temperature,
                seed=attempt, max_tokens=self.max_tokens)
            if completion.text.strip():
                return completion.text.strip()
        raise RecordedFailure("user_reply", f"the simulated user gave {self.attempts} empty "
                                            "replies", self.attempts)


@dataclass
class DialogueResult:
    turns: list[dict]  # per target turn: {action, text, raw, attempts, rejected, reply?}
    final: str  # the final answer, wrapper stripped

    @property
    def questions(self) -> list[str]:
        return [t["text"] for t in self.turns if t["action"] == "ask"]


async def run_dialogue(target: ChatModel, opening: list[Message], user: SimulatedUser,
                       turn_format: TurnFormat, *, questions: int, exact: bool = False,
                       temperature: float = 0.0, max_tokens: int = 1024, attempts: int = 3,
                       key: str = "dialogue", steps: Steps | None = None) -> DialogueResult:
    """Converse until the target answers; raises `ProtocolFailure` when a turn stays broken.

    At most `questions` question turns and one answer: once the budget is spent the turn must
    be the answer, so the loop cannot run longer.
    """
    steps = steps or _NoSteps()
    messages = list(opening)
    turns: list[dict] = []  # every turn but the last is a question with its reply
    for index in range(questions + 1):
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
        reply = await steps.get(f"{key}/user/{index}",
                                lambda q=asked, r=replies: user.reply(q, r))
        turns.append({**turn, "reply": reply})
        messages.append({"role": "user", "content": reply})
    raise AssertionError("unreachable: the last allowed turn must be the answer")


async def _target_turn(target: ChatModel, messages: list[Message], turn_format: TurnFormat, *,
                       must: Action | None, temperature: float, attempts: int, turns: list[dict],
                       seed: int, max_tokens: int) -> dict:
    tries = list(messages)
    rejected: list[dict] = []
    for attempt in range(attempts):
        completion = await target.complete(tries, temperature=temperature,
                                           seed=seed * 100 + attempt, max_tokens=max_tokens)
        try:
            parsed = turn_format.parse(completion.text)
            if must is not None and parsed.action != must:
                wanted = "a question" if must == "ask" else "the final answer"
                raise FormatBreak(f"the turn must be {wanted}")
        except FormatBreak as exc:
            rejected.append({"raw": completion.text, "problem": str(exc)})
            tries = [*tries, {"role": "assistant", "content": completion.text},
                     {"role": "user", "content": turn_format.correction(str(exc), must)}]
            continue
        return {"action": parsed.action, "text": parsed.text, "raw": completion.text,
                "attempts": attempt + 1, "rejected": rejected}
    raise ProtocolFailure(f"turn {seed} broke the format {attempts} times "
                          f"(last: {rejected[-1]['problem']})", attempts,
                          {"turns": turns, "rejected": rejected})
