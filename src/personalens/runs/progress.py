"""The progress of a run on stderr: a live bar on a terminal, a line at a steady interval
elsewhere (a pipe, a log file, CI, a batch job), where a live bar would only appear at the end.
"""

import math
import os
import sys
import threading
import time
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from personalens.errors import InputError

INTERVAL_ENV = "PERSONALENS_PROGRESS_INTERVAL"
DEFAULT_INTERVAL = 30.0  # seconds between progress lines when stderr is not a terminal


class ItemProgress:
    """Items done of the plan, with an ETA; multi-step lenses also show steps finished."""

    def __init__(self, description: str, *, enabled: bool = True,
                 stream: TextIO | None = None, interval: float | None = None):
        console = Console(stderr=True) if stream is None else Console(file=stream)
        self._lines = None
        if enabled and interval is None:
            interval = line_interval()  # checked on a terminal too, where it is not used yet
        if enabled and not console.is_terminal:
            self._lines = ProgressLines(description, stream or sys.stderr, interval)
        self._progress = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[steps]}"), TimeElapsedColumn(), TimeRemainingColumn(),
            console=console, transient=False, disable=not enabled or self._lines is not None,
        )
        self._description = description
        self._task = None
        self._steps = 0

    def start(self, total: int | None, completed: int) -> None:
        self._progress.start()
        self._task = self._progress.add_task(self._description, total=total,
                                             completed=completed, steps="")
        if self._lines is not None:
            self._lines.start(total, completed)

    def advance(self, failed: bool = False) -> None:
        self._progress.advance(self._task)
        if self._lines is not None:
            self._lines.advance(failed)

    def step(self) -> None:
        """One more step of an item finished (the generator's items take many)."""
        self._steps += 1
        if self._task is not None:
            self._progress.update(self._task, steps=f"{self._steps} steps")
        if self._lines is not None:
            self._lines.steps = self._steps

    def stop(self) -> None:
        self._progress.stop()
        if self._lines is not None:
            self._lines.stop()


def line_interval() -> float:
    """Seconds between progress lines: $PERSONALENS_PROGRESS_INTERVAL, else 30; a value that is
    not a positive number is bad input (silently printing every 30 s would hide the typo)."""
    value = os.environ.get(INTERVAL_ENV, "").strip()
    if not value:
        return DEFAULT_INTERVAL
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise InputError(f"{INTERVAL_ENV}={value!r}: give the seconds between progress lines, "
                         "a number above 0")
    return seconds


class ProgressLines:
    """A timer thread that prints `label: done/total items (pct), failures, rate, ETA`.

    A thread, not the event loop: one model call can block the loop's progress for minutes,
    and a line must still come when nothing finished (that is when a user wonders most).
    """

    def __init__(self, label: str, stream: TextIO, interval: float,
                 clock=time.monotonic):
        self.label, self.stream, self.interval, self.clock = label, stream, interval, clock
        self.total: int | None = None
        self.done = self.failed = self.steps = self._resumed = 0
        self._started = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, total: int | None, completed: int) -> None:
        self.total, self.done, self._resumed = total, completed, completed
        self._started = self.clock()
        self._thread = threading.Thread(target=self._loop, name="progress-lines", daemon=True)
        self._thread.start()

    def advance(self, failed: bool) -> None:
        self.done += 1
        self.failed += failed

    def stop(self) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
            self._print()  # the last word: where the run ended

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._print()

    def _print(self) -> None:
        print(self.line(), file=self.stream, flush=True)

    def line(self) -> str:
        elapsed = max(self.clock() - self._started, 1e-9)
        ran = self.done - self._resumed  # this session's items set the rate
        total = "?" if self.total is None else str(self.total)
        parts = [f"{self.label}: {self.done}/{total} items"]
        if self.total:
            parts[0] += f" ({100 * self.done / self.total:.0f}%)"
        parts.append(f"{self.failed} failed")
        if self.steps:
            parts.append(f"{self.steps} steps")
        parts.append(f"{ran / elapsed * 60:.1f} items/min" if ran else "no item finished yet")
        parts.append(f"elapsed {_duration(elapsed)}")
        if ran and self.total is not None:
            parts.append(f"ETA {_duration((self.total - self.done) * elapsed / ran)}")
        return ", ".join(parts)


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
