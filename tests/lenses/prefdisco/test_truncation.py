"""Truncated answers (issue 22, item 2): the finish reason is recorded, a cut-off answer is
counted apart and left out of accuracy (or scored, with --truncated score); max_tokens is the
release's 8192, capped for a local model so prompt and reply fit its context."""

import inspect
from pathlib import Path

import pytest

from personalens.lenses.prefdisco.options import EvalOptions
from personalens.lenses.prefdisco.problems import Problem
from personalens.lenses.prefdisco.turn_grammar import MAX_TURN_CHARS, answer_grammar, turn_grammar
from personalens.models import ChatModel
from personalens.models.completion import Completion
from personalens.models.providers.local_gguf import LocalGGUFProvider
from personalens.models.providers.scripted import ScriptedProvider
from personalens.models.reply_budget import prompt_bound, reply_tokens
from tests import prefdisco_data as data
from tests.prefdisco_double import Roles, evaluate, judge_table, passive_user, problem_id
from tests.prefdisco_gbnf import compile_gbnf


def _three_answers(messages, params):
    """p1 right, p2 wrong, p3 cut off after an ANSWER line that reads right."""
    pid = problem_id(messages)
    if pid == "p3":
        return Completion("[p3/baseline] Four.\nANSWER: B\nNow the visual sketch of two plus "
                          "two, step by", finish_reason="length")
    return f"[{pid}/baseline] Four.\nANSWER: {'B' if pid == 'p1' else 'A'}"


def _run(tmp_path, monkeypatch, name, **options):
    ids = ["p1", "p2", "p3"]
    path = data.write(tmp_path / "mmlu.jsonl", [data.weighted(p, {"visual": 1.0}) for p in ids])
    roles = Roles(target=_three_answers, user=passive_user, judge=judge_table(
        {f"{p}/baseline": {"visual": 3} for p in ids})).install(monkeypatch)
    metrics, records, outcome = evaluate(path, tmp_path / name, roles, conditions=["baseline"],
                                         **options)
    assert outcome.complete
    return metrics, {r["key"]: r for r in records}, outcome


def test_a_truncated_answer_is_counted_apart_and_left_out_of_accuracy(tmp_path, monkeypatch):
    metrics, records, outcome = _run(tmp_path, monkeypatch, "default")
    assert [records[f"mmlu/{p}/baseline"]["finish_reason"] for p in ("p1", "p2", "p3")] == [
        "stop", "stop", "length"]
    assert records["mmlu/p3/baseline"]["correctness"]["correct"] is True  # reads right...
    # ... but is cut off: accuracy is 1 right of the 2 whole answers (scored: 2/3; counted
    # as wrong: 1/3).
    assert metrics["accuracy"]["baseline"]["mean"] == 0.5
    assert metrics["accuracy"]["baseline"]["n"] == 2
    assert metrics["truncated"] == {"baseline": {"count": 1, "share": pytest.approx(1 / 3),
                                                 "n": 3}}
    assert metrics["truncated_answers"] == "exclude"
    assert metrics["prefalign"]["baseline"]["n"] == 3  # still judged
    assert "baseline: PrefAlign 3.00 [3.00, 3.00] · accuracy 0.500 (0 unparsed, 1 truncated " \
           "and left out)" in outcome.metrics.headlines()
    report = (tmp_path / "default" / "report.html").read_text()
    assert "1 answer(s) were cut off at the token limit (truncated): left out of accuracy" \
        in report
    assert "final answer (judged, TRUNCATED at the token limit)" in report


def test_truncated_score_grades_a_cut_off_answer_like_any_other(tmp_path, monkeypatch):
    metrics, _, _ = _run(tmp_path, monkeypatch, "scored", truncated="score")
    assert metrics["accuracy"]["baseline"]["mean"] == pytest.approx(2 / 3)
    assert metrics["accuracy"]["baseline"]["n"] == 3
    assert metrics["truncated"]["baseline"]["count"] == 1


def test_max_tokens_defaults_to_the_releases_8192(tmp_path, monkeypatch):
    assert EvalOptions.model_fields["max_tokens"].default == 8192
    metrics, records, _ = _run(tmp_path, monkeypatch, "api")
    # An API model's request carries it unchanged; the record says what was sent.
    assert {r["max_tokens"] for r in records.values()} == {8192}


def _model(spec: str, context: int | None = None) -> ChatModel:
    provider = ScriptedProvider(default="x")
    if context is not None:  # as the in-process llama.cpp provider declares its slot's context
        provider.context_tokens = context
    return ChatModel(spec, provider)


def test_a_local_models_max_tokens_leaves_room_for_the_prompt():
    # The cap's context is the one the local provider declares: one slot's, 8192 by default.
    assert inspect.signature(LocalGGUFProvider).parameters["context_per_slot"].default == 8192
    assert ChatModel("local/x", LocalGGUFProvider(Path("x.gguf"))).context_tokens == 8192
    assert _model("scripted").context_tokens is None
    messages = [{"role": "system", "content": "abc"}, {"role": "user", "content": "héllo"}]
    assert prompt_bound(messages) == (3 + 16) + (6 + 16)  # bytes ("é" is two) + template
    assert reply_tokens(_model("local/m", context=4096), messages, 8192) == 4096 - 41
    local = _model("local/smollm2-135m", context=8192)
    assert reply_tokens(local, messages, 8192) == 8192 - 41
    assert reply_tokens(local, messages, 100) == 100  # below the cap: as asked
    assert reply_tokens(local, messages, 8192, later=8000) == 151  # a dialogue's later turns
    assert reply_tokens(local, messages, 8192, later=9000) == 1
    assert reply_tokens(_model("openai/gpt-4o-mini"), messages, 8192) == 8192


def test_a_grammar_never_admits_more_than_1024_characters():
    """llama.cpp slows to minutes per answer on longer bounded repetitions: the grammar's
    bound stays at 1,024 characters whatever max_tokens is."""
    problem = Problem("mmlu", "2 + 2 = ?", {"A": "3", "B": "4"}, "B", "choice")
    assert compile_gbnf(answer_grammar(problem, 8192)).longest == MAX_TURN_CHARS == 1024
    assert compile_gbnf(turn_grammar(None, problem, 8192)).longest == MAX_TURN_CHARS
    assert compile_gbnf(answer_grammar(problem, 300)).longest == 300  # below: as asked


def test_under_our_protocol_the_dialogues_answer_turn_keeps_its_finish_reason(tmp_path,
                                                                             monkeypatch):
    def cut_answer_turn(messages, params):
        if sum(m["role"] == "assistant" for m in messages) == 0:
            return "###ACTION###: ask_question\n###RESPONSE###: Diagrams?"
        return Completion("###ACTION###: final_answer\n###RESPONSE###: [p1/discovery] Four.\n"
                          "ANSWER: B\nAnd a sketch of", finish_reason="length")

    path = data.write(tmp_path / "mmlu.jsonl", [data.weighted("p1", {"visual": 1.0})])
    roles = Roles(target=cut_answer_turn, user=passive_user, judge=judge_table(
        {"p1/discovery": {"visual": 3}})).install(monkeypatch)
    metrics, records, outcome = evaluate(path, tmp_path / "ours", roles,
                                         conditions=["discovery"], turns=1,
                                         protocol="personalens")
    assert outcome.complete
    record = next(r for r in records if r["key"] == "mmlu/p1/discovery")
    assert [t["finish_reason"] for t in record["transcript"]] == ["stop", "length"]
    assert record["finish_reason"] == "length"
    assert metrics["truncated"]["discovery"]["count"] == 1
    assert metrics["accuracy"]["discovery"]["n"] == 0
