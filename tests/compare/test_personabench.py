"""`personalens compare` on personabench runs: a system is a (run, retriever) named by model
and retriever, units pair on (community, noise, question), headlines per noise level.

Hand-made runs: community c, questions q1-q3 at noise 0.0 (answered) and 0.5:

                       recall@0.0    F1@0.0     info-updating@0.0 (q1 only)   recall@0.5
    openai/a · bm25    1, 1, 0       1, 0, 1    1 - 0.25                      0, 0, 0
    openai/b · bm25    0.5, 0, 0     1, 1, 0    1 - 1                         0, 0, 1
"""

import json

import pytest

from tests.cli_runner import personalens
from tests.compare_runs import compare, personabench_run
from tests.conftest import EXAMPLE


def _pair(comparison: dict, headline: str, a: str = "openai/a · bm25") -> dict:
    return next(p for p in comparison["pairs"] if p["headline"] == headline and p["a"] == a)


def test_paired_differences_per_noise_hand_computed(tmp_path):
    out = tmp_path / "cmp"
    result, _ = compare(personabench_run(tmp_path / "a", model="a"),
                        personabench_run(tmp_path / "b", model="b"), "--out", out)
    assert result.returncode == 0, result.stderr
    comparison = json.loads((out / "comparison.json").read_text())
    assert list(comparison["runs"]) == ["openai/a · bm25", "openai/b · bm25"]
    headlines = comparison["runs"]["openai/a · bm25"]["headlines"]
    assert headlines["recall@0.0"] == {"value": pytest.approx(2 / 3), "n": 3}
    assert headlines["info_updating@0.0"] == {"value": pytest.approx(0.75), "n": 1}
    assert "f1@0.5" not in headlines  # nothing answered at 0.5
    # recall@0.0: per-question differences 0.5, 1, 0 -> mean 0.5; of the sign patterns of
    # (0.5, 1), two reach |1.5|: p = 1/2.
    recall = _pair(comparison, "recall@0.0")
    assert recall["diff"] == pytest.approx(0.5) and recall["test"] == "sign_flip"
    assert recall["p"] == pytest.approx(0.5) and recall["n"] == 3
    assert recall["ci_low"] == pytest.approx(0.0) and recall["ci_high"] <= 1.0
    # nDCG = recall / 2: a (0.5, 0.5, 0) -> 1/3, b (0.25, 0, 0) -> 1/12; differences 0.25,
    # 0.5, 0: 1/4, the two non-zero ones of one sign: p = 2/4.
    assert headlines["ndcg@0.0"] == {"value": pytest.approx(1 / 3), "n": 3}
    ndcg = _pair(comparison, "ndcg@0.0")
    assert ndcg["diff"] == pytest.approx(0.25) and ndcg["p"] == pytest.approx(0.5)
    # F1: a (1, 0, 1), b (1, 1, 0): 2/3 each; differences 0, -1, 1: 0, p = 1.
    assert headlines["f1@0.0"] == {"value": pytest.approx(2 / 3), "n": 3}
    f1 = _pair(comparison, "f1@0.0")
    assert f1["diff"] == pytest.approx(0.0) and f1["p"] == pytest.approx(1.0)
    info = _pair(comparison, "info_updating@0.0")
    assert (info["diff"], info["n"]) == (pytest.approx(0.75), 1)
    assert _pair(comparison, "recall@0.5")["diff"] == pytest.approx(-1 / 3)
    assert _pair(comparison, "ndcg@0.5")["diff"] == pytest.approx(-1 / 6)
    # The main table: system x noise, recall / nDCG / F1 / info-updating with CIs.
    table = comparison["tables"][0]
    assert table["headers"] == ["system", "noise", "recall", "nDCG", "answer F1",
                                "info-updating"]
    row = table["rows"][0]
    assert row[:2] == ["openai/a · bm25", 0.0] and row[2]["value"] == pytest.approx(2 / 3)
    assert row[4]["value"] == pytest.approx(2 / 3) and row[5]["n"] == 1
    assert table["rows"][1][4]["value"] is None  # noise 0.5: no answers
    # Every question is "basic": that category's row is the overall one, the others empty.
    categories = comparison["tables"][1]
    assert categories["rows"][0][:3] == ["openai/a · bm25", 0.0, "basic"]
    assert categories["rows"][0][3:] == row[2:5]
    assert categories["rows"][1][3]["n"] == 0
    report = (out / "report.html").read_text()
    assert "answer F1 against the noise level per system" in report
    assert "answer 2" in report and "question 2? (noise 0.0)" in report


def test_a_run_with_two_retrievers_is_two_systems_paired_on_questions(tmp_path):
    out = tmp_path / "cmp"
    result, _ = compare(personabench_run(tmp_path / "a", retrievers=("bm25", "minilm")),
                        personabench_run(tmp_path / "b", model="b"), "--out", out)
    assert result.returncode == 0, result.stderr
    comparison = json.loads((out / "comparison.json").read_text())
    assert list(comparison["runs"]) == ["openai/a · bm25", "openai/a · minilm",
                                        "openai/b · bm25"]
    pairs = {(p["a"], p["b"]) for p in comparison["pairs"]}
    assert len(pairs) == 3
    # minilm of run a scored as bm25 of run a: the same questions, no difference.
    same = _pair(comparison, "recall@0.0")
    assert same["b"] == "openai/a · minilm" and same["diff"] == 0.0 and same["n"] == 3


def test_real_runs_figures_equal_their_metrics(tmp_path):
    """A scripted model answering over bm25 and gt-context, and bm25 retrieval only: each
    headline and table figure is the run's metrics.json figure for the same condition."""
    common = ("personabench", "eval", "--data", EXAMPLE, "--noise", "0.0,0.5")
    runs = {"answered": (*common, "--retriever", "bm25,gt-context", "--model", "scripted",
                         "--no-cache"),
            "retrieval": (*common, "--retriever", "bm25", "--no-answer")}
    for name, args in runs.items():
        result = personalens(*args, "--out", tmp_path / name)
        assert result.returncode == 0, result.stderr
    result, _ = compare(tmp_path / "answered", tmp_path / "retrieval", "--out", tmp_path / "c")
    assert result.returncode == 0, result.stderr
    comparison = json.loads((tmp_path / "c/comparison.json").read_text())
    names = {"answered": "scripted", "retrieval": "retrieval only"}
    rows = {(r[0], r[1]): r for r in comparison["tables"][0]["rows"]}
    for run, model in names.items():
        metrics = json.loads((tmp_path / run / "metrics.json").read_text())
        for condition in metrics["conditions"]:
            name = f"{model} · {condition['retriever']}"
            noise = f"{condition['noise']:.1f}"
            figures = comparison["runs"][name]["headlines"]
            overall = condition["retrieval"]["overall"]
            assert figures[f"recall@{noise}"]["value"] == pytest.approx(overall["recall"])
            assert figures[f"ndcg@{noise}"]["value"] == pytest.approx(overall["ndcg"])
            row = rows[(name, condition["noise"])]
            for category_row in comparison["tables"][1]["rows"]:
                if category_row[:2] == [name, condition["noise"]]:
                    scores = condition["retrieval"][category_row[2]]
                    assert category_row[3]["value"] == pytest.approx(scores["recall"])
            assert (row[2]["ci_low"], row[2]["ci_high"]) == (overall["ci_low"]["recall"],
                                                             overall["ci_high"]["recall"])
            if condition.get("end_to_end"):
                f1 = condition["end_to_end"]["overall"]
                assert figures[f"f1@{noise}"]["value"] == pytest.approx(f1["f1"])
                assert row[4]["ci_low"] == f1["ci_low"]["f1"]
                info = condition["info_updating"]
                assert figures[f"info_updating@{noise}"] == {
                    "value": pytest.approx(info["score"]), "n": info["n"]}
