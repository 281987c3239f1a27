"""A run's successful records by key, read from records.jsonl when asked for.

Only each record's place in the file (offset, length) stays in memory, so a run of any size
holds a few dozen bytes per record, not the records: a lookup reads and parses one line again.
Records come back exactly as a replay reads them (parsed from the stored line).
"""

import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from personalens.errors import InputError


class StoredRecords(Mapping[str, dict[str, Any]]):
    """key -> record, in the order the keys were first recorded. The run directory adds to it
    as it appends successful records; `close` releases the file."""

    def __init__(self, path: Path, places: dict[str, tuple[int, int]] | None = None):
        self.path = path
        self._places = places or {}
        self._fd: int | None = None

    def add(self, key: str, offset: int, length: int) -> None:
        self._places[key] = (offset, length)

    def __getitem__(self, key: str) -> dict[str, Any]:
        return json.loads(self.raw(key))

    def raw(self, key: str) -> bytes:
        """The record's line as stored (without its newline)."""
        offset, length = self._places[key]
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDONLY)
        return os.pread(self._fd, length, offset)

    def __contains__(self, key: object) -> bool:
        return key in self._places

    def __iter__(self) -> Iterator[str]:
        return iter(self._places)

    def __len__(self) -> int:
        return len(self._places)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def scan(path: Path) -> tuple[dict[str, tuple[int, int, bool]], int]:
    """Every key's latest line in records.jsonl: key -> (offset, length, ok), in first-seen
    order, and the length of the file's complete lines (a line cut short by a crash is not).

    Reads the file line by line, so the records are never all in memory at once. A line that
    is not a JSON object with a key is refused (InputError naming the line).
    """
    places: dict[str, tuple[int, int, bool]] = {}
    offset = 0
    with open(path, "rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.endswith(b"\n"):
                break  # cut short by a crash: dropped, the caller truncates it
            if line.strip():
                record = _parsed(line, number, path)
                places[record["key"]] = (offset, len(line) - 1, record.get("status") == "ok")
            offset += len(line)
    return places, offset


def _parsed(line: bytes, number: int, path: Path) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except json.JSONDecodeError:
        raise InputError(f"line {number} is not JSON; the run directory is damaged",
                         where=str(path)) from None
    if not isinstance(record, dict) or "key" not in record:
        raise InputError(f"line {number} has no record key; the run directory is damaged",
                         where=str(path))
    return record
