"""A small synthetic Amazon-format review set for end-to-end pqb build tests.

Four users review items of the meta fixture in clearly different syntax (terse fragments,
long subordinate clauses, questions and exclamations, first-person narrative), each with known
typo habits applied by population.typo_habits, so a build has a style signal to profile and a
typo truth to recover.
"""

import json
import random
from pathlib import Path

from personalens.population.typo_habits import apply_typos

META = Path(__file__).parent / "fixtures/pqb/meta_Musical_Instruments.jsonl"
NOUNS = ["sound", "finish", "neck", "cable", "strap", "case", "tone", "price", "build", "stand"]
ADJS = ["solid", "warm", "bright", "cheap", "sturdy", "smooth", "heavy", "clean", "loud"]

STYLES = {
    "terse": lambda r: f"{r.choice(ADJS).capitalize()} {r.choice(NOUNS)}. "
                       f"{r.choice(NOUNS).capitalize()} {r.choice(ADJS)}, {r.choice(ADJS)}.",
    "clausal": lambda r: (f"Although the {r.choice(NOUNS)} that came with it was "
                          f"{r.choice(ADJS)}, I think that the {r.choice(NOUNS)}, which my "
                          f"brother tested, is {r.choice(ADJS)} because it was made well."),
    "questions": lambda r: (f"Why is the {r.choice(NOUNS)} so {r.choice(ADJS)}? "
                            f"Would anyone really want a {r.choice(ADJS)} {r.choice(NOUNS)}?"),
    "narrative": lambda r: (f"I played it every night and I loved the {r.choice(NOUNS)}. "
                            f"My teacher checked the {r.choice(NOUNS)} and she liked it."),
}
TYPO_RATES = {
    "terse": {"transposition": 0.08, "deletion": 0.04},
    "clausal": {"adjacent_key": 0.06, "repetition": 0.03},
    "questions": {},
    "narrative": {"insertion": 0.05, "other": 0.02, "transposition": 0.03},
}


def item_ids() -> list[str]:
    return [json.loads(line)["parent_asin"] for line in META.read_text().splitlines()]


def write_reviews(path: Path, seed: int = 0, reviews_per_user: int = 10) -> dict:
    """Writes the reviews file; returns {uid: typo rates} (the truth)."""
    rng = random.Random(seed)
    items, lines = item_ids(), []
    for u, (style, write) in enumerate(STYLES.items()):
        uid = f"U{u}_{style.upper()}"
        # Users overlap on the first items, so most items have two or more reviewers.
        for n, asin in enumerate(items[u % 3: u % 3 + reviews_per_user]):
            text = " ".join(write(rng) for _ in range(3))
            typed = apply_typos(text, TYPO_RATES[style], rng)
            lines.append({"rating": 5.0, "title": f"Review {n}", "text": typed, "images": [],
                          "asin": asin, "parent_asin": asin, "user_id": uid,
                          "timestamp": 1_600_000_000_000 + n * 1000, "helpful_vote": 0,
                          "verified_purchase": True})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return {f"U{u}_{s.upper()}": TYPO_RATES[s] for u, s in enumerate(STYLES)}
