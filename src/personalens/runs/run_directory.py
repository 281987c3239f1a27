"""A run directory: manifest, append-only records, metrics and report; resumable, locked."""

import fcntl
import json
import os
import time
from pathlib import Path
from typing import Any

from personalens.errors import InputError
from personalens.runs.atomic import write_atomic
from personalens.runs.record_log import RecordLog

MANIFEST = "manifest.json"
RECORDS = "records.jsonl"
METRICS = "metrics.json"
REPORT = "report.html"
LOCK = ".lock"


class RunDirectory:
    """Open with `RunDirectory.open`; the directory stays locked until `close`."""

    def __init__(self, path: Path, lock_fd: int, manifest: dict[str, Any]):
        self.path = path
        self._lock_fd = lock_fd
        self.manifest = manifest
        self._log: RecordLog | None = None  # opened by the first append

    @classmethod
    def open(cls, path: Path, manifest: dict[str, Any]) -> "RunDirectory":
        """Create or resume the run at `path`; refuse one that another process is writing.

        `manifest["config"]` identifies the run: resuming with a different config is refused,
        because mixing records of two configurations would make every metric meaningless.
        """
        if path.exists() and not path.is_dir():
            raise InputError("run directory path exists and is not a directory", where=str(path))
        path.mkdir(parents=True, exist_ok=True)
        lock_fd = os.open(path / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(lock_fd)
            raise InputError("run directory is being written by another process; wait for it "
                             "or choose another --out", where=str(path)) from None
        previous = _read_manifest(path / MANIFEST)
        if previous is not None and previous.get("config") != manifest.get("config"):
            fcntl.flock(lock_fd, fcntl.LOCK_UN)
            os.close(lock_fd)
            raise InputError("run directory holds a run with a different configuration; "
                             "resume it with the same options or choose another --out",
                             where=str(path))
        manifest = dict(manifest)
        manifest["started_at"] = (previous or {}).get("started_at", _now())
        manifest["sessions"] = (previous or {}).get("sessions", 0) + 1
        manifest["status"] = "running"
        run = cls(path, lock_fd, manifest)
        # Token usage of earlier sessions, so totals and cost cover the whole run after resumes.
        run.previous_usage = (previous or {}).get("usage", {})
        run.write_manifest()
        return run

    def write_manifest(self, **updates: Any) -> None:
        self.manifest.update(updates)
        write_atomic(self.path / MANIFEST, json.dumps(self.manifest, indent=2, sort_keys=True))

    def records(self) -> dict[str, dict[str, Any]]:
        """Records by key (a later record for a key replaces an earlier one).

        A line cut short by a crash mid-write is removed, so appends continue on a clean file.
        """
        path = self.path / RECORDS
        if not path.exists():
            return {}
        data = path.read_bytes()
        complete, _, partial = data.rpartition(b"\n")
        if partial:
            os.truncate(path, len(complete) + 1 if complete else 0)
        by_key: dict[str, dict[str, Any]] = {}
        for number, line in enumerate(complete.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                raise InputError(f"line {number} is not JSON; the run directory is damaged",
                                 where=str(path)) from None
            if not isinstance(record, dict) or "key" not in record:
                raise InputError(f"line {number} has no record key; the run directory is "
                                 "damaged", where=str(path))
            by_key[record["key"]] = record
        return by_key

    def append(self, record: dict[str, Any]) -> str:
        """Append one record as one write(2) of one line (fsynced in groups, see RecordLog).

        Returns the line as written (what a replay will read)."""
        text = record_line(record)
        if self._log is None:
            self._log = RecordLog(self.path / RECORDS)
        self._log.write((text + "\n").encode())
        return text

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    def successful_records(self) -> dict[str, dict[str, Any]]:
        """Records with status "ok"; failed ones are dropped from disk, to be retried.

        Rewriting (atomically) before the retry keeps exactly one record per key.
        """
        records = self.records()
        ok = {k: r for k, r in records.items() if r["status"] == "ok"}
        if len(ok) != len(records):
            self._close_log()  # the rewrite replaces the file the log holds open
            text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n"
                           for r in ok.values())
            write_atomic(self.path / RECORDS, text)
        return ok

    def write_outputs(self, metrics: dict[str, Any], report_html: str) -> None:
        write_atomic(self.path / METRICS, json.dumps(metrics, indent=2, sort_keys=True))
        write_atomic(self.path / REPORT, report_html)

    def close(self, status: str) -> None:
        self._close_log()
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
