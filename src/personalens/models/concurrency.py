"""A concurrency limit per endpoint that halves on 429 and creeps back up on success (AIMD)."""

import asyncio
from contextlib import asynccontextmanager


class AdaptiveLimiter:
    """At most `limit` calls in flight; `limit` moves between 1 and `maximum`."""

    def __init__(self, maximum: int):
        if maximum < 1:
            raise ValueError("concurrency maximum must be >= 1")
        self.maximum = maximum
        self.limit = maximum
        self.in_flight = 0
        self._successes = 0
        self._changed = asyncio.Condition()

    @asynccontextmanager
    async def slot(self):
        async with self._changed:
            await self._changed.wait_for(lambda: self.in_flight < self.limit)
            self.in_flight += 1
        try:
            yield
        finally:
            async with self._changed:
                self.in_flight -= 1
                self._changed.notify_all()

    def on_rate_limit(self) -> None:
        self.limit = max(1, self.limit // 2)
        self._successes = 0

    async def on_success(self) -> None:
        # Additive increase: one more slot after a full window of successes at the current limit.
        self._successes += 1
        if self.limit < self.maximum and self._successes >= self.limit:
            self._successes = 0
            self.limit += 1
            async with self._changed:
                self._changed.notify_all()


_limiters: dict[tuple[int, str], AdaptiveLimiter] = {}


def limiter_for(endpoint: str, maximum: int) -> AdaptiveLimiter:
    """The limiter shared by every model that talks to `endpoint` within this event loop."""
    key = (id(asyncio.get_running_loop()), endpoint)
    if key not in _limiters:
        _limiters[key] = AdaptiveLimiter(maximum)
    return _limiters[key]
