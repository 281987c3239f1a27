"""One leak check for noise sessions, shared by the generator and `personabench validate`."""

import asyncio
import datetime as dt
import json

import pytest

import personalens.population.community as community_module
from personalens.lenses.personabench.validation import queried_by_person, validate
from personalens.population.community import GenerationConfig, generate_community
from personalens.population.personas import read_personas
from personalens.population.profile_schema import load_schema
from personalens.population.release_reader import load_community
from personalens.population.reveal_check import leaked_items, queried_items
from tests.cli_runner import personalens
from tests.schema_double import schema_model


def _chat(*lines: str) -> dict:
    return {"target_name": "Ravi Rao", "conversation": [
        {"role": "Deepa Rao" if i % 2 == 0 else "Ravi Rao", "content": line}
        for i, line in enumerate(lines)]}


def test_the_shared_check_flags_a_queried_relationship_and_nothing_unrelated():
    questions = [("Social", ["sibling"]), ("Social", ["Chess", "Hiking"]),
                 ("Basic information", ["Pune"]), ("Subjective", ["Gloomy"])]
    queried = queried_items(questions, names=["Deepa Rao", "Ravi Rao"])
    assert queried == ["Chess", "Hiking", "Pune", "sibling"]
    assert leaked_items(_chat("Did you see the forecast?", "She is my sibling."),
                        queried) == ["sibling"]
    assert leaked_items(_chat("Did you see the forecast?", "Rain again, apparently."),
                        queried) == []
    # Whole words only; speakers, partner and timestamps are not what anyone wrote.
    assert leaked_items(_chat("My siblings say hi."), queried) == []
    assert leaked_items({"time": "2024/Oct/14/11:11 AM", **_chat("Hello Pune!")},
                        queried) == ["Pune"]


class _Steps:
    """The part of the step store `generate_community` uses, kept in memory."""

    async def get(self, key, compute):
        return json.loads(json.dumps(await compute(), sort_keys=True))


def test_the_generator_guards_exactly_what_validate_checks(tmp_path, monkeypatch):
    guarded: dict[str, set[tuple[str, ...]]] = {}
    original = community_module.write_session

    async def spy(model, plan, person, personas, queried, style=None):
        if plan.reveal is None:
            guarded.setdefault(person, set()).add(tuple(queried))
        return await original(model, plan, person, personas, queried, style)

    monkeypatch.setattr(community_module, "write_session", spy)
    window = (dt.datetime(2024, 1, 1), dt.datetime(2024, 12, 31))
    config = GenerationConfig(people=4, communities=1, seed=3, noises=["0.0", "0.5"],
                              attributes_per_person=4, update_probability=0.005, window=window,
                              news=[], personas=read_personas(None), schema=load_schema(None))
    asyncio.run(generate_community(0, config, schema_model(), _Steps(), tmp_path))
    community = load_community(tmp_path / "synthetic_data/community_0", ["0.0", "0.5"])
    for noise in ("0.0", "0.5"):
        validated = queried_by_person(community, noise)
        assert {p: {tuple(items)} for p, items in validated.items()} == guarded
    relationships = [(p, q.answer) for p, qs in community.questions.items() for q in qs
                     if q.question.endswith("relationship to me?")]
    assert relationships and all(answer in validated[p] for p, answer in relationships)
    assert asyncio.run(validate(tmp_path / "synthetic_data")).errors == []


@pytest.mark.bundled_model
@pytest.mark.slow
@pytest.mark.timeout(1800)  # about 5 minutes on 2 idle cores; much longer on a busy machine
def test_data_generated_by_the_bundled_model_passes_validate(tmp_path):
    """Issue 9: this exact command wrote a noise chat where Deepa tells her sibling "She is my
    sibling", which validate rejected; the generator's leak check did not cover relationships."""
    out = tmp_path / "gen"
    generated = personalens(
        "generate", "--people", "3", "--communities", "1", "--model", "local/smollm2-135m",
        "--seed", "11", "--attributes-per-person", "3", "--max-list-entries", "2",
        "--noise", "0.0,0.5", "--out", out, timeout=1700)
    assert generated.returncode == 0, generated.stderr
    result = personalens("personabench", "validate", out / "synthetic_data" / "community_0")
    assert result.returncode == 0, result.stdout + result.stderr
    sessions = json.loads((out / "ground_truth/community_0/sessions.json").read_text())
    assert any(s["noise"] for s in sessions)
