"""JSON replies whose free-text fields a grammar-constrained model must keep short.

The shared rubric judge (models/rubric_judge.py) asks for `{"score", "justification"}` with no
bound on the justification: a small local model decoding under the schema can write it until
`max_tokens` cuts the JSON off, and the verdict is invalid. For a model that decodes under a
grammar (llama.cpp) this wrapper adds a maxLength to every unbounded string of a request's JSON
schema, so the object always closes within the token cap. Any other model's request is passed
on untouched, so an API model's wire format (and cache key) does not change.
"""

import copy
from typing import Any

from personalens.models import ChatModel

JUSTIFICATION_CHARS = 300  # the judge's max_tokens is 400: the closed object always fits


def bounded_schema(schema: dict, chars: int) -> dict:
    """A copy of a JSON schema with `maxLength: chars` on each string that has no bound."""
    schema = copy.deepcopy(schema)

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "string" and "maxLength" not in node and "enum" not in node:
                node["maxLength"] = chars
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(schema)
    return schema


class BoundedReplies:
    """`model` with bounded free text in its JSON replies when it decodes under a grammar;
    everything else (role, ledger, spec, aclose, ...) is the model's own."""

    def __init__(self, model: ChatModel, chars: int = JUSTIFICATION_CHARS):
        self._model = model
        self._chars = chars

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    async def complete(self, messages, accept=None, grammar=None, **params):
        response_format = params.get("response_format")
        if self._model.constrains_output and isinstance(response_format, dict) and \
                response_format.get("type") == "json_schema":
            inner = response_format["json_schema"]
            params = {**params, "response_format": {**response_format, "json_schema": {
                **inner, "schema": bounded_schema(inner["schema"], self._chars)}}}
        return await self._model.complete(messages, accept=accept, grammar=grammar, **params)
