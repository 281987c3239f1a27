"""`personalens prisk eval` end to end: the real command against a real OpenAI-compatible HTTP
server on 127.0.0.1 that plays target and judge by model name; bad input; kill -9, then resume."""

import json

import pytest

from tests.cli_runner import kill_after_records, personalens, start
from tests.fault_server import FaultServer
from tests.prisk_double import CONDITIONS, behaviours, dataset


def _server_reply():
    roles = behaviours()

    def reply(body: dict) -> str:
        return roles[body["model"]](body["messages"], body)
    return reply


def _args(data, base_url, out, *extra):
    return ("prisk", "eval", "--data", data, "--model", "openai/target", "--judge",
            "openai/judge", "--base-url", base_url, "--no-cache", "--retriever", "bm25",
            "--samples", "2", "--base-samples", "2", "--out", out, *extra)


def _records(out) -> list[dict]:
    return [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]


def test_eval_through_the_cli_against_a_real_http_server(tmp_path):
    data, out = dataset(tmp_path / "data"), tmp_path / "run"
    with FaultServer(_server_reply()) as server:
        result = personalens(*_args(data, server.base_url, out))
    assert result.returncode == 0, result.stderr
    assert "irp LMM" in result.stdout
    metrics = json.loads((out / "metrics.json").read_text())
    # i1, i2 and the benchmark record a1 (its answers judged for IRP too)
    assert [metrics["irp"][c]["mean"] for c in CONDITIONS] == \
        pytest.approx([5.0, 3.0, 4.0, 8 / 3])
    targets = [b for b in server.requests if b["model"] == "target"]
    # Routers twice per record (on the query; on the profile with the query: 2 x 7), answers:
    # 5 single-answer records x 4 conditions, narrowing 2 records x 4 conditions x 2 samples,
    # f1's inverted-preference answer and its independent base reference.
    assert len(targets) == 2 * 7 + 5 * 4 + 2 * 4 * 2 + 1 + 1
    answers = [b for b in targets if b["messages"][0]["content"].startswith("You are a helpful")]
    assert {b["temperature"] for b in answers} == {0.2, 0.8}  # answers and narrowing samples
    assert all(b["temperature"] == 0.0 for b in server.requests if b["model"] == "judge")
    framing = [b["messages"][1]["content"] for b in server.requests if b["model"] == "judge"
               and "perspective framing" in b["messages"][1]["content"]]
    assert len(framing) == 4  # every condition of f1, each against the base answer
    assert all("Generic reference answer (no user context):\n<<<\n[f1/base]" in text
               for text in framing)
    page = (out / "report.html").read_text()
    assert "Attribution: score ~ P × M + (1 | record)" in page and "Narrowing" in page


@pytest.mark.slow
def test_kill_9_mid_run_then_resume_equals_an_uninterrupted_run(tmp_path):
    data = dataset(tmp_path / "data")
    extra = ("--concurrency", "1")
    with FaultServer(_server_reply(), delay=0.01) as server:
        reference = tmp_path / "reference"
        assert personalens(*_args(data, server.base_url, reference, *extra)).returncode == 0
        out = tmp_path / "killed"
        process = start(*_args(data, server.base_url, out, *extra))
        kill_after_records(process, out / "records.jsonl", 6)
        process.wait()
        assert 6 <= len(_records(out)) < len(_records(reference))
        resumed = personalens(*_args(data, server.base_url, out, *extra))
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads((out / "metrics.json").read_text()) == \
        json.loads((reference / "metrics.json").read_text())
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["sessions"] == 2 and manifest["status"] == "complete"


def test_bad_records_are_one_line_exit_2_and_write_nothing(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "bad.json").write_text(json.dumps({"records": [{
        "record_id": "x1", "target_risk": "agreement", "persona": {}, "query": "Was I wrong?"}]}))
    result = personalens(*_args(data, "http://127.0.0.1:9/v1", tmp_path / "run"))
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "bad.json record 0 (x1)" in result.stderr and "field persona" in result.stderr
    assert not (tmp_path / "run").exists()
