"""The paper's analyses (issue 22, item 5): NormAlign for every fixed_<N> condition, paired on
its own with baseline and oracle, so that --fixed-questions never moves the main numbers."""

import pytest

from tests import prefdisco_data as data
from tests.prefdisco_double import (
    Roles,
    condition_of,
    evaluate,
    judge_table,
    passive_user,
    problem_id,
    scripted_target,
)

# visual score (the only criterion, weight 1) per instance and condition
SCORES = {"p1": {"baseline": 1, "discovery": 3, "oracle": 5, "fixed_1": 4},
          "p2": {"baseline": 2, "discovery": 2, "oracle": 4, "fixed_1": 3},
          "p3": {"baseline": 3, "discovery": 4, "oracle": 5, "fixed_1": 5},
          # p4's oracle gets no valid verdict: it fails, in every pairing that needs it
          "p4": {"baseline": 2, "discovery": 3, "oracle": "no verdict", "fixed_1": 4}}


def _target():
    inner = scripted_target(questions=1)

    def reply(messages, params):
        if (condition_of(messages), problem_id(messages)) == ("fixed_1", "p2"):
            return "I refuse the format."  # p2's fixed_1 fails (protocol)
        return inner(messages, params)
    return reply


def _run(tmp_path, monkeypatch, name, fixed):
    path = data.write(tmp_path / "mmlu.jsonl",
                      [data.weighted(p, {"visual": 1.0}) for p in SCORES])
    table = {f"{p}/{c}": {"visual": s} for p, row in SCORES.items() for c, s in row.items()}
    roles = Roles(target=_target(), user=passive_user, judge=judge_table(table))
    roles.install(monkeypatch)
    metrics, _, _ = evaluate(path, tmp_path / name, roles, fixed_questions=fixed, turns=1)
    return metrics


def test_fixed_conditions_get_their_own_normalign_and_leave_the_main_numbers_alone(
        tmp_path, monkeypatch):
    plain = _run(tmp_path, monkeypatch, "plain", [])
    fixed = _run(tmp_path, monkeypatch, "fixed", [1])
    # Main: means 2, 3, 14/3 over p1-p3 -> 100 * 1 / (8/3) = 37.5, with or without fixed_1
    # (pairing p1 and p3 only, as when fixed_1 joined the main pairing, would give 50).
    for metrics in (plain, fixed):
        assert metrics["n_instances"] == 3
        assert metrics["unpaired"] == [{"instance": "mmlu/p4", "reasons": [
            "oracle: no scored record (failed or not run)"]}]
        assert metrics["normalign"]["overall"]["value"] == pytest.approx(37.5)
        assert {c: metrics["prefalign"][c]["mean"] for c in ("baseline", "discovery",
                                                              "oracle")} == pytest.approx(
            {"baseline": 2.0, "discovery": 3.0, "oracle": 14 / 3})
    for key in ("prefalign", "accuracy", "normalign", "question_turns_vs_gain", "per_task",
                "negative_normalign_share"):
        main = {k: v for k, v in fixed[key].items() if k != "fixed_1"} \
            if isinstance(fixed[key], dict) else fixed[key]
        assert main == plain[key], key
    # fixed_1 is paired with baseline and oracle on p1 and p3 (p2's fixed_1 failed, p4's
    # oracle): means 2, 4.5, 5 -> 100 * 2.5 / 3 (over p1-p3's baseline and oracle it would be
    # 93.75).
    assert fixed["normalign_fixed"]["fixed_1"]["overall"]["value"] == pytest.approx(250 / 3)
    assert fixed["normalign_fixed"]["fixed_1"]["overall"]["n"] == 2
    assert fixed["normalign_fixed"]["fixed_1"]["mmlu"]["discovery_gain"] == pytest.approx(2.5)
    assert fixed["prefalign"]["fixed_1"]["mean"] == 4.5 and fixed["prefalign"]["fixed_1"]["n"] == 2
    assert fixed["unpaired_fixed"] == {"fixed_1": [
        {"instance": "mmlu/p2", "reasons": ["fixed_1: no scored record (failed or not run)"]},
        {"instance": "mmlu/p4", "reasons": ["oracle: no scored record (failed or not run)"]}]}
    assert "normalign_fixed" not in plain
    report = (tmp_path / "fixed" / "report.html").read_text()
    assert "NormAlign of fixed_1" in report
