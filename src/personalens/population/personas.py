"""Who the community is made of: seed persona lines and random names, drawn with a seeded RNG."""

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from personalens.errors import InputError

DATA = Path(__file__).parent / "data"


@dataclass(frozen=True)
class Seed:
    name: str
    persona: str


def read_personas(path: Path | None = None) -> list[str]:
    """One persona per line; JSONL lines with a "persona" or "text" field (Persona Hub) work too."""
    path = path or DATA / "personas.txt"
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputError("personas file not found", where=str(path)) from None
    except UnicodeDecodeError:
        raise InputError("personas file is not UTF-8", where=str(path)) from None
    personas = []
    for number, line in enumerate(lines, start=1):
        line = line.strip()
        if not line:
            continue
        if line.startswith("{"):
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                raise InputError("line is neither plain text nor JSON",
                                 where=f"{path} line {number}") from None
            line = record.get("persona") or record.get("text") if isinstance(record, dict) else None
            if not isinstance(line, str) or not line.strip():
                raise InputError("JSON line needs a non-empty 'persona' or 'text' field",
                                 where=f"{path} line {number}")
        personas.append(line.strip())
    if not personas:
        raise InputError("personas file has no persona lines", where=str(path))
    return personas


def _names(filename: str) -> list[str]:
    return [n.strip() for n in (DATA / filename).read_text().splitlines() if n.strip()]


class SeedSampler:
    """Draws unique names and personas without replacement from one seeded generator."""

    def __init__(self, personas: list[str], rng: np.random.Generator):
        self.rng = rng
        self.personas = personas
        self.first, self.last = _names("first_names.txt"), _names("last_names.txt")
        self.used_names: set[str] = set()
        self._persona_order = list(rng.permutation(len(personas)))

    def persona(self) -> str:
        if not self._persona_order:  # more people than seed lines: start another pass
            self._persona_order = list(self.rng.permutation(len(self.personas)))
        return self.personas[self._persona_order.pop()]

    def name(self) -> str:
        for _ in range(10_000):
            last = self.last[self.rng.integers(len(self.last))]
            candidate = f"{self.first[self.rng.integers(len(self.first))]} {last}"
            if candidate not in self.used_names:
                self.used_names.add(candidate)
                return candidate
        raise RuntimeError("ran out of unique names")

    def seed(self) -> Seed:
        return Seed(self.name(), self.persona())
