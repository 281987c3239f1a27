"""records.jsonl held open for appends, with its fsyncs grouped on a background thread.

Each record is one write(2) of one line, so once `write` returns the line is in the kernel and
survives `kill -9` of this process. The fsync (which guards against the machine itself going
down) is what costs: done per record on the event loop it stalled every concurrent item. Here
one thread fsyncs whenever lines were written since its last fsync, so a burst of records
shares one, the loop never waits, and `close` fsyncs whatever is left.

`write` returns the offset its line starts at (this process is the file's only writer, under
the run directory's lock), so a record can be read back later without keeping it in memory.
"""

import os
import threading
from pathlib import Path


class RecordLog:
    def __init__(self, path: Path):
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        self._end = os.fstat(self._fd).st_size
        self._written = threading.Event()
        self._closing = False
        self._thread = threading.Thread(target=self._sync_loop, name="records-fsync",
                                        daemon=True)
        self._thread.start()

    def write(self, line: bytes) -> int:
        offset = self._end
        os.write(self._fd, line)
        self._end += len(line)
        self._written.set()
        return offset

    def _sync_loop(self) -> None:
        while True:
            self._written.wait()
            if self._closing:
                return
            self._written.clear()
            os.fsync(self._fd)

    def close(self) -> None:
        self._closing = True
        self._written.set()
        self._thread.join()
        os.fsync(self._fd)
        os.close(self._fd)
