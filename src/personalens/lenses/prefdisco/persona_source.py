"""Personas for `prefdisco build`: mapped from a generated population, or written by the model.

A persona holds demographics, an educational profile, Big Five scores 1-5 with behavioural
descriptions, domain expertise and a short backstory. From a population (`--population DIR`)
they are read from its ground truth (`ground_truth/*/profiles.json`), whose profile template
carries these fields. Otherwise the generator writes them; a draft whose embedding is closer
than `max_similarity` (cosine) to an accepted persona is rejected and redrawn, so the set
stays diverse.
"""

from collections.abc import Awaitable, Callable
from pathlib import Path

import numpy as np
import pydantic

from personalens.models import ChatModel, complete_structured, schema_bounded
from personalens.population.profile_reader import read_profiles

BIG_FIVE = ("openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism")
# What a score means in behaviour, low (1-2) / middle (3) / high (4-5); IPIP-style wording.
_BEHAVIOUR = {
    "openness": ("prefers the familiar and concrete", "open to new ideas when they are useful",
                 "seeks out new ideas, theory and unusual angles"),
    "conscientiousness": ("works loosely and improvises", "reasonably organised",
                          "plans carefully and wants every step checked"),
    "extraversion": ("reserved; likes to think things through alone", "sociable in moderation",
                     "outgoing; thinks out loud and enjoys discussion"),
    "agreeableness": ("direct and sceptical", "cooperative but firm",
                      "warm, trusting and keen to keep things friendly"),
    "neuroticism": ("calm under pressure", "sometimes anxious",
                    "worries easily; reassurance matters"),
}
_DEMOGRAPHICS = ("age", "gender", "nationality", "current_city", "occupation", "marital_status")


def big_five_entry(trait: str, score: int) -> dict:
    band = 0 if score <= 2 else 1 if score == 3 else 2
    return {"score": score, "description": _BEHAVIOUR[trait][band]}


def _score(value) -> int:
    try:
        return min(max(round(float(value)), 1), 5)
    except (TypeError, ValueError):
        return 3  # the template asks for 1-5; an unreadable value is the scale's middle


def from_profile(person_id: str, name: str, persona_text: str, attributes: dict) -> dict:
    """A population profile as a PrefDisco persona."""
    return {
        "id": person_id, "name": name,
        "demographics": {k: attributes[k] for k in _DEMOGRAPHICS if k in attributes},
        "education": {"level": attributes.get("education_level"),
                      "field": attributes.get("degree_subject"),
                      "institution": attributes.get("education_institution")},
        "big_five": {t: big_five_entry(t, _score(attributes.get(t, 3))) for t in BIG_FIVE},
        "domain_expertise": list(attributes.get("domain_expertise") or []),
        "backstory": persona_text,
    }


def personas_from_population(root: Path) -> list[dict]:
    return [from_profile(p.key, p.name, p.persona, p.attributes) for p in read_profiles(root)]


# What the generator writes for the Big Five: a whole number 1-5 per trait.
BigFiveScores = pydantic.create_model(
    "BigFiveScores", **{trait: (int, pydantic.Field(ge=1, le=5)) for trait in BIG_FIVE})


class PersonaDraft(pydantic.BaseModel):
    name: str = schema_bounded(60)
    age: int = pydantic.Field(ge=16, le=95)
    gender: str = schema_bounded(30)
    occupation: str = schema_bounded(80)
    current_city: str = schema_bounded(60)
    education_level: str = schema_bounded(60)
    degree_subject: str = schema_bounded(80)
    big_five: BigFiveScores
    domain_expertise: list[str] = pydantic.Field(
        max_length=4, json_schema_extra={"items": {"type": "string", "maxLength": 60}})
    backstory: str = schema_bounded(400)

    def persona(self, person_id: str) -> dict:
        attributes = {**self.model_dump(exclude={"big_five", "name", "backstory"}),
                      **self.big_five.model_dump()}
        return from_profile(person_id, self.name, self.backstory, attributes)

    def summary(self) -> str:
        return (f"{self.age} {self.gender} {self.occupation} in {self.current_city}; "
                f"{self.education_level} in {self.degree_subject}; expert in "
                f"{', '.join(self.domain_expertise)}; {self.backstory}")


Encode = Callable[[list[str]], Awaitable[np.ndarray]]


async def generate_persona(model: ChatModel, index: int, accepted: list[str], encode: Encode,
                           *, max_similarity: float = 0.9, draws: int = 5,
                           temperature: float = 0.7) -> dict:
    """Persona `index`; drafts too close to an accepted persona's summary are redrawn.

    After `draws` rejections the least similar draft is kept (and the count says so), so a
    small model cannot stall the build.
    """
    accepted_vectors = await encode(accepted) if accepted else None
    best, best_similarity, rejected = None, 2.0, 0
    for draw in range(draws):
        draft, _ = await complete_structured(model, [
            {"role": "system", "content": "You write realistic, varied people for a study of "
                                          "personalised assistants. Reply with JSON only."},
            {"role": "user", "content": f"Write person number {index + 1}: demographics, "
                                        "education, Big Five scores 1-5, up to 4 fields of "
                                        "expertise, and a two-sentence backstory. Make them "
                                        "unlike typical examples."}],
            PersonaDraft, regenerations=2, temperature=temperature, seed=index * 100 + draw,
            max_tokens=600)
        similarity = 0.0
        if accepted_vectors is not None:
            vector = (await encode([draft.summary()]))[0]
            similarity = float(np.max(cosine(accepted_vectors, vector)))
        if similarity < best_similarity:
            best, best_similarity = draft, similarity
        if similarity < max_similarity:
            break
        rejected += 1
    return {"persona": best.persona(f"generated/{index}"), "summary": best.summary(),
            "rejected_drafts": rejected, "max_similarity": best_similarity}


def cosine(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """The cosine similarity of each row of `matrix` with `vector`."""
    norms = np.linalg.norm(matrix, axis=1) * max(np.linalg.norm(vector), 1e-12)
    return matrix @ vector / np.maximum(norms, 1e-12)
