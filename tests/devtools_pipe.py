"""Headless Chromium driven over the DevTools protocol on --remote-debugging-pipe, stdlib only.

Shared by the report's browser tests and bench/scaling.py (which times report.html opening).
"""

import fcntl
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path


class DevToolsPipe:
    """One Chromium process; `call` sends a DevTools command and waits for its reply."""

    def __init__(self, profile: Path, chromium: str | None = None):
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def wire():  # in the child: the two pipe ends become fds 3 (in) and 4 (out)
            r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
            w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
            os.dup2(r, 3)
            os.dup2(w, 4)

        self.proc = subprocess.Popen(
            [chromium or shutil.which("chromium"), "--headless", "--no-sandbox", "--disable-gpu",
             "--disable-quic", "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}",
             "--remote-debugging-pipe", "--window-size=1200,1600", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            close_fds=False, preexec_fn=wire)
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer, self._next = b"", 0

    def call(self, method: str, session: str | None = None, timeout: float = 60.0, **params):
        """The command's result; RuntimeError for a protocol error, TimeoutError for none."""
        self._next += 1
        message = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\0", 1)
                reply = json.loads(raw)
                if reply.get("id") == self._next:
                    if "error" in reply:
                        raise RuntimeError(f"{method}: {reply['error']}")
                    return reply["result"]
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no reply to {method}")
            if select.select([self._from_child], [], [], left)[0]:
                chunk = os.read(self._from_child, 1 << 16)
                if not chunk:
                    raise RuntimeError("chromium closed the pipe")
                self._buffer += chunk

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)
        os.close(self._to_child)
        os.close(self._from_child)
