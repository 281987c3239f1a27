"""`personalens generate`: validate inputs, then build communities into a resumable run dir."""

import asyncio
import datetime as dt
import sys
from dataclasses import dataclass, field
from pathlib import Path

from personalens.errors import InputError
from personalens.models import RetryPolicy, UsageLedger, load_model, merge_usage, validate_spec
from personalens.population.community import GenerationConfig, generate_community
from personalens.population.generation_report import build_report
from personalens.population.news import read_news
from personalens.population.personas import read_personas
from personalens.population.profile_schema import load_schema
from personalens.runs import RunDirectory, package_versions
from personalens.runs.step_store import StepFailed, StepStore


@dataclass(frozen=True)
class GenerateOptions:
    people: int
    communities: int
    model: str
    out: Path
    seed: int = 0
    noises: list[str] = field(default_factory=lambda: ["0.0", "0.3", "0.5", "0.7"])
    attributes_per_person: int = 20
    max_list_entries: int = 5
    update_probability: float = 0.005
    start: str = "2024-01-01"
    end: str = "2024-12-31"
    news: Path | None = None
    personas: Path | None = None
    schema: Path | None = None
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    use_cache: bool = True
    concurrency: int | None = None
    max_attempts: int = 6
    price_per_mtok_in: float = 0.0
    price_per_mtok_out: float = 0.0
    typo_habits: bool = True

    def config(self) -> dict:
        """What identifies the run (the data it makes); resuming with other values is refused."""
        return {"lens": "generate", "people": self.people, "communities": self.communities,
                "model": self.model, "seed": self.seed, "noises": self.noises,
                "attributes_per_person": self.attributes_per_person,
                "max_list_entries": self.max_list_entries,
                "update_probability": self.update_probability, "start": self.start,
                "end": self.end, "news": str(self.news) if self.news else None,
                "personas": str(self.personas) if self.personas else None,
                "schema": str(self.schema) if self.schema else None,
                "typo_habits": self.typo_habits}


def _window(options: GenerateOptions) -> tuple[dt.datetime, dt.datetime]:
    try:
        start = dt.datetime.fromisoformat(options.start)
        end = dt.datetime.fromisoformat(options.end)
    except ValueError:
        raise InputError("--start and --end must be ISO dates (YYYY-MM-DD)") from None
    if end <= start:
        raise InputError("--end must be after --start")
    return start, end


def _check(options: GenerateOptions) -> None:
    if options.people < 3:
        raise InputError(f"--people must be at least 3 (a community starts from a triad); "
                         f"got {options.people}")
    if options.communities < 1:
        raise InputError(f"--communities must be at least 1; got {options.communities}")
    if options.attributes_per_person < 1:
        raise InputError("--attributes-per-person must be at least 1")
    if not 1 <= options.max_list_entries <= 5:
        raise InputError("--max-list-entries must be between 1 and 5")
    if not 0.0 <= options.update_probability <= 1.0:
        raise InputError("--update-probability must be in [0, 1]")
    if options.max_attempts < 1:
        raise InputError("--max-attempts must be at least 1")
    validate_spec(options.model)


def run_generate(options: GenerateOptions, progress=None) -> dict:
    _check(options)
    window = _window(options)
    config = GenerationConfig(
        people=options.people, communities=options.communities, seed=options.seed,
        noises=options.noises, attributes_per_person=options.attributes_per_person,
        update_probability=options.update_probability, window=window,
        news=read_news(options.news, window) if options.news else [],
        personas=read_personas(options.personas), schema=load_schema(options.schema),
        max_list_entries=options.max_list_entries, typo_habits=options.typo_habits)
    ledger = UsageLedger()
    model = load_model(options.model, role="generator", ledger=ledger, base_url=options.base_url,
                       api_key_env=options.api_key_env, use_cache=options.use_cache,
                       concurrency=options.concurrency,
                       retry=RetryPolicy(max_attempts=options.max_attempts))
    run = RunDirectory.open(options.out, {
        "command": " ".join(["personalens", *sys.argv[1:]]), "config": options.config(),
        "versions": package_versions(), "seeds": {"generation": options.seed},
        "models": {"generator": options.model}, "base_url": options.base_url,
    })
    status = "interrupted"
    try:
        summary = _execute(run, config, model, ledger, options, progress)
        status = "complete" if summary["complete"] else "incomplete"
    finally:
        run.close(status)
    return summary


def _execute(run, config, model, ledger, options, progress) -> dict:
    if progress is not None:
        progress.start(total=None, completed=0)
    store = StepStore(run, on_step=progress.advance if progress else lambda: None)
    communities: dict[str, dict] = {}

    async def main():
        try:
            for index in range(config.communities):
                try:
                    communities[f"community_{index}"] = await generate_community(
                        index, config, model, store, options.out)
                except StepFailed as exc:
                    communities[f"community_{index}"] = {"failed": str(exc)}
        finally:
            await model.aclose()

    try:
        asyncio.run(main())
    finally:
        if progress is not None:
            progress.stop()
        usage = merge_usage(run.previous_usage, ledger.as_dict())
        run.write_manifest(usage=usage, estimated_cost_usd=_cost(usage, options))
    summary = {"complete": not store.failures, "communities": communities,
               "failures": store.failures, "data": str(options.out / "synthetic_data")}
    run.write_outputs(summary, build_report(summary, run.manifest))
    return summary


def _cost(usage: dict, options: GenerateOptions) -> float:
    tokens_in = sum(r["prompt_tokens"] for r in usage.values())
    tokens_out = sum(r["completion_tokens"] for r in usage.values())
    return (tokens_in * options.price_per_mtok_in + tokens_out * options.price_per_mtok_out) / 1e6
