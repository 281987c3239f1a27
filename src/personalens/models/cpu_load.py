"""How busy the machine's cores are with other processes' work, measured in a moment.

The local model's threads meet at a barrier after every step, so a thread that another process
keeps off its core stalls the rest (beside one busy process on 2 cores, 1 thread generated twice
as fast as 2: bench/local_model_poll.py). Counting the cores other processes keep busy right now
lets the local model say when that will slow it; the load average would count this process's own
earlier work (the demo's generation stage, say) as somebody else's.
"""

import os
import time
from dataclasses import dataclass

PROC_STAT = "/proc/stat"


@dataclass(frozen=True)
class CoreUse:
    cores: int  # cores this process may run on
    busy_elsewhere: float  # cores' worth of other processes' work during the window


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def measure(window: float = 0.25) -> CoreUse | None:
    """Other processes' CPU use over `window` seconds; None where /proc/stat cannot be read."""
    try:
        before_busy, before_all = _machine_jiffies()
        own_before = _own_seconds()
        start = time.monotonic()
        time.sleep(window)
        after_busy, after_all = _machine_jiffies()
        own = _own_seconds() - own_before
        elapsed = time.monotonic() - start
    except (OSError, ValueError, IndexError):
        return None
    if after_all <= before_all or elapsed <= 0:
        return None
    machine_cores = os.cpu_count() or 1
    busy_share = (after_busy - before_busy) / (after_all - before_all)  # of every core
    busy_cores = busy_share * machine_cores - own / elapsed
    return CoreUse(usable_cores(), max(0.0, busy_cores))


def _machine_jiffies() -> tuple[int, int]:
    """(busy, total) jiffies summed over every core since boot."""
    with open(PROC_STAT) as handle:
        fields = [int(x) for x in handle.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    total = sum(fields[:8])  # guest time is already inside user time
    return total - idle, total


def _own_seconds() -> float:
    times = os.times()
    return times.user + times.system
