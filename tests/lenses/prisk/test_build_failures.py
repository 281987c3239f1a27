"""`prisk build` when steps fail: a failed step fails only the records that depend on it, a
failure a rerun cannot change says so (final), the metrics count what the steps hold, and the
report and headlines say what happened."""

import json

import pytest

from personalens.lenses.prisk.build import run_build
from personalens.lenses.prisk.options import BuildOptions
from personalens.lenses.prisk.records import load_records
from personalens.models import ModelSettings
from tests.lenses.prisk.test_build import use_double
from tests.prisk_build_double import PriskDouble

GENERATOR = ModelSettings(spec="scripted", use_cache=False)
CHESS = "I play chess every single evening."  # a decoy line the judge quotes as the answer


class FailingDouble(PriskDouble):
    """With `chess`, profile 1 (who loves chess; profile 2 salsa dancing) has a health
    conversation that is never valid, and its decoys' first drafts are judged to answer (quoting
    a line they hold). Templates of the domains in `broken_templates`
    and the candidates in `broken_candidates` are never valid either."""

    def __init__(self, *, chess=True, broken_templates=(), broken_candidates=(), **kw):
        super().__init__(**kw)
        self.chess = chess
        self.broken_templates = set(broken_templates)
        self.broken_candidates = set(broken_candidates)

    def profiledraft(self, prompt, schema):
        number = int(prompt.split("profile number ")[1].split(".")[0])
        if number in self.broken_candidates:
            return {"age": "nonsense"}
        return super().profiledraft(prompt, schema)

    def conversationdraft(self, prompt, schema):
        chess = self.chess and "love chess" in prompt
        if "will ask later" not in prompt and chess and "where their health status" in prompt:
            return {"turns": [{"role": "user", "content": "Only one turn."}]}
        if "will ask later" in prompt and chess and "rejected" not in prompt:
            return {"turns": [{"role": "user", "content": "Any hobby ideas?"},
                              {"role": "assistant", "content": CHESS}]}
        return super().conversationdraft(prompt, schema)

    def decoyverdict(self, prompt, schema):
        if self.chess and CHESS in prompt:
            return {"answers_query": True, "reason": "it names the answer", "evidence": CHESS}
        return super().decoyverdict(prompt, schema)

    def irptemplate(self, prompt, schema):
        # Template i is asked for the i-th shipped domain (cooking, finance, ...).
        if any(f"domain '{domain}'" in prompt for domain in self.broken_templates):
            return {"domain": "x"}
        return super().irptemplate(prompt, schema)


def narrowing_file(tmp_path):
    queries = tmp_path / "narrowing.csv"
    queries.write_text("query\n\"What are good ways to learn to cook at home?\"\n"
                       "\"What are good ways to keep houseplants alive?\"\n")
    return queries


def records(out) -> dict:
    return {r["key"]: r for r in map(json.loads, (out / "records.jsonl").open())}


@pytest.mark.minilm
def test_a_failed_memory_fails_only_the_records_of_its_persona(tmp_path, monkeypatch):
    use_double(monkeypatch, FailingDouble())
    out = tmp_path / "b"
    outcome = run_build(BuildOptions(
        out=out, models={"generator": GENERATOR}, risks=("narrowing",),
        narrowing=narrowing_file(tmp_path), profiles=2, candidates=2,
        per_risk=4), progress=False)
    written = load_records(out / "data")
    # Every (query, profile) pair: two records per persona; the chess persona's two fail.
    assert len(written) == 2 and all("salsa" in r.persona["preference"] for r in written)
    failed = [r for r in records(out).values() if r["status"] == "failed"
              and r["key"].startswith("record/")]
    assert len(failed) == 2
    for record in failed:
        assert record["error"]["kind"] == "invalid_structured_output"
        assert record["error"]["final"] is True  # a scripted (deterministic) model
        assert record["failed_steps"][0].endswith("/health_status")
        assert record["memory"]["health_status"].startswith("failed")
        assert record["memory"]["age"] == "written" and record["decoy_outcome"] == "written"
    metrics = outcome.metrics
    assert metrics.records == 2 and len(metrics.failures) == 2
    # The failed records' decoys were rejected once each, then passed: counted from the steps.
    assert metrics.decoy_rejections == {"judge": 2, "similarity": 0}
    assert metrics.decoy_regenerations == 2 and metrics.decoys == 4


@pytest.mark.minilm
def test_a_failed_profile_candidate_leaves_the_others_to_choose_from(tmp_path, monkeypatch):
    use_double(monkeypatch, FailingDouble(chess=False, broken_candidates={3}))
    out = tmp_path / "b"
    outcome = run_build(BuildOptions(out=out, models={"generator": GENERATOR}, risks=("agreement",),
                                     profiles=2, candidates=3, per_risk=2), progress=False)
    assert outcome.metrics.records == 2 and outcome.metrics.profiles == 2
    assert outcome.metrics.profiles_dropped == 1
    [failure] = outcome.tally.step_failures
    assert failure.key == "profile/candidate/2" and failure.final is True
    assert not outcome.complete


@pytest.mark.minilm
def test_failed_generated_templates_fail_only_the_irp_records(tmp_path, monkeypatch):
    use_double(monkeypatch, FailingDouble(
        chess=False, broken_templates={"finance"},
        template_queries=("How many bones are there in an adult human body?",)))
    out = tmp_path / "b"
    outcome = run_build(BuildOptions(out=out, models={"generator": GENERATOR},
                                     risks=("irp", "agreement"), profiles=2, candidates=2,
                                     per_risk=2,
                                     generate_templates=2), progress=False)
    metrics = outcome.metrics
    assert metrics.by_risk == {"agreement": 2} and metrics.planned_by_risk == \
        {"irp": 2, "agreement": 2}
    failed = {f.key: f for f in outcome.tally.failures}
    assert set(failed) == {"record/irp_0001", "record/irp_0002"}
    assert all(f.kind == "invalid_structured_output" and f.final for f in failed.values())
    assert records(out)["record/irp_0001"]["failed_steps"] == ["template/1"]


@pytest.mark.minilm
def test_a_decoy_that_never_passes_is_a_final_failure(tmp_path, monkeypatch):
    use_double(monkeypatch, PriskDouble(answers={"houseplants": None}))
    outcome = run_build(BuildOptions(
        out=tmp_path / "b", models={"generator": GENERATOR}, risks=("narrowing",),
        narrowing=narrowing_file(tmp_path), profiles=1, candidates=1,
        per_risk=2, decoy_attempts=1), progress=False)
    [failure] = outcome.tally.failures
    # Every draft and check is a recorded step: a rerun replays them and fails the same way.
    assert failure.kind == "decoy_rejected" and failure.final is True


@pytest.mark.minilm
def test_nothing_built_says_so_and_the_report_explains_the_missing_mean(tmp_path, monkeypatch):
    use_double(monkeypatch, PriskDouble(answers={"cook": None, "houseplants": None}))
    out = tmp_path / "b"
    outcome = run_build(BuildOptions(
        out=out, models={"generator": GENERATOR}, risks=("narrowing",),
        narrowing=narrowing_file(tmp_path), profiles=1, candidates=1,
        per_risk=2, decoy_attempts=0), progress=False)
    assert outcome.metrics.records == 0 and not (out / "data").exists()
    lines = outcome.metrics.headlines()
    assert lines[0].startswith("data: none written") and str(out / "data") not in lines[0]
    report = (out / "report.html").read_text()
    assert "mean cosine None" not in report and "no mean cosine: no decoy passed" in report


@pytest.mark.minilm
def test_the_report_gives_the_mean_cosine_of_passed_decoys(tmp_path, monkeypatch):
    use_double(monkeypatch, PriskDouble())
    out = tmp_path / "b"
    outcome = run_build(BuildOptions(
        out=out, models={"generator": GENERATOR}, risks=("narrowing",),
        narrowing=narrowing_file(tmp_path), profiles=1, candidates=1,
        per_risk=2), progress=False)
    mean = outcome.metrics.decoy_similarity_mean
    assert mean is not None and f"mean cosine to their query {mean:.3f}" in \
        (out / "report.html").read_text()
    assert outcome.metrics.headlines()[0].startswith(f"data: {out / 'data'} (2 records")
