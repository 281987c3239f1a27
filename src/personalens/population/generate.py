"""`personalens generate`: the population generator on the run harness (communities are its
items, each made of resumable steps)."""

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

from personalens.errors import InputError
from personalens.models import ModelSettings
from personalens.population.community import GenerationConfig, generate_community
from personalens.population.generation_report import report_sections
from personalens.population.news import read_news
from personalens.population.personas import read_personas
from personalens.population.profile_schema import load_schema
from personalens.population.remote_generation import generate_remotely, write_files
from personalens.report.run_page import run_page
from personalens.runs import (
    ItemFailure,
    ItemRecords,
    Lens,
    Metrics,
    Outcome,
    RecordedFailure,
    RunContext,
    RunIdentity,
    StepStore,
    Tally,
    run_lens,
)
from personalens.runs.executor import Executor, LocalExecutor


@dataclass(frozen=True)
class GenerateOptions:
    people: int
    communities: int
    model: ModelSettings | str
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
    typo_habits: bool = True
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)
    # Where communities are generated; not part of the run's identity (the data are the same).
    executor: Executor = field(default_factory=LocalExecutor)

    @property
    def generator(self) -> ModelSettings:
        return ModelSettings(spec=self.model) if isinstance(self.model, str) else self.model

    def config(self) -> dict:
        """What identifies the run (the data it makes); resuming with other values is refused."""
        return {"lens": "generate", "people": self.people, "communities": self.communities,
                "model": self.generator.spec, "seed": self.seed, "noises": self.noises,
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
    options.generator.validate_spec()


class GenerationMetrics(Metrics):
    complete: bool
    communities: dict[str, dict]  # name -> stats, or {"failed": why}
    failures: list[ItemFailure]  # failed communities, then failed steps no community names
    data: str

    def headlines(self) -> list[str]:
        lines = [f"data: {self.data}"]
        for name, stats in self.communities.items():
            if "failed" in stats:
                lines.append(f"{name}: FAILED ({stats['failed']})")
            else:
                lines.append(f"{name}: {stats['people']} people, {stats['questions']} "
                             f"questions, {stats['personal_sessions']} personal sessions "
                             f"({stats['revealed_by_fallback']} needed a fallback line)")
        return lines


@dataclass(frozen=True)
class Community:
    index: int

    @property
    def key(self) -> str:
        return f"community_{self.index}"


class Generation(Lens):
    """Communities are the items; each is many steps (triad, newcomers, profiles, sessions)."""

    name = "generate"
    title = "personalens · generated population"
    concurrency = 1  # communities one after another; a community's own steps run concurrently

    def __init__(self, options: GenerateOptions):
        """Every option and input file is checked here, before the run directory exists."""
        super().__init__(options.prices)
        _check(options)
        window = _window(options)
        self.options = options
        self.config = GenerationConfig(
            people=options.people, communities=options.communities, seed=options.seed,
            noises=options.noises, attributes_per_person=options.attributes_per_person,
            update_probability=options.update_probability, window=window,
            news=read_news(options.news, window) if options.news else [],
            personas=read_personas(options.personas), schema=load_schema(options.schema),
            max_list_entries=options.max_list_entries, typo_habits=options.typo_habits)
        self.model = options.generator.load("generator", self.ledger)
        self.steps: StepStore | None = None
        if options.executor.distributed:  # every community on its own worker at once
            self.concurrency = options.communities

    def identity(self) -> RunIdentity:
        generator = self.options.generator
        return RunIdentity(config=self.options.config(), seeds={"generation": self.options.seed},
                           models={"generator": generator.spec},
                           endpoints={"generator": generator.public()},
                           extra={"base_url": generator.base_url})

    async def setup(self, context: RunContext) -> None:
        self.steps = context.steps

    def plan(self) -> list[Community]:
        return [Community(i) for i in range(self.config.communities)]

    async def run_item(self, item: Community) -> dict:
        if self.options.executor.distributed:
            return await self._run_remotely(item)
        return {"stats": await generate_community(item.index, self.config, self.model,
                                                  self.steps, self.options.out)}

    async def _run_remotely(self, item: Community) -> dict:
        """The community on a worker; its step records, files and usage come back here."""
        prefix = f"{item.key}/"
        # Keys first: each record is read from disk, so only this community's are read.
        done = {k: self.steps.done[k] for k in self.steps.done if k.startswith(prefix)}
        result = await self.options.executor.call(generate_remotely, item.index, self.config,
                                                  self.options.generator, done)
        for record in result["steps"]:
            self.steps.append(record)
        self.ledger.add(result["usage"])
        if result["failure"] is not None:
            raise RecordedFailure.from_data(result["failure"])
        write_files(self.options.out, result["files"])
        return {"stats": result["stats"]}

    def summarise(self, records: ItemRecords, tally: Tally) -> GenerationMetrics:
        communities = {r["key"]: r["stats"] if r["status"] == "ok"
                       else {"failed": r["error"]["message"]} for r in records}
        return GenerationMetrics(complete=tally.complete, communities=communities,
                                 failures=[*tally.failures, *tally.step_failures],
                                 data=str(self.options.out / "synthetic_data"))

    def render_report(self, metrics: GenerationMetrics, tally: Tally, manifest: dict,
                      records: ItemRecords) -> str:
        config = manifest["config"]
        return run_page(
            self.title, tally, manifest,
            summary=(f"Model: {config['model']} · seed {config['seed']} · "
                     f"{config['communities']} community(ies) of {config['people']} people · "
                     f"noise levels {', '.join(config['noises'])} · typo habits "
                     f"{'on' if config.get('typo_habits', True) else 'off'} · data in "
                     f"{metrics.data}"),
            sections=lambda report: report_sections(report, metrics.communities))

    async def aclose(self) -> None:
        await self.model.aclose()


def run_generate(options: GenerateOptions, *, progress: bool = True) -> Outcome:
    return run_lens(Generation(options), options.out, progress=progress)
