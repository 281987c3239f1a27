"""Running the real `personalens` command in a subprocess, as a user would."""

import os
import subprocess
import sys


def personalens(*args: str, env: dict | None = None, timeout: float = 600,
                **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "personalens", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})}, **kwargs)


def start(*args: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "personalens", *map(str, args)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})
