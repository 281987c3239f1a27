"""The items' records as a lens reads them: in plan order, from the run directory.

A successful record is read from records.jsonl each time it is reached (see StoredRecords),
so summarising and reporting a run of any size holds what the lens keeps of each record, not
the records. Iterate as often as needed; each pass reads the file again.
"""

from collections.abc import Iterator, Mapping


class ItemRecords:
    """Sized and re-iterable. A key with a successful record gives it; a key whose item
    failed this session gives its failure record; a key with neither is left out."""

    def __init__(self, keys: list[str], done: Mapping[str, dict], failed: Mapping[str, dict]):
        self._keys = [k for k in keys if k in done or k in failed]
        self._done = done
        self._failed = failed

    def __iter__(self) -> Iterator[dict]:
        for key in self._keys:
            yield self._done[key] if key in self._done else self._failed[key]

    def __len__(self) -> int:
        return len(self._keys)

    def failures(self) -> list[dict]:
        """The failure records among them, in plan order (read from memory, not disk)."""
        return [self._failed[key] for key in self._keys if key not in self._done]
