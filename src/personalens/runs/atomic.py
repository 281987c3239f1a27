"""Whole-file writes that a crash cannot leave half-done: write a sibling, fsync, rename."""

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


def write_atomic(path: Path, text: str | bytes | Iterable[bytes]) -> None:
    """`text` may be given in pieces (an iterable of bytes), so a large file is never whole
    in memory."""
    if isinstance(text, str):
        text = text.encode("utf-8")
    pieces = [text] if isinstance(text, bytes) else text
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            for piece in pieces:
                handle.write(piece)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
