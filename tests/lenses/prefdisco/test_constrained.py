"""prefdisco with a model that decodes under a grammar (llama.cpp): which requests carry a
grammar and which stay as they were, what the turn grammar admits, deterministic repairs,
failures that stay with what depends on them, failures a rerun cannot change, the NormAlign
message with nothing paired, and what the report's browser shows."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from personalens.lenses.prefdisco.answer_check import grade
from personalens.lenses.prefdisco.metrics import PrefdiscoMetrics
from personalens.lenses.prefdisco.options import EvalOptions
from personalens.lenses.prefdisco.problems import Problem
from personalens.lenses.prefdisco.protocol import WireFormat
from personalens.lenses.prefdisco.records import PrefdiscoRecord
from personalens.lenses.prefdisco.release_format import load
from personalens.lenses.prefdisco.release_protocol import FINAL_PROMPT
from personalens.lenses.prefdisco.report_page import browser_entries
from personalens.lenses.prefdisco.turn_grammar import (
    USER_REPLY_CHARS,
    answer_grammar,
    reply_grammar,
    turn_grammar,
)
from personalens.models.failures import PermanentModelError
from personalens.models.rubric_judge import _VERDICT_SCHEMA
from personalens.runs import ItemRecords
from tests import prefdisco_data as data
from tests.prefdisco_double import (
    ConstrainedRoles,
    Roles,
    condition_of,
    evaluate,
    is_correctness_request,
    judge_table,
    passive_user,
    problem_id,
    scripted_target,
    user_by_problem,
)
from tests.prefdisco_gbnf import compile_gbnf

CONDITIONS = ("baseline", "discovery", "oracle")


def _table(ids, conditions=CONDITIONS, criteria=("visual",), score=3) -> dict:
    return {f"{p}/{c}": dict.fromkeys(criteria, score) for p in ids for c in conditions}


def _by_key(records):
    return {r["key"]: r for r in records}


# --- Which requests carry a grammar ------------------------------------------------------------


def test_a_grammar_goes_only_to_a_constrained_model_and_api_requests_stay_as_they_were(
        tmp_path, monkeypatch):
    path = data.write(tmp_path / "mmlu.jsonl", [data.weighted("p1", {"visual": 1.0})])
    roles = ConstrainedRoles(target=scripted_target(questions=1), user=passive_user,
                             judge=judge_table(_table(["p1"], (*CONDITIONS, "fixed_2"))))
    roles.install(monkeypatch)
    _, _, outcome = evaluate(path, tmp_path / "local", roles, turns=1, fixed_questions=[2])
    assert outcome.complete
    grammars: dict[str, list[str]] = {}
    for messages, params in roles.of("target"):
        grammars.setdefault(condition_of(messages), []).append(params["grammar"])
    # Single-turn answers under the default --correctness judge: free text, no ANSWER line
    # (nothing reads one); under the rules, text then an ANSWER line with one of the letters.
    for condition in ("baseline", "oracle"):
        (grammar,) = grammars[condition]
        assert grammar.startswith("root ::= answer\n") and "ANSWER" not in grammar
    ruled = ConstrainedRoles(target=scripted_target(questions=1), user=passive_user,
                             judge=judge_table(_table(["p1"]))).install(monkeypatch)
    _, _, outcome = evaluate(path, tmp_path / "rules", ruled, turns=1, correctness="rules")
    assert outcome.complete
    for messages, params in ruled.of("target"):
        if condition_of(messages) in ("baseline", "oracle"):
            assert 'value ::= ("A" | "B" | "C" | "D")' in params["grammar"]
    # Discovery with one question: the turn may ask or answer; the budget spent, the final
    # prompt's answer, as a single-turn answer.
    assert [g.splitlines()[0] for g in grammars["discovery"]] == [
        "root ::= ask | final", "root ::= answer"]
    # Exactly two questions: two turns that must ask, then the final prompt's answer.
    assert [g.splitlines()[0] for g in grammars["fixed_2"]] == [
        "root ::= ask", "root ::= ask", "root ::= answer"]
    # The simulated user writes one paragraph; the judge is held by its JSON schema.
    assert [params["grammar"] for _, params in roles.of("user")] == [
        reply_grammar(USER_REPLY_CHARS)] * 3
    assert compile_gbnf(reply_grammar(USER_REPLY_CHARS)).longest == 300
    assert all("grammar" not in params for _, params in roles.of("judge"))
    # ... whose justification is bounded, so the object closes within the judge's max_tokens
    # (the rubric's 240 characters, the correctness verdict's 300).
    bounds = [p["response_format"]["json_schema"]["schema"]["properties"]["justification"]
              .get("maxLength") for _, p in roles.of("judge")]
    assert sorted(set(bounds)) == [240, 300]
    assert bounds.count(300) == 4  # baseline, discovery, oracle, fixed_2: one verdict each

    # The same run with API models: every request is what it was before grammars existed.
    api = ConstrainedRoles(constrained=(), target=scripted_target(questions=1),
                           user=passive_user, judge=judge_table(_table(["p1"])))
    api.install(monkeypatch)
    _, _, outcome = evaluate(path, tmp_path / "api", api, turns=1)
    assert outcome.complete
    calls = api.of("target")
    assert len(calls) == 4  # baseline, oracle, discovery's question, the final prompt
    assert all(set(params) == {"temperature", "seed", "max_tokens"} for _, params in calls)
    assert [set(params) for _, params in api.of("user")] == [
        {"temperature", "seed", "max_tokens"}]
    assert all(p["response_format"] == _VERDICT_SCHEMA for _, p in api.of("judge")
               if not is_correctness_request(p))


@pytest.mark.minilm
def test_build_asks_a_constrained_generator_for_names_from_the_candidates(tmp_path,
                                                                         monkeypatch):
    from personalens.lenses.prefdisco.build import run_build
    from personalens.lenses.prefdisco.options import BuildOptions
    from tests.prefdisco_build_double import BuildDouble

    double, schemas = BuildDouble(), {}

    def reply(messages, params):
        schema = params["response_format"]["json_schema"]
        schemas.setdefault(schema["name"], schema["schema"])
        return double(messages, params)

    roles = ConstrainedRoles(gen=reply).install(monkeypatch)
    outcome = run_build(BuildOptions(out=tmp_path / "b", models={"generator": "openai/gen"},
                                     limit=1, personas=1, per_problem=1), progress=False)
    assert outcome.complete and len(roles.of("gen")) > 0
    chosen = schemas["Selection"]["$defs"]["ChosenPreference"]["properties"]
    assert chosen["name"]["enum"] == ["Visual aids", "Step granularity", "Technical vocabulary",
                                      "Worked examples"]
    assert (chosen["importance"]["minimum"], chosen["importance"]["maximum"]) == (1, 10)
    assert schemas["Selection"]["properties"]["preferences"]["maxItems"] == 3
    assert set(schemas["RubricDraft"]["properties"]) == {"description", "level_1", "level_3",
                                                         "level_5"}
    assert schemas["PersonaDraft"]["properties"]["backstory"]["maxLength"] == 400
    # Importances 2, 4, 6 of 10: the release's local_importance 0.2, 0.4, 0.6.
    instance = load(tmp_path / "b" / "data").instances[0]
    assert sorted(p["local_importance"] for p in instance.preferences.values()) == [0.2, 0.4, 0.6]


# --- What the turn grammar admits -------------------------------------------------------------

PROBLEMS = {
    "choice": Problem("mmlu", "2 + 2 = ?", {"A": "3", "B": "4", "C": "5"}, "B", "choice"),
    "numeric": Problem("math", "3x - 7 = 2x + 5", {}, "12", "numeric"),
    "short": Problem("simpleqa", "Capital of France?", {}, "Paris", "short"),
}


@pytest.mark.parametrize("kind", list(PROBLEMS))
@pytest.mark.parametrize("must", [None, "ask", "final"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_turn_the_grammar_admits_is_read_by_the_wire_format(kind, must, data):
    problem = PROBLEMS[kind]
    max_tokens = data.draw(st.sampled_from([120, 200]))
    grammar = compile_gbnf(turn_grammar(must, problem, max_tokens))
    assert grammar.longest <= max_tokens  # one character per token at least: it always ends
    turn = data.draw(st.from_regex(grammar.pattern, fullmatch=True))
    parsed = WireFormat().parse(turn)
    assert must is None or parsed.action == must
    if parsed.action == "final":  # the ANSWER line is readable as the problem's kind
        graded = grade(parsed.text, problem.kind, problem.gold, problem.options)
        assert graded.parsed  # read, and not empty


@pytest.mark.parametrize("kind", list(PROBLEMS))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_single_turn_answer_the_grammar_admits_is_graded(kind, data):
    problem = PROBLEMS[kind]
    grammar = compile_gbnf(answer_grammar(problem, 150))
    assert grammar.longest <= 150
    answer = data.draw(st.from_regex(grammar.pattern, fullmatch=True))
    assert grade(answer, problem.kind, problem.gold, problem.options).parsed


@pytest.mark.parametrize("kind, turn", [
    ("choice", "Do you like diagrams?"),  # no wrapper
    ("choice", "###ACTION###: ask_question\n###RESPONSE###: two\nlines"),  # one line only
    ("choice", "###ACTION###: ask_question\n###RESPONSE###:  "),  # no text
    ("choice", "###ACTION###: ask_question\n###RESPONSE###: \u3000\r"),  # only blanks
    ("choice", "###ACTION###: clarify\n###RESPONSE###: Diagrams?"),
    ("choice", "###ACTION###: final_answer\n###RESPONSE###: It is 4."),  # no ANSWER line
    ("choice", "###ACTION###: final_answer\n###RESPONSE###: It is 4.\nANSWER: E"),  # no option
    ("numeric", "###ACTION###: final_answer\n###RESPONSE###: x\nANSWER: 3/0"),  # unreadable
    ("numeric", "###ACTION###: final_answer\n###RESPONSE###: x\nANSWER: twelve"),
    ("short", "###ACTION###: final_answer\n###RESPONSE###: x\nANSWER: \u00a0"),  # blank
])
def test_the_grammar_refuses_turns_that_break_the_format(kind, turn):
    assert not compile_gbnf(turn_grammar(None, PROBLEMS[kind], 200)).matches(turn)


# --- Deterministic repairs -------------------------------------------------------------------


@pytest.mark.parametrize("reply, must, expected", [
    ("ACTION: ask_question\nRESPONSE: Do you like maps?", None, ("ask", "Do you like maps?")),
    ("**Action**: final answer\n**Response**: It is B.\nANSWER: B", None,
     ("final", "It is B.\nANSWER: B")),
    ('Action: ["ask"] What do you prefer?', None, ("ask", "What do you prefer?")),
    ("It is B.\nANSWER: B", "final", ("final", "It is B.\nANSWER: B")),  # the answer is due
    ("Response: it is B", "final", ("final", "it is B")),
    ("It is B.", None, None),  # which action? a guess: asked again
    ("It is B.", "ask", None),
    ("###ACTION###: clarify\n###RESPONSE###: x", "final", None),
    ("###ACTION###: final_answer", "final", None),  # no text to use
])
def test_a_broken_turn_is_repaired_only_when_no_guess_is_needed(reply, must, expected):
    repaired = WireFormat().repair(reply, must)
    assert (None if repaired is None else (repaired.action, repaired.text)) == expected


def test_a_repairable_turn_is_not_asked_again(tmp_path, monkeypatch):
    def loose(messages, params):
        condition, pid = condition_of(messages), problem_id(messages)
        if condition != "discovery":
            return f"[{pid}/{condition}] Working it out.\nANSWER: B"
        if sum(m["role"] == "assistant" for m in messages) == 0:
            return "Action: ask_question\nResponse: Do you like visual diagrams?"
        return f"[{pid}/discovery] Done.\nANSWER: B"  # no wrapper, at the turn that must answer

    path = data.write(tmp_path / "mmlu.jsonl", [data.weighted("p1", {"visual": 1.0})])
    roles = Roles(target=loose, user=passive_user,
                  judge=judge_table(_table(["p1"]))).install(monkeypatch)
    # Under our protocol the turn after the budget must answer, so a bare answer is repaired.
    _, records, outcome = evaluate(path, tmp_path / "out", roles, turns=1,
                                   protocol="personalens")
    assert outcome.complete
    record = _by_key(records)["mmlu/p1/discovery"]
    ask, final = record["transcript"]
    assert (ask["action"], ask["text"], ask["attempts"], ask["rejected"]) == (
        "ask", "Do you like visual diagrams?", 1, [])
    assert ask["repaired"] == "no ###ACTION### line"
    assert (final["action"], final["attempts"], final["repaired"]) == (
        "final", 1, "no ###ACTION### line")
    assert record["response"] == "[p1/discovery] Done.\nANSWER: B"
    assert record["correctness"]["correct"] is True
    discovery_calls = [m for m, _ in roles.of("target") if condition_of(m) == "discovery"]
    assert len(discovery_calls) == 2  # two turns: no correction sent


@pytest.mark.minilm
def test_a_selection_off_by_case_or_scale_is_repaired_without_asking_again(tmp_path,
                                                                          monkeypatch):
    from personalens.lenses.prefdisco.build import run_build
    from personalens.lenses.prefdisco.options import BuildOptions
    from tests.prefdisco_build_double import BuildDouble

    class Loose(BuildDouble):
        def candidates(self, prompt):
            proposed = super().candidates(prompt)
            for candidate in proposed["dimensions"]:  # the type spelled loosely
                candidate["type"] = {"personal": "Personal preference",
                                     "expertise": "domain Expertise"}[candidate["type"]]
            return proposed

        def selection(self, prompt):
            return {"preferences": [
                {"name": "VISUAL AIDS", "value": "many diagrams", "value_range": "none to many",
                 "local_importance": 0.7, "justification": "they think in pictures"},
                {"name": "worked-examples", "value": "one example", "value_range": "0-3",
                 "importance": 0.3, "justification": "it anchors the method"},
                {"name": "Humour", "value": "jokes", "value_range": "none to many",
                 "importance": 9, "justification": "not a candidate"}]}

    roles = Roles(gen=Loose()).install(monkeypatch)
    outcome = run_build(BuildOptions(out=tmp_path / "b", models={"generator": "openai/gen"},
                                     limit=1, personas=1, per_problem=1), progress=False)
    assert outcome.complete
    selections = [m for m, p in roles.of("gen")
                  if p["response_format"]["json_schema"]["name"] == "Selection"]
    assert len(selections) == 5  # one per instance: no repair turn, no regeneration
    instance = load(tmp_path / "b" / "data").instances[0]
    assert {n: p["local_importance"] for n, p in instance.preferences.items()} == {
        "Visual aids": 0.7, "Worked examples": 0.3}
    assert [c.weight for c in instance.criteria] == pytest.approx([0.7, 0.3])
    assert [p["type"] for p in instance.preferences.values()] == ["personal", "personal"]
    library = json.loads((tmp_path / "b" / "attribute_library.json").read_text())
    assert {e["name"]: e["type"] for e in library}["Technical vocabulary"] == "expertise"
    # Each anchored level keeps its own description.
    assert instance.criteria[0].levels == [{"score": 1, "description": "not at all"},
                                           {"score": 3, "description": "partly"},
                                           {"score": 5, "description": "fully"}]


# --- Failures stay with what depends on them, and say when a rerun cannot help ----------------


@pytest.mark.minilm
def test_a_failed_persona_fails_only_the_items_paired_with_it(tmp_path, monkeypatch):
    from personalens.lenses.prefdisco.build import run_build
    from personalens.lenses.prefdisco.options import BuildOptions
    from tests.prefdisco_build_double import BuildDouble

    class SecondPersonaBroken(BuildDouble):
        def __call__(self, messages, params):
            if any("person number 2" in m["content"] for m in messages):
                return "not JSON"
            return super().__call__(messages, params)

    roles = Roles(gen=SecondPersonaBroken()).install(monkeypatch)
    out = tmp_path / "b"
    outcome = run_build(BuildOptions(out=out, models={"generator": "openai/gen"},
                                     problems=[], limit=1, personas=2, per_problem=1),
                        progress=False)
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    items = {r["key"]: r for r in records if r["key"].startswith("instance/")}
    assert len(items) == 5
    failed = {k: r for k, r in items.items() if r["status"] == "failed"}
    ok = {k: r for k, r in items.items() if r["status"] == "ok"}
    assert failed and ok  # the seeded pairing gives both personas some problems
    assert all(k.endswith("/1") for k in failed) and all(k.endswith("/0") for k in ok)
    for record in failed.values():
        assert record["error"]["kind"] == "invalid_structured_output"
        assert record["error"]["final"] is True  # a scripted model replies the same again
        assert record["failed_steps"] == ["persona/1"]
    assert outcome.metrics.instances == len(ok) and outcome.metrics.personas == 1
    assert len(load(out / "data").instances) == len(ok)
    # Listed once each, as the items; the persona step is not counted again.
    assert len(outcome.tally.failures) == len(failed) and outcome.tally.step_failures == []
    assert len(roles.of("gen")) > 0


def test_a_failed_judge_call_fails_its_item_alone_and_keeps_the_answer(tmp_path, monkeypatch):
    table = _table(["p1", "p2"])

    def judge(messages, params):
        if "[p2/discovery]" in messages[-1]["content"]:
            raise PermanentModelError("bad_request", "the judge refused this one")
        return judge_table(table)(messages, params)

    path = data.write(tmp_path / "mmlu.jsonl", [data.weighted("p1", {"visual": 1.0}),
                                                 data.weighted("p2", {"visual": 1.0})])
    roles = Roles(target=scripted_target(questions=1), user=passive_user,
                  judge=judge).install(monkeypatch)
    metrics, records, outcome = evaluate(path, tmp_path / "out", roles)
    records = _by_key(records)
    assert [f.key for f in outcome.tally.failures] == ["mmlu/p2/discovery"]
    assert all(r["status"] == "ok" for k, r in records.items() if k != "mmlu/p2/discovery")
    failed = records["mmlu/p2/discovery"]
    assert failed["error"]["kind"] == "bad_request" and not failed["error"].get("final")
    assert failed["response"] == "[p2/discovery] Working it out.\nANSWER: B"
    assert [t["action"] for t in failed["transcript"]] == ["ask", "final"]
    assert metrics["n_instances"] == 1  # p1 is still paired and scored


def _never_answers(messages, params):
    condition, pid = condition_of(messages), problem_id(messages)
    if condition != "discovery":
        return f"[{pid}/{condition}] Working it out.\nANSWER: B"
    return "###ACTION###: ask_question\n###RESPONSE###: Do you like visual diagrams?"


def test_a_protocol_failure_is_final_when_the_target_is_deterministic(tmp_path, monkeypatch):
    path = data.write(tmp_path / "mmlu.jsonl", [data.weighted("p1", {"visual": 1.0})])
    for deterministic in (True, False):
        roles = ConstrainedRoles(constrained=(), nondeterministic=() if deterministic else
                                 ("target",), target=_never_answers, user=passive_user,
                                 judge=judge_table(_table(["p1"]))).install(monkeypatch)
        # Under our protocol the turn after the budget must answer: a target that never does
        # fails the item. (Under the release's, the final prompt follows the budget.)
        metrics, records, outcome = evaluate(path, tmp_path / f"out-{deterministic}", roles,
                                             turns=1, protocol="personalens")
        (failure,) = outcome.tally.failures
        assert failure.kind == "protocol"
        assert failure.final is deterministic
        assert bool(metrics["failures"][0].get("final")) is deterministic
        failed = _by_key(records)["mmlu/p1/discovery"]
        assert bool(failed["error"].get("final")) is deterministic


def test_a_judge_that_never_gives_a_verdict_and_a_silent_user_fail_for_good(tmp_path,
                                                                           monkeypatch):
    path = data.write(tmp_path / "mmlu.jsonl", [data.weighted("p1", {"visual": 1.0})])
    roles = Roles(target=scripted_target(questions=1), user=lambda m, p: "   ",
                  judge=lambda m, p: "no verdict").install(monkeypatch)
    _, records, outcome = evaluate(path, tmp_path / "out", roles)
    records = _by_key(records)
    errors = {k: r["error"] for k, r in records.items()
              if r["status"] == "failed" and k.count("/") == 2}  # items, not steps
    assert {k: e["kind"] for k, e in errors.items()} == {
        "mmlu/p1/baseline": "no_valid_criterion", "mmlu/p1/oracle": "no_valid_criterion",
        "mmlu/p1/discovery": "user_reply"}
    assert all(e["final"] is True for e in errors.values())
    # The user's failure keeps the conversation up to the unanswered question.
    (asked,) = records["mmlu/p1/discovery"]["transcript"]
    assert asked["action"] == "ask" and "reply" not in asked


# --- Nothing paired: the message and the plots ---------------------------------------------------


def test_with_nothing_paired_normalign_says_so_and_no_plot_is_drawn(tmp_path, monkeypatch):
    path = data.write(tmp_path / "mmlu.jsonl", [data.weighted("p1", {"visual": 1.0})])
    roles = Roles(target=_never_answers, user=passive_user,
                  judge=judge_table(_table(["p1"]))).install(monkeypatch)
    metrics, _, outcome = evaluate(path, tmp_path / "out", roles, turns=1,
                                   protocol="personalens")
    assert metrics["n_instances"] == 0
    (line,) = [h for h in outcome.metrics.headlines() if h.startswith("NormAlign")]
    assert "no instance was scored in every condition" in line
    assert "oracle ≈ baseline" not in line
    report = (tmp_path / "out" / "report.html").read_text()
    assert "nothing scored" in report and "<img" not in report
    # With instances paired and oracle = baseline, it is still "undefined".
    metrics = PrefdiscoMetrics.model_validate({
        "scoring": "strict", "protocol": "release", "truncated_answers": "exclude",
        "conditions": list(CONDITIONS),
        "prefalign": {c: {"mean": 3.0, "ci_low": 3.0, "ci_high": 3.0, "n": 2}
                      for c in CONDITIONS},
        "truncated": {c: {"count": 0, "share": 0.0, "n": 2} for c in CONDITIONS},
        "accuracy": {c: {"mean": 1.0, "ci_low": 1.0, "ci_high": 1.0, "n": 2, "n_unparsed": 0}
                     for c in CONDITIONS},
        "normalign": {"overall": {"value": None, "ci_low": None, "ci_high": None,
                                  "undefined": True, "n": 2, "discovery_gain": 0.0,
                                  "oracle_gain": 0.0}},
        "questions_asked": {}, "preferences_discovered": {},
        "preferences_discovered_share": {},
        "judge": {"invalid_rate": 0.0, "excluded_criteria": 0, "replies": 6}, "per_task": {},
        "n_instances": 2,
        "n_planned_instances": 2, "n_failed": 0, "unpaired": [], "renormalised_weights": [],
        "skipped_invalid": [], "failures": []})
    assert metrics.headlines()[-1] == "NormAlign (overall): undefined (oracle ≈ baseline)"


# --- The browser ----------------------------------------------------------------------------------


def test_the_browser_shows_inputs_every_message_verdicts_and_the_failed_exchange(tmp_path,
                                                                                monkeypatch):
    asks = {"p1": "###ACTION###: ask_question\n###RESPONSE###: Do you like visual diagrams?",
            "p2": "###ACTION###: ask_question\n###RESPONSE###: Short steps or long ones?"}
    inner = scripted_target(questions={"p1": 1, "p2": 9}, ask=asks)

    def target(messages, params):
        if (condition_of(messages), problem_id(messages)) == ("discovery", "p2") and \
                sum(m["role"] == "assistant" for m in messages) >= 1:
            return "I refuse the format."  # p2's second turn: broken three times
        return inner(messages, params)

    path = data.write(tmp_path / "mmlu.jsonl", [data.weighted("p1", {"visual": 1.0}),
                                                 data.weighted("p2", {"visual": 1.0})])
    replies = {"p1": "I like visual diagrams and sketches.", "p2": "Short concise steps."}
    roles = Roles(target=target, user=user_by_problem(replies),
                  judge=judge_table(_table(["p1", "p2"]))).install(monkeypatch)
    _, records, outcome = evaluate(path, tmp_path / "out", roles, turns=2)
    instances = {i.key: i for i in load(path).instances}
    items = browser_entries(ItemRecords.from_lines([r for r in records if "instance" in r],
                                                   PrefdiscoRecord), instances,
                            EvalOptions(data=path, out=tmp_path / "out", turns=2))
    entries = {e.title.split(" · ")[0] + "/" + e.facets["condition"]: e for e in items.entries}
    assert items.total == 6
    assert items.entries[0].facets["correct"] == "failed"  # failures first

    ok = dict(entries["mmlu/p1/discovery"].fields)
    labels = [label for label, _ in entries["mmlu/p1/discovery"].fields]
    assert ok["problem"] == "{p1} 2 + 2 = ?\n\nA. 3\nB. 4\nC. 5\nD. 6"
    assert ok["gold answer"] == "B (choice)"
    assert ok["persona"] == "- name: p1\n- occupation: nurse"
    assert ok["preferences (value, importance, weight)"].startswith(
        "- visual: visual diagrams and sketches (importance 0.5, weight 1.00)")
    assert "one or two clarifying questions" in ok["target's system prompt"]
    # After the dialogue: the final prompt, then its answer, the one judged.
    assert labels.index("turn 2: target (final answer)") < labels.index(
        "final prompt (user)") < labels.index("final answer (judged)")
    assert ok["final prompt (user)"].startswith(FINAL_PROMPT)
    assert labels.index("turn 1: target (question)") < labels.index(
        "turn 1: user (revealed: visual)") < labels.index("turn 2: target (final answer)")
    assert ok["turn 1: target (question)"] == asks["p1"]
    assert ok["turn 1: user (revealed: visual)"] == replies["p1"]
    assert ok["final answer (judged)"] == "[p1/discovery] Working it out.\nANSWER: B"
    # The release's judge decided it; the rules read the ANSWER line the target wrote anyway.
    assert ok["correctness"] == "judged right (gold B): read 'B'"
    assert ok["correctness by the rules (not counted in accuracy)"] == \
        "ANSWER read as 'B' (gold B): right"
    verdict = ok["judge · visual (w=1.00): 3"]
    assert "criterion: matches visual" in verdict and "level 5: fully" in verdict
    assert "user's value: visual diagrams and sketches" in verdict
    assert "verdict 1: 3 after 1 attempt(s) — p1/discovery visual" in verdict

    failed_entry = entries["mmlu/p2/discovery"]
    assert failed_entry.title == "mmlu/p2 · discovery · FAILED (protocol)"
    failed = dict(failed_entry.fields)
    assert failed["failure"].startswith("protocol (final: a rerun would fail the same way): ")
    assert failed["problem"].startswith("{p2} 2 + 2 = ?")
    assert failed["turn 1: target (question)"] == asks["p2"]
    assert failed["turn 1: user (revealed: none)"] == replies["p2"]
    rejected = [text for label, text in failed_entry.fields if "rejected reply" in label]
    assert rejected == ["I refuse the format."] * 3
    assert [label for label, _ in failed_entry.fields if "rejected reply" in label][0] == \
        "turn 2: rejected reply 1 (no ###ACTION### line)"

    baseline = dict(entries["mmlu/p1/baseline"].fields)
    assert "target's system prompt" not in baseline and "turn 1: target (question)" \
        not in baseline
    assert baseline["final answer (judged)"] == "[p1/baseline] Working it out.\nANSWER: B"
    # The report carries the entries (as text in its data block).
    report = (tmp_path / "out" / "report.html").read_text()
    assert "I refuse the format." in report and "Short steps or long ones?" in report
    assert not outcome.complete
