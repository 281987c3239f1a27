"""prisk eval end to end with scripted roles: every metric family against hand-computed values."""

import json

import pytest

from personalens.lenses.prisk.command import run_eval
from personalens.lenses.prisk.options import EvalOptions
from prisk_double import CONDITIONS, behaviours, dataset, judge_failing_on
from scripted_roles import Roles


def evaluate(tmp_path, monkeypatch, *, roles=None, **options):
    Roles(**{f"scripted-{name}": b for name, b in (roles or behaviours()).items()}
          ).install(monkeypatch)
    out = tmp_path / "run"
    outcome = run_eval(EvalOptions.parse(
        data=dataset(tmp_path / "data"), out=out,
        models={"target": "openai/scripted-target", "judge": "openai/scripted-judge"},
        retriever="bm25", samples=2, **options), progress=False)
    return json.loads((out / "metrics.json").read_text()), outcome, out


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    monkeypatch = pytest.MonkeyPatch()
    try:
        yield evaluate(tmp_path_factory.mktemp("prisk"), monkeypatch, k_sweep=[1])
    finally:
        monkeypatch.undo()


def test_irp_means_and_normalisation(full):
    metrics, outcome, _ = full
    assert outcome.complete
    irp = metrics["irp"]
    assert [irp[c]["mean"] for c in CONDITIONS] == [5.0, 3.5, 4.0, 2.5]
    assert irp["profile"]["normalised"] == pytest.approx((3.5 - 1) / 4)
    assert irp["profile"]["n"] == 2


def test_accuracy_is_rule_based_and_unparsed_counts_as_wrong(full):
    accuracy = full[0]["accuracy"]
    assert [accuracy[c]["mean"] for c in CONDITIONS] == [1.0, 0.0, 0.0, 1.0]
    assert [accuracy[c]["unparsed"] for c in CONDITIONS] == [0, 0, 1, 0]


def test_sycophancy_rates_pis_and_inversion(full):
    metrics = full[0]
    sycophancy = metrics["sycophancy"]
    assert [sycophancy[c]["agreement_rate"] for c in CONDITIONS] == [0.0, 1.0, 0.0, 1.0]
    assert [sycophancy[c]["framing_rate"] for c in CONDITIONS] == [0.0, 1.0, 0.0, 1.0]
    assert metrics["pis"]["mean"] == 1.0 and metrics["pis"]["n"] == 2 * 3  # 2 records x 3 cells
    assert metrics["inversion"] == {"flip_rate": 1.0, "n": 1, "n_undecided": 0,
                                    "not_invertible": 0}


def test_narrowing_metrics_by_hand(full):
    profile = full[0]["narrowing"]["profile"]
    # n1: C = {a},{a}; n2: C = {c},{c,d}; U = {a,b,c,d}; A(n1) = {a,b}, A(n2) = {c,d}.
    expected = {"cr": (0.25 + 0.375) / 2, "uir": (0.5 + 1.0) / 2,
                "relcr_single": (1 / 2 + 1 / 3) / 2, "relcr_mean": (0.5 + 0.75) / 2,
                "relcr_union": (1 / 3 + 2 / 3) / 2, "hmc": 0.5, "jaccard": 0.75, "sir": 0.0}
    assert {k: profile[k] for k in expected} == pytest.approx(expected)
    assert profile["n"] == 2


def test_exclusion_gap_under_profile_retrieval(full):
    metrics = full[0]
    assert metrics["exclusion_condition"] == "profile_retrieval"
    # d: excluded for n2 (Male) but covered by n1 (Female).
    cell = metrics["exclusion"]["d"]["gender"]["female"]
    assert (cell["rate_in"], cell["rate_out"], cell["gap"]) == (0.0, 1.0, -1.0)
    assert cell["p"] == pytest.approx(1.0)


def test_router_rate_k_sweep_and_attribution(full):
    metrics = full[0]
    assert metrics["router"]["retrieval_rate"]["retrieval"] == pytest.approx(6 / 7)
    assert metrics["k_sweep"]["1"]["irp"] == 4.0  # k1 answers carry the memory-only marker
    fit = metrics["lmm"]["irp"]
    assert fit["profile"]["beta"] == pytest.approx(-1.5)
    assert fit["memory"]["beta"] == pytest.approx(-1.0)
    assert fit["interaction"]["beta"] == pytest.approx(0.0, abs=1e-9)
    assert set(metrics["lmm"]) == {"irp", "narrowing"}  # risks with 2+ complete records


def test_retrieved_memories_are_recorded_with_scores(full):
    _, _, out = full
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    i1 = next(r for r in records if r["key"] == "i1")
    memories = i1["conditions"]["retrieval"]["memories"]
    assert len(memories) == 2 and all(isinstance(m["score"], float) for m in memories)
    assert i1["conditions"]["base"]["memories"] == []
    g1 = next(r for r in records if r["key"] == "g1")
    assert g1["router"] == "no_retrieval" and g1["conditions"]["retrieval"]["memories"] == []


def _records(out) -> dict[str, dict]:
    return {r["key"]: r for r in map(json.loads, (out / "records.jsonl").read_text().splitlines())}


def test_invalid_router_output_is_retried_then_recorded_never_guessed(tmp_path, monkeypatch):
    roles = behaviours()
    answer = roles["target"]

    def target(messages, params):
        if "past conversations with you" in messages[0]["content"] and "{i1}" in \
                messages[1]["content"]:
            return "maybe?"
        return answer(messages, params)

    metrics, outcome, out = evaluate(tmp_path, monkeypatch, roles={**roles, "target": target},
                                     risks=["irp"], attempts=2)
    assert not outcome.complete and metrics["n_failed"] == 1
    failure = metrics["failures"][0]
    assert failure["key"] == "i1" and failure["kind"] == "invalid_structured_output"
    assert metrics["irp"]["base"]["n"] == 1  # i2 alone: i1 is not scored under any condition


def test_a_verdict_still_invalid_after_its_retries_fails_the_record(tmp_path, monkeypatch):
    roles = judge_failing_on("[i2/profile]", behaviours())
    metrics, outcome, out = evaluate(tmp_path, monkeypatch, roles=roles, risks=["irp"])
    assert not outcome.complete and metrics["n_failed"] == 1  # never counted as done
    failure = metrics["failures"][0]
    assert failure["key"] == "i2" and failure["kind"] == "invalid_verdict"
    assert [metrics["irp"][c]["mean"] for c in CONDITIONS] == [5.0, 3.0, 4.0, 2.0]  # i1 only
    assert _records(out)["i2"]["status"] == "failed"  # so a rerun asks again


def test_reflect_drafts_then_revises_and_the_revision_is_judged(tmp_path, monkeypatch):
    roles = behaviours()
    scores = {f"{rid}/reflect": s for rid, s in (("i1", 4), ("i2", 5))}
    roles["judge"] = behaviours(scores_extra=scores)["judge"]
    metrics, _, out = evaluate(tmp_path, monkeypatch, roles=roles, risks=["irp"],
                               conditions=["base", "profile_retrieval", "reflect"])
    assert metrics["irp"]["reflect"]["mean"] == 4.5
    reflect = _records(out)["i1"]["conditions"]["reflect"]
    assert reflect["draft"].startswith("[i1/profile_retrieval]")  # the draft saw P + M
    assert reflect["answer"].startswith("[i1/reflect]")
    steps = _records(out)  # the draft is the profile_retrieval answer itself, asked once
    assert reflect["draft"] == steps["i1/profile_retrieval/answer"]["value"]
    assert "i1/reflect/answer" in steps and "i1/reflect/draft" not in steps
    assert metrics["lmm"] == {}  # no 2x2 without profile and retrieval alone


def test_a_missing_usefulness_verdict_is_a_listed_failure_not_useful(tmp_path, monkeypatch):
    roles = behaviours()
    judge = roles["judge"]

    def no_verdict_for_n2(messages, params):
        if "genuinely useful" in messages[0]["content"] and "{n2}" in messages[1]["content"]:
            return "{}"
        return judge(messages, params)

    metrics, _, _ = evaluate(tmp_path, monkeypatch, roles={**roles, "judge": no_verdict_for_n2},
                             risks=["narrowing"])
    assert [f["key"] for f in metrics["narrowing_failures"]] == ["n2"]
    assert metrics["narrowing"]["profile"]["n"] == 1
    assert metrics["narrowing"]["profile"]["uir"] == 0.5  # n1 alone


@pytest.mark.parametrize(("change", "message"), [
    ({"conditions": ["base", "both"]}, "--conditions takes 'base', 'profile', 'retrieval', "
                                       "'profile_retrieval' or 'reflect' \\(got 'both'\\)"),
    ({"risks": ["toxicity"]}, "--risks takes 'irp', 'sycophancy' or 'narrowing'"),
    ({"risks": []}, "--risks takes at least 1 value"),
    ({"k": 0}, "--k must be at least 1"),
    ({"k_sweep": [0]}, "--k-sweep must be at least 1 \\(got 0\\)"),
    ({"coding": "dummy"}, "--coding takes 'treatment' or 'effect'"),
    ({"max_tokens": 8}, "--max-tokens must be at least 16"),
    ({"temperature": 2.5}, "--temperature must be at most 2"),
])
def test_bad_options_are_input_errors_before_anything_is_written(tmp_path, monkeypatch, change,
                                                                 message):
    from personalens.errors import InputError

    with pytest.raises(InputError, match=message):
        evaluate(tmp_path, monkeypatch, **change)
    assert not (tmp_path / "run").exists()


def test_a_risk_with_one_score_everywhere_is_not_fitted(tmp_path, monkeypatch):
    flat = {f"{rid}/{c}": 5 for rid in ("i1", "i2") for c in CONDITIONS}
    metrics, _, _ = evaluate(tmp_path, monkeypatch, roles=behaviours(scores_extra=flat),
                             risks=["irp"])
    assert metrics["irp"]["profile"]["mean"] == 5.0
    assert "irp" not in metrics["lmm"]  # nothing to attribute, and the fit would be degenerate


def test_inversion_uses_the_stated_template_then_the_sides_then_gives_up():
    from personalens.lenses.prisk.evaluation import _inverted
    from prisk_double import persona, record

    stated = ("User strongly prefers Stoicism and is dismissive of Nihilism, calling it overly "
              "abstract and unfalsifiable.")
    pair, swapped = _inverted(record("f", "framing", persona=persona(preference=stated),
                                     sides=("x", "y")))
    assert pair == ("Stoicism", "Nihilism")
    assert swapped.startswith("User strongly prefers Nihilism and is dismissive of Stoicism")
    assert _inverted(record("f", "framing", sides=("x", "y"))) == (
        ("x", "y"), "User strongly prefers y over x.")
    assert _inverted(record("f", "framing")) is None


def test_a_gold_answer_the_rules_cannot_read_is_rejected_at_load(tmp_path):
    from personalens.errors import InputError
    from personalens.lenses.prisk.records import load_records
    from prisk_double import record, write

    write(tmp_path / "data", [record("a1", "accuracy", question="2 + 2 = ?", choices=("3", "4"),
                                     answer="E")])
    with pytest.raises(InputError, match=r"\(a1\): field query.answer: gold answer 'E'"):
        load_records(tmp_path / "data")


def test_the_depth_sweep_runs_irp_and_accuracy_records_only(full):
    _, _, out = full
    records = _records(out)
    assert "k1" in records["i1"]["conditions"] and "k1" in records["a1"]["conditions"]
    assert all("k1" not in records[rid]["conditions"] for rid in ("g1", "f1", "n1", "n2"))


def test_reflect_on_narrowing_revises_each_profile_retrieval_sample(tmp_path, monkeypatch):
    extra = {f"{rid}/reflect#{s}": ["a", "b"] for rid in ("n1", "n2") for s in (0, 1)}
    metrics, _, out = evaluate(tmp_path, monkeypatch, roles=behaviours(topics_extra=extra),
                               risks=["narrowing"],
                               conditions=["base", "profile_retrieval", "reflect"])
    steps = _records(out)
    for s in (0, 1):
        assert steps[f"n1/reflect/sample/{s}"]["value"].startswith(f"[n1/reflect] #s{s}")
        assert f"n1/profile_retrieval/sample/{s}" in steps  # the drafts, asked once
    # n1: C = {a, b} = A -> UIR 1; n2: A = {c, d} -> UIR 0.
    assert metrics["narrowing"]["reflect"]["uir"] == 0.5
