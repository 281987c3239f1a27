"""One request's generation settings in both vocabularies: personalens's OpenAI-style params
(`max_tokens`, `temperature`, `seed`, `stop`, `response_format`, llama.cpp's `grammar`) and
Inspect's `GenerateConfig`.

The bridge to Inspect models converts one way and the personalens model provider the other, so
a request crosses Inspect and comes back as the params the lens sent.
"""

from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    ResponseSchema,
)
from inspect_ai.util import JSONSchema

from personalens.models import Message

# params key -> GenerateConfig field, for the settings both sides name alike.
_SAME = {"max_tokens": "max_tokens", "temperature": "temperature", "seed": "seed",
         "top_p": "top_p", "stop": "stop_seqs"}
GRAMMAR = "grammar"  # llama.cpp's GBNF constraint: no Inspect setting of its own
_MESSAGE = {"system": ChatMessageSystem, "user": ChatMessageUser,
            "assistant": ChatMessageAssistant}


def to_config(params: dict[str, Any]) -> GenerateConfig:
    """GenerateConfig for a lens's params; a param Inspect has no field for is refused, so no
    setting of the lens's request is dropped silently."""
    unknown = set(params) - {*_SAME, "response_format", GRAMMAR}
    if unknown:
        raise ValueError(f"no Inspect setting for the params {sorted(unknown)}")
    config = {field: params[key] for key, field in _SAME.items() if key in params}
    if config.get("stop_seqs") is not None and isinstance(config["stop_seqs"], str):
        config["stop_seqs"] = [config["stop_seqs"]]
    schema = (params.get("response_format") or {}).get("json_schema")
    if schema:
        config["response_schema"] = ResponseSchema(
            name=schema["name"], json_schema=JSONSchema.model_validate(_inlined(schema["schema"])))
    if GRAMMAR in params:
        # Sent only to a model that decodes under a grammar (personalens's own, which takes it
        # back in `to_params`): ChatModel adds it only when the provider says it can.
        config["extra_body"] = {GRAMMAR: params[GRAMMAR]}
    return GenerateConfig(**config)


def to_params(config: GenerateConfig) -> dict[str, Any]:
    """The lens's params back from an Inspect GenerateConfig (what the lens's model takes)."""
    params = {key: getattr(config, field) for key, field in _SAME.items()
              if getattr(config, field) is not None}
    if config.response_schema is not None:
        params["response_format"] = {"type": "json_schema", "json_schema": {
            "name": config.response_schema.name,
            "schema": config.response_schema.json_schema.model_dump(exclude_none=True)}}
    if GRAMMAR in (config.extra_body or {}):
        params[GRAMMAR] = config.extra_body[GRAMMAR]
    return params


def to_chat(messages: list[Message]) -> list[ChatMessage]:
    return [_MESSAGE[m["role"]](content=m["content"]) for m in messages]


def to_messages(messages: list[ChatMessage]) -> list[Message]:
    return [{"role": m.role, "content": m.text} for m in messages]


def _inlined(schema: dict) -> dict:
    """The schema with its `$defs` references inlined: Inspect's JSONSchema has no `$defs`."""
    from inspect_ai.util._json import resolve_schema_references
    return resolve_schema_references(dict(schema))
