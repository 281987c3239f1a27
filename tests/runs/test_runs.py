import json
import subprocess
import sys
import threading

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


def test_appends_after_dropping_failed_records_land_in_the_rewritten_file(tmp_path):
    # The rewrite replaces records.jsonl; a log still holding the old file would lose these.
    run = RunDirectory.open(tmp_path / "run", MANIFEST)
    run.append({"key": "a", "status": "ok"})
    run.append({"key": "b", "status": "failed"})
    assert set(run.successful_records()) == {"a"}
    run.append({"key": "b", "status": "ok"})
    run.close("complete")
    lines = (tmp_path / "run" / "records.jsonl").read_text().splitlines()
    assert [(json.loads(x)["key"], json.loads(x)["status"]) for x in lines] == [
        ("a", "ok"), ("b", "ok")]


def test_every_appended_line_is_on_disk_before_close_and_fsynced_by_close(tmp_path, monkeypatch):
    import os

    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    run = RunDirectory.open(tmp_path / "run", MANIFEST)
    for i in range(50):
        run.append({"key": str(i)})
    # Written through to the kernel at once (another reader sees every line before close).
    assert len((tmp_path / "run" / "records.jsonl").read_text().splitlines()) == 50
    synced.clear()
    run.close("complete")
    assert synced  # the last lines are fsynced before the run is closed
    assert not [t for t in threading.enumerate() if t.name == "records-fsync"]


def test_resume_keeps_started_at_and_counts_sessions(tmp_path):
    run = RunDirectory.open(tmp_path / "run", MANIFEST)
    started = run.manifest.started_at
    run.close("interrupted")
    again = RunDirectory.open(tmp_path / "run", MANIFEST)
    assert again.manifest.started_at == started and again.manifest.sessions == 2
    again.close("complete")
    saved = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert saved["status"] == "complete" and saved["sessions"] == 2


def test_a_different_configuration_is_refused(tmp_path):
    RunDirectory.open(tmp_path / "run", MANIFEST).close("complete")
    with pytest.raises(InputError, match="different configuration"):
        RunDirectory.open(tmp_path / "run", {**MANIFEST, "config": {"lens": "x", "k": 10}})


def test_a_run_written_before_contract_2_is_refused_with_the_reason_and_left_untouched(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    old = {"command": "personalens x", "config": {"lens": "x", "k": 5}, "status": "complete"}
    (run_dir / "manifest.json").write_text(json.dumps(old))
    (run_dir / "records.jsonl").write_text('{"key": "a", "status": "ok"}\n')
    with pytest.raises(InputError, match=r"earlier personalens \(lens contract 1, now 2\)"):
        RunDirectory.open(run_dir, MANIFEST)
    assert json.loads((run_dir / "manifest.json").read_text()) == old
    assert (run_dir / "records.jsonl").read_text() == '{"key": "a", "status": "ok"}\n'


@pytest.mark.parametrize("written", [{"record_schema": "x.eval/1"}, {}])
def test_a_run_of_an_older_record_schema_is_refused_and_left_untouched(tmp_path, written):
    # A manifest that names no schema was written before manifests did: version 1.
    RunDirectory.open(tmp_path / "run", {**MANIFEST, **written}).close("interrupted")
    saved = (tmp_path / "run" / "manifest.json").read_text()
    with pytest.raises(InputError, match=r"holds x\.eval/1 records and this personalens writes "
                                         r"x\.eval/2 \(what a record holds changed\)"):
        RunDirectory.open(tmp_path / "run", {**MANIFEST, "record_schema": "x.eval/2"})
    assert (tmp_path / "run" / "manifest.json").read_text() == saved
    again = RunDirectory.open(tmp_path / "run", {**MANIFEST, "record_schema": "x.eval/1"})
    assert again.manifest.sessions == 2 and again.manifest.record_schema == "x.eval/1"
    again.close("complete")


@pytest.mark.subprocess
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


def test_two_callers_of_one_step_share_one_computation_and_one_record(tmp_path):
    import asyncio

    from personalens.runs.step_store import StepStore

    run = RunDirectory.open(tmp_path / "run", MANIFEST)
    steps = StepStore(run)
    calls = []

    async def compute():
        calls.append(1)
        await asyncio.sleep(0.01)
        return {"answer": 42}

    async def scenario():
        return await asyncio.gather(steps.get("s/1", compute), steps.get("s/1", compute))

    assert asyncio.run(scenario()) == [{"answer": 42}, {"answer": 42}]
    run.close("complete")
    lines = (tmp_path / "run" / "records.jsonl").read_text().splitlines()
    assert len(calls) == 1 and len(lines) == 1


def test_successful_records_are_read_from_disk_when_looked_up_not_held(tmp_path):
    run = RunDirectory.open(tmp_path / "run", MANIFEST)
    run.append({"key": "a", "status": "ok", "v": 1})
    run.append({"key": "b", "status": "ok", "v": 2})
    run.append({"key": "c", "status": "failed"})  # dropped: the file is rewritten
    stored = run.successful_records()
    assert list(stored) == ["a", "b"] and len(stored) == 2 and "c" not in stored
    # Change b's value on disk, same length: a mapping holding records would still say 2.
    path = tmp_path / "run" / "records.jsonl"
    path.write_bytes(path.read_bytes().replace(b'"v": 2', b'"v": 7'))
    assert stored["b"] == {"key": "b", "status": "ok", "v": 7}
    # Appends after the rewrite join the mapping at their real offsets; failed ones do not.
    run.append({"key": "d", "status": "ok", "v": 4})
    run.append({"key": "e", "status": "failed"})
    run.append({"key": "a", "status": "ok", "v": 5})  # a later record replaces the earlier
    assert {k: stored[k]["v"] for k in stored} == {"a": 5, "b": 7, "d": 4}
    assert stored.raw("d") == b'{"key": "d", "status": "ok", "v": 4}'
    run.close("complete")


def test_a_resumed_run_finds_its_records_after_a_cut_line_and_appends_at_the_right_place(
        tmp_path):
    run = RunDirectory.open(tmp_path / "run", MANIFEST)
    run.append({"key": "a", "status": "ok", "v": "ä" * 3})  # multi-byte: offsets are bytes
    run.close("interrupted")
    with open(tmp_path / "run" / "records.jsonl", "ab") as handle:
        handle.write(b'{"key": "b", "status": "o')  # the crash cut this line short
    run = RunDirectory.open(tmp_path / "run", MANIFEST)
    stored = run.successful_records()
    run.append({"key": "c", "status": "ok", "v": 3})
    assert {k: stored[k]["v"] for k in stored} == {"a": "äää", "c": 3}
    run.close("complete")
    run = RunDirectory.open(tmp_path / "run", MANIFEST)
    assert {k: v["v"] for k, v in run.successful_records().items()} == {"a": "äää", "c": 3}
    run.close("complete")
