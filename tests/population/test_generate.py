"""The generation pipeline with a deterministic schema-aware double (no real model)."""

import asyncio
import json
from pathlib import Path

import pytest

from personalens.lenses.personabench.command import EvalOptions, run_eval
from personalens.lenses.personabench.validation import validate
from personalens.models import ModelSettings
from personalens.population.generate import GenerateOptions, run_generate
from personalens.population.release_reader import load_community
from tests.cli_runner import personalens
from tests.fault_server import FaultServer


def _options(out, max_attempts=6, **overrides):
    model = ModelSettings(spec="scripted", use_cache=False, max_attempts=max_attempts)
    base = dict(people=4, communities=1, models={"generator": model}, out=out, seed=3,
                noise=["0.0", "0.5"], attributes_per_person=4)
    return GenerateOptions(**{**base, **overrides})


def test_generated_data_is_valid_and_evaluates_unchanged(tmp_path, double):
    outcome = run_generate(_options(tmp_path / "gen"))
    assert outcome.complete, outcome.metrics.failures
    data = tmp_path / "gen" / "synthetic_data"
    report = asyncio.run(validate(data))
    assert report.errors == []
    community = load_community(data / "community_0", ["0.0", "0.5"])
    assert len(community.questions) == 4
    for person in community.questions:
        personal = community.levels["0.0"].sessions[person]
        at_half = community.levels["0.5"].sessions[person]
        # Noise ratio 0.5: as many noise sessions as personal ones, personal text identical.
        assert len(at_half) == 2 * len(personal)
        assert {s.text for s in personal} <= {s.text for s in at_half}
    metrics = run_eval(EvalOptions(data=data, out=tmp_path / "eval", noise=["0.0", "0.5"],
                                   retriever=["bm25"], k=5, no_answer=True)).metrics.to_json()
    assert metrics["complete"] and metrics["n_planned"] > 0
    types = {q.type for qs in community.questions.values() for q in qs}
    assert types <= {"Basic information", "Preference", "Social"} and "Social" in types
    truth = json.loads((tmp_path / "gen/ground_truth/community_0/profiles.json").read_text())
    assert set(truth) == set(community.questions)
    manifest = json.loads((tmp_path / "gen" / "manifest.json").read_text())
    assert manifest["usage"]["generator"]["requests"] > 0
    assert manifest["estimated_cost_usd"] == 0.0


def test_social_questions_include_relationships_and_multi_hop(tmp_path, double):
    run_generate(_options(tmp_path / "gen"))
    community = load_community(tmp_path / "gen/synthetic_data/community_0", ["0.0"])
    social = [q.question for qs in community.questions.values() for q in qs if q.type == "Social"]
    assert any(q.endswith("relationship to me?") for q in social)
    assert any(" my " in q for q in social if not q.endswith("relationship to me?"))


def test_rerun_replays_every_step_without_calling_the_model(tmp_path, double):
    run_generate(_options(tmp_path / "gen"))
    first = {p.relative_to(tmp_path): p.read_bytes()
             for p in (tmp_path / "gen" / "synthetic_data").rglob("*.json")}
    calls = len(double["model"].provider.calls)
    run_generate(_options(tmp_path / "gen"))
    assert len(double["model"].provider.calls) == 0 and calls > 0
    again = {p.relative_to(tmp_path): p.read_bytes()
             for p in (tmp_path / "gen" / "synthetic_data").rglob("*.json")}
    assert again == first


def test_a_failing_step_is_recorded_and_retried_on_rerun(tmp_path, double):
    double["fail_when"] = "Complete the profile"
    outcome = run_generate(_options(tmp_path / "gen", max_attempts=1))
    assert not outcome.complete and not outcome.metrics.complete
    assert outcome.metrics.failures[0].kind == "invalid_structured_output"
    assert "failed" in outcome.metrics.communities["community_0"]
    double["fail_when"] = None
    assert run_generate(_options(tmp_path / "gen")).complete


def test_information_updates_put_the_old_value_first(tmp_path, double):
    run_generate(_options(tmp_path / "gen", update_probability=1.0, attributes_per_person=40))
    community = load_community(tmp_path / "gen/synthetic_data/community_0", ["0.0"])
    updated = [q for qs in community.questions.values() for q in qs if q.outdated_value]
    assert updated, "every list preference should carry an update at probability 1"
    sessions = json.loads((tmp_path / "gen/ground_truth/community_0/sessions.json").read_text())
    for q in updated[:3]:
        old = next(s for s in sessions if s["reveals"] and s["reveals"]["value"]
                   == q.outdated_value[0] and s["reveals"]["attribute"])
        assert old["revealed_by"] in ("model", "fallback")


def test_news_items_in_the_window_ground_some_conversations(tmp_path, double):
    news = tmp_path / "news.jsonl"
    news.write_text("\n".join(json.dumps({"date": f"2024-0{m}-01", "title": f"Headline {m}",
                                          "text": "Something happened."}) for m in range(1, 10)))
    run_generate(_options(tmp_path / "gen", news=news, people=5))
    prompts = [p for p in double["model"].provider.default.prompts if "Headline" in p]
    assert prompts, "about 20% of conversations should cite a news item"
    sessions = json.loads((tmp_path / "gen/ground_truth/community_0/sessions.json").read_text())
    assert any(s["news"] for s in sessions)


def test_fallback_line_reveals_what_the_model_left_out(tmp_path, double, monkeypatch):
    from tests.schema_double import SchemaDouble

    original = SchemaDouble.__call__

    def hide(self, messages, params):
        messages = [*messages[:-1], {**messages[-1], "content": messages[-1]["content"]
                                     .replace(" -> ", " -> hidden ")}]
        return original(self, messages, params)

    monkeypatch.setattr(SchemaDouble, "__call__", hide)
    stats = run_generate(_options(tmp_path / "gen")).metrics.communities["community_0"]
    assert stats["revealed_by_fallback"] == stats["personal_sessions"] > 0
    assert asyncio.run(validate(tmp_path / "gen" / "synthetic_data")).errors == []


def test_sessions_the_model_cannot_write_are_written_by_code_and_counted(tmp_path, double):
    double["fail_when"] = "Write a chat between"
    outcome = run_generate(_options(tmp_path / "gen"))
    stats = outcome.metrics.communities["community_0"]
    assert outcome.complete and stats["written_by_code"] > 0
    assert asyncio.run(validate(tmp_path / "gen" / "synthetic_data")).errors == []
    sessions = json.loads((tmp_path / "gen/ground_truth/community_0/sessions.json").read_text())
    assert sum(bool(s["model_failed"]) for s in sessions) == stats["written_by_code"]


def test_custom_schema_replaces_or_extends_the_template(tmp_path):
    from personalens.population.profile_schema import load_schema

    extra = tmp_path / "extra.yaml"
    extra.write_text(
        "meta_categories:\n  psychographic:\n    attributes:\n      favorite_teas:\n"
        "        type: list\n        description: Teas the person likes.\n"
        "        question_type: Preference\n        questions: ['Which teas do I like?']\n")
    extended = load_schema(extra)
    assert "favorite_teas" in extended.attributes and "age" in extended.attributes
    extra.write_text("replace_default: true\n" + extra.read_text())
    assert list(load_schema(extra).attributes) == ["favorite_teas"]


def test_release_timestamps_do_not_depend_on_the_locale():
    import datetime as dt

    from personalens.population.release_writer import release_time

    assert release_time(dt.datetime(2024, 10, 14, 11, 11)) == "2024/Oct/14/11:11 AM"
    assert release_time(dt.datetime(2024, 1, 5, 0, 7)) == "2024/Jan/05/12:07 AM"
    assert release_time(dt.datetime(2024, 6, 18, 14, 40)) == "2024/Jun/18/02:40 PM"


def test_release_timestamps_parse_back():
    import datetime as dt

    from personalens.population.release_writer import parse_release_time, release_time

    for when in (dt.datetime(2024, 1, 5, 0, 7), dt.datetime(2024, 6, 18, 12, 40),
                 dt.datetime(2024, 12, 31, 23, 59)):
        assert parse_release_time(release_time(when)) == when
    for bad in ("2024-06-18", "2024/Jun/18/13:40 PM", "2024/June/18/01:40 PM"):
        with pytest.raises(ValueError):
            parse_release_time(bad)


def test_one_attribute_model_per_set_of_attributes_with_its_bounds():
    from personalens.population.profile_schema import load_schema
    from personalens.population.profile_stage import attribute_model

    every = list(load_schema(None).attributes.values())
    specs = [s for s in every if s.type == "list"][:1] + [s for s in every if s.type != "list"][:2]
    model = attribute_model(specs, 2)
    # Made once (a class per request was kept alive by pydantic and cost a schema build).
    assert attribute_model(list(specs), 2) is model
    assert attribute_model(specs, 3) is not model and attribute_model(specs[:2], 2) is not model
    assert model.model_json_schema()["properties"][specs[0].key]["maxItems"] == 2
    assert attribute_model(specs, 3).model_json_schema()["properties"][specs[0].key][
        "maxItems"] == 3


# --- generate: a rerun replays every step ----------------------------------------------------


def _schema_reply(body: dict) -> str:
    from tests.schema_double import SchemaDouble

    return SchemaDouble()(body["messages"], {"response_format": body["response_format"]})


def _data_files(root: Path) -> dict:
    return {p.relative_to(root): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and p.parts[len(root.parts)] in ("synthetic_data", "ground_truth")}


def test_a_generate_rerun_makes_no_model_calls(tmp_path):
    out = tmp_path / "gen"
    args = ("generate", "--people", "3", "--attributes-per-person", "2", "--max-list-entries",
            "2", "--noise", "0.0,0.5", "--model", "openai/m", "--no-cache", "--seed", "5",
            "--out", out)
    with FaultServer(_schema_reply) as server:
        result = personalens(*args, "--base-url", server.base_url)
        assert result.returncode == 0, result.stderr
        first_requests = len(server.requests)
        first_usage = json.loads((out / "manifest.json").read_text())["usage"]["generator"]
        first_files = _data_files(out)
        result = personalens(*args, "--base-url", server.base_url)
        assert result.returncode == 0, result.stderr
        assert len(server.requests) == first_requests > 20  # the rerun asked nothing
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["sessions"] == 2
    usage = manifest["usage"]["generator"]
    assert first_usage["requests"] == first_requests  # every request is counted ...
    assert usage["requests"] == first_usage["requests"]  # ... and the rerun made none
    assert usage["cached_requests"] == first_usage["cached_requests"] == 0
    assert first_files and _data_files(out) == first_files
