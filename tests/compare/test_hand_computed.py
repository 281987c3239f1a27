"""`personalens compare` pairs two systems on the units both scored, never on all of either's:
runs whose unit sets differ, with every figure computed by hand on the shared units, where
pairing on all units (a missing unit read as 0, or each system's own mean) gives another
value, not a crash.
"""

import json

import pytest

from tests.compare_runs import UNITS, compare, pqb_run, table_records, table_run


def _pairs(comparison: dict) -> dict[str, dict]:
    return {p["headline"]: p for p in comparison["pairs"]}


def test_personabench_runs_pair_on_the_questions_both_scored(tmp_path):
    """Retrieval-only runs at noise 0.3; a scored q9 and b q10, which the other did not:

                  q1 .. q6   q7   q8   q9   q10
        a recall     1       0.5  0.5   1    -
        b recall     0       0.5  0.5   -    0

    Each system's recall is over its own nine questions: a 8/9, b 1/9. The pair is over
    q1-q8: six differences of +1 and two of 0: 6/8 = 0.75, exact sign-flip p = 2/2^6 = 1/32.
    Over all ten with a missing value as 0 it would be 7/10 with p = 1/64; the difference of
    the systems' own means 7/9."""
    a = table_run(tmp_path / "a", "a", table_records(
        "bm25", "0.3", [1.0] * 6 + [0.5, 0.5, 1.0], None,
        questions=[f"q{i}" for i in range(1, 10)]))
    b = table_run(tmp_path / "b", "b", table_records(
        "bm25", "0.3", [0.0] * 6 + [0.5, 0.5, 0.0], None,
        questions=[f"q{i}" for i in (*range(1, 9), 10)]))
    out = tmp_path / "cmp"
    result, text = compare(a, b, "--out", out)
    assert result.returncode == 0, text
    comparison = json.loads((out / "comparison.json").read_text())
    own = {name: run["headlines"]["recall@0.3"] for name, run in comparison["runs"].items()}
    assert own == {"openai/a · bm25": {"value": pytest.approx(8 / 9), "n": 9},
                   "openai/b · bm25": {"value": pytest.approx(1 / 9), "n": 9}}
    pairs = _pairs(comparison)
    recall = pairs["recall@0.3"]
    assert (recall["n"], recall["test"]) == (8, "sign_flip")
    assert recall["diff"] == pytest.approx(0.75) and recall["p"] == pytest.approx(1 / 32)
    # every paired resample is a mean of six ones and two zeros: between 0 and 1
    assert 0.0 <= recall["ci_low"] <= 0.75 <= recall["ci_high"] <= 1.0
    ndcg = pairs["ndcg@0.3"]
    assert (ndcg["n"], ndcg["diff"], ndcg["p"]) == (8, pytest.approx(0.375),
                                                    pytest.approx(1 / 32))
    assert "f1@0.3" not in pairs  # neither run answered
    report = (out / "report.html").read_text()
    assert "question q1? (noise 0.3)" in report  # a unit both scored, where they differ
    assert "question q9?" not in report and "question q10?" not in report


def test_pqb_runs_pair_on_the_queries_and_user_pairs_both_scored(tmp_path):
    """bm25's query P3/u2 failed (compared with --allow-incomplete), so P3 has no pair of
    users in bm25. Ranks (compare_runs.RANKS; - not in the top 20):

                clean: P1u1 P1u2 P2u1 P2u2 P3u1 P3u2   typo: P1u1 P1u2 P2u1 P2u2 P3u1 P3u2
        bm25           1    1    1    -    1   fail          1    1    1    1    1   fail
        minilm         1    -    -    -    1    1            1    -    -    -    1    1

    Hit@20 clean: bm25 4/5 on its five, minilm 3/6. Paired on the five: 4/5 - 2/5 = 0.4,
    discordant P1u2 and P2u1 (bm25 only): McNemar 2 x (1/2)^2 = 0.5. (With bm25's P3u2 as a
    miss: 4/6 - 3/6, discordant 2 to 1, p = 1; own means: 4/5 - 1/2.)
    Hit@20 typo on the five: 5/5 - 2/5 = 0.6, discordant 3 to 0: p = 2/8.
    MRR clean on the five: differences 0, 1, 1, 0, 0: 0.4, sign-flip p = 2/4.
    Flip rate @1 (paper) on the user pairs both have, P1 and P2: bm25 (1,1) (1,0): 1 flip of
    2 eligible; minilm (1,0) (0,0): 1 of 1: 1/2 - 1 = -0.5. Each of the 4 swaps gives |diff|
    >= 1/2 (-1/2, 1, -1, 1/2): p = 1. (minilm's own, with P3 (1,1): 1/2, a difference of 0.)
    """
    a = pqb_run(tmp_path / "a", "bm25", units=UNITS[:5], failed=("P3/u2",))
    b = pqb_run(tmp_path / "b", "minilm")
    out = tmp_path / "cmp"
    result, text = compare(a, b, "--out", out, "--allow-incomplete")
    assert result.returncode == 0, text
    comparison = json.loads((out / "comparison.json").read_text())
    assert comparison["runs"]["bm25"]["status"] == "incomplete"
    assert comparison["runs"]["bm25"]["headlines"]["hit.clean.20"] == {
        "value": pytest.approx(4 / 5), "n": 5}
    assert comparison["runs"]["minilm"]["headlines"]["hit.clean.20"] == {
        "value": pytest.approx(3 / 6), "n": 6}
    assert comparison["runs"]["minilm"]["headlines"]["flip_rate.paper.1"] == {
        "value": pytest.approx(0.5), "n": 3}
    pairs = _pairs(comparison)
    hit = pairs["hit.clean.20"]
    assert (hit["n"], hit["test"]) == (5, "mcnemar_exact")
    assert hit["diff"] == pytest.approx(0.4) and hit["p"] == pytest.approx(0.5)
    typo = pairs["hit.typo.20"]
    assert (typo["n"], typo["diff"], typo["p"]) == (5, pytest.approx(0.6), pytest.approx(0.25))
    mrr = pairs["mrr.clean"]
    assert (mrr["n"], mrr["diff"], mrr["p"]) == (5, pytest.approx(0.4), pytest.approx(0.5))
    flip = pairs["flip_rate.paper.1"]
    assert (flip["n"], flip["test"]) == (2, "paired_permutation")
    assert flip["diff"] == pytest.approx(-0.5) and flip["p"] == pytest.approx(1.0)
