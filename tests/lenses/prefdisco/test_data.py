"""prefdisco input: the ten source benchmarks' rows, the release-format loader's validation
(unknown preference, weights, level scores), --skip-invalid, and rule-based answer checking."""

import json

import pytest

from personalens.errors import InputError
from personalens.lenses.prefdisco.answer_check import grade, parse_letter, parse_number
from personalens.lenses.prefdisco.problems import Problem, ProblemShapeError, normalise
from personalens.lenses.prefdisco.release_format import load, require_valid
from tests import prefdisco_data as data
from tests.prefdisco_double import Roles, evaluate, judge_table, passive_user, scripted_target

# --- The ten sources -----------------------------------------------------------------------

SOURCE_ROWS = {
    "math500": ("math500", {"problem": "Compute 3/4 as a fraction.", "solution": "It is 3/4.",
                            "answer": "\\frac{3}{4}", "subject": "Algebra", "level": 1},
                Problem("math500", "Compute 3/4 as a fraction.", {}, "\\frac{3}{4}", "numeric")),
    "aime": ("aime", {"ID": "2024-I-1", "Problem": "Find the remainder.", "Solution": "...",
                      "Answer": 204},
             Problem("aime", "Find the remainder.", {}, "204", "numeric")),
    "aime release": ("aime", {"ID": "1983-I-1", "Year": 1983, "Problem Number": 1,
                              "Question": "Find w.", "Answer": "060", "Part": "I"},
                     Problem("aime", "Find w.", {}, "060", "numeric")),
    "aime release without year and number": (
        "aime", {"Question": "Find w.", "Answer": 60},
        Problem("aime", "Find w.", {}, "60", "numeric")),
    "aime lowercase": ("aime", {"problem": "Find the remainder.", "answer": "033"},
                       Problem("aime", "Find the remainder.", {}, "033", "numeric")),
    "aime lowercase with solution": (
        "aime", {"problem": "Find m+n.", "solution": "So m+n = 17.", "answer": "17", "url": "u"},
        Problem("aime", "Find m+n.", {}, "17", "numeric")),
    "commonsenseqa": ("commonsenseqa", {
        "id": "x", "question": "Where do you keep milk?", "question_concept": "milk",
        "choices": {"label": ["A", "B", "C", "D", "E"],
                    "text": ["fridge", "oven", "shelf", "car", "desk"]}, "answerKey": "A"},
        Problem("commonsenseqa", "Where do you keep milk?",
                {"A": "fridge", "B": "oven", "C": "shelf", "D": "car", "E": "desk"}, "A",
                "choice")),
    "logiqa": ("logiqa", {"context": "All cats purr.", "query": "Does Tom purr?",
                          "options": ["yes", "no", "maybe", "never"], "correct_option": 0},
               Problem("logiqa", "All cats purr.\n\nDoes Tom purr?",
                       {"A": "yes", "B": "no", "C": "maybe", "D": "never"}, "A", "choice")),
    "mascqa multiple choice": (
        "mascqa", {"Question": "Hardest? (A) talc (B) diamond (C) quartz (D) gypsum",
                   "Correct Answer": "b", "Type": "MCQS"},
        Problem("mascqa", "Hardest? (A) talc (B) diamond (C) quartz (D) gypsum", {}, "B",
                "choice")),
    "mascqa numerical": ("mascqa", {"Question": "Density of iron in g/cc?", "Answer": "7.87"},
                         Problem("mascqa", "Density of iron in g/cc?", {}, "7.87", "numeric")),
    "medqa": ("medqa", {"question": "Best first drug?", "answer": "Aspirin",
                        "options": {"A": "Aspirin", "B": "Heparin", "C": "Insulin",
                                    "D": "Saline"}, "meta_info": "step1", "answer_idx": "A"},
              Problem("medqa", "Best first drug?", {"A": "Aspirin", "B": "Heparin",
                                                    "C": "Insulin", "D": "Saline"}, "A",
                      "choice")),
    "mmlu": ("mmlu", {"question": "2 + 2 = ?", "subject": "math", "choices": ["3", "4", "5"],
                      "answer": 1},
             Problem("mmlu", "2 + 2 = ?", {"A": "3", "B": "4", "C": "5"}, "B", "choice")),
    "scienceqa": ("scienceqa", {"question": "Which is a mammal?", "choices": ["shark", "whale"],
                                "answer": 1, "hint": "Mammals breathe air.",
                                "lecture": "Animals...", "subject": "natural science"},
                  Problem("scienceqa", "Mammals breathe air.\n\nWhich is a mammal?",
                          {"A": "shark", "B": "whale"}, "B", "choice")),
    "scienceqa without hint": ("scienceqa", {"question": "Which is a mammal?", "hint": "",
                                             "choices": ["shark", "whale"], "answer": 0,
                                             "lecture": ""},
                               Problem("scienceqa", "Which is a mammal?",
                                       {"A": "shark", "B": "whale"}, "A", "choice")),
    "simpleqa": ("simpleqa", {"problem": "Who painted the Mona Lisa?",
                              "answer": "Leonardo da Vinci", "metadata": "{}"},
                 Problem("simpleqa", "Who painted the Mona Lisa?", {}, "Leonardo da Vinci",
                         "short")),
    "simpleqa numeric": ("simpleqa", {"problem": "In what year?", "answer": "1,503"},
                         Problem("simpleqa", "In what year?", {}, "1,503", "numeric")),
    "socialiqa": ("socialiqa", {"context": "Kai fed the cat.", "question": "Why?",
                                "answerA": "hungry cat", "answerB": "bored",
                                "answerC": "no reason", "label": "2"},
                  Problem("socialiqa", "Kai fed the cat.\n\nWhy?",
                          {"A": "hungry cat", "B": "bored", "C": "no reason"}, "B", "choice")),
}


@pytest.mark.parametrize("case", list(SOURCE_ROWS))
def test_each_source_row_is_normalised(case):
    task, row, expected = SOURCE_ROWS[case]
    assert normalise(row, task) == expected


@pytest.mark.parametrize("case", ["math500", "aime", "aime release", "commonsenseqa", "logiqa",
                                  "medqa", "mmlu", "scienceqa", "socialiqa",
                                  "mascqa numerical"])
def test_a_source_is_recognised_by_its_fields_alone(case):
    _, row, expected = SOURCE_ROWS[case]
    assert normalise(row, "some_file_stem") == expected


def test_a_commonsenseqa_row_of_the_test_split_is_refused_for_its_missing_answer_key():
    """The release samples CommonsenseQA's test split, whose answerKey is empty: such a row has
    no gold, and says where to take rows with one."""
    _, row, _ = SOURCE_ROWS["commonsenseqa"]
    with pytest.raises(ProblemShapeError, match="a commonsenseqa row with a bad field \\(no "
                       "answerKey: CommonsenseQA's test split has no answer keys; take rows "
                       "from its train or validation split\\)"):
        normalise({**row, "answerKey": ""}, "commonsenseqa")


def test_the_shipped_problems_carry_their_gold_answers():
    """The ~30 problems shipped for `prefdisco build` (personalens' own question/answer shape),
    each source's golds by hand."""
    from personalens.lenses.prefdisco.build import SHIPPED_PROBLEMS, load_problems

    golds: dict[str, list[tuple[str, str]]] = {}
    for source in load_problems([SHIPPED_PROBLEMS], None):
        golds.setdefault(source.problem.source, []).append((source.problem.gold,
                                                           source.problem.kind))
    assert golds == {
        "math": [("73", "numeric"), ("720", "numeric"), ("12", "numeric"), ("24", "numeric"),
                 ("34", "numeric"), ("1/6", "numeric"), ("20", "numeric"), ("2", "numeric")],
        "logic": [("D", "choice"), ("B", "choice"), ("D", "choice"), ("B", "choice"),
                  ("B", "choice")],
        "commonsense": [("B", "choice")] * 4 + [("A", "choice"), ("B", "choice")],
        "social": [("B", "choice"), ("A", "choice"), ("B", "choice"), ("B", "choice"),
                   ("A", "choice"), ("B", "choice")],
        "health": [("A", "choice"), ("B", "choice"), ("A", "choice"), ("100", "numeric"),
                   ("B", "choice")]}


def test_a_long_free_answer_is_open_and_a_bad_row_names_its_problem():
    row = {"problem": "Why is the sky blue?", "answer": "Because air molecules scatter the "
                                                        "short blue wavelengths of sunlight most"}
    assert normalise(row, "simpleqa").kind == "open"
    with pytest.raises(ProblemShapeError, match="no known source"):
        normalise({"text": "hello"}, "mmlu")
    with pytest.raises(ProblemShapeError, match="a mmlu row with a bad field"):
        normalise({"question": "q", "subject": "s", "choices": ["a"], "answer": 11}, "mmlu")
    # An answer index past the choices would make a gold no answer can reach.
    with pytest.raises(ProblemShapeError, match="gold answer 'D' is not one of its options"):
        normalise({"question": "q", "subject": "s", "choices": ["a", "b"], "answer": 3}, "mmlu")
    with pytest.raises(ProblemShapeError, match="gold answer 'F'"):
        normalise({"question": "q", "choices": {"label": ["A", "B"], "text": ["x", "y"]},
                   "answerKey": "F"}, "commonsenseqa")
    with pytest.raises(ProblemShapeError, match="empty question or gold"):
        normalise({"problem": " ", "answer": "1"}, "simpleqa")


# --- Answer checking -------------------------------------------------------------------------

OPTIONS = {"A": "3", "B": "4", "C": "five", "D": "6"}


@pytest.mark.parametrize("given, letter", [
    ("B", "B"), ("(B)", "B"), ("B)", "B"), ("B. 4", "B"), ("**B**", "B"), ("B: four", "B"),
    ("** B", "B"),  # from "**ANSWER:** B"
    ("five", "C"), ("Five.", "C"), ("E", None), ("maybe", None)])
def test_choice_letters(given, letter):
    assert parse_letter(given, OPTIONS) == letter
    graded = grade(f"Thinking...\nANSWER: {given}", "choice", "B", OPTIONS)
    assert graded.correct == (letter == "B")
    assert graded.parsed == letter


def test_the_answer_line_is_found_in_its_usual_spellings():
    for response in ("ANSWER: B", "**ANSWER:** B", "Answer: (B)", "  answer : B. 4",
                     "ANSWER: A\nWait, no.\nANSWER: B"):
        assert grade(f"Reasoning...\n{response}\n", "choice", "B", OPTIONS).correct, response
    assert grade("The ANSWER: B is inline", "choice", "B", OPTIONS).parsed is None


def test_a_choice_whose_options_are_inline_in_the_question():
    problem = SOURCE_ROWS["mascqa multiple choice"][2]
    assert grade("ANSWER: B", problem.kind, problem.gold, problem.options).correct
    assert not grade("ANSWER: (C)", problem.kind, problem.gold, problem.options).correct


@pytest.mark.parametrize("given, gold, correct", [
    ("0.75", "\\frac{3}{4}", True), ("\\frac{3}{4}", "0.75", True), ("3/4", "0.75", True),
    ("\\dfrac{3}{4}", "3/4", True), ("\\boxed{0.75}", "3/4", True), ("$0.75$", "0.75", True),
    ("0.7500009", "0.75", True), ("0.750002", "0.75", False), ("1,234", "1234", True),
    ("1234", "1,234", True), ("1,235", "1234", False), ("50%", "50", True), ("-2", "2", False),
    ("-0.5", "-\\frac{1}{2}", True), ("0.5", "-\\frac{1}{2}", False),
    ("\\boxed{-\\frac{1}{2}}", "-1/2", True), ("10", "10\\%", True), ("10.0\\%", "10", True)])
def test_numeric_answers_within_1e_6(given, gold, correct):
    assert grade(f"ANSWER: {given}", "numeric", gold, {}).correct is correct


def test_parse_number_shapes():
    assert parse_number("\\frac{-3}{4}") == -0.75
    assert parse_number("1,234.5") == 1234.5
    assert parse_number("\\boxed{7}") == 7
    assert parse_number("x = 7") is None
    assert parse_number("1/0") is None


def test_short_answers_match_after_normalising():
    assert grade("ANSWER: The Eiffel Tower.", "short", "eiffel tower", {}).correct
    assert grade("ANSWER: leonardo  da vinci", "short", "Leonardo da Vinci", {}).correct
    assert not grade("ANSWER: Eiffel", "short", "eiffel tower", {}).correct
    # The last ANSWER line counts.
    assert grade("ANSWER: Paris\nOn second thought:\nANSWER: Rome", "short", "Rome", {}).correct


@pytest.mark.parametrize("kind, gold, options", [("choice", "B", OPTIONS),
                                                  ("numeric", "4", {}), ("short", "four", {})])
def test_no_answer_line_is_unparsed_and_wrong(kind, gold, options):
    graded = grade("The answer is B, which is 4 (four).", kind, gold, options)
    assert graded.correct is False and graded.parsed is None
    assert graded.as_record()["unparsed"] is True


def test_unparsed_answers_stay_in_the_accuracy_denominator(tmp_path, monkeypatch):
    # The rules (--correctness rules): p1 answers B (right), p2 gives no ANSWER line, p3
    # answers C (wrong).
    path = data.write(tmp_path / "mmlu.jsonl",
                      [data.weighted(p, {"visual": 1.0}) for p in ("p1", "p2", "p3")])
    table = {f"{p}/{c}": {"visual": 3} for p in ("p1", "p2", "p3")
             for c in ("baseline", "discovery", "oracle")}
    roles = Roles(target=scripted_target(answer={"p1": "B", "p2": "", "p3": "C"}),
                  user=passive_user, judge=judge_table(table)).install(monkeypatch)
    metrics, records, _ = evaluate(path, tmp_path / "out", roles, correctness="rules")
    for condition in ("baseline", "discovery", "oracle"):
        accuracy = metrics["accuracy"][condition]
        assert accuracy["mean"] == pytest.approx(1 / 3)
        assert accuracy["n"] == 3 and accuracy["n_unparsed"] == 1
    unparsed = next(r for r in records if r["key"] == "mmlu/p2/baseline")
    assert unparsed["correctness"] == {"correct": False, "parsed": None, "unparsed": True,
                                       "judged": False}
    assert "unparsed" in (tmp_path / "out" / "report.html").read_text()


# --- The release format's validation --------------------------------------------------------


def _unknown_preference(problem_id: str = "bad") -> dict:
    record = data.weighted(problem_id, {"visual": 0.5, "brevity": 0.5})
    record["evaluation_rubric"]["evaluation_criteria"][1]["preference"] = "humour"
    return record


def test_a_rubric_naming_an_unknown_preference_is_invalid(tmp_path):
    path = data.write(tmp_path / "mmlu.jsonl", [data.weighted("p1", {"visual": 1.0}),
                                                _unknown_preference()])
    dataset = load(path)
    assert [i.key for i in dataset.instances] == ["mmlu/p1"]
    (invalid,) = dataset.invalid
    assert invalid.problem_id == "bad"
    assert invalid.field == "evaluation_rubric.evaluation_criteria[1].preference"
    assert "'humour' names no preference" in invalid.problem
    assert invalid.where.endswith("mmlu.jsonl line 3")  # line 1 is the metadata
    with pytest.raises(InputError, match="(?s)1 invalid record.*--skip-invalid.*humour"):
        require_valid(dataset, skip_invalid=False)
    require_valid(dataset, skip_invalid=True)


def _criteria_of(record: dict) -> list[dict]:
    return record["evaluation_rubric"]["evaluation_criteria"]


def test_weights_levels_and_ids_are_validated(tmp_path):
    negative = data.weighted("negative", {"visual": 1.2, "brevity": -0.2})
    level_7 = data.weighted("level7", {"visual": 1.0})
    _criteria_of(level_7)[0]["levels"] = [{"score": 1, "description": "no"},
                                           {"score": 7, "description": "beyond"}]
    text_weight = data.weighted("text", {"visual": 1.0})
    _criteria_of(text_weight)[0]["weight"] = "high"
    zero = data.weighted("zero", {"visual": 0.0, "brevity": 0.0})
    no_id = data.weighted("x", {"visual": 1.0})
    del no_id["problem_id"]
    no_rubric = data.weighted("norubric", {"visual": 1.0})
    no_rubric["evaluation_rubric"] = {"evaluation_criteria": []}
    path = data.write(tmp_path / "mmlu.jsonl", [
        data.weighted("ok", {"visual": 1.0}), negative, level_7, text_weight, zero, no_id,
        no_rubric, data.weighted("ok", {"visual": 1.0})])
    dataset = load(path)
    assert [i.key for i in dataset.instances] == ["mmlu/ok"]
    assert [(i.problem_id, i.field) for i in dataset.invalid] == [
        ("negative", "evaluation_rubric.evaluation_criteria[1].weight"),
        ("level7", "evaluation_rubric.evaluation_criteria[0].levels[1].score"),
        ("text", "evaluation_rubric.evaluation_criteria[0].weight"),
        ("zero", "evaluation_rubric.evaluation_criteria"),
        (None, "problem_id"),
        ("norubric", "evaluation_rubric.evaluation_criteria"),
        ("ok", "problem_id")]
    assert "-0.2 is negative" in dataset.invalid[0].problem
    assert "7 is not in 1-5" in dataset.invalid[1].problem
    assert "repeats" in dataset.invalid[-1].problem


def test_weights_are_normalised_and_defaulted_with_warnings(tmp_path):
    path = data.write(tmp_path / "mmlu.jsonl", [
        data.weighted("exact", {"visual": 0.75, "brevity": 0.25}),
        data.weighted("sum4", {"visual": 3.0, "brevity": 1.0}),
        data.weighted("slightly", {"visual": 0.52, "brevity": 0.5}),
        data.weighted("missing", {"visual": None, "brevity": None, "tone": None}),
        data.weighted("onemissing", {"visual": 0.5, "brevity": None})])
    by_id = {i.problem_id: i for i in load(path).instances}

    def weights(pid):
        return [(c.weight, c.normalised_weight) for c in by_id[pid].criteria]

    assert weights("exact") == [(0.75, 0.75), (0.25, 0.25)]
    assert not by_id["exact"].renormalised and by_id["exact"].warnings == []
    assert weights("sum4") == [(3.0, 0.75), (1.0, 0.25)]
    assert by_id["sum4"].renormalised and by_id["sum4"].warnings == ["weights sum to 4, far from 1"]
    # 1.02 is within the tolerance: renormalised, without a warning.
    assert by_id["slightly"].renormalised and by_id["slightly"].warnings == []
    assert sum(c.normalised_weight for c in by_id["slightly"].criteria) == pytest.approx(1.0)
    assert weights("missing") == [(pytest.approx(1 / 3), pytest.approx(1 / 3))] * 3
    assert by_id["missing"].warnings == [f"{n}: no weight, 1/3 used"
                                         for n in ("visual", "brevity", "tone")]
    # The release's default is 1/n of all criteria, even beside given weights: 0.5 + 0.5.
    assert weights("onemissing") == [(0.5, 0.5), (0.5, 0.5)]
    assert by_id["onemissing"].warnings == ["brevity: no weight, 1/2 used"]


def test_the_task_is_the_metadata_dataset_else_the_file_stem(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "empty").mkdir()
    data.write(tmp_path / "a.jsonl", [data.weighted("p1", {"visual": 1.0})], dataset="MMLU-pro")
    data.write(tmp_path / "sub" / "b_stem.jsonl", [data.weighted("p1", {"visual": 1.0})],
               dataset=None)
    assert [i.key for i in load(tmp_path).instances] == ["MMLU-pro/p1", "b_stem/p1"]
    with pytest.raises(InputError, match="no .jsonl files"):
        load(tmp_path / "empty")


def test_invalid_input_is_refused_before_anything_is_written(tmp_path, monkeypatch):
    path = data.write(tmp_path / "mmlu.jsonl", [data.weighted("p1", {"visual": 1.0}),
                                                _unknown_preference()])
    roles = Roles(target=scripted_target(), user=passive_user,
                  judge=judge_table({})).install(monkeypatch)
    with pytest.raises(InputError, match="humour"):
        evaluate(path, tmp_path / "out", roles)
    assert not (tmp_path / "out").exists()
    assert roles.calls == []


def test_skip_invalid_runs_the_rest_and_lists_the_skipped(tmp_path, monkeypatch):
    path = data.write(tmp_path / "mmlu.jsonl", [data.weighted("p1", {"visual": 1.0}),
                                                _unknown_preference()])
    table = {f"p1/{c}": {"visual": s} for c, s in
             (("baseline", 2), ("discovery", 3), ("oracle", 4))}
    roles = Roles(target=scripted_target(), user=passive_user,
                  judge=judge_table(table)).install(monkeypatch)
    metrics, records, outcome = evaluate(path, tmp_path / "out", roles, skip_invalid=True)
    assert outcome.complete and metrics["n_planned_instances"] == 1
    assert {r["instance"] for r in records if "instance" in r} == {"mmlu/p1"}
    assert metrics["normalign"]["overall"]["value"] == pytest.approx(50.0)
    (skipped,) = metrics["skipped_invalid"]
    assert skipped["problem_id"] == "bad"
    assert skipped["field"] == "evaluation_rubric.evaluation_criteria[1].preference"
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["skipped_invalid"] == [skipped]
    assert manifest["config"]["skip_invalid"] is True
    report = (tmp_path / "out" / "report.html").read_text()
    assert "1 invalid record(s) skipped" in report and "names no preference" in report


@pytest.mark.parametrize("flags, message", [
    (["--user", "chatty"], "--user takes 'passive' or 'collaborative' (got 'chatty')"),
    (["--scoring", "lenient"], "--scoring takes 'strict' or 'release' (got 'lenient')"),
    (["--correctness", "lenient"], "--correctness takes 'judge' or 'rules' (got 'lenient')"),
    (["--conditions", "baseline,sideways"], "--conditions takes baseline, discovery, oracle"),
])
def test_bad_options_are_one_line_exit_2_and_write_nothing(tmp_path, flags, message):
    from tests.cli_runner import personalens

    path = data.write(tmp_path / "mmlu.jsonl", [data.two_preferences("p1")])
    result = personalens("prefdisco", "eval", "--data", path, "--out", tmp_path / "run",
                         "--model", "scripted", *flags)
    assert result.returncode == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()
