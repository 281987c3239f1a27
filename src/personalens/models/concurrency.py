"""A concurrency limit per endpoint that halves on 429 and creeps back up on success (AIMD)."""

import asyncio
from collections import deque
from contextlib import asynccontextmanager


class AdaptiveLimiter:
    """At most `limit` calls in flight; `limit` moves between 1 and `maximum`.

    A freed slot is handed straight to the longest waiter (first come, first served), so a
    release wakes exactly one task: waking every waiter to re-check cost a task switch per
    waiter per call, which at 32 concurrent items was a visible share of the runner's time.
    """

    def __init__(self, maximum: int):
        if maximum < 1:
            raise ValueError("concurrency maximum must be >= 1")
        self.maximum = maximum
        self.limit = maximum
        self.in_flight = 0
        self._successes = 0
        self._waiters: deque[asyncio.Future] = deque()

    @asynccontextmanager
    async def slot(self):
        await self._acquire()
        try:
            yield
        finally:
            self._release()

    async def _acquire(self) -> None:
        # Waiters exist only while every slot is taken (each release hands over first), so a
        # free slot here can be taken without jumping the queue.
        if self.in_flight < self.limit:
            self.in_flight += 1
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter  # resolved once a slot was handed over (already counted in flight)
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._release()  # handed a slot, then cancelled: pass it on
            elif waiter in self._waiters:
                self._waiters.remove(waiter)
            raise

    def _release(self) -> None:
        self.in_flight -= 1
        self._hand_over()

    def _hand_over(self) -> None:
        while self._waiters and self.in_flight < self.limit:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.in_flight += 1
                waiter.set_result(None)

    def on_rate_limit(self) -> None:
        self.limit = max(1, self.limit // 2)
        self._successes = 0

    async def on_success(self) -> None:
        # Additive increase: one more slot after a full window of successes at the current limit.
        self._successes += 1
        if self.limit < self.maximum and self._successes >= self.limit:
            self._successes = 0
            self.limit += 1
            self._hand_over()


_limiters: dict[tuple[int, str], AdaptiveLimiter] = {}


def limiter_for(endpoint: str, maximum: int) -> AdaptiveLimiter:
    """The limiter shared by every model that talks to `endpoint` within this event loop."""
    key = (id(asyncio.get_running_loop()), endpoint)
    if key not in _limiters:
        _limiters[key] = AdaptiveLimiter(maximum)
    return _limiters[key]
