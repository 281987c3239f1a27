"""Scripted models by name, for lens tests: `install` makes `ModelSettings.load` build them.

Each role's behaviour is a plain function of (messages, params), so a test states exactly what
every role says; every call is logged in order.
"""

from collections.abc import Callable

from personalens.models import ChatModel
from personalens.models.providers.scripted import ScriptedProvider


def system_of(messages: list[dict]) -> str:
    return next((m["content"] for m in messages if m["role"] == "system"), "")


class Roles:
    """One scripted model per spec: `scripted-target`, `scripted-user`, `scripted-judge`...

    Every call is logged in `calls` as (name, messages, params), in the order they were made.
    """

    def __init__(self, **behaviours: Callable):
        self.behaviours = behaviours
        self.providers: dict[str, ScriptedProvider] = {}
        self.calls: list[tuple[str, list[dict], dict]] = []

    def of(self, name: str) -> list[tuple[list[dict], dict]]:
        """(messages, params) of every call to the model named `name`."""
        return [(messages, params) for who, messages, params in self.calls if who == name]

    def _logged(self, name: str) -> Callable:
        behaviour = self.behaviours[name]

        def reply(messages, params):
            self.calls.append((name, list(messages), dict(params)))
            return behaviour(messages, params)
        return reply

    def load(self, spec, **kwargs):
        name = spec.split("/")[-1]
        provider = self.providers.setdefault(name, ScriptedProvider(
            default=self._logged(name)))
        return ChatModel(spec, provider, role=kwargs.get("role", "target"),
                         ledger=kwargs.get("ledger"))

    def install(self, monkeypatch) -> "Roles":
        import personalens.models.settings as settings_module
        monkeypatch.setattr(settings_module, "load_model", self.load)
        return self
