"""Does a session reveal a fact, or leak one? Word-level checks shared by generator and validator.

These are strict lexical checks: a fact counts as revealed when all its content words occur in
the session. The validator can add a judge model for the semantic version.
"""

import re

from personalens.population.social_graph import SYNONYMS

_WORD = re.compile(r"[a-z0-9]+")
_STOP = {"the", "a", "an", "of", "and", "or", "in", "on", "at", "to", "for", "with", "my", "s"}


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


def leaks(text: str, values: list[str]) -> list[str]:
    """Queried values (4+ characters) that appear as whole phrases in a noise session."""
    lowered = text.lower()
    return [v for v in values if len(v) >= 4
            and re.search(rf"(?<![a-z0-9]){re.escape(v.lower())}(?![a-z0-9])", lowered)]


def session_text(session: dict) -> str:
    parts = []
    for key in ("conversation", "user_ai_interaction"):
        parts += [t["content"] for t in session.get(key, [])]
    for item in session.get("purchase_history", []):
        parts += [item["title"], item["description"], item["brand"], *item["categories"]]
    return "\n".join(parts)
