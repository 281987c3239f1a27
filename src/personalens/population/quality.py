"""Quality warnings a person wants before trusting a generated community.

Three rules, each counted over what it checks:

- fallback reveals: personal sessions whose fact was written in by the fallback line
  (`session_writer.fallback_line`) because the model's own text did not reveal it;
- values of the wrong kind: a profile value that names a member of the community (the model
  copied a name from its prompt) in an attribute that does not hold a person
  (`PERSON_ATTRIBUTES`); a first or last name alone is not flagged (it is often a word);
- degenerate repetition: a session whose most frequent word is at least a third of its words
  (and occurs at least 3 times), or in which at least a quarter of the word trigrams repeat
  an earlier one ("sow sow sow user use"; five copies of one line). On the 958 sessions of
  PersonaBench's released community_0 (written by GPT-4o) the largest values are 0.10 and
  0.09: natural text stays far below both thresholds.

A share is high at HIGH_SHARE or more of what the rule checks.
"""

import re
from collections import Counter
from dataclasses import dataclass, field

from personalens.population.generated_community import GeneratedCommunity, GeneratedSession
from personalens.population.reveal_check import session_text

TOP_WORD_SHARE = 1 / 3
MIN_TOP_WORD_COUNT = 3
REPEATED_TRIGRAM_SHARE = 0.25
HIGH_SHARE = 0.25
PERSON_ATTRIBUTES = frozenset({"mentor"})  # attributes whose value is a person
_WORD = re.compile(r"[a-z0-9]+")


def repetition(text: str) -> tuple[int, float, float]:
    """(how often the most frequent word occurs, its share of the words, the share of word
    trigrams that repeat an earlier trigram); zeros for text without words."""
    tokens = _WORD.findall(text.lower())
    if not tokens:
        return 0, 0.0, 0.0
    top = Counter(tokens).most_common(1)[0][1]
    trigrams = list(zip(tokens, tokens[1:], tokens[2:], strict=False))
    repeated = (len(trigrams) - len(set(trigrams))) / len(trigrams) if trigrams else 0.0
    return top, top / len(tokens), repeated


# A purchase's catalogue fields repeat across items by nature (every knife is in "Home &
# Kitchen", "Cutlery"): they are not the writing the repetition rule judges.
CATALOGUE_FIELDS = frozenset({"categories", "brand"})


def is_degenerate_session(body: dict) -> bool:
    """`is_degenerate` of what the session's writer wrote (catalogue fields left out)."""
    return is_degenerate(session_text(body, CATALOGUE_FIELDS))


def is_degenerate(text: str) -> bool:
    top, share, repeated = repetition(text)
    return ((share >= TOP_WORD_SHARE and top >= MIN_TOP_WORD_COUNT)
            or repeated >= REPEATED_TRIGRAM_SHARE)


class MemberNames:
    """Finds a community member's full name inside a value: whole words, any case, with one
    search per value however many members there are (the longest name wins)."""

    def __init__(self, members: list[str]):
        self._spelled = {m.lower(): m for m in members}
        names = "|".join(sorted(map(re.escape, self._spelled), key=len, reverse=True))
        self._pattern = re.compile(rf"(?<![a-z0-9])(?:{names})(?![a-z0-9])") if names else None

    def find(self, value: str) -> str | None:
        found = self._pattern and self._pattern.search(value.lower())
        return self._spelled[found.group()] if found else None


@dataclass(frozen=True)
class WrongValue:
    person: str
    attribute: str
    value: str
    names: str  # the member the value names


@dataclass
class Quality:
    """One community's flagged reveals, values and sessions, and how many of each were checked."""

    fallback: list[GeneratedSession] = field(default_factory=list)
    personal_sessions: int = 0
    wrong_values: list[WrongValue] = field(default_factory=list)
    values: int = 0
    degenerate: list[GeneratedSession] = field(default_factory=list)
    sessions: int = 0

    def counts(self) -> dict[str, int]:
        return {"fallback_reveals": len(self.fallback),
                "personal_sessions": self.personal_sessions,
                "wrong_kind_values": len(self.wrong_values), "profile_values": self.values,
                "degenerate_sessions": len(self.degenerate), "sessions": self.sessions}


# (flagged count key, checked count key, what the rule flags): the rules in reporting order.
RULES = (("fallback_reveals", "personal_sessions", "reveals written by the fallback line"),
         ("wrong_kind_values", "profile_values", "profile values of the wrong kind"),
         ("degenerate_sessions", "sessions", "sessions of degenerate repetition"))


def assess(community: GeneratedCommunity) -> Quality:
    quality = Quality()
    members = MemberNames(community.people)
    for person, profile in community.profiles.items():
        for attribute, value in profile["attributes"].items():
            if isinstance(value, int):
                continue  # integers are bounded by the schema: never a name
            for entry in value if isinstance(value, list) else [value]:
                quality.values += 1
                who = None if attribute in PERSON_ATTRIBUTES else members.find(entry)
                if who is not None:
                    quality.wrong_values.append(WrongValue(person, attribute, entry, who))
    for session in community.sessions:
        quality.sessions += 1
        if not session.noise:
            quality.personal_sessions += 1
            if session.revealed_by == "fallback":
                quality.fallback.append(session)
        if is_degenerate_session(session.body):
            quality.degenerate.append(session)
    return quality


def totals(per_community: list[dict[str, int]]) -> dict[str, int]:
    """The counts of several communities added up."""
    summed: Counter = Counter()
    for counts in per_community:
        summed.update(counts)
    return {key: summed[key] for flagged, checked, _ in RULES for key in (flagged, checked)}


def high_rules(counts: dict[str, int]) -> list[str]:
    """The flagged-count keys whose share of what they check is HIGH_SHARE or more."""
    return [flagged for flagged, checked, _ in RULES
            if counts[checked] and counts[flagged] / counts[checked] >= HIGH_SHARE]


def warning_line(counts: dict[str, int]) -> str | None:
    """One line for the end of `generate` when a share is high; None otherwise."""
    high = high_rules(counts)
    if not high:
        return None
    parts = [f"{counts[flagged]} of {counts[checked]} {what}"
             for flagged, checked, what in RULES if flagged in high]
    return (f"quality warning: {'; '.join(parts)} (a quarter or more is high; see the "
            "report's quality warnings before trusting this data)")
