"""Runs survive faults: a flaky server, kill -9 at random points, and rate limits."""

import json
import random
import signal

import pytest

from tests.cli_runner import kill_after_records, personalens, start
from tests.conftest import EXAMPLE
from tests.fault_server import FaultServer, seeded_plan
from tests.lenses.personabench.test_e2e import oracle

ARGS = ("personabench", "eval", "--data", EXAMPLE, "--noise", "0.0,0.5", "--retriever", "bm25",
        "--model", "openai/m", "--no-cache")


def _records(run_dir) -> list[dict]:
    lines = (run_dir / "records.jsonl").read_text().splitlines()
    return sorted((json.loads(x) for x in lines), key=lambda r: r["key"])


def _scored(records: list[dict]) -> list[dict]:
    """Records without what legitimately differs between runs (token counts of retries)."""
    return [{k: v for k, v in r.items() if k not in ("usage", "cached")} for r in records]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    out = tmp_path_factory.mktemp("reference") / "run"
    with FaultServer(oracle) as server:
        assert personalens(*ARGS, "--base-url", server.base_url, "--out", out).returncode == 0
    return out


def test_thirty_percent_faulty_requests_change_nothing(tmp_path, reference):
    out = tmp_path / "run"
    with FaultServer(oracle, seeded_plan(0.3, seed=7), slow_seconds=2.0) as server:
        result = personalens(*ARGS, "--base-url", server.base_url, "--timeout", "1",
                             "--concurrency", "8", "--out", out)
    assert result.returncode == 0, result.stderr
    injected = sum(server.faults.values())
    assert injected >= 0.2 * 54 and len(server.faults) >= 5  # mixed kinds actually happened
    assert _scored(_records(out)) == _scored(_records(reference))
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["conditions"] == json.loads((reference / "metrics.json").read_text())[
        "conditions"]
    retries = json.loads((out / "manifest.json").read_text())["usage"]["target"]["retries"]
    kinds = {"500": "server_error", "429": "rate_limit", "429-retry-after": "rate_limit",
             "slow": "timeout", "drop": "connection", "malformed": "malformed_response",
             "empty": "malformed_response"}
    expected: dict[str, int] = {}
    for fault, count in server.faults.items():
        expected[kinds[fault]] = expected.get(kinds[fault], 0) + count
    # Every injected fault is counted under its kind. A pooled keep-alive connection that the
    # server dropped can cost one extra "connection" retry, which is a real retry too.
    for kind, count in expected.items():
        assert retries.get(kind, 0) >= count, (kind, retries, expected)
    assert set(retries) == set(expected)
    assert sum(retries.values()) - injected <= 2


def _assert_killed_mid_run(process, out, kill_after: int, planned: int) -> None:
    """The kill landed while the run was working, not after it had finished."""
    assert process.returncode == -signal.SIGKILL, (process.returncode, "the run ended first")
    assert json.loads((out / "manifest.json").read_text())["status"] == "running"
    done = (out / "records.jsonl").read_text().count("\n")
    assert kill_after <= done < planned, (kill_after, done, planned)


@pytest.mark.slow
@pytest.mark.parametrize("trial", range(10))
def test_kill_9_at_a_random_point_then_resume(tmp_path, reference, trial):
    kill_after = random.Random(trial).randint(1, 50)
    out = tmp_path / "killed"
    with FaultServer(oracle) as server:
        process = start(*ARGS, "--base-url", server.base_url, "--concurrency", "2", "--out", out)
        kill_after_records(process, out / "records.jsonl", kill_after)
        process.wait()
        _assert_killed_mid_run(process, out, kill_after, planned=54)
        assert personalens(*ARGS, "--base-url", server.base_url, "--out", out).returncode == 0
    resumed = _records(out)
    assert len(resumed) == len({r["key"] for r in resumed}) == 54
    assert _scored(resumed) == _scored(_records(reference))


@pytest.mark.slow
def test_adaptive_concurrency_converges_under_a_rate_limit(tmp_path, reference):
    out = tmp_path / "run"
    with FaultServer(oracle, rate_limit_per_second=15) as server:
        result = personalens(*ARGS, "--base-url", server.base_url, "--concurrency", "16",
                             "--max-attempts", "10", "--out", out)
    assert result.returncode == 0, result.stderr
    assert server.faults["429-rate"] > 0  # the limit was hit ...
    assert _scored(_records(out)) == _scored(_records(reference))  # ... and nothing was lost
    usage = json.loads((out / "manifest.json").read_text())["usage"]["target"]
    assert usage["failures"] == {} and usage["retries"]["rate_limit"] == server.faults["429-rate"]


def _schema_reply(body: dict) -> str:
    from tests.schema_double import SchemaDouble

    return SchemaDouble()(body["messages"], {"response_format": body["response_format"]})


GENERATE = ("generate", "--people", "3", "--attributes-per-person", "2", "--max-list-entries",
            "2", "--noise", "0.0,0.5", "--model", "openai/m", "--no-cache", "--seed", "5")


def _files(root) -> dict:
    return {p.relative_to(root): p.read_bytes() for p in root.rglob("*.json")}


@pytest.fixture(scope="module")
def generated_reference(tmp_path_factory):
    out = tmp_path_factory.mktemp("gen-reference") / "gen"
    with FaultServer(_schema_reply) as server:
        result = personalens(*GENERATE, "--base-url", server.base_url, "--out", out)
        assert result.returncode == 0, result.stderr
    return out


@pytest.mark.slow
@pytest.mark.parametrize("trial", range(10))
def test_generate_killed_at_a_random_point_resumes_to_identical_data(tmp_path, trial,
                                                                     generated_reference):
    kill_after = random.Random(100 + trial).randint(1, 25)
    out = tmp_path / "gen"
    with FaultServer(_schema_reply) as server:
        process = start(*GENERATE, "--base-url", server.base_url, "--out", out)
        kill_after_records(process, out / "records.jsonl", kill_after)
        process.wait()
        planned = (generated_reference / "records.jsonl").read_text().count("\n")
        _assert_killed_mid_run(process, out, kill_after, planned)
        result = personalens(*GENERATE, "--base-url", server.base_url, "--out", out)
        assert result.returncode == 0, result.stderr
    assert _files(out / "synthetic_data") == _files(generated_reference / "synthetic_data")
    keys = [json.loads(x)["key"] for x in (out / "records.jsonl").read_text().splitlines()]
    assert len(keys) == len(set(keys))


def test_generate_with_broken_structured_outputs_still_completes(tmp_path):
    from tests.fault_server import STRUCTURED_FAULTS

    out = tmp_path / "gen"
    with FaultServer(_schema_reply, seeded_plan(0.3, seed=3, faults=STRUCTURED_FAULTS)) as server:
        result = personalens(*GENERATE, "--base-url", server.base_url, "--out", out)
    assert result.returncode == 0, result.stderr
    assert server.faults["truncated"] + server.faults["schema"] > 0
    check = personalens("personabench", "validate", out / "synthetic_data")
    assert check.returncode == 0, check.stderr


@pytest.mark.slow
def test_sigterm_mid_run_is_an_interruption_with_exit_143(tmp_path, reference):
    """timeout, batch schedulers and docker stop send SIGTERM: the real CLI, a real signal."""
    out = tmp_path / "run"
    with FaultServer(oracle, delay=0.1) as server:
        args = (*ARGS, "--base-url", server.base_url, "--concurrency", "1", "--out", out)
        process = start(*args)
        kill_after_records(process, out / "records.jsonl", 1, signal.SIGTERM, timeout=60)
        _, stderr = process.communicate(timeout=60)
        assert process.returncode == 143, stderr
        assert "terminated (SIGTERM); rerun the same command to resume" in stderr
        assert "Traceback" not in stderr
        assert json.loads((out / "manifest.json").read_text())["status"] == "terminated"
        done = (out / "records.jsonl").read_text().count("\n")
        assert 1 <= done < 54
        assert personalens(*args).returncode == 0
    assert _scored(_records(out)) == _scored(_records(reference))
