"""A run directory: manifest, append-only records, metrics and report; resumable, locked."""

import fcntl
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from personalens.errors import InputError
from personalens.runs.atomic import write_atomic
from personalens.runs.manifest import CONTRACT, Manifest
from personalens.runs.record_log import RecordLog
from personalens.runs.stored_records import StoredRecords, scan

MANIFEST = "manifest.json"
RECORDS = "records.jsonl"
METRICS = "metrics.json"
REPORT = "report.html"
LOCK = ".lock"


class RunDirectory:
    """Open with `RunDirectory.open`; the directory stays locked until `close`."""

    def __init__(self, path: Path, lock_fd: int, manifest: Manifest):
        self.path = path
        self._lock_fd = lock_fd
        self.manifest = manifest
        self._log: RecordLog | None = None  # opened by the first append
        self._stored: StoredRecords | None = None  # set by successful_records

    @classmethod
    def open(cls, path: Path, manifest: Manifest | dict[str, Any]) -> "RunDirectory":
        """Create or resume the run at `path`; refuse one that another process is writing.

        `manifest.config` identifies the run: resuming with a different config is refused,
        because mixing records of two configurations would make every metric meaningless.
        """
        manifest = Manifest.model_validate(manifest)
        if path.exists() and not path.is_dir():
            raise InputError("run directory path exists and is not a directory", where=str(path))
        path.mkdir(parents=True, exist_ok=True)
        lock_fd = os.open(path / LOCK, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(lock_fd)
            raise InputError("run directory is being written by another process; wait for it "
                             "or choose another --out", where=str(path)) from None
        previous = _read_manifest(path / MANIFEST)
        refusal = _refusal(previous, manifest)
        if refusal:
            fcntl.flock(lock_fd, fcntl.LOCK_UN)
            os.close(lock_fd)
            raise InputError(refusal, where=str(path))
        manifest = manifest.model_copy(update={
            "started_at": (previous or {}).get("started_at", _now()),
            "sessions": (previous or {}).get("sessions", 0) + 1, "status": "running"})
        run = cls(path, lock_fd, manifest)
        # Token usage of earlier sessions, so totals and cost cover the whole run after resumes.
        run.previous_usage = (previous or {}).get("usage", {})
        run.write_manifest()
        return run

    def write_manifest(self, **updates: Any) -> None:
        for name, value in updates.items():
            setattr(self.manifest, name, value)
        write_atomic(self.path / MANIFEST, json.dumps(self.manifest.to_json(), indent=2,
                                                      sort_keys=True))

    def records(self) -> dict[str, dict[str, Any]]:
        """Every record by key, failed ones too (a later record for a key replaces an earlier
        one). Holds them all: for inspection; a run reads `successful_records`."""
        places = self._scan()
        stored = StoredRecords(self.path / RECORDS, {k: p[:2] for k, p in places.items()})
        try:
            return dict(stored.items())
        finally:
            stored.close()

    def _scan(self) -> dict[str, tuple[int, int, bool]]:
        """Where each key's latest record lies. A line cut short by a crash mid-write is
        removed, so appends continue on a clean file."""
        path = self.path / RECORDS
        if not path.exists():
            return {}
        places, complete = scan(path)
        if complete != path.stat().st_size:
            os.truncate(path, complete)
        return places

    def append(self, record: dict[str, Any]) -> str:
        """Append one record as one write(2) of one line (fsynced in groups, see RecordLog).

        Returns the line as written (what a replay will read). A successful record joins
        `successful_records`' mapping."""
        text = record_line(record)
        if self._log is None:
            self._log = RecordLog(self.path / RECORDS)
        line = (text + "\n").encode()
        offset = self._log.write(line)
        if self._stored is not None and record.get("status") == "ok":
            self._stored.add(record["key"], offset, len(line) - 1)
        return text

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    def successful_records(self) -> StoredRecords:
        """Records with status "ok", by key, read from disk when looked up (only their places
        are in memory); records appended later with status "ok" join it.

        Failed records are dropped from disk, to be retried: rewriting (atomically, line by
        line) before the retry keeps exactly one record per key.
        """
        places = self._scan()
        ok = {k: (offset, length) for k, (offset, length, good) in places.items() if good}
        path = self.path / RECORDS
        if len(ok) != len(places):
            self._close_log()  # the rewrite replaces the file the log holds open
            ok = _rewrite(path, ok)
        self._close_stored()
        self._stored = StoredRecords(path, ok)
        return self._stored

    def _close_stored(self) -> None:
        if self._stored is not None:
            self._stored.close()
            self._stored = None

    def write_outputs(self, metrics: dict[str, Any], report_html: str) -> None:
        write_atomic(self.path / METRICS, json.dumps(metrics, indent=2, sort_keys=True))
        write_atomic(self.path / REPORT, report_html)

    def close(self, status: str) -> None:
        self._close_log()
        self._close_stored()
        self.write_manifest(status=status, finished_at=_now())
        fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
        os.close(self._lock_fd)


def step_recorded(path: Path, key: str) -> bool:
    """Whether the run at `path` holds a successful record for `key` (read-only, no lock).

    Lets a lens skip expensive input checks whose result a finished step already holds.
    """
    records = path / RECORDS
    if not records.exists():
        return False
    needle = json.dumps(key)
    for line in records.read_text(encoding="utf-8", errors="replace").splitlines():
        if needle in line:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if record.get("key") == key and record.get("status") == "ok":
                return True
    return False


def _rewrite(path: Path, keep: dict[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    """Rewrite records.jsonl with only the lines at `keep`, in order, copied byte for byte
    one at a time; returns their places in the new file."""
    old = StoredRecords(path, keep)
    places: dict[str, tuple[int, int]] = {}

    def lines() -> Iterator[bytes]:
        offset = 0
        for key in keep:
            line = old.raw(key) + b"\n"
            places[key] = (offset, len(line) - 1)
            offset += len(line)
            yield line

    try:
        write_atomic(path, lines())
    finally:
        old.close()
    return places


def _refusal(previous: dict[str, Any] | None, manifest: Manifest) -> str | None:
    """Why the run at hand cannot continue the one on disk (None: it can)."""
    if previous is None:
        return None
    if previous.get("contract", 1) != CONTRACT:
        return (f"run directory was written by an earlier personalens (lens contract "
                f"{previous.get('contract', 1)}, now {CONTRACT}), whose options were identified "
                "differently, so it cannot be resumed; its files are untouched: finish it with "
                "the personalens that wrote it or choose another --out")
    written = previous.get("record_schema") or _first_version(manifest.record_schema)
    if manifest.record_schema and written != manifest.record_schema:
        return (f"run directory holds {written} records and this personalens writes "
                f"{manifest.record_schema} (what a record holds changed), so it cannot be "
                "resumed; its files are untouched: finish it with the personalens that wrote it "
                "or choose another --out")
    if previous.get("config") != manifest.config:
        return ("run directory holds a run with a different configuration; resume it with the "
                "same options or choose another --out")
    return None


def _first_version(schema: str | None) -> str | None:
    return None if schema is None else f"{schema.partition('/')[0]}/1"


def _read_manifest(path: Path) -> dict[str, Any] | None:
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise InputError("manifest is not valid JSON; the run directory is damaged",
                         where=str(path)) from None


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def record_line(record: dict[str, Any]) -> str:
    """A record as records.jsonl holds it (one line, keys sorted)."""
    return json.dumps(record, ensure_ascii=False, sort_keys=True)


def read_run_manifest(path: Path) -> dict[str, Any]:
    """A finished or unfinished run's manifest, for a reader of runs (compare, judge-audit);
    InputError (one line) when `path` is not a run directory."""
    try:
        manifest = json.loads((path / MANIFEST).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"not a run directory (no readable {MANIFEST}: "
                         f"{type(exc).__name__})", where=str(path)) from None
    if not isinstance(manifest, dict) or not (path / RECORDS).is_file():
        raise InputError(f"not a run directory (no {RECORDS})", where=str(path))
    return manifest


def run_command(manifest: dict[str, Any]) -> str:
    """The command a run's manifest says it ran ("<lens> eval"); "?" when it says none."""
    config = manifest.get("config")
    return str((config if isinstance(config, dict) else {}).get("command")
               or manifest.get("command") or "?")

