"""A user's personal typo model, learnt from their own texts and the corrected versions.

Words are runs of letters (typo_edits.word_spans), and only words of three or more letters in
the corrected text are counted (population.typo_habits.eligible): PQB only misspells those, and
the generator's truth is defined on the same words, so a learnt rate per kind (edits of that
kind per eligible word) is directly comparable to the rates `apply_typos` was given.
"""

from bisect import bisect_right
from collections import Counter
from dataclasses import asdict, dataclass, field
from difflib import SequenceMatcher

from personalens.lenses.pqb.typo_edits import align, word_spans
from personalens.population.typo_habits import KINDS, eligible

# A corrected word that needs more character edits than this is a different word choice (an
# LLM corrector rewrote it), not a typo.
MAX_EDITS = 2

Span = tuple[int, int, str]


@dataclass
class WordHistory:
    seen: int = 0
    misspelt: int = 0
    typed: Counter = field(default_factory=Counter)  # lower-cased typed form -> times


@dataclass(frozen=True)
class ObservedEdit:
    word: str  # corrected, lower-cased
    typed: str  # as typed, lower-cased
    dep: str  # the corrected word's dependency label in the corrected text
    pos: str  # its coarse part of speech
    kinds: tuple[str, ...]  # its character edits, in word order


@dataclass
class TypoProfile:
    eligible_words: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    history: dict[str, WordHistory] = field(default_factory=dict)
    edits: list[ObservedEdit] = field(default_factory=list)

    @property
    def rates(self) -> dict[str, float]:
        """Edits of each kind per eligible word, as population.typo_habits.apply_typos means."""
        return {k: self.counts[k] / self.eligible_words if self.eligible_words else 0.0
                for k in KINDS}

    @property
    def word_error_rate(self) -> float:
        """Share of eligible words typed wrongly (a word with two edits counts once)."""
        return len(self.edits) / self.eligible_words if self.eligible_words else 0.0

    def error_rate(self, word: str) -> float:
        """How often this user misspelt `word` before (0 for a word never seen)."""
        seen = self.history.get(word.lower())
        return seen.misspelt / seen.seen if seen and seen.seen else 0.0

    def to_json(self) -> dict:
        return {
            "eligible_words": self.eligible_words,
            "counts": dict(self.counts),
            "rates": self.rates,  # derived; written for readers, ignored by from_json
            "history": {w: {"seen": h.seen, "misspelt": h.misspelt, "typed": dict(h.typed)}
                        for w, h in sorted(self.history.items())},
            "edits": [asdict(e) for e in self.edits],
        }

    @classmethod
    def from_json(cls, data: dict) -> "TypoProfile":
        return cls(
            eligible_words=data["eligible_words"],
            counts={k: data["counts"].get(k, 0) for k in KINDS},
            history={w: WordHistory(h["seen"], h["misspelt"], Counter(h["typed"]))
                     for w, h in data["history"].items()},
            edits=[ObservedEdit(e["word"], e["typed"], e["dep"], e["pos"], tuple(e["kinds"]))
                   for e in data["edits"]],
        )


def paired_words(original: str, corrected: str) -> list[tuple[Span, str]]:
    """(corrected word span, the word typed there) for every word the two texts share a slot for.

    Same word count: word for word. Otherwise (an LLM corrector merged or split words) the
    words are aligned with difflib and only words in unchanged runs or in replaced runs of equal
    length are paired; the rest cannot be attributed to a typo.
    """
    typed, fixed = word_spans(original), word_spans(corrected)
    if len(typed) == len(fixed):
        return [(f, t[2]) for f, t in zip(fixed, typed, strict=True)]
    matcher = SequenceMatcher(None, [t[2].lower() for t in typed], [f[2].lower() for f in fixed],
                              autojunk=False)
    pairs = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("equal", "replace") and i2 - i1 == j2 - j1:
            pairs += [(fixed[j1 + k], typed[i1 + k][2]) for k in range(i2 - i1)]
    return pairs


def token_at(doc, start: int):
    """The spaCy token a word starting at character `start` belongs to."""
    starts = [token.idx for token in doc]
    return doc[max(bisect_right(starts, start) - 1, 0)]


def learn_profile(originals: list[str], corrected: list[str], nlp,
                  max_edits: int = MAX_EDITS) -> TypoProfile:
    """The typo profile of a user who typed `originals`, which a corrector turned into
    `corrected`; `nlp` is the spaCy pipeline (spacy_pipeline.load_pipeline())."""
    if len(originals) != len(corrected):
        raise ValueError(f"{len(originals)} original texts but {len(corrected)} corrected ones")
    profile = TypoProfile()
    misspelt: list[tuple[int, Span, str, tuple[str, ...]]] = []
    for n, (original, fixed) in enumerate(zip(originals, corrected, strict=True)):
        for span, typed in paired_words(original, fixed):
            kinds = _record_word(profile, span[2], typed, max_edits)
            if kinds:
                misspelt.append((n, span, typed, kinds))
        profile.eligible_words += sum(eligible(w) for _, _, w in word_spans(fixed))
    _attach_syntax(profile, misspelt, corrected, nlp)
    return profile


def _record_word(profile: TypoProfile, word: str, typed: str, max_edits: int
                 ) -> tuple[str, ...]:
    """Count one eligible corrected word in the history; its edit kinds if it was a typo."""
    if not eligible(word):
        return ()
    history = profile.history.setdefault(word.lower(), WordHistory())
    history.seen += 1
    edits = align(word, typed) if word.lower() != typed.lower() else []
    if not edits or len(edits) > max_edits:
        return ()
    history.misspelt += 1
    history.typed[typed.lower()] += 1
    for edit in edits:
        profile.counts[edit.kind] += 1
    return tuple(edit.kind for edit in edits)


def _attach_syntax(profile: TypoProfile, misspelt: list, corrected: list[str], nlp) -> None:
    """Parse only the corrected texts that had a typo, and keep each typo with its slot."""
    needed = sorted({n for n, *_ in misspelt})
    docs = dict(zip(needed, nlp.pipe(corrected[n] for n in needed), strict=True))
    for n, (start, _, word), typed, kinds in misspelt:
        token = token_at(docs[n], start)
        profile.edits.append(ObservedEdit(word.lower(), typed.lower(), token.dep_, token.pos_,
                                          kinds))
