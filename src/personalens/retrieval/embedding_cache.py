"""Embeddings on disk, keyed by (model, sha256 of text): a corpus is never encoded twice."""

import hashlib
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from personalens.paths import cache_dir

_BATCH = 500  # SQLite's parameter limit is far above this; smaller batches keep queries short


def text_hash(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


class EmbeddingCache:
    @classmethod
    def default(cls) -> "EmbeddingCache":
        """The shared cache in personalens' cache folder ($PERSONALENS_CACHE_DIR)."""
        return cls(cache_dir() / "embeddings.sqlite")

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        # Not bound to the opening thread: a run encodes on its blocking worker (runs.blocking),
        # one call at a time, while the cache may have been opened on the main thread.
        self._db = sqlite3.connect(path, timeout=30, isolation_level=None,
                                   check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS embeddings (model TEXT NOT NULL, hash BLOB NOT NULL, "
            "vector BLOB NOT NULL, PRIMARY KEY (model, hash))"
        )

    def get_many(self, model: str, hashes: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        unique = list(dict.fromkeys(hashes))
        for start in range(0, len(unique), _BATCH):
            batch = unique[start:start + _BATCH]
            marks = ",".join("?" * len(batch))
            rows = self._db.execute(
                f"SELECT hash, vector FROM embeddings WHERE model = ? AND hash IN ({marks})",
                (model, *batch),
            )
            for digest, blob in rows:
                found[digest] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, model: str, hashes: Sequence[bytes], vectors: np.ndarray) -> None:
        rows = [(model, h, np.asarray(v, dtype=np.float32).tobytes())
                for h, v in zip(hashes, vectors, strict=True)]
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?)", rows)

    def lookup_or_encode(self, model: str, texts: list[str],
                         encode: Callable[[list[str]], Sequence[np.ndarray]],
                         ) -> tuple[list[np.ndarray], int]:
        """(a vector per text, how many texts were encoded): `encode` sees only uncached texts.

        Each distinct text is encoded once even when it repeats within `texts`.
        """
        hashes = [text_hash(t) for t in texts]
        known = self.get_many(model, hashes)
        missing = list(dict.fromkeys(h for h in hashes if h not in known))
        if missing:
            by_hash = dict(zip(hashes, texts, strict=True))
            fresh = [np.asarray(v, dtype=np.float32) for v in encode([by_hash[h] for h in missing])]
            self.put_many(model, missing, fresh)
            known.update(zip(missing, fresh, strict=True))
        return [known[h] for h in hashes], len(missing)

    def close(self) -> None:
        self._db.close()
