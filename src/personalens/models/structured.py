"""JSON-schema outputs validated with pydantic, with one repair turn when the reply is invalid."""

import json
import re
import weakref
from typing import Any, TypeVar

import pydantic

from personalens.models.chat_model import ChatModel
from personalens.models.completion import Completion, Message
from personalens.models.failures import ModelCallFailed

T = TypeVar("T", bound=pydantic.BaseModel)

_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)


# Built once per class: pydantic rebuilds it on every call, which was ~40 % of generate's CPU
# at 1,000 people (bench/scaling.py). Weakly keyed, so a class made for one request is freed.
_SCHEMAS: "weakref.WeakKeyDictionary[type, dict[str, Any]]" = weakref.WeakKeyDictionary()


def _json_schema(schema: type[pydantic.BaseModel]) -> dict[str, Any]:
    if schema not in _SCHEMAS:
        _SCHEMAS[schema] = schema.model_json_schema()
    return _SCHEMAS[schema]


def response_format(schema: type[pydantic.BaseModel]) -> dict[str, Any]:
    return {
        "type": "json_schema",
        "json_schema": {"name": schema.__name__, "schema": _json_schema(schema)},
    }


def schema_bounded(chars: int, **field: Any) -> Any:
    """A string field whose JSON schema says maxLength, so a model decoding under the schema
    (llama.cpp) stops there, while validation accepts a longer one (an API model's reply is not
    refused for its length)."""
    return pydantic.Field(json_schema_extra={"maxLength": chars}, **field)


def parse_reply(text: str, schema: type[T]) -> T:
    """Validate a reply, tolerating the Markdown code fence small models like to add."""
    fenced = _FENCE.match(text)
    return schema.model_validate_json(fenced.group(1) if fenced else text)


async def complete_structured(model: ChatModel, messages: list[Message], schema: type[T],
                              regenerations: int = 0, **params: Any) -> tuple[T, Completion]:
    """A validated instance of `schema`, repaired once per try.

    With `regenerations` > 0, a reply that is still invalid after its repair is thrown away and
    asked for afresh (with a different sampling seed) up to that many more times; then
    `ModelCallFailed` is raised.
    """
    for attempt in range(regenerations + 1):
        try:
            return await _repaired(model, messages, schema,
                                   **{**params, "seed": params.get("seed", 0) + attempt})
        except ModelCallFailed as exc:
            if exc.kind != "invalid_structured_output" or attempt == regenerations:
                raise
    raise AssertionError("unreachable: the loop returns or raises")


async def _repaired(model: ChatModel, messages: list[Message], schema: type[T],
                    **params: Any) -> tuple[T, Completion]:
    params = {**params, "response_format": response_format(schema)}

    def valid(text: str) -> bool:
        try:
            parse_reply(text, schema)
        except pydantic.ValidationError:
            return False
        return True

    completion = await model.complete(messages, accept=valid, **params)
    try:
        return parse_reply(completion.text, schema), completion
    except pydantic.ValidationError as exc:
        error = _short(exc)
    repair: list[Message] = [
        *messages,
        {"role": "assistant", "content": completion.text},
        {"role": "user", "content": (
            f"That reply is not valid ({error}). Reply again with only a JSON object "
            f"matching this schema:\n{json.dumps(_json_schema(schema))}")},
    ]
    completion = await model.complete(repair, accept=valid, **params)
    try:
        return parse_reply(completion.text, schema), completion
    except pydantic.ValidationError as exc:
        model.ledger.failure(model.role, "invalid_structured_output")
        raise ModelCallFailed("invalid_structured_output", _short(exc), 2,
                              final=model.deterministic) from exc


def first_error(exc: pydantic.ValidationError) -> tuple[str, str]:
    """(dotted field path, message) of a validation error's first problem."""
    first = exc.errors()[0]
    return ".".join(str(p) for p in first.get("loc", ())), first.get("msg", "invalid")


def _short(exc: pydantic.ValidationError) -> str:
    field, message = first_error(exc)
    return f"{field or 'reply'}: {message}"
