"""Running the `personalens` command: in this process (`personalens`, the default), or as a
process of its own, as a user would (`personalens_process`, `start`).

In-process runs call `personalens.cli.app.main()` with `sys.argv` set, and give back what
`subprocess.run` would: a CompletedProcess with the exit status and the text written to stdout
and stderr. They save several seconds of interpreter start-up per call. A test of the process
itself (signals, kill -9, start-up, `python -m personalens`) uses the process functions and is
marked `subprocess` (tests/conftest.py checks it).
"""

import contextlib
import io
import logging
import os
import signal
import subprocess
import sys
import time
import traceback
import warnings
from pathlib import Path

# What a fresh interpreter starts with (python -W and PYTHONWARNINGS unset): pytest's own
# filters must not decide which warnings a run prints.
_FRESH_WARNING_FILTERS = [
    ("default", None, DeprecationWarning, "__main__", 0),
    ("ignore", None, DeprecationWarning, None, 0),
    ("ignore", None, PendingDeprecationWarning, None, 0),
    ("ignore", None, ImportWarning, None, 0),
    ("ignore", None, ResourceWarning, None, 0),
]
_SIGNALS = [s for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE)]

# Called with "subprocess" whenever a test starts the command as a process (tests/conftest.py
# fails a test that does so without the `subprocess` marker).
on_process = []


class _Stream(io.StringIO):
    """A text stream that is not a terminal, like a pipe (also for code that asks its fd)."""

    def isatty(self) -> bool:
        return False


def personalens(*args: str, env: dict | None = None, timeout: float = 600,
                cwd: str | Path | None = None, input: str | None = None
                ) -> subprocess.CompletedProcess:
    """Run `personalens ARGS` in this process; the result as `subprocess.run` gives it.

    `env` is added to the environment, `cwd` is the working directory and `input` stdin, for
    the run only. Everything a run may leave behind in the process (environment, working
    directory, signal handlers, root logging handlers, warning filters, sys.argv) is put back.
    `timeout` is accepted for the process runner's signature and not enforced.
    """
    from personalens.cli.app import main

    argv = ["personalens", *map(str, args)]
    out, err = _Stream(), _Stream()
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_argv = sys.argv
    saved_stdin = sys.stdin
    saved_handlers = {s: signal.getsignal(s) for s in _SIGNALS}
    root = logging.getLogger()
    saved_root = (list(root.handlers), root.level)
    code: int = 0
    try:
        os.environ.update({k: str(v) for k, v in (env or {}).items()})
        if cwd is not None:
            os.chdir(cwd)
        sys.argv = argv
        sys.stdin = _Stream(input or "")
        # A fresh process has no handler on the root logger: a library's warning reaches
        # stderr through logging.lastResort, which writes to sys.stderr (here: `err`).
        root.handlers = []
        with warnings.catch_warnings(), contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err):
            warnings.filters[:] = list(_FRESH_WARNING_FILTERS)
            try:
                main()
            except SystemExit as exc:
                code = _exit_status(exc.code, err)
            except KeyboardInterrupt:
                traceback.print_exc()
                code = 130
            except BaseException:  # what the interpreter prints and exits 1 on
                traceback.print_exc()
                code = 1
    finally:
        sys.stdout.flush()
        sys.argv = saved_argv
        sys.stdin = saved_stdin
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        for number, handler in saved_handlers.items():
            if handler is not None:
                signal.signal(number, handler)
        root.handlers, level = saved_root
        root.setLevel(level)
    return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())


def _exit_status(code, err) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=err)  # sys.exit("message"): printed, status 1
    return 1


def personalens_process(*args: str, env: dict | None = None, timeout: float = 600,
                        **kwargs) -> subprocess.CompletedProcess:
    """`python -m personalens ARGS` in a process of its own."""
    _started()
    return subprocess.run([sys.executable, "-m", "personalens", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout,
                          env=_process_env(env), **kwargs)


def start(*args: str, env: dict | None = None) -> subprocess.Popen:
    """`python -m personalens ARGS` started in a process of its own (stdout discarded)."""
    _started()
    return subprocess.Popen([sys.executable, "-m", "personalens", *map(str, args)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env=_process_env(env))


def _started() -> None:
    for note in on_process:
        note("subprocess")


def _process_env(env: dict | None) -> dict:
    from tests import model_loads

    return model_loads.process_env({**os.environ, **(env or {})})


def kill_after_records(process: subprocess.Popen, records: Path, count: int,
                       signal_number: int = signal.SIGKILL, timeout: float = 120) -> None:
    """Send `signal_number` once `records` holds `count` lines (or the process has ended)."""
    deadline = time.time() + timeout
    while time.time() < deadline and process.poll() is None:
        if records.exists() and records.read_text().count("\n") >= count:
            break
        time.sleep(0.005)
    process.send_signal(signal_number)
