"""Spelling correctors: the "grammar-corrected" side PQB aligns a user's own writing against.

Any object with `async def correct(self, texts: list[str]) -> list[str]` is a corrector. The
default needs nothing but pyspellchecker's English word list; an LLM can be plugged in instead.
"""

import asyncio
import re
from typing import Protocol

from personalens.lenses.pqb.typo_edits import LETTER_RUN
from personalens.models import ChatModel, ModelCallFailed
from personalens.population.typo_habits import match_word_case

# Words keep their inner apostrophes: split at them, "isn" and "ll" are unknown to the word
# list and would be "corrected" into other words.
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
_SKIPPED = " \t" + "\"'“‘([-–—"  # may stand between a sentence's end and its first word


class Corrector(Protocol):
    async def correct(self, texts: list[str]) -> list[str]: ...


def _starts_sentence(text: str, start: int) -> bool:
    """Whether the word at `start` opens the text, a line or a sentence."""
    i = start - 1
    while i >= 0 and text[i] in _SKIPPED:
        i -= 1
    return i < 0 or text[i] in ".!?:\n\r"


class DictionaryCorrector:
    """Word by word with pyspellchecker: only unknown words change, everything else stays.

    A correction is kept only if it has the same apostrophes as the word (so "dont" is not
    turned into "don't", which would change how many words the typo model sees). With
    `keep_names`, a capitalised word inside a sentence is taken for a name and left alone:
    names are the word list's main false alarms ("Yuval" -> "Naval") and its slowest lookups.
    Corrections are cached per lower-cased word: an unknown word with no candidate at edit
    distance 1 takes up to a second to search at distance 2, and such words repeat.
    """

    def __init__(self, language: str = "en", distance: int = 2, keep_names: bool = True):
        from spellchecker import SpellChecker

        self._speller = SpellChecker(language=language, distance=distance)
        self._keep_names = keep_names
        self._cache: dict[str, str] = {}

    async def correct(self, texts: list[str]) -> list[str]:
        return [self.correct_text(text) for text in texts]

    def correct_text(self, text: str) -> str:
        def fix(match: re.Match) -> str:
            word = match.group()
            is_name = word[0].isupper() and not _starts_sentence(text, match.start())
            return word if self._keep_names and is_name else self.correct_word(word)

        return _WORD.sub(fix, text)

    def correct_word(self, word: str) -> str:
        key = word.lower().replace("’", "'")
        if key not in self._cache:
            self._cache[key] = self._lookup(key)
        fixed = self._cache[key]
        if fixed == key:
            return word
        return match_word_case(fixed.replace("'", "’") if "’" in word else fixed, word)

    def _lookup(self, key: str) -> str:
        if len(key) < 2 or self._speller.known([key]):
            return key
        fixed = self._speller.correction(key)
        if not fixed or LETTER_RUN.sub("", fixed) != LETTER_RUN.sub("", key):
            return key
        if key.isascii() and not fixed.isascii():
            return key  # "cafe" -> "café" adds an accent the writer never meant to type
        return fixed


_INSTRUCTION = (
    "You fix spelling mistakes. Reply with the corrected text only, with no quotes and no "
    "comment. Correct misspelt words and nothing else: keep every other word, the word order, "
    "the punctuation and the capitalisation exactly as they are.")
_FENCE = re.compile(r"^\s*```[a-z]*\s*(.*?)\s*```\s*$", re.S)


def _clean_reply(text: str) -> str:
    """The correction without the code fence or quotes small models like to wrap it in."""
    fenced = _FENCE.match(text)
    text = (fenced.group(1) if fenced else text).strip()
    if len(text) > 1 and text[0] == text[-1] and text[0] in "\"'“”":
        text = text[1:-1].strip()
    return text


class LLMCorrector:
    """One chat call per text; a call that still fails after the model's retries raises
    `ModelCallFailed` (an empty reply counts as a failure), and the caller records it."""

    def __init__(self, model: ChatModel):
        self.model = model

    async def correct(self, texts: list[str]) -> list[str]:
        tasks = [asyncio.ensure_future(self._one(text)) for text in texts]
        try:
            return list(await asyncio.gather(*tasks))
        except BaseException:
            for task in tasks:  # one text failed: don't leave the others running unobserved
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise

    async def _one(self, text: str) -> str:
        messages = [{"role": "system", "content": _INSTRUCTION},
                    {"role": "user", "content": text}]
        completion = await self.model.complete(
            messages, accept=lambda reply: bool(_clean_reply(reply)), temperature=0.0, seed=0,
            max_tokens=32 + 3 * len(text.split()))
        corrected = _clean_reply(completion.text)
        if not corrected:
            self.model.ledger.failure(self.model.role, "empty_correction")
            raise ModelCallFailed("empty_correction", "the model replied with no text", 1)
        return corrected
