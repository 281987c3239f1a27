"""Rule-based correctness: every final answer ends with `ANSWER: <answer>`.

Multiple choice compares the option letter; numeric answers compare numbers (|difference| <=
1e-6, fractions and LaTeX \\frac understood); short answers compare normalised text. An answer
with no `ANSWER:` line, or one that does not parse for its kind, is wrong and counted as
unparsed; it stays in the denominator. Open-ended golds go to a judge (`evaluation`).
"""

from dataclasses import dataclass

from personalens.models import final_answer
from personalens.models.final_answer import normalise_text, parse_number  # answer_check's API too


@dataclass(frozen=True)
class Graded:
    correct: bool
    parsed: str | None  # what was read from the answer; None: unparsed (counted as wrong)

    def as_record(self) -> dict:
        return {"correct": self.correct, "parsed": self.parsed, "unparsed": self.parsed is None}


def answer_line(response: str) -> str | None:
    """The text after the last `ANSWER:` line, else None."""
    return (final_answer.answer_lines(response) or [None])[-1]


def parse_letter(text: str, options: dict[str, str]) -> str | None:
    """The option letter in 'B', '(B)', 'B)', 'B. text' or the exact text of one option; with
    no options (a source that writes them in the question, as MaScQA does) any of A-J."""
    letter = final_answer.option_letter(text, "".join(options) or "ABCDEFGHIJ")
    return letter or {normalise_text(v): k for k, v in options.items()}.get(normalise_text(text))


def grade(response: str, kind: str, gold: str, options: dict[str, str]) -> Graded:
    """Rule-based grade for choice, numeric and short answers."""
    given = answer_line(response)
    if given is None:
        return Graded(False, None)
    if kind == "choice":
        letter = parse_letter(given, options)
        return Graded(letter == gold.strip().upper(), letter)
    if kind == "numeric":
        number, target = parse_number(given), parse_number(gold)
        if number is None:
            return Graded(False, None)
        return Graded(target is not None and final_answer.close(number, target), f"{number:g}")
    return Graded(normalise_text(given) == normalise_text(gold), given)
