"""How big a scorecard is: `--size tiny | small | standard` (docs/compare-models.md lists the
items and model calls of each). Here the population every lens reads; each lens declares its
own build and eval options per size (`lenses.commands.CardRun.sizes`).

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
    noise: str  # the noise level generated besides 0.0
    attributes_per_person: int
    max_list_entries: int
    schema: Path | None  # None: the full profile schema


SIZES = {
    "tiny": Size("tiny", people=3, noise="0.3", attributes_per_person=1, max_list_entries=1,
                 schema=DEMO_SCHEMA),
    "small": Size("small", people=6, noise="0.5", attributes_per_person=3, max_list_entries=2,
                  schema=None),
    "standard": Size("standard", people=10, noise="0.5", attributes_per_person=5,
                     max_list_entries=3, schema=None),
}
