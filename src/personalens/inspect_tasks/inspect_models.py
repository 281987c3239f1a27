"""Inspect's models as personalens ChatModels: the bridge a lens's code calls through.

A lens asks `models` for completions (`ChatModel.complete`); inside an Inspect task each role's
ChatModel sends through `get_model(role=...)`, so `--model` answers as the target and
`--model-role user=...` / `--model-role judge=...` play the other roles (each defaults to the
target's model, as the lens's roles do). Inspect does the retries, caching and logging: the
ChatModel adds none of its own.
"""

from typing import Any

from inspect_ai.model import get_model

from personalens.inspect_tasks.generation import to_chat, to_config
from personalens.inspect_tasks.model_provider import PersonalensModelAPI
from personalens.models import (
    ChatModel,
    Completion,
    Message,
    ModelSettings,
    PermanentModelError,
    RetryPolicy,
    Usage,
)
from personalens.runs.usage import UsageLedger

# Inspect's stop reasons in the vocabulary of personalens's Completion.finish_reason.
_FINISH = {"stop": "stop", "max_tokens": "length", "model_length": "length",
           "content_filter": "content_filter", "tool_calls": "tool_calls"}


class InspectProvider:
    """A personalens Provider whose backend is the Inspect model of one role.

    When that model is personalens's own (`personalens/smollm2-135m`), the lens sees what the
    model can do, as in its own runs: it decodes under a grammar, has a context of its own and
    is deterministic. Asked inside a sample, as every lens asks.
    """

    default_concurrency = 1024  # Inspect limits connections itself (--max-connections)

    def __init__(self, role: str):
        self.role = role
        self.endpoint = f"inspect:{role}"

    @property
    def constrains_output(self) -> bool:
        return bool(getattr(self._own_model(), "constrains_output", False))

    @property
    def context_tokens(self) -> int | None:
        return getattr(self._own_model(), "context_tokens", None)

    @property
    def deterministic(self) -> bool:
        return bool(getattr(self._own_model(), "deterministic", False))

    def _own_model(self) -> ChatModel | None:
        """The personalens ChatModel behind the role's Inspect model, if it is one."""
        api = get_model(role=self.role).api
        return api.chat if isinstance(api, PersonalensModelAPI) else None

    async def send(self, messages: list[Message], params: dict[str, Any]) -> Completion:
        model = get_model(role=self.role)
        output = await model.generate(to_chat(messages), config=to_config(params))
        if output.error:
            raise PermanentModelError("inspect", output.error)
        usage = output.usage
        return Completion(
            text=output.completion,
            usage=Usage(usage.input_tokens, usage.output_tokens) if usage else Usage(),
            finish_reason=_FINISH.get(output.stop_reason))


class InspectRole(ModelSettings):
    """A role's settings whose model is Inspect's: `spec` names it (the Inspect model name
    when known, for the manifest), and loading it builds the bridge instead of a provider."""

    def validate_spec(self) -> None:
        return None  # Inspect resolved and checked the model already

    def load(self, role: str, ledger: UsageLedger | None = None) -> ChatModel:
        return ChatModel(self.spec, InspectProvider(role), role=role, ledger=ledger, cache=None,
                         retry=RetryPolicy(max_attempts=1))
