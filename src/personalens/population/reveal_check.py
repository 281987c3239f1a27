"""Does a session reveal a fact, or leak one? Word-level checks shared by generator and validator.

These are strict lexical checks: a fact counts as revealed when all its content words occur in
the session. The validator can add a judge model for the semantic version.

Leaks have one definition, used by both sides: `queried_items` is everything a person's questions
ask for, and `leaked_items` is which of those a session's written text names. The generator
guards every session no question references with exactly these two functions, and the
release's validator checks those sessions with exactly the same two, so generated data passes
validation by construction.
"""

import re
from collections.abc import Iterable
from typing import Any

from personalens.population.social_graph import SYNONYMS

_WORD = re.compile(r"[a-z0-9]+")
_STOP = {"the", "a", "an", "of", "and", "or", "in", "on", "at", "to", "for", "with", "my", "s"}
# Fields of a release session that say who, when and which, not what anyone wrote.
_METADATA = frozenset({"session", "segment_id", "time", "target_name", "Target_name", "role"})
MIN_LEAK_CHARS = 4  # shorter items ("30", "tea") are too common to count as leaks


def words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def reveal_phrases(value: str, attribute: str) -> list[str]:
    """`value` and the phrases that say the same (relations accept their synonyms)."""
    return [value] + ([w for w, r in SYNONYMS.items() if r == value]
                      if attribute == "relationship" else [])


def reveal_words(value: str, attribute: str) -> list[set[str]]:
    """Alternative word sets, any of which reveals `value`."""
    return [(words(o) - _STOP) or words(o) for o in reveal_phrases(value, attribute)]


def reveals(text: str, value: str, attribute: str) -> bool:
    present = words(text)
    return any(option <= present for option in reveal_words(value, attribute))


def queried_items(questions: Iterable[tuple[str, Iterable[Any]]],
                  names: Iterable[str]) -> list[str]:
    """Every answer item a person's questions ask for: the one set no noise session may name.

    `questions` holds (question type, answer items) per question: the person's own attributes,
    their relationship to each neighbour ("sibling") and the neighbours' attributes asked about.
    Subjective questions have no items to check. People's names are excluded, because they are
    the speakers and partners of sessions, not facts.
    """
    people = set(names)
    return sorted({str(item) for kind, items in questions if kind != "Subjective"
                   for item in items} - people)


def session_text(session: dict, skip: frozenset[str] = frozenset()) -> str:
    """What was written in a session (turns, purchase fields), without ids, times or speakers
    (nor the fields named in `skip`)."""
    parts: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, dict):
            for key, inner in value.items():
                if key not in _METADATA and key not in skip:
                    walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    walk(session)
    return "\n".join(parts)


def leaked_items(session: dict, queried: Iterable[str]) -> list[str]:
    """The queried items a session names: THE leak check of generator and validator alike.

    `session` is one session in release form (as written, or as read back from a release);
    `queried` comes from `queried_items`. An item of 4+ characters leaks when it occurs as a
    whole phrase, case-insensitively, in the session's written text.
    """
    lowered = session_text(session).lower()
    return [v for v in queried if len(v) >= MIN_LEAK_CHARS
            and re.search(rf"(?<![a-z0-9]){re.escape(v.lower())}(?![a-z0-9])", lowered)]
