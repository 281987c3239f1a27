"""Candidate queries for one item: the same need, five fixed core terms, different syntax.

PQB fixes five core terms per item, has a model write many first-person shopping queries that
use each term exactly once and add no new attribute (only function words, modifiers and clause
structure may change), and keeps a set whose pairwise sentence-embedding cosine is >= 0.9. The
model's wording is never trusted: `check_candidate` enforces the constraint in code.
"""

import re

import numpy as np

N_CORE_TERMS = 5
_CONTENT_POS = {"NOUN", "PROPN", "ADJ", "NUM"}
# Words a query may add without adding an attribute of the item.
_GENERIC = {"thing", "something", "product", "item", "one", "kind", "type", "sort", "option",
            "anything", "piece", "i", "me", "my", "buy", "purchase"}
_FIRST_PERSON = {"i", "me", "my", "i'm", "i'd", "im", "myself"}

# Each candidate request asks for one syntactic frame, so the candidates differ in structure
# rather than in content (PQB varies function words, modification and clauses only).
FRAMES = (
    "Start with \"I need\".",
    "Start with \"I am looking for\".",
    "Use a relative clause (\"that ...\" or \"which ...\").",
    "Write it as a question that starts with \"Can I find\" or \"Where can I get\".",
    "Name the kind of product first, then attach the other words with \"with\" or \"for\".",
    "Use two short clauses joined by \"and\".",
    "Start with \"My\" and say what you want to get.",
    "Use the words in a different order than listed, in one long sentence.",
)


def core_terms(title: str, extra: str, nlp, n: int = N_CORE_TERMS) -> list[str] | None:
    """The item's n core terms: its title's distinct content words (then the rest of its text's)
    in order, lower-cased; None if the item has fewer than n."""
    terms: list[str] = []
    for doc in nlp.pipe([title, extra]):
        for token in doc:
            word = token.text.lower()
            if (token.pos_ in _CONTENT_POS and not token.is_stop and word.isalnum()
                    and len(word) >= 2 and word not in terms):
                terms.append(word)
            if len(terms) == n:
                return terms
    return None


def candidate_messages(terms: list[str], frame: str) -> list[dict]:
    words = ", ".join(f'"{t}"' for t in terms)
    return [
        {"role": "system", "content": "You write short online shopping search queries exactly as "
                                      "a customer would type them."},
        {"role": "user", "content": (
            f"Write one first-person shopping query (one sentence) for a product described by "
            f"these words: {words}. Use each of these words exactly once. Do not add any other "
            f"feature, brand, colour, size, price or purpose. {frame} Reply with the query "
            f"only.")},
    ]


def clean_reply(text: str) -> str:
    """The query in a reply: its first non-empty line, without list marks or quotes."""
    line = next((s.strip() for s in text.splitlines() if s.strip()), "")
    line = re.sub(r"^(query\s*:|[-*\d.)\s]+)\s*", "", line, flags=re.I)
    return line.strip().strip("\"'“”").strip()


def check_candidate(query: str, terms: list[str], nlp) -> str | None:
    """Why the query breaks PQB's constraint, or None if it keeps it."""
    if not query:
        return "empty"
    doc = nlp(query)
    words = [t.text.lower() for t in doc]
    for term in terms:
        count = words.count(term)
        if count != 1:
            return f"core term {term!r} appears {count} times"
    if not _FIRST_PERSON & set(words):
        return "not in the first person"
    for token in doc:
        word = token.text.lower()
        if (token.pos_ in _CONTENT_POS and word not in terms and word not in _GENERIC
                and token.lemma_.lower() not in _GENERIC and not token.is_stop):
            return f"adds {token.text!r}"
    return None


def coherent_subset(embeddings: np.ndarray, threshold: float) -> list[int]:
    """Indices of a set whose pairwise cosine similarity is >= threshold.

    Greedy and deterministic: candidates are taken by their mean similarity to all others (the
    most central first); one joins the set only if it is close enough to every member.
    """
    if len(embeddings) == 0:
        return []
    unit = embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)
    sims = unit @ unit.T
    order = np.argsort(-sims.mean(axis=1), kind="stable")
    kept: list[int] = []
    for i in order:
        if all(sims[i, j] >= threshold for j in kept):
            kept.append(int(i))
    return sorted(kept)


# The offline candidate source: fixed syntactic frames over the five terms (in the item's order),
# for machines whose only model is too small to keep the constraint (SmolLM2-135M never does).
_TEMPLATES = (
    "I need a {0} {1} {2} {3} {4}.",
    "I am looking for a {4} with {0} {1} {2} {3}.",
    "Can I find a {3} {4} that has {0} {1} {2}?",
    "Where can I get a {0} {1} {2} {3} {4}?",
    "I want something {0} and {1}, a {2} {3} {4}.",
    "For me, a {1} {2} {3} {4} that is {0}.",
    "Show me a {0} {1} {2} {3} {4}, please.",
    "I would buy a {2} {3} {4} if it is {0} and {1}.",
)


def template_candidates(terms: list[str]) -> list[str]:
    return [template.format(*terms) for template in _TEMPLATES]
