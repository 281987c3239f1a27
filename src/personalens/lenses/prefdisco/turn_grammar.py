"""GBNF grammars (llama.cpp's constrained decoding) for a discovery turn in the release's wire
format, so a small local model cannot break it.

A turn is `###ACTION###: ask_question` or `###ACTION###: final_answer`, a newline, then
`###RESPONSE###: ` and the text. A question is one line. A final answer is free text; when the
rules check correctness (`answer_line`) it ends with the line `ANSWER: <value>`, whose shape
follows the problem: an option letter, a number, or a short line. When the budget decides the
action (`must`), only that action is allowed.

Lengths are bounded in characters: a whole turn is at most `max_tokens` characters, and every
token the grammar admits writes at least one, so a model that never stops still writes its
`ANSWER:` line before `max_tokens` would cut it off. The bound is also at most MAX_TURN_CHARS
whatever `max_tokens` is: llama.cpp expands a bounded repetition into one rule per character,
and with the release's 8192 tokens (a bound of ~8,000 characters) the bundled SmolLM2 took
minutes per answer and wrote past the bound (measured: 1,024 characters, 6 s; 2,048, 84 s and
not held). A token of English text averages about four characters, so a local model's answer
is held to about 250 tokens. Only a model whose provider decodes under a grammar
(`ChatModel.constrains_output`) is sent one; an API model's request is unchanged.
"""

from personalens.lenses.prefdisco.problems import Problem
from personalens.models.dialogue import Action

ACTION_NAMES: dict[Action, str] = {"ask": "ask_question", "final": "final_answer"}
QUESTION_CHARS = 240  # one question (or two), one line
USER_REPLY_CHARS = 300  # the simulated user's reply: one paragraph (its token cap is 300)
SHORT_ANSWER_CHARS = 60
MAX_TURN_CHARS = 1024  # the longest turn a grammar admits (see the module docstring)
_LETTERS = "ABCDEFGHIJ"
# A denominator never starts with 0, so it is never 0 (answer_check would not read n/0).
_NUMBER = '"-"? [0-9]{1,12} ("." [0-9]{1,6})? ("/" [1-9] [0-9]{0,11})?'
_NUMBER_CHARS = 1 + 12 + 7 + 13
# A character that is not whitespace to Python's str.strip and re's \s: a question or a short
# answer starts with one, so neither strips to nothing when it is read.
_VISIBLE = "[^\\x00-\\x20\\x7f\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]"
_ANSWER_LINE = "ANSWER: "


def literal(text: str) -> str:
    """`text` as a GBNF string literal."""
    escaped = (text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
               .replace("\r", "\\r").replace("\t", "\\t"))
    return f'"{escaped}"'


def _opening(action: Action) -> str:
    return f"###ACTION###: {ACTION_NAMES[action]}\n###RESPONSE###: "


def answer_value_rule(problem: Problem | None) -> tuple[str, int]:
    """(GBNF of the value after `ANSWER: `, its longest length); see answer_check for how the
    value is read."""
    if problem is not None and problem.kind == "choice":
        letters = list(problem.options) or list(_LETTERS)  # no options: any letter A-J is read
        return ("(" + " | ".join(literal(letter) for letter in letters) + ")",
                max(len(letter) for letter in letters))
    if problem is not None and problem.kind == "numeric":
        return _NUMBER, _NUMBER_CHARS
    return f"{_VISIBLE} [^\\n]{{0,{SHORT_ANSWER_CHARS - 1}}}", SHORT_ANSWER_CHARS


def turn_grammar(must: Action | None, problem: Problem | None, max_tokens: int,
                 answer_line: bool = True) -> str:
    """The grammar of one turn: either action, or only `must`."""
    actions: list[Action] = [must] if must is not None else ["ask", "final"]
    max_tokens = min(max_tokens, MAX_TURN_CHARS)
    rules = ["root ::= " + " | ".join(actions)]
    if "ask" in actions:
        opening = _opening("ask")
        chars = max(1, min(QUESTION_CHARS, max_tokens - len(opening)))
        rules += ["ask ::= " + literal(opening) + " question",
                  # One line that starts with a visible character.
                  f"question ::= {_VISIBLE} [^\\n]{{0,{chars - 1}}}"]
    if "final" in actions:
        opening = _opening("final")
        rules += ["final ::= " + literal(opening) + " answer",
                  *_answer_rules(problem, max_tokens - len(opening), answer_line)]
    return "\n".join(rules) + "\n"


def answer_grammar(problem: Problem | None, max_tokens: int, answer_line: bool = True) -> str:
    """The grammar of a single-turn answer (baseline, oracle): text, then (`answer_line`) the
    ANSWER line."""
    return "\n".join(["root ::= answer", *_answer_rules(
        problem, min(max_tokens, MAX_TURN_CHARS), answer_line)]) + "\n"


def _answer_rules(problem: Problem | None, chars: int, answer_line: bool) -> list[str]:
    """Free text of what `chars` leaves after the ANSWER line, then that line; without
    `answer_line`, free text of up to `chars` that starts with a visible character."""
    if not answer_line:
        return [f"answer ::= {_VISIBLE} [^\\x00]{{0,{max(0, chars - 1)}}}"]
    value, value_chars = answer_value_rule(problem)
    body = chars - len("\n" + _ANSWER_LINE) - value_chars
    rules = ["answer ::= " + (f"(body {literal(chr(10))})? " if body > 0 else "")
             + literal(_ANSWER_LINE) + " value", f"value ::= {value}"]
    if body > 0:
        # Any number of lines: the text cannot end the turn, only the ANSWER line can.
        rules.append(f"body ::= [^\\x00]{{1,{body}}}")
    return rules


def reply_grammar(chars: int) -> str:
    """The simulated user's reply: one paragraph of plain text, at most `chars` characters
    (it is asked for one or two sentences; a small model would otherwise run on)."""
    return f"root ::= {_VISIBLE} [^\\n]{{0,{max(0, chars - 1)}}}\n"
