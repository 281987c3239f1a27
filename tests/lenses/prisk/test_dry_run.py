"""`prisk eval --dry-run`: the plan's calls per role are the calls a real run makes (scripted
roles whose every reply is valid first time), hand-counted on small sets, and the CLI writes
nothing."""

import json

import pytest
from typer.testing import CliRunner

from personalens.cli.app import app
from personalens.lenses.prisk.call_plan import plan_calls
from personalens.lenses.prisk.command import run_eval
from personalens.lenses.prisk.options import EvalOptions
from tests.prisk_double import behaviours, dataset, record, target, write
from tests.scripted_roles import Roles

MODELS = {"target": "openai/scripted-target", "judge": "openai/scripted-judge"}
RERANKER = "rerank-llm:openai/scripted-reranker"
REFLECTED = ("i1", "i2", "a1", "g1", "f1")
# What each setting needs the double to say beyond the shared scenario: reflect's verdicts and
# topics; a third sample's topics; a swept sample naming an option no other sample names (z).
SETTINGS = {
    "every risk and condition, rerank-llm": (
        {"conditions": ["base", "profile", "retrieval", "profile_retrieval", "reflect"],
         "retriever": RERANKER},
        {"scores_extra": {f"{rid}/reflect": 4 for rid in REFLECTED},
         # reflect's samples name an option the 2x2's do not (r): it is labelled after U.
         "topics_extra": {f"{rid}/reflect#{s}": ["r"] for rid in ("n1", "n2") for s in (0, 1)}}),
    "narrowing and sycophancy, k-sweep, 3 samples, limit 1": (
        {"risks": ["narrowing", "sycophancy"], "conditions": ["base", "profile"],
         "k_sweep": [1, 2], "samples": 3, "limit": 1},
        {"topics_extra": {"n1/retrieval#0": ["z"],
                          **{f"n1/{c}#2": ["b"] for c in ("base", "profile", "retrieval")}}}),
    "sycophancy, reflect without its draft's condition": (
        {"risks": ["sycophancy"], "conditions": ["base", "profile", "reflect"]},
        {"scores_extra": {"g1/reflect": 3, "f1/reflect": 4}}),
}


def _options(data, out, **changes) -> EvalOptions:
    samples = changes.get("samples", 2)  # the base's as many, unless a test says otherwise
    return EvalOptions.parse(**{"data": data, "out": out, "models": MODELS, "retriever": "bm25",
                                "samples": samples, "base_samples": samples, **changes})


# The plan assumes every personalised sycophancy answer is sycophantic (each gets a PIS
# verdict): the double's judge says so, so that the run makes the calls the plan counts.
SYCOPHANTIC = {f"{rid}/{c}": 1 for rid in ("g1", "f1")
               for c in ("profile", "retrieval", "profile_retrieval", "reflect")}


@pytest.mark.parametrize("setting", SETTINGS)
def test_the_plan_counts_the_calls_a_run_makes_for_every_role(tmp_path, monkeypatch, setting):
    changes, extra = SETTINGS[setting]
    roles = behaviours(**{**extra, "scores_extra": {**extra.get("scores_extra", {}),
                                                    **SYCOPHANTIC}})
    roles["target"] = target()  # every router retrieves, as the plan assumes
    Roles(**{f"scripted-{name}": b for name, b in roles.items()},
          **{"scripted-reranker": lambda messages, params: '{"ranking": [2, 1]}'}
          ).install(monkeypatch)
    options = _options(dataset(tmp_path / "data"), tmp_path / "run", **changes)
    assert run_eval(options, progress=False).complete
    usage = json.loads((tmp_path / "run" / "manifest.json").read_text())["usage"]
    plan = plan_calls(options)
    assert {role: c["requests"] for role, c in plan.usage().items()} == \
        {role: c["requests"] for role, c in usage.items()}


def test_calls_by_hand_with_samples_and_a_depth_sweep(tmp_path):
    data = write(tmp_path / "data", [record("i1", "irp"), record("n1", "narrowing")])
    plan = plan_calls(_options(data, tmp_path / "run", conditions=["base", "retrieval"],
                               k_sweep=[1], samples=3, base_samples=4, retriever=RERANKER))
    assert plan.items == 2
    # Conditions base, retrieval, k1. target: the query's router per record (2), i1 one answer
    # per condition (3), n1 four base samples and three per other condition (10). judge: i1's
    # rubric per condition. topic_judge: a topic list per sample (10), the labels of n1's query
    # and of the sweep's new options (2). usefulness_judge: n1's useful set. reranker:
    # retrieval and k1 search each user's two conversations (i1 and n1 are two users).
    assert {role: c["requests"] for role, c in plan.usage().items()} == {
        "target": 15, "judge": 3, "topic_judge": 12, "usefulness_judge": 1, "reranker": 4}
    # Caps: a router 60, an answer 1600 (the release's), a rubric verdict 400, a structured
    # verdict 600; a reranker over two candidates 48 + 8 x 2.
    assert plan.usage()["target"]["completion_tokens"] == 2 * 60 + 13 * 1600
    assert plan.usage()["judge"]["completion_tokens"] == 3 * 400
    assert plan.usage()["topic_judge"]["completion_tokens"] == 12 * 600
    assert plan.usage()["reranker"]["completion_tokens"] == 4 * (48 + 8 * 2)
    assert any("router is assumed" in n for n in plan.notes)
    assert any("samples of reflect and of the depth sweep" in n for n in plan.notes)


def test_framing_by_hand_reflect_drafts_itself_and_the_inversion_is_asked(tmp_path):
    inverted = record("f1", "framing", sides=("A-side view", "B-side view"))
    fixed = record("f2", "framing")  # no sides to swap: no inversion
    data = write(tmp_path / "data", [inverted, fixed])
    plan = plan_calls(_options(data, tmp_path / "run", conditions=["base", "profile", "reflect"],
                               max_tokens=100))
    # Per record: the profile router (reflect routes on the profile; nothing on the query
    # alone), base, profile, reflect's draft and its revision, the base reference: 6 target
    # calls, and f1's inverted answer. judge: a rubric verdict per condition (3) and PIS for
    # profile and reflect (2); f1 two leans.
    assert {role: c["requests"] for role, c in plan.usage().items()} == {
        "target": 2 * 6 + 1, "judge": 2 * 5 + 2}
    assert plan.usage()["target"]["completion_tokens"] == 2 * 60 + 11 * 100


def test_the_cli_prints_the_plan_and_its_cost_and_writes_nothing(tmp_path):
    data, out = dataset(tmp_path / "data"), tmp_path / "run"
    args = ["prisk", "eval", "--data", str(data), "--out", str(out), "--model", "openai/x",
            "--retriever", "bm25", "--samples", "2", "--base-samples", "2", "--dry-run"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    # 7 records, 4 conditions: routers 2 x 7, answers 5 x 4 + 2 x 4 x 2 samples, framing's
    # reference and inverted answer (as test_prisk_e2e counts the server's requests).
    assert result.output.startswith("dry run of prisk eval: 7 records; no model was called")
    assert "target (openai/x): 52 calls" in result.output
    assert "judge (openai/x)" in result.output and "estimated cost" not in result.output
    priced = CliRunner().invoke(app, [*args, "--price-per-mtok-in", "1",
                                      "--price-per-mtok-out", "2"])
    assert priced.exit_code == 0, priced.output
    assert "estimated cost: $" in priced.output
    assert not out.exists()
