"""A scripted generator that answers any JSON-schema request with a valid, deterministic object.

Strings are short words derived from the prompt, so different people get different values; when
the prompt names a fact to reveal ("... -> VALUE."), the first string field carries VALUE,
unless VALUE contains "hidden" (to exercise the fallback path).
"""

import json
import re

from personalens.models import ChatModel
from personalens.models.providers.schema_instance import schema_instance, word_strings
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
        return json.dumps(schema_instance(schema, _revealing(
            reveal.group(1) if reveal and "hidden" not in reveal.group(1) else None,
            word_strings(prompt))))


def _revealing(value: str | None, words):
    """The first string field mentions `value` (the fact to reveal); the rest are words."""
    pending = [value]

    def string(node: dict) -> str:
        if pending[0]:
            text, pending[0] = f"I mention {pending[0]} here", None
            return text
        return words(node)
    return string


def schema_model(fail_when: str | None = None) -> ChatModel:
    double = SchemaDouble(fail_when)
    return ChatModel("scripted", ScriptedProvider(default=double), role="generator")
