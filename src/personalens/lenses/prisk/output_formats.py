"""What prisk asks a model to write in a format: the schema it is asked with, the budget of
tokens its reply may take, and the deterministic repair of a reply before anything is asked again.

A model that decodes under a grammar (llama.cpp in-process, `ChatModel.constrains_output`) is
asked with a *tight* JSON schema it cannot break: a conversation is a fixed number of
{user, assistant} exchanges (so turns alternate by construction, flattened back to the release's
[{role, content}] turns), closed vocabularies are enums, every string and list has a length cap,
and `max_tokens` covers the longest reply the schema allows (`reply_budget`, see WHITESPACE),
so a reply is not cut off mid-JSON. A model that does not constrain its output (an API) is
asked exactly as before: the same schema and `max_tokens`, so its request and cache key do not
change. Replies of either kind are validated by the same pydantic class, whose repair
(`repaired_turns`: empty turns dropped, consecutive turns of one speaker merged) runs before
validation.
"""

import functools
import json
from collections.abc import Callable
from typing import Any, TypeVar

import pydantic

from personalens.models import ChatModel, Completion, Message, complete_structured

T = TypeVar("T", bound=pydantic.BaseModel)

# llama.cpp's own JSON grammar allows up to 22 whitespace characters wherever it allows any
# (`space ::= | " " | "\n"{1,2} [ \t]{0,20}`). The xllamacpp build here compiles schemas with
# llguidance instead, which allows any run of whitespace there: the budget assumes runs of at
# most this length (a model emitting whitespace without end is not bounded by any schema; the
# bundled model writes a newline and a few spaces).
WHITESPACE = 22
# One character of a JSON string is at most 6 bytes of text (`\uXXXX`, or a 4-byte UTF-8
# character), and a token is at least one byte: a string of n characters is at most 6n tokens.
TOKENS_PER_CHAR = 6
ROLES = ("user", "assistant")


# --- tight JSON schemas ------------------------------------------------------------------------

def string(max_length: int, min_length: int = 1) -> dict:
    return {"type": "string", "minLength": min_length, "maxLength": max_length}


def enum(values: list[str] | tuple[str, ...]) -> dict:
    return {"type": "string", "enum": list(values)}


def array(items: dict, min_items: int, max_items: int) -> dict:
    return {"type": "array", "items": items, "minItems": min_items, "maxItems": max_items}


def obj(properties: dict[str, dict]) -> dict:
    """An object with exactly these properties, in this order (llama.cpp keeps the order)."""
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


def reply_budget(schema: dict) -> int:
    """An upper bound on the tokens of any reply `schema` allows (a token is at least a byte);
    ValueError for a schema with an unbounded string or list."""
    return _bytes(schema) + 8  # the end-of-turn token, and some slack


def _bytes(schema: dict) -> int:
    alternatives = schema.get("anyOf") or schema.get("oneOf")
    if alternatives:
        return max(_bytes(s) for s in alternatives)
    if "const" in schema:
        return len(json.dumps(schema["const"]))
    if "enum" in schema:
        return max(len(json.dumps(v)) for v in schema["enum"])
    kind = schema.get("type")
    if kind == "string":
        if "maxLength" not in schema:
            raise ValueError("a tight schema bounds every string (maxLength)")
        return 2 + schema["maxLength"] * TOKENS_PER_CHAR
    if kind == "integer":
        if "minimum" not in schema or "maximum" not in schema:
            raise ValueError("a tight schema bounds every integer")
        return max(len(str(schema["minimum"])), len(str(schema["maximum"])))
    if kind == "boolean":
        return len("false")
    if kind == "array":
        if "maxItems" not in schema:
            raise ValueError("a tight schema bounds every list (maxItems)")
        # "[" ws, then per item: the item, ws, "," ws; then "]" ws
        return 2 + 2 * WHITESPACE + schema["maxItems"] * (_bytes(schema["items"]) + 1
                                                          + 2 * WHITESPACE)
    if kind == "object":
        # "{" ws, then per property: "key" ws ":" ws value ws "," ws; then "}" ws
        return 2 + 2 * WHITESPACE + sum(len(json.dumps(key)) + 2 + _bytes(value)
                                        + 4 * WHITESPACE
                                        for key, value in schema["properties"].items())
    raise ValueError(f"no budget for a schema of type {kind!r}")


@functools.lru_cache(maxsize=256)
def _tightened(schema: type[pydantic.BaseModel], tight: str) -> type[pydantic.BaseModel]:
    """`schema` (same name, same validation) whose JSON schema is `tight`."""
    document = json.loads(tight)

    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict:
        return json.loads(json.dumps(document))

    return type(schema.__name__, (schema,), {"__module__": schema.__module__,
                                             "model_json_schema": classmethod(model_json_schema)})


async def ask_structured(model: ChatModel, messages: list[Message], schema: type[T],
                         tight: Callable[[], dict], max_tokens: int,
                         **params: Any) -> tuple[T, Completion]:
    """`complete_structured`, asked as `model` decodes: a constrained model with `tight()` and
    the budget that covers it; any other model with `schema` and `max_tokens`, as it always
    was."""
    if model.constrains_output:
        schema = _tightened(schema, json.dumps(tight(), sort_keys=False))
        max_tokens = reply_budget(schema.model_json_schema())
    return await complete_structured(model, messages, schema, **params, max_tokens=max_tokens)


def chat(system: str, user: str) -> list[Message]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


# --- conversations -----------------------------------------------------------------------------

TURN_CHARS = 240  # a turn's length cap in the tight schema (a few sentences)


def exchanges_schema(turns: int) -> dict:
    """`turns` turns as ceil(turns / 2) {user, assistant} exchanges (an odd count drops the
    last reply when flattened)."""
    pairs = (turns + 1) // 2
    exchange = obj({"user": string(TURN_CHARS), "assistant": string(TURN_CHARS)})
    return obj({"exchanges": array(exchange, pairs, pairs)})


def repaired_turns(data: Any) -> Any:
    """A reply's conversation as alternating turns, where that needs no guess: exchanges
    flattened, whitespace trimmed, empty turns dropped, consecutive turns of one speaker merged
    into one, and an opening assistant turn dropped (a conversation starts with the user).
    Anything it does not recognise is returned as it is, for validation to reject."""
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except json.JSONDecodeError:
            return data
    if not isinstance(data, dict):
        return data
    if isinstance(data.get("exchanges"), list) and "turns" not in data:
        flat: list = []
        for exchange in data["exchanges"]:
            if not isinstance(exchange, dict):
                return data
            flat += [{"role": role, "content": exchange[role]} for role in ROLES
                     if role in exchange]
        data = {"turns": flat}
    turns = data.get("turns")
    if not isinstance(turns, list) or not all(
            isinstance(t, dict) and t.get("role") in ROLES and isinstance(t.get("content"), str)
            for t in turns):
        return data
    merged: list[dict] = []
    for turn in turns:
        text = turn["content"].strip()
        if not text:
            continue
        if merged and merged[-1]["role"] == turn["role"]:
            merged[-1] = {"role": turn["role"], "content": f"{merged[-1]['content']}\n\n{text}"}
        else:
            merged.append({"role": turn["role"], "content": text})
    while merged and merged[0]["role"] == "assistant":
        merged.pop(0)
    return {**{k: v for k, v in data.items() if k != "turns"}, "turns": merged}
