"""`personalens compare` on prefdisco eval runs: a system is a run (its target model), units
are instances, paired across conditions as the lens pairs them and across runs by instance.

Real runs with scripted roles on one dataset: task alpha (p1, p2), task beta (q1), one
criterion of weight 1, so PrefAlign is the judge's score. Scores (baseline, discovery, oracle)
and question turns in discovery:

            openai/a                openai/b
    p1      1, 3, 5   1 question    1, 2, 5   1 question, discovery answer wrong
    p2      2, 4, 4   2 questions   2, 4, 4   1 question, discovery answer wrong
    q1      3, 2, 4   1 question    3, 1, 4   2 questions, baseline answer cut off (truncated)

NormAlign (discovery) = 100 (PA_d - PA_b) / (PA_o - PA_b) on the means:
    a: alpha 100 x 2 / 3 = 200/3, beta -100, overall (2, 3, 13/3) -> 300/7
    b: alpha 100 x 1.5 / 3 = 50, beta -200, overall (2, 7/3, 13/3) -> 100/7
"""

import json
import shutil

import pytest

from personalens.models.completion import Completion
from tests import prefdisco_data as data
from tests.compare_runs import compare
from tests.prefdisco_double import (
    Roles,
    condition_of,
    judge_table,
    passive_user,
    problem_id,
    scripted_target,
)

SCORES = {"a": {"p1": (1, 3, 5), "p2": (2, 4, 4), "q1": (3, 2, 4)},
          "b": {"p1": (1, 2, 5), "p2": (2, 4, 4), "q1": (3, 1, 4)}}
FIXED_1 = {"p1": 5, "p2": 3, "q1": 4}  # openai/a's fixed_1 scores (the --fixed-questions run)
QUESTIONS = {"a": {"p1": 1, "p2": 2, "q1": 1}, "b": {"p1": 1, "p2": 1, "q1": 2}}
TABLE = {f"{name}{pid}/{condition}": {"visual": score}
         for name, scores in SCORES.items() for pid, row in scores.items()
         for condition, score in zip(("baseline", "discovery", "oracle"), row, strict=True)}
TABLE.update({f"a{pid}/fixed_1": {"visual": score} for pid, score in FIXED_1.items()})


def _target(name: str, refuse: tuple[str, str] | None = None):
    """scripted_target, its marker naming the system ([ap1/discovery]); b answers p1 and p2
    wrong in discovery and is cut off in q1's baseline; `refuse` (problem, condition): that
    item fails (no well-formed turn)."""
    inner = scripted_target(questions=QUESTIONS[name])

    def reply(messages, params):
        pid = problem_id(messages)
        if (pid, condition_of(messages)) == refuse:
            return "I refuse the format."
        text = inner(messages, params).replace(f"[{pid}/", f"[{name}{pid}/")
        if name == "b" and pid in ("p1", "p2") and "/discovery]" in text:
            text = text.replace("ANSWER: B", "ANSWER: C")
        if name == "b" and "[bq1/baseline]" in text:
            return Completion(text, finish_reason="length")
        return text
    return reply


@pytest.fixture
def dataset(tmp_path):
    weights = {"visual": 1.0}
    return data.folder(tmp_path / "data", {
        "alpha": [data.weighted("p1", weights), data.weighted("p2", weights)],
        "beta": [data.weighted("q1", weights)]})


def _run(path, dataset, monkeypatch, name: str, refuse=None, **options):
    from personalens.lenses.prefdisco.command import run_eval
    from personalens.lenses.prefdisco.options import EvalOptions

    Roles(**{name: _target(name, refuse), "user": passive_user,
             "judge": judge_table(TABLE)}).install(monkeypatch)
    run_eval(EvalOptions(data=dataset, out=path, models={
        "target": f"openai/{name}", "user": "openai/user", "judge": "openai/judge"}, **options),
        progress=False)
    return path


def _compare(tmp_path, *runs, options=()):
    result, output = compare(*runs, "--out", tmp_path / "cmp", *options)
    assert result.returncode == 0, output
    return json.loads((tmp_path / "cmp" / "comparison.json").read_text())


def _pair(comparison: dict, headline: str, b: str = "openai/b") -> dict:
    return next(p for p in comparison["pairs"] if p["headline"] == headline and p["b"] == b)


def _table(comparison: dict, title: str) -> dict:
    return next(t for t in comparison["tables"] if t["title"].startswith(title))


def test_paired_differences_of_prefdisco_runs_hand_computed(tmp_path, dataset, monkeypatch):
    runs = [_run(tmp_path / n, dataset, monkeypatch, n) for n in ("a", "b")]
    comparison = _compare(tmp_path, *runs)
    assert list(comparison["runs"]) == ["openai/a", "openai/b"]
    a, b = (comparison["runs"][f"openai/{n}"]["headlines"] for n in "ab")
    conditions = ("baseline", "discovery", "oracle")
    assert list(a) == ["normalign", *(f"prefalign.{c}" for c in conditions), "accuracy_drop",
                       *(f"accuracy.{c}" for c in conditions)]
    assert a["normalign"] == {"value": pytest.approx(300 / 7), "n": 3}
    assert b["normalign"]["value"] == pytest.approx(100 / 7)
    assert a["prefalign.discovery"] == {"value": pytest.approx(3.0), "n": 3}
    # baseline (1 + 2 + 3)/3 and oracle (5 + 4 + 4)/3 in both runs; every oracle answer right
    assert a["prefalign.baseline"] == b["prefalign.baseline"] == {"value": pytest.approx(2.0),
                                                                  "n": 3}
    assert a["prefalign.oracle"] == {"value": pytest.approx(13 / 3), "n": 3}
    assert a["accuracy.oracle"] == b["accuracy.oracle"] == {"value": 1.0, "n": 3}
    assert a["accuracy.baseline"] == {"value": 1.0, "n": 3}
    # b's q1 baseline answer was cut off: out of accuracy (not of PrefAlign), as in metrics.json
    assert b["accuracy.baseline"] == {"value": 1.0, "n": 2}
    assert b["prefalign.baseline"]["n"] == 3
    assert b["accuracy.discovery"]["value"] == pytest.approx(1 / 3)
    # Accuracy drop, paired: b's p1 and p2 right in baseline, wrong in discovery; q1 is out
    # (its baseline answer was cut off). Unpaired it would be 1 - 1/3.
    assert b["accuracy_drop"] == {"value": 1.0, "n": 2}
    assert a["accuracy_drop"] == {"value": 0.0, "n": 3}

    # NormAlign a - b = 300/7 - 100/7. Baseline and oracle are the same in both runs, so a swap
    # of an instance's rows moves only its discovery score: the difference is (100/7) times the
    # signed sum of the discovery gaps (1, 0, 1); 4 of the 8 patterns reach |2|: p = 1/2.
    normalign = _pair(comparison, "normalign")
    assert (normalign["a"], normalign["test"], normalign["n"]) == (
        "openai/a", "paired_permutation", 3)
    assert normalign["diff"] == pytest.approx(200 / 7) and normalign["p"] == pytest.approx(0.5)
    # PrefAlign discovery: per-instance differences (1, 0, 1), mean 2/3, sign-flip p = 1/2.
    # Paired resamples of (1, 0, 1) never fall below 0 and draw only p2 in (1/3)^3 = 3.7 % of
    # resamples, so the 2.5 % bound is 0; all ones (8/27) make the upper bound 1. An unpaired
    # bootstrap (a's 3, 4, 2 against b's 2, 4, 1 drawn apart) dips below 0.
    prefalign = _pair(comparison, "prefalign.discovery")
    assert prefalign["diff"] == pytest.approx(2 / 3) and prefalign["test"] == "sign_flip"
    assert prefalign["p"] == pytest.approx(0.5)
    assert (prefalign["ci_low"], prefalign["ci_high"]) == (0.0, pytest.approx(1.0))
    # Accuracy discovery: a right and b wrong on p1 and p2, no other discordant instance:
    # exact McNemar 2 x (1/2)^2.
    accuracy = _pair(comparison, "accuracy.discovery")
    assert accuracy["diff"] == pytest.approx(2 / 3) and accuracy["test"] == "mcnemar_exact"
    assert accuracy["p"] == pytest.approx(0.5)
    baseline = _pair(comparison, "accuracy.baseline")  # on the two instances both counted
    assert (baseline["n"], baseline["diff"], baseline["p"]) == (2, 0.0, 1.0)
    assert _pair(comparison, "prefalign.oracle")["diff"] == 0.0
    # The drop a - b on the two instances both count: (0 - 1, 0 - 1); sign-flip: 2 of the 4
    # sign patterns reach |-1|.
    drop = _pair(comparison, "accuracy_drop")
    assert (drop["n"], drop["diff"], drop["test"]) == (2, -1.0, "sign_flip")
    assert drop["p"] == pytest.approx(0.5)
    # Holm over the 8 tests: the smallest p (0.5) times 8, capped at 1.
    assert len(comparison["pairs"]) == 8 and normalign["p_adj"] == 1.0

    # The paper's main table: model x task NormAlign with CIs.
    per_task = _table(comparison, "NormAlign per model x task")
    assert per_task["headers"] == ["system", "alpha", "beta", "overall"]
    assert [[c["value"] for c in row[1:]] for row in per_task["rows"]] == [
        [pytest.approx(200 / 3), pytest.approx(-100.0), pytest.approx(300 / 7)],
        [pytest.approx(50.0), pytest.approx(-200.0), pytest.approx(100 / 7)]]
    # Negative cells: beta in each run; pooled 2 of the 4 model x task cells.
    negative = _table(comparison, "Share of model x task cells")
    assert negative["rows"] == [["openai/a", 0.5, 1, 2, 0, 0], ["openai/b", 0.5, 1, 2, 0, 0],
                                ["all systems", 0.5, 2, 4, 0, 0]]
    # Question turns against the gain: a (1, 2, 1) vs (2, 2, -1): slope 1 / (2/3) = 1.5;
    # b (1, 1, 2) vs (1, 2, -2): slope (-7/3) / (2/3) = -3.5; pooled over the six: -1.
    questions = _table(comparison, "Question turns")
    assert [row[2] for row in questions["rows"]] == pytest.approx([1.5, -3.5, -1.0])
    assert questions["rows"][2][0] == "all systems" and questions["rows"][2][-1] == 6
    report = (tmp_path / "cmp" / "report.html").read_text()
    assert "NormAlign of discovery per task and system" in report
    assert "[discovery] PrefAlign 3.00, correct" in report  # the browser, side by side

    _equal_to_metrics(comparison, {f"openai/{n}": tmp_path / n for n in "ab"})


def _row(table: dict, name: str) -> list:
    """The system's row (an incomplete run's name is marked)."""
    return next(r for r in table["rows"] if r[0].removesuffix(" [incomplete]") == name)


def _equal_to_metrics(comparison: dict, runs: dict) -> None:
    """Each headline and table figure is the run's metrics.json figure, CIs included."""
    conditions = _table(comparison, "PrefAlign (1-5) and accuracy per condition")
    per_task_table = _table(comparison, "NormAlign per model x task")
    for (name, run), row in zip(runs.items(), conditions["rows"], strict=True):
        metrics = json.loads((run / "metrics.json").read_text())
        headlines = comparison["runs"][name]["headlines"]
        assert headlines["normalign"]["value"] == pytest.approx(
            metrics["normalign"]["overall"]["value"])
        assert headlines["accuracy_drop"] == {"value": pytest.approx(
            metrics["accuracy_drop"]["mean"]), "n": metrics["accuracy_drop"]["n"]}
        cells = dict(zip(conditions["headers"], row, strict=True))
        for condition in metrics["conditions"]:
            for metric in ("prefalign", "accuracy"):
                figure = metrics[metric][condition]
                assert headlines[f"{metric}.{condition}"] == {
                    "value": pytest.approx(figure["mean"]), "n": figure["n"]}
                label = "PrefAlign" if metric == "prefalign" else "accuracy"
                assert cells[f"{label} {condition}"] == {
                    "value": figure["mean"], "ci_low": figure["ci_low"],
                    "ci_high": figure["ci_high"], "n": figure["n"]}
        per_task = _row(per_task_table, name)
        for task, cell in zip(per_task_table["headers"][1:], per_task[1:], strict=True):
            expected = metrics["normalign"].get(task)  # none: no instance of it paired
            assert cell == (expected and {k: expected[k] for k in (
                "value", "ci_low", "ci_high", "n", "undefined")})
        negative = _row(_table(comparison, "Share of model x task cells"), name)
        assert negative[1:3] == [metrics["negative_normalign_share"],
                                 round(metrics["negative_normalign_share"]
                                       * metrics["negative_normalign_tasks"])]
        assert negative[3] == metrics["negative_normalign_tasks"]
        fit = _row(_table(comparison, "Question turns"), name)
        assert fit[2:] == [metrics["question_turns_vs_gain"][k]
                           for k in ("slope", "intercept", "r", "p", "n")]


def test_runs_differing_in_turns_and_fixed_questions(tmp_path, dataset, monkeypatch):
    """openai/a again at --turns 2 with --fixed-questions 1, its q1 discovery failed: a third
    system, named by its turn limit, compared with --allow-incomplete; NormAlign against N and
    against the turn limit."""
    runs = {"openai/a": _run(tmp_path / "a", dataset, monkeypatch, "a"),
            "openai/b": _run(tmp_path / "b", dataset, monkeypatch, "b"),
            "openai/a · turns 2": _run(tmp_path / "c", dataset, monkeypatch, "a", turns=2,
                                       fixed_questions=[1], refuse=("q1", "discovery"))}
    comparison = _compare(tmp_path, *runs.values(), options=["--allow-incomplete"])
    assert list(comparison["runs"]) == list(runs)
    assert comparison["runs"]["openai/a · turns 2"]["status"] == "incomplete"
    # Main pairing p1, p2 (q1's discovery failed): means (1.5, 3.5, 4.5) -> 100 x 2/3.
    # fixed_1 is paired on its own with baseline and oracle, q1 in: means (2, 4, 13/3) ->
    # 100 x 2 / (7/3) = 600/7 (on the main pairing it would be 100 x 2.5 / 3).
    fixed = _table(comparison, "NormAlign against N")
    assert fixed["headers"] == ["system", "fixed_1"]
    assert [row[0] for row in fixed["rows"]] == ["openai/a", "openai/b",
                                                 "openai/a · turns 2 [incomplete]"]
    assert [row[1] and row[1]["value"] for row in fixed["rows"]] == [
        None, None, pytest.approx(600 / 7)]
    metrics = json.loads((tmp_path / "c" / "metrics.json").read_text())
    assert fixed["rows"][2][1]["ci_low"] == \
        metrics["normalign_fixed"]["fixed_1"]["overall"]["ci_low"]
    headlines = comparison["runs"]["openai/a · turns 2"]["headlines"]
    assert headlines["normalign.fixed_1"] == {"value": pytest.approx(600 / 7), "n": 3}
    assert headlines["normalign"] == {"value": pytest.approx(200 / 3), "n": 2}
    turns = _table(comparison, "NormAlign against the turn limit")
    assert [(row[0], row[1], row[2]["value"]) for row in turns["rows"]] == [
        ("openai/a · turns 2 [incomplete]", 2, pytest.approx(200 / 3)),
        ("openai/a", 5, pytest.approx(300 / 7)), ("openai/b", 5, pytest.approx(100 / 7))]
    # The same model and scores on the instances both paired (p1, p2): no difference, p = 1.
    same = _pair(comparison, "normalign", b="openai/a · turns 2")
    assert (same["a"], same["n"], same["diff"], same["p"]) == ("openai/a", 2, 0.0, 1.0)
    assert not any(p["headline"] == "normalign.fixed_1" for p in comparison["pairs"])
    report = (tmp_path / "cmp" / "report.html").read_text()
    assert "NormAlign of discovery against the turn limit per target model" in report
    assert "against N per system" in report
    _equal_to_metrics(comparison, runs)


def test_two_runs_of_one_system_are_refused(tmp_path, dataset, monkeypatch):
    run = _run(tmp_path / "a", dataset, monkeypatch, "a")
    shutil.copytree(run, tmp_path / "again")
    result, output = compare(run, tmp_path / "again", "--out", tmp_path / "cmp")
    assert result.returncode == 2
    assert "two systems are named 'openai/a'" in output and not (tmp_path / "cmp").exists()


def test_a_run_whose_config_is_not_a_prefdisco_evals_is_refused(tmp_path, dataset, monkeypatch):
    run = _run(tmp_path / "a", dataset, monkeypatch, "a")
    bad = shutil.copytree(run, tmp_path / "bad")
    manifest = json.loads((bad / "manifest.json").read_text())
    manifest["models"]["target"] = "openai/other"
    manifest["config"]["turns"] = 0
    (bad / "manifest.json").write_text(json.dumps(manifest))
    result, output = compare(run, bad, "--out", tmp_path / "cmp")
    assert result.returncode == 2 and not (tmp_path / "cmp").exists()
    assert output.strip().splitlines()[-1] == (
        f"personalens: error: {bad}: the run's manifest.json config is not a prefdisco eval's: "
        "turns: Input should be greater than or equal to 1")
