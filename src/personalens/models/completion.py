"""The records a model call exchanges: messages in, a completion with its token usage out."""

from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict


class Message(TypedDict):
    role: str
    content: str


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True)
class Completion:
    text: str
    usage: Usage = field(default_factory=Usage)
    raw: dict[str, Any] | None = None
    cached: bool = False
    # Why decoding stopped, as the server says it: "stop", "length" (cut off at max_tokens or
    # the context), ...; None when a server does not say.
    finish_reason: str | None = None

    @property
    def truncated(self) -> bool:
        """True when the reply was cut off by a token limit rather than ended by the model."""
        return self.finish_reason == "length"


class Provider(Protocol):
    """One backend: sends a request once, raising `TransientModelError` for retryable faults."""

    endpoint: str  # what concurrency limits are shared by (a base URL, a model file)
    default_concurrency: int
    # Whether `send` honours a `grammar` param (GBNF, llama.cpp's constrained decoding). A
    # provider without the attribute does not, and never receives one.

    async def send(self, messages: list[Message], params: dict[str, Any]) -> Completion: ...
