"""PRISK accuracy: rule-based scoring of benchmark answers (GSM8K, MMLU, CommonsenseQA).

`check_answer` returns {"parsed", "correct"}; an answer no rule reads has parsed None and
correct False: it counts as wrong, and the caller also reports how many were unparsed.

Without choices (GSM8K-style) the answer is the LAST number in the response, the GSM8K
convention that the final figure is the result ("3 apples ... so 5 in total" → 5). The gold may
be "72" or a full solution ending "#### 72"; the two compare numerically within 1e-6.

With choices the answer is a letter (A for choices[0]), from the first rule that reads one:
  1. the last "ANSWER:" line whose value is a letter ("B", "(B)", "B) text") or one option;
  2. else the last "answer is X", "answer is (X)", "answer: X" or "answer is: X" in the text;
  3. else a lone letter ("B", "(B)", "**B**") on the last non-empty line;
  4. else the one option whose text the response names (case-insensitive, whole words); two
     or more options named is ambiguous, so unparsed.
Only letters of the question's options count (E is no answer to a four-option question).
The gold may be a letter ("B"), a 0-based index as MMLU rows store it ("1" → B) or the
option's text, as some CommonsenseQA rows do. The pieces are read by `models.final_answer`.
"""

import re
from string import ascii_uppercase

from personalens.models.final_answer import answer_lines, close, last_number, option_letter

_ANSWER_PHRASE = r"(?i:answer(?:\s+is)?\s*:?)\s*\(?(?P<letter>[{letters}])\)?(?![A-Za-z])"


def check_answer(response: str, *, answer: str, choices: tuple[str, ...],
                 subject: str) -> dict:
    """{"parsed": the response's answer (a number as text, or a letter) or None, "correct"};
    a gold `gold_answer` cannot read is a ValueError naming `subject`."""
    gold = gold_answer(answer, choices, subject)
    parsed = _letter(response, choices) if choices else last_number(response)
    if choices or parsed is None:
        return {"parsed": parsed, "correct": parsed == gold}
    return {"parsed": parsed, "correct": close(float(parsed), float(gold))}


def gold_answer(answer: str, choices: tuple[str, ...], subject: str) -> str:
    """The gold as the rules compare it (a letter, or the number as text); ValueError when it
    cannot be read, so a loader can reject the record before anything runs."""
    if choices:
        return _gold_letter(answer, choices, subject)
    # GSM8K's answer field is the worked solution; the result follows the last "####".
    number = last_number(str(answer).rsplit("####", 1)[-1])
    if number is None:
        raise ValueError(f"gold answer {answer!r} of a {subject or 'no-choice'} question is "
                         "not a number")
    return repr(float(number))  # repr gives back the very float


def _gold_letter(answer: str, choices: tuple[str, ...], subject: str) -> str:
    letters = ascii_uppercase[:len(choices)]
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


def _letter(response: str, choices: tuple[str, ...]) -> str | None:
    letters = ascii_uppercase[:len(choices)]
    answers = (option_letter(value, letters) or _named_option(value, choices, whole=True)
               for value in reversed(answer_lines(response)))
    phrases = re.findall(_ANSWER_PHRASE.format(letters=letters), response)
    lines = [line for line in response.splitlines() if line.strip()] or [""]
    return (next(filter(None, answers), None)  # rule 1: the last ANSWER line that reads
            or (phrases[-1] if phrases else None)  # rule 2: the last answer phrase
            or option_letter(lines[-1], letters, alone=True)  # rule 3: a lone last line
            or _named_option(response, choices, whole=False))  # rule 4: one option named


def _named_option(text: str, choices: tuple[str, ...], *, whole: bool) -> str | None:
    """The letter of the one option the text names: as the whole text, or anywhere in it."""
    letters, folded = ascii_uppercase[:len(choices)], text.strip().strip(".\"'*").lower()
    named = {letters[i] for i, option in enumerate(choices) if option.strip() and (
        folded == option.strip().lower() if whole else
        re.search(rf"(?<!\w){re.escape(option.strip())}(?!\w)", text, re.I))}
    return named.pop() if len(named) == 1 else None
