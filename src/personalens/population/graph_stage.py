"""Stage 1a: the social graph. A triad from the model, then expansion one newcomer at a time."""

from typing import Literal

import numpy as np
import pydantic

from personalens.models import ChatModel, complete_structured
from personalens.population.personas import Seed
from personalens.population.social_graph import RELATIONS, Relation
from personalens.runs.step_store import StepStore

Rel = Literal["parent", "child", "sibling", "partner", "coworker", "friend"]
SYSTEM = ("You design realistic, diverse fictional people for a synthetic dataset. "
          "Reply with JSON only.")


class TriadLink(pydantic.BaseModel):
    relation: Rel
    description: str = pydantic.Field(min_length=1, max_length=300)


class Triad(pydantic.BaseModel):
    first_second: TriadLink
    first_third: TriadLink
    second_third: TriadLink


class Newcomer(pydantic.BaseModel):
    relation_to_anchor: Rel
    description: str = pydantic.Field(min_length=1, max_length=300)
    also_knows_other: bool
    relation_to_other: Rel


def _who(seed: Seed) -> str:
    return f"{seed.name} ({seed.persona})"


async def triad(model: ChatModel, store: StepStore, key: str, seeds: list[Seed]) -> list[Relation]:
    a, b, c = seeds

    async def ask():
        prompt = (f"Three people live in the same community:\n1. {_who(a)}\n2. {_who(b)}\n"
                  f"3. {_who(c)}\nDecide how each pair knows each other. For each pair give "
                  f"the relation of the second person to the first, one of {', '.join(RELATIONS)}"
                  ", and one sentence describing the tie.")
        parsed, _ = await complete_structured(
            model, [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}],
            Triad, regenerations=1, temperature=0.7, max_tokens=400)
        return parsed.model_dump()

    value = await store.get(key, ask)
    pairs = {"first_second": (a, b), "first_third": (a, c), "second_third": (b, c)}
    return [Relation(pairs[k][0].name, pairs[k][1].name, v["relation"], v["description"])
            for k, v in value.items()]


async def newcomer(model: ChatModel, store: StepStore, key: str, new: Seed, anchor: Seed,
                   other: Seed) -> dict:
    """How a new person joins: their relation to an anchor and, maybe, to one more member."""

    async def ask():
        prompt = (f"{_who(new)} is joining a community. They know {_who(anchor)}. "
                  f"Choose what {anchor.name} is to {new.name} (one of {', '.join(RELATIONS)}) "
                  f"and describe the tie in one sentence. Then say whether {new.name} also "
                  f"knows {_who(other)}, and if so, what {other.name} is to {new.name}.")
        parsed, _ = await complete_structured(
            model, [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}],
            Newcomer, regenerations=1, temperature=0.7, max_tokens=300)
        return parsed.model_dump()

    return await store.get(key, ask)


def pick_anchor(rng: np.random.Generator, members: int) -> tuple[int, int]:
    """Indices of the anchor and of a second member (different when there are two or more)."""
    anchor = int(rng.integers(members))
    if members == 1:
        return anchor, anchor
    other = int(rng.integers(members - 1))
    return anchor, other + 1 if other >= anchor else other
