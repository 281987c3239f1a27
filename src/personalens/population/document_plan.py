"""Stage 2 and 3 planning, in code: which sessions each person gets, and which questions.

Everything here is decided by a seeded RNG before any model call, so a resumed run plans the
same sessions under the same keys.
"""

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np

from personalens.population.profile_schema import ProfileSchema
from personalens.population.reveal_check import queried_items
from personalens.population.social_graph import neighbours

CONVERSATION, USER_AI, PURCHASE = "conversation", "user_ai_interaction", "purchase_history"
NOISE_TOPICS = ("the weather this week", "a public holiday coming up", "traffic on the way in",
                "a film that just came out", "a recipe from a cooking show", "a sports result",
                "a funny video going around", "a new cafe that opened downtown",
                "how to fix a squeaky door", "the rising price of groceries",
                "a museum exhibition in town", "which phone plan is cheaper")
GENERIC_REQUESTS = ("convert a recipe from cups to grams", "explain how compound interest works",
                    "summarise the plot of a classic novel", "suggest a name for a houseplant",
                    "explain why the sky is blue", "write a polite out-of-office message",
                    "explain the rules of chess castling", "compare two ways to boil an egg")


@dataclass
class Reveal:
    subject: str  # whose fact: the person, or a neighbour in a social question
    attribute: str  # schema key, or "relationship"
    value: str  # the one answer item the session must reveal
    description: str


@dataclass
class SessionPlan:
    index: int
    kind: str
    time: dt.datetime
    partner: str | None = None  # conversation partner
    relation: str | None = None  # what the partner is to the person
    reveal: Reveal | None = None  # None: a noise session
    topic: str | None = None
    news: dict | None = None
    earlier_topic: str | None = None  # an earlier session with the same partner to refer to


@dataclass
class QuestionPlan:
    question: str
    type: str
    difficulty: str
    answer: Any
    outdated_value: Any = None
    items: dict[str, list[int]] = field(default_factory=dict)  # item -> session indices


@dataclass
class PersonPlan:
    personal: list[SessionPlan]
    noise: list[SessionPlan]  # nested: level r uses the first noise_count(r) of these
    questions: list[QuestionPlan]


def noise_count(personal: int, ratio: float) -> int:
    """Noise sessions so that noise / (noise + personal) == ratio (rounded)."""
    return round(personal * ratio / (1.0 - ratio))


def _items(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


class Planner:
    def __init__(self, rng: np.random.Generator, schema: ProfileSchema, graph: nx.DiGraph,
                 profiles: dict[str, dict], window: tuple[dt.datetime, dt.datetime],
                 attributes_per_person: int, update_probability: float,
                 news: list[dict], news_probability: float = 0.2):
        self.rng, self.schema, self.graph, self.profiles = rng, schema, graph, profiles
        self.window, self.k = window, attributes_per_person
        self.update_probability, self.news, self.news_probability = (
            update_probability, news, news_probability)

    def _time(self, lo: float = 0.0, hi: float = 1.0) -> dt.datetime:
        start, end = self.window
        return start + (end - start) * float(self.rng.uniform(lo, hi))

    def _kind(self, purchasable: bool, has_partner: bool) -> str:
        kinds = [USER_AI] + [CONVERSATION] * has_partner + [PURCHASE] * purchasable
        return kinds[int(self.rng.integers(len(kinds)))]

    def plan(self, person: str, max_noise: float) -> PersonPlan:
        sessions: list[SessionPlan] = []
        questions = self._own_questions(person, sessions)
        questions += self._social_questions(person, sessions)
        sessions = self._drop_leaking_updates(sessions, questions)
        for plan in sessions:
            plan.news = self._news_for(plan)
        _link_earlier(sessions)
        noise = [self._noise_session(person, len(sessions) + i)
                 for i in range(noise_count(len(sessions), max_noise))]
        return PersonPlan(sessions, noise, questions)

    def _new_session(self, sessions: list[SessionPlan], kind: str, reveal: Reveal,
                     partner: tuple[str, str] | None, when: tuple[float, float] = (0, 1)) -> int:
        plan = SessionPlan(len(sessions), kind, self._time(*when), reveal=reveal)
        if kind == CONVERSATION and partner:
            plan.partner, plan.relation = partner
        sessions.append(plan)
        return plan.index

    def _partner(self, person: str) -> tuple[str, str] | None:
        ties = neighbours(self.graph, person)
        return ties[int(self.rng.integers(len(ties)))] if ties else None

    def _own_questions(self, person: str, sessions: list[SessionPlan]) -> list[QuestionPlan]:
        profile = self.profiles[person]
        keys = [k for k in self.schema.attributes if k in profile]
        chosen = sorted(self.rng.choice(len(keys), size=min(self.k, len(keys)), replace=False))
        questions = []
        for key in (keys[i] for i in chosen):
            spec = self.schema.attributes[key]
            value = profile[key]
            phrasing = spec.questions[int(self.rng.integers(len(spec.questions)))]
            items = _items(value)
            difficulty = ("hard" if spec.question_type == "Preference" and len(items) >= 5
                          else "easy")
            question = QuestionPlan(phrasing, spec.question_type, difficulty, value)
            outdated = self._maybe_update(person, key, items, question)
            for item in items:
                partner = self._partner(person)
                kind = self._kind(spec.purchasable, partner is not None)
                window = (0.5, 1.0) if outdated and item == items[0] else (0.0, 1.0)
                question.items[item] = [self._new_session(
                    sessions, kind, Reveal(person, key, item, spec.description), partner, window)]
            if outdated:
                partner = self._partner(person)
                self._new_session(sessions, self._kind(spec.purchasable, partner is not None),
                                  Reveal(person, key, outdated, spec.description), partner,
                                  (0.0, 0.5))
            questions.append(question)
        return questions

    def _maybe_update(self, person: str, key: str, items: list[str],
                      question: QuestionPlan) -> str | None:
        """With a small probability an earlier session shows an old value of a preference."""
        spec = self.schema.attributes[key]
        if spec.type != "list" or spec.question_type != "Preference":
            return None
        if self.rng.random() >= self.update_probability:
            return None
        # The old value is another person's entry for the same attribute: plausible, and known
        # not to be among this person's current ones.
        pool = sorted({v for other, p in self.profiles.items() if other != person
                       for v in _items(p.get(key, [])) if v not in items})
        if not pool:
            return None
        old = pool[int(self.rng.integers(len(pool)))]
        question.outdated_value = [old]
        return old

    def _social_questions(self, person: str, sessions: list[SessionPlan]) -> list[QuestionPlan]:
        questions = []
        ties = neighbours(self.graph, person)
        relation_counts: dict[str, int] = {}
        for _, relation in ties:
            relation_counts[relation] = relation_counts.get(relation, 0) + 1
        for other, relation in ties:
            question = QuestionPlan(f"What is {other}'s relationship to me?", "Social", "easy",
                                    relation)
            question.items[relation] = [self._new_session(
                sessions, CONVERSATION, Reveal(person, "relationship", relation,
                                               f"what {other} is to {person}"),
                (other, relation))]
            questions.append(question)
            known = self.profiles.get(other, {})
            keys = [k for k, spec in self.schema.attributes.items()
                    if k in known and spec.social_questions]
            if not keys:
                continue
            key = keys[int(self.rng.integers(len(keys)))]
            spec = self.schema.attributes[key]
            # Multi-hop when the relation names one person: "my sibling" instead of the name.
            who = f"my {relation}" if relation_counts[relation] == 1 else other
            phrasing = spec.social_questions[int(self.rng.integers(len(spec.social_questions)))]
            value = self.profiles[other][key]
            hop = QuestionPlan(phrasing.format(name=who), "Social", "hard", value)
            for item in _items(value):
                hop.items[item] = [self._new_session(
                    sessions, CONVERSATION, Reveal(other, key, item, spec.description),
                    (other, relation))]
            questions.append(hop)
        return questions

    def _drop_leaking_updates(self, sessions: list[SessionPlan],
                              questions: list[QuestionPlan]) -> list[SessionPlan]:
        """Updates whose old value another question asks for are dropped (rarely needed).

        An old value's session is referenced by no question, so validation checks it for leaks;
        if the old value is itself one of the person's queried items (a neighbour's entry, say),
        that session could not pass. Later sessions move up one index.
        """
        queried = set(queried_items(((q.type, q.items) for q in questions), self.profiles))
        referenced = {i for q in questions for ids in q.items.values() for i in ids}
        leaking = {s.index for s in sessions
                   if s.index not in referenced and s.reveal.value in queried}
        if not leaking:
            return sessions
        for question in questions:
            if question.outdated_value and question.outdated_value[0] in queried:
                question.outdated_value = None
        kept = [s for s in sessions if s.index not in leaking]
        moved = {s.index: i for i, s in enumerate(kept)}
        for plan in kept:
            plan.index = moved[plan.index]
        for question in questions:
            question.items = {item: [moved[i] for i in ids] for item, ids in question.items.items()}
        return kept

    def _news_for(self, plan: SessionPlan) -> dict | None:
        if plan.kind != CONVERSATION or not self.news or self.rng.random() >= self.news_probability:
            return None
        usable = [n for n in self.news if n["date"] <= plan.time.date().isoformat()]
        return usable[int(self.rng.integers(len(usable)))] if usable else None

    def _noise_session(self, person: str, index: int) -> SessionPlan:
        partner = self._partner(person)
        kind = self._kind(True, partner is not None)
        plan = SessionPlan(index, kind, self._time())
        if kind == CONVERSATION:
            plan.partner, plan.relation = partner
            plan.topic = NOISE_TOPICS[int(self.rng.integers(len(NOISE_TOPICS)))]
            plan.news = self._news_for(plan)
        elif kind == USER_AI:
            plan.topic = GENERIC_REQUESTS[int(self.rng.integers(len(GENERIC_REQUESTS)))]
        return plan


def _link_earlier(sessions: list[SessionPlan]) -> None:
    """Give each conversation the topic of the previous one with the same partner, if any."""
    last: dict[str, SessionPlan] = {}
    for plan in sorted(sessions, key=lambda s: s.time):
        if plan.kind != CONVERSATION or plan.partner is None:
            continue
        if plan.partner in last and last[plan.partner].reveal is not None:
            plan.earlier_topic = last[plan.partner].reveal.description
        last[plan.partner] = plan
