"""Blocking work (encoding, indexing, a reranker's search) off the run's event loop.

The harness's loop keeps model calls flowing while a retriever encodes. Blocking calls run one
at a time on one worker thread: torch already uses every core for one encode, and SQLite
caches and models stay on a single thread. Code on that worker that needs the loop back (an
LLM reranker calling its model) uses `call_on_loop`.
"""

import asyncio
import contextvars
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

_HOME_LOOP: contextvars.ContextVar[asyncio.AbstractEventLoop | None] = contextvars.ContextVar(
    "personalens_home_loop", default=None)
_WORKER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="personalens-blocking")


async def run_blocking(function: Callable[..., Any], *args: Any) -> Any:
    """`function(*args)` on the blocking worker; the loop stays free meanwhile."""
    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()
    context.run(_HOME_LOOP.set, loop)
    return await loop.run_in_executor(_WORKER, context.run, function, *args)


def call_on_loop(make_coroutine: Callable[[], Awaitable[Any]]) -> Any:
    """Run a coroutine on the loop that sent us here and wait for it.

    Outside `run_blocking` (plain synchronous use, e.g. a script calling `search`) there is no
    such loop, and None is returned so the caller can run the coroutine itself.
    """
    loop = _HOME_LOOP.get()
    if loop is None:
        return None
    return asyncio.run_coroutine_threadsafe(make_coroutine(), loop).result()


def on_worker() -> bool:
    """True inside `run_blocking`, where `call_on_loop` reaches the run's loop."""
    return _HOME_LOOP.get() is not None
