"""What prisk asks models to write in a format: a constrained model gets a schema it cannot
break (alternating exchanges, enums, length caps) with a token budget that covers it, an API
model the request it always got, and replies are repaired deterministically before asking
again."""

import asyncio
import json
from pathlib import Path

import pytest

from personalens.lenses.prisk import judging
from personalens.lenses.prisk.memory_builder import (
    ConversationDraft,
    DecoyTarget,
    attribute_conversation,
    build_decoy,
)
from personalens.lenses.prisk.options import BuildOptions
from personalens.lenses.prisk.output_formats import (
    WHITESPACE,
    exchanges_schema,
    reply_budget,
)
from personalens.lenses.prisk.profile_source import (
    AGE_BANDS,
    ProfileDraft,
    draw_profile,
    tight_profile,
    violations,
)
from personalens.models import ChatModel
from personalens.models.providers.scripted import ScriptedProvider
from tests.prisk_build_double import MemorySteps, PriskDouble, double_model
from tests.prisk_double import record

PERSONA = {"source": "synthetic", "education_level": "Bachelor's degree", "age": "25-34 years",
           "gender": "Female", "marital_status": "Single", "profession": "Nurse",
           "economic_status": "Stable", "health_status": "Good", "mental_health_status": "Calm",
           "emotional_state": "Hopeful.", "preference": "The user loves chess."}


def model(reply, *, constrained: bool) -> ChatModel:
    return ChatModel("scripted", ScriptedProvider(default=reply, constrains_output=constrained))


def conversation(reply: str, *, constrained: bool = False, turns: int = 4):
    """(the conversation made, [(messages, params)] of each call)."""
    calls = []

    def answer(messages, params):
        calls.append((messages, params))
        return reply
    chat = model(answer, constrained=constrained)
    made = asyncio.run(attribute_conversation(chat, PERSONA, "health_status", turns=turns,
                                              temperature=0.5, seed=0))
    return made, calls


# --- the deterministic repair -------------------------------------------------------------------

def test_two_turns_of_one_speaker_are_merged_without_asking_again():
    reply = json.dumps({"turns": [
        {"role": "assistant", "content": "Hello! How can I help?"},  # opens: dropped
        {"role": "user", "content": "My knee hurts."},
        {"role": "user", "content": "  Since Monday.  "},
        {"role": "assistant", "content": "   "},  # empty: dropped
        {"role": "assistant", "content": "Rest it and see a doctor."},
        {"role": "user", "content": "Thanks."}]})
    made, calls = conversation(reply)
    assert made["turns"] == [
        {"role": "user", "content": "My knee hurts.\n\nSince Monday."},
        {"role": "assistant", "content": "Rest it and see a doctor."},
        {"role": "user", "content": "Thanks."}]
    assert len(calls) == 1  # repaired, not asked again


def test_a_reply_that_cannot_be_repaired_is_still_rejected():
    with pytest.raises(Exception, match="invalid_structured_output"):
        conversation(json.dumps({"turns": [{"role": "user", "content": "Only me."}]}))


# --- constrained and API models ---------------------------------------------------------------

def test_a_constrained_model_is_asked_for_alternating_exchanges_within_a_budget():
    reply = json.dumps({"exchanges": [{"user": "Q1", "assistant": "A1"},
                                      {"user": "Q2", "assistant": "A2"}]})
    made, calls = conversation(reply, constrained=True, turns=3)
    _, params = calls[0]
    schema = params["response_format"]["json_schema"]["schema"]
    assert schema == exchanges_schema(3)
    exchanges = schema["properties"]["exchanges"]
    assert exchanges["minItems"] == exchanges["maxItems"] == 2
    assert exchanges["items"]["required"] == ["user", "assistant"]
    assert params["max_tokens"] == reply_budget(schema)
    # Flattened back to the release's turns; an odd count drops the last reply.
    assert made["turns"] == [{"role": "user", "content": "Q1"},
                             {"role": "assistant", "content": "A1"},
                             {"role": "user", "content": "Q2"}]


def test_an_api_model_gets_the_request_it_always_got():
    reply = json.dumps({"turns": [{"role": "user", "content": "Q"},
                                  {"role": "assistant", "content": "A"}]})
    _, calls = conversation(reply, turns=2)
    _, params = calls[0]
    assert params["response_format"]["json_schema"]["schema"] == \
        ConversationDraft.model_json_schema()
    assert params["max_tokens"] == 900 and "grammar" not in params


def test_the_budget_covers_the_longest_reply_the_schema_allows():
    # Every string at its cap in 6-byte escapes, every whitespace slot at its longest.
    gap = "\n" + " " * (WHITESPACE - 1)
    longest = "\\u00e9" * 240
    exchange = (f'{{{gap}"user"{gap}:{gap}"{longest}"{gap},{gap}"assistant"{gap}:{gap}'
                f'"{longest}"{gap}}}{gap}')
    reply = (f'{{{gap}"exchanges"{gap}:{gap}[{gap}{exchange},{gap}{exchange}]{gap}{gap}}}'
             f'{gap}')
    assert len(json.loads(reply)["exchanges"]) == 2
    assert len(reply.encode()) <= reply_budget(exchanges_schema(4))
    with pytest.raises(ValueError, match="bounds every string"):
        reply_budget({"type": "string"})


@pytest.mark.parametrize("band", list(AGE_BANDS))
def test_the_profile_schema_admits_only_fitting_category_and_education(band):
    options = tight_profile(band)["anyOf"]
    assert options
    for option in options:
        properties = option["properties"]
        assert properties["age"] == {"const": band}
        for education in properties["education_level"]["enum"]:
            attributes = {"age": band, "education_level": education, "profession": "Worker"}
            assert violations(attributes, properties["profession_category"]["const"]) == []
        assert reply_budget(option) <= reply_budget(tight_profile(band))


def test_a_constrained_generator_drafts_profiles_from_the_tight_schema():
    seen = []

    def reply(messages, params):
        seen.append(params)
        return json.dumps(PriskDouble().profiledraft(messages[-1]["content"], {}))
    chat = model(reply, constrained=True)
    drawn = asyncio.run(draw_profile(chat, 1, "25-34 years", attempts=2, temperature=0.5,
                                     seed=0))
    assert drawn["attributes"]["age"] == "25-34 years"
    assert seen[0]["response_format"]["json_schema"]["schema"] == tight_profile("25-34 years")
    assert seen[0]["response_format"]["json_schema"]["name"] == ProfileDraft.__name__


def test_a_constrained_judge_gets_caps_and_the_allowed_items():
    asked = []

    def reply(messages, params):
        asked.append(params["response_format"]["json_schema"]["schema"])
        return json.dumps({"useful": ["budget party"]})
    chat = model(reply, constrained=True)
    useful = asyncio.run(judging.useful_items(chat, record("n1", "narrowing"),
                                              ["budget party", "picnic"], attempts=1,
                                              temperature=0.0))
    assert useful == ["budget party"]
    items = asked[0]["properties"]["useful"]
    assert items["items"]["enum"] == ["budget party", "picnic"] and items["maxItems"] == 2


# --- the decoy judge must point at the answer ----------------------------------------------------

TARGET = DecoyTarget("irp_0001", "irp", PERSONA, "What is the Maillard reaction?",
                     "What is the Maillard reaction?")
OPTIONS = BuildOptions(out=Path("o"), turns=4)


async def _encode(texts):
    import numpy as np
    return np.array([[0.3, np.sqrt(1 - 0.09)], [1.0, 0.0]])


def test_a_judge_claim_without_the_answers_words_is_not_upheld():
    double = PriskDouble(answers={"Maillard": 1}, unfounded=("Maillard",))
    built = asyncio.run(build_decoy(double_model(double), double_model(double, "judge"),
                                    _encode, MemorySteps(), TARGET, OPTIONS))
    assert built["drafts"] == 1 and built["rejections"] == []


def test_a_judge_claim_quoting_the_conversation_rejects_the_decoy():
    double = PriskDouble(answers={"Maillard": 1})
    steps = MemorySteps()
    built = asyncio.run(build_decoy(double_model(double), double_model(double, "judge"),
                                    _encode, steps, TARGET, OPTIONS))
    assert built["drafts"] == 2 and [r["check"] for r in built["rejections"]] == ["judge"]
    first = steps.done["decoy/irp_0001/0"]["value"]
    assert first["judge"]["evidence_found"] and first["judge"]["answers_query"]
    assert "Sorting by colour" in first["reason"]  # the quoted words are in the reason


def test_a_constrained_judge_scores_with_a_capped_justification():
    from personalens.lenses.prisk.judging import irp_criterion
    from personalens.models.rubric_judge import judge_criterion
    asked = []

    def reply(messages, params):
        asked.append(params)
        return json.dumps({"score": 4, "justification": "A passing mention."})
    for constrained, bound in ((True, {"maxLength": 240}), (False, {})):
        asked.clear()
        verdict = asyncio.run(judge_criterion(model(reply, constrained=constrained),
                                              irp_criterion(record("i1", "irp")), "An answer.",
                                              attempts=3, temperature=0.0))
        assert (verdict.score, verdict.justification, verdict.attempts) == (
            4, "A passing mention.", 1)
        schema = asked[0]["response_format"]["json_schema"]["schema"]
        assert schema["properties"]["score"] == {"type": "integer", "minimum": 1, "maximum": 5}
        # An API judge's request is what it always was: no bound.
        assert schema["properties"]["justification"] == {"type": "string", **bound}
        assert asked[0]["max_tokens"] == 400
