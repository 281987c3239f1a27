"""The progress bar of a run: items done, rate, time left (rich, on stderr)."""

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
    """Items done of the plan, with an ETA; multi-step lenses also show steps finished."""

    def __init__(self, description: str, *, enabled: bool = True):
        self._progress = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[steps]}"), TimeElapsedColumn(), TimeRemainingColumn(),
            console=Console(stderr=True), transient=False, disable=not enabled,
        )
        self._description = description
        self._task = None
        self._steps = 0

    def start(self, total: int | None, completed: int) -> None:
        self._progress.start()
        self._task = self._progress.add_task(self._description, total=total,
                                             completed=completed, steps="")

    def advance(self) -> None:
        self._progress.advance(self._task)

    def step(self) -> None:
        """One more step of an item finished (the generator's items take many)."""
        self._steps += 1
        if self._task is not None:
            self._progress.update(self._task, steps=f"{self._steps} steps")

    def stop(self) -> None:
        self._progress.stop()
