"""Progress off a terminal: a line at a steady interval, not a bar printed at the end."""

import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from personalens.errors import InputError
from personalens.runs.progress import ItemProgress, ProgressLines, line_interval


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_a_progress_line_gives_done_total_failures_rate_and_eta():
    clock = Clock()
    lines = ProgressLines("prefdisco", io.StringIO(), 3600, clock=clock)
    lines.start(total=40, completed=10)  # 10 recorded by an earlier session
    assert lines.line() == ("prefdisco: 10/40 items (25%), 0 failed, no item finished yet, "
                            "elapsed 0s")
    for failed in (False, True, False, False, False, False):
        lines.advance(failed)
    clock.now += 120  # 6 items in 2 minutes: 3 per minute; 24 left take 8 minutes
    lines.steps = 7
    assert lines.line() == ("prefdisco: 16/40 items (40%), 1 failed, 7 steps, 3.0 items/min, "
                            "elapsed 2m00s, ETA 8m00s")
    clock.now += 3 * 3600
    assert "elapsed 3h02m" in lines.line()
    lines.stop()


def test_lines_come_at_the_interval_while_nothing_finishes():
    stream = io.StringIO()
    progress = ItemProgress("toy", stream=stream, interval=0.05)  # a StringIO is no terminal
    progress.start(total=3, completed=0)
    time.sleep(0.4)  # one long item: still a line every interval
    progress.advance(failed=True)
    progress.stop()
    printed = stream.getvalue().splitlines()
    assert len(printed) >= 4
    assert printed[0].startswith("toy: 0/3 items (0%), 0 failed, no item finished yet")
    assert printed[-1].startswith("toy: 1/3 items (33%), 1 failed, ")
    assert "\x1b" not in stream.getvalue()  # plain text, no terminal control codes


def test_the_interval_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("PERSONALENS_PROGRESS_INTERVAL", "2.5")
    assert line_interval() == 2.5
    for bad in ("soon", "0", "-3", "nan", "inf"):
        monkeypatch.setenv("PERSONALENS_PROGRESS_INTERVAL", bad)
        with pytest.raises(InputError, match=f"PERSONALENS_PROGRESS_INTERVAL='{bad}'"):
            line_interval()
    monkeypatch.setenv("PERSONALENS_PROGRESS_INTERVAL", " ")
    assert line_interval() == 30.0
    monkeypatch.delenv("PERSONALENS_PROGRESS_INTERVAL")
    assert line_interval() == 30.0


def test_a_bad_interval_is_one_line_exit_2_before_anything_is_written(tmp_path):
    from tests.cli_runner import personalens

    pd_table = "record,profile,memory,score\n" + "".join(
        f"r{r},{p},{m},{r + p}\n" for r in range(3) for p in (0, 1) for m in (0, 1))
    (tmp_path / "s.csv").write_text(pd_table)
    result = personalens("prisk", "stats", "--scores", tmp_path / "s.csv", "--out",
                         tmp_path / "run", env={"PERSONALENS_PROGRESS_INTERVAL": "10s"})
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "personalens: error: PERSONALENS_PROGRESS_INTERVAL='10s': give the seconds between "
        "progress lines, a number above 0"]
    assert not (tmp_path / "run").exists()


_SLOW_RUN = """
import asyncio, sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from tests.runs.test_harness import ToyLens
from personalens.runs import run_lens

class Slow(ToyLens):
    async def run_item(self, item):
        await asyncio.sleep(0.5)
        return await super().run_item(item)

run_lens(Slow(keys=["a", "b", "c"], concurrency=1, failing={"b"}), Path(sys.argv[2]))
"""


@pytest.mark.subprocess
def test_a_run_piped_to_a_file_reports_progress_while_it_runs(tmp_path):
    process = subprocess.Popen(
        [sys.executable, "-c", _SLOW_RUN, str(Path(__file__).parents[2]), str(tmp_path / "run")],
        stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PERSONALENS_PROGRESS_INTERVAL": "0.2"})
    first = process.stderr.readline()  # arrives long before the 1.5 s run ends
    assert first.startswith("toy: 0/3 items (0%), 0 failed"), first
    assert process.poll() is None
    rest = process.stderr.read()
    process.wait(timeout=60)
    assert rest.splitlines()[-1].startswith("toy: 3/3 items (100%), 1 failed, ")
