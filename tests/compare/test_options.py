"""`personalens compare`'s options away from their defaults, and what a person reads of them
(the summary line), against values computed by hand.

Two personabench runs written out (ten questions at noise 0.3, bm25; nDCG = recall / 2):

              q1 .. q6   q7 .. q10          F1: q1 .. q8   q9   q10
    a recall     1          0.5                   1         0    0.5
    b recall     0          0.5                   0         1    0.5

recall: 0.8 - 0.2 = 0.6, six differences of +1: exact sign-flip p = 2/2^6 = 1/32; nDCG the
same differences halved: 0.3, p = 1/32; F1: 0.85 - 0.15 = 0.7, eight +1 and one -1: p =
(1 + 9 + 9 + 1)/512 = 5/128. Over the report's 3 tests:
    holm: 3 x 1/32 = 3/32, max(3/32, 2 x 1/32), max(3/32, 5/128): 3/32 each -> 0 differ
    bh:   5/128, min(3/2 x 1/32, 5/128), min(3 x 1/32, 5/128): 5/128 each  -> 3 differ
Every raw p is below 0.05: a count of the raw p would say 3 under holm.
"""

import json

import pytest

from personalens.stats.paired import paired_difference
from tests.compare_runs import compare, table_records, table_run

RECALL = {"a": [1.0] * 6 + [0.5] * 4, "b": [0.0] * 6 + [0.5] * 4}
F1 = {"a": [1.0] * 8 + [0.0, 0.5], "b": [0.0] * 8 + [1.0, 0.5]}
HEADLINES = ["recall@0.3", "ndcg@0.3", "f1@0.3"]


@pytest.fixture
def runs(tmp_path):
    return [table_run(tmp_path / name, name, table_records("bm25", "0.3", RECALL[name],
                                                           F1[name])) for name in "ab"]


def _compare(tmp_path, runs, *options) -> tuple[dict, list[str]]:
    out = tmp_path / "cmp"
    result, text = compare(*runs, "--out", out, *options)
    assert result.returncode == 0, text
    return json.loads((out / "comparison.json").read_text()), result.stdout.splitlines()


def test_holm_and_bh_give_their_own_adjusted_p_and_the_summary_counts_the_adjusted(
        tmp_path, runs):
    comparison, lines = _compare(tmp_path, runs)
    pairs = comparison["pairs"]
    assert [p["headline"] for p in pairs] == HEADLINES
    assert [p["diff"] for p in pairs] == pytest.approx([0.6, 0.3, 0.7])
    assert [p["p"] for p in pairs] == pytest.approx([1 / 32, 1 / 32, 5 / 128])
    assert [p["p_adj"] for p in pairs] == pytest.approx([3 / 32] * 3)
    assert "paired comparisons: 3, 0 differ at adjusted p < 0.05 (holm)" in lines
    assert "p adjusted by holm over all 3" in (tmp_path / "cmp" / "report.html").read_text()

    comparison, lines = _compare(tmp_path, runs, "--correction", "bh")
    pairs = comparison["pairs"]
    assert comparison["correction"] == "bh"
    assert [p["p"] for p in pairs] == pytest.approx([1 / 32, 1 / 32, 5 / 128])
    assert [p["p_adj"] for p in pairs] == pytest.approx([5 / 128] * 3)
    assert "paired comparisons: 3, 3 differ at adjusted p < 0.05 (bh)" in lines
    assert "p adjusted by bh over all 3" in (tmp_path / "cmp" / "report.html").read_text()


def test_the_summary_counts_only_the_pairs_below_the_adjusted_threshold(tmp_path):
    """Three runs: c is b again, so a - c repeats a - b and b - c has no difference (p = 1).
    bh over the 9 tests: sorted p 1/32, 1/32, 1/32, 1/32, 5/128, 5/128, 1, 1, 1; k = 6: 5/128
    x 9/6 = 0.0586; k = 4: 1/32 x 9/4 = 0.0703 -> min 0.0586: nothing below 0.05, although
    six raw p are."""
    runs = [table_run(tmp_path / name, name, table_records("bm25", "0.3", RECALL[data],
                                                           F1[data]))
            for name, data in (("a", "a"), ("b", "b"), ("c", "b"))]
    comparison, lines = _compare(tmp_path, runs, "--correction", "bh")
    p = {(e["a"], e["b"], e["headline"]): e for e in comparison["pairs"]}
    assert p["openai/b · bm25", "openai/c · bm25", "recall@0.3"]["p"] == 1.0
    assert p["openai/a · bm25", "openai/c · bm25", "f1@0.3"]["p"] == pytest.approx(5 / 128)
    assert p["openai/a · bm25", "openai/b · bm25", "recall@0.3"]["p_adj"] == pytest.approx(
        5 / 128 * 9 / 6)
    assert p["openai/b · bm25", "openai/c · bm25", "f1@0.3"]["p_adj"] == 1.0
    assert "paired comparisons: 9, 0 differ at adjusted p < 0.05 (bh)" in lines


def test_the_seed_reaches_the_bootstrap(tmp_path, runs):
    """--seed 3: the F1 pair's CI is the paired bootstrap of its units (in compare's unit
    order, q1, q10, q2, ...) with seed 3, which is not seed 0's; the exact test's p stays."""
    comparison, _ = _compare(tmp_path, runs, "--seed", "3")
    assert comparison["seed"] == 3
    f1 = next(p for p in comparison["pairs"] if p["headline"] == "f1@0.3")
    order = sorted(range(10), key=lambda i: f"q{i + 1}")
    a, b = ([F1[name][i] for i in order] for name in "ab")
    direct = {seed: paired_difference(a, b, seed=seed) for seed in (0, 3)}
    assert (f1["ci_low"], f1["ci_high"]) == (direct[3].ci_low, direct[3].ci_high)
    assert direct[0].ci_low != direct[3].ci_low
    assert f1["p"] == pytest.approx(5 / 128)
