"""personalens's own models as an Inspect model provider: `--model personalens/<spec>`.

`personalens/smollm2-135m` is the bundled offline model (llama.cpp in-process, no network, no
key); `personalens/local/<path.gguf>` any GGUF file; `personalens/scripted` and
`personalens/scripted:<rules.json>` the deterministic test double. Each runs through
`personalens.models` exactly as in a personalens command (same provider, same params).
"""

from typing import Any

from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from personalens.inspect_tasks.generation import to_messages, to_params
from personalens.models import DEFAULT_MODEL, ModelSettings

PROVIDER = "personalens"
# Completion.finish_reason -> Inspect's stop reason.
_STOP = {"stop": "stop", "length": "max_tokens"}


def personalens_spec(model_name: str) -> str:
    """The personalens spec an Inspect model name stands for: `smollm2-135m` is the bundled
    model's short name; anything else is a personalens spec as it is."""
    return DEFAULT_MODEL if model_name == DEFAULT_MODEL.split("/")[1] else model_name


class PersonalensModelAPI(ModelAPI):
    """One personalens ChatModel behind Inspect's model interface (text in, text out)."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig | None = None, **model_args: Any):
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
        # Inspect has its own response cache (--cache): ours stays out of the way.
        settings = ModelSettings(spec=personalens_spec(model_name), use_cache=False)
        settings.validate_spec()
        self.chat = settings.load("target")

    async def generate(self, input: list[ChatMessage], tools: list[ToolInfo],
                       tool_choice: ToolChoice, config: GenerateConfig) -> ModelOutput:
        completion = await self.chat.complete(to_messages(input), **to_params(config))
        output = ModelOutput.from_content(model=self.model_name, content=completion.text,
                                          stop_reason=_STOP.get(completion.finish_reason or "",
                                                                "unknown"))
        usage = completion.usage
        output.usage = ModelUsage(input_tokens=usage.prompt_tokens,
                                  output_tokens=usage.completion_tokens,
                                  total_tokens=usage.prompt_tokens + usage.completion_tokens)
        return output

    def max_connections(self) -> int:
        return self.chat.concurrency

    async def aclose(self) -> None:
        await self.chat.aclose()


@modelapi(name=PROVIDER)
def personalens_models() -> type[ModelAPI]:
    return PersonalensModelAPI
