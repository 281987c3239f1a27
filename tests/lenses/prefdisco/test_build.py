"""`prefdisco build`: personas (population or generated), the attribute library, records in the
release format that `prefdisco eval` loads, resume, bad input."""

import asyncio
import json

import numpy as np
import pytest

from personalens.errors import InputError
from personalens.lenses.prefdisco import build as build_module
from personalens.lenses.prefdisco.attribute_library import AttributeLibrary, Candidate
from personalens.lenses.prefdisco.build import load_problems, run_build
from personalens.lenses.prefdisco.options import BuildOptions
from personalens.lenses.prefdisco.persona_source import (
    big_five_entry,
    generate_persona,
    personas_from_population,
)
from personalens.lenses.prefdisco.preference_builder import weights
from personalens.lenses.prefdisco.release_format import load
from personalens.models import ModelSettings
from personalens.population.generate import run_generate
from tests.cli_runner import personalens
from tests.population.test_generate import _options
from tests.prefdisco_build_double import BuildDouble, build_model

GENERATOR = ModelSettings(spec="openai/gen", base_url="http://127.0.0.1:9")


@pytest.fixture
def generator(monkeypatch):
    import personalens.models.settings as settings_module
    double = BuildDouble()
    models = []

    def load_model(spec, **kwargs):
        model = build_model(double)
        model.ledger = kwargs["ledger"]
        models.append(model)
        return model

    monkeypatch.setattr(settings_module, "load_model", load_model)
    return double, models


def test_shipped_problems_cover_five_domains_with_gold_answers():
    problems = load_problems([], None)
    assert len(problems) == 30
    assert {p.task for p in problems} == {"math", "logic", "commonsense", "social", "health"}
    assert all(p.problem.gold for p in problems)
    assert {p.problem.kind for p in problems} == {"choice", "numeric"}
    assert len(load_problems([], 2)) == 10  # --limit is per task
    # --tasks keeps the tasks named (8 math and 6 social problems shipped), then --limit each.
    assert [p.task for p in load_problems([], None, ["social", "math"])].count("math") == 8
    assert len(load_problems([], None, ["social", "math"])) == 14
    assert [p.task for p in load_problems([], 1, ["health"])] == ["health"]
    with pytest.raises(InputError, match="--tasks names 'maths'.*commonsense, health, logic"):
        load_problems([], None, ["math", "maths"])


@pytest.mark.minilm
def test_build_writes_release_format_that_eval_loads(tmp_path, generator):
    double, _ = generator
    outcome = run_build(BuildOptions(out=tmp_path / "b", models={"generator": GENERATOR},
                                     limit=1, personas=3, per_problem=2), progress=False)
    assert outcome.complete
    metrics = outcome.metrics
    assert metrics.instances == 10 and metrics.personas == 3
    assert metrics.tasks == {t: 2 for t in ("math", "logic", "commonsense", "social", "health")}
    dataset = load(tmp_path / "b" / "data")
    assert dataset.invalid == [] and len(dataset.instances) == 10
    first = dataset.instances[0]
    lines = (tmp_path / "b" / "data" / f"{first.task}.jsonl").read_text().splitlines()
    assert json.loads(lines[0]) == {"type": "metadata", "dataset": first.task,
                                    "source": "personalens prefdisco build",
                                    "generator": "openai/gen"}
    # The selection gives importances 0.2, 0.4, 0.6: weights 1/6, 2/6, 3/6, summing to 1.
    assert [c.weight for c in first.criteria] == pytest.approx([1 / 6, 2 / 6, 3 / 6])
    assert not first.renormalised
    assert [lv["score"] for lv in first.criteria[0].levels] == [1, 3, 5]
    persona = first.persona
    assert persona["big_five"]["openness"] == {"score": 4, "description":
                                               "seeks out new ideas, theory and unusual angles"}
    # "Visual aid use" is near "Visual aids": embedding match, then the model said "same".
    library = json.loads((tmp_path / "b" / "attribute_library.json").read_text())
    assert [e["name"] for e in library] == ["Visual aids", "Step granularity",
                                            "Technical vocabulary", "Worked examples"]
    assert metrics.library_merges == 1 and double.dedup_questions == 1


@pytest.mark.minilm
def test_rerun_replays_every_artefact_and_writes_identical_files(tmp_path, generator):
    _, models = generator
    options = BuildOptions(out=tmp_path / "b", models={"generator": GENERATOR}, limit=1,
                           personas=2, per_problem=1)
    run_build(options, progress=False)
    first = {p.name: p.read_bytes() for p in (tmp_path / "b" / "data").iterdir()}
    calls = len(models[-1].provider.calls)
    run_build(options, progress=False)
    assert calls > 0 and len(models[-1].provider.calls) == 0
    assert {p.name: p.read_bytes() for p in (tmp_path / "b" / "data").iterdir()} == first


def test_personas_come_from_a_generated_population(tmp_path, double):
    assert run_generate(_options(tmp_path / "pop")).complete
    personas = personas_from_population(tmp_path / "pop")
    truth = json.loads((tmp_path / "pop/ground_truth/community_0/profiles.json").read_text())
    assert [p["name"] for p in personas] == list(truth)
    first = personas[0]
    attributes = truth[first["name"]]["attributes"]
    # The template carries the PrefDisco fields; the double writes 30, clamped to the 1-5 scale.
    assert {"openness", "neuroticism", "domain_expertise", "education_level"} <= set(attributes)
    assert first["big_five"]["openness"]["score"] == 5
    assert first["domain_expertise"] == attributes["domain_expertise"]
    assert first["education"]["level"] == attributes["education_level"]


def test_big_five_bands():
    assert big_five_entry("neuroticism", 2)["description"] == "calm under pressure"
    assert big_five_entry("neuroticism", 3)["description"] == "sometimes anxious"
    assert big_five_entry("neuroticism", 4)["description"] == "worries easily; reassurance matters"


def test_weights_normalise_importances():
    assert weights([0.5, 0.25, 0.25]) == [0.5, 0.25, 0.25]
    assert weights([2.0, 2.0]) == [0.5, 0.5]
    assert weights([0.0, 0.0, 0.0]) == [1 / 3] * 3


def test_persona_rejection_sampling_redraws_near_duplicates():
    double = BuildDouble()
    model = build_model(double)
    # The accepted persona, then draws 1-2 embedding like it (cosine 1), draw 3 orthogonal.
    vectors = iter([np.array([[1.0, 0.0]]), np.array([[1.0, 0.0]]),
                    np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])])

    async def encode(texts):
        return next(vectors)

    drawn = asyncio.run(generate_persona(model, 1, ["accepted"], encode, draws=5))
    assert drawn["rejected_drafts"] == 2 and drawn["max_similarity"] == 0.0


def test_library_merges_only_when_the_model_confirms():
    class Steps:
        def __init__(self):
            self.done = {}

        async def get(self, key, compute):
            if key not in self.done:
                self.done[key] = {"value": await compute()}
            return self.done[key]["value"]

    async def encode(texts):
        return np.array([[1.0, 0.0] if "diagram" in t else [0.0, 1.0] for t in texts])

    async def scenario(same: bool):
        library = AttributeLibrary(build_model(BuildDouble(same=same)), encode, Steps())
        a = await library.resolve(Candidate(name="Visual aids", description="diagram use",
                                            type="personal"))
        b = await library.resolve(Candidate(name="Pictures", description="diagram use",
                                            type="personal"))
        c = await library.resolve(Candidate(name="Pace", description="speed",
                                            type="personal"))
        return a, b, c, list(library.entries)

    assert asyncio.run(scenario(True)) == ("Visual aids", "Visual aids", "Pace",
                                           ["Visual aids", "Pace"])
    assert asyncio.run(scenario(False)) == ("Visual aids", "Pictures", "Pace",
                                            ["Visual aids", "Pictures", "Pace"])


def test_bad_problem_file_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "mmlu.jsonl"
    bad.write_text(json.dumps({"prompt_text": "no known shape"}) + "\n")
    result = personalens("prefdisco", "build", "--problems", bad, "--out", tmp_path / "b",
                         "--model", "scripted")
    assert result.returncode == 2
    assert "mmlu.jsonl line 1" in result.stderr and "no known source" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "b").exists()


def test_source_rows_keep_their_own_ids_and_task(tmp_path):
    rows = tmp_path / "commonsenseqa.jsonl"
    rows.write_text(json.dumps({"id": "q-17", "question": "Milk goes where?",
                                "choices": {"label": ["A", "B"], "text": ["fridge", "oven"]},
                                "answerKey": "A"}) + "\n")
    [problem] = build_module.load_problems([rows], None)
    assert (problem.task, problem.problem_id, problem.problem.gold) == ("commonsenseqa", "q-17",
                                                                        "A")
