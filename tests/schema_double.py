"""A scripted generator that answers any JSON-schema request with a valid, deterministic object.

Strings are short words derived from the prompt, so different people get different values; when
the prompt names a fact to reveal ("... -> VALUE."), the first string field carries VALUE,
unless VALUE contains "hidden" (to exercise the fallback path).
"""

import hashlib
import json
import re

from personalens.models import ChatModel
from personalens.models.providers.scripted import ScriptedProvider

_REVEAL = re.compile(r"-> (.+?)\.(?: |$)")


class SchemaDouble:
    def __init__(self, fail_when: str | None = None):
        self.fail_when = fail_when
        self.prompts: list[str] = []

    def __call__(self, messages, params) -> str:
        prompt = messages[-1]["content"] if messages[-1]["role"] == "user" else ""
        self.prompts.append(prompt)
        # Fail the request and its repair turn alike: the whole exchange mentions the trigger.
        if self.fail_when and any(self.fail_when in m["content"] for m in messages):
            return "not json"
        schema = params["response_format"]["json_schema"]["schema"]
        reveal = _REVEAL.search(prompt)
        state = {"reveal": reveal.group(1) if reveal and "hidden" not in reveal.group(1)
                 else None, "n": 0, "seed": hashlib.sha256(prompt.encode()).hexdigest()[:6]}
        return json.dumps(_instance(schema, schema.get("$defs", {}), state))


def _instance(node, defs, state):
    if "$ref" in node:
        return _instance(defs[node["$ref"].split("/")[-1]], defs, state)
    if "anyOf" in node:
        return _instance(node["anyOf"][0], defs, state)
    if "enum" in node:
        return node["enum"][0]
    if "const" in node:
        return node["const"]
    kind = node.get("type")
    if kind == "object":
        return {k: _instance(v, defs, state) for k, v in node.get("properties", {}).items()}
    if kind == "array":
        count = max(node.get("minItems", 1), 1)
        return [_instance(node["items"], defs, state) for _ in range(count)]
    if kind == "integer":
        return max(node.get("minimum", 0), 30)
    if kind == "boolean":
        return True
    if state["reveal"]:
        text, state["reveal"] = f"I mention {state['reveal']} here", None
        return text
    state["n"] += 1
    return f"w{state['seed']}{state['n']}"[: node.get("maxLength", 60)]


def schema_model(fail_when: str | None = None) -> ChatModel:
    double = SchemaDouble(fail_when)
    return ChatModel("scripted", ScriptedProvider(default=double), role="generator")
