"""A command's model roles, once: declared, set from options, loaded, described, closed.

- `Role` declares a role (its spec flag, default and help); a command's options list them.
- `RoleModels` is what the options hold: each role's `ModelSettings` (None where a role has
  no model) and prices. Its identity is each role's spec: where a model is served, how many
  calls run at once and what it costs cannot change a record.
- `RoleSet` is the loaded models: specs validated before anything loads, one `ChatModel` per
  role (a role without settings falls back to `Role.fallback`'s), the manifest's public
  description, and `aclose` closing each distinct model once.
"""

import pydantic

from personalens.models.chat_model import ChatModel
from personalens.models.role import Role
from personalens.models.settings import ModelSettings
from personalens.runs.usage import UsageLedger


class RoleModels(pydantic.BaseModel):
    """Settings per role (None where a role has no spec), the main endpoint, prices."""

    model_config = pydantic.ConfigDict(frozen=True)

    settings: dict[str, ModelSettings | None] = {}
    endpoint: ModelSettings | None = None  # the main role's endpoint, for models named elsewhere
    prices: dict[str, tuple[float, float]] = {}

    @pydantic.model_validator(mode="before")
    @classmethod
    def _from_specs(cls, value):
        """`{"target": "openai/x"}` (role -> spec or settings) is accepted as the settings,
        so Python callers need not spell out `ModelSettings` for a plain spec."""
        if isinstance(value, dict) and not {"settings", "endpoint", "prices"} & set(value):
            return {"settings": {role: ModelSettings(spec=s) if isinstance(s, str) else s
                                 for role, s in value.items()}}
        return value

    def __getitem__(self, role: str) -> ModelSettings | None:
        return self.settings.get(role)

    def identity(self) -> dict[str, str | None]:
        return {role: s.spec if s else None for role, s in self.settings.items()}

    def resolved(self, roles: tuple[Role, ...]) -> dict[str, ModelSettings]:
        """Each declared role's settings, fallbacks applied; roles with none are left out."""
        out: dict[str, ModelSettings] = {}
        for role in roles:
            settings = self.settings.get(role.role)
            if settings is None and role.fallback:
                settings = out.get(role.fallback) or self.settings.get(role.fallback)
            if settings is not None:
                out[role.role] = settings
        return out


class RoleSet:
    """The loaded models of a command's roles. Validates every spec first, so a spec that
    cannot load fails before any model loads or any run directory exists."""

    def __init__(self, settings: dict[str, ModelSettings], ledger: UsageLedger | None = None):
        for one in settings.values():
            one.validate_spec()
        self.settings = settings
        self.models: dict[str, ChatModel] = {role: s.load(role, ledger)
                                             for role, s in settings.items()}

    def __getitem__(self, role: str) -> ChatModel:
        return self.models[role]

    def __contains__(self, role: str) -> bool:
        return role in self.models

    def specs(self) -> dict[str, str]:
        return {role: s.spec for role, s in self.settings.items()}

    def endpoints(self) -> dict[str, dict]:
        """What the manifest records per role: endpoint settings, never a secret."""
        return {role: s.public() for role, s in self.settings.items()}

    async def aclose(self) -> None:
        for model in {id(m): m for m in self.models.values()}.values():
            await model.aclose()
