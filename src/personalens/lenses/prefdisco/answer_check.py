"""Rule-based correctness: every final answer ends with `ANSWER: <answer>`.

Multiple choice compares the option letter; numeric answers compare numbers (|difference| <=
1e-6, fractions and LaTeX \\frac understood); short answers compare normalised text. An answer
with no `ANSWER:` line, or one that does not parse for its kind, is wrong and counted as
unparsed; it stays in the denominator. Open-ended golds go to a judge (`grade_open`).
"""

import re
import string
from dataclasses import dataclass

TOLERANCE = 1e-6
_ANSWER_LINE = re.compile(r"^\s*\**\s*ANSWER\s*\**\s*:\s*(.+?)\s*$", re.I | re.M)
_BOXED = re.compile(r"\\boxed\{(.*)\}")
_FRAC = re.compile(r"^(-?)\\d?frac\{(-?[\d.]+)\}\{(-?[\d.]+)\}$")


@dataclass(frozen=True)
class Graded:
    correct: bool
    parsed: str | None  # what was read from the answer; None: unparsed (counted as wrong)

    def as_record(self) -> dict:
        return {"correct": self.correct, "parsed": self.parsed, "unparsed": self.parsed is None}


def answer_line(response: str) -> str | None:
    """The text after the last `ANSWER:` line, else None."""
    found = _ANSWER_LINE.findall(response)
    return found[-1].strip() if found else None


def parse_number(text: str) -> float | None:
    """A number from '1,234', '-3.5', '3/4', '\\frac{3}{4}', '$12$', '\\boxed{7}', '50%'."""
    text = text.strip().strip("$").strip()
    boxed = _BOXED.search(text)
    if boxed:
        text = boxed.group(1).strip()
    # "\\%" before "%": removing the "%" first would leave the backslash.
    text = text.replace(",", "").replace("\\!", "").removesuffix("\\%").removesuffix("%").strip()
    frac = _FRAC.match(text)
    if frac:
        sign = -1.0 if frac.group(1) else 1.0
        numerator, denominator = float(frac.group(2)), float(frac.group(3))
        return sign * numerator / denominator if denominator else None
    if re.fullmatch(r"-?\d+(\.\d+)?/-?\d+(\.\d+)?", text):
        numerator, denominator = (float(p) for p in text.split("/"))
        return numerator / denominator if denominator else None
    try:
        return float(text)
    except ValueError:
        return None


def parse_letter(text: str, options: dict[str, str]) -> str | None:
    """The option letter in 'B', '(B)', 'B)', 'B. text' or the exact text of one option.

    With no options (a source that writes them inside the question, as MaScQA does), any
    letter A-J is read."""
    cleaned = text.strip().strip("*").strip()
    match = re.match(r"^\(?([A-J])\)?(?:[.):\s]|$)", cleaned)
    if match and (match.group(1) in options or not options):
        return match.group(1)
    by_text = {normalise_text(v): k for k, v in options.items()}
    return by_text.get(normalise_text(cleaned))


def normalise_text(text: str) -> str:
    """Lower case, no punctuation, no articles, single spaces (SQuAD-style)."""
    text = text.lower().translate(str.maketrans("", "", string.punctuation))
    return " ".join(w for w in text.split() if w not in {"a", "an", "the"})


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
        return Graded(target is not None and abs(number - target) <= TOLERANCE, f"{number:g}")
    return Graded(normalise_text(given) == normalise_text(gold), given)
