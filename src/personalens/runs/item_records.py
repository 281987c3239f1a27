"""The items' records as a lens reads them: typed, in plan order, from the run directory.

A successful record is read from records.jsonl each time it is reached (see StoredRecords)
and parsed into the lens's record model, so summarising and reporting a run of any size holds
what the lens keeps of each record, not the records. Iterate as often as needed; each pass
reads the file again.
"""

from collections.abc import Iterator, Mapping
from typing import Any, Generic, TypeVar

import pydantic

from personalens.runs.failures import ItemFailure
from personalens.runs.records import LensRecord, failure_from_line
from personalens.runs.step_store import STEP_SCHEMA

Record = TypeVar("Record", bound=LensRecord)


class ItemRecords(Generic[Record]):
    """Sized and re-iterable. A key with a successful record gives it (a `Record`); a key whose
    item failed this session gives its `ItemFailure`; a key with neither is left out."""

    def __init__(self, keys: list[str], done: Mapping[str, dict], failed: Mapping[str, dict],
                 model: type[Record], steps: Mapping[str, Any] | None = None):
        self._keys = [k for k in keys if k in done or k in failed]
        self._done = done
        self._failed = failed
        self.model = model
        # Each finished step's value by key, as a rerun would replay it (read by `from_lines`
        # for a reader of a finished run such as compare; empty for the harness's own).
        self.steps: Mapping[str, Any] = steps or {}

    @classmethod
    def from_lines(cls, lines: list[dict], model: type[Record]) -> "ItemRecords[Record]":
        """Records from stored lines (records.jsonl's dicts), in their order; the last line
        of a key wins, as in a run directory. Step lines are not items: the finished steps'
        values are kept apart, in `steps`."""
        latest = {line["key"]: line for line in lines}
        items = {k: v for k, v in latest.items() if v.get("schema") != STEP_SCHEMA}
        done = {k: v for k, v in items.items() if v.get("status") == "ok"}
        failed = {k: v for k, v in items.items() if v.get("status") != "ok"}
        steps = {k: v.get("value") for k, v in latest.items()
                 if v.get("schema") == STEP_SCHEMA and v.get("status") == "ok"}
        return cls(list(items), done, failed, model, steps)

    def __iter__(self) -> Iterator[Record | ItemFailure]:
        for key in self._keys:
            if key in self._done:
                yield self.model.from_line(self._done[key])
            else:
                yield failure_from_line(self._failed[key])

    def __len__(self) -> int:
        return len(self._keys)

    def ok(self) -> Iterator[Record]:
        """The successful records, in plan order."""
        for key in self._keys:
            if key in self._done:
                yield self.model.from_line(self._done[key])

    def failures(self) -> list[ItemFailure]:
        """The failed items, in plan order (read from memory, not disk)."""
        return [failure_from_line(self._failed[key]) for key in self._keys
                if key not in self._done]

    def produced(self, failure: ItemFailure) -> Record | None:
        """What a failed item produced before it failed, when it is a whole record's worth."""
        try:
            return self.model.model_validate({**failure.data, "key": failure.key})
        except pydantic.ValidationError:
            return None
