"""Scripted models that play target, simulated user and judge for the prefdisco tests.

The behaviour of each role is a plain function of the messages, so a test states exactly what
every role says; `install` makes `ModelSettings.load` build these instead of real models.
"""

import json
import re
from collections.abc import Callable

from personalens.models import ChatModel
from personalens.models.providers.scripted import ScriptedProvider


def system_of(messages: list[dict]) -> str:
    return next((m["content"] for m in messages if m["role"] == "system"), "")


def judge_by_condition(scores: dict[str, dict[str, int]]) -> Callable:
    """Judge: the score of a criterion depends on which marker the graded response holds."""
    def reply(messages, params):
        user = messages[-1]["content"]
        criterion = re.search(r"Criterion: (\S+)", user).group(1)
        response = user.split("<<<", 1)[1]
        marker = re.search(r"\[(\w+)\]", response).group(1)
        return json.dumps({"score": scores[marker][criterion], "justification": f"{marker}"})
    return reply


def target(questions: int = 1, answer: str = "B") -> Callable:
    """Target: baseline and oracle answer at once; discovery asks `questions` then answers."""
    def reply(messages, params):
        system = system_of(messages)
        if "###ACTION###" not in system:
            marker = "oracle" if "preferences for this question" in system else "baseline"
            return f"[{marker}] Working it out.\nANSWER: {answer}"
        asked = sum(1 for m in messages if m["role"] == "assistant")
        if asked < questions:
            return ("###ACTION###: ask_question\n###RESPONSE###: Do you like visual diagrams? "
                    "And short steps?")
        return f"###ACTION###: 'final_answer'\n###RESPONSE###: [discovery] Done.\nANSWER: {answer}"
    return reply


def passive_user(messages, params) -> str:
    return "I like visual diagrams and sketches."


class Roles:
    """One scripted model per spec: `scripted-target`, `scripted-user`, `scripted-judge`..."""

    def __init__(self, **behaviours: Callable):
        self.behaviours = behaviours
        self.providers: dict[str, ScriptedProvider] = {}

    def load(self, spec, **kwargs):
        name = spec.split("/")[-1]
        provider = self.providers.setdefault(name, ScriptedProvider(
            default=self.behaviours[name]))
        return ChatModel(spec, provider, role=kwargs.get("role", "target"),
                         ledger=kwargs.get("ledger"))

    def install(self, monkeypatch) -> "Roles":
        import personalens.models.settings as settings_module
        monkeypatch.setattr(settings_module, "load_model", self.load)
        return self
