"""Concurrent work inside an item that must all settle before a failure propagates."""

import asyncio
from collections.abc import Awaitable
from typing import Any


async def gather_settled(*awaitables: Awaitable[Any]) -> list[Any]:
    """Every result in order; if any raised, the first such error is raised, but only after
    every call has finished, so none is left running untracked (and unrecorded)."""
    results = await asyncio.gather(*awaitables, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return list(results)
