import json
import subprocess
import sys

import pytest

from personalens.errors import InputError
from personalens.runs import RunDirectory

MANIFEST = {"command": "test", "config": {"lens": "x", "k": 5}}


def test_records_append_and_a_later_record_replaces_an_earlier_one(tmp_path):
    run = RunDirectory.open(tmp_path / "run", MANIFEST)
    run.append({"key": "a", "v": 1})
    run.append({"key": "b", "v": 2})
    run.append({"key": "a", "v": 3})
    assert run.records() == {"a": {"key": "a", "v": 3}, "b": {"key": "b", "v": 2}}
    run.close("complete")


def test_a_line_cut_short_by_a_crash_is_dropped_and_appends_continue(tmp_path):
    run = RunDirectory.open(tmp_path / "run", MANIFEST)
    run.append({"key": "a"})
    with open(tmp_path / "run" / "records.jsonl", "ab") as handle:
        handle.write(b'{"key": "b", "trunc')
    assert set(run.records()) == {"a"}
    run.append({"key": "c"})
    lines = (tmp_path / "run" / "records.jsonl").read_text().splitlines()
    assert [json.loads(line)["key"] for line in lines] == ["a", "c"]
    run.close("complete")


def test_resume_keeps_started_at_and_counts_sessions(tmp_path):
    run = RunDirectory.open(tmp_path / "run", MANIFEST)
    started = run.manifest["started_at"]
    run.close("interrupted")
    again = RunDirectory.open(tmp_path / "run", MANIFEST)
    assert again.manifest["started_at"] == started and again.manifest["sessions"] == 2
    again.close("complete")
    saved = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert saved["status"] == "complete" and saved["sessions"] == 2


def test_a_different_configuration_is_refused(tmp_path):
    RunDirectory.open(tmp_path / "run", MANIFEST).close("complete")
    with pytest.raises(InputError, match="different configuration"):
        RunDirectory.open(tmp_path / "run", {**MANIFEST, "config": {"lens": "x", "k": 10}})


def test_a_directory_locked_by_another_process_is_refused(tmp_path):
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from pathlib import Path; from personalens.runs import RunDirectory;"
         f"RunDirectory.open(Path(sys.argv[1]), {MANIFEST!r}); print('locked', flush=True);"
         "time.sleep(60)", str(tmp_path / "run")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(InputError, match="being written by another process"):
            RunDirectory.open(tmp_path / "run", MANIFEST)
    finally:
        holder.kill()
        holder.wait()
    RunDirectory.open(tmp_path / "run", MANIFEST).close("complete")  # free once it died
