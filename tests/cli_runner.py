"""Running the real `personalens` command in a subprocess, as a user would."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def personalens(*args: str, env: dict | None = None, timeout: float = 600,
                **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "personalens", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})}, **kwargs)


def start(*args: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "personalens", *map(str, args)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})


def kill_after_records(process: subprocess.Popen, records: Path, count: int,
                       signal_number: int = signal.SIGKILL, timeout: float = 120) -> None:
    """Send `signal_number` once `records` holds `count` lines (or the process has ended)."""
    deadline = time.time() + timeout
    while time.time() < deadline and process.poll() is None:
        if records.exists() and records.read_text().count("\n") >= count:
            break
        time.sleep(0.005)
    process.send_signal(signal_number)
