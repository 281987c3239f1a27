"""The offline default, strictly: `prisk build` and then `prisk eval` with the bundled SmolLM2 as
every role (generator, judge, target, router) and the bundled MiniLM, through the real CLI, with
no failed item and every record's structure checked (both routers, finish reasons, scores,
topics, the counts that summarise them). A 135M model's replies are poor, but under constrained
decoding they are never malformed: a failure here is a bug, not the model."""

import json

import pytest

from tests.cli_runner import personalens
from tests.prisk_double import record, write


def items(out) -> dict:
    """Item records (a failed one included) by key; steps have a '/' after the item's key."""
    records = [json.loads(line) for line in (out / "records.jsonl").open()]
    return {r["key"]: r for r in records}


@pytest.mark.bundled_model
@pytest.mark.minilm
@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_the_smallest_build_and_eval_finish_with_no_failure(tmp_path):
    build = tmp_path / "build"
    result = personalens("prisk", "build", "--out", build, "--profiles", "1", "--candidates",
                         "2", "--per-risk", "1", "--turns", "2", timeout=600,
                         env={"PERSONALENS_CACHE_DIR": str(tmp_path / "cache")})
    assert result.returncode == 0, result.stderr
    metrics = json.loads((build / "metrics.json").read_text())
    assert metrics["records"] == 5 and metrics["failures"] == []
    assert f"data: {build / 'data'} (5 records" in result.stdout
    built = items(build)
    for n in ("irp", "accuracy", "agreement", "framing", "narrowing"):
        assert built[f"record/{n}_0001"]["status"] == "ok"
    # The benchmark row was asked in a conversational rewrite, or kept (and counted) when no
    # draft kept its numbers; either way the record says which, with its drafts.
    rewrite = built["record/accuracy_0001"]["rewrite"]
    assert rewrite["kept"] in ("rewrite", "original") and 1 <= len(rewrite["drafts"]) <= 3
    assert metrics["rewrites"] + metrics["rewrites_kept_original"] == 1

    out = tmp_path / "eval"
    result = personalens("prisk", "eval", "--data", build / "data", "--out", out,
                         "--samples", "1", "--base-samples", "1", "--max-tokens", "48", timeout=600,
                         env={"PERSONALENS_CACHE_DIR": str(tmp_path / "cache")})
    assert result.returncode == 0, result.stderr
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["n_failed"] == 0 and metrics["failures"] == []
    assert metrics["n_records"] == 5 and metrics["narrowing_failures"] == []
    evaluated = items(out)
    cut = dict.fromkeys(("base", "profile", "retrieval", "profile_retrieval"), 0)
    for key in ("irp_0001", "accuracy_0001", "agreement_0001", "framing_0001",
                "narrowing_0001"):
        item = evaluated[key]
        assert item["status"] == "ok"
        # Two routers: on the query, and on the profile with the query.
        assert item["router"] in ("retrieval", "no_retrieval")
        assert item["router_profile"] in ("retrieval", "no_retrieval")
        assert set(item["conditions"]) == set(cut)
        for name, answer in item["conditions"].items():
            replies = answer["samples"] if key.startswith("narrowing") else [answer]
            assert all(r["finish_reason"] in ("stop", "length") and (r.get("text") or
                                                                  r.get("answer"))
                       for r in replies)
            cut[name] += sum(r["finish_reason"] == "length" for r in replies)
            if key.startswith("accuracy"):  # scored 0/1, or left out only when cut off
                assert answer.get("score") in (0.0, 1.0) or answer["finish_reason"] == "length"
            elif not key.startswith("narrowing"):
                assert 1 <= answer["score"] <= 5 and answer["verdict"]["justification"]
            else:
                assert all(isinstance(r["topics"], list) for r in replies)
        if key.startswith("framing"):
            assert item["reference"] and item["inversion"]["invertible"] in (True, False)
    assert metrics["truncated"] == cut  # every cut-off reply is counted, per condition
    # The built agreement post is YTA (scored as agreement) or NTA (apart, as agreement_nta);
    # the pooled sycophancy score is on the judge's 1-5.
    assert set(metrics["risk_means"]) >= {"irp", "framing", "sycophancy"}
    assert {"agreement", "agreement_nta"} & set(metrics["risk_means"])
    assert all(1 <= v["value"] <= 5 for v in metrics["risk_means"]["sycophancy"].values())
    assert set(metrics["narrowing_records"]) == {"narrowing_0001"}
    assert metrics["inversion"]["n_pairs"] + metrics["inversion"]["not_invertible"] == 1
    assert "Risk × condition" in (out / "report.html").read_text()


@pytest.mark.bundled_model
@pytest.mark.minilm
@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_eval_runs_on_the_bundled_models(tmp_path):
    data = write(tmp_path / "data", [record("i1", "irp"),
                                     record("a1", "accuracy", question="2 + 2 = ?",
                                            choices=("3", "4", "5", "6"), answer="B")])
    out = tmp_path / "run"
    result = personalens("prisk", "eval", "--data", data, "--out", out, "--risks", "irp",
                         "--max-tokens", "64", timeout=1100,
                         env={"PERSONALENS_CACHE_DIR": str(tmp_path / "cache")})
    # Constrained decoding: the router's JSON and the verdicts are always well-formed, so every
    # record is scored (a failed one was accepted here before).
    assert result.returncode == 0, result.stderr
    records = items(out)
    for key in ("i1", "a1"):
        item = records[key]
        assert item["status"] == "ok", item.get("error")
        assert item["router"] in ("retrieval", "no_retrieval")
        assert item["router_profile"] in ("retrieval", "no_retrieval")
        assert set(item["conditions"]) == {"base", "profile", "retrieval", "profile_retrieval"}
        for answer in item["conditions"].values():
            assert answer["finish_reason"] in ("stop", "length")
            if key == "a1" and answer["finish_reason"] == "length":
                assert answer.get("score") is None  # counted apart
            else:
                assert 0 <= answer["score"] <= 5
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["models"]["target"] == "local/smollm2-135m"
    assert manifest["config"]["retriever"] == "minilm"
    assert "Risk × condition" in (out / "report.html").read_text()
