"""End to end through the CLI against a real OpenAI-compatible HTTP server on 127.0.0.1."""

import json
import signal

import numpy as np
import pytest

from personalens.population.release_reader import load_community
from tests.cli_runner import kill_after_records, personalens, start
from tests.conftest import EXAMPLE
from tests.fault_server import FaultServer

FAKE_KEY = "sk-personalens-test-SECRET-4f9a1c"


def _gold_by_question() -> dict[str, object]:
    community = load_community(EXAMPLE / "community_example", ["0.0"])
    return {q.question: q.answer for qs in community.questions.values() for q in qs}


def oracle(body: dict) -> str:
    """Answers with the gold answer's JSON, so every answer's F1 is 1 ...

    ... except where two people share a question text with different answers ("How old am I?":
    31 vs 27; Rafael's relationship: brother vs friend): there the last person's answer is
    given, and one of the two scores 0. So 25 of 27 answers per noise level score 1.
    """
    question = body["messages"][-1]["content"].rsplit("Question:", 1)[-1].strip()
    return json.dumps(_gold_by_question()[question])


def _records(run_dir) -> list[dict]:
    return [json.loads(x) for x in (run_dir / "records.jsonl").read_text().splitlines()]


def test_eval_against_a_real_http_server(tmp_path):
    out = tmp_path / "run"
    with FaultServer(oracle) as stub:
        result = personalens("personabench", "eval", "--data", EXAMPLE, "--noise", "0.0,0.5",
                             "--retriever", "bm25", "--model", "openai/stub-model",
                             "--base-url", stub.base_url, "--api-key-env", "STUB_KEY",
                             "--out", out, env={"STUB_KEY": FAKE_KEY})
    assert result.returncode == 0, result.stderr
    assert len(stub.requests) == 54  # 27 scored questions (3 Subjective skipped) x 2 noise levels
    assert stub.headers[0]["authorization"] == f"Bearer {FAKE_KEY}"
    assert stub.requests[0]["model"] == "stub-model" and stub.requests[0]["temperature"] == 0.0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["complete"] and len(metrics["conditions"]) == 2
    for condition in metrics["conditions"]:
        overall = condition["end_to_end"]["overall"]
        assert overall["n"] == 27
        assert overall["precision"] == overall["recall"] == overall["f1"] == pytest.approx(25 / 27)
        # The predictions are the current values. "films" of "horror films" is also in the
        # current "animated films", so it is not a stale word: nothing outdated is repeated.
        assert condition["info_updating"] == {
            "outdated_recall": 0.0, "n": 3, "score": 1.0,
            # Every question scores the same, so every resample does too.
            "ci_low": {"outdated_recall": 0.0, "score": 1.0},
            "ci_high": {"outdated_recall": 0.0, "score": 1.0}}
        # F1 is 1 on 25 of the 27 questions and 0 on 2: the 95 % percentile bootstrap over
        # questions (1000 resamples, seed 0), recomputed here from the records.
        f1 = np.array([r["end_to_end"]["f1"] for r in _records(out)
                       if r["noise"] == f"{condition['noise']:.1f}"])
        means = f1[np.random.default_rng(0).integers(0, 27, (1000, 27))].mean(axis=1)
        assert overall["ci_low"]["f1"] == pytest.approx(np.quantile(means, 0.025))
        assert overall["ci_high"]["f1"] == pytest.approx(np.quantile(means, 0.975))
        assert overall["ci_low"]["f1"] < 25 / 27 < overall["ci_high"]["f1"]
        assert overall["ci_low"]["recall"] == overall["ci_low"]["f1"]  # P = R = F1 per question
    assert metrics["noise_robustness"] == {"bm25": 1.0}
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["usage"]["target"]["requests"] == 54
    assert manifest["status"] == "complete"
    assert manifest["models"] == {"target": "openai/stub-model"}
    # The key never reaches anything the run wrote.
    for path in out.rglob("*"):
        if path.is_file():
            assert FAKE_KEY not in path.read_text(errors="replace"), path
    assert "report:" in result.stdout and (out / "report.html").read_text().count("<table>") >= 4


def test_rerunning_a_finished_run_does_no_work(tmp_path):
    out = tmp_path / "run"
    args = ("personabench", "eval", "--data", EXAMPLE, "--noise", "0.0", "--retriever", "bm25",
            "--model", "openai/m", "--no-cache", "--out", out)
    with FaultServer(oracle) as stub:
        assert personalens(*args, "--base-url", stub.base_url).returncode == 0
        first = (out / "records.jsonl").read_text()
        assert personalens(*args, "--base-url", stub.base_url).returncode == 0
    assert len(stub.requests) == 27
    assert (out / "records.jsonl").read_text() == first


def test_failed_calls_are_recorded_reported_and_retried_on_rerun(tmp_path):
    out = tmp_path / "run"
    args = ("personabench", "eval", "--data", EXAMPLE, "--noise", "0.0", "--retriever", "bm25",
            "--model", "openai/m", "--no-cache", "--out", out)

    def flaky(body):
        if "What is my job?" in body["messages"][-1]["content"]:
            raise RuntimeError("boom")  # the stub answers 500 for this question
        return oracle(body)

    with FaultServer(flaky) as stub:
        result = personalens(*args, "--base-url", stub.base_url, "--max-attempts", "2")
    assert result.returncode == 3, result.stderr
    assert "run incomplete: 1 item(s) failed" in result.stderr
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["n_failed"] == 1 and not metrics["complete"]
    assert metrics["failures"][0]["kind"] == "server_error"
    assert metrics["end_to_end"]["overall"]["n"] == 26  # the failure is not scored as zero
    assert metrics["end_to_end"]["overall"]["f1"] == pytest.approx(24 / 26)
    assert metrics["retrieval"]["overall"]["n"] == 27
    assert json.loads((out / "manifest.json").read_text())["status"] == "incomplete"
    assert "server_error" in (out / "report.html").read_text()
    with FaultServer(oracle) as stub:
        assert personalens(*args, "--base-url", stub.base_url).returncode == 0
    assert len(stub.requests) == 1  # only the failed item is retried
    records = _records(out)
    assert len(records) == 27 and all(r["status"] == "ok" for r in records)


def _comparable(records: list[dict]) -> list[dict]:
    return sorted(records, key=lambda r: r["key"])


@pytest.mark.slow
@pytest.mark.parametrize("kill_after", [3, 20])
def test_kill_9_mid_run_then_resume_equals_an_uninterrupted_run(tmp_path, kill_after):
    args = ("personabench", "eval", "--data", EXAMPLE, "--noise", "0.0,0.5", "--retriever",
            "bm25", "--model", "openai/m", "--no-cache", "--concurrency", "2")
    with FaultServer(oracle, delay=0.05) as stub:
        reference = tmp_path / "reference"
        assert personalens(*args, "--base-url", stub.base_url, "--out", reference).returncode == 0
        out = tmp_path / "killed"
        process = start(*args, "--base-url", stub.base_url, "--out", out)
        records = out / "records.jsonl"
        kill_after_records(process, records, kill_after)
        process.wait()
        done_before = records.read_text().count("\n")
        assert done_before < 54
        assert personalens(*args, "--base-url", stub.base_url, "--out", out).returncode == 0
    resumed = _records(out)
    assert len(resumed) == len({r["key"] for r in resumed}) == 54
    assert _comparable(resumed) == _comparable(_records(reference))
    assert (json.loads((out / "metrics.json").read_text())["conditions"]
            == json.loads((reference / "metrics.json").read_text())["conditions"])


@pytest.mark.slow
def test_ctrl_c_leaves_a_resumable_run(tmp_path):
    args = ("personabench", "eval", "--data", EXAMPLE, "--noise", "0.0", "--retriever", "bm25",
            "--model", "openai/m", "--no-cache", "--concurrency", "1")
    out = tmp_path / "run"
    with FaultServer(oracle, delay=0.1) as stub:
        process = start(*args, "--base-url", stub.base_url, "--out", out)
        kill_after_records(process, out / "records.jsonl", 1, signal.SIGINT, timeout=60)
        _, stderr = process.communicate(timeout=60)
        assert process.returncode == 130, stderr
        assert "rerun the same command to resume" in stderr and "Traceback" not in stderr
        assert json.loads((out / "manifest.json").read_text())["status"] == "interrupted"
        assert personalens(*args, "--base-url", stub.base_url, "--out", out).returncode == 0
    assert len(_records(out)) == 27
