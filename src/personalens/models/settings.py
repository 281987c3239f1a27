"""One role's model and endpoint: what every place that builds a model takes.

A command has roles (target, generator, judge, user, reranker, corrector); each role gets one
`ModelSettings`. Endpoint settings a role does not set fall back to the command's main role, so
`--base-url` alone points every role at one server.

`EndpointSettings` declares each endpoint setting once — its type, default, bounds and help —
and the CLI's flags (`--timeout`, `--judge-timeout`, ...) are made from its fields.
"""

import pydantic

from personalens.models.chat_model import ChatModel
from personalens.models.response_cache import ResponseCache
from personalens.models.retry import RetryPolicy
from personalens.models.spec import provider_kind, resolve, validate_spec
from personalens.paths import cache_dir
from personalens.runs.usage import UsageLedger


class EndpointSettings(pydantic.BaseModel):
    """Where and how a model is called: none of these can change a record."""

    model_config = pydantic.ConfigDict(frozen=True, extra="forbid")

    base_url: str | None = pydantic.Field(default=None, description=(
        "Base URL of an OpenAI-compatible server (vLLM, SGLang, Ollama, llama.cpp, ...)."))
    api_key_env: str = pydantic.Field(default="OPENAI_API_KEY", description=(
        "Environment variable holding the API key (default OPENAI_API_KEY)."))
    concurrency: int | None = pydantic.Field(default=None, ge=1, description=(
        "Maximum requests in flight to the endpoint (default: adaptive)."))
    max_attempts: int = pydantic.Field(default=6, ge=1, description=(
        "Attempts per model call before the item is recorded as failed (default 6)."))
    timeout: float = pydantic.Field(default=120.0, gt=0, description=(
        "Seconds before an HTTP model call times out and is retried (default 120)."))


class ModelSettings(EndpointSettings):
    spec: str
    use_cache: bool = True

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
        endpoint = self.model_dump(include=set(EndpointSettings.model_fields))
        return load_model(self.spec, role=role, ledger=ledger, use_cache=self.use_cache,
                          **endpoint)


def load_model(spec: str, *, role: str = "target", ledger: UsageLedger | None = None,
               use_cache: bool = True, **endpoint) -> ChatModel:
    """A model from its spec and endpoint settings (`EndpointSettings`' fields), its provider
    built by the provider registry (`models.spec`)."""
    settings = ModelSettings(spec=spec, use_cache=use_cache, **endpoint)
    settings.validate_spec()
    kind, name = provider_kind(spec)
    cache = ResponseCache(cache_dir() / "responses.sqlite") if use_cache else None
    return ChatModel(spec, resolve(kind.build)(name, settings), role=role, ledger=ledger,
                     cache=cache, retry=RetryPolicy(max_attempts=settings.max_attempts),
                     concurrency=settings.concurrency)
