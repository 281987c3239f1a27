"""prefdisco's item records: one (instance, condition) of an eval, one instance of a build."""

from typing import Any

import pydantic

from personalens.runs import LensRecord


class _Part(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")


class Rejected(_Part):
    raw: str
    problem: str


class Turn(_Part):
    """A target turn of a discovery dialogue, with the simulated user's reply to a question."""

    action: str  # ask or final
    text: str
    raw: str
    attempts: int
    rejected: list[Rejected]
    repaired: str | None = None
    reply: str | None = None
    revealed: list[str] | None = None  # preferences the reply revealed
    finish_reason: str | None = None  # as the server said it, when the dialogue records it


class Questions(_Part):
    turns: int
    questions: int  # question marks over the turns


class Verdict(_Part):
    score: int | float | None  # as the judge wrote it (an int stays an int on disk)
    justification: str
    attempts: int
    raw: str
    problem: str | None


class Level(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="allow")  # the dataset's level, as given

    score: int | float
    description: str = ""


class Criterion(_Part):
    preference: str
    description: str
    levels: list[Level]
    weight: float
    normalised_weight: float
    verdicts: list[Verdict]
    score: float | None  # the judges' mean; None: excluded


class Correctness(_Part):
    correct: bool
    parsed: str | None  # the rules: what the ANSWER line gave; a judge: the answer's end
    unparsed: bool
    judged: bool  # a judge decided it (not the rules)
    justification: str | None = None  # the judge says why


class PrefdiscoRecord(LensRecord):
    """Its instance and condition always; the rest as far as the item got (a failed item keeps
    the conversation so far, `rejected` being the replies of the turn it failed on)."""

    schema_name = "prefdisco.eval"

    task: str
    problem_id: str
    instance: str
    condition: str
    response: str | None = None  # the scored answer, protocol wrapper stripped: in a dialogue
    # under --protocol release, the answer to the final prompt (the transcript holds the turns)
    raw: str | None = None  # a single-turn reply whose wrapper was stripped
    finish_reason: str | None = None  # of the scored answer: "length" = cut off (truncated)
    max_tokens: int | None = None  # the max_tokens its request carried (capped for local models)
    transcript: list[Turn] = []
    rejected: list[Rejected] = []
    questions: Questions | None = None
    revealed: list[str] = []
    criteria: list[Criterion] = []
    prefalign: float | None = None
    correctness: Correctness | None = None  # by the run's --correctness method
    # --correctness judge: the rules' verdict too, when the answer has an ANSWER: line anyway
    correctness_rules: Correctness | None = None
    dropped: str | None = None  # the release drops an instance whose judge reply has no JSON
    flagged: bool = False  # some criterion was excluded

    @property
    def truncated(self) -> bool:
        """The scored answer was cut off at the token limit."""
        return self.finish_reason == "length"


class BuildRecord(LensRecord):
    schema_name = "prefdisco.build"

    task: str
    record: dict[str, Any]  # the instance, in the release format
