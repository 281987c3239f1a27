"""Run stages on Ray: remote tasks for per-item work, the same results as in-process.

`RayExecutor(None)` starts a Ray instance on this machine; `RayExecutor("ray://host:10001")`
or `RayExecutor("auto")` joins a running cluster (every node needs the same personalens
installed). Ray starts on first use, after the input has been checked, so a bad command never
waits for a cluster.
"""

import socket
from collections.abc import Callable, Sequence
from typing import Any

from personalens.errors import InputError


class RayExecutor:
    distributed = True

    def __init__(self, address: str | None = None):
        try:
            import ray  # noqa: F401 - checked now, so a missing extra fails before the run
        except ImportError:
            raise InputError("--executor ray needs Ray: pip install 'personalens[ray]'") from None
        if address and address != "auto":
            _check_reachable(address)
        self.address = address
        self._remote: dict[Callable, Any] = {}

    def start(self):
        """The `ray` module, connected (once) to the cluster."""
        import ray

        if not ray.is_initialized():
            try:
                ray.init(address=self.address, include_dashboard=False, log_to_driver=False,
                         configure_logging=False)
            except (ConnectionError, ValueError, RuntimeError) as exc:
                raise InputError(f"--executor ray: cannot reach Ray at "
                                 f"{self.address or 'a new local instance'} ({exc})") from None
        return ray

    def _as_task(self, fn: Callable) -> Any:
        if fn not in self._remote:
            self._remote[fn] = self.start().remote(fn)
        return self._remote[fn]

    async def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await self._as_task(fn).remote(*args)

    def map(self, fn: Callable[[Any], Any], chunks: Sequence[Any]) -> list[Any]:
        task = self._as_task(fn)
        return self.start().get([task.remote(chunk) for chunk in chunks])

    def gpus(self) -> float:
        """GPUs in the cluster (0 on CPU-only clusters), for GPU encoding actors."""
        return float(self.start().cluster_resources().get("GPU", 0))


def _check_reachable(address: str) -> None:
    """One TCP connect to HOST:PORT, so a wrong address fails in seconds: `ray.init` would
    keep retrying an unreachable one for minutes."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        socket.create_connection((host or "127.0.0.1", int(port)), timeout=5).close()
    except ValueError:
        raise InputError(f"--ray-address {address!r} is not HOST:PORT, ray://HOST:PORT or "
                         "auto") from None
    except OSError as exc:
        raise InputError(f"--ray-address {address}: nothing answers there ({exc})") from None
