"""Content-addressed on-disk cache of completions (SQLite), keyed by everything that changes one."""

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

from personalens.models.completion import Completion, Message, Usage


def cache_key(spec: str, endpoint: str, messages: list[Message], params: dict[str, Any]) -> str:
    """sha256 over the model spec, endpoint, messages and sampling params (never credentials)."""
    payload = json.dumps(
        {"spec": spec, "endpoint": endpoint, "messages": messages, "params": params},
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode()).hexdigest()


class ResponseCache:
    """Completions by key; safe to share between processes (WAL, one short transaction per put)."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(path, timeout=30, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        # In WAL mode NORMAL keeps the database consistent through a crash (a power loss can
        # lose the last answers, which are then asked again); FULL fsynced every answer on the
        # event loop, a fifth of a BM25 evaluation's samples (bench/scaling.py).
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS completions ("
            "key TEXT PRIMARY KEY, text TEXT NOT NULL, "
            "prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL)"
        )
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(completions)")}
        if "finish_reason" not in columns:
            # A cache written before finish reasons were kept gains the column; its old rows
            # read back with None ("not said"), as from a server that does not say.
            try:
                self._db.execute("ALTER TABLE completions ADD COLUMN finish_reason TEXT")
            except sqlite3.OperationalError as exc:  # another process added it first
                if "duplicate column" not in str(exc):
                    raise

    def get(self, key: str) -> Completion | None:
        row = self._db.execute(
            "SELECT text, prompt_tokens, completion_tokens, finish_reason FROM completions "
            "WHERE key = ?", (key,)
        ).fetchone()
        if row is None:
            return None
        return Completion(text=row[0], usage=Usage(row[1], row[2]), cached=True,
                          finish_reason=row[3])

    def put(self, key: str, completion: Completion) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO completions "
            "(key, text, prompt_tokens, completion_tokens, finish_reason) VALUES (?, ?, ?, ?, ?)",
            (key, completion.text, completion.usage.prompt_tokens,
             completion.usage.completion_tokens, completion.finish_reason),
        )

    def close(self) -> None:
        self._db.close()
