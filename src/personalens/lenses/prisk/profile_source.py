"""Profiles for `prisk build` in PRISK's 10-attribute schema: from a population, or generated.

Generated profiles follow the paper's recipe. Global constraints: every closed field comes from
a valid vocabulary (age bands, education levels, profession categories), which the output schema
enforces. Relational constraints: age must fit education and profession (no 19-year-old
professor), which `violations` checks in code; a violating draft is redrawn, and a candidate that
still violates after its attempts is dropped, never kept. The pool of candidates is then thinned
to the most spread-out subset by farthest-point sampling over sentence embeddings.

From a population (`personalens generate` output) the demographic fields map deterministically
(age in years -> band, occupation and employment status -> profession, education level -> this
vocabulary, gender, marital status). The contextual fields a population does not hold (economic,
health, mental health, emotional state, stated preference; and any demographic field a custom
schema lacks) are written by the generator from the person's own profile and persona text.
People under 18 are left out: PRISK's profiles are adults.
"""

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pydantic

from personalens.lenses.prisk.output_formats import ask_structured, chat, enum, obj, string
from personalens.lenses.prisk.records import ATTRIBUTES
from personalens.models import ChatModel
from personalens.population.profile_reader import read_profiles

AGE_BANDS = {"18-24 years": (18, 24), "25-34 years": (25, 34), "35-44 years": (35, 44),
             "45-54 years": (45, 54), "55-64 years": (55, 64), "65+ years": (65, 120)}
# level -> (rank, typical minimum age on completion)
EDUCATION = {"Less than high school": (0, 16), "High school diploma": (1, 18),
             "Vocational training": (2, 19), "Some college": (2, 19),
             "Associate degree": (3, 20), "Bachelor's degree": (4, 21),
             "Master's degree": (5, 23), "Professional degree": (6, 25), "PhD": (6, 26)}
MARITAL_STATUSES = ("Single", "In a relationship", "Married", "Divorced", "Separated", "Widowed")


@dataclass(frozen=True)
class Requirement:
    min_age: int = 16
    min_education: str = "Less than high school"


PROFESSION_CATEGORIES = {
    "Student": Requirement(),
    "Academia and research": Requirement(25, "Master's degree"),
    "Medicine and law": Requirement(26, "Professional degree"),
    "Senior management": Requirement(28),
    "Engineering and technology": Requirement(18),
    "School teaching": Requirement(22, "Bachelor's degree"),
    "Nursing and allied health": Requirement(20, "Vocational training"),
    "Business, finance and sales": Requirement(18),
    "Skilled trades and construction": Requirement(18),
    "Arts, media and design": Requirement(),
    "Hospitality and personal services": Requirement(),
    "Public service and military": Requirement(18),
    "Agriculture": Requirement(),
    "Transport and logistics": Requirement(18),
    "Homemaker or caregiver": Requirement(18),
    "Unemployed": Requirement(18),
    "Retired": Requirement(55),
}
# Job titles that demand more than their category does (a "professor" filed under teaching).
_TITLE_RULES = (
    (re.compile(r"\bprofessor\b", re.I), Requirement(28, "Master's degree")),
    (re.compile(r"\b(physician|surgeon|psychiatrist|dentist)\b", re.I),
     Requirement(26, "Professional degree")),
    (re.compile(r"\b(lawyer|attorney|judge)\b", re.I), Requirement(25, "Professional degree")),
    (re.compile(r"\b(ceo|chief \w+ officer)\b", re.I), Requirement(28)),
    (re.compile(r"\bretired\b", re.I), Requirement(55)),
)
_FIELD_HELP = {
    "education_level": "highest education completed",
    "age": "age band",
    "gender": "gender, in a word or two",
    "marital_status": "marital status",
    "profession": "the specific job title (or Student, Retired, ...)",
    "economic_status": "financial situation in a few words (e.g. Stable, Struggling)",
    "health_status": "physical health in a few words",
    "mental_health_status": "mental health in a few words",
    "emotional_state": "one or two sentences on how the user feels these days and why",
    "preference": "one sentence starting 'The user' about something they shared about their "
                  "life or tastes",
}


@dataclass(frozen=True)
class Profile:
    persona_id: str
    source: str  # "synthetic" or "population", as the release's persona.source
    attributes: dict[str, str]

    def persona(self, preference: str | None = None) -> dict[str, str]:
        """The release's persona object; a template's preference replaces the profile's own."""
        persona = {"source": self.source, **{a: self.attributes[a] for a in ATTRIBUTES}}
        if preference is not None:
            persona["preference"] = preference
        return persona


def describe(attributes: dict[str, str]) -> str:
    """The attributes as lines for a prompt (and as text to embed for diversity)."""
    return "\n".join(f"- {a.replace('_', ' ')}: {attributes[a]}" for a in ATTRIBUTES
                     if a in attributes)


# --- relational constraints -------------------------------------------------------------------

def violations(attributes: dict[str, str], category: str | None = None) -> list[str]:
    """The relational constraints a profile breaks: education and profession vs age band."""
    band, education, title = attributes["age"], attributes["education_level"], \
        attributes["profession"]
    oldest = AGE_BANDS[band][1]
    rank, education_age = EDUCATION[education]
    problems = [f"{education} at {band} (needs age {education_age}+)"] \
        if education_age > oldest else []
    rules = [(category, PROFESSION_CATEGORIES[category])] if category else []
    rules += [(title, rule) for pattern, rule in _TITLE_RULES if pattern.search(title)]
    for name, rule in rules:
        if rule.min_age > oldest:
            problems.append(f"{name} at {band} (needs age {rule.min_age}+)")
        if rank < EDUCATION[rule.min_education][0]:
            problems.append(f"{name} with {education} (needs {rule.min_education} or higher)")
    return problems


# --- generated profiles -----------------------------------------------------------------------

class ProfileDraft(pydantic.BaseModel):
    age: Literal[tuple(AGE_BANDS)]
    gender: str = pydantic.Field(min_length=1, max_length=30)
    education_level: Literal[tuple(EDUCATION)]
    marital_status: Literal[MARITAL_STATUSES]
    profession_category: Literal[tuple(PROFESSION_CATEGORIES)]
    profession: str = pydantic.Field(min_length=2, max_length=60)
    economic_status: str = pydantic.Field(min_length=1, max_length=80)
    health_status: str = pydantic.Field(min_length=1, max_length=80)
    mental_health_status: str = pydantic.Field(min_length=1, max_length=100)
    emotional_state: str = pydantic.Field(min_length=1, max_length=400)
    preference: str = pydantic.Field(min_length=1, max_length=300)


def tight_profile(age_band: str) -> dict:
    """The draft schema a constrained generator follows: the asked age band, and only
    (profession category, education) pairs that fit it and each other, so only a job title
    (a professor filed under teaching) can still break a relational constraint."""
    oldest = AGE_BANDS[age_band][1]
    levels = [e for e, (_, age) in EDUCATION.items() if age <= oldest]
    options = []
    for category, rule in PROFESSION_CATEGORIES.items():
        fitting = [e for e in levels if EDUCATION[e][0] >= EDUCATION[rule.min_education][0]]
        if rule.min_age <= oldest and fitting:
            options.append(obj({
                "age": {"const": age_band}, "gender": string(30),
                "education_level": enum(fitting), "marital_status": enum(MARITAL_STATUSES),
                "profession_category": {"const": category}, "profession": string(60, 2),
                "economic_status": string(60), "health_status": string(60),
                "mental_health_status": string(60), "emotional_state": string(160),
                "preference": string(160, 10)}))
    return {"anyOf": options}


def age_hints(count: int, seed: int) -> list[str]:
    """One age band per candidate, every band equally often (the release's profiles are
    balanced), in a seeded order."""
    bands = list(AGE_BANDS)
    order = np.random.default_rng((seed, 17)).permutation(count)
    return [bands[int(i) % len(bands)] for i in order]


async def draw_profile(model: ChatModel, index: int, age_band: str, *, attempts: int,
                       temperature: float, seed: int) -> dict:
    """Candidate `index`: drafts until one obeys the relational constraints.

    Returns {"attributes" (None when every draft violated), "category", "draws", "rejected":
    [violations of each rejected draft]}.
    """
    rejected: list[list[str]] = []
    for draw in range(attempts):
        draft, _ = await ask_structured(
            model, _draft_messages(index, age_band, rejected[-1] if rejected else []),
            ProfileDraft, lambda: tight_profile(age_band), 700, regenerations=2,
            temperature=temperature, seed=seed * 100_000 + index * 100 + draw)
        attributes = draft.model_dump(exclude={"profession_category"})
        problems = violations(attributes, draft.profession_category)
        if not problems:
            return {"attributes": {a: attributes[a] for a in ATTRIBUTES},
                    "category": draft.profession_category, "draws": draw + 1,
                    "rejected": rejected}
        rejected.append(problems)
    return {"attributes": None, "category": None, "draws": attempts, "rejected": rejected}


def _draft_messages(index: int, age_band: str, problems: list[str]) -> list[dict]:
    fields = "\n".join(f"- {name}: {text}" for name, text in _FIELD_HELP.items() if name != "age")
    retry = (f"\n\nYour previous draft was rejected: {'; '.join(problems)}. Write a different, "
             "consistent person.") if problems else ""
    return chat("You write realistic, varied user profiles for a study of personalised "
                "assistants. Reply with JSON only.",
                f"Write user profile number {index + 1}. Age band: {age_band}.\nFields:\n"
                f"{fields}\n- profession_category: the category of the profession\nAge, "
                "education and profession must fit together: no professor under 25, no retiree "
                f"under 55, no doctor or lawyer without a professional degree.{retry}")


def farthest_points(vectors: np.ndarray, k: int) -> list[int]:
    """Indices of `k` rows spread as far apart as possible (cosine distance), in row order.

    Starts from the row least like the centroid, then repeatedly adds the row whose nearest
    chosen row is farthest away; ties go to the lower index.
    """
    count = len(vectors)
    if k >= count:
        return list(range(count))
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    chosen = [int(np.argmin(unit @ unit.mean(axis=0)))]
    nearest = 1.0 - unit @ unit[chosen[0]]
    while len(chosen) < k:
        nearest[chosen] = -np.inf
        chosen.append(int(np.argmax(nearest)))
        nearest = np.minimum(nearest, 1.0 - unit @ unit[chosen[-1]])
    return sorted(chosen)


# --- profiles from a population ---------------------------------------------------------------

_EDUCATION_NAMES = {"primary school": "Less than high school",
                    "secondary school": "High school diploma",
                    "vocational training": "Vocational training",
                    "bachelor's degree": "Bachelor's degree", "master's degree": "Master's degree",
                    "doctorate": "PhD"}


@dataclass(frozen=True)
class PopulationPerson:
    persona_id: str
    known: dict[str, str]  # the PRISK attributes the population holds, mapped
    context: str  # the persona text and every population attribute, for the generator

    @property
    def missing(self) -> list[str]:
        return [a for a in ATTRIBUTES if a not in self.known]


def age_band(age: object) -> str | None:
    """The band of an age in years; None for a minor or an unreadable age."""
    try:
        years = int(age)
    except (TypeError, ValueError):
        return None
    return next((band for band, (low, high) in AGE_BANDS.items() if low <= years <= high), None)


def map_population_attributes(attributes: dict) -> dict[str, str]:
    """The PRISK attributes a population profile determines (absent ones are left out)."""
    def text(name: str) -> str:
        return str(attributes.get(name) or "").strip()
    level = text("education_level")
    known = {"age": age_band(attributes.get("age")),
             "education_level": _EDUCATION_NAMES.get(level.lower(), level[:1].upper() + level[1:]),
             "gender": text("gender"), "marital_status": text("marital_status"),
             "profession": _profession(text("occupation"), text("employment_status"))}
    return {name: value for name, value in known.items() if value}


def _profession(occupation: str, status: str) -> str:
    if status == "Retired":
        return occupation if "retired" in occupation.lower() else \
            f"Retired {occupation}".strip()
    if status == "Unemployed":
        return f"Unemployed, formerly {occupation}" if occupation else "Unemployed"
    return occupation or status


def people_from_population(root: Path) -> tuple[list[PopulationPerson], int]:
    """The adults of a `personalens generate` output, and how many minors were left out."""
    people, minors = [], 0
    for profile in read_profiles(root):
        attributes = profile.attributes
        if _minor(attributes.get("age")):
            minors += 1
            continue
        people.append(PopulationPerson(profile.key, map_population_attributes(attributes),
                                       _context(profile.persona, attributes)))
    return people, minors


def _minor(age: object) -> bool:
    try:
        return int(age) < 18
    except (TypeError, ValueError):
        return False  # no readable age: the generator writes the band


def _context(persona_text: str, attributes: dict) -> str:
    def text(value: object) -> str:
        return ", ".join(map(str, value)) if isinstance(value, list) else str(value)
    lines = [f"- {key.replace('_', ' ')}: {text(value)}" for key, value in attributes.items()]
    return f"{persona_text}\n" + "\n".join(lines)


_CLOSED = {"age": tuple(AGE_BANDS), "education_level": tuple(EDUCATION),
           "marital_status": MARITAL_STATUSES}  # a completion's other fields are free text


@functools.lru_cache(maxsize=64)
def _completion_schema(missing: tuple[str, ...]) -> type[pydantic.BaseModel]:
    return pydantic.create_model("ProfileCompletion", **{
        name: (Literal[_CLOSED[name]] if name in _CLOSED else str, pydantic.Field(
            min_length=1, max_length=400, description=_FIELD_HELP[name])) for name in missing})


async def complete_person(model: ChatModel, person: PopulationPerson, *, temperature: float,
                          seed: int) -> dict[str, str]:
    """The attributes the population lacks, written by the generator to fit the person."""
    if not person.missing:
        return {}
    fields = "\n".join(f"- {name}: {_FIELD_HELP[name]}" for name in person.missing)
    filled, _ = await ask_structured(model, chat(
        "You complete user profiles for a study of personalised assistants. Reply with JSON only.",
        f"A person from a synthetic population:\n{person.context}\n\nTheir profile so far:\n"
        f"{describe(person.known)}\n\nWrite the missing fields so they fit this person:\n{fields}"),
        _completion_schema(tuple(person.missing)), lambda: obj({
            name: enum(_CLOSED[name]) if name in _CLOSED else string(160)
            for name in person.missing}), 600,
        regenerations=2, temperature=temperature, seed=seed)
    return {name: str(getattr(filled, name)) for name in person.missing}
