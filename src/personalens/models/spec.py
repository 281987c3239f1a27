"""Model spec strings -> ChatModel: openai/<name>, local/<name-or-path.gguf>, scripted[:rules]."""

import os
from pathlib import Path
from urllib.parse import urlparse

from personalens.errors import InputError
from personalens.models.chat_model import ChatModel
from personalens.models.providers.local_gguf import LocalGGUFProvider, resolve_gguf
from personalens.models.providers.openai_compatible import OpenAICompatibleProvider
from personalens.models.providers.scripted import ScriptedProvider, load_rules
from personalens.models.response_cache import ResponseCache
from personalens.models.retry import RetryPolicy
from personalens.paths import cache_dir
from personalens.runs.usage import UsageLedger

DEFAULT_MODEL = "local/smollm2-135m"
SPEC_HELP = ("openai/<name> (with --base-url for any OpenAI-compatible server), "
             "local/smollm2-135m, local/<path.gguf>, scripted (a free test double: 'I don't "
             "know.' to text, a valid made-up object to a structured request) or "
             "scripted:<rules.json>")


def validate_spec(spec: str) -> None:
    """Fail fast (before any run directory exists) on a spec that cannot load."""
    kind, _, name = spec.partition("/")
    if spec == "scripted" or spec.startswith("scripted:"):
        if spec.startswith("scripted:"):
            load_rules(Path(spec.removeprefix("scripted:")))
    elif kind == "local" and name:
        resolve_gguf(name)
    elif kind != "openai" or not name:
        raise InputError(f"unknown model spec {spec!r}; expected {SPEC_HELP}")


def load_model(spec: str, *, role: str = "target", ledger: UsageLedger | None = None,
               base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
               use_cache: bool = True, timeout: float = 120.0, concurrency: int | None = None,
               retry: RetryPolicy | None = None) -> ChatModel:
    validate_spec(spec)
    kind, _, name = spec.partition("/")
    if spec.startswith("scripted"):
        provider = (load_rules(Path(spec.removeprefix("scripted:")), keep_calls=False)
                    if spec.startswith("scripted:")
                    else ScriptedProvider(keep_calls=False, answers_schemas=True))
    elif kind == "local":
        provider = LocalGGUFProvider(resolve_gguf(name), slots=concurrency or 1)
    else:
        provider = OpenAICompatibleProvider(
            name, base_url=base_url, api_key=_api_key(api_key_env, base_url),
            timeout=timeout, concurrency=concurrency or 8,
        )
    cache = ResponseCache(cache_dir() / "responses.sqlite") if use_cache else None
    return ChatModel(spec, provider, role=role, ledger=ledger, cache=cache, retry=retry,
                     concurrency=concurrency)


def _api_key(env_name: str, base_url: str | None) -> str:
    key = os.environ.get(env_name)
    if key:
        return key
    host = urlparse(base_url).hostname if base_url else None
    if host in {"127.0.0.1", "localhost", "::1"}:
        return "not-needed"  # local servers (vLLM, llama.cpp, Ollama) usually take any key
    raise InputError(f"openai models need an API key in ${env_name} "
                     "(or --api-key-env NAME, or a local --base-url)")
