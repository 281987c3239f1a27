"""A valid instance of a JSON schema, made without a model: what the `scripted` double answers
to a structured request, so `generate --model scripted` writes a tiny valid population for free.

Deterministic: strings are short words derived from the prompt, so two prompts get different
values and one prompt always the same. Covers the subset of JSON Schema the lenses request
(objects, arrays with minItems, enum/const, anyOf, $ref to $defs, strings with maxLength,
integers with minimum, numbers, booleans).
"""

import hashlib
from collections.abc import Callable
from typing import Any

Strings = Callable[[dict], str]  # a string schema node -> the string to put there


def schema_instance(schema: dict, strings: Strings) -> Any:
    return _instance(schema, schema.get("$defs", {}), strings)


def word_strings(prompt: str) -> Strings:
    """Strings "w<6 hex of the prompt><n>": distinct per field, stable per prompt."""
    seed = hashlib.sha256(prompt.encode()).hexdigest()[:6]
    count = [0]

    def string(node: dict) -> str:
        count[0] += 1
        return f"w{seed}{count[0]}"[: node.get("maxLength", 60)]
    return string


def _instance(node: dict, defs: dict, strings: Strings) -> Any:
    if "$ref" in node:
        return _instance(defs[node["$ref"].split("/")[-1]], defs, strings)
    if "anyOf" in node:
        return _instance(node["anyOf"][0], defs, strings)
    if "enum" in node:
        return node["enum"][0]
    if "const" in node:
        return node["const"]
    kind = node.get("type")
    if kind == "object":
        return {k: _instance(v, defs, strings) for k, v in node.get("properties", {}).items()}
    if kind == "array":
        count = max(node.get("minItems", 1), 1)
        return [_instance(node["items"], defs, strings) for _ in range(count)]
    if kind == "integer":
        return max(node.get("minimum", 0), 30)
    if kind == "number":
        return float(max(node.get("minimum", 0), 1))
    if kind == "boolean":
        return True
    return strings(node)
