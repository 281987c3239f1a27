"""The offline default: `prisk eval` with the bundled SmolLM2 as target, router and judge, and
the bundled MiniLM as the memory retriever."""

import json

import pytest

from cli_runner import personalens
from prisk_double import record, write


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_eval_runs_on_the_bundled_models(tmp_path):
    data = write(tmp_path / "data", [record("i1", "irp"),
                                     record("a1", "accuracy", question="2 + 2 = ?",
                                            choices=("3", "4", "5", "6"), answer="B")])
    out = tmp_path / "run"
    result = personalens("prisk", "eval", "--data", data, "--out", out, "--risks", "irp",
                         "--max-tokens", "64", timeout=1700)
    # A 135M model may fail the router's JSON or give no valid verdict: a recorded failure
    # (exit 3), never a crash, a guessed decision or a default score.
    assert result.returncode in (0, 3), result.stderr
    records = {r["key"]: r for r in map(json.loads, (out / "records.jsonl").open())}
    for key in ("i1", "a1"):
        item = records[key]
        if item["status"] != "ok":
            assert item["error"]["kind"] in ("invalid_structured_output", "invalid_verdict")
            continue
        assert item["router"] in ("retrieval", "no_retrieval")
        assert set(item["conditions"]) == {"base", "profile", "retrieval", "profile_retrieval"}
        for answer in item["conditions"].values():
            assert 0 <= answer["score"] <= 5
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["models"]["target"] == "local/smollm2-135m"
    assert manifest["config"]["retriever"] == "minilm"
    assert "Risk × condition" in (out / "report.html").read_text()
