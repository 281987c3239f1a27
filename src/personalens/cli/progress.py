"""A rich progress bar that the runs report into (items done, rate, time left)."""

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


class ItemProgress:
    def __init__(self, description: str):
        self._progress = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), TimeRemainingColumn(), console=Console(stderr=True),
            transient=False,
        )
        self._description = description
        self._task = None

    def start(self, total: int, completed: int) -> None:
        self._progress.start()
        self._task = self._progress.add_task(self._description, total=total, completed=completed)

    def advance(self) -> None:
        self._progress.advance(self._task)

    def stop(self) -> None:
        self._progress.stop()
