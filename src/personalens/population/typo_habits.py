"""The typo kinds PQB names, the QWERTY neighbourhood they rely on, and a person's typo habits.

Kinds: transposition (two neighbours swapped), repetition (a letter typed twice), insertion (an
extra letter), deletion (a letter missing), adjacent_key (a letter replaced by a QWERTY
neighbour), other (any other replacement). The population generator gives each person habits
(a rate per kind) so that the pqb lens's learned typo model has a known truth to recover.
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
