"""prefdisco against the paper and the release, second pass (issue 33 §1-4): correctness as the
release judges it, no self-judging by default, the negative-NormAlign share over every defined
task, the doc table's options, and the boundary cases of NormAlign and accuracy_drop. Every
expected value is worked out by hand in the test, and each differs from what the near misses
named beside it would give."""

import json
import re
from pathlib import Path

import pytest

from personalens.lenses.prefdisco.analysis import summarise_scored
from personalens.lenses.prefdisco.options import EvalOptions
from personalens.lenses.prefdisco.records import PrefdiscoRecord
from personalens.lenses.prefdisco.scoring import normalign, normalign_value
from tests import prefdisco_data as data
from tests.cli_runner import personalens
from tests.prefdisco_double import (
    Roles,
    checked,
    condition_of,
    evaluate,
    is_correctness_request,
    judge_table,
    passive_user,
    problem_id,
    scripted_target,
)

CONDITIONS = ("baseline", "discovery", "oracle")
DOCS = Path(__file__).resolve().parents[3] / "docs" / "prefdisco.md"


def _table(ids, conditions=CONDITIONS, score=3) -> dict:
    return {f"{p}/{c}": {"visual": score} for p in ids for c in conditions}


# --- 1. Correctness: the release's judge by default, the rules as an option -----------------

def test_the_correctness_method_follows_the_protocol_unless_given():
    """judge under --protocol release (the default), rules under personalens; the resolved
    method is what the run's identity (its resume guard, the manifest's config) records."""
    def options(**given):
        return EvalOptions(data=".", out=".", **given)

    assert options().correctness == "judge" and options().identity()["correctness"] == "judge"
    assert options(protocol="personalens").correctness == "rules"
    assert options(protocol="personalens").identity()["correctness"] == "rules"
    assert options(correctness="rules").correctness == "rules"
    assert options(protocol="personalens", correctness="judge").correctness == "judge"
    assert options().asks_answer_line is False
    assert options(correctness="rules").asks_answer_line is True


# p1 writes "ANSWER: B" (gold B) everywhere; p2 writes "ANSWER: C" in baseline and no ANSWER
# line in discovery and oracle. The judge's own verdicts differ from what the rules read:
VERDICTS = {"p1/baseline": 1, "p1/discovery": 0, "p1/oracle": 1,
            "p2/baseline": 1, "p2/discovery": 1, "p2/oracle": 0}


def _target():
    inner = scripted_target(answer={"p1": "B", "p2": "C"})

    def reply(messages, params):
        text = inner(messages, params)
        if problem_id(messages) == "p2" and condition_of(messages) != "baseline":
            text = text.replace("\nANSWER: C", "")
        return text
    return reply


def _judge(messages, params):
    if is_correctness_request(params):
        marker = re.search(r"\[(\w+/\w+)\]", checked(messages)[1]).group(1)
        return json.dumps({"justification": marker, "correct": VERDICTS[marker]})
    return judge_table(_table(["p1", "p2"]))(messages, params)


def _two_problems(tmp_path) -> Path:
    return data.write(tmp_path / "mmlu.jsonl", [data.weighted("p1", {"visual": 1.0}),
                                                data.weighted("p2", {"visual": 1.0})])


def test_the_judge_decides_correctness_and_no_prompt_asks_for_an_answer_line(tmp_path,
                                                                           monkeypatch):
    roles = Roles(target=_target(), user=passive_user, judge=_judge).install(monkeypatch)
    metrics, records, outcome = evaluate(_two_problems(tmp_path), tmp_path / "judge", roles,
                                         turns=1, correctness_temperature=0.25)
    assert outcome.complete and metrics["correctness"] == "judge"
    # No message the target is sent asks for an ANSWER line (baseline, oracle, the dialogue,
    # the final prompt).
    sent = [m["content"] for messages, _ in roles.of("target") for m in messages
            if m["role"] != "assistant"]
    assert sent and not any("ANSWER" in text for text in sent)
    # The judge's verdicts, per condition over p1 and p2: baseline (1 + 1) / 2, discovery
    # (0 + 1) / 2, oracle (1 + 0) / 2. (The rules would give 0.5, 0.5, 0.5: p2's C is wrong
    # and its discovery and oracle answers have no line.)
    assert {c: metrics["accuracy"][c]["mean"] for c in CONDITIONS} == \
        {"baseline": 1.0, "discovery": 0.5, "oracle": 0.5}
    assert all(metrics["accuracy"][c]["n"] == 2 for c in CONDITIONS)
    # accuracy_drop: p1 1 - 0, p2 1 - 1: mean 0.5.
    assert metrics["accuracy_drop"]["mean"] == 0.5
    # The rules' verdict beside it, over the answers that wrote an ANSWER line: baseline p1 B
    # (right) and p2 C (wrong): 0.5 of 2; discovery and oracle p1 alone: 1.0 of 1 (counting
    # p2's line-less answers as wrong would give 0.5 of 2).
    rules = metrics["accuracy_rules"]
    assert {c: (rules[c]["mean"], rules[c]["n"]) for c in CONDITIONS} == \
        {"baseline": (0.5, 2), "discovery": (1.0, 1), "oracle": (1.0, 1)}
    by_key = {r["key"]: r for r in records if "instance" in r}
    assert by_key["mmlu/p1/discovery"]["correctness"]["judged"] is True
    assert by_key["mmlu/p1/discovery"]["correctness"]["correct"] is False
    assert by_key["mmlu/p1/discovery"]["correctness_rules"]["correct"] is True
    assert "correctness_rules" not in by_key["mmlu/p2/oracle"]
    # The request: the problem with its options, the gold letter, the answer as written; at
    # the correctness temperature, with the judge's 400-token budget.
    requests = [(m, p) for m, p in roles.of("judge") if is_correctness_request(p)]
    assert len(requests) == 6
    asked = requests[0][0][-1]["content"]
    assert "{p1} 2 + 2 = ?\nA. 3\nB. 4\nC. 5\nD. 6" in asked.replace("\n\n", "\n")
    assert "Correct answer:\nB\n" in asked and '"correct": <1 or 0>' in asked
    assert {(p["temperature"], p["max_tokens"]) for _, p in requests} == {(0.25, 400)}


def test_the_rules_ask_for_the_line_and_read_it(tmp_path, monkeypatch):
    roles = Roles(target=_target(), user=passive_user, judge=_judge).install(monkeypatch)
    metrics, _, outcome = evaluate(_two_problems(tmp_path), tmp_path / "rules", roles, turns=1,
                                   correctness="rules")
    assert outcome.complete and metrics["correctness"] == "rules"
    # Baseline B right, C wrong; discovery and oracle B right, no line (wrong, unparsed).
    assert {c: (metrics["accuracy"][c]["mean"], metrics["accuracy"][c]["n_unparsed"])
            for c in CONDITIONS} == {"baseline": (0.5, 0), "discovery": (0.5, 1),
                                     "oracle": (0.5, 1)}
    assert metrics["accuracy_rules"] == {}  # one method ran: nothing to report beside it
    assert not any(is_correctness_request(p) for _, p in roles.of("judge"))
    baseline = next(m for m, _ in roles.of("target") if condition_of(m) == "baseline")
    assert baseline[-1]["content"].endswith(
        "End your answer with a final line of the form `ANSWER: <the letter of the correct "
        "option>`.")


def test_an_invalid_correctness_verdict_is_asked_again_then_fails_the_item(tmp_path,
                                                                          monkeypatch):
    """Never scored 0: p1's baseline verdict is never valid, so that item fails after
    --attempts 2 (each try asked once and repaired once: 4 requests) and p1 leaves the
    pairing; p2's first reply is invalid and its second valid, so it is scored."""
    tries: dict[str, int] = {}

    def judge(messages, params):
        if not is_correctness_request(params):
            return judge_table(_table(["p1", "p2"]))(messages, params)
        marker = re.search(r"\[(\w+/\w+)\]", checked(messages[:2])[1]).group(1)
        tries[marker] = tries.get(marker, 0) + 1
        if marker == "p1/baseline" or (marker == "p2/baseline" and tries[marker] == 1):
            return "It looks fine to me."
        return json.dumps({"justification": "ok", "correct": VERDICTS[marker]})

    roles = Roles(target=_target(), user=passive_user, judge=judge).install(monkeypatch)
    metrics, records, outcome = evaluate(_two_problems(tmp_path), tmp_path / "bad", roles,
                                         turns=1, attempts=2)
    assert not outcome.complete
    (failed,) = [r for r in records if r.get("status") == "failed"]
    assert failed["key"] == "mmlu/p1/baseline"
    assert failed["error"]["kind"] == "invalid_structured_output"
    assert tries["p1/baseline"] == 4 and tries["p2/baseline"] == 2
    # p2 alone is paired: its verdicts 1, 1, 0 (p1's missing verdict is not a 0 in baseline).
    assert metrics["n_instances"] == 1
    assert {c: metrics["accuracy"][c]["mean"] for c in CONDITIONS} == \
        {"baseline": 1.0, "discovery": 1.0, "oracle": 0.0}


def test_the_judge_audit_reads_every_judged_correctness(tmp_path, monkeypatch):
    """Under the judge every answer's correctness is a judged verdict the audit re-asks; under
    the rules a choice problem's is not (it was read, not judged)."""
    from personalens.judge_audit.audited_run import open_run

    counts = {}
    for method in ("judge", "rules"):
        roles = Roles(target=_target(), user=passive_user, judge=_judge).install(monkeypatch)
        evaluate(_two_problems(tmp_path), tmp_path / method, roles, turns=1,
                 correctness=method)
        metrics = [v.metric for v in open_run(tmp_path / method, None, 0).verdicts]
        counts[method] = (metrics.count("prefalign"), metrics.count("correctness"))
    assert counts == {"judge": (6, 6), "rules": (6, 0)}


# --- 2. The simulated user and the judge are not the target by default -----------------------

@pytest.mark.parametrize("flags, roles, fix", [
    ([], "the simulated user and the judge", "--user-model and --judge"),
    (["--user-model", "openai/u"], "the judge", "--judge"),
    (["--judge", "openai/j"], "the simulated user", "--user-model"),
    # no dialogue, no simulated user: only the judge is missing
    (["--conditions", "baseline,oracle"], "the judge", "--judge"),
])
def test_a_role_left_to_the_target_is_refused_in_one_line(tmp_path, flags, roles, fix):
    path = data.write(tmp_path / "mmlu.jsonl", [data.weighted("p1", {"visual": 1.0})])
    for dry in ([], ["--dry-run"]):
        result = personalens("prefdisco", "eval", "--data", path, "--out", tmp_path / "run",
                             "--model", "openai/t", *flags, *dry)
        assert result.returncode == 2, result.stderr
        assert result.stderr.strip() == (
            f"personalens: error: {roles} would be the target's own model: give {fix} (the "
            "paper uses one fixed model for every target), or --allow-self-judging to let "
            "the target grade itself")
        assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("flags", [
    ["--allow-self-judging"],
    ["--user-model", "openai/u", "--judge", "openai/j"],
    ["--user-model", "openai/u", "--judges", "openai/a,openai/b"],
    ["--user-model", "openai/t", "--judge", "openai/t"],  # named: a choice, not a fallback
])
def test_a_run_with_every_role_given_or_allowed_goes_ahead(tmp_path, flags):
    path = data.write(tmp_path / "mmlu.jsonl", [data.weighted("p1", {"visual": 1.0})])
    result = personalens("prefdisco", "eval", "--data", path, "--out", tmp_path / "run",
                         "--model", "openai/t", "--dry-run", *flags)
    assert result.returncode == 0, result.stderr


# --- 3. The negative-NormAlign share over every defined task ----------------------------------

# One instance per task, one criterion of weight 1 (PrefAlign = the score):
#   (baseline, discovery, oracle)        NormAlign
#   t1 (1, 2, 3)                         100 x 1 / 2 = 50
#   t2 (2, 1, 4)                         100 x -1 / 2 = -50
#   t3 (4, 5, 2): oracle below baseline  100 x 1 / -2 = -50, flagged
#   t4 (3, 4, 3): oracle = baseline      undefined
#   t5 (1, 3, 3)                         100 x 2 / 2 = 100
# negative_normalign_share: t2 of {t1, t2, t5} = 1/3; ..._all: t2, t3 of {t1, t2, t3, t5} = 1/2.
# Near misses: the undefined t4 in the denominator 2/5; t3 left out of the numerator only 1/4.
TASKS = {"t1": (1, 2, 3), "t2": (2, 1, 4), "t3": (4, 5, 2), "t4": (3, 4, 3), "t5": (1, 3, 3)}


def test_the_negative_share_over_every_defined_task_beside_the_filtered_one(tmp_path,
                                                                             monkeypatch):
    table = {f"{t}/{c}": {"visual": s} for t, scores in TASKS.items()
             for c, s in zip(CONDITIONS, scores, strict=True)}
    folder = data.folder(tmp_path / "data", {t: [data.weighted(t, {"visual": 1.0})]
                                             for t in TASKS})
    roles = Roles(target=scripted_target(), user=passive_user,
                  judge=judge_table(table)).install(monkeypatch)
    metrics, _, outcome = evaluate(folder, tmp_path / "run", roles)
    assert outcome.complete
    values = {t: metrics["normalign"][t]["value"] for t in TASKS}
    assert values == {"t1": 50.0, "t2": -50.0, "t3": -50.0, "t4": None, "t5": 100.0}
    assert metrics["normalign"]["t3"]["oracle_below_baseline"] is True
    assert (metrics["negative_normalign_share"], metrics["negative_normalign_tasks"]) == \
        (pytest.approx(1 / 3), 3)
    assert (metrics["negative_normalign_share_all"], metrics["negative_normalign_tasks_all"]) \
        == (0.5, 4)


# --- 5. Boundaries: NormAlign at exactly the minimum gap, accuracy_drop ------------------------

def test_normalign_at_exactly_the_minimum_gap_is_defined():
    """|oracle - baseline| = min_gap exactly (1.0 and 1.5, 0.5 and 1.0: exact in binary) is
    defined; only a gap below it is undefined (`<`, not `<=`)."""
    assert normalign_value(1.0, 1.25, 1.5, min_gap=0.5) == 50.0
    assert normalign_value(1.0, 0.75, 0.5, min_gap=0.5) == 50.0  # oracle below: gap -0.5
    assert normalign_value(1.0, 1.25, 1.25, min_gap=0.5) is None  # 0.25 < 0.5
    rows = [[1.0, 1.25, 1.5]]
    assert normalign(rows, min_gap=0.5).undefined is False
    assert normalign(rows, min_gap=0.5).value == 50.0


def test_normalign_at_exactly_the_minimum_gap_end_to_end(tmp_path, monkeypatch):
    """Weights 0.75 / 0.25 and whole scores give PrefAlign baseline 1.0 (1, 1), discovery
    1.25 (1, 2), oracle 1.5 (1, 3): the gap is 0.5, --normalign-min-gap 0.5: NormAlign 50."""
    table = {"p1/baseline": {"visual": 1, "brevity": 1},
             "p1/discovery": {"visual": 1, "brevity": 2},
             "p1/oracle": {"visual": 1, "brevity": 3}}
    path = data.write(tmp_path / "mmlu.jsonl",
                      [data.weighted("p1", {"visual": 0.75, "brevity": 0.25})])
    roles = Roles(target=scripted_target(), user=passive_user,
                  judge=judge_table(table)).install(monkeypatch)
    metrics, _, _ = evaluate(path, tmp_path / "run", roles, normalign_min_gap=0.5)
    assert metrics["normalign"]["mmlu"]["oracle_gain"] == 0.5
    assert metrics["normalign"]["mmlu"]["undefined"] is False
    assert metrics["normalign"]["mmlu"]["value"] == 50.0


def _record(instance: str, condition: str, correct: bool, truncated: bool = False
            ) -> PrefdiscoRecord:
    return PrefdiscoRecord(
        task="t", problem_id=instance, instance=instance, condition=condition,
        response="an answer", prefalign=3.0, finish_reason="length" if truncated else "stop",
        questions={"turns": int(condition == "discovery"), "questions": 0},
        correctness={"correct": correct, "parsed": None, "unparsed": False, "judged": True})


# Paired i1, i2, i3; i4 has no oracle record (its oracle failed), so it is out of the pairing.
#        baseline   discovery             drop (baseline - discovery)
#   i1   right      wrong                 1
#   i2   right      wrong, TRUNCATED      1 with --truncated score; left out by default
#   i3   wrong      right                 -1
#   i4   right      wrong (unpaired)      never counted
ROWS = {"i1": (True, False, False), "i2": (True, False, True), "i3": (False, True, False),
        "i4": (True, False, False)}


def _summary(truncated: str) -> dict:
    records = [_record(i, "baseline", b) for i, (b, _, _) in ROWS.items()]
    records += [_record(i, "discovery", d, cut) for i, (_, d, cut) in ROWS.items()]
    records += [_record(i, "oracle", True) for i in ("i1", "i2", "i3")]
    return summarise_scored(records, n_failed=1, instances=[(i, "t") for i in ROWS],
                            conditions=list(CONDITIONS), n_judges=1, truncated=truncated)


def test_accuracy_drop_leaves_out_a_truncated_discovery_answer_and_an_unpaired_instance():
    """Default (--truncated exclude): i1 1 and i3 -1: mean 0 over n 2. Near misses: i2's cut
    discovery answer counted, (1 + 1 - 1) / 3 = 1/3; i4 counted, (1 - 1 + 1) / 3 = 1/3; both,
    2/4 = 0.5."""
    summary = _summary("exclude")
    assert [u["instance"] for u in summary["unpaired"]] == ["i4"]
    assert (summary["accuracy_drop"].value, summary["accuracy_drop"].n) == (0.0, 2)
    # Discovery's accuracy leaves i2 out too: i1 wrong, i3 right.
    assert (summary["accuracy"]["discovery"].value, summary["accuracy"]["discovery"].n) \
        == (0.5, 2)


def test_accuracy_drop_scores_a_truncated_discovery_answer_when_asked():
    """--truncated score: i1 1, i2 1, i3 -1: mean 1/3 over n 3; i4 still out (with it: 0.5)."""
    summary = _summary("score")
    assert summary["accuracy_drop"].value == pytest.approx(1 / 3)
    assert summary["accuracy_drop"].n == 3


# --- 4. The difference table's options are the command's -------------------------------------

def _difference_rows() -> list[list[str]]:
    text = DOCS.read_text()
    table = text.split("## Where personalens differs from the paper and the release", 1)[1]
    rows = [line for line in table.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| element | paper | release | personalens default | option |")
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows[1:]]


def test_every_option_the_difference_table_names_is_one_of_the_command():
    from typer.main import get_command

    from personalens.cli.app import app
    from personalens.cli.lazy_group import subcommand

    command = subcommand(get_command(app), ["prefdisco", "eval"])
    flags = {opt for param in command.params for opt in param.opts}
    audit = subcommand(get_command(app), ["judge-audit", "run"])
    audit_flags = {opt for param in audit.params for opt in param.opts}
    rows = _difference_rows()
    assert len(rows) >= 41 and all(len(row) == 5 for row in rows)
    named = [(row[0], flag) for row in rows for flag in re.findall(r"--[a-z][a-z-]*", row[4])]
    assert named  # the table does name options
    for element, flag in named:
        known = audit_flags if "judge-audit" in element or "judge reliability" in element \
            else flags
        assert flag in known, f"{element}: {flag} is not an option of the command"
