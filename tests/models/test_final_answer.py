"""The final-answer primitives both rule-graded lenses read with (PrefDisco, PRISK): each case
is computed by hand, and each near miss is one a looser or stricter rule would get wrong."""

import pytest

from personalens.models.final_answer import (
    TOLERANCE,
    answer_lines,
    close,
    last_number,
    normalise_text,
    option_letter,
    parse_number,
)

# -- the ANSWER line --------------------------------------------------------------------------


def test_every_answer_line_in_order_so_a_lens_can_take_the_last():
    assert answer_lines("ANSWER: A\nWait, no.\nANSWER: B") == ["A", "B"]
    assert answer_lines("Reasoning only.") == []


@pytest.mark.parametrize(("response", "value"), [
    ("ANSWER: B", "B"),
    ("answer : B. 4  ", "B. 4"),  # any case, a space before the colon, trailing blanks dropped
    ("**ANSWER:** B", "B"),  # the bold closed after the colon is not part of the answer
    ("**Answer**: (C)", "(C)"),
    ("- Answer: 7", "7"),  # a list mark, a quote or a heading may open the line
    ("> ANSWER: 7", "7"),
    ("### Answer: 7", "7"),
    ("Answer:\nB", "B"),  # the value on the next line
    ("Answer:: B", "B"),
    ("ANSWER: *", "*"),  # a star or a colon after the space is the answer's own
    ("ANSWER: :)", ":)"),
])
def test_the_answer_line_in_its_spellings(response, value):
    assert answer_lines(f"Some reasoning.\n{response}\n") == [value]


@pytest.mark.parametrize("response", [
    "The ANSWER: B is inline",  # words before it: not an answer line
    "Final answer: B",
    "Answers: B",  # another word
    "ANSWER B",  # no colon
    "ANSWER:   ",  # blank: no answer
])
def test_what_is_no_answer_line(response):
    assert answer_lines(response) == []


def test_a_blank_answer_line_leaves_the_earlier_one():
    assert answer_lines("ANSWER: B\nANSWER:") == ["B"]


def test_a_heading_does_not_swallow_the_answer_line_below_it():
    assert answer_lines("**Answer:**\nANSWER: B") == ["B"]
    assert answer_lines("Answer:\n\nANSWER: 7") == ["7"]


# -- option letters ---------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["B", " B ", "(B)", "B)", "**B**", "** B", "[B]", "B.", "B:",
                                  "B. Paris", "B: four", "B) London", "(B) London"])
def test_an_option_letter_in_its_shapes(text):
    assert option_letter(text, "ABCD") == "B"


@pytest.mark.parametrize("text", [
    "E",  # not a letter of this question's four options
    "b",  # lower case: the article "a", not option A
    "Because",  # a word that starts with B
    "B.Sc",  # marks not ended by a space
    "B, C",
    "The answer is B",  # the letter must open the text
    "",
])
def test_what_is_no_option_letter(text):
    assert option_letter(text, "ABCD") is None


def test_the_letters_are_the_questions():
    assert option_letter("E", "ABCDE") == "E"
    assert option_letter("J", "ABCDEFGHIJ") == "J"


def test_a_lone_letter_has_nothing_after_it():
    assert option_letter("(C)", "ABCD", alone=True) == "C"
    assert option_letter("**C.**", "ABCD", alone=True) == "C"
    assert option_letter("C. Rome", "ABCD", alone=True) is None
    assert option_letter("C. Rome", "ABCD") == "C"


# -- text -------------------------------------------------------------------------------------


def test_text_is_normalised_squad_style():
    assert normalise_text("The Eiffel  Tower.") == "eiffel tower"
    assert normalise_text("An apple, a day!") == "apple day"
    assert normalise_text("Theatre") == "theatre"  # an article only as a whole word


# -- one whole value as a number --------------------------------------------------------------


@pytest.mark.parametrize(("text", "number"), [
    ("72", 72.0), ("-3.5", -3.5), ("1,234.5", 1234.5), ("1,234", 1234.0),
    ("3/4", 0.75), ("-3/4", -0.75), ("\\frac{3}{4}", 0.75), ("\\dfrac{3}{4}", 0.75),
    ("-\\frac{1}{2}", -0.5), ("\\frac{-3}{4}", -0.75),
    ("$12$", 12.0), ("\\boxed{7}", 7.0), ("\\boxed{-\\frac{1}{2}}", -0.5),
    ("50%", 50.0), ("10\\%", 10.0),
])
def test_a_whole_value_read_as_a_number(text, number):
    assert parse_number(text) == number


@pytest.mark.parametrize("text", ["x = 7", "seven", "1/0", "\\frac{1}{0}", "", "7 apples"])
def test_what_is_no_whole_number(text):
    assert parse_number(text) is None


# -- the last number in free text (GSM8K) -----------------------------------------------------


@pytest.mark.parametrize(("text", "number"), [
    ("She sold 48 in April and 24 in May, so 72 in total.", "72"),  # the last, not the largest
    ("The total is $1,250.", "1250"),  # "$", thousands comma, full stop
    ("It costs 1,250.50 dollars", "1250.50"),
    ("1,2345", "2345"),  # not a thousands group: two numbers
    ("Count 1, 2, 3", "3"),  # a list, not 123
    ("The change is -3.", "-3"),
    ("The change is −3", "-3"),  # a typographic minus
    ("The loss: -$15", "-15"),
    ("The final score was 5-3", "3"),  # a hyphen between numbers is no minus sign
])
def test_the_last_number_in_free_text(text, number):
    assert last_number(text) == number


@pytest.mark.parametrize("text", ["I cannot tell.", "model v2", ""])
def test_free_text_without_a_number(text):
    assert last_number(text) is None


# -- the tolerance ----------------------------------------------------------------------------


def test_numbers_match_within_one_millionth_the_bound_included():
    assert TOLERANCE == 1e-6
    assert close(0.0, 1e-6)  # the bound itself
    assert not close(0.0, 1e-5)
    assert close(72.0, 72.0000009)
    assert not close(72.0, 72.0000011)
    assert close(0.75, parse_number("3/4"))
    assert not close(-3.0, 3.0)  # a lost sign is a different number
