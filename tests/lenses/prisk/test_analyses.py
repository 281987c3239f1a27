"""PRISK's analyses from scored records, by hand: the depth sweep's σ, degradation from base,
per-record coverage and the reflection gain."""

import pytest

from personalens.lenses.prisk.analysis import k_sweep_sigma, k_sweep_table
from personalens.lenses.prisk.conditions import conditions_for
from personalens.stats.estimate import Estimate


def test_k_sweep_sigma_is_the_sample_sd_of_each_risks_0_100_score_across_k():
    conditions = conditions_for(["base"], [1, 3])
    scores = {"irp": {"r1": {"k1": 5, "k3": 2}, "r2": {"k1": 3, "k3": 2}},  # 1-5
              "narrowing": {"r3": {"k1": 0.5, "k3": 0.7}},  # UIR
              "sycophancy": {"r4": {"k1": 4.2, "k3": 2.6}},  # pooled, 1-5
              "accuracy": {"r5": {"k1": 1.0, "k3": 0.0}}}
    table = k_sweep_table(scores, conditions)
    assert table["1"] == {"irp": 4.0, "n_irp": 2, "accuracy": 1.0, "n_accuracy": 1,
                          "narrowing": 0.5, "n_narrowing": 1, "sycophancy": 4.2,
                          "n_sycophancy": 1}
    sigma = k_sweep_sigma(scores, conditions)
    # IRP means 4 and 2 -> 75 and 25 on 0-100: two values 50 apart have the sample SD
    # 50 / sqrt(2) = 35.36 (the population SD would be 25, and the SD of the raw 1-5 means
    # 1.41). Narrowing 50, 70 -> 20 / sqrt(2); sycophancy 80, 40 -> 40 / sqrt(2).
    root2 = 2 ** 0.5
    assert sigma == pytest.approx({"irp": 50 / root2, "narrowing": 20 / root2,
                                   "sycophancy": 40 / root2})


def test_k_sweep_sigma_needs_two_depths():
    assert k_sweep_sigma({"irp": {"r": {"k1": 4}}}, conditions_for(["base"], [1])) == {
        "irp": None, "narrowing": None, "sycophancy": None}
    assert k_sweep_sigma({"irp": {"r": {"base": 4}}}, conditions_for(["base"], [])) == {}


def _means(**by_risk):
    return {risk: {c: Estimate(value=v) for c, v in values.items()} for risk, values in
            by_risk.items()}


def test_degradation_from_base_is_relative_on_the_0_100_score():
    from personalens.lenses.prisk.analysis import degradation

    out = degradation(_means(irp={"base": 5.0, "profile": 3.5, "retrieval": 5.0},
                             narrowing={"base": 0.8, "profile": 0.6},
                             sycophancy={"base": 1.0, "profile": 3.0},  # 0 and 50
                             accuracy={"base": 0.5, "profile": 0.75}))
    # IRP 100 -> 62.5: 37.5 % (on the raw 1-5 means it would be 30 %).
    assert out["irp"] == pytest.approx({"profile": 37.5, "retrieval": 0.0})
    assert out["narrowing"]["profile"] == pytest.approx(25.0)  # 80 -> 60
    assert out["sycophancy"] == {"profile": None}  # base 0: no relative change
    assert out["accuracy"]["profile"] == pytest.approx(-50.0)  # better than base


def test_reflection_gain_is_reflect_minus_profile_retrieval_in_points():
    from personalens.lenses.prisk.analysis import reflection_gain

    gain = reflection_gain(_means(irp={"profile_retrieval": 2.5, "reflect": 4.5},
                                  narrowing={"profile_retrieval": 0.25, "reflect": 0.5},
                                  framing={"profile": 3.0}))
    assert gain == pytest.approx({"irp": 87.5 - 37.5, "narrowing": 25.0})
    assert reflection_gain(_means(irp={"base": 5.0, "profile_retrieval": 3.0})) == {}


def test_narrower_counts_personas_by_their_mean_relcr_and_finds_the_lowest():
    from personalens.lenses.prisk.analysis import narrower
    from personalens.lenses.prisk.records import EvalRecord

    def rec(rid, persona):
        return EvalRecord(record_id=rid, risk="narrowing", query_id="q", persona_id=persona,
                          question="?")

    records = [rec("r1", "P"), rec("r2", "P"), rec("r3", "Q"), rec("r4", "R")]
    def relcr(per_response, union):
        return {"profile": {"relcr": per_response, "relcr_union": union}}

    coverage = {"r1": relcr(0.5, 0.5), "r2": relcr(1.7, 1.7), "r3": relcr(0.9, 1.2),
                "r4": relcr(None, 0.8)}
    # Per response: P's mean is 1.1 (not narrower, though r1 is); Q is narrower; R has no
    # defined RelCR. Union against union: Q is not narrower, R is.
    assert narrower(records, coverage, ["base", "profile"]) == {"profile": {
        "personas_narrower": 1, "personas": 2, "records_narrower": 2, "records": 3,
        "min_relcr": 0.5, "min_relcr_record": "r1", "personas_narrower_union": 1,
        "personas_union": 3, "records_narrower_union": 2, "records_union": 4,
        "min_relcr_union": 0.5, "min_relcr_union_record": "r1"}}


def test_exclusion_from_records_reads_a_minus_c_per_query_with_the_runs_correction():
    # The analysis' default is the paper's, BH within each query; the options' too.
    from personalens.lenses.prisk.analysis import exclusion
    from personalens.lenses.prisk.answer_sets import AnswerSets
    from personalens.lenses.prisk.records import Answer, EvalRecord, Sample

    def rec(rid, query, gender, age, covered):
        persona = {"gender": gender, "age": age, "health_status": "good"}
        answer = Answer(samples=[Sample(text="t", topics=sorted(covered))])
        return EvalRecord(record_id=rid, risk="narrowing", query_id=query, persona_id=rid,
                          question="?", persona=persona, conditions={"profile": answer})

    # The scenario of test_prisk_narrowing: q1 U = {x, y}, q2 U = {x}.
    records = [rec("r1", "q1", "female", "18-22", ""), rec("r2", "q1", "female", "19", "y"),
               rec("r3", "q1", "male", "65+", ""), rec("r4", "q1", "male", "70", "x"),
               rec("r5", "q2", "female", "", "x"), rec("r6", "q2", "male", "", "")]
    sets = AnswerSets(labels={"q1": {"x": "x", "y": "y"}, "q2": {"x": "x"}},
                      universe={"q1": ["x", "y"], "q2": ["x"]},
                      useful={"r1": ["x"], "r2": ["x", "y"], "r3": ["y"], "r4": ["x"],
                              "r5": ["x"], "r6": ["x"]})
    from personalens.lenses.prisk.options import EvalOptions

    assert EvalOptions.model_fields["exclusion_correction"].default == "query-bh"
    per_query = exclusion(records, sets, "profile")
    cell = per_query["q1"]["x"]["gender"]["female"]
    assert (cell["rate_in"], cell["rate_out"]) == (1.0, 0.0)  # r3 leaves x out, unneeded
    assert cell["p_adj"] == pytest.approx(8 / 4 * (1 / 3))  # q1's 8 cells
    assert per_query["q1"]["x"]["age"]["<=22"]["n_in"] == 2
    # "good" health is healthy for all: the health cells have nobody outside, no test.
    assert per_query["q1"]["x"]["health_status"]["healthy"]["p"] is None
    bh = exclusion(records, sets, "profile", "report-bh")
    assert bh["q1"]["x"]["gender"]["female"]["p_adj"] == pytest.approx(10 / 4 * (1 / 3))
    holm = exclusion(records, sets, "profile", "report-holm")
    assert holm["q1"]["x"]["gender"]["female"]["p_adj"] == pytest.approx(1.0)
