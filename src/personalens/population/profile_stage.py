"""Stage 1b/1c: profile completion. Relation-grounded attributes first, then the rest per person.

Every model output goes through a pydantic model built from the YAML schema (types, list sizes,
integer bounds), with one repair turn; a person whose profile still fails is recorded as a
failure, never kept half-valid.
"""

import functools
from typing import Any, Literal

import networkx as nx
import pydantic

from personalens.models import ChatModel, complete_structured
from personalens.population.graph_stage import SYSTEM
from personalens.population.personas import Seed
from personalens.population.profile_schema import MAX_LIST_ENTRIES, AttributeSpec, ProfileSchema
from personalens.population.social_graph import neighbours
from personalens.runs.step_store import StepStore

CHUNK = 4  # attributes per request: small enough for small models to keep the schema in view
Text = pydantic.constr(strip_whitespace=True, min_length=1, max_length=60)
PARTNERED = ("Married", "Partnered")


def _field(spec: AttributeSpec, max_entries: int) -> tuple[Any, Any]:
    if spec.choices:
        return Literal[tuple(spec.choices)], pydantic.Field(description=spec.description)
    if spec.type == "list":
        return list[Text], pydantic.Field(min_length=1, max_length=max_entries,
                                          description=spec.description)
    if spec.value_kind == "integer":
        return int, pydantic.Field(ge=1, le=120, description=spec.description)
    return Text, pydantic.Field(description=spec.description)


def attribute_model(specs: list[AttributeSpec],
                    max_entries: int = MAX_LIST_ENTRIES) -> type[pydantic.BaseModel]:
    """A pydantic model with one typed, bounded field per attribute.

    One class per distinct set of attributes, made once: a class per request cost its schema
    build every time and kept ~25 KB per person alive in pydantic's caches (bench/scaling.py).
    """
    return _attribute_model(tuple(s.model_dump_json() for s in specs), max_entries)


@functools.lru_cache(maxsize=1024)
def _attribute_model(specs: tuple[str, ...], max_entries: int) -> type[pydantic.BaseModel]:
    fields = {spec.key: _field(spec, max_entries)
              for spec in map(AttributeSpec.model_validate_json, specs)}
    return pydantic.create_model("Attributes", **fields)


def clean(value: Any) -> Any:
    """Lists keep their first occurrence of each entry (case-insensitive)."""
    if isinstance(value, list):
        seen, out = set(), []
        for entry in value:
            if entry.lower() not in seen:
                seen.add(entry.lower())
                out.append(entry)
        return out
    return value


def _relations_text(graph: nx.DiGraph, name: str, personas: dict[str, str]) -> str:
    ties = [f"- {other} is {name}'s {rel} ({personas[other]})"
            for other, rel in neighbours(graph, name)]
    return "\n".join(ties) or "- (no close ties)"


# Attributes that people tied by family, work or partnership share, and the ties that share them.
# Each group is a connected component over its ties, so e.g. a whole family (parents, children
# and siblings together) gets one home country.
GROUNDED = (({"parent", "child", "sibling"}, ("home_country",)),
            ({"sibling"}, ("birth_city",)),
            ({"coworker"}, ("employer",)),
            ({"partner"}, ("current_city",)))


def grounded_groups(graph: nx.DiGraph) -> list[tuple[tuple[str, ...], list[str]]]:
    """(attribute keys, members) for every connected group over each set of tie types."""
    groups = []
    for relations, keys in GROUNDED:
        ties = nx.Graph((u, v) for u, v, r in graph.edges(data="relation") if r in relations)
        groups.extend((keys, sorted(c)) for c in
                      sorted(nx.connected_components(ties), key=lambda c: sorted(c)))
    return groups


async def grounded_attributes(model: ChatModel, store: StepStore, key: str,
                              schema: ProfileSchema, keys: tuple[str, ...], members: list[str],
                              personas: dict[str, str], max_entries: int) -> dict[str, Any]:
    specs = [schema.attributes[k] for k in keys if k in schema.attributes]
    if not specs:
        return {}

    async def ask():
        people = "\n".join(f"- {m}: {personas[m]}" for m in members)
        prompt = (f"These people are connected (family, coworkers or partners):\n{people}\n"
                  f"Give the values they share for: "
                  + "; ".join(f"{s.key} ({s.description})" for s in specs))
        parsed, _ = await complete_structured(
            model, [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}],
            attribute_model(specs, max_entries), regenerations=1, temperature=0.7,
            max_tokens=300)
        return {k: clean(v) for k, v in parsed.model_dump().items()}

    return await store.get(key, ask)


async def complete_profile(model: ChatModel, store: StepStore, key: str, schema: ProfileSchema,
                           seed: Seed, graph: nx.DiGraph, personas: dict[str, str],
                           known: dict[str, Any], max_entries: int) -> dict[str, Any]:
    """Every schema attribute not already known, asked CHUNK at a time."""
    profile = dict(known)
    missing = [s for s in schema.attributes.values() if s.key not in profile]
    for start in range(0, len(missing), CHUNK):
        specs = missing[start:start + CHUNK]

        async def ask(specs=specs):
            prompt = (f"Complete the profile of {seed.name}: {seed.persona}\n"
                      f"Their ties:\n{_relations_text(graph, seed.name, personas)}\n"
                      f"Known so far: {profile}\n"
                      "Give plausible, specific values consistent with all of this for: "
                      + "; ".join(f"{s.key} ({s.description})" for s in specs))
            parsed, _ = await complete_structured(
                model, [{"role": "system", "content": SYSTEM},
                        {"role": "user", "content": prompt}],
                attribute_model(specs, max_entries), regenerations=1, temperature=0.7,
                max_tokens=600)
            return {k: clean(v) for k, v in parsed.model_dump().items()}

        profile.update(await store.get(f"{key}/{start // CHUNK}", ask))
    return profile


def reconcile(profile: dict[str, Any], graph: nx.DiGraph, name: str) -> list[str]:
    """Repair what contradicts the graph, in place; returns what was repaired."""
    fixes = []
    has_partner = any(rel == "partner" for _, rel in neighbours(graph, name))
    status = profile.get("marital_status")
    if status is not None and has_partner and status not in PARTNERED:
        profile["marital_status"] = "Partnered"
        fixes.append(f"{name}: marital_status {status!r} contradicts a partner tie; set "
                     "'Partnered'")
    elif status in PARTNERED and not has_partner:
        profile["marital_status"] = "Single"
        fixes.append(f"{name}: marital_status {status!r} without a partner in the community; "
                     "set 'Single'")
    return fixes
