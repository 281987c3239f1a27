"""The dataset validator on generated data and on hand-broken copies of it."""

import asyncio
import json
import shutil

import pytest

import personalens.models.settings as settings_module
from personalens.errors import InputError
from personalens.lenses.personabench.validation import validate
from personalens.models import ModelSettings
from personalens.population.generate import GenerateOptions, run_generate
from tests.cli_runner import personalens
from tests.schema_double import schema_model


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("gen")
    original = settings_module.load_model

    def fake(spec, **kwargs):
        model = schema_model()
        model.ledger = kwargs["ledger"]
        return model

    settings_module.load_model = fake
    try:
        run_generate(GenerateOptions(people=3, communities=1, seed=1, out=out,
                                     models={"generator": ModelSettings(spec="scripted",
                                                                        use_cache=False)},
                                     noise=["0.0", "0.5"], attributes_per_person=3))
    finally:
        settings_module.load_model = original
    return out / "synthetic_data"


@pytest.fixture
def copy(generated, tmp_path):
    target = tmp_path / "data"
    shutil.copytree(generated, target)
    return target / "community_0"


def _edit(path, change):
    value = json.loads(path.read_text())
    change(value)
    path.write_text(json.dumps(value))


def _first_truth(community):
    truth = json.loads((community / "eval_info/qa_gt_context_all_noise_0.5.json").read_text())
    return truth


def test_generated_data_passes(generated):
    report = asyncio.run(validate(generated))
    assert report.errors == [] and len(report.summary) == 3


def test_cli_validate_exit_codes(generated, copy):
    ok = personalens("personabench", "validate", generated)
    assert ok.returncode == 0 and "0 error(s)" in ok.stdout
    _edit(copy / "graph_json/social_graph.json", lambda g: g["edges"].pop())
    broken = personalens("personabench", "validate", copy.parent)
    assert broken.returncode == 1 and "has no reverse edge" in broken.stderr


def test_unresolvable_ground_truth_id(copy):
    _edit(copy / "eval_info/qa_gt_context_all_noise_0.5.json",
          lambda t: t[0]["segment_id"].__setitem__(next(iter(t[0]["segment_id"])), ["nope"]))
    with pytest.raises(InputError, match="segment id nope is not among"):
        asyncio.run(validate(copy.parent))


def test_a_personal_session_that_no_longer_reveals_its_item(copy):
    truth = _first_truth(copy)
    item, ids = next(iter(truth[0]["segment_id"].items()))
    person_files = sorted((copy / "private_data/noise_0.5").glob("*_all.json"))
    for path in person_files:
        text = path.read_text()
        for word in item.split():
            text = text.replace(word, "redacted")
        path.write_text(text)
    errors = asyncio.run(validate(copy.parent)).errors
    assert any(f"item {item!r} is not revealed by its session(s) {ids[0]}" in e for e in errors)


def test_a_noise_session_that_leaks_a_queried_item(copy):
    truth = _first_truth(copy)
    used = {i for q in truth for ids in q["segment_id"].values() for i in ids}
    item = next(i for q in truth for i in q["segment_id"] if len(i) >= 4 and " " not in i)
    path = copy / "private_data/noise_0.5/user_ai_interaction_data_all.json"
    sessions = json.loads(path.read_text())
    person = sessions[0]
    noise = next((s for s in person["Data"] if s["segment_id"] not in used), None)
    if noise is None:
        pytest.skip("the first person has no noise chat session in this seed")
    noise["user_ai_interaction"][0]["content"] += f" Also, {item}."
    path.write_text(json.dumps(sessions))
    errors = asyncio.run(validate(copy.parent)).errors
    assert any(f"noise session {noise['segment_id']} reveals queried item(s) {item!r}" in e
               for e in errors)


def test_generate_rejects_bad_options_before_writing(tmp_path):
    out = tmp_path / "gen"
    result = personalens("generate", "--people", "2", "--out", out)
    assert result.returncode == 2 and "--people must be at least 3" in result.stderr
    result = personalens("generate", "--news", tmp_path / "missing.jsonl", "--out", out)
    assert result.returncode == 2 and "news file not found" in result.stderr
    schema = tmp_path / "schema.yaml"
    schema.write_text("meta_categories:\n  cosmic:\n    attributes: {}\n")
    result = personalens("generate", "--schema", schema, "--out", out)
    assert result.returncode == 2 and "unknown meta-category 'cosmic'" in result.stderr
    assert not out.exists()


def test_a_noise_session_that_names_a_queried_relationship(copy):
    truth = _first_truth(copy)
    used = {i for q in truth for ids in q["segment_id"].values() for i in ids}
    # The first person's relationship to a neighbour (their q_ids are below 1000).
    relation = next(item for q in truth if int(q["q_id"]) < 1000
                    and q["question"].endswith("relationship to me?") for item in q["segment_id"])
    path = copy / "private_data/noise_0.5/user_ai_interaction_data_all.json"
    sessions = json.loads(path.read_text())
    noise = next((s for s in sessions[0]["Data"] if s["segment_id"] not in used), None)
    if noise is None:
        pytest.skip("the first person has no noise chat session in this seed")
    noise["user_ai_interaction"][0]["content"] += f" She is my {relation}."
    path.write_text(json.dumps(sessions))
    errors = asyncio.run(validate(copy.parent)).errors
    assert any(f"noise session {noise['segment_id']} reveals queried item(s) {relation!r}" in e
               for e in errors)
