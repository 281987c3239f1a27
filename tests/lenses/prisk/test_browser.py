"""The report browser shows what happened, as Inspect shows a sample: the inputs (query,
profile, retrieved memories), each message the target saw and wrote, the scorers' inputs and
verdicts; a failed record shows its exchange up to the failure. Built datasets too."""

import json

import pytest

from personalens.lenses.prisk.build import run_build
from personalens.lenses.prisk.conditions import BASE_CONDITIONS, conditions_for
from personalens.lenses.prisk.options import BuildOptions
from personalens.lenses.prisk.records import EvalRecord, load_records
from personalens.lenses.prisk.report_page import browser_entries
from personalens.runs import ItemRecords
from tests.lenses.prisk.test_build import use_double
from tests.lenses.prisk.test_build_failures import GENERATOR, FailingDouble, narrowing_file
from tests.lenses.prisk.test_eval import evaluate
from tests.prisk_double import behaviours, judge_failing_on


def item_records(out, keys) -> list[dict]:
    found = {r["key"]: r for r in map(json.loads, (out / "records.jsonl").open())}
    return [found[k] for k in keys]


def entries_of(tmp_path, out, keys):
    by_id = {r.record_id: r for r in load_records(tmp_path / "data")}
    items = browser_entries(ItemRecords.from_lines(item_records(out, keys), EvalRecord), by_id,
                            conditions_for(list(BASE_CONDITIONS), []))
    return {e.title.split(" · ")[0] + "/" + e.title.split(" · ")[1]: e for e in items.entries}


def test_entries_hold_inputs_messages_and_verdicts(tmp_path, monkeypatch):
    _, _, out = evaluate(tmp_path, monkeypatch, risks=["irp", "sycophancy"])
    entries = entries_of(tmp_path, out, ["i1", "g1"])
    entry = entries["i1/profile_retrieval"]
    fields = dict(entry.fields)
    labels = [label for label, _ in entry.fields]
    assert fields["query"].startswith("{i1} What is an index fund?")
    assert fields["profile shown"].startswith("User profile:")
    assert fields["router decision (the target, on the profile and the query)"] == "retrieval"
    retrieval = dict(entries["i1/retrieval"].fields)
    assert retrieval["router decision (the target, on the query)"] == "retrieval"
    assert not any(label.startswith("router") for label, _ in entries["i1/profile"].fields)
    assert any(label.startswith("memory profession (score") for label in labels)
    # The messages in order: the prompt the target was sent, then its reply.
    assert labels.index("message 1 · system") < labels.index("message 2 · user") < \
        labels.index("message 3 · assistant (response)")
    assert "Relevant past conversations" in fields["message 2 · user"]
    assert "User profile:" in fields["message 2 · user"]
    assert fields["message 3 · assistant (response)"].startswith("[i1/profile_retrieval]")
    assert fields["judge verdict"].startswith("score 2 (attempt 1): i1/profile_retrieval")
    assert "User query: {i1} What is an index fund?" in fields["judge material"]
    assert entry.facets == {"risk": "irp", "condition": "profile_retrieval",
                            "retrieved": "true", "status": "ok"}
    base = dict(entries["i1/base"].fields)
    assert "profile shown" not in base and "User profile:" not in base["message 2 · user"]
    pis = dict(entries["g1/profile"].fields)
    assert pis["PIS (difference from base due to the personal context?)"] == "True: stub"


def test_a_failed_record_shows_its_exchange_up_to_the_failure(tmp_path, monkeypatch):
    roles = judge_failing_on("[i2/profile]", behaviours())
    _, _, out = evaluate(tmp_path, monkeypatch, roles=roles, risks=["irp"])
    [failed] = item_records(out, ["i2"])
    assert failed["status"] == "failed" and failed["error"]["final"] is True
    assert failed["judge_reply"] == "no verdict today" and failed["router"] == "retrieval"
    assert failed["conditions"]["profile"]["verdict"]["score"] is None
    entries = entries_of(tmp_path, out, ["i2"])
    assert set(entries) == {f"i2/{c}" for c in BASE_CONDITIONS}
    fields = dict(entries["i2/profile"].fields)
    assert fields["failure"].startswith("invalid_verdict (final: a rerun would fail the same "
                                        "way): no valid 'irrelevant personalisation' verdict")
    assert fields["the judge's last reply"] == "no verdict today"
    assert fields["message 3 · assistant (response)"].startswith("[i2/profile]")
    assert fields["judge verdict"].startswith("invalid (attempt 3)")
    assert entries["i2/profile"].facets["status"] == "failed"
    # The other conditions were answered and judged before the record failed.
    assert dict(entries["i2/base"].fields)["judge verdict"].startswith("score 5")


@pytest.mark.minilm
def test_the_build_report_shows_each_record_its_decoy_drafts_and_failures(tmp_path,
                                                                          monkeypatch):
    use_double(monkeypatch, FailingDouble())
    out = tmp_path / "b"
    run_build(BuildOptions(out=out, models={"generator": GENERATOR}, risks=("narrowing",),
                           narrowing=narrowing_file(tmp_path), profiles=2,
                           candidates=2, per_risk=4), progress=False)
    html = (out / "report.html").read_text()
    start = html.index('class="qb-data"')
    data = json.loads(html[html.index(">", start) + 1:html.index("</script>", start)])
    words = data["words"]
    entries = [(e[0], {words[e[3][i]]: e[3][i + 1] for i in range(0, len(e[3]), 2)})
               for e in data["entries"]]
    assert len(entries) == 4
    failed = [fields for _, fields in entries if "failure" in fields]
    ok = [fields for _, fields in entries if "failure" not in fields]
    assert len(failed) == 2 and len(ok) == 2
    for fields in failed:
        assert fields["failure"].startswith("invalid_structured_output (final: a rerun would "
                                            "fail the same way): memory/")
        assert fields["failed steps"].endswith("/health_status")
        assert fields["memory: health_status"].startswith("(not written")
        assert fields["memory: age"].startswith("user: Can you help me")
        assert "rejected (judge)" in fields["decoy draft 0 checks"]
        assert "evidence: \"I play chess every single evening.\" (found" in \
            fields["decoy draft 0 checks"]
        assert fields["decoy draft 1 checks"].endswith("passed")
    assert all("love chess" not in fields["persona"] for fields in ok)


def test_plots_with_nothing_scored_say_so_instead_of_drawing_empty_axes():
    from personalens.lenses.prisk.analysis import NARROWING_KEYS
    from personalens.lenses.prisk.metrics import PriskMetrics
    from personalens.lenses.prisk.report_page import report_sections
    from personalens.report import HtmlReport
    empty = {"value": None, "ci_low": None, "ci_high": None, "n": 0}
    metrics = PriskMetrics(
        conditions=list(BASE_CONDITIONS), n_records=0, n_failed=1, failures=[],
        risk_means={"irp": {c: empty for c in BASE_CONDITIONS}},
        narrowing={c: {**dict.fromkeys(NARROWING_KEYS), "n": 0} for c in BASE_CONDITIONS},
        k_sweep={"1": {f"{part}{risk}": None if part == "" else 0 for part in ("", "n_")
                       for risk in ("irp", "accuracy", "narrowing", "sycophancy")}})
    report = HtmlReport("t")
    report_sections(report, metrics)
    html = report.render()
    assert "<img" not in html
    assert "irp: mean per condition with 95 % CI: nothing scored" in html
    assert "Jaccard per condition: nothing scored" in html and "k-sweep: nothing scored" in html
