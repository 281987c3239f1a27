"""The interaction protocols (issue 22, item 1): what the target sees in each condition under
`--protocol release` (the default) and `--protocol personalens`, the final prompt after the
dialogue whose answer is scored, and what the simulated user sees."""

import pytest

from personalens.lenses.prefdisco.release_protocol import FINAL_PROMPT
from tests import prefdisco_data as data
from tests.prefdisco_double import (
    Roles,
    checked,
    condition_of,
    evaluate,
    is_correctness_request,
    judge_table,
    passive_user,
)

OPENING = "Could you help me with this task?\n\n{p1} 2 + 2 = ?\n\nA. 3\nB. 4\nC. 5\nD. 6"
ANSWER_LINE = "End your answer with a final line of the form `ANSWER: <the letter of the " \
              "correct option>`."
ASK = "###ACTION###: ask_question\n###RESPONSE###: Do you like visual diagrams? And short steps?"
CONDITIONS = ("baseline", "discovery", "oracle")


def _target(in_dialogue: str, final: str):
    """Baseline and oracle answer B; discovery asks once, answers `in_dialogue` in the
    dialogue and `final` to the final prompt."""
    def reply(messages, params):
        condition = condition_of(messages)
        if condition in ("baseline", "oracle"):
            return f"[p1/{condition}] Four.\nANSWER: B"
        if FINAL_PROMPT in messages[-1]["content"]:
            return f"[p1/discovery] Visual sketch: 2 + 2 = 4.\nANSWER: {final}"
        if sum(m["role"] == "assistant" for m in messages) == 0:
            return ASK
        return f"###ACTION###: final_answer\n###RESPONSE###: [p1/discovery] Done.\n" \
               f"ANSWER: {in_dialogue}"
    return reply


def _run(tmp_path, monkeypatch, name, target, turns=1, **options):
    path = data.write(tmp_path / "mmlu.jsonl",
                      [data.weighted("p1", {"visual": 0.75, "brevity": 0.25})])
    table = {f"p1/{c}": {"visual": 3, "brevity": 3} for c in CONDITIONS}
    roles = Roles(target=target, user=passive_user, judge=judge_table(table))
    roles.install(monkeypatch)
    metrics, records, outcome = evaluate(path, tmp_path / name, roles, turns=turns, **options)
    assert outcome.complete
    return metrics, {r["key"]: r for r in records if "instance" in r}, roles


def _calls(roles, condition):
    return [messages for messages, _ in roles.of("target") if condition_of(messages) == condition]


def test_the_release_protocol_is_the_default_and_shows_each_condition_its_messages(
        tmp_path, monkeypatch):
    # Two turns: the target asks, then answers inside the dialogue before the budget is spent.
    metrics, records, roles = _run(tmp_path, monkeypatch, "release", _target("B", "B"), turns=2)
    assert (metrics["protocol"], metrics["correctness"]) == ("release", "judge")
    # Baseline: no system prompt, the task alone (a judge reads the answer: no ANSWER line).
    (baseline,) = _calls(roles, "baseline")
    assert baseline == [{"role": "user", "content": OPENING}]
    # Oracle: each preference with its value, what it is about, importance and justification.
    (oracle,) = _calls(roles, "oracle")
    assert [m["role"] for m in oracle] == ["system", "user"] and oracle[1] == baseline[0]
    system = oracle[0]["content"]
    assert ("- visual: visual diagrams and sketches\n  about: how the user likes visual\n"
            "  importance: 0.5\n  why: visual matters\n"
            "- brevity: short concise steps\n  about: how the user likes brevity\n"
            "  importance: 0.5\n  why: brevity matters") in system
    assert "- name: p1\n- occupation: nurse" in system
    assert "evaluated on" in system and "main goal" in system
    # Discovery: the dialogue, then the final prompt as a separate user message.
    ask, answer, final = _calls(roles, "discovery")
    assert [m["role"] for m in ask] == ["system", "user"]
    assert ask[1] == {"role": "user", "content": OPENING}  # no ANSWER line before asking
    assert "###ACTION###: ask_question or final_answer" in ask[0]["content"]
    assert final[:-1] == [*answer, {"role": "assistant", "content": records[
        "mmlu/p1/discovery"]["transcript"][-1]["raw"]}]
    assert final[-1] == {"role": "user", "content": FINAL_PROMPT}
    assert [m["role"] for m in final] == ["system", "user", "assistant", "user", "assistant",
                                          "user"]
    assert final[3] == {"role": "user", "content": "I like visual diagrams and sketches."}


def test_the_final_prompts_answer_is_scored_not_the_one_in_the_dialogue(tmp_path, monkeypatch):
    # In the dialogue the target answers A (wrong); to the final prompt it answers B (right).
    metrics, records, roles = _run(tmp_path, monkeypatch, "release", _target("A", "B"), turns=2)
    record = records["mmlu/p1/discovery"]
    assert record["transcript"][-1]["text"] == "[p1/discovery] Done.\nANSWER: A"
    assert record["response"] == "[p1/discovery] Visual sketch: 2 + 2 = 4.\nANSWER: B"
    assert record["correctness"]["correct"] is True and record["correctness"]["judged"]
    assert record["finish_reason"] == "stop"
    assert metrics["accuracy"]["discovery"]["mean"] == 1.0
    judged = [m[-1]["content"] for m, p in roles.of("judge") if "[p1/discovery]" in
              m[-1]["content"] and not is_correctness_request(p)]
    assert len(judged) == 2 and all("Visual sketch" in j and "Done." not in j for j in judged)
    (checked_response,) = [checked(m)[1] for m, p in roles.of("judge")
                           if is_correctness_request(p) and "[p1/discovery]" in m[-1]["content"]]
    assert checked_response == record["response"]


def test_once_the_budget_is_spent_the_final_prompt_follows_at_once(tmp_path, monkeypatch):
    # One question allowed: after its reply the release sends the final prompt; no answer
    # turn is asked for inside the dialogue.
    _, records, roles = _run(tmp_path, monkeypatch, "release", _target("A", "B"))
    ask, final = _calls(roles, "discovery")
    # The final prompt follows the user's last reply in the same message (no two user
    # messages in a row, which some chat templates refuse).
    assert final == [*ask, {"role": "assistant", "content": ASK},
                     {"role": "user", "content": "I like visual diagrams and sketches.\n\n"
                                                 f"{FINAL_PROMPT}"}]
    record = records["mmlu/p1/discovery"]
    assert [t["action"] for t in record["transcript"]] == ["ask"]
    assert record["questions"]["turns"] == 1
    assert record["response"] == "[p1/discovery] Visual sketch: 2 + 2 = 4.\nANSWER: B"


def test_the_personalens_protocol_scores_the_answer_in_the_dialogue(tmp_path, monkeypatch):
    """--protocol personalens keeps today's prompts and scores the in-dialogue answer."""
    metrics, records, roles = _run(tmp_path, monkeypatch, "ours", _target("A", "B"),
                                   protocol="personalens")
    assert metrics["protocol"] == "personalens"
    record = records["mmlu/p1/discovery"]
    assert record["response"] == "[p1/discovery] Done.\nANSWER: A"
    assert record["correctness"]["correct"] is False
    assert metrics["accuracy"]["discovery"]["mean"] == 0.0
    assert len(_calls(roles, "discovery")) == 2  # no final prompt
    assert all(FINAL_PROMPT not in m["content"] for c in _calls(roles, "discovery") for m in c)
    (baseline,) = _calls(roles, "baseline")
    assert baseline == [{"role": "user", "content": "{p1} 2 + 2 = ?\n\nA. 3\nB. 4\nC. 5\nD. 6"
                                                    f"\n\n{ANSWER_LINE}"}]
    (oracle,) = _calls(roles, "oracle")
    assert oracle[0]["content"].endswith(
        "Their preferences for this question:\n"
        "- visual: visual diagrams and sketches (how the user likes visual)\n"
        "- brevity: short concise steps (how the user likes brevity)")
    assert "up to 1 question(s)" in _calls(roles, "discovery")[0][0]["content"]


USER_SYSTEM = (
    "You are role-playing a person talking to an AI assistant, which will ask you questions "
    "about how you would like to be helped.\n\n"
    "Who you are:\n- name: p1\n- occupation: nurse\n\n"
    "Your preferences:\n- visual: visual diagrams and sketches (how the user likes visual)\n"
    "- brevity: short concise steps (how the user likes brevity)\n\n"
    "Answer only the question you are asked, in one or two plain sentences, in the first "
    "person. Do not volunteer any preference you were not asked about. If you are asked about "
    "something your preferences do not cover, say you have no particular preference. Reply "
    "with plain text only: no JSON, no labels.")


@pytest.mark.parametrize("protocol", ["release", "personalens"])
def test_the_simulated_user_sees_its_persona_and_the_questions_never_the_problem(
        tmp_path, monkeypatch, protocol):
    """As in the release, whose user simulator is given its persona profile and the
    conversation from the assistant's first turn on: never the task."""
    _, _, roles = _run(tmp_path, monkeypatch, protocol, _target("B", "B"), protocol=protocol)
    (seen,) = [messages for messages, _ in roles.of("user")]
    assert seen == [{"role": "system", "content": USER_SYSTEM},
                    {"role": "user", "content": "Do you like visual diagrams? And short steps?"}]
    assert all("2 + 2" not in m["content"] for m in seen)
