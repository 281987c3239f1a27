"""How big a scorecard is: `--size tiny | small | standard` (docs/compare-models.md lists the
items and model calls of each).

tiny is sized to finish for one system with the bundled model on 2 cores within 10 minutes
from an empty cache, builds included (`bench/scorecard_tiny.py`); small is a first real
comparison through an API; standard follows the papers' defaults where a run stays affordable.
"""

from dataclasses import dataclass
from pathlib import Path

DEMO_SCHEMA = Path(__file__).resolve().parent.parent / "population" / "data" / "demo_schema.yaml"


@dataclass(frozen=True)
class Size:
    name: str
    # the population (personalens generate)
    people: int
    noise: str  # the noise level personabench is scored at (generated with 0.0)
    attributes_per_person: int
    max_list_entries: int
    schema: Path | None  # None: the full PersonaBench schema
    # personabench eval
    k: int
    # pqb build and eval
    pqb_candidates: str  # "templates" (no model) or "model"
    pqb_items: int | None
    pqb_min_sentences: int  # a user's sentences needed to fit their style
    pqb_pair_users: str  # "owners" (the paper) or "all" (any two users, for few purchases)
    # prefdisco build and eval
    prefdisco_tasks: tuple[str, ...]  # the shipped problems' tasks to draw from; () = all five
    prefdisco_problems: int  # problems per task
    prefdisco_per_problem: int
    prefdisco_preferences: int
    prefdisco_turns: int
    # prisk build and eval
    prisk_profiles: int
    prisk_per_risk: int
    prisk_risks: tuple[str, ...]  # build risks
    prisk_samples: int  # narrowing samples per personalised condition
    prisk_base_samples: int  # ... and of the generic base
    prisk_max_tokens: int  # every system's answer cap (one protocol per card)


SIZES = {
    "tiny": Size("tiny", people=3, noise="0.3", attributes_per_person=1, max_list_entries=1,
                 schema=DEMO_SCHEMA, k=2, pqb_candidates="templates", pqb_items=None,
                 pqb_min_sentences=3, pqb_pair_users="all",
                 prefdisco_tasks=("math", "social"), prefdisco_problems=1,
                 prefdisco_per_problem=1, prefdisco_preferences=2,
                 prefdisco_turns=2, prisk_profiles=1, prisk_per_risk=1,
                 prisk_risks=("irp", "framing", "narrowing"), prisk_samples=2,
                 prisk_base_samples=2, prisk_max_tokens=128),
    "small": Size("small", people=6, noise="0.5", attributes_per_person=3, max_list_entries=2,
                  schema=None, k=5, pqb_candidates="model", pqb_items=40,
                  pqb_min_sentences=10, pqb_pair_users="all",
                  prefdisco_tasks=(), prefdisco_problems=2, prefdisco_per_problem=2,
                  prefdisco_preferences=3,
                  prefdisco_turns=5, prisk_profiles=4, prisk_per_risk=5,
                  prisk_risks=("irp", "accuracy", "agreement", "framing", "narrowing"),
                  prisk_samples=5, prisk_base_samples=5, prisk_max_tokens=256),
    "standard": Size("standard", people=10, noise="0.5", attributes_per_person=5,
                     max_list_entries=3, schema=None, k=5, pqb_candidates="model",
                     pqb_items=None, pqb_min_sentences=30, pqb_pair_users="owners",
                     prefdisco_tasks=(), prefdisco_problems=5, prefdisco_per_problem=2,
                     prefdisco_preferences=3, prefdisco_turns=5, prisk_profiles=8,
                     prisk_per_risk=10,
                     prisk_risks=("irp", "accuracy", "agreement", "framing", "narrowing"),
                     prisk_samples=20, prisk_base_samples=50, prisk_max_tokens=1600),
}
