"""The release's wire format for turns, and what the target is told in each condition under
`--protocol personalens` (the release's prompts are in `release_protocol`; the helpers that
write a problem, a persona and the ANSWER-line instruction serve both).

Every discovery turn is `###ACTION###: ask_question` or `###ACTION###: final_answer` (with or
without the release's quotes or brackets) followed by `###RESPONSE###: ...`, so a model prompted
for PrefDisco behaves here as it does there. What is judged is the RESPONSE part only.

A model that decodes under a grammar (local llama.cpp) is held to the format by one
(`turn_grammar`); a broken turn that can be read without a guess is repaired (`repair`) rather
than asked again.
"""

import json
import re

from personalens.lenses.prefdisco import turn_grammar
from personalens.lenses.prefdisco.problems import Problem
from personalens.models.completion import Message
from personalens.models.dialogue import Action, FormatBreak, ParsedTurn

_ACTION = re.compile(r"###\s*ACTION\s*###\s*:?\s*\[?\s*['\"]?\s*([A-Za-z_]+)\s*['\"]?\s*\]?")
_RESPONSE = re.compile(r"###\s*RESPONSE\s*###\s*:?\s*(.*)", re.S)
_ACTIONS = {name: action for action, name in turn_grammar.ACTION_NAMES.items()}
# What a repair reads: the markers without their hashes or in other cases ("Action: ask"),
# and the action's name spelled loosely ("ask question", "final", "answer").
_LOOSE_ACTION = re.compile(r"(?i)\baction\b[\s#*]*:?[\s*]*[\[('\"]*\s*"
                           r"(ask[ _-]?question|final[ _-]?answer|ask|question|final|answer)\b"
                           r"[\])'\"]*")
_LOOSE_RESPONSE = re.compile(r"(?ism)^[ \t#*]*response[ \t#*]*:[ \t*]*(.*)")
_ANY_ACTION_MARK = re.compile(r"(?i)\baction\b[\s#*]*:")


class WireFormat:
    """The release's turn format (see the module docstring). The grammar's final answer ends
    with an `ANSWER:` line of the problem's shape when the rules read it (`answer_line`)."""

    def __init__(self, problem: Problem | None = None, max_tokens: int = 1024,
                 answer_line: bool = True):
        self.problem = problem
        self.max_tokens = max_tokens
        self.answer_line = answer_line

    def grammar(self, must: Action | None) -> str:
        return turn_grammar.turn_grammar(must, self.problem, self.max_tokens, self.answer_line)

    def repair(self, reply: str, must: Action | None) -> ParsedTurn | None:
        """A broken turn read without a guess: markers written without hashes or in another
        case, or a loosely spelled action name; or, when the turn must be the answer and the
        reply names no action at all, the reply is the answer. Else None (asked again)."""
        action = _LOOSE_ACTION.search(reply)
        if action is not None:
            name = action.group(1).lower()
            kind: Action = "ask" if name.startswith("ask") or name == "question" else "final"
            rest = reply[action.end():]
            response = _LOOSE_RESPONSE.search(rest)
            text = (response.group(1) if response else rest).strip().lstrip(":").strip()
            return ParsedTurn(kind, text) if text else None
        if must == "final" and not _ANY_ACTION_MARK.search(reply):
            response = _LOOSE_RESPONSE.search(reply)
            text = (response.group(1) if response else reply).strip()
            return ParsedTurn("final", text) if text else None
        return None

    def parse(self, reply: str) -> ParsedTurn:
        action = _ACTION.search(reply)
        if action is None:
            raise FormatBreak("no ###ACTION### line")
        name = action.group(1).lower()
        if name not in _ACTIONS:
            raise FormatBreak(f"unknown action {name!r}")
        response = _RESPONSE.search(reply, action.end())
        if response is None or not response.group(1).strip():
            raise FormatBreak("no ###RESPONSE### text after the action")
        return ParsedTurn(_ACTIONS[name], response.group(1).strip())

    def correction(self, problem: str, must: Action | None) -> str:
        wanted = turn_grammar.ACTION_NAMES[must] if must else "ask_question or final_answer"
        return (f"That reply cannot be used ({problem}). Reply again in exactly this format:\n"
                f"###ACTION###: {wanted}\n###RESPONSE###: <your question or your full answer>")


def strip_wrapper(response: str) -> str:
    """A single-turn answer without the protocol wrapper, if a model added one anyway."""
    found = _RESPONSE.search(response)
    return found.group(1).strip() if found else response.strip()


def answer_instruction(problem: Problem) -> str:
    shape = {"choice": "the letter of the correct option",
             "numeric": "the number"}.get(problem.kind, "a short answer")
    return f"End your answer with a final line of the form `ANSWER: <{shape}>`."


def with_answer_line(text: str, problem: Problem, answer_line: bool) -> str:
    """`text`, followed by the ANSWER-line instruction when `answer_line` (the rules read that
    line; a correctness judge reads the answer as it is)."""
    return f"{text}\n\n{answer_instruction(problem)}" if answer_line else text


def problem_text(problem: Problem) -> str:
    options = "\n".join(f"{letter}. {text}" for letter, text in problem.options.items())
    return f"{problem.question}\n\n{options}" if options else problem.question


def baseline_messages(problem: Problem, answer_line: bool = True) -> list[Message]:
    """No knowledge of the user: the problem alone (the release sends no system prompt), with
    the ANSWER-line instruction when the rules check correctness (`answer_line`)."""
    return [{"role": "user", "content": with_answer_line(problem_text(problem), problem,
                                                         answer_line)}]


def oracle_messages(problem: Problem, persona: dict | str, preferences: dict[str, dict],
                    answer_line: bool = True) -> list[Message]:
    """Every preference given up front."""
    system = ("You are helping this user. Tailor your reasoning and explanation to them.\n\n"
              f"About the user:\n{render_persona(persona)}\n\n"
              f"Their preferences for this question:\n{render_preferences(preferences)}")
    return [{"role": "system", "content": system}, *baseline_messages(problem, answer_line)]


def discovery_messages(problem: Problem, questions: int, exact: bool,
                       answer_line: bool = True) -> list[Message]:
    """A new user: the model may (or, with `exact`, must) ask before answering."""
    budget = (f"Before answering you must ask the user exactly {questions} question(s), one "
              "per turn, about how they would like the answer; then give the final answer."
              if exact else
              f"You know nothing about this user yet. You may ask up to {questions} "
              "question(s), one per turn, to find out how they would like the answer, "
              "before you give it. Ask only what helps you tailor the answer.")
    system = ("You are a helpful assistant answering a user's question. " + budget + "\n\n"
              "Every reply must use exactly this format:\n"
              "###ACTION###: ask_question or final_answer\n"
              "###RESPONSE###: your question to the user, or your full final answer")
    if answer_line:
        system += "\n\n" + answer_instruction(problem).replace("End your answer",
                                                               "End your final answer")
    return [{"role": "system", "content": system},
            {"role": "user", "content": problem_text(problem)}]


def render_persona(persona: dict | str) -> str:
    if isinstance(persona, str):
        return persona
    return "\n".join(f"- {key}: {value if isinstance(value, str) else json.dumps(value)}"
                     for key, value in persona.items())


def render_preferences(preferences: dict[str, dict]) -> str:
    return "\n".join(f"- {name}: {p.get('value')}"
                     + (f" ({p['description']})" if p.get("description") else "")
                     for name, p in preferences.items())
