"""PRISK accuracy rules: every rule, and the near misses each must not accept."""

import pytest

from personalens.lenses.prisk.answer_rules import check_answer

CITIES = ("Paris", "London", "Rome", "Berlin")


def _numeric(response: str, gold: str = "72") -> dict:
    return check_answer(response, answer=gold, choices=(), subject="gsm8k")


def _choice(response: str, gold: str = "C", choices: tuple[str, ...] = CITIES) -> dict:
    return check_answer(response, answer=gold, choices=choices, subject="geography")


# -- no choices: the last number ------------------------------------------------------------

def test_the_last_number_wins_not_one_in_the_middle():
    assert _numeric("She sold 48 in April and 24 in May, so 72 in total.") == \
        {"parsed": "72", "correct": True}
    # 72 appears, but the final figure is 48: wrong, not right.
    assert _numeric("72 is too many; she sold 48.") == {"parsed": "48", "correct": False}


@pytest.mark.parametrize(("response", "parsed"), [
    ("The total is $1,250.", "1250"),  # "$", thousands comma, sentence-final "."
    ("It costs 1,250.50 dollars", "1250.50"),
    ("The change is -3.", "-3"),
    ("The change is −3", "-3"),  # a typographic minus
    ("The loss: -$15", "-15"),
    ("The final score was 5-3", "3"),  # a hyphen between numbers is no minus sign
    ("Count 1, 2, 3", "3"),  # a list is not 1,2,3 read as one thousands number
    ("1,2345", "2345"),  # not a thousands group: read as two numbers
])
def test_number_forms(response, parsed):
    assert _numeric(response)["parsed"] == parsed


@pytest.mark.parametrize(("gold", "response", "correct"), [
    ("#### 72", "So 72.", True),
    ("Natalia sold 48/2 = 24 clips in May.\n#### 72", "72", True),  # full GSM8K solution
    ("72", "72.0", True),
    ("72", "72.5", False),
    ("1,250", "1250", True),
    ("#### -3", "The answer is -3", True),
    ("#### -3", "The answer is 3", False),  # a lost sign is wrong
])
def test_numeric_gold_forms_and_tolerance(gold, response, correct):
    assert _numeric(response, gold)["correct"] is correct


def test_tolerance_is_one_millionth():
    assert _numeric("72.0000009", "72")["correct"] is True
    assert _numeric("72.0000011", "72")["correct"] is False


def test_no_number_is_unparsed():
    assert _numeric("I cannot tell.") == {"parsed": None, "correct": False}


def test_a_gold_that_is_not_a_number_is_an_error():
    with pytest.raises(ValueError, match="gsm8k"):
        _numeric("72", "seventy-two")


# -- choices ------------------------------------------------------------------------------

def test_rule1_explicit_answer_line_beats_everything_else():
    response = "The answer is (B) at first sight, but no.\nANSWER: C\nB"
    assert _choice(response) == {"parsed": "C", "correct": True}
    assert _choice("**ANSWER:** (C)")["parsed"] == "C"
    assert _choice("Thinking...\nAnswer: C) Rome")["parsed"] == "C"
    assert _choice("ANSWER: B\nOn reflection:\nANSWER: C")["parsed"] == "C"  # the last line
    assert _choice("ANSWER: rome.")["parsed"] == "C"  # the line names one option's text


def test_rule1_needs_a_letter_of_this_question():
    # E is no option of a four-option question; "Because" only starts with B. Both fall through
    # to the next rules.
    assert _choice("ANSWER: E\nThe answer is C")["parsed"] == "C"
    assert _choice("ANSWER: Because Rome is the capital")["parsed"] == "C"  # rule 4: Rome


def test_rule2_answer_phrases():
    assert _choice("I believe the answer is (C), Rome.")["parsed"] == "C"
    assert _choice("Final answer: C because ...")["parsed"] == "C"
    assert _choice("The answer is: C")["parsed"] == "C"
    assert _choice("The answer is B. Wait, no: the answer is C.")["parsed"] == "C"  # the last
    # "answer is Boston" is a word, not the letter B; nothing else parses.
    assert _choice("The answer is Boston")["parsed"] is None
    # A lower-case "a" is the article, not option A.
    assert _choice("The answer is a tricky one.")["parsed"] is None


def test_rule3_lone_letter_on_the_last_line():
    assert _choice("Paris is lovely, London too.\n\n(C)\n")["parsed"] == "C"
    assert _choice("Reasoning.\n**C**")["parsed"] == "C"
    assert _choice("Reasoning.\nC.")["parsed"] == "C"
    # A letter on an earlier line is not the answer.
    assert _choice("C\nI am not sure any of them is right.")["parsed"] is None


def test_rule4_exactly_one_option_text():
    assert _choice("It must be ROME.") == {"parsed": "C", "correct": True}
    assert _choice("Either Rome or Paris.") == {"parsed": None, "correct": False}
    assert _choice("Romeo is a play.")["parsed"] is None  # whole words only


@pytest.mark.parametrize(("gold", "letter"), [
    ("C", "C"), ("c", "C"),
    ("2", "C"),  # MMLU's 0-based index
    ("0", "A"),
    ("Rome", "C"), ("rome", "C"),  # CommonsenseQA's option text
])
def test_gold_normalised_to_a_letter(gold, letter):
    assert _choice(f"ANSWER: {letter}", gold)["correct"] is True
    wrong = "A" if letter != "A" else "B"
    assert _choice(f"ANSWER: {wrong}", gold)["correct"] is False


def test_numeric_gold_with_numeric_options_is_an_index():
    # Options are the numbers 1..4; gold "1" is the index of option B ("2"), not option A.
    result = check_answer("ANSWER: B", answer="1", choices=("1", "2", "3", "4"), subject="math")
    assert result == {"parsed": "B", "correct": True}


@pytest.mark.parametrize("gold", ["E", "4", "Madrid", ""])
def test_a_gold_outside_the_options_is_an_error(gold):
    with pytest.raises(ValueError, match="geography"):
        _choice("ANSWER: C", gold)


def test_unparsed_choice_response():
    assert _choice("I would rather not say.") == {"parsed": None, "correct": False}
    assert _choice("") == {"parsed": None, "correct": False}
