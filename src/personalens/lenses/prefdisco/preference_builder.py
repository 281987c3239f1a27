"""One (persona, problem) made into a prefq-bench record: candidate attributes, resolved
against the library, a sparse relevant subset with values and importances, weights normalised
to 1, and one rubric with anchored levels (1, 3, 5) per chosen preference."""

import json
from typing import Literal

import pydantic

from personalens.lenses.prefdisco.attribute_library import AttributeLibrary, Candidate
from personalens.lenses.prefdisco.problems import Problem
from personalens.lenses.prefdisco.protocol import problem_text, render_persona
from personalens.models import ChatModel, complete_structured
from personalens.runs import RecordedFailure


class Candidates(pydantic.BaseModel):
    dimensions: list[Candidate] = pydantic.Field(min_length=1, max_length=20)


class ChosenPreference(pydantic.BaseModel):
    name: str
    value: str
    value_range: str
    local_importance: float = pydantic.Field(ge=0.0, le=1.0)
    justification: str


class Selection(pydantic.BaseModel):
    preferences: list[ChosenPreference] = pydantic.Field(min_length=1, max_length=8)


class Level(pydantic.BaseModel):
    score: Literal[1, 3, 5]
    description: str


class RubricDraft(pydantic.BaseModel):
    description: str
    levels: list[Level] = pydantic.Field(min_length=3, max_length=3)

    @pydantic.field_validator("levels")
    @classmethod
    def _anchored(cls, levels: list[Level]) -> list[Level]:
        if sorted(level.score for level in levels) != [1, 3, 5]:
            raise ValueError("levels must be anchored at scores 1, 3 and 5")
        return sorted(levels, key=lambda level: level.score)


def weights(importances: list[float]) -> list[float]:
    """Importances normalised to sum to 1 (equal weights when every importance is 0)."""
    total = sum(importances)
    if total <= 0:
        return [1.0 / len(importances)] * len(importances)
    return [i / total for i in importances]


async def build_record(model: ChatModel, library: AttributeLibrary, *, problem_id: str,
                       row: dict, problem: Problem, persona: dict, candidates: int,
                       preferences: int, temperature: float, seed: int) -> dict:
    """The personalized_problem record (without its "type"), every part model-written."""
    context = (f"The user:\n{render_persona(persona)}\n\nThe problem they bring:\n"
               f"{problem_text(problem)}")
    proposed, _ = await complete_structured(model, [
        {"role": "system", "content": "You study how people want reasoning explained. Reply "
                                      "with JSON only."},
        {"role": "user", "content": f"{context}\n\nList {candidates} preference dimensions that "
                                    "could change how this user wants this problem solved or "
                                    "explained (2-3 about expertise, the rest personal): "
                                    "name, description, type (expertise|personal)."}],
        Candidates, regenerations=2, temperature=temperature, seed=seed, max_tokens=900)
    names = list(dict.fromkeys([await library.resolve(c) for c in proposed.dimensions]))
    entries = {name: library.entries[name] for name in names}
    selection, _ = await complete_structured(model, [
        {"role": "system", "content": "You decide which preferences matter for one user on one "
                                      "problem. Reply with JSON only."},
        {"role": "user", "content": f"{context}\n\nCandidate dimensions:\n"
                                    f"{json.dumps(list(entries.values()), indent=1)}\n\nChoose "
                                    f"the {preferences} most relevant for this user and problem "
                                    "(use their exact names). For each give this user's value, "
                                    "the range of possible values, a local importance in [0, 1] "
                                    "and a one-sentence justification."}],
        Selection, regenerations=2, temperature=temperature, seed=seed, max_tokens=900)
    chosen = list({p.name: p for p in selection.preferences if p.name in entries}.values())
    if not chosen:
        raise RecordedFailure("no_preferences", "the generator chose no preference from the "
                                                f"candidates {names}", 1)
    chosen = chosen[:preferences]
    criteria = []
    for preference, weight in zip(chosen, weights([p.local_importance for p in chosen]),
                                  strict=True):
        rubric, _ = await complete_structured(model, [
            {"role": "system", "content": "You write grading rubrics. Reply with JSON only."},
            {"role": "user", "content": f"Preference: {preference.name} "
                                        f"({entries[preference.name]['description']}). This "
                                        f"user's value: {preference.value}.\n\nWrite a rubric "
                                        "for how well an answer to the problem below fits this "
                                        "preference: a description and three anchored levels "
                                        "(score 1, 3, 5).\n\n" + problem_text(problem)}],
            RubricDraft, regenerations=2, temperature=temperature, seed=seed,
            max_tokens=500)
        criteria.append({"preference": preference.name, "description": rubric.description,
                         "weight": weight, "levels": [lv.model_dump() for lv in rubric.levels]})
    return {
        "problem_id": problem_id, "original_problem": row, "persona": persona,
        "persona_preferences": {p.name: {
            "name": p.name, "description": entries[p.name]["description"],
            "value_range": p.value_range, "value": p.value,
            "local_importance": p.local_importance, "justification": p.justification,
            "type": entries[p.name]["type"], "problem_context": problem.question[:200]}
            for p in chosen},
        "evaluation_rubric": {"evaluation_criteria": criteria},
    }
