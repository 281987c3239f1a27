"""prefdisco scoring with scripted target, user and judge: PrefAlign, NormAlign, invalid judge
replies in strict and release mode, weights, and judge agreement. Every expected number is
computed by hand in the comments."""

import json

import numpy as np
import pytest

from personalens.lenses.prefdisco.scoring import (
    normalign,
    normalign_value,
    prefalign_release,
    prefalign_strict,
)
from personalens.stats.agreement import judge_agreement
from tests import prefdisco_data as data
from tests.prefdisco_double import Roles, evaluate, judge_table, passive_user, scripted_target

W = {"visual": 0.75, "brevity": 0.25}  # unequal, so the unweighted mean differs


def _by_key(records: list[dict]) -> dict[str, dict]:
    return {r["key"]: r for r in records}


# --- PrefAlign and NormAlign -------------------------------------------------------------------

# (visual, brevity) scores per instance and condition; PrefAlign = 0.75 v + 0.25 b.
HAND = {
    "a1": {"baseline": (1, 5), "discovery": (4, 2), "oracle": (5, 1)},  # 2.0, 3.5, 4.0
    "a2": {"baseline": (1, 1), "discovery": (4, 2), "oracle": (5, 5)},  # 1.0, 3.5, 5.0
    "b1": {"baseline": (3, 3), "discovery": (2, 2), "oracle": (4, 4)},  # 3.0, 2.0, 4.0
    "c1": {"baseline": (3, 1), "discovery": (4, 4), "oracle": (2, 4)},  # 2.5, 4.0, 2.5
}


def _table(hand: dict) -> dict:
    return {f"{pid}/{condition}": {"visual": v, "brevity": b}
            for pid, by_condition in hand.items() for condition, (v, b) in by_condition.items()}


def test_prefalign_and_normalign_by_hand(tmp_path, monkeypatch):
    folder = data.folder(tmp_path / "data", {
        "alpha": [data.weighted("a1", W), data.weighted("a2", W)],
        "beta": [data.weighted("b1", W)],
        "gamma": [data.weighted("c1", W)]})
    roles = Roles(target=scripted_target(), user=passive_user,
                  judge=judge_table(_table(HAND))).install(monkeypatch)
    metrics, records, outcome = evaluate(folder, tmp_path / "out", roles)
    assert outcome.complete
    records = _by_key(records)
    assert records["alpha/a1/baseline"]["prefalign"] == 2.0  # unweighted would be 3.0
    assert records["gamma/c1/oracle"]["prefalign"] == 2.5

    prefalign = metrics["prefalign"]
    # baseline (2 + 1 + 3 + 2.5) / 4; unweighted means would be 2.25, 3.25, 3.5.
    assert prefalign["baseline"]["mean"] == pytest.approx(2.125)
    assert prefalign["discovery"]["mean"] == pytest.approx(3.25)  # (3.5 + 3.5 + 2 + 4) / 4
    assert prefalign["oracle"]["mean"] == pytest.approx(3.875)  # (4 + 5 + 4 + 2.5) / 4
    assert all(prefalign[c]["n"] == 4 for c in ("baseline", "discovery", "oracle"))

    normalign = metrics["normalign"]
    # alpha: paired means 1.5, 3.5, 4.5 -> 100 * 2 / 3. Near misses: the mean of the
    # per-instance ratios is (75 + 62.5) / 2 = 68.75; dividing by the oracle alone, 44.4;
    # unweighted PrefAlign, undefined (3, 3, 3 for a1).
    alpha = normalign["alpha"]
    assert alpha["value"] == pytest.approx(200 / 3)
    assert alpha["discovery_gain"] == pytest.approx(2.0)
    assert alpha["oracle_gain"] == pytest.approx(3.0)
    assert alpha["n"] == 2 and alpha["undefined"] is False
    # The paired bootstrap: resample instances, NormAlign of the resample's means.
    rows = np.array([[2.0, 3.5, 4.0], [1.0, 3.5, 5.0]])
    rng = np.random.default_rng(0)
    values = []
    for _ in range(1000):
        b, d, o = rows[rng.integers(0, 2, 2)].mean(axis=0)
        values.append(100 * (d - b) / (o - b))
    assert alpha["ci_low"] == pytest.approx(np.quantile(values, 0.025))
    assert alpha["ci_high"] == pytest.approx(np.quantile(values, 0.975))
    assert 62.5 <= alpha["ci_low"] < alpha["value"] < alpha["ci_high"] <= 75

    # beta: 100 * (2 - 3) / (4 - 3); dividing by the oracle alone would give -25.
    assert normalign["beta"]["value"] == pytest.approx(-100.0)
    assert normalign["beta"]["ci_low"] == normalign["beta"]["ci_high"] == pytest.approx(-100.0)
    # gamma: oracle = baseline = 2.5 -> undefined, with the raw gains reported.
    assert normalign["gamma"] == {"value": None, "ci_low": None, "ci_high": None,
                                  "undefined": True, "n": 1, "discovery_gain": 1.5,
                                  "oracle_gain": 0.0, "oracle_below_baseline": False,
                                  "undefined_resamples": 1000}
    assert alpha["undefined_resamples"] == 0 and not alpha["oracle_below_baseline"]
    # overall: 100 * (3.25 - 2.125) / (3.875 - 2.125)
    assert normalign["overall"]["value"] == pytest.approx(100 * 1.125 / 1.75)
    assert normalign["overall"]["n"] == 4
    # Of the two defined tasks one is negative; the undefined one is not counted.
    assert metrics["negative_normalign_share"] == 0.5
    assert metrics["negative_normalign_tasks"] == 2
    assert metrics["per_task"]["alpha"]["prefalign"] == {"baseline": 1.5, "discovery": 3.5,
                                                        "oracle": 4.5}
    report = (tmp_path / "out" / "report.html").read_text()
    assert "undefined" in report and "50.0 %" in report


def test_normalign_formula_and_its_undefined_band():
    assert normalign_value(2.0, 3.0, 4.0) == pytest.approx(50.0)
    assert normalign_value(1.0, 0.5, 3.0) == pytest.approx(-25.0)
    # Undefined below a gap of 0.05 on the 1-5 scale, either side: 0.01 would give 3,000.
    assert normalign_value(2.0, 2.3, 2.01) is None
    assert normalign_value(2.0, 2.3, 1.96) is None
    assert normalign_value(2.0, 2.03, 2.06) == pytest.approx(50.0)  # 0.06: defined
    assert normalign_value(2.0, 2.3, 2.01, min_gap=1e-6) == pytest.approx(3000.0)
    assert normalign_value(2.0, 3.0, 2.0 + 5e-7, min_gap=1e-6) is None
    assert normalign_value(2.0, 3.0, 2.0, min_gap=0) is None  # a tie never divides by zero
    empty = normalign(np.empty((0, 3)))
    assert empty.value is None and empty.undefined and empty.n == 0


def test_an_oracle_below_the_baseline_is_flagged_and_left_out_of_the_negative_share():
    from personalens.lenses.prefdisco.analysis import _normalign

    def rec(prefalign):
        return type("R", (), {"prefalign": prefalign})()

    # baseline, discovery, oracle per task: up gives 50; down gives -50; flipped gives +50
    # although discovery did worse than the baseline (the oracle is below it); flat's gap is
    # 0.02, undefined.
    table = {"up": (2.0, 3.0, 4.0), "down": (3.0, 2.5, 4.0), "flipped": (3.0, 2.5, 2.0),
             "flat": (3.0, 3.5, 3.02)}
    by_instance = {t: dict(zip(("baseline", "discovery", "oracle"), map(rec, v), strict=True))
                   for t, v in table.items()}
    out = _normalign(list(table), {t: [t] for t in table}, by_instance, 0.05)
    flipped = out["normalign"]["flipped"]
    assert flipped.value == pytest.approx(50.0) and flipped.oracle_below_baseline
    assert not out["normalign"]["up"].oracle_below_baseline
    assert out["normalign"]["flat"].undefined
    # Counted: up and down (flipped is flagged, flat undefined); one of the two is negative.
    # Counting flipped would give 1/3, counting it as negative 2/3.
    assert out["negative_normalign_share"] == 0.5 and out["negative_normalign_tasks"] == 2


def test_bootstrap_resamples_where_normalign_is_undefined_are_counted():
    # Two instances; a resample that draws the first twice has oracle = baseline: undefined.
    rows = np.array([[2.0, 3.0, 2.0], [2.0, 3.0, 4.0]])
    result = normalign(rows)
    rng = np.random.default_rng(0)
    draws = [rng.integers(0, 2, 2) for _ in range(1000)]
    expected = sum(1 for d in draws if (d == 0).all())
    assert result.undefined_resamples == expected and 200 < expected < 300
    defined = [100 * (3.0 - 2.0) / (rows[d, 2].mean() - 2.0) for d in draws if not (d == 0).all()]
    assert result.ci_low == pytest.approx(np.quantile(defined, 0.025))
    assert result.ci_high == pytest.approx(np.quantile(defined, 0.975))


def test_prefalign_formulas():
    # strict: excluded criteria drop out and the rest are renormalised
    assert prefalign_strict([(4, 0.5), (None, 0.3), (2, 0.2)]) == pytest.approx(2.4 / 0.7)
    assert prefalign_strict([(None, 0.5), (None, 0.5)]) is None
    # release: raw weights, sum w*s / sum w
    assert prefalign_release([(4, 2.0), (1, 1.0), (7, 1.0)]) == pytest.approx(16 / 4)


# --- Invalid judge replies -----------------------------------------------------------------------

W3 = {"visual": 0.5, "brevity": 0.3, "tone": 0.2}
# visual 4 and tone 2 are valid; brevity gets the reply under test.
# strict: brevity excluded -> (0.5 * 4 + 0.2 * 2) / 0.7 = 3.428571...
#   (unnormalised 2.4; the unweighted mean of the valid scores 3.0)
# release: 0.5 * 4 + 0.3 * s + 0.2 * 2 = 2.4 + 0.3 s with s as the release reads it
INVALID = {
    "no JSON": "I would give it a four.",
    "missing score": json.dumps({"justification": "fine"}),
    "non-integer 4.5": json.dumps({"score": 4.5, "justification": "x"}),
    "numeric string": json.dumps({"score": "4", "justification": "x"}),
    "boolean": json.dumps({"score": True, "justification": "x"}),
    "boolean false": json.dumps({"score": False, "justification": "x"}),
    "null": json.dumps({"score": None, "justification": "x"}),
    "out of range 0": json.dumps({"score": 0, "justification": "x"}),
    "out of range 7": json.dumps({"score": 7, "justification": "x"}),
}
RELEASE = {  # what release mode makes of each: a PrefAlign, or None where the instance drops
    "no JSON": None,
    "missing score": 2.4 + 0.3 * 1,  # counted as 1
    "non-integer 4.5": 2.4 + 0.3 * 4.5,
    "numeric string": 2.4 + 0.3 * 4,  # coerced
    "boolean": 2.4 + 0.3 * 1,  # the release's True * weight
    "boolean false": 2.4,  # False * weight
    "null": None,  # None * weight raises in the release: the instance drops
    "out of range 0": 2.4,
    "out of range 7": 2.4 + 0.3 * 7,  # used as is: 4.5
}


def _one_instance(tmp_path, monkeypatch, brevity, **options):
    path = data.write(tmp_path / "mmlu.jsonl", [data.weighted("p1", W3)])
    roles = Roles(target=scripted_target(), user=passive_user, judge=judge_table(
        {"p1/baseline": {"visual": 4, "brevity": brevity, "tone": 2}})).install(monkeypatch)
    metrics, records, outcome = evaluate(path, tmp_path / "out", roles,
                                         conditions=["baseline"], **options)
    return metrics, records, outcome, roles


def _calls_for(roles: Roles, criterion: str) -> list[dict]:
    return [params for messages, params in roles.of("judge")
            if f"Criterion: {criterion}\n" in messages[-1]["content"]]


@pytest.mark.parametrize("kind", list(INVALID))
def test_strict_retries_then_excludes_and_renormalises(tmp_path, monkeypatch, kind):
    metrics, records, outcome, roles = _one_instance(
        tmp_path, monkeypatch, INVALID[kind], judge_temperature=0.3)
    (record,) = records
    assert record["status"] == "ok" and record["flagged"] is True
    assert record["prefalign"] == pytest.approx(2.4 / 0.7)
    brevity = next(c for c in record["criteria"] if c["preference"] == "brevity")
    assert brevity["score"] is None
    (verdict,) = brevity["verdicts"]
    assert verdict["attempts"] == 3 and verdict["score"] is None and verdict["problem"]
    # Asked three times, each with a new seed (the same request would replay the reply).
    assert [p["seed"] for p in _calls_for(roles, "brevity")] == [0, 1, 2]
    assert {p["temperature"] for p in _calls_for(roles, "brevity")} == {0.3}
    assert len(_calls_for(roles, "visual")) == 1
    assert metrics["judge"]["excluded_criteria"] == 1
    assert metrics["judge"]["invalid_rate"] == pytest.approx(3 / 5)  # 1 + 3 + 1 replies
    assert metrics["prefalign"]["baseline"]["mean"] == pytest.approx(2.4 / 0.7)
    assert outcome.complete


@pytest.mark.parametrize("kind", list(INVALID))
def test_release_mode_reads_invalid_replies_as_the_release_does(tmp_path, monkeypatch, kind):
    metrics, records, outcome, roles = _one_instance(tmp_path, monkeypatch, INVALID[kind],
                                                     scoring="release")
    (record,) = records
    assert record["status"] == "ok"
    assert len(_calls_for(roles, "brevity")) == 1  # no retries in release mode
    expected = RELEASE[kind]
    if expected is None:
        assert record["dropped"] and record["prefalign"] is None
        assert metrics["unpaired"][0]["instance"] == "mmlu/p1"
        assert "baseline: dropped" in metrics["unpaired"][0]["reasons"][0]
        assert metrics["prefalign"]["baseline"] == {"mean": None, "ci_low": None,
                                                    "ci_high": None, "n": 0}
        assert metrics["n_instances"] == 0
    else:
        assert record["dropped"] is None
        assert record["prefalign"] == pytest.approx(expected)
        assert metrics["prefalign"]["baseline"]["mean"] == pytest.approx(expected)
        assert metrics["unpaired"] == []
    assert metrics["scoring"] == "release"


def test_strict_uses_a_valid_reply_on_retry(tmp_path, monkeypatch):
    _, records, _, roles = _one_instance(tmp_path, monkeypatch, ["no json", 3])
    (record,) = records
    assert record["prefalign"] == pytest.approx(0.5 * 4 + 0.3 * 3 + 0.2 * 2)
    assert record["flagged"] is False
    brevity = next(c for c in record["criteria"] if c["preference"] == "brevity")
    assert brevity["score"] == 3 and brevity["verdicts"][0]["attempts"] == 2
    assert [p["seed"] for p in _calls_for(roles, "brevity")] == [0, 1]


def test_no_valid_criterion_is_an_item_failure_not_a_score(tmp_path, monkeypatch):
    path = data.write(tmp_path / "mmlu.jsonl", [data.weighted("p1", W), data.weighted("p2", W)])
    bad = json.dumps({"score": 9})
    table = _table({"p1": HAND["a1"], "p2": HAND["a2"]})
    table["p2/discovery"] = {"visual": bad, "brevity": "no verdict"}
    roles = Roles(target=scripted_target(), user=passive_user,
                  judge=judge_table(table)).install(monkeypatch)
    metrics, records, outcome = evaluate(path, tmp_path / "out", roles)
    failed = _by_key(records)["mmlu/p2/discovery"]
    assert failed["status"] == "failed" and failed["error"]["kind"] == "no_valid_criterion"
    assert [c["score"] for c in failed["criteria"]] == [None, None]
    assert not outcome.complete
    assert [f.key for f in outcome.tally.failures] == ["mmlu/p2/discovery"]
    assert metrics["n_failed"] == 1
    assert metrics["failures"][0]["kind"] == "no_valid_criterion"
    # p2 leaves every condition's means: they are p1's alone (2.0, 3.5, 4.0).
    assert metrics["n_instances"] == 1
    assert metrics["unpaired"] == [{"instance": "mmlu/p2", "reasons": [
        "discovery: no scored record (failed or not run)"]}]
    assert {c: metrics["prefalign"][c]["mean"] for c in ("baseline", "discovery", "oracle")} \
        == {"baseline": 2.0, "discovery": 3.5, "oracle": 4.0}


def test_release_drop_leaves_the_instance_out_of_every_condition(tmp_path, monkeypatch):
    path = data.write(tmp_path / "mmlu.jsonl", [data.weighted("p1", W), data.weighted("p2", W)])
    table = _table({"p1": HAND["a1"], "p2": HAND["a2"]})
    table["p2/discovery"] = {"visual": "Four out of five.", "brevity": 2}
    roles = Roles(target=scripted_target(), user=passive_user,
                  judge=judge_table(table)).install(monkeypatch)
    metrics, records, outcome = evaluate(path, tmp_path / "out", roles, scoring="release")
    assert outcome.complete  # a drop is the release's rule, not a failure
    dropped = _by_key(records)["mmlu/p2/discovery"]
    assert dropped["status"] == "ok" and "holds no JSON" in dropped["dropped"]
    assert metrics["n_instances"] == 1 and metrics["n_planned_instances"] == 2
    (unpaired,) = metrics["unpaired"]
    assert unpaired["instance"] == "mmlu/p2"
    assert unpaired["reasons"][0].startswith("discovery: dropped")
    # p2's baseline (1.0) and oracle (5.0) are scored but left out too.
    assert {c: metrics["prefalign"][c]["mean"] for c in ("baseline", "discovery", "oracle")} \
        == {"baseline": 2.0, "discovery": 3.5, "oracle": 4.0}
    assert metrics["normalign"]["mmlu"]["value"] == pytest.approx(75.0)  # 100 * 1.5 / 2
    assert "dropped" in (tmp_path / "out" / "report.html").read_text()


# --- Weights ---------------------------------------------------------------------------------


@pytest.mark.parametrize("scoring", ["strict", "release"])
def test_weights_not_summing_to_one_are_renormalised(tmp_path, monkeypatch, scoring):
    # p2's weights 3 and 1 sum to 4: normalised they are p1's 0.75 and 0.25.
    path = data.write(tmp_path / "mmlu.jsonl", [
        data.weighted("p1", W), data.weighted("p2", {"visual": 3.0, "brevity": 1.0})])
    roles = Roles(target=scripted_target(), user=passive_user, judge=judge_table(
        _table({"p1": HAND["a1"], "p2": HAND["a1"]}))).install(monkeypatch)
    metrics, records, _ = evaluate(path, tmp_path / "out", roles, scoring=scoring)
    records = _by_key(records)
    for condition, expected in (("baseline", 2.0), ("discovery", 3.5), ("oracle", 4.0)):
        assert records[f"mmlu/p1/{condition}"]["prefalign"] == pytest.approx(expected)
        assert records[f"mmlu/p2/{condition}"]["prefalign"] == pytest.approx(expected)
    assert [c["normalised_weight"] for c in records["mmlu/p2/baseline"]["criteria"]] == \
        [0.75, 0.25]
    assert metrics["renormalised_weights"] == ["mmlu/p2"]
    report = (tmp_path / "out" / "report.html").read_text()
    assert "Weights renormalised" in report and "mmlu/p2" in report


def test_a_missing_weight_defaults_to_one_over_n(tmp_path, monkeypatch):
    # Both weights missing: 1/2 each -> PrefAlign 0.5 * 1 + 0.5 * 5 = 3.0 for a1's baseline.
    path = data.write(tmp_path / "mmlu.jsonl", [
        data.weighted("p1", {"visual": None, "brevity": None})])
    roles = Roles(target=scripted_target(), user=passive_user, judge=judge_table(
        _table({"p1": HAND["a1"]}))).install(monkeypatch)
    metrics, records, _ = evaluate(path, tmp_path / "out", roles)
    records = _by_key(records)
    assert records["mmlu/p1/baseline"]["prefalign"] == pytest.approx(3.0)
    assert records["mmlu/p1/discovery"]["prefalign"] == pytest.approx(3.0)  # (4 + 2) / 2
    assert metrics["renormalised_weights"] == []
    assert metrics["data_warnings"] == {"mmlu/p1": ["visual: no weight, 1/2 used",
                                                    "brevity: no weight, 1/2 used"]}
    assert "brevity: no weight, 1/2 used" in (tmp_path / "out" / "report.html").read_text()


# --- Judge agreement -------------------------------------------------------------------------


def _quadratic_kappa(a: list[int], b: list[int], scale=range(1, 6)) -> float:
    """Cohen's kappa with quadratic weights over the 1-5 scale, from its definition."""
    k = len(scale)
    index = {v: i for i, v in enumerate(scale)}
    observed = np.zeros((k, k))
    for x, y in zip(a, b, strict=True):
        observed[index[x], index[y]] += 1
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    weights = np.array([[(i - j) ** 2 for j in range(k)] for i in range(k)], dtype=float)
    return 1 - (weights * observed).sum() / (weights * expected).sum()


def _ordinal_alpha(ratings: np.ndarray) -> float:
    """Krippendorff's alpha with the ordinal metric, from its definition (coincidences)."""
    values = sorted({v for v in ratings.flatten() if not np.isnan(v)})
    index = {v: i for i, v in enumerate(values)}
    coincidence = np.zeros((len(values), len(values)))
    for unit in ratings.T:
        present = [v for v in unit if not np.isnan(v)]
        m = len(present)
        if m < 2:
            continue
        for i, x in enumerate(present):
            for j, y in enumerate(present):
                if i != j:
                    coincidence[index[x], index[y]] += 1 / (m - 1)
    n_c = coincidence.sum(axis=1)
    n = n_c.sum()

    def delta(c, k):
        low, high = min(c, k), max(c, k)
        return (n_c[low:high + 1].sum() - (n_c[c] + n_c[k]) / 2) ** 2

    size = len(values)
    observed = sum(coincidence[c, k] * delta(c, k) for c in range(size) for k in range(size))
    expected = sum(n_c[c] * n_c[k] * delta(c, k) for c in range(size)
                   for k in range(size)) / (n - 1)
    return 1 - observed / expected


def test_two_judges_quadratic_weighted_kappa_by_hand():
    from sklearn.metrics import cohen_kappa_score

    # 3 and 4 never occur: the weights must still count 2 -> 5 as three steps, not one.
    a = [1, 2, 5, 5, 2, 1]
    b = [2, 1, 5, 2, 2, 1]
    expected = _quadratic_kappa(a, b)
    assert expected == pytest.approx(0.6292134831460674)
    assert expected == pytest.approx(cohen_kappa_score(a, b, weights="quadratic",
                                                       labels=[1, 2, 3, 4, 5]))
    result = judge_agreement(np.array([a, b], dtype=float))
    assert result == {"method": "weighted_kappa", "value": pytest.approx(expected), "n": 6}
    # A unit one judge could not score is left out, not guessed.
    with_gap = judge_agreement(np.array([[*a, 3], [*b, np.nan]]))
    assert with_gap["n"] == 6 and with_gap["value"] == pytest.approx(expected)


def test_three_judges_krippendorff_ordinal_alpha_by_hand():
    ratings = np.array([[1, 2, 3, 3, 5, 4, np.nan],
                        [1, 2, 3, 4, 5, 4, 2],
                        [2, 2, 3, 3, 4, np.nan, 2]], dtype=float)
    result = judge_agreement(ratings)
    assert result["method"] == "krippendorff_alpha" and result["n"] == 7
    assert result["value"] == pytest.approx(_ordinal_alpha(ratings))
    assert 0.8 < result["value"] < 1  # close, not perfect agreement
    assert judge_agreement(np.array([[1, 2, 3], [1, 2, 3], [1, 2, 3]]))["value"] == 1.0


def test_two_judges_with_a_score_off_the_scale_get_ordinal_alpha_not_truncated_kappa():
    # Release scoring keeps a 4.5: truncated to 4 it would agree with the other judge's 4.
    ratings = np.array([[4.5, 3, 2, 1, 5], [4, 3, 2, 1, 5]], dtype=float)
    result = judge_agreement(ratings)
    assert result["method"] == "krippendorff_alpha" and result["n"] == 5
    assert result["value"] == pytest.approx(_ordinal_alpha(ratings))
    assert result["value"] < 1
    # A 4.5 only one judge gave is not one of kappa's units: the two judges stay on kappa.
    lone = judge_agreement(np.array([[4.5, 3, 2, 1, 5], [np.nan, 3, 2, 1, 4]]))
    assert lone["method"] == "weighted_kappa" and lone["n"] == 4


def test_two_judges_in_an_eval_report_their_agreement(tmp_path, monkeypatch):
    path = data.write(tmp_path / "mmlu.jsonl", [data.weighted("p1", W)])
    a = _table({"p1": HAND["a1"]})  # (1, 5), (4, 2), (5, 1)
    b = _table({"p1": {"baseline": (2, 5), "discovery": (4, 1), "oracle": (5, 2)}})
    roles = Roles(target=scripted_target(), user=passive_user, judgeA=judge_table(a),
                  judgeB=judge_table(b)).install(monkeypatch)
    metrics, records, _ = evaluate(path, tmp_path / "out", roles, judges=("judgeA", "judgeB"))
    baseline = _by_key(records)["mmlu/p1/baseline"]
    # Each criterion's score is the judges' mean: visual 1.5, brevity 5 -> 0.75*1.5 + 1.25
    assert [c["score"] for c in baseline["criteria"]] == [1.5, 5.0]
    assert baseline["prefalign"] == pytest.approx(2.375)
    # Units in record order (baseline, discovery, oracle) x (visual, brevity).
    judge_a, judge_b = [1, 5, 4, 2, 5, 1], [2, 5, 4, 1, 5, 2]
    assert metrics["judge"]["agreement"] == {
        "method": "weighted_kappa", "value": pytest.approx(_quadratic_kappa(judge_a, judge_b)),
        "n": 6}
    assert "Judge agreement (weighted_kappa)" in (tmp_path / "out" / "report.html").read_text()
