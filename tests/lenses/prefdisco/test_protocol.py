"""prefdisco conversations: the wire format, the question budget (free and fixed), corrections
and protocol failures, temperatures per role, and which preferences a user's replies reveal."""

import json
import re

import pytest

from personalens.lenses.prefdisco.preference_reveal import revealed
from personalens.lenses.prefdisco.protocol import WireFormat, strip_wrapper
from personalens.lenses.prefdisco.release_protocol import FINAL_PROMPT
from personalens.lenses.prefdisco.scoring import count_questions
from personalens.models.dialogue import FormatBreak
from tests import prefdisco_data as data
from tests.prefdisco_double import (
    ASK,
    Roles,
    checked,
    condition_of,
    evaluate,
    is_correctness_request,
    judge_table,
    passive_user,
    problem_id,
    scripted_target,
    user_by_problem,
)

CONDITIONS = ("baseline", "discovery", "oracle")


def _flat_table(ids, conditions=CONDITIONS, score=3, criteria=("visual", "brevity")) -> dict:
    return {f"{p}/{c}": dict.fromkeys(criteria, score) for p in ids for c in conditions}


def _by_key(records: list[dict]) -> dict[str, dict]:
    return {r["key"]: r for r in records}


# --- The wire format -------------------------------------------------------------------------


@pytest.mark.parametrize("reply, action, text", [
    ("###ACTION###: ask_question\n###RESPONSE###: Visual or text?", "ask", "Visual or text?"),
    ("###ACTION###: 'final_answer'\n###RESPONSE###: It is B.\nANSWER: B", "final",
     "It is B.\nANSWER: B"),
    ('###ACTION###: ["ask_question"]\n###RESPONSE###: Short?', "ask", "Short?"),
    ('###ACTION###: "final_answer" ###RESPONSE###: Done.', "final", "Done."),
    ("Sure.\n### ACTION ###: FINAL_ANSWER\n### RESPONSE ###:\n  Done.  ", "final", "Done."),
])
def test_the_wire_format_accepts_the_release_spellings(reply, action, text):
    parsed = WireFormat().parse(reply)
    assert (parsed.action, parsed.text) == (action, text)


@pytest.mark.parametrize("reply, problem", [
    ("Do you like diagrams?", "no ###ACTION### line"),
    ("###RESPONSE###: Do you like diagrams?", "no ###ACTION### line"),
    ("###ACTION###: clarify\n###RESPONSE###: Diagrams?", "unknown action 'clarify'"),
    ("###ACTION###: ask_question\n###RESPONSE###:   \n", "no ###RESPONSE### text"),
    ("###ACTION###: final_answer", "no ###RESPONSE### text"),
])
def test_the_wire_format_rejects_broken_turns(reply, problem):
    with pytest.raises(FormatBreak, match=problem):
        WireFormat().parse(reply)


def test_the_correction_names_what_is_wanted():
    assert "###ACTION###: ask_question\n" in WireFormat().correction("x", "ask")
    assert "###ACTION###: final_answer\n" in WireFormat().correction("x", "final")
    assert "ask_question or final_answer" in WireFormat().correction("no ###ACTION### line", None)
    assert strip_wrapper("###ACTION###: final_answer\n###RESPONSE###: B.\nANSWER: B") == \
        "B.\nANSWER: B"
    assert strip_wrapper("  plain answer\n") == "plain answer"


def test_the_judge_sees_the_response_without_the_wrapper(tmp_path, monkeypatch):
    inner = scripted_target()

    def wrapping(messages, params):  # wraps even its single-turn answers
        reply = inner(messages, params)
        return reply if "###" in reply else f"###ACTION###: final_answer\n###RESPONSE###: {reply}"

    path = data.write(tmp_path / "mmlu.jsonl", [data.weighted("p1", {"visual": 1.0})])
    roles = Roles(target=wrapping, user=passive_user, judge=judge_table(
        _flat_table(["p1"], criteria=("visual",)))).install(monkeypatch)
    _, records, outcome = evaluate(path, tmp_path / "out", roles)
    assert outcome.complete
    prompts = [messages[-1]["content"] for messages, params in roles.of("judge")
               if not is_correctness_request(params)]
    checked_responses = [checked(messages)[1] for messages, params in roles.of("judge")
                         if is_correctness_request(params)]
    assert len(prompts) == len(checked_responses) == 3
    for condition in CONDITIONS:
        (prompt,) = [p for p in prompts if f"[p1/{condition}]" in p]
        assert f"<<<\n[p1/{condition}] Working it out.\nANSWER: B\n>>>" in prompt
        assert "###ACTION###" not in prompt and "###RESPONSE###" not in prompt
        # The correctness judge reads the same unwrapped answer.
        assert f"[p1/{condition}] Working it out.\nANSWER: B" in checked_responses
    assert _by_key(records)["mmlu/p1/discovery"]["response"] == \
        "[p1/discovery] Working it out.\nANSWER: B"


# --- The question budget ---------------------------------------------------------------------


def test_fixed_questions_asks_exactly_n_and_discovery_at_most_the_budget(tmp_path, monkeypatch):
    path = data.write(tmp_path / "mmlu.jsonl",
                      [data.weighted("p1", {"visual": 0.75, "brevity": 0.25})])
    conditions = ("discovery", "fixed_2")
    roles = Roles(target=scripted_target(questions=1), user=passive_user, judge=judge_table(
        _flat_table(["p1"], conditions))).install(monkeypatch)
    metrics, records, outcome = evaluate(path, tmp_path / "out", roles, conditions=["discovery"],
                                         fixed_questions=[2], turns=5)
    assert outcome.complete and metrics["conditions"] == ["discovery", "fixed_2"]
    records = _by_key(records)
    fixed = records["mmlu/p1/fixed_2"]
    # Two questions, then the final prompt (no answer turn inside the dialogue).
    assert [t["action"] for t in fixed["transcript"]] == ["ask", "ask"]
    assert fixed["questions"] == {"turns": 2, "questions": 4}  # two question marks per turn
    assert records["mmlu/p1/discovery"]["questions"] == {"turns": 1, "questions": 2}
    assert metrics["questions_asked"] == {"discovery": {"turns": 1.0, "questions": 2.0},
                                          "fixed_2": {"turns": 2.0, "questions": 4.0}}
    assert "normalign" not in metrics  # no baseline or oracle to normalise by
    target_systems = {condition_of(m): m[0]["content"] for m, _ in roles.of("target")}
    # The release's prompts: fixed_N names N; discovery names no budget (the loop holds it).
    assert "exactly 2 clarifying question turn(s)" in target_systems["fixed_2"]
    assert "one or two clarifying questions" in target_systems["discovery"]
    assert not re.search(r"\d", target_systems["discovery"])
    assert len(roles.of("user")) == 3  # one reply per question turn: 1 + 2


def _early_answerer(comply_after_correction: bool):
    """Asks once, then answers; when corrected it asks again if `comply_after_correction`."""
    compliant = scripted_target(questions=2)
    final = "###ACTION###: final_answer\n###RESPONSE###: [p1/fixed_2] Early.\nANSWER: B"

    def reply(messages, params):
        corrected = messages[-1]["content"].startswith("That reply cannot be used")
        if corrected and comply_after_correction:
            return ASK
        accepted = [m for m in messages if m["role"] == "assistant"]
        if condition_of(messages) == "fixed_2" and len(accepted) >= 1:
            return final
        return compliant(messages, params)
    return reply


def test_a_target_answering_early_is_corrected(tmp_path, monkeypatch):
    path = data.write(tmp_path / "mmlu.jsonl", [data.weighted("p1", {"visual": 1.0})])
    roles = Roles(target=_early_answerer(True), user=passive_user, judge=judge_table(
        {"p1/fixed_2": {"visual": 3}})).install(monkeypatch)
    metrics, records, outcome = evaluate(path, tmp_path / "out", roles, conditions=[],
                                         fixed_questions=[2])
    assert outcome.complete
    (record,) = [r for r in records if r["key"] == "mmlu/p1/fixed_2"]
    assert record["questions"]["turns"] == 2
    second = record["transcript"][1]
    assert second["action"] == "ask" and second["attempts"] == 2
    assert second["rejected"] == [{"raw": "###ACTION###: final_answer\n###RESPONSE###: "
                                          "[p1/fixed_2] Early.\nANSWER: B",
                                   "problem": "the turn must be a question"}]
    # The retry carries the early answer and the correction, which asks for a question.
    retried = [m for m, _ in roles.of("target")][2]
    assert retried[-2] == {"role": "assistant", "content": second["rejected"][0]["raw"]}
    assert retried[-1]["role"] == "user"
    assert retried[-1]["content"].startswith("That reply cannot be used (the turn must be a "
                                             "question)")
    assert "###ACTION###: ask_question" in retried[-1]["content"]
    # The accepted history holds no rejected turn: the final prompt follows the two accepted
    # questions and their replies only.
    (final,) = [m for m, _ in roles.of("target") if condition_of(m) == "fixed_2"
                and FINAL_PROMPT in m[-1]["content"]]
    assert [m["role"] for m in final] == ["system", "user", "assistant", "user", "assistant",
                                          "user"]
    assert all("Early." not in m["content"] for m in final)


def test_a_target_that_never_complies_fails_the_item_as_protocol(tmp_path, monkeypatch):
    path = data.write(tmp_path / "mmlu.jsonl", [data.weighted("p1", {"visual": 1.0})])
    roles = Roles(target=_early_answerer(False), user=passive_user, judge=judge_table(
        _flat_table(["p1"], ("discovery", "fixed_2"), criteria=("visual",)))
    ).install(monkeypatch)
    metrics, records, outcome = evaluate(path, tmp_path / "out", roles,
                                         conditions=["discovery"], fixed_questions=[2])
    assert not outcome.complete
    (failure,) = outcome.tally.failures
    assert failure.key == "mmlu/p1/fixed_2" and failure.kind == "protocol"
    assert "broke the format 3 times" in failure.message
    assert "the turn must be a question" in failure.message
    # Listed once (as the item), not again as its failed turn step.
    assert outcome.tally.step_failures == []
    failed = _by_key(records)["mmlu/p1/fixed_2"]
    assert failed["status"] == "failed" and failed["error"]["kind"] == "protocol"
    # The failed record says what it was, and keeps the rejected turns.
    assert (failed["instance"], failed["condition"]) == ("mmlu/p1", "fixed_2")
    assert len(failed["rejected"]) == 3
    assert metrics["failures"][0]["kind"] == "protocol" and metrics["n_failed"] == 1
    # A failed fixed_2 leaves the main pairing alone; it is out of fixed_2's own.
    assert metrics["unpaired"] == [] and metrics["n_instances"] == 1
    assert metrics["unpaired_fixed"]["fixed_2"][0]["reasons"] == [
        "fixed_2: no scored record (failed or not run)"]
    # Three tries at turn 1, each after a correction of the one before.
    turn_1 = [m for m, p in roles.of("target") if condition_of(m) == "fixed_2"
              and p["seed"] in (100, 101, 102)]
    assert len(turn_1) == 3
    assert sum(m["content"].startswith("That reply cannot be used") for m in turn_1[2]) == 2


def _endless_asker(answers_when_corrected: bool):
    def reply(messages, params):
        condition, pid = condition_of(messages), problem_id(messages)
        if condition != "discovery":
            return f"[{pid}/{condition}] Working it out.\nANSWER: B"
        if answers_when_corrected and (messages[-1]["content"].startswith("That reply")
                                       or FINAL_PROMPT in messages[-1]["content"]):
            return f"###ACTION###: final_answer\n###RESPONSE###: [{pid}/{condition}] ok\nANSWER: B"
        return ASK
    return reply


@pytest.mark.parametrize("turns", [1, 3])
def test_discovery_asks_at_most_its_budget_then_the_final_prompt_follows(tmp_path, monkeypatch,
                                                                        turns):
    path = data.write(tmp_path / "mmlu.jsonl", [data.weighted("p1", {"visual": 1.0})])
    roles = Roles(target=_endless_asker(True), user=passive_user, judge=judge_table(
        _flat_table(["p1"], criteria=("visual",)))).install(monkeypatch)
    metrics, records, outcome = evaluate(path, tmp_path / "out", roles,
                                         conditions=["discovery"], turns=turns)
    assert outcome.complete
    (record,) = [r for r in records if r["key"] == "mmlu/p1/discovery"]
    assert [t["action"] for t in record["transcript"]] == ["ask"] * turns
    assert record["response"] == "[p1/discovery] ok\nANSWER: B"  # the final prompt's answer
    assert len(roles.of("target")) == turns + 1 and len(roles.of("user")) == turns


@pytest.mark.parametrize("turns", [1, 3])
def test_under_our_protocol_discovery_asks_at_most_its_budget_then_must_answer(
        tmp_path, monkeypatch, turns):
    path = data.write(tmp_path / "mmlu.jsonl", [data.weighted("p1", {"visual": 1.0})])
    roles = Roles(target=_endless_asker(True), user=passive_user, judge=judge_table(
        _flat_table(["p1"], criteria=("visual",)))).install(monkeypatch)
    metrics, records, outcome = evaluate(path, tmp_path / "out", roles,
                                         conditions=["discovery"], turns=turns,
                                         protocol="personalens")
    assert outcome.complete
    (record,) = [r for r in records if r["key"] == "mmlu/p1/discovery"]
    assert record["questions"]["turns"] == turns
    last = record["transcript"][-1]
    assert last["action"] == "final" and last["attempts"] == 2
    assert last["rejected"][0]["problem"] == "the turn must be the final answer"
    assert metrics["questions_asked"]["discovery"]["turns"] == turns
    assert len(roles.of("user")) == turns


def test_discovery_past_its_budget_without_answering_is_a_protocol_failure(tmp_path,
                                                                            monkeypatch):
    path = data.write(tmp_path / "mmlu.jsonl", [data.weighted("p1", {"visual": 1.0})])
    roles = Roles(target=_endless_asker(False), user=passive_user, judge=judge_table(
        _flat_table(["p1"], criteria=("visual",)))).install(monkeypatch)
    _, records, outcome = evaluate(path, tmp_path / "out", roles, conditions=["discovery"],
                                   turns=2, protocol="personalens")
    assert [(f.key, f.kind) for f in outcome.tally.failures] == [
        ("mmlu/p1/discovery", "protocol")]
    assert len(roles.of("user")) == 2


# --- Temperatures ------------------------------------------------------------------------------


@pytest.mark.parametrize("target_temperature", [0.0, 0.9])
def test_each_role_gets_its_own_temperature(tmp_path, monkeypatch, target_temperature):
    path = data.write(tmp_path / "mmlu.jsonl", [data.weighted("p1", {"visual": 1.0})])
    roles = Roles(target=scripted_target(), user=passive_user, judge=judge_table(
        _flat_table(["p1"], (*CONDITIONS, "fixed_1"), criteria=("visual",)))
    ).install(monkeypatch)
    evaluate(path, tmp_path / "out", roles, temperature=target_temperature,
             user_temperature=0.7, judge_temperature=0.3, correctness_temperature=0.6,
             fixed_questions=[1])
    seen = {name: [p["temperature"] for _, p in roles.of(name)]
            for name in ("target", "user", "judge")}
    # baseline, oracle, discovery (a question, its answer turn, the final prompt) and fixed_1
    # (its question, the final prompt)
    assert len(seen["target"]) == 7
    assert seen["target"] == [target_temperature] * 7
    assert seen["user"] == [0.7, 0.7]
    # The rubric judge at --judge-temperature, the correctness judge at its own (4 answers).
    assert sorted(seen["judge"]) == [0.3] * 4 + [0.6] * 4
    assert [p["temperature"] for _, p in roles.of("judge") if is_correctness_request(p)] == \
        [0.6] * 4
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert (manifest["config"]["temperature"], manifest["config"]["user_temperature"],
            manifest["config"]["judge_temperature"],
            manifest["config"]["correctness_temperature"]) == (target_temperature, 0.7, 0.3,
                                                               0.6)


def test_the_default_target_temperature_is_zero(tmp_path, monkeypatch):
    path = data.write(tmp_path / "mmlu.jsonl", [data.weighted("p1", {"visual": 1.0})])
    roles = Roles(target=scripted_target(), user=passive_user, judge=judge_table(
        _flat_table(["p1"], criteria=("visual",)))).install(monkeypatch)
    evaluate(path, tmp_path / "out", roles)
    assert {p["temperature"] for _, p in roles.of("target")} == {0}
    assert {p["temperature"] for _, p in roles.of("judge")} == {0}
    assert {p["temperature"] for _, p in roles.of("user")} == {0.4}


# --- Preferences revealed, questions asked --------------------------------------------------

PREFS = {"visual": {"value": data.VISUAL}, "brevity": {"value": data.BREVITY},
         "empty": {"value": "the"}}


@pytest.mark.parametrize("reply, expected", [
    ("I like visual diagrams and sketches.", ["visual"]),
    ("Visually rich sketches, please.", ["visual"]),  # visua, sketc: 2 of 3 stems
    ("Diagrams, please.", []),  # 1 of 3
    ("Short steps would help, and visual diagrams too.", ["visual", "brevity"]),
    ("I have no particular preference.", []),
    ("", []),
])
def test_which_preferences_a_reply_reveals(reply, expected):
    assert revealed(reply, PREFS) == expected


def test_question_turns_and_question_marks():
    assert count_questions(["Visual or text? Short?", "Anything else", "Tone?"]) == 3
    assert count_questions([]) == 0


def test_discovered_preferences_and_question_turns_against_gain(tmp_path,
                                                                          monkeypatch):
    ids = ["p1", "p2", "p3", "p4"]
    turns = {"p1": 0, "p2": 1, "p3": 2, "p4": 1}
    asks = {"p1": ASK, "p2": "###ACTION###: ask_question\n###RESPONSE###: Visual or text?",
            "p3": "###ACTION###: ask_question\n###RESPONSE###: Visual? Short? Warm?",
            "p4": ASK}
    replies = {"p2": "I like visual diagrams and sketches.",
               "p3": "Visual diagrams and sketches, and short concise steps.",
               "p4": "I have no particular preference."}
    discovery = {"p1": 2, "p2": 3, "p3": 5, "p4": 3}  # baseline 2 everywhere
    table = _flat_table(ids, ("baseline", "oracle"), score=2)
    table.update({f"{p}/discovery": {"visual": s, "brevity": s} for p, s in discovery.items()})
    path = data.write(tmp_path / "mmlu.jsonl",
                      [data.weighted(p, {"visual": 0.5, "brevity": 0.5}) for p in ids])
    roles = Roles(target=scripted_target(questions=turns, ask=asks),
                  user=user_by_problem(replies), judge=judge_table(table)).install(monkeypatch)
    metrics, records, outcome = evaluate(path, tmp_path / "out", roles)
    assert outcome.complete
    records = _by_key(records)
    assert [records[f"mmlu/{p}/discovery"]["revealed"] for p in ids] == [
        [], ["visual"], ["visual", "brevity"], []]
    assert records["mmlu/p3/discovery"]["transcript"][0]["revealed"] == ["visual", "brevity"]
    assert metrics["preferences_discovered"] == {"discovery": pytest.approx(0.75)}  # 0,1,2,0
    assert metrics["preferences_discovered_share"] == {"discovery": pytest.approx(0.375)}
    # Turns 0, 1, 2, 1; question marks 0, 1, 2 x 3, 2.
    assert metrics["questions_asked"] == {"discovery": {"turns": 1.0, "questions": 2.25}}
    # Question TURNS (ask actions) 0, 1, 2, 1 against gains 0, 1, 3, 1, by hand: deviations
    # (-1, 0, 1, 0) and (-1.25, -0.25, 1.75, -0.25); Sxy = 3, Sxx = 2, Syy = 4.75.
    fit = metrics["question_turns_vs_gain"]
    assert fit["n"] == 4
    assert fit["r"] == pytest.approx(3 / 9.5 ** 0.5)  # 0.973; question marks would give 0.982
    assert fit["slope"] == pytest.approx(1.5)  # Sxy / Sxx; question marks: 9.75 / 20.75
    assert fit["intercept"] == pytest.approx(-0.25)
    # t = r sqrt(2 / (1 - r^2)) = 6 on 2 df: p = 1 - 6 / sqrt(38)
    assert fit["p"] == pytest.approx(1 - 6 / 38 ** 0.5)
    assert "questions_vs_gain" not in metrics  # the question-mark correlation is gone
    assert "Pearson r = 0.973" in (tmp_path / "out" / "report.html").read_text()
    assert "slope = 1.5 per question turn" in (tmp_path / "out" / "report.html").read_text()
