"""Offline: every prefdisco role played by the bundled SmolLM2 (--allow-self-judging), end to
end, through the real CLI, with the default protocol (release: a final prompt after the
dialogue), the default correctness judge and the default --max-tokens (8192, capped to the
local context). Under llama.cpp's constrained decoding
(a GBNF grammar per discovery turn and per answer, JSON schemas for every structured reply) a
135M model completes every item: none may fail, and every answer ends by itself."""

import json

import pytest

from tests.cli_runner import personalens
from tests.prefdisco_data import MMLU_ROW, two_preferences, write

LOCAL = "local/smollm2-135m"


def _records(run) -> dict[str, dict]:
    return {r["key"]: r for r in map(json.loads, (run / "records.jsonl").open())}


def _assert_nothing_failed(run, result) -> dict:
    assert result.returncode == 0, result.stdout + result.stderr
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["failures"] == []
    assert [k for k, r in _records(run).items() if r["status"] != "ok"] == []
    return metrics


def _assert_every_condition_scored(run, metrics: dict, instances: list[str]) -> None:
    assert metrics["n_failed"] == 0 and metrics["n_instances"] == len(instances)
    records = _records(run)
    for instance in instances:
        for condition in ("baseline", "discovery", "oracle"):
            record = records[f"{instance}/{condition}"]
            assert record["prefalign"] is not None and 1 <= record["prefalign"] <= 5
            scores = [v["score"] for c in record["criteria"] for v in c["verdicts"]]
            assert scores and all(s is None or 1 <= s <= 5 for s in scores)
            # The judge decided every answer's correctness (the release's method: no ANSWER
            # line is asked for, none is forced); the grammar holds an answer to 1,024
            # characters: the model stops by itself, well inside the capped max_tokens.
            assert record["correctness"]["judged"] is True
            assert len(record["response"]) <= 1024 and record["finish_reason"] == "stop"
            assert 4000 < record["max_tokens"] < 8192  # capped below the context
        discovery = records[f"{instance}/discovery"]
        # --turns 1: one turn (a question, with its reply, or an early answer), then the
        # final prompt; no answer turn is asked for inside the dialogue.
        (turn,) = discovery["transcript"]
        assert turn["action"] == "final" or turn["reply"].strip()
        assert all(t["raw"].startswith("###ACTION###: ") and t["attempts"] == 1
                   for t in discovery["transcript"])
        # The scored answer is the final prompt's, written without the wire format.
        assert not discovery["response"].startswith("###")
    for condition in ("baseline", "discovery", "oracle"):
        assert metrics["prefalign"][condition]["mean"] is not None
        assert metrics["accuracy"][condition]["n_unparsed"] == 0
        assert metrics["accuracy"][condition]["n"] == len(instances)
        assert metrics["truncated"][condition] == {"count": 0, "share": 0.0,
                                                   "n": len(instances)}


@pytest.mark.bundled_model
@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_eval_runs_every_role_on_the_bundled_model(tmp_path):
    data = write(tmp_path / "mmlu.jsonl", [two_preferences("p1")])
    run = tmp_path / "run"
    result = personalens("prefdisco", "eval", "--data", data, "--out", run,
                         "--turns", "1", "--allow-self-judging", timeout=1700)
    metrics = _assert_nothing_failed(run, result)
    _assert_every_condition_scored(run, metrics, ["mmlu/p1"])
    assert (metrics["protocol"], metrics["truncated_answers"]) == ("release", "exclude")
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["models"] == {"target": LOCAL, "user": LOCAL, "judge": LOCAL}
    assert (manifest["config"]["temperature"], manifest["config"]["user_temperature"],
            manifest["config"]["judge_temperature"]) == (0.0, 0.4, 0.0)
    assert "NormAlign (overall)" in result.stdout
    assert "PrefAlign" in (run / "report.html").read_text()


@pytest.mark.bundled_model
@pytest.mark.minilm
@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_the_smallest_build_and_eval_finish_on_the_bundled_model(tmp_path):
    problems = tmp_path / "mmlu.jsonl"
    problems.write_text(json.dumps({**MMLU_ROW, "id": "q1"}) + "\n")
    build = tmp_path / "build"
    result = personalens("prefdisco", "build", "--problems", problems, "--out", build,
                         "--personas", "1", "--per-problem", "1", "--candidates", "3",
                         "--preferences", "2", timeout=1700)
    _assert_nothing_failed(build, result)
    rows = [json.loads(line) for line in (build / "data" / "mmlu.jsonl").open()]
    assert rows[0]["type"] == "metadata" and len(rows) == 2
    preferences = rows[1]["persona_preferences"]
    assert 1 <= len(preferences) <= 2
    assert all(0 < p["local_importance"] <= 1 for p in preferences.values())
    criteria = rows[1]["evaluation_rubric"]["evaluation_criteria"]
    assert [[level["score"] for level in c["levels"]] for c in criteria] == [[1, 3, 5]] * len(
        preferences)
    assert sum(c["weight"] for c in criteria) == pytest.approx(1.0)

    run = tmp_path / "eval"
    result = personalens("prefdisco", "eval", "--data", build / "data", "--out", run,
                         "--turns", "1", "--allow-self-judging", timeout=1700)
    metrics = _assert_nothing_failed(run, result)
    _assert_every_condition_scored(run, metrics, ["mmlu/q1-p0"])
