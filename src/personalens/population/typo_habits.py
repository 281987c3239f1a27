"""The typo kinds PQB names, the QWERTY neighbourhood they rely on, and a person's typo habits.

Kinds: transposition (two neighbours swapped), repetition (a letter typed twice), insertion (an
extra letter), deletion (a letter missing), adjacent_key (a letter replaced by a QWERTY
neighbour), other (any other replacement). The population generator gives each person habits
(a rate per kind) so that a learned typo model has a known truth to recover.
"""

KINDS = ("transposition", "repetition", "insertion", "deletion", "adjacent_key", "other")
_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


def _neighbours() -> dict[str, set[str]]:
    """Keys that touch on a QWERTY layout (same row +-1, the row above i/i+1, below i-1/i)."""
    near: dict[str, set[str]] = {}
    for r, row in enumerate(_ROWS):
        for i, key in enumerate(row):
            spots = [(r, i - 1), (r, i + 1), (r - 1, i), (r - 1, i + 1), (r + 1, i - 1),
                     (r + 1, i)]
            near[key] = {_ROWS[rr][ii] for rr, ii in spots
                         if 0 <= rr < len(_ROWS) and 0 <= ii < len(_ROWS[rr])}
    return near


ADJACENT = _neighbours()

_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def eligible(word: str) -> bool:
    """PQB only misspells words of three or more letters."""
    return len(word) >= 3 and word.isalpha() and word.isascii()


def _match_case(letter: str, like: str) -> str:
    return letter.upper() if like.isupper() else letter


def match_word_case(word: str, like: str) -> str:
    """`word` capitalised as `like` is: ALL CAPS, Capitalised, or as it is."""
    if len(like) > 1 and like.isupper():
        return word.upper()
    return word[:1].upper() + word[1:] if like[:1].isupper() else word


def misspell(word: str, kind: str, rng) -> str:
    """`word` with one edit of `kind`, chosen so the aligner names it as that kind.

    Returns the word unchanged when the kind cannot apply (a transposition needs two different
    neighbouring letters)."""
    lower = word.lower()
    if kind == "transposition":
        spots = [i for i in range(len(word) - 1) if lower[i] != lower[i + 1]]
        if not spots:
            return word
        i = rng.choice(spots)
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    i = rng.randrange(len(word))
    if kind == "repetition":
        return word[:i + 1] + word[i] + word[i + 1:]
    if kind == "deletion":
        return word[:i] + word[i + 1:]
    if kind == "insertion":
        # Not equal to either neighbour, or the aligner would see a repeated letter.
        banned = set(lower[max(i - 1, 0):i + 1])
        letter = rng.choice([c for c in _LETTERS if c not in banned])
        return word[:i] + _match_case(letter, word[i]) + word[i:]
    if kind == "adjacent_key":
        near = sorted(ADJACENT.get(lower[i], ()))
        return word[:i] + _match_case(rng.choice(near), word[i]) + word[i + 1:]
    if kind == "other":
        far = [c for c in _LETTERS if c != lower[i] and c not in ADJACENT.get(lower[i], ())]
        return word[:i] + _match_case(rng.choice(far), word[i]) + word[i + 1:]
    raise ValueError(f"unknown typo kind {kind!r}")


def apply_typos(text: str, rates: dict[str, float], rng, protected: frozenset[str] = frozenset()
                ) -> str:
    """`text` typed by someone with these habits.

    rates[kind] is the expected number of edits of that kind per eligible word; each eligible
    word gets at most one edit, so the rates must sum to at most 1. Words in `protected`
    (lower-cased) are never touched. Whitespace and punctuation are kept as they are.
    """
    total = sum(rates.values())
    if total > 1:
        raise ValueError(f"typo rates sum to {total:.3f}; at most 1 edit per word is possible")
    kinds = [k for k in KINDS if rates.get(k, 0) > 0]
    weights = [rates[k] for k in kinds]
    out, word = [], []
    for ch in text + " ":
        if ch.isalpha():
            word.append(ch)
            continue
        if word:
            token = "".join(word)
            if eligible(token) and token.lower() not in protected and kinds \
                    and rng.random() < total:
                token = misspell(token, rng.choices(kinds, weights)[0], rng)
            out.append(token)
            word = []
        out.append(ch)
    return "".join(out)[:-1]
