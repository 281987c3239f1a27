"""Each person's writing habits: a style their own turns are written in, and typo rates applied to
those turns afterwards.

The habits are the known truth a lens's learned style and typo models are checked against,
so they are recorded in the hidden ground truth (ground_truth/<community>/writing_habits.json)
and never in the released documents. They are drawn from their own seeded streams, so they leave
every other random choice of the generator unchanged.
"""

import copy
import random
import re
from dataclasses import dataclass

import numpy as np

from personalens.population.document_plan import CONVERSATION, USER_AI, Reveal
from personalens.population.reveal_check import reveal_phrases
from personalens.population.typo_habits import KINDS, apply_typos

# Concrete enough that a small model can follow them, and far apart in syntax (fragment vs
# subordinate clauses, questions vs statements, passive vs narrative), so users differ.
STYLES = (
    "Short fragments. Drops pronouns and articles, lists things with commas, rarely writes a "
    "complete sentence.",
    "Long sentences with subordinate clauses joined by 'which', 'because' and 'although'; "
    "several ideas per sentence.",
    "Plain, polite, complete sentences of medium length; says 'please' and 'thank you'.",
    "Casual and chatty: starts sentences with 'so', 'honestly' or 'anyway', uses contractions "
    "and exclamation marks.",
    "Asks a lot of questions and turns most statements into questions.",
    "Terse and matter-of-fact: precise nouns, numbers and units, passive voice, no small talk.",
    "Tells small stories in the past tense, one step after another with 'then' and 'after "
    "that'.",
    "Hedges everything with 'I think', 'maybe', 'kind of' and 'I guess'.",
)
_STREAM = 0x7479706F  # separates these draws from the community's own random stream
NEARLY_CLEAN_SHARE = 0.2  # people who almost never mistype
NEARLY_CLEAN_RATE = (0.0, 0.005)  # typos per eligible word
TYPO_RATE = (0.02, 0.12)
# Dirichlet concentration per kind: below 1, most people favour a few kinds of slip.
KIND_CONCENTRATION = 0.8


@dataclass(frozen=True)
class WritingHabits:
    style: str
    typo_rates: dict[str, float]  # kind -> expected edits per eligible word

    def as_json(self) -> dict:
        return {"writing_style": self.style, "typo_rates": self.typo_rates}


def typo_rates(rng: np.random.Generator) -> dict[str, float]:
    """An overall rate (some people nearly clean) split across KINDS by a Dirichlet draw."""
    low, high = NEARLY_CLEAN_RATE if rng.random() < NEARLY_CLEAN_SHARE else TYPO_RATE
    total = rng.uniform(low, high)
    shares = rng.dirichlet(np.full(len(KINDS), KIND_CONCENTRATION))
    # Rounded so the recorded truth and the rates applied are the same numbers.
    return {kind: round(float(total * share), 5) for kind, share in zip(KINDS, shares,
                                                                        strict=True)}


def draw_habits(seed: int, community: int, people: list[str],
                typos: bool = True) -> dict[str, WritingHabits]:
    """Habits per person: styles dealt from a shuffled deck (neighbours differ), own rates.

    With `typos` off everyone still has a style, and their recorded rates are all zero.
    """
    deck = np.random.default_rng([seed, community, _STREAM]).permutation(len(STYLES))
    habits = {}
    for i, person in enumerate(people):
        rng = np.random.default_rng([seed, community, _STREAM, i])
        rates = typo_rates(rng) if typos else dict.fromkeys(KINDS, 0.0)
        habits[person] = WritingHabits(STYLES[deck[i % len(STYLES)]], rates)
    return habits


def own_turns(session: dict, person: str) -> list[dict]:
    """The turns `person` typed: theirs in a conversation, the user's in a chat with an AI."""
    if CONVERSATION in session:
        return [t for t in session[CONVERSATION] if t["role"] == person]
    return [t for t in session.get(USER_AI, []) if t["role"] == "user"]


def protected_words(reveal: Reveal | None) -> frozenset[str]:
    """Words a typo must not touch, so the session still reveals its fact to the checks."""
    if reveal is None:
        return frozenset()
    # apply_typos sees runs of letters; the reveal check sees runs of letters and digits.
    return frozenset(run for phrase in reveal_phrases(reveal.value, reveal.attribute)
                     for run in re.findall(r"[a-z]+", phrase.lower()))


def type_session(session: dict, person: str, rates: dict[str, float], rng: random.Random,
                 protected: frozenset[str]) -> dict:
    """A copy of `session` whose turns by `person` carry their typos; other turns unchanged."""
    typed = copy.deepcopy(session)
    for turn in own_turns(typed, person):
        turn["content"] = apply_typos(turn["content"], rates, rng, protected)
    return typed


def session_rng(seed: int, community: str, person: str, index: int) -> random.Random:
    """One stream per session, so a session's typos do not depend on any other session."""
    return random.Random(f"{seed}/{community}/{person}/{index}")  # str seeds hash stably


def type_written(written: dict[str, dict[int, dict]], reveals: dict[str, dict[int, Reveal | None]],
                 habits: dict[str, WritingHabits], seed: int,
                 community: str) -> dict[str, dict[int, dict]]:
    """`written` with every person's own turns typed; the recorded (clean) steps are untouched.

    Runs after the reveal check, which judged the clean text; the words of each session's fact
    are protected so the check's verdict still holds for the typed text.
    """
    typed: dict[str, dict[int, dict]] = {}
    for person, sessions in written.items():
        rates = habits[person].typo_rates
        typed[person] = {
            index: {**meta, "session": type_session(
                meta["session"], person, rates, session_rng(seed, community, person, index),
                protected_words(reveals[person][index]))}
            for index, meta in sessions.items()}
    return typed
