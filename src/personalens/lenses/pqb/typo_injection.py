"""Typing a clean query the way one user types (PQB's typo queries), and a random baseline.

How many words change: the user's expected count for this query, i.e. their share of eligible
words misspelt in their history times the query's eligible (>= 3 letters) words, rounded half
up, then at least 1 (a typo query exists to carry typos) and at most `max_words` (PQB: 3) and
the number of distinct eligible words. A user with no typo in their history gets no edit; the
caller drops such queries, as PQB has typo versions only for some queries.

Which words: distinct eligible words, the user's historically most error-prone first (their
per-word error rate), ties in random order. How: first reuse a typo the user made on a word in
the same syntactic slot (same dependency label and POS) - the exact typed form if it was this
very word, otherwise the same kind(s) of character edit; failing that, a kind sampled by the
user's per-kind frequencies. All randomness comes from the `random.Random` passed in.
"""

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import reduce
from typing import NamedTuple

import numpy as np

from personalens.lenses.pqb.typo_edits import word_spans
from personalens.lenses.pqb.typo_profile import TypoProfile, token_at
from personalens.population.typo_habits import KINDS, eligible, match_word_case, misspell

MAX_WORDS = 3


class InjectedEdit(NamedTuple):
    word: str
    typed: str
    kind: str  # a kind of typo_habits.KINDS, or kinds joined by "+" for a reused multi-edit
    source: str  # "reused", "sampled" (personalised) or "random" (baseline)


@dataclass(frozen=True)
class InjectedQuery:
    text: str
    edits: list[InjectedEdit]


@dataclass(frozen=True)
class _Slot:
    start: int
    end: int
    word: str
    dep: str = ""
    pos: str = ""


def words_to_edit(profile: TypoProfile, eligible_words: int, max_words: int = MAX_WORDS) -> int:
    """The rule in the module docstring: round(rate x eligible words), clamped to [1, cap]."""
    cap = min(max_words, eligible_words)
    if cap == 0 or profile.word_error_rate == 0:
        return 0
    expected = math.floor(profile.word_error_rate * eligible_words + 0.5)
    return min(max(expected, 1), cap)


def inject_typos(query: str, profile: TypoProfile, nlp, rng: random.Random,
                 max_words: int = MAX_WORDS) -> InjectedQuery:
    """`query` as this user would type it; `nlp` is spacy_pipeline.load_pipeline()."""
    slots = _distinct_slots(query, nlp(query))
    wanted = words_to_edit(profile, sum(eligible(w) for *_, w in word_spans(query)), max_words)
    rng.shuffle(slots)
    slots.sort(key=lambda s: -profile.error_rate(s.word))  # stable: ties stay shuffled
    edits: list[tuple[_Slot, InjectedEdit]] = []
    for slot in slots:
        if len(edits) == wanted:
            break
        edit = _reused(slot, profile, rng) or _sampled(slot.word, profile, rng)
        if edit is not None:
            edits.append((slot, edit))
    return _apply(query, edits)


def inject_random(query: str, n_edits: int, rng: random.Random) -> InjectedQuery:
    """The random-typo baseline: `n_edits` distinct eligible words, chosen uniformly, each with
    one edit of a uniformly chosen kind (another kind if that one cannot apply)."""
    slots = _distinct_slots(query)
    edits = []
    for slot in rng.sample(slots, min(n_edits, len(slots))):
        kinds = list(KINDS)
        rng.shuffle(kinds)
        for kind in kinds:
            typed = misspell(slot.word, kind, rng)
            if typed != slot.word:
                edits.append((slot, InjectedEdit(slot.word, typed, kind, "random")))
                break
    return _apply(query, edits)


def passes_similarity(clean: str, typed: str, embed: Callable[[list[str]], Sequence],
                      threshold: float = 0.9) -> bool:
    """PQB's gate: the typo query must stay close to the clean one (cosine >= threshold).

    `embed` maps texts to vectors; the caller plugs in the dense model it retrieves with."""
    a, b = (np.asarray(v, dtype=float) for v in embed([clean, typed]))
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b))) >= threshold


def _distinct_slots(query: str, doc=None) -> list[_Slot]:
    """The first occurrence of each distinct eligible word, with its syntax if parsed."""
    slots, seen = [], set()
    for start, end, word in word_spans(query):
        if eligible(word) and word.lower() not in seen:
            seen.add(word.lower())
            token = token_at(doc, start) if doc is not None else None
            slots.append(_Slot(start, end, word, *((token.dep_, token.pos_) if token else ())))
    return slots


def _reused(slot: _Slot, profile: TypoProfile, rng: random.Random) -> InjectedEdit | None:
    matches = [e for e in profile.edits if (e.dep, e.pos) == (slot.dep, slot.pos)]
    if not matches:
        return None
    same_word = [e for e in matches if e.word == slot.word.lower()]
    seen = rng.choice(same_word or matches)
    typed = (match_word_case(seen.typed, slot.word) if same_word
             else reduce(lambda word, kind: misspell(word, kind, rng), seen.kinds, slot.word))
    return InjectedEdit(slot.word, typed, "+".join(seen.kinds), "reused") \
        if same_word or typed != slot.word else None


def _sampled(word: str, profile: TypoProfile, rng: random.Random) -> InjectedEdit | None:
    """A kind drawn by the user's frequencies; redrawn among the rest if it cannot apply."""
    weights = {k: c for k, c in profile.counts.items() if c > 0}
    while weights:
        kind = rng.choices(list(weights), list(weights.values()))[0]
        typed = misspell(word, kind, rng)
        if typed != word:
            return InjectedEdit(word, typed, kind, "sampled")
        del weights[kind]
    return None


def _apply(query: str, edits: list[tuple[_Slot, InjectedEdit]]) -> InjectedQuery:
    text = query
    for slot, edit in sorted(edits, key=lambda e: -e[0].start):
        text = text[:slot.start] + edit.typed + text[slot.end:]
    return InjectedQuery(text, [edit for _, edit in edits])
