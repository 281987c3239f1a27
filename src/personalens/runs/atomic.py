"""Whole-file writes that a crash cannot leave half-done: write a sibling, fsync, rename."""

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

# mkstemp creates its file 0600 whatever the umask; the finished file should have the mode any
# other file the user writes gets (0666 less the umask). Read once: os.umask can only be read by
# setting it, which is not safe once threads run.
_UMASK = os.umask(0o022)
os.umask(_UMASK)
FILE_MODE = 0o666 & ~_UMASK


def write_atomic(path: Path, text: str | bytes | Iterable[bytes]) -> None:
    """`text` may be given in pieces (an iterable of bytes), so a large file is never whole
    in memory."""
    if isinstance(text, str):
        text = text.encode("utf-8")
    pieces = [text] if isinstance(text, bytes) else text
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "wb") as handle:
            for piece in pieces:
                handle.write(piece)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
