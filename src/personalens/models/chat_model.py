"""The one call shape every lens uses: `await model.complete(messages, **params)`.

Cache, concurrency limit, retries and usage accounting wrap every provider here, once.
"""

import asyncio
import random
from collections.abc import Callable
from typing import Any

from personalens.models.completion import Completion, Message, Provider
from personalens.models.concurrency import limiter_for
from personalens.models.failures import ModelCallFailed, PermanentModelError, TransientModelError
from personalens.models.response_cache import ResponseCache, cache_key
from personalens.models.retry import RetryPolicy
from personalens.runs.usage import UsageLedger


class ChatModel:
    def __init__(self, spec: str, provider: Provider, *, role: str = "target",
                 ledger: UsageLedger | None = None, cache: ResponseCache | None = None,
                 retry: RetryPolicy | None = None, concurrency: int | None = None,
                 sleep=None):
        self.spec = spec
        self.provider = provider
        self.role = role
        self.ledger = ledger if ledger is not None else UsageLedger()
        self.cache = cache
        self.retry = retry or RetryPolicy()
        self.concurrency = concurrency or provider.default_concurrency
        self._rng = random.Random()
        self._sleep = sleep  # injectable for tests; asyncio.sleep otherwise

    @property
    def constrains_output(self) -> bool:
        """True when the provider decodes under a grammar (llama.cpp in-process)."""
        return bool(getattr(self.provider, "constrains_output", False))

    @property
    def in_process(self) -> bool:
        """True when the model runs inside this process (llama.cpp, a script): it shares this
        process's CPU, and the same model behind a server is the same model."""
        return bool(getattr(self.provider, "in_process", False))

    @property
    def context_tokens(self) -> int | None:
        """The context one request has (prompt and reply together) when this process runs the
        model (llama.cpp in-process); None when a server knows its own."""
        return getattr(self.provider, "context_tokens", None)

    @property
    def deterministic(self) -> bool:
        """True when the same request always gets the same reply (llama.cpp with a seed, a
        script): a reply that broke a format will break it again on a rerun."""
        return bool(getattr(self.provider, "deterministic", False))

    async def complete(self, messages: list[Message], accept: Callable[[str], bool] | None = None,
                       grammar: str | None = None, **params: Any) -> Completion:
        """One completion; cached, limited, retried; raises `ModelCallFailed` when it cannot.

        With `accept`, only replies it accepts are cached (and only such cache hits are used),
        so a rerun asks again instead of replaying a reply that failed validation.
        `grammar` (GBNF) constrains decoding where the provider can; elsewhere it is dropped, so
        an API model's request (and its cache key) is exactly what it would be without it.
        """
        if grammar is not None and self.constrains_output:
            params = {**params, "grammar": grammar}
        key = None
        if self.cache is not None:
            key = cache_key(self.spec, self.provider.endpoint, messages, params)
            hit = self.cache.get(key)
            if hit is not None and (accept is None or accept(hit.text)):
                self.ledger.record(self.role, hit.usage, cached=True)
                return hit
        completion = await self._send_with_retries(messages, params)
        self.ledger.record(self.role, completion.usage, cached=False)
        if key is not None and (accept is None or accept(completion.text)):
            self.cache.put(key, completion)
        return completion

    async def aclose(self) -> None:
        """Release the provider's connections; call before the event loop ends."""
        close = getattr(self.provider, "aclose", None)
        if close is not None:
            await close()

    async def _send_with_retries(self, messages: list[Message], params: dict) -> Completion:
        sleep = self._sleep or asyncio.sleep
        limiter = limiter_for(self.provider.endpoint, self.concurrency)
        for attempt in range(self.retry.max_attempts):
            try:
                async with limiter.slot():
                    completion = await self.provider.send(messages, params)
            except TransientModelError as exc:
                if exc.kind == "rate_limit":
                    limiter.on_rate_limit()
                if attempt + 1 == self.retry.max_attempts:
                    self.ledger.failure(self.role, exc.kind)
                    raise ModelCallFailed(exc.kind, str(exc), attempt + 1) from exc
                self.ledger.retry(self.role, exc.kind)
                await sleep(self.retry.delay(attempt, exc.retry_after, self._rng))
            except PermanentModelError as exc:
                self.ledger.failure(self.role, exc.kind)
                raise ModelCallFailed(exc.kind, str(exc), attempt + 1) from exc
            else:
                await limiter.on_success()
                return completion
        raise AssertionError("unreachable: the loop returns or raises")
