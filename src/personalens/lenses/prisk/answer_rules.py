"""PRISK accuracy: rule-based scoring of benchmark answers (GSM8K, MMLU, CommonsenseQA).

`check_answer` returns {"parsed", "correct"}; an answer no rule reads has parsed None and
correct False: it counts as wrong, and the caller also reports how many were unparsed.

Without choices (GSM8K-style) the answer is the LAST number in the response, the GSM8K
convention that the final figure is the result ("3 apples ... so 5 in total" → 5). Thousands
commas ("1,250"), a "$" and a sentence-final "." are dropped; a leading "-" (or "−") makes it
negative unless it joins two numbers ("5-3" reads 5 and 3). The gold may be "72" or a full
solution ending "#### 72"; the two compare numerically within 1e-6.

With choices the answer is a letter (A for choices[0]), from the first rule that reads one:
  1. the last line starting "ANSWER:" (markdown ** allowed) whose value is a letter — "B",
     "(B)", "B." or "B) text" — or exactly one option's text;
  2. else the last "answer is X", "answer is (X)", "answer: X" or "answer is: X" in the text;
  3. else a lone letter ("B", "(B)", "**B**") on the last non-empty line;
  4. else the one option whose text the response names (case-insensitive, whole words); two
     or more options named is ambiguous, so unparsed.
Only letters of the question's options count (E is no answer to a four-option question).
The gold may be a letter ("B"), a 0-based index as MMLU rows store it ("1" → B) or the
option's text, as some CommonsenseQA rows do.
"""

import re

_NUMBER = re.compile(r"(?<![\w.])(?P<sign>[-−])?\$?(?P<int>\d{1,3}(?:,\d{3})+(?!\d)|\d+)"
                     r"(?P<frac>\.\d+)?")
_ANSWER_LINE = re.compile(r"^\W*answer\W*:\**\s*(?P<value>.*?)\s*$", re.I | re.M)
_ANSWER_PHRASE = r"(?i:answer(?:\s+is)?\s*:?)\s*\(?(?P<letter>[{letters}])\)?(?![A-Za-z])"
_LONE_LETTER = r"[\s*(\[]*(?P<letter>[{letters}])[\s*)\].:]*"


def check_answer(response: str, *, answer: str, choices: tuple[str, ...],
                 subject: str) -> dict:
    """{"parsed": the response's answer (a number as text, or a letter) or None, "correct"}.

    `subject` only names the question in the error raised for a gold answer that is neither a
    number (no choices) nor a letter, index or option text (choices)."""
    if not choices:
        gold = _gold_number(answer, subject)
        numbers = list(_NUMBER.finditer(response))
        parsed = _number_text(numbers[-1]) if numbers else None
        return {"parsed": parsed,
                "correct": parsed is not None and abs(float(parsed) - gold) <= 1e-6}
    gold_letter = _gold_letter(answer, choices, subject)
    parsed = _letter(response, choices)
    return {"parsed": parsed, "correct": parsed == gold_letter}


def _number_text(match: re.Match) -> str:
    sign = "-" if match["sign"] else ""
    return sign + match["int"].replace(",", "") + (match["frac"] or "")


def gold_answer(answer: str, choices: tuple[str, ...], subject: str) -> str:
    """The gold as the rules compare it (a letter, or the number as text); ValueError when it
    cannot be read, so a loader can reject the record before anything runs."""
    if choices:
        return _gold_letter(answer, choices, subject)
    return repr(_gold_number(answer, subject))


def _gold_number(answer: str, subject: str) -> float:
    # GSM8K's answer field is the worked solution; the result follows the last "####".
    numbers = list(_NUMBER.finditer(str(answer).rsplit("####", 1)[-1]))
    if not numbers:
        raise ValueError(f"gold answer {answer!r} of a {subject or 'no-choice'} question is "
                         "not a number")
    return float(_number_text(numbers[-1]))


def _gold_letter(answer: str, choices: tuple[str, ...], subject: str) -> str:
    letters = _letters(choices)
    gold = str(answer).strip()
    if gold.upper() in letters and len(gold) == 1:
        return gold.upper()
    if gold.isdigit() and int(gold) < len(choices):
        return letters[int(gold)]  # MMLU rows store the 0-based index of the right option
    named = [letters[i] for i, text in enumerate(choices) if text.strip().lower() == gold.lower()]
    if len(named) != 1:
        raise ValueError(f"gold answer {answer!r} of a {subject or 'multiple-choice'} question "
                         f"is not a letter, index or option of {list(choices)}")
    return named[0]


def _letters(choices: tuple[str, ...]) -> str:
    return "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[:len(choices)]


def _letter(response: str, choices: tuple[str, ...]) -> str | None:
    letters = _letters(choices)
    for line in reversed(_ANSWER_LINE.findall(response)):  # rule 1: the explicit answer line
        lead = re.fullmatch(_LONE_LETTER.format(letters=letters) + r"(?:\s.*)?", line)
        if lead:
            return lead["letter"]
        if named := _named_option(line, choices, whole=True):
            return named
    phrases = list(re.finditer(_ANSWER_PHRASE.format(letters=letters), response))
    if phrases:  # rule 2
        return phrases[-1]["letter"]
    lines = [line for line in response.splitlines() if line.strip()]
    if lines and (lone := re.fullmatch(_LONE_LETTER.format(letters=letters), lines[-1])):
        return lone["letter"]  # rule 3
    return _named_option(response, choices, whole=False)  # rule 4


def _named_option(text: str, choices: tuple[str, ...], *, whole: bool) -> str | None:
    """The letter of the one option the text names: as the whole text, or anywhere in it."""
    letters, folded = _letters(choices), text.strip().strip(".\"'*").lower()
    named = {letters[i] for i, option in enumerate(choices) if option.strip() and (
        folded == option.strip().lower() if whole else
        re.search(rf"(?<!\w){re.escape(option.strip())}(?!\w)", text, re.I))}
    return named.pop() if len(named) == 1 else None
