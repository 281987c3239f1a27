"""`personalens demo` end to end with a scripted model in place of the bundled SmolLM2.

The real timing (≤ 3 minutes from an empty cache) is `bench/demo_timing.py`; here the demo's
configuration, its two runs and its closing lines are checked.
"""

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from personalens.cli.app import app
from personalens.cli.demo_command import DEMO_SCHEMA
from personalens.models import DEFAULT_MODEL, ChatModel
from personalens.models.providers.scripted import ScriptedProvider
from personalens.population.release_reader import load_community

HEADLINE = re.compile(r"^  (\w+) @ noise 0\.3: retrieval recall ([\d.]+), nDCG ([\d.]+); "
                      r"answer F1 ([\d.]+)$")


@pytest.fixture
def scripted(monkeypatch):
    """Every model the demo loads answers from the scripted double: JSON for generation
    requests (they carry a response_format), the first excerpt's first line for answers."""
    import personalens.models.settings as settings_module
    from tests.schema_double import SchemaDouble

    schema_double = SchemaDouble()
    loaded = []

    def reply(messages, params):
        if "response_format" in params:
            return schema_double(messages, params)
        excerpt = messages[-1]["content"].split("[1] ", 1)[1]
        return excerpt.splitlines()[0][:80]

    def fake_load_model(spec, **kwargs):
        loaded.append((spec, kwargs["role"]))
        model = ChatModel("scripted", ScriptedProvider(default=reply), role=kwargs["role"])
        model.ledger = kwargs["ledger"]
        return model

    monkeypatch.setattr(settings_module, "load_model", fake_load_model)
    return loaded


def _demo(out: Path):
    result = CliRunner().invoke(app, ["demo", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


@pytest.mark.minilm
@pytest.mark.slow
def test_demo_generates_evaluates_and_explains_its_headline_numbers(tmp_path, scripted):
    out = tmp_path / "demo"
    lines = _demo(out)

    # Both stages used the bundled model's spec: generation, then answering.
    assert scripted == [(DEFAULT_MODEL, "generator"), (DEFAULT_MODEL, "target")]
    population = json.loads((out / "population" / "manifest.json").read_text())
    assert population["config"] | {"models": {"generator": DEFAULT_MODEL}, "people": 3,
                                   "attributes_per_person": 1, "max_list_entries": 1,
                                   "noise": ["0.0", "0.3"],
                                   "profile_schema": str(DEMO_SCHEMA)} == population["config"]
    assert population["usage"]["generator"]["requests"] > 0
    community = load_community(out / "population" / "synthetic_data" / "community_0", ["0.3"])
    generated = [q for qs in community.questions.values() for q in qs]
    # One own question per person, then one relationship question per tie (no multi-hop).
    assert len(community.questions) == 3
    assert [q.type for q in generated].count("Social") == len(generated) - 3 > 0
    assert all(q.question.endswith("relationship to me?") for q in generated
               if q.type == "Social")
    evaluation = json.loads((out / "eval" / "manifest.json").read_text())
    assert evaluation["config"]["retriever"] == ["bm25", "minilm"]
    assert evaluation["config"]["noise"] == ["0.3"] and evaluation["config"]["k"] == 2
    metrics = json.loads((out / "eval" / "metrics.json").read_text())
    assert metrics["complete"]
    assert evaluation["usage"]["target"]["requests"] == metrics["n_planned"]

    # The closing lines: where the reports are (they exist), then the headline numbers as
    # metrics.json holds them, then what they mean.
    first = next(i for i, line in enumerate(lines) if line.startswith("demo finished in "))
    closing = lines[first:]
    assert closing[0].endswith(f"Open the evaluation report: {out / 'eval' / 'report.html'}")
    assert closing[1] == (f"  what was generated: {out / 'population' / 'report.html'}; "
                          f"every figure: {out / 'eval' / 'metrics.json'}")
    for path in (out / "eval" / "report.html", out / "population" / "report.html",
                 out / "eval" / "metrics.json"):
        assert path.is_file()
    assert "</html>" in (out / "eval" / "report.html").read_text()

    headlines = [HEADLINE.match(line) for line in closing[2:4]]
    assert all(headlines), closing
    for match, condition in zip(headlines, metrics["conditions"], strict=True):
        assert match.group(1) == condition["retriever"]
        assert float(match.group(2)) == pytest.approx(
            condition["retrieval"]["overall"]["recall"], abs=5e-4)
        assert float(match.group(3)) == pytest.approx(
            condition["retrieval"]["overall"]["ndcg"], abs=5e-4)
        assert float(match.group(4)) == pytest.approx(
            condition["end_to_end"]["overall"]["f1"], abs=5e-4)
    questions = metrics["conditions"][0]["retrieval"]["overall"]["n"]
    assert questions == metrics["n_planned"] // 2 > 0
    assert closing[4:] == [
        f"  Each number is a mean over the {questions} questions a retriever was asked, "
        "from 0 to 1, higher is better.",
        "  retrieval recall: share of a question's gold sessions among the 2 the retriever "
        "returned; nDCG: the same, also crediting gold sessions ranked first.",
        f"  answer F1: word overlap between {DEFAULT_MODEL}'s answer (from those 2 sessions) "
        "and the gold answer.",
    ]


def test_demo_schema_keeps_profiles_to_one_request_without_multi_hop_questions():
    from personalens.population.profile_schema import load_schema
    from personalens.population.profile_stage import CHUNK

    attributes = load_schema(DEMO_SCHEMA).attributes
    assert len(attributes) <= CHUNK
    assert {a.question_type for a in attributes.values()} == {"Basic information", "Preference"}
    assert any(a.purchasable for a in attributes.values())
    assert not any(a.social_questions for a in attributes.values())
