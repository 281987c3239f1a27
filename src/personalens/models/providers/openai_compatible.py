"""Any OpenAI-compatible chat endpoint: OpenAI, vLLM, SGLang, Ollama, llama.cpp, LM Studio."""

import json
import os
from typing import Any
from urllib.parse import urlparse

import openai
import pydantic
from openai.types.chat import ChatCompletion

from personalens.errors import InputError
from personalens.models.completion import Completion, Message, Usage
from personalens.models.failures import PermanentModelError, TransientModelError
from personalens.models.retry import parse_retry_after

_RETRYABLE_STATUS = {408, 409, 429}


class OpenAICompatibleProvider:
    in_process = False

    def __init__(self, name: str, *, base_url: str | None, api_key: str, timeout: float,
                 concurrency: int):
        self.name = name
        self.endpoint = base_url or "https://api.openai.com/v1"
        self.default_concurrency = concurrency
        # Retries live in personalens's own policy, so the SDK must not retry behind its back.
        self._client = openai.AsyncOpenAI(
            api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0
        )

    async def send(self, messages: list[Message], params: dict[str, Any]) -> Completion:
        try:
            # The documented low-level call: the body goes out as given. `create` would first
            # walk it (messages, JSON schemas) through the SDK's type transform, which changes
            # nothing for plain JSON and was the largest client-side cost per request.
            response = await self._client.post(
                "/chat/completions", cast_to=ChatCompletion,
                body={"model": self.name, "messages": messages, **params})
        except openai.APITimeoutError as exc:
            raise TransientModelError("timeout", str(exc)) from exc
        except openai.APIConnectionError as exc:
            raise TransientModelError("connection", str(exc)) from exc
        except openai.APIStatusError as exc:
            raise _status_error(exc) from exc
        except (openai.APIResponseValidationError, pydantic.ValidationError,
                json.JSONDecodeError) as exc:
            raise TransientModelError("malformed_response", str(exc)) from exc
        return _completion(response)

    async def aclose(self) -> None:
        await self._client.close()


def _status_error(exc: openai.APIStatusError) -> Exception:
    status = exc.status_code
    retry_after = parse_retry_after(exc.response.headers.get("retry-after"))
    if status == 429:
        return TransientModelError("rate_limit", str(exc), retry_after)
    if status >= 500:
        return TransientModelError("server_error", str(exc), retry_after)
    if status in _RETRYABLE_STATUS:
        return TransientModelError(f"http_{status}", str(exc), retry_after)
    return PermanentModelError(f"http_{status}", str(exc))


def _completion(response: Any) -> Completion:
    # Servers under load sometimes answer 200 with a body that is not a chat completion.
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise TransientModelError("malformed_response", "response has no choices")
    message = getattr(choices[0], "message", None)
    text = getattr(message, "content", None)
    if not isinstance(text, str):
        raise TransientModelError("malformed_response", "first choice has no text content")
    usage = getattr(response, "usage", None)
    return Completion(
        text=text,
        usage=Usage(
            prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
            completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
        ),
        finish_reason=getattr(choices[0], "finish_reason", None),
    )


def build(name: str, settings) -> OpenAICompatibleProvider:
    """`openai/<name>` at `settings.base_url` (OpenAI's API when None), 8 calls in flight by
    default."""
    return OpenAICompatibleProvider(
        name, base_url=settings.base_url, api_key=_api_key(settings.api_key_env, settings.base_url),
        timeout=settings.timeout, concurrency=settings.concurrency or 8)


def _api_key(env_name: str, base_url: str | None) -> str:
    key = os.environ.get(env_name)
    if key:
        return key
    host = urlparse(base_url).hostname if base_url else None
    if host in {"127.0.0.1", "localhost", "::1"}:
        return "not-needed"  # local servers (vLLM, llama.cpp, Ollama) usually take any key
    raise InputError(f"openai models need an API key in ${env_name} "
                     "(or --api-key-env NAME, or a local --base-url)")
