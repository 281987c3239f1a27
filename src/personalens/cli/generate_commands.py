"""`personalens generate`"""

from pathlib import Path
from typing import Annotated

import typer

from personalens.cli.executor_options import ExecutorOption, RayAddressOption
from personalens.cli.model_options import Role, RoleModels, model_roles
from personalens.cli.path_options import path_option
from personalens.cli.run_output import report_outcome
from personalens.models import DEFAULT_MODEL, SPEC_HELP
from personalens.population.generate import GenerateOptions, run_generate
from personalens.runs.executor import make_executor


@model_roles(Role("generator", "model", DEFAULT_MODEL, f"Generator model: {SPEC_HELP}."))
def generate(
    out: Annotated[Path, path_option(help="Output directory; rerunning resumes it.")],
    models: RoleModels,
    people: Annotated[int, typer.Option(help="People per community (at least 3).")] = 10,
    communities: Annotated[int, typer.Option(help="Number of communities.")] = 1,
    seed: Annotated[int, typer.Option(help="Seed for every random choice.")] = 0,
    noise: Annotated[str, typer.Option(help="Noise levels to write, comma-separated.")
                     ] = "0.0,0.3,0.5,0.7",
    attributes_per_person: Annotated[int, typer.Option(
        help="Own attributes queried per person (social questions come on top).")] = 20,
    max_list_entries: Annotated[int, typer.Option(
        help="Most entries a list attribute may hold (each needs its own session).")] = 5,
    update_probability: Annotated[float, typer.Option(
        help="Chance that a queried preference changed over time (outdated_value).")] = 0.005,
    start: Annotated[str, typer.Option(help="First day of the sessions' time window.")
                     ] = "2024-01-01",
    end: Annotated[str, typer.Option(help="Last day of the time window.")] = "2024-12-31",
    news: Annotated[Path | None, path_option(
        help="JSONL news file (date, title, text); 20% of conversations may cite an item "
             "dated inside the window.")] = None,
    personas: Annotated[Path | None, path_option(
        help="Seed personas, one per line (or JSONL with 'persona'); default: the bundled "
             "list.")] = None,
    schema: Annotated[Path | None, path_option(
        help="YAML profile schema that adds or replaces attributes.")] = None,
    typo_habits: Annotated[bool, typer.Option(
        "--typo-habits/--no-typo-habits",
        help="Give each person typo rates and apply them to the turns they type (the truth "
             "goes to ground_truth/<community>/writing_habits.json). Writing styles are "
             "given either way.")] = True,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
) -> None:
    """Generate synthetic communities in PersonaBench's release layout (plus hidden truth).

    With --executor ray, every community is generated at once, each by a Ray task with its own
    generator client; this process alone writes the records and the data.
    """
    options = GenerateOptions(
        people=people, communities=communities, model=models["generator"], out=out, seed=seed,
        noises=noise, attributes_per_person=attributes_per_person,
        max_list_entries=max_list_entries, update_probability=update_probability,
        start=start, end=end, news=news, personas=personas, schema=schema,
        typo_habits=typo_habits, prices=models.prices,
        executor=make_executor(executor, ray_address))
    report_outcome(run_generate(options))
