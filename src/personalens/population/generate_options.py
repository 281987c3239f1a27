"""`personalens generate`'s options, declared once (CLI, validation, identity)."""

import datetime as dt
from typing import ClassVar

import pydantic

from personalens.models import DEFAULT_MODEL, SPEC_HELP, ModelSettings
from personalens.models.role_set import Role, RoleModels
from personalens.population.noise_levels import NoiseLevels
from personalens.runs.options import DistributedOptions, UserPath, not_identity, option


class GenerateOptions(DistributedOptions):
    command = "generate"
    roles: ClassVar = (Role("generator", "model", DEFAULT_MODEL,
                            f"Generator model: {SPEC_HELP}."),)

    out: UserPath = not_identity(help="Output directory; rerunning resumes it.")
    people: int = option(10, "People per community (at least 3).", ge=3)
    communities: int = option(1, "Number of communities.", ge=1)
    seed: int = option(0, "Seed for every random choice.")
    noise: NoiseLevels = option(["0.0", "0.3", "0.5", "0.7"],
                                "Noise levels to write, comma-separated.", min_length=1)
    attributes_per_person: int = option(
        20, "Own attributes queried per person (social questions come on top).", ge=1)
    max_list_entries: int = option(
        5, "Most entries a list attribute may hold (each needs its own session).", ge=1, le=5)
    update_probability: float = option(
        0.005, "Chance that a queried preference changed over time (outdated_value).",
        ge=0.0, le=1.0)
    start: str = option("2024-01-01", "First day of the sessions' time window.")
    end: str = option("2024-12-31", "Last day of the time window.")
    news: UserPath | None = option(
        None, "JSONL news file (date, title, text); 20% of conversations may cite an item "
              "dated inside the window.")
    personas: UserPath | None = option(
        None, "Seed personas, one per line (or JSONL with 'persona'); default: the bundled "
              "list.")
    profile_schema: UserPath | None = option(
        None, "YAML profile schema that adds or replaces attributes.", flag="--schema")
    typo_habits: bool = option(
        True, "Give each person typo rates and apply them to the turns they type (the truth "
              "goes to ground_truth/<community>/writing_habits.json). Writing styles are "
              "given either way.", flag="--typo-habits/--no-typo-habits")
    models: RoleModels = option(RoleModels.model_validate({"generator": DEFAULT_MODEL}),
                                cli=False)

    @pydantic.model_validator(mode="after")
    def _window_is_ordered(self) -> "GenerateOptions":
        self.window  # noqa: B018 (raises for dates that do not parse or run backwards)
        return self

    @property
    def window(self) -> tuple[dt.datetime, dt.datetime]:
        try:
            start, end = dt.datetime.fromisoformat(self.start), dt.datetime.fromisoformat(self.end)
        except ValueError:
            raise ValueError("--start and --end must be ISO dates (YYYY-MM-DD)") from None
        if end <= start:
            raise ValueError("--end must be after --start")
        return start, end

    @property
    def generator(self) -> ModelSettings:
        return self.models["generator"]
