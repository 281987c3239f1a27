"""The global library of preference attributes, grown by the generator without duplicates.

A candidate attribute is compared with the library by embedding (cosine of "name: description");
when its nearest entry is at least `threshold` similar, the generator is asked whether the two
are the same attribute, and only a "yes" merges them. Each decision is a step of the build
(`library/<candidate>`), so a resumed build rebuilds the same library from its records.
"""

import asyncio
import re
from typing import Any, Literal

import numpy as np
import pydantic

from personalens.lenses.prefdisco.persona_source import Encode, cosine
from personalens.models import ChatModel, complete_structured, schema_bounded
from personalens.runs import StepStore

STEP_PREFIX = "library/"


class Candidate(pydantic.BaseModel):
    name: str = pydantic.Field(min_length=2, max_length=80)
    description: str = schema_bounded(150)
    type: Literal["expertise", "personal"]

    @pydantic.field_validator("type", mode="before")
    @classmethod
    def _known_type(cls, value: Any) -> Any:
        """'Expertise', 'domain expertise', 'Personal preference': repaired, not re-asked."""
        lowered = value.strip().lower() if isinstance(value, str) else ""
        if "expert" in lowered:
            return "expertise"
        return "personal" if "personal" in lowered else value


class SameAttribute(pydantic.BaseModel):
    same: bool


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


class AttributeLibrary:
    def __init__(self, model: ChatModel, encode: Encode, steps: StepStore, *,
                 threshold: float = 0.8):
        self.model = model
        self.encode = encode
        self.steps = steps
        self.threshold = threshold
        self.entries: dict[str, dict] = {}  # name -> {name, description, type}
        self._vectors: list[np.ndarray] = []
        self._lock = asyncio.Lock()
        self.merges = 0  # candidates merged into an existing entry (this session and replayed)

    async def restore(self) -> None:
        """Rebuild from the build's recorded decisions (records keep their order)."""
        recorded = self.steps.done
        for key in recorded:  # keys first: only the decisions' records are read from disk
            if key.startswith(STEP_PREFIX):
                await self._apply(recorded[key]["value"])

    async def resolve(self, candidate: Candidate) -> str:
        """The library name for `candidate`: an existing entry's, or its own once added."""
        async with self._lock:  # one decision at a time: each sees every earlier addition
            key = f"{STEP_PREFIX}{slug(candidate.name)}"
            fresh = key not in self.steps.done  # a recorded decision was applied by restore
            decision = await self.steps.get(key, lambda: self._decide(candidate))
            if fresh:
                await self._apply(decision)
            return decision["merged_into"] or decision["name"]

    async def _decide(self, candidate: Candidate) -> dict:
        decision = {**candidate.model_dump(), "merged_into": None, "similarity": None}
        if candidate.name in self.entries:
            return {**decision, "merged_into": candidate.name, "similarity": 1.0}
        if not self._vectors:
            return decision
        vector = (await self.encode([_text(decision)]))[0]
        similarities = cosine(np.stack(self._vectors), vector)
        nearest = int(np.argmax(similarities))
        decision["similarity"] = float(similarities[nearest])
        if similarities[nearest] < self.threshold:
            return decision
        existing = list(self.entries.values())[nearest]
        verdict, _ = await complete_structured(self.model, [
            {"role": "system", "content": "You deduplicate a library of user-preference "
                                          'attributes. Reply with JSON {"same": true|false}.'},
            {"role": "user", "content": f"Attribute A: {_text(existing)}\nAttribute B: "
                                        f"{_text(decision)}\nDo A and B describe the same "
                                        "preference dimension?"}],
            SameAttribute, regenerations=2, temperature=0.0, max_tokens=20)
        return {**decision, "merged_into": existing["name"] if verdict.same else None}

    async def _apply(self, decision: dict) -> None:
        if decision["merged_into"] is not None:
            self.merges += 1
        elif decision["name"] not in self.entries:
            entry = {k: decision[k] for k in ("name", "description", "type")}
            self.entries[entry["name"]] = entry
            self._vectors.append((await self.encode([_text(entry)]))[0])


def _text(entry: dict) -> str:
    return f"{entry['name']}: {entry['description']}"
