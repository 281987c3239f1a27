"""`personalens prefdisco eval` end to end: the real command against a real OpenAI-compatible
HTTP server on 127.0.0.1 that plays target, simulated user and judge by the request's model
name; bad input; and kill -9 mid-run, then resume."""

import json

import pytest

from tests import prefdisco_data as data
from tests.cli_runner import kill_after_records, personalens, start
from tests.fault_server import FaultServer
from tests.prefdisco_double import judge_table, scripted_target, user_by_problem

W = {"visual": 0.75, "brevity": 0.25}
# (visual, brevity) per instance and condition; PrefAlign = 0.75 v + 0.25 b
HAND = {
    "p1": {"baseline": (1, 5), "discovery": (4, 2), "oracle": (5, 1)},  # 2.0, 3.5, 4.0
    "p2": {"baseline": (1, 1), "discovery": (4, 2), "oracle": (5, 5)},  # 1.0, 3.5, 5.0
    "q1": {"baseline": (3, 3), "discovery": (2, 2), "oracle": (4, 4)},  # 3.0, 2.0, 4.0
}
TABLE = {f"{pid}/{condition}": {"visual": v, "brevity": b}
         for pid, by_condition in HAND.items() for condition, (v, b) in by_condition.items()}
REPLIES = {"p1": "I like visual diagrams and sketches.", "p2": "Short concise steps, please.",
           "q1": "No particular preference."}


def _roles(table=TABLE, questions=None):
    """The server's reply function: one behaviour per model name."""
    behaviours = {"target": scripted_target(questions=questions or {"p1": 1, "p2": 2, "q1": 1}),
                  "user": user_by_problem(REPLIES), "judge": judge_table(table),
                  "judgeA": judge_table(table), "judgeB": judge_table(table)}

    def reply(body: dict) -> str:
        return behaviours[body["model"]](body["messages"], body)
    return reply


def _dataset(root):
    return data.folder(root, {"alpha": [data.weighted("p1", W), data.weighted("p2", W)],
                              "beta": [data.weighted("q1", W)]})


def _args(folder, base_url, out, *extra):
    return ("prefdisco", "eval", "--data", folder, "--model", "openai/target",
            "--user-model", "openai/user", "--judge", "openai/judge", "--base-url", base_url,
            "--no-cache", "--out", out, *extra)


def test_eval_through_the_cli_against_a_real_http_server(tmp_path):
    folder, out = _dataset(tmp_path / "data"), tmp_path / "run"
    with FaultServer(_roles()) as server:
        result = personalens(*_args(folder, server.base_url, out))
    assert result.returncode == 0, result.stderr
    assert "NormAlign (overall)" in result.stdout

    by_model: dict[str, list[dict]] = {}
    for body in server.requests:
        by_model.setdefault(body["model"], []).append(body)
    # target: 3 x (baseline + oracle) + discovery turns (p1 2, p2 3, q1 2) + 3 final prompts
    # = 16; user: one reply per question (1 + 2 + 1); judge: 3 instances x 3 conditions x (2
    # criteria + 1 correctness, the release's judge)
    assert {m: len(b) for m, b in by_model.items()} == {"target": 16, "user": 4, "judge": 27}
    assert {b["temperature"] for b in by_model["target"]} == {0.0}
    assert {b["temperature"] for b in by_model["user"]} == {0.4}
    assert {b["temperature"] for b in by_model["judge"]} == {0.0}
    assert all(b["response_format"]["type"] == "json_schema" for b in by_model["judge"])

    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["n_instances"] == 3 and metrics["n_failed"] == 0
    means = {c: metrics["prefalign"][c]["mean"] for c in ("baseline", "discovery", "oracle")}
    assert means == pytest.approx({"baseline": 2.0, "discovery": 3.0, "oracle": 13 / 3})
    # alpha: means 1.5, 3.5, 4.5 -> 100 * 2 / 3; beta: 100 * (2 - 3) / (4 - 3)
    assert metrics["normalign"]["alpha"]["value"] == pytest.approx(200 / 3)
    assert metrics["normalign"]["beta"]["value"] == pytest.approx(-100.0)
    # overall: 100 * (3 - 2) / (13/3 - 2) = 300 / 7
    assert metrics["normalign"]["overall"]["value"] == pytest.approx(300 / 7)
    assert metrics["negative_normalign_share"] == 0.5
    assert {c: a["mean"] for c, a in metrics["accuracy"].items()} == \
        {"baseline": 1.0, "discovery": 1.0, "oracle": 1.0}
    # p2 asks twice ("...? ...?" each): turns 1, 2, 1 and question marks 2, 4, 2
    assert metrics["questions_asked"] == {"discovery": {"turns": pytest.approx(4 / 3),
                                                        "questions": pytest.approx(8 / 3)}}
    # p1 reveals visual, p2 brevity (twice, counted once), q1 nothing
    assert metrics["preferences_discovered"]["discovery"] == pytest.approx(2 / 3)
    assert metrics["judge"] == {"invalid_rate": 0.0, "excluded_criteria": 0, "replies": 18}

    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    assert manifest["models"] == {"target": "openai/target", "user": "openai/user",
                                  "judge": "openai/judge"}
    assert manifest["config"]["models"] == {"target": "openai/target", "user": "openai/user",
                                            "judge": "openai/judge"}
    assert manifest["config"]["judges"] == []
    assert manifest["self_roles"] == []  # user and judge are other models than the target
    assert (manifest["config"]["temperature"], manifest["config"]["user_temperature"],
            manifest["config"]["judge_temperature"]) == (0.0, 0.4, 0.0)
    assert manifest["usage"]["target"]["requests"] == 16
    assert manifest["usage"]["judge"]["requests"] == 27
    report = (out / "report.html").read_text()
    assert "NormAlign per task" in report and "Do you like visual diagrams?" in report


def test_cli_flags_for_judges_release_scoring_fixed_questions_and_skip_invalid(tmp_path):
    folder = _dataset(tmp_path / "data")
    bad = data.weighted("bad", W)
    bad["evaluation_rubric"]["evaluation_criteria"][0]["preference"] = "humour"
    data.write(folder / "gamma.jsonl", [bad], dataset="gamma")
    table = {**TABLE, **{f"{p}/fixed_1": {"visual": 3, "brevity": 3} for p in HAND}}
    out = tmp_path / "run"
    with FaultServer(_roles(table)) as server:
        refused = personalens(*_args(folder, server.base_url, out))
        assert refused.returncode == 2
        assert "humour" in refused.stderr and "--skip-invalid" in refused.stderr
        assert "Traceback" not in refused.stderr
        assert not out.exists() and server.requests == []
        result = personalens(*_args(folder, server.base_url, out, "--skip-invalid",
                                    "--judges", "openai/judgeA,openai/judgeB",
                                    "--scoring", "release", "--fixed-questions", "1",
                                    "--temperature", "0.2", "--user-temperature", "0.9"))
    assert result.returncode == 0, result.stderr
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["scoring"] == "release"
    assert metrics["conditions"] == ["baseline", "discovery", "oracle", "fixed_1"]
    assert metrics["questions_asked"]["fixed_1"]["turns"] == 1.0
    assert metrics["prefalign"]["fixed_1"]["mean"] == 3.0
    assert [s["problem_id"] for s in metrics["skipped_invalid"]] == ["bad"]
    # Two identical judges: perfect agreement over 3 instances x 4 conditions x 2 criteria.
    assert metrics["judge"]["agreement"] == {"method": "weighted_kappa", "value": 1.0, "n": 24}
    judged = {b["model"] for b in server.requests} - {"target", "user"}
    assert judged == {"judgeA", "judgeB"}
    assert {b["temperature"] for b in server.requests if b["model"] == "target"} == {0.2}
    assert {b["temperature"] for b in server.requests if b["model"] == "user"} == {0.9}
    manifest = json.loads((out / "manifest.json").read_text())
    assert [s["problem_id"] for s in manifest["skipped_invalid"]] == ["bad"]
    assert manifest["config"]["judges"] == ["openai/judgeA", "openai/judgeB"]
    assert manifest["models"]["judge"] == "openai/judgeA,openai/judgeB"


def _records(out) -> list[dict]:
    lines = (out / "records.jsonl").read_text().splitlines()
    return sorted((json.loads(line) for line in lines), key=lambda r: r["key"])


@pytest.mark.slow
def test_kill_9_mid_run_then_resume_equals_an_uninterrupted_run(tmp_path):
    folder = _dataset(tmp_path / "data")
    extra = ("--concurrency", "2", "--fixed-questions", "2")
    table = {**TABLE, **{f"{p}/fixed_2": {"visual": 2, "brevity": 4} for p in HAND}}
    with FaultServer(_roles(table), delay=0.03) as server:
        reference = tmp_path / "reference"
        assert personalens(*_args(folder, server.base_url, reference, *extra)).returncode == 0
        full_run = len(server.requests)
        # Killed early (inside the first conversations) and late (among finished items).
        for kill_after in (2, 14):
            out = tmp_path / f"killed_after_{kill_after}"
            process = start(*_args(folder, server.base_url, out, *extra))
            kill_after_records(process, out / "records.jsonl", kill_after)
            process.wait()
            keys = [r["key"] for r in _records(out)]
            assert kill_after <= len(keys) < len(_records(reference))
            if kill_after == 2:  # a conversation was cut between its turns
                assert any(k.split("/turn/")[0] not in keys for k in keys if "/turn/" in k)
            before_resume = len(server.requests)
            resumed = personalens(*_args(folder, server.base_url, out, *extra))
            assert resumed.returncode == 0, resumed.stderr
            # What was recorded is replayed, not asked again.
            assert len(server.requests) - before_resume < full_run
            assert _records(out) == _records(reference)
            assert json.loads((out / "metrics.json").read_text()) == \
                json.loads((reference / "metrics.json").read_text())
            manifest = json.loads((out / "manifest.json").read_text())
            assert manifest["sessions"] == 2 and manifest["status"] == "complete"


@pytest.mark.parametrize("models, judges, labels", [
    ({"target": "openai/t"}, [], ["self-simulated", "self-judged"]),  # both fall back
    ({"target": "openai/t", "judge": "openai/j"}, [], ["self-simulated"]),
    ({"target": "openai/t", "user": "openai/u"}, ["openai/j", "openai/t"], ["self-judged"]),
    ({"target": "openai/t", "user": "openai/u", "judge": "openai/j"}, [], []),
])
def test_a_run_that_grades_the_target_by_itself_says_so(tmp_path, monkeypatch, models, judges,
                                                         labels):
    from personalens.lenses.prefdisco.command import PrefdiscoEval

    monkeypatch.setenv("OPENAI_API_KEY", "not-used")  # nothing is sent
    from personalens.lenses.prefdisco.options import EvalOptions

    lens = PrefdiscoEval(EvalOptions(data=_dataset(tmp_path / "data"), out=tmp_path / "o",
                                     models=models, judges=judges))
    assert lens.self_roles() == labels
    assert lens.identity().manifest({}).self_roles == labels
    line = lens.summary_line(type("M", (), {"n_instances": 1, "n_planned_instances": 1,
                                            "truncated": {}})())
    assert line.endswith("".join(f" · {label.upper()}" for label in labels) or "paired")
