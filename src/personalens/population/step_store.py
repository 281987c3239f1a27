"""Resumable generation: every model-derived artefact is a record keyed by its step.

Rerunning `generate` replays finished steps from records.jsonl instead of calling the model, so a
killed run continues where it stopped and produces the same data.
"""

import json
from collections.abc import Awaitable, Callable
from typing import Any

from personalens.models import ModelCallFailed
from personalens.runs import RunDirectory


class StepFailed(Exception):
    def __init__(self, key: str, cause: ModelCallFailed):
        self.key = key
        self.cause = cause
        super().__init__(f"{key}: {cause}")


class StepStore:
    def __init__(self, run: RunDirectory, on_step: Callable[[], None] = lambda: None):
        self.run = run
        self.on_step = on_step
        self.done = run.successful_records()  # failed steps are retried
        self.failures: list[dict] = []

    async def get(self, key: str, compute: Callable[[], Awaitable[Any]]) -> Any:
        """The step's value: replayed if recorded, else computed, recorded and returned."""
        if key in self.done:
            return self.done[key]["value"]
        try:
            value = await compute()
        except ModelCallFailed as exc:
            failure = {"key": key, "status": "failed",
                       "error": {"kind": exc.kind, "message": str(exc), "attempts": exc.attempts}}
            self.run.append(failure)
            self.failures.append(failure)
            raise StepFailed(key, exc) from exc
        # Hand back exactly what a replay would read (keys sorted as the record stores them), so
        # a resumed run writes byte-identical files.
        value = json.loads(json.dumps(value, sort_keys=True))
        record = {"key": key, "status": "ok", "value": value}
        self.run.append(record)
        self.done[key] = record
        self.on_step()
        return value
