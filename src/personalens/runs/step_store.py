"""Multi-step work inside a run: every step's value is a record keyed by the step.

A rerun replays finished steps from records.jsonl instead of recomputing them, so a killed run
continues where it stopped and produces the same data. Failed steps are recorded in the one
failure shape and retried by the next run.
"""

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from personalens.runs.failures import RecordedFailure
from personalens.runs.run_directory import RunDirectory, record_line

# A step's line holds whatever its computation returned, under "value"; the tag says so, as an
# item's line names its record schema.
STEP_SCHEMA = "step/1"


class StepFailed(RecordedFailure):
    """A step that failed for good; the item that needed it fails with the same failure."""

    def __init__(self, key: str, cause: RecordedFailure):
        failure = cause.failure
        super().__init__(failure.kind, f"{key}: {failure.message}", failure.attempts, cause.data,
                         [key, *cause.steps], final=failure.final)
        self.key = key


class StepStore:
    """The records of a run: finished ones replayed, failed ones dropped so they are retried.

    `done` maps each finished key to its record. For a run directory it is the directory's
    `StoredRecords`: records stay on disk and are read back when asked for, so memory does not
    grow with the run; the directory adds each successful record as it is appended.
    """

    def __init__(self, run: RunDirectory | None, on_step: Callable[[], None] = lambda: None,
                 done: Mapping[str, dict] | None = None):
        self.run = run
        self.on_step = on_step
        self.done: Mapping[str, dict] = run.successful_records() if done is None else dict(done)
        self.failures: list[dict] = []  # failed steps and items of this session
        self.failed_items: dict[str, dict] = {}
        self._running: dict[str, asyncio.Task] = {}  # steps being computed right now

    def append(self, record: dict, *, item: bool = False) -> None:
        """Record one item or step (status "ok" or "failed", with its error).

        What is kept is exactly what a replay would read (keys sorted as the record stores
        them), so a resumed run writes byte-identical files.
        """
        text = self._write(record)
        if record["status"] != "ok":
            record = json.loads(text)  # as a replay reads it
            self.failures.append(record)
            if item:
                self.failed_items[record["key"]] = record

    def _write(self, record: dict) -> str:
        """Store the record (a successful one joins `done`); the line as stored."""
        return self.run.append(record)

    async def get(self, key: str, compute: Callable[[], Awaitable[Any]]) -> Any:
        """The step's value: replayed if recorded, else computed, recorded and returned.

        Two callers asking for the same step at once share one computation (and one record).
        """
        if key in self.done:
            return self.done[key]["value"]
        if key not in self._running:
            self._running[key] = asyncio.ensure_future(self._compute(key, compute))
        task = self._running[key]
        try:
            return await task
        finally:
            if task.done():
                self._running.pop(key, None)

    async def _compute(self, key: str, compute: Callable[[], Awaitable[Any]]) -> Any:
        try:
            value = await compute()
        except RecordedFailure as exc:
            self.append({"key": key, "status": "failed", "schema": STEP_SCHEMA,
                         "error": exc.failure.model_dump()})
            raise StepFailed(key, exc) from exc
        self.append({"key": key, "status": "ok", "schema": STEP_SCHEMA, "value": value})
        self.on_step()
        return self.done[key]["value"]


class DetachedSteps(StepStore):
    """A step store on a remote worker: replays the steps it is given and collects new ones.

    The worker returns `new` to the driver, whose StepStore appends them in order, so the run
    directory is written by the driver alone and a replay reads what it would in-process.
    """

    def __init__(self, done: dict[str, dict]):
        super().__init__(None, done=done)
        self.new: list[dict] = []

    def _write(self, record: dict) -> str:
        self.new.append(record)
        text = record_line(record)
        if record["status"] == "ok":
            self.done[record["key"]] = json.loads(text)  # as a replay reads it
        return text
