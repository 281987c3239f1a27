"""Reading a model's final answer, once for the lenses that grade by rule (PrefDisco, PRISK),
which keep only their papers' rule order. `parse_number` reads one whole value (an ANSWER line's,
a gold's), `last_number` the final figure in free text (GSM8K): two conventions, kept apart."""

import re
import string

TOLERANCE = 1e-6
# Marks may open the line or close the word ("- **Answer**:"); a colon or bold right after the
# colon is not the answer ("Answer:: B", "**ANSWER:** B"), one after a space is ("ANSWER: :").
# The value may be on the next line ("**Answer:**\nB"); a heading never swallows an answer line.
_OPENING = r"\W*answer[^\w:]*:+"
_ANSWER_LINE = re.compile(rf"^{_OPENING}\**[^\S\n]*(?:\n(?!{_OPENING})\s*)?(.*?)\s*$", re.I | re.M)
_BOXED = re.compile(r"\\boxed\{(.*)\}")
_FRAC = re.compile(r"^(-?)\\d?frac\{(-?[\d.]+)\}\{(-?[\d.]+)\}$")
_SLASH = re.compile(r"()(-?\d+(?:\.\d+)?)/(-?\d+(?:\.\d+)?)")  # _FRAC's groups; no outer sign
# Thousands groups of three digits only ("1,2345" is two numbers); "5-3" is 5 and 3, not -3.
_NUMBER = re.compile(r"(?<![\w.])(?P<sign>[-−])?\$?(?P<int>\d{1,3}(?:,\d{3})+(?!\d)|\d+)"
                     r"(?P<frac>\.\d+)?")


def answer_lines(text: str) -> list[str]:
    """Every `ANSWER:` line's value, in order (it may start on the next line); no blank one."""
    return [value for value in _ANSWER_LINE.findall(text) if value]


def option_letter(text: str, letters: str, *, alone: bool = False) -> str | None:
    """The letter of `letters` the text opens with, among brackets, stars, dots or colons: 'B',
    '(B)', '**B**', '[B]', 'B. text', 'B: text'; a space must end the marks, so 'Because' and
    'B.Sc' are no letter. `alone`: nothing else may follow."""
    match = re.fullmatch(rf"[\s*(\[]*([{letters}])[\s*)\].:]*(\s.*)?", text, re.S)
    return match[1] if match and not (alone and match[2]) else None


def normalise_text(text: str) -> str:
    """Lower case, no punctuation, no articles, single spaces (SQuAD-style)."""
    text = text.lower().translate(str.maketrans("", "", string.punctuation))
    return " ".join(w for w in text.split() if w not in {"a", "an", "the"})


def parse_number(text: str) -> float | None:
    """A number from '1,234', '-3.5', '3/4', '\\frac{3}{4}', '$12$', '\\boxed{7}', '50%'."""
    text = text.strip().strip("$").strip()
    if boxed := _BOXED.search(text):
        text = boxed.group(1).strip()
    # "\\%" before "%": removing the "%" first would leave the backslash.
    text = text.replace(",", "").replace("\\!", "").removesuffix("\\%").removesuffix("%").strip()
    if frac := _FRAC.match(text) or _SLASH.fullmatch(text):
        numerator, denominator = float(frac[2]), float(frac[3])
        return (-1.0 if frac[1] else 1.0) * numerator / denominator if denominator else None
    try:
        return float(text)
    except ValueError:
        return None


def last_number(text: str) -> str | None:
    """The last number in free text as plain digits ('$1,250.' → '1250', '−3' → '-3')."""
    numbers = [("-" if sign else "") + digits.replace(",", "") + fraction
               for sign, digits, fraction in _NUMBER.findall(text)]
    return numbers[-1] if numbers else None


def close(given: float, gold: float) -> bool:
    """Equal within the tolerance (|difference| <= 1e-6, the bound itself included)."""
    return abs(given - gold) <= TOLERANCE
