"""PersonaBench's int8 − fp32 table: pairs, paired differences by hand, the report and a real
`--retriever minilm,minilm-int8` run."""

import json

import pytest

from personalens.lenses.personabench.analysis import summarise
from personalens.lenses.personabench.int8_difference import int8_pairs
from personalens.lenses.personabench.metrics import PersonabenchMetrics
from personalens.lenses.personabench.records import (
    AnswerScores,
    PersonabenchRecord,
    RetrievalScores,
)
from personalens.lenses.personabench.report_page import report_sections
from personalens.report import HtmlReport
from personalens.runs import ItemRecords
from tests.cli_runner import personalens
from tests.conftest import EXAMPLE


def test_each_int8_retriever_pairs_with_its_fp32_retriever_when_both_run():
    assert int8_pairs(["bm25", "minilm", "minilm-int8"]) == [("minilm-int8", "minilm")]
    assert int8_pairs(["bm25", "minilm-int8"]) == []  # no fp32 side: no row
    assert int8_pairs(["minilm-int8", "hybrid:bm25+minilm-int8", "hybrid:bm25+minilm"]) == [
        ("hybrid:bm25+minilm-int8", "hybrid:bm25+minilm")]


def _record(retriever, noise, q, recall, ndcg, f1=None, community="c"):
    extra = {} if f1 is None else {"prediction": "x", "end_to_end": AnswerScores(
        precision=f1, recall=f1, f1=f1)}
    return PersonabenchRecord(
        key=f"{community}/{noise}/{retriever}/{q}", community=community, noise=noise,
        retriever=retriever, person="p", q_id=q, question="?", type="Basic information",
        difficulty="easy", category="basic", answer="a", ground_truth={"a": ["s1"]},
        retrieved_ids=["s1"], retrieval=RetrievalScores(recall=recall, ndcg=ndcg), **extra)


# Per question (q0..q3), fp32 then int8. Noise 0.0: recall differences 0, -0.5, +0.5, -1
# (mean -0.25; exact sign-flip p: 6 of the 8 sign patterns of (0.5, 0.5, 1) reach |sum| >= 1,
# so 0.75); nDCG -0.5 on every question (p = 2/16 = 0.125). Noise 0.5: recall +1 on every
# question (p 0.125), nDCG unchanged (p 1). Holm over the 4 rows [0.75, 0.125, 0.125, 1]:
# 0.125 * 4 = 0.5, then 0.125 * 3 -> 0.5 (monotone), 0.75 * 2 -> 1, 1 -> 1. (BH would give
# 0.25 for the two 0.125s.)
FP32 = {"0.0": ([1, 0.5, 0, 1], [1, 1, 1, 1]), "0.5": ([0, 0, 0, 0], [0.2, 0.4, 0.6, 0.8])}
INT8 = {"0.0": ([1, 0, 0.5, 0], [0.5, 0.5, 0.5, 0.5]), "0.5": ([1, 1, 1, 1],
                                                                [0.2, 0.4, 0.6, 0.8])}


def _hand_records():
    records = []
    for retriever, table in (("minilm", FP32), ("minilm-int8", INT8)):
        for noise, (recall, ndcg) in table.items():
            records += [_record(retriever, noise, f"q{i}", r, n)
                        for i, (r, n) in enumerate(zip(recall, ndcg, strict=True))]
    # A question only the int8 side scored is not paired, and bm25 is in no pair.
    records.append(_record("minilm-int8", "0.0", "q9", 0.0, 0.0))
    records.append(_record("bm25", "0.0", "q0", 0.0, 0.0))
    return records


def _summary(records, **options) -> dict:
    """summarise's metrics as metrics.json holds them."""
    return PersonabenchMetrics.model_validate(summarise(records, **options)).to_json()


def test_the_paired_differences_by_hand():
    metrics = _summary(_hand_records(), n_planned=19, answered=False)
    rows = {(r["noise"], r["metric"]): r for r in metrics["int8_vs_fp32"]}
    assert list(rows) == [(0.0, "recall"), (0.0, "ndcg"), (0.5, "recall"), (0.5, "ndcg")]
    recall = rows[(0.0, "recall")]
    assert recall["int8"] == "minilm-int8" and recall["fp32"] == "minilm"
    assert recall["diff"] == pytest.approx(-0.25) and recall["n"] == 4
    assert recall["int8_value"] == pytest.approx(0.375)
    assert recall["fp32_value"] == pytest.approx(0.625)
    assert recall["changed"] == 3 and recall["test"] == "sign_flip"
    assert recall["p"] == pytest.approx(0.75)
    assert rows[(0.0, "ndcg")]["diff"] == pytest.approx(-0.5)
    assert rows[(0.0, "ndcg")]["p"] == pytest.approx(0.125)
    assert rows[(0.0, "ndcg")]["ci_low"] == pytest.approx(-0.5)  # every resample: -0.5
    assert rows[(0.5, "recall")]["diff"] == pytest.approx(1.0)
    assert rows[(0.5, "ndcg")]["changed"] == 0 and rows[(0.5, "ndcg")]["p"] == 1.0
    assert [r["p_holm"] for r in rows.values()] == pytest.approx([1.0, 0.5, 0.5, 1.0])
    # The conditions' own means are the two sides of each row.
    by = {(c["retriever"], c["noise"]): c["retrieval"]["overall"]
          for c in metrics["conditions"]}
    assert by[("minilm", 0.5)]["recall"] == rows[(0.5, "recall")]["fp32_value"]


def test_only_the_questions_both_sides_scored_are_paired():
    """fp32 scored q8 and int8 q9, which the other side did not (recall = nDCG):

                q0   q1   q2   q3   q8   q9
        fp32    1    0.5  0    1    0    -
        int8    1    0    0.5  0    -    1

    Paired on q0-q3: differences 0, -0.5, 0.5, -1: -0.25 (int8 0.375, fp32 0.625), 3 changed,
    sign-flip p 6/8. Over all six with a missing value as 0 the differences gain 0 and +1: a
    difference of 0; each side's own mean (what the conditions table shows) is 0.5 for both."""
    fp32 = [1.0, 0.5, 0.0, 1.0, 0.0]
    int8 = [1.0, 0.0, 0.5, 0.0, 1.0]
    records = [_record("minilm", "0.0", q, r, r) for q, r in zip(
        ("q0", "q1", "q2", "q3", "q8"), fp32, strict=True)]
    records += [_record("minilm-int8", "0.0", q, r, r) for q, r in zip(
        ("q0", "q1", "q2", "q3", "q9"), int8, strict=True)]
    metrics = _summary(records, n_planned=10, answered=False)
    recall = next(r for r in metrics["int8_vs_fp32"] if r["metric"] == "recall")
    assert (recall["n"], recall["changed"]) == (4, 3)
    assert recall["diff"] == pytest.approx(-0.25)
    assert (recall["int8_value"], recall["fp32_value"]) == (pytest.approx(0.375),
                                                            pytest.approx(0.625))
    assert recall["p"] == pytest.approx(0.75)
    own = {c["retriever"]: c["retrieval"]["overall"]["recall"] for c in metrics["conditions"]}
    assert own == {"minilm": pytest.approx(0.5), "minilm-int8": pytest.approx(0.5)}


def test_f1_is_paired_over_the_questions_both_answered():
    records = [_record("minilm", "0.0", "q0", 1, 1, f1=1.0),
               _record("minilm", "0.0", "q1", 1, 1, f1=0.5),
               _record("minilm-int8", "0.0", "q0", 1, 1, f1=0.25),
               _record("minilm-int8", "0.0", "q1", 1, 1, f1=0.5)]
    rows = _summary(records, n_planned=4, answered=True)["int8_vs_fp32"]
    f1 = next(r for r in rows if r["metric"] == "f1")
    assert f1["diff"] == pytest.approx(-0.375) and f1["changed"] == 1 and f1["n"] == 2


def test_questions_pair_within_their_community():
    # Two communities reuse the q_ids (the release numbers questions per community); pairing
    # on q_id alone would mix them up and find no change.
    records = [_record("minilm", "0.0", "q0", 1.0, 1.0, community="a"),
               _record("minilm", "0.0", "q0", 0.0, 0.0, community="b"),
               _record("minilm-int8", "0.0", "q0", 0.0, 0.0, community="a"),
               _record("minilm-int8", "0.0", "q0", 1.0, 1.0, community="b")]
    recall = _summary(records, n_planned=4, answered=False)["int8_vs_fp32"][0]
    assert recall["n"] == 2 and recall["changed"] == 2 and recall["diff"] == 0.0


def test_a_failed_answer_keeps_its_retrieval_in_the_table_but_not_its_f1():
    ok = [_record("minilm", "0.0", "q0", 1.0, 1.0, f1=1.0),
          _record("minilm", "0.0", "q1", 0.0, 0.0, f1=0.0),
          _record("minilm-int8", "0.0", "q0", 1.0, 1.0, f1=0.5)]
    # q1 under int8: retrieved (recall 1), then answering failed for good.
    failed = _record("minilm-int8", "0.0", "q1", 1.0, 1.0)
    lines = [{"key": r.key, "status": "ok", "schema": r.schema_tag(), **r.fields()} for r in ok]
    lines.append({"key": failed.key, "status": "failed", "schema": failed.schema_tag(),
                  "error": {"kind": "model_error", "message": "down", "attempts": 6},
                  **failed.fields()})
    records = ItemRecords.from_lines(lines, PersonabenchRecord)
    rows = {r["metric"]: r for r in _summary(records, n_planned=4,
                                              answered=True)["int8_vs_fp32"]}
    assert rows["recall"]["n"] == 2 and rows["recall"]["diff"] == pytest.approx(0.5)
    assert rows["f1"]["n"] == 1 and rows["f1"]["diff"] == pytest.approx(-0.5)


def test_a_run_without_both_sides_has_no_table():
    records = [r for r in _hand_records() if r.retriever != "minilm"]
    assert "int8_vs_fp32" not in _summary(records, n_planned=10, answered=False)


def test_the_report_and_the_headlines_show_the_table():
    metrics = PersonabenchMetrics.model_validate(
        summarise(_hand_records(), n_planned=19, answered=False))
    report = HtmlReport("pb")
    report_sections(report, metrics)
    page = report.render()
    assert "What int8 costs here" in page and "minilm-int8 − minilm" in page
    low, high = metrics.int8_vs_fp32[0].ci_low, metrics.int8_vs_fp32[0].ci_high
    assert -1 < low < -0.25 < high < 0.5  # a bootstrap CI around the difference
    assert (f"minilm-int8 − minilm @ noise 0: recall -0.250 ({low:.3f} to {high:.3f}, 3/4 "
            "changed); nDCG -0.500 (-0.500 to -0.500, 4/4 changed)") in metrics.headlines()


@pytest.mark.minilm
@pytest.mark.slow
def test_a_real_int8_and_fp32_run_reports_what_int8_costs(tmp_path):
    out = tmp_path / "run"
    result = personalens(
        "personabench", "eval", "--data", str(EXAMPLE), "--noise", "0.0,0.5",
        "--retriever", "minilm,minilm-int8", "--k", "2", "--no-answer", "--out", str(out))
    assert result.returncode == 0, result.stderr
    metrics = json.loads((out / "metrics.json").read_text())
    rows = metrics["int8_vs_fp32"]
    assert [(r["noise"], r["metric"]) for r in rows] == [
        (0.0, "recall"), (0.0, "ndcg"), (0.5, "recall"), (0.5, "ndcg")]
    by = {(c["retriever"], c["noise"]): c["retrieval"]["overall"]
          for c in metrics["conditions"]}
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    for row in rows:
        # Explainable from the records: the two sides' per-question values, paired.
        side = {r["retriever"]: {} for r in records}
        for r in records:
            if float(r["noise"]) == row["noise"]:
                side[r["retriever"]][(r["community"], r["q_id"])] = r["retrieval"][row["metric"]]
        units = sorted(side["minilm"])
        diffs = [side["minilm-int8"][u] - side["minilm"][u] for u in units]
        assert row["diff"] == pytest.approx(sum(diffs) / len(diffs))
        assert row["changed"] == sum(d != 0 for d in diffs) and row["n"] == len(units)
        assert row["fp32_value"] == pytest.approx(by[("minilm", row["noise"])][row["metric"]])
    page = (out / "report.html").read_text()
    assert "What int8 costs here" in page
    assert "minilm-int8 − minilm @ noise 0.5" in result.stdout
