"""Aligning a misspelt word with its correction and naming each character edit.

The kinds are PQB's mechanisms, defined in population.typo_habits.
"""

import re
from collections import Counter
from dataclasses import dataclass

from personalens.population.typo_habits import ADJACENT, KINDS

# A word is a run of letters, exactly as population.typo_habits.apply_typos walks text: its
# misspellings never change how many runs there are, so typed and corrected texts line up.
LETTER_RUN = re.compile(r"[^\W\d_]+")


def word_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, word) of every run of letters in `text`, in order."""
    return [(m.start(), m.end(), m.group()) for m in LETTER_RUN.finditer(text)]


@dataclass(frozen=True)
class Edit:
    kind: str
    position: int  # index in the correct word
    correct: str  # the correct character(s) involved ("" for an insertion)
    typed: str  # what was typed instead ("" for a deletion)


def align(correct: str, typed: str) -> list[Edit]:
    """The fewest edits (optimal string alignment distance) that turn `correct` into `typed`."""
    a, b = correct.lower(), typed.lower()
    n, m = len(a), len(b)
    cost = [list(range(m + 1))] + [[i] + [0] * m for i in range(1, n + 1)]
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            cost[i][j] = min(cost[i - 1][j] + 1, cost[i][j - 1] + 1,
                             cost[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1] \
                    and a[i - 1] != a[i - 2]:
                cost[i][j] = min(cost[i][j], cost[i - 2][j - 2] + 1)
    return list(reversed(_backtrace(a, b, cost)))


def _backtrace(a: str, b: str, cost: list[list[int]]) -> list[Edit]:
    edits, i, j = [], len(a), len(b)
    while i > 0 or j > 0:
        if i > 0 and j > 0 and a[i - 1] == b[j - 1] and cost[i][j] == cost[i - 1][j - 1]:
            i, j = i - 1, j - 1
        elif (i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]
              and a[i - 1] != a[i - 2] and cost[i][j] == cost[i - 2][j - 2] + 1):
            edits.append(Edit("transposition", i - 2, a[i - 2:i], b[j - 2:j]))
            i, j = i - 2, j - 2
        elif i > 0 and j > 0 and cost[i][j] == cost[i - 1][j - 1] + 1:
            kind = "adjacent_key" if b[j - 1] in ADJACENT.get(a[i - 1], ()) else "other"
            edits.append(Edit(kind, i - 1, a[i - 1], b[j - 1]))
            i, j = i - 1, j - 1
        elif j > 0 and cost[i][j] == cost[i][j - 1] + 1:
            # A repeated letter: the inserted one equals its typed neighbour.
            repeated = (j > 1 and b[j - 2] == b[j - 1]) or (j < len(b) and b[j] == b[j - 1])
            edits.append(Edit("repetition" if repeated else "insertion", i, "", b[j - 1]))
            j -= 1
        else:
            edits.append(Edit("deletion", i - 1, a[i - 1], ""))
            i -= 1
    return edits


def edit_counts(pairs: list[tuple[str, str]]) -> Counter:
    """Edits by kind over (correct text, typed text) pairs, aligned word by word.

    Only texts with the same number of words are compared, word for word, as PQB's typo
    queries keep the word count; words that differ are aligned character by character.
    """
    counts: Counter = Counter({kind: 0 for kind in KINDS})
    for correct, typed in pairs:
        words, typed_words = correct.split(), typed.split()
        if len(words) != len(typed_words):
            continue
        for w, t in zip(words, typed_words, strict=True):
            if w != t:
                counts.update(e.kind for e in align(w, t))
    return counts
