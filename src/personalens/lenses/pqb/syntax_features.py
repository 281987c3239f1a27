"""PQB's lexicon-free syntactic rules per sentence, and the feature space they span.

Each sentence of a spaCy parse (en_core_web_sm) becomes a Counter of rule strings:
  D4|grandparentPOS|headPOS|dep|childPOS  for a token whose head is not the root, i.e. the
                                            head has a head of its own;
  D3|headPOS|dep|childPOS                  for every token except the root;
  P3|pos_i|pos_i+1|pos_i+2                 for each POS trigram inside the sentence.

Punctuation is kept: PUNCT tokens are ordinary tokens in all three rule kinds, because how a
person punctuates ("!!", a comma before "sadly") is part of their written style and PQB's rules
are computed on the unfiltered parse. Whitespace tokens (spaCy's SPACE, e.g. a double space or a
newline) are dropped everywhere: they come from formatting, not from the sentence's syntax.

No words appear in a rule, so two sentences about different products can share every rule.
"""

import os
from collections import Counter
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse

from personalens.lenses.pqb.spacy_pipeline import load_pipeline

SKIPPED_POS = "SPACE"


def sentence_rules(doc) -> list[Counter]:
    """One Counter of rule strings per sentence of a parsed spaCy Doc, in sentence order.

    A sentence with no rules (a single word) still gets an (empty) Counter, so the list lines
    up with `doc.sents`.
    """
    return [_rules(sentence) for sentence in doc.sents]


def _rules(sentence) -> Counter:
    tokens = [t for t in sentence if t.pos_ != SKIPPED_POS]
    rules: Counter = Counter()
    for token in tokens:
        head = token.head
        if head.i == token.i or head.pos_ == SKIPPED_POS:
            continue  # the root has no head; a rule through whitespace says nothing
        rules[f"D3|{head.pos_}|{token.dep_}|{token.pos_}"] += 1
        grandparent = head.head
        if grandparent.i != head.i and grandparent.pos_ != SKIPPED_POS:
            rules[f"D4|{grandparent.pos_}|{head.pos_}|{token.dep_}|{token.pos_}"] += 1
    pos = [t.pos_ for t in tokens]
    rules.update(f"P3|{a}|{b}|{c}" for a, b, c in zip(pos, pos[1:], pos[2:], strict=False))
    return rules


# Chosen by bench/pqb_spacy_processes.py (see bench/RESULTS.md): a second process pays for its
# start-up (loading the pipeline again) only past a few thousand texts.
MULTIPROCESS_FROM = 4000
PARSE_CHUNK = 2000  # texts per task on a distributed executor


def processes_for(n_texts: int) -> int:
    """spaCy processes for parsing `n_texts` texts in-process: 1, or 2 for big inputs."""
    return min(2, os.cpu_count() or 1) if n_texts >= MULTIPROCESS_FROM else 1


def text_rules(texts: list[str], nlp=None, batch_size: int = 256,
               n_process: int = 1) -> list[list[Counter]]:
    """Per text, the rule Counters of its sentences (spaCy splits the sentences).

    `nlp` defaults to the lens's one pipeline (`load_pipeline()`); the lemmatizer is skipped
    because rules use only POS tags and dependencies.
    """
    nlp = load_pipeline() if nlp is None else nlp
    unused = [name for name in ("lemmatizer", "ner") if name in nlp.pipe_names]
    docs = nlp.pipe(texts, batch_size=batch_size, n_process=n_process, disable=unused)
    return [sentence_rules(doc) for doc in docs]


@dataclass
class FeatureSpace:
    """The rules kept as columns (sorted), and the count transform x/(1+x) into them."""

    vocabulary: list[str]
    min_df: int = 2

    def __post_init__(self) -> None:
        if self.vocabulary != sorted(set(self.vocabulary)):
            raise ValueError("the vocabulary must be sorted and without repeats")

    @cached_property
    def _index(self) -> dict[str, int]:
        return {rule: i for i, rule in enumerate(self.vocabulary)}

    @classmethod
    def fit(cls, counters: list[Counter], min_df: int = 2) -> "FeatureSpace":
        """Keep rules present in at least `min_df` sentences (a count of 3 in one sentence is 1)."""
        df: Counter = Counter()
        for counter in counters:
            df.update(rule for rule, count in counter.items() if count > 0)
        return cls(sorted(rule for rule, n in df.items() if n >= min_df), min_df)

    def __len__(self) -> int:
        return len(self.vocabulary)

    def transform(self, counters: list[Counter], sparse: bool = False):
        """Rows of x/(1+x) per rule (float32); rules outside the vocabulary are ignored.

        x/(1+x) keeps a rule's presence (0.5 for one occurrence) dominant over its repetition,
        so long sentences do not swamp short ones. `sparse=True` gives a CSR matrix with the
        same values, for corpora too large for a dense array.
        """
        cells = [(row, self._index[rule], count) for row, counter in enumerate(counters)
                 for rule, count in counter.items() if rule in self._index and count > 0]
        rows, cols, counts = zip(*cells, strict=True) if cells else ((), (), ())
        x = np.asarray(counts, dtype=np.float32)
        values = x / (1.0 + x)
        shape = (len(counters), len(self.vocabulary))
        matrix = scipy.sparse.csr_matrix((values, (rows, cols)), shape=shape, dtype=np.float32)
        return matrix if sparse else matrix.toarray()

    def to_json(self) -> dict:
        return {"vocabulary": self.vocabulary, "min_df": self.min_df}

    @classmethod
    def from_json(cls, data: dict) -> "FeatureSpace":
        return cls(list(data["vocabulary"]), int(data["min_df"]))
