"""One role's model and endpoint: what every place that builds a model takes.

A command has roles (target, generator, judge, user, reranker, corrector); each role gets one
`ModelSettings`. Endpoint settings a role does not set fall back to the command's main role, so
`--base-url` alone points every role at one server.
"""

import pydantic

from personalens.models.chat_model import ChatModel
from personalens.models.retry import RetryPolicy
from personalens.models.spec import load_model, validate_spec
from personalens.runs.usage import UsageLedger


class ModelSettings(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(frozen=True, extra="forbid")

    spec: str
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"  # the variable's name; the key itself is never stored
    use_cache: bool = True
    concurrency: int | None = pydantic.Field(default=None, ge=1)
    max_attempts: int = pydantic.Field(default=6, ge=1)
    timeout: float = pydantic.Field(default=120.0, gt=0)

    def with_spec(self, spec: str) -> "ModelSettings":
        """The same endpoint settings for another model (a reranker or corrector spec)."""
        return self.model_copy(update={"spec": spec})

    def validate_spec(self) -> None:
        """InputError (one line) now, before anything is written, for a spec that cannot load."""
        validate_spec(self.spec)

    def identity(self) -> str:
        """What a run's identity holds: the model, not where it is served or how fast."""
        return self.spec

    def public(self) -> dict:
        """What the manifest records: no secrets (the key's variable name is not one)."""
        return self.model_dump()

    def load(self, role: str, ledger: UsageLedger | None = None) -> ChatModel:
        return load_model(self.spec, role=role, ledger=ledger, base_url=self.base_url,
                          api_key_env=self.api_key_env, use_cache=self.use_cache,
                          timeout=self.timeout, concurrency=self.concurrency,
                          retry=RetryPolicy(max_attempts=self.max_attempts))
