"""`prefdisco eval --dry-run`: the plan's calls per role are the calls a real run makes (scripted
roles that use every dialogue's whole budget and give valid verdicts first time), a tiny plan
counted by hand, and the CLI (exit 0, nothing written, the cost with prices)."""

import json

import pytest
from typer.testing import CliRunner

from personalens.cli.app import app
from personalens.lenses.prefdisco.call_plan import plan_calls
from personalens.lenses.prefdisco.command import run_eval
from personalens.lenses.prefdisco.options import EvalOptions
from tests import prefdisco_data as data
from tests.cli_runner import personalens
from tests.prefdisco_double import (
    Roles,
    is_correctness_request,
    passive_user,
    scripted_target,
    system_of,
)

# A choice problem judged on two criteria, and an open-ended one (a gold of more than eight
# words: its correctness goes to the judge even under --correctness rules) on three.
OPEN_ROW = {"question": "{o1} Why does ice float on water?",
            "answer": "Because ice is less dense than liquid water, so it floats on top."}
W2 = {"visual": 0.75, "brevity": 0.25}
W3 = {"visual": 0.5, "brevity": 0.25, "tone": 0.25}
SEPARATE = {"target": "openai/target", "user": "openai/user", "judge": "openai/judge"}


def _dataset(root):
    return data.folder(root, {"mmlu": [data.weighted("p1", W2)],
                              "open": [data.weighted("o1", W3, OPEN_ROW)]})


def judge(messages, params) -> str:
    """Every verdict valid first time; every answer correct."""
    if is_correctness_request(params):
        return '{"justification": "same idea", "correct": 1}'
    return '{"score": 4, "justification": "fits"}'


def one_model(turns: int):
    """One model playing every role (the user and the judge fall back to the target, as
    --allow-self-judging lets them)."""
    target = scripted_target(questions=turns)

    def reply(messages, params):
        system = system_of(messages)
        if system.startswith("You are role-playing"):
            return passive_user(messages, params)
        if system.startswith(("You grade", "You check")):
            return judge(messages, params)
        return target(messages, params)
    return reply


def _run(tmp_path, monkeypatch, **settings) -> tuple[dict, EvalOptions]:
    """A real run with scripted roles; (the manifest's usage, the options it ran with)."""
    turns = settings.get("turns", 5)
    Roles(target=scripted_target(questions=turns), user=passive_user, judge=judge,
          judgeA=judge, judgeB=judge, solo=one_model(turns)).install(monkeypatch)
    options = EvalOptions(data=_dataset(tmp_path / "data"), out=tmp_path / "run",
                          **{"models": SEPARATE, **settings})
    outcome = run_eval(options, progress=False)
    assert outcome.complete
    records = [json.loads(line) for line in (tmp_path / "run/records.jsonl").read_text()
               .splitlines()]
    items = [r for r in records if "instance" in r]
    assert len(items) == 2 * len(options.all_conditions)
    # Every dialogue used its whole budget: the counts below are the full-budget path.
    for record in items:
        budget = (int(record["condition"].removeprefix("fixed_"))
                  if record["condition"].startswith("fixed_") else turns)
        expected = 0 if record["condition"] in ("baseline", "oracle") else budget
        assert record["questions"]["turns"] == expected, record["key"]
    return json.loads((tmp_path / "run/manifest.json").read_text())["usage"], options


@pytest.mark.parametrize("settings", [
    {"turns": 2},
    {"conditions": ["baseline", "oracle"]},  # no dialogue: no user calls at all
    {"turns": 3, "fixed_questions": [1, 2], "protocol": "personalens", "scoring": "release",
     "judges": ["openai/judgeA", "openai/judgeB"]},
    {"turns": 2, "correctness": "rules"},  # only the open-ended gold's correctness is judged
    {"turns": 1, "conditions": ["discovery"], "models": {"target": "openai/solo"},
     "allow_self_judging": True},
], ids=["release-turns-2", "single-turn-only", "personalens-fixed-two-judges", "rules",
        "one-model"])
def test_the_plan_counts_every_roles_calls_as_a_real_run_makes_them(tmp_path, monkeypatch,
                                                                     settings):
    usage, options = _run(tmp_path, monkeypatch, **settings)
    plan = plan_calls(options)
    assert plan.items == 2 * len(options.all_conditions)
    assert {role: u["requests"] for role, u in plan.usage().items()} == \
        {role: u["requests"] for role, u in usage.items()}
    assert all(not u["retries"] and not u["failures"] for u in usage.values())


def test_a_tiny_plan_counted_by_hand(tmp_path):
    options = EvalOptions(data=_dataset(tmp_path / "data"), out=tmp_path / "run",
                          conditions=["baseline", "discovery"], fixed_questions=[2], turns=3,
                          judges=["openai/a", "openai/b"], max_tokens=100,
                          models={"user": "openai/user"})
    plan = plan_calls(options)
    assert plan.items == 6  # 2 instances x (baseline, discovery, fixed_2)
    # Per instance: target 1 (baseline) + 3 questions + final prompt + 2 questions + final
    # prompt = 8; user 3 + 2 = 5.
    # Judge (correctness judged for every answer, the default): p1 3 answers x (2 criteria x
    # 2 judges + 1 correctness) = 15; o1 3 x (3 x 2 + 1) = 21.
    assert {role: c.calls for role, c in plan.roles.items()} == \
        {"target": 16, "user": 10, "judge": 36}
    # Completion: an answer at its cap (100), a question at 240 characters (60 tokens), a reply
    # at 300 (75); per instance 3 answers and 5 questions.
    assert plan.roles["target"].completion_tokens == 2 * (3 * 100 + 5 * 60)
    assert plan.roles["user"].completion_tokens == 2 * 5 * 75
    # A verdict: '{"score": 5, "justification": ""}' (33) + 240 characters = 69 tokens; the
    # correctness verdict '{"justification": "", "correct": 0}' (35) + 300 = 84.
    assert plan.roles["judge"].completion_tokens == 30 * 69 + 6 * 84
    # Under the rules only o1's three answers get a correctness call.
    rules = plan_calls(options.model_copy(update={"correctness": "rules"}))
    assert rules.roles["judge"].calls == 33
    assert rules.roles["judge"].completion_tokens == 30 * 69 + 3 * 84
    assert any("full budget of 3 question(s)" in note for note in plan.notes)


def test_the_baseline_prompt_is_the_one_the_target_is_sent(tmp_path):
    options = EvalOptions(data=data.write(tmp_path / "mmlu.jsonl", [data.weighted("p1", W2)]),
                          out=tmp_path / "run", conditions=["baseline"],
                          models={"judge": "openai/judge"})
    prompt = "Could you help me with this task?\n\n{p1} 2 + 2 = ?\n\nA. 3\nB. 4\nC. 5\nD. 6"
    # 70 characters, four to a token, rounded up: 18 (no ANSWER line under the default judge).
    assert len(prompt) == 70 and plan_calls(options).roles["target"].prompt_tokens == 18
    ruled = (prompt + "\n\nEnd your answer with a final line of the form `ANSWER: <the "
             "letter of the correct option>`.")
    # 163 characters, four to a token, rounded up.
    assert len(ruled) == 163 and plan_calls(options.model_copy(update={
        "correctness": "rules"})).roles["target"].prompt_tokens == 41


def _cli(folder, out, *extra):
    return CliRunner().invoke(app, ["prefdisco", "eval", "--data", str(folder), "--out", str(out),
                                    "--model", "scripted", "--turns", "2", "--dry-run",
                                    "--allow-self-judging", *extra])


def test_the_cli_prints_the_plan_and_its_cost_and_writes_nothing(tmp_path):
    folder, out = _dataset(tmp_path / "data"), tmp_path / "run"
    result = _cli(folder, out)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "dry run of prefdisco eval: 6 items (instance x condition); no model " \
                       "was called"
    # Per instance: target 1 + 3 + 1, user 2; judge p1 3 x (2 + 1), o1 3 x (3 + 1).
    assert lines[1].startswith("  judge (scripted): 21 calls")
    assert lines[2].startswith("  target (scripted): 10 calls")
    assert lines[3].startswith("  user (scripted): 4 calls")
    assert "estimated cost" not in result.output
    priced = _cli(folder, out, "--price-per-mtok-in", "1", "--price-per-mtok-out", "2")
    assert priced.exit_code == 0, priced.output
    assert "estimated cost: $" in priced.output
    # Several judges, named on the judge line, which counts the calls of all of them: every
    # criterion twice (p1 3 x 2 x 2, o1 3 x 3 x 2), each answer's correctness once (the first
    # judge): 12 + 18 + 6.
    two = _cli(folder, out, "--judges", "scripted,scripted:x")
    assert two.exit_code == 0, two.output
    assert "  judge (scripted,scripted:x): 36 calls" in two.output
    assert not out.exists()


def test_a_dry_run_refuses_invalid_data_as_a_run_does(tmp_path):
    bad = data.weighted("bad", W2)
    bad["evaluation_rubric"]["evaluation_criteria"][0]["preference"] = "humour"
    folder = data.folder(tmp_path / "data", {"mmlu": [data.weighted("p1", W2), bad]})
    args = ("prefdisco", "eval", "--data", folder, "--out", tmp_path / "run", "--dry-run",
            "--allow-self-judging")
    refused = personalens(*args)  # the installed command: bad input is exit 2, one line
    assert refused.returncode == 2 and "'humour' names no preference" in refused.stderr
    skipped = personalens(*args, "--skip-invalid")
    assert skipped.returncode == 0, skipped.stderr
    assert skipped.stdout.startswith("dry run of prefdisco eval: 3 items")
    assert not (tmp_path / "run").exists()
