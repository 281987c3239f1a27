"""The deterministic test double: replies chosen by rules over the last user message."""

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from personalens.errors import InputError
from personalens.models.completion import Completion, Message, Usage
from personalens.models.providers.schema_instance import schema_instance, word_strings

Reply = str | Callable[[list[Message], dict[str, Any]], "str | Completion"]


class ScriptedProvider:
    """First rule whose regex matches the last user message wins; else the default reply.

    A reply may be a callable taking the messages and the request params (response_format,
    temperature, ...); it may raise `TransientModelError` or `PermanentModelError` to script
    faults, or return a whole `Completion` to script its finish reason (a cut-off reply).
    Text replies finish with "stop".
    """

    endpoint = "scripted"
    deterministic = True
    in_process = True
    default_concurrency = 8

    def __init__(self, rules: list[tuple[str, Reply]] | None = None,
                 default: Reply = "I don't know.", *, keep_calls: bool = True,
                 constrains_output: bool = False, answers_schemas: bool = False):
        # With answers_schemas (the CLI's bare `scripted`), a structured request that no rule
        # matches gets a valid instance of its schema instead of the default text.
        self.answers_schemas = answers_schemas
        # With constrains_output, the request's `grammar` reaches the replies' params, as it
        # reaches llama.cpp: tests of grammar-constrained paths read it there.
        self.constrains_output = constrains_output
        self.rules = [(re.compile(pattern, re.S), reply) for pattern, reply in rules or []]
        self.default = default
        # Tests read the calls back; a CLI run keeps none, so its memory does not grow with
        # the number of requests.
        self.keep_calls = keep_calls
        self.calls: list[list[Message]] = []

    async def send(self, messages: list[Message], params: dict[str, Any]) -> Completion:
        if self.keep_calls:
            self.calls.append(list(messages))
        last_user = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
        reply = next((r for pattern, r in self.rules if pattern.search(last_user)), None)
        if reply is None and self.answers_schemas and _schema(params) is not None:
            reply = json.dumps(schema_instance(_schema(params), word_strings(last_user)))
        reply = self.default if reply is None else reply
        text = reply(messages, params) if callable(reply) else reply
        if isinstance(text, Completion):
            return text
        words = sum(len(m["content"].split()) for m in messages)
        return Completion(text=text, usage=Usage(words, len(text.split())), finish_reason="stop")


def _schema(params: dict[str, Any]) -> dict | None:
    return ((params.get("response_format") or {}).get("json_schema") or {}).get("schema")


def load_rules(path: Path, *, keep_calls: bool = True) -> ScriptedProvider:
    """Rules from a JSON file: {"rules": [{"pattern": regex, "reply": text}], "default": text}."""
    where = str(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("scripted rules file not found", where=where) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"not valid UTF-8 JSON ({exc})", where=where) from None
    if not isinstance(data, dict) or not isinstance(data.get("rules", []), list):
        raise InputError('expected {"rules": [...], "default": "..."}', where=where)
    rules = []
    for i, rule in enumerate(data.get("rules", [])):
        if not (isinstance(rule, dict) and isinstance(rule.get("pattern"), str)
                and isinstance(rule.get("reply"), str)):
            raise InputError("needs string fields 'pattern' and 'reply'", where=f"{where} rule {i}")
        try:
            re.compile(rule["pattern"])
        except re.error as exc:
            raise InputError(f"bad regex ({exc})",
                             where=f"{where} rule {i} field 'pattern'") from None
        rules.append((rule["pattern"], rule["reply"]))
    default = data.get("default", "I don't know.")
    if not isinstance(default, str):
        raise InputError("must be a string", where=f"{where} field 'default'")
    return ScriptedProvider(rules, default, keep_calls=keep_calls)


def validate(name: str) -> None:
    """`scripted` takes no file; `scripted:<rules.json>` must be a readable rules file."""
    if name:
        load_rules(Path(name))


def build(name: str, settings) -> ScriptedProvider:
    if name:
        return load_rules(Path(name), keep_calls=False)
    return ScriptedProvider(keep_calls=False, answers_schemas=True)
