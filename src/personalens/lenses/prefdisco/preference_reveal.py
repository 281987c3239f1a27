"""Which preferences a simulated user's reply revealed, by matching it against their values.

The release's tracker asked a model and read the wrong key, so it was always empty. Here a
preference counts as revealed when at least half of its value's content words (compared by
their first five letters, so "visual" matches "visually") occur in the reply.
"""

import re

REVEAL_SHARE = 0.5
_STEM = 5
_STOPWORDS = frozenset(re.findall(r"[a-z]+", """
    about above after again also and any are because been before being both but can could did
    does doing down during each few for from further had has have having her here hers him his
    how into its itself just like more most much need needs not now off once only other our out
    over own prefer prefers preferred preference rather same she should some such than that the
    their theirs them then there these they this those through too under until very was were
    what when where which while who whom why will with would you your yours user users
"""))


def content_stems(text: str) -> set[str]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return {w[:_STEM] for w in words if len(w) >= 3 and w not in _STOPWORDS}


def revealed(reply: str, preferences: dict[str, dict]) -> list[str]:
    """Names of the preferences whose value the reply states (in the preferences' order)."""
    said = content_stems(reply)
    wanted = {name: content_stems(str(p.get("value", ""))) for name, p in preferences.items()}
    return [name for name, stems in wanted.items()
            if stems and len(stems & said) / len(stems) >= REVEAL_SHARE]
