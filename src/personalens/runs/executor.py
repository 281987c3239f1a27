"""Where a run's parallel stages execute: in this process (the default) or on a Ray cluster.

The run directory stays the single source of truth either way: a stage's work returns values
to the driver, and only the driver appends records. Nothing here imports Ray unless a Ray
executor is asked for.

A stage uses two calls:
- `await executor.call(fn, *args)`: one blocking function; in-process it runs on the blocking
  worker (runs.blocking), on Ray as a remote task, while the run's event loop stays free;
- `executor.map(fn, chunks)`: a blocking map in order (e.g. parsing many text chunks).
`fn` must be a module-level function (Ray pickles it by reference) and its arguments and
result plain data.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from personalens.errors import InputError
from personalens.runs.blocking import run_blocking

EXECUTORS = ("local", "ray")


class Executor(Protocol):
    distributed: bool

    async def call(self, fn: Callable[..., Any], *args: Any) -> Any: ...

    def map(self, fn: Callable[[Any], Any], chunks: Sequence[Any]) -> list[Any]: ...


@dataclass(frozen=True)
class LocalExecutor:
    """Everything in this process."""

    distributed = False

    async def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await run_blocking(fn, *args)

    def map(self, fn: Callable[[Any], Any], chunks: Sequence[Any]) -> list[Any]:
        return [fn(chunk) for chunk in chunks]


def make_executor(kind: str, address: str | None = None) -> Executor:
    """The executor `--executor KIND [--ray-address ADDR]` asks for; InputError otherwise."""
    if kind == "local":
        if address:
            raise InputError("--ray-address needs --executor ray")
        return LocalExecutor()
    if kind == "ray":
        from personalens.runs.ray_executor import RayExecutor

        return RayExecutor(address)
    raise InputError(f"unknown executor {kind!r}; expected one of {', '.join(EXECUTORS)}")
