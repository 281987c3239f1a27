"""One (persona, problem) made into a prefq-bench record: candidate attributes, resolved
against the library, a sparse relevant subset with values and importances, weights normalised
to 1, and one rubric with anchored levels (1, 3, 5) per chosen preference.

Each reply's JSON schema leaves a grammar-constrained (local) model no invalid choice: the
chosen names are an enum of the candidates', importance is a whole number 1-10, a rubric has
one field per anchored level, and strings carry a maxLength. What an API model gets wrong that
can be fixed without asking again (a name off by case, an importance on the 0-1 scale) is
repaired before validation; the rest goes through `complete_structured`'s repair turn."""

import json
from typing import Any, Literal, TypeVar

import pydantic

from personalens.lenses.prefdisco.attribute_library import AttributeLibrary, Candidate, slug
from personalens.lenses.prefdisco.options import BuildOptions
from personalens.lenses.prefdisco.problems import Problem
from personalens.lenses.prefdisco.protocol import problem_text, render_persona
from personalens.models import ChatModel, complete_structured, schema_bounded

# Importance is asked for as a whole number 1-10, which a grammar can enforce (llama.cpp
# cannot bound a float), and stored as the release's local_importance = importance / 10.
IMPORTANCE_SCALE = 10
T = TypeVar("T", bound=pydantic.BaseModel)


def selection_schema(names: list[str], most: int) -> type[pydantic.BaseModel]:
    """The chosen preferences, their names an enum of the candidates' (built per request: the
    names differ every time, and structured.py caches schemas by class, weakly)."""
    by_slug = {slug(name): name for name in names}

    class ChosenPreference(pydantic.BaseModel):
        name: Literal[tuple(names)]  # type: ignore[valid-type]
        value: str = schema_bounded(150, min_length=1)
        value_range: str = schema_bounded(100)
        importance: int = pydantic.Field(ge=1, le=IMPORTANCE_SCALE)
        justification: str = schema_bounded(200)

        @pydantic.model_validator(mode="before")
        @classmethod
        def _repair(cls, data: Any) -> Any:
            """Deterministic repairs, before the generator is asked again: a name that matches
            a candidate's but for case, spacing or punctuation becomes that name; an importance
            given on the release's 0-1 scale (`local_importance`, or a fraction) is put on the
            1-10 one."""
            if not isinstance(data, dict):
                return data
            data = dict(data)
            name = data.get("name")
            if isinstance(name, str) and name not in by_slug.values():
                data["name"] = by_slug.get(slug(name), name)
            if "importance" not in data and "local_importance" in data:
                data["importance"] = data.pop("local_importance")
            importance = data.get("importance")
            if (isinstance(importance, float) and 0 < importance <= 1
                    and not importance.is_integer()):
                data["importance"] = max(1, round(importance * IMPORTANCE_SCALE))
            return data

    class Selection(pydantic.BaseModel):
        preferences: list[ChosenPreference] = pydantic.Field(min_length=1, max_length=most)

        @pydantic.model_validator(mode="before")
        @classmethod
        def _repair(cls, data: Any) -> Any:
            """Deterministic repairs: preferences naming no candidate are dropped (while one
            that does remains), so are repeats of a name; at most `most` are kept."""
            if not isinstance(data, dict) or not isinstance(data.get("preferences"), list):
                return data
            chosen, seen = [], set()
            for preference in data["preferences"]:
                name = preference.get("name") if isinstance(preference, dict) else None
                known = by_slug.get(slug(name)) if isinstance(name, str) else None
                if known is not None and known not in seen:
                    seen.add(known)
                    chosen.append(preference)
            return {**data, "preferences": chosen[:most]} if chosen else data

    return Selection


class RubricDraft(pydantic.BaseModel):
    """A rubric as the generator writes it: one field per anchored level, so no reply can
    miss or repeat an anchor; `levels` gives the release's list."""

    description: str = schema_bounded(200)
    level_1: str = schema_bounded(200, description="an answer that ignores the preference")
    level_3: str = schema_bounded(200, description="an answer that partly fits it")
    level_5: str = schema_bounded(200, description="an answer that fully fits it")

    def levels(self) -> list[dict]:
        return [{"score": n, "description": getattr(self, f"level_{n}")} for n in (1, 3, 5)]


def weights(importances: list[float]) -> list[float]:
    """Importances normalised to sum to 1 (equal weights when every importance is 0)."""
    total = sum(importances)
    if total <= 0:
        return [1.0 / len(importances)] * len(importances)
    return [i / total for i in importances]


async def build_record(model: ChatModel, library: AttributeLibrary, options: BuildOptions, *,
                       problem_id: str, row: dict, problem: Problem, persona: dict) -> dict:
    """The personalized_problem record (without its "type"), every part model-written."""
    candidates, preferences = options.candidates, options.preferences
    async def ask(system: str, user: str, schema: type[T], max_tokens: int) -> T:
        reply, _ = await complete_structured(
            model, [{"role": "system", "content": f"{system} Reply with JSON only."},
                    {"role": "user", "content": user}],
            schema, regenerations=2, temperature=options.temperature, seed=options.seed,
            max_tokens=max_tokens)
        return reply

    context = (f"The user:\n{render_persona(persona)}\n\nThe problem they bring:\n"
               f"{problem_text(problem)}")
    proposed = await ask(
        "You study how people want reasoning explained.",
        f"{context}\n\nList {candidates} preference dimensions that could change how this user "
        "wants this problem solved or explained (2-3 about expertise, the rest personal): name, "
        "description, type (expertise|personal).",
        pydantic.create_model("Candidates", dimensions=(  # up to `candidates` of them
            list[Candidate], pydantic.Field(min_length=1, max_length=candidates))), 900)
    names = list(dict.fromkeys([await library.resolve(c) for c in proposed.dimensions]))
    entries = {name: library.entries[name] for name in names}
    selection = await ask(
        "You decide which preferences matter for one user on one problem.",
        f"{context}\n\nCandidate dimensions:\n{json.dumps(list(entries.values()), indent=1)}"
        f"\n\nChoose the {preferences} most relevant for this user and problem (use their exact "
        "names). For each give this user's value, the range of possible values, its importance "
        f"for this user from 1 (minor) to {IMPORTANCE_SCALE} (crucial) and a one-sentence "
        "justification.", selection_schema(names, preferences), 900)
    chosen = selection.preferences  # known names, no repeats (the schema and its repairs)
    criteria = []
    for preference, weight in zip(chosen, weights([p.importance for p in chosen]), strict=True):
        rubric = await ask(
            "You write grading rubrics.",
            f"Preference: {preference.name} ({entries[preference.name]['description']}). This "
            f"user's value: {preference.value}.\n\nWrite a rubric for how well an answer to the "
            "problem below fits this preference: a description, and what an answer scoring 1, 3 "
            "and 5 looks like (level_1, level_3, level_5).\n\n" + problem_text(problem),
            RubricDraft, 500)
        criteria.append({"preference": preference.name, "description": rubric.description,
                         "weight": weight, "levels": rubric.levels()})
    return {
        "problem_id": problem_id, "original_problem": row, "persona": persona,
        "persona_preferences": {p.name: {
            "name": p.name, "description": entries[p.name]["description"],
            "value_range": p.value_range, "value": p.value,
            "local_importance": p.importance / IMPORTANCE_SCALE,
            "justification": p.justification, "type": entries[p.name]["type"],
            "problem_context": problem.question[:200]}
            for p in chosen},
        "evaluation_rubric": {"evaluation_criteria": criteria},
    }
