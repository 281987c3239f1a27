"""`personalens generate`: the population generator on the run harness (communities are its
items, each made of resumable steps)."""

from dataclasses import dataclass

from personalens.population.community import GenerationConfig, generate_community
from personalens.population.generate_options import GenerateOptions
from personalens.population.generation_report import (
    SurveyedCommunity,
    report_sections,
    survey,
)
from personalens.population.news import read_news
from personalens.population.personas import read_personas
from personalens.population.profile_schema import load_schema
from personalens.population.quality import high_rules, totals, warning_line
from personalens.population.remote_generation import generate_remotely, write_files
from personalens.report import HtmlReport
from personalens.runs import (
    ItemFailure,
    ItemRecords,
    Lens,
    LensRecord,
    Metrics,
    Outcome,
    RecordedFailure,
    RunContext,
    RunIdentity,
    StepStore,
    Tally,
    run_lens,
)


class GenerationMetrics(Metrics):
    complete: bool
    communities: dict[str, dict]  # name -> stats, or {"failed": why}
    failures: list[ItemFailure]  # failed communities, then failed steps no community names
    data: str
    # quality.RULES' counts over every community written (each community's own
    # are its stats' "quality"), and the rules whose share is high
    quality: dict[str, int] = {}
    quality_high: list[str] = []

    def headlines(self) -> list[str]:
        lines = [f"data: {self.data}"]
        for name, stats in self.communities.items():
            if "failed" in stats:
                lines.append(f"{name}: FAILED ({stats['failed']})")
            else:
                lines.append(f"{name}: {stats['people']} people, {stats['questions']} "
                             f"questions, {stats['personal_sessions']} personal sessions "
                             f"({stats['revealed_by_fallback']} needed a fallback line)")
        warning = warning_line(self.quality) if self.quality else None
        return lines + ([warning] if warning else [])


class CommunityRecord(LensRecord):
    schema_name = "generate.community"

    stats: dict  # people, questions, sessions: generation_report's table


@dataclass(frozen=True)
class Community:
    index: int

    @property
    def key(self) -> str:
        return f"community_{self.index}"


class Generation(Lens[GenerateOptions, CommunityRecord, GenerationMetrics]):
    """Communities are the items; each is many steps (triad, newcomers, profiles, sessions)."""

    name = "generate"
    title = "personalens · generated population"
    concurrency = 1  # communities one after another; a community's own steps run concurrently
    record_model = CommunityRecord

    def __init__(self, options: GenerateOptions):
        """Every option and input file is checked here, before the run directory exists."""
        super().__init__(options, options.models.prices)
        options.generator.validate_spec()
        window = options.window
        self.executor = options.make_executor()
        self.config = GenerationConfig(
            people=options.people, communities=options.communities, seed=options.seed,
            noises=options.noise, attributes_per_person=options.attributes_per_person,
            update_probability=options.update_probability, window=window,
            news=read_news(options.news, window) if options.news else [],
            personas=read_personas(options.personas), schema=load_schema(options.profile_schema),
            max_list_entries=options.max_list_entries, typo_habits=options.typo_habits)
        self.model = options.generator.load("generator", self.ledger)
        self.surveyed: list[SurveyedCommunity] = []  # summarise reads the communities written
        if self.executor.distributed:  # every community on its own worker at once
            self.concurrency = options.communities

    def identity(self) -> RunIdentity:
        generator = self.options.generator
        return RunIdentity(options=self.options, seeds={"generation": self.options.seed},
                           models={"generator": generator.spec},
                           endpoints={"generator": generator.public()},
                           extra={"base_url": generator.base_url})

    async def setup(self, context: RunContext) -> None:
        self.steps: StepStore = context.steps

    def plan(self) -> list[Community]:
        return [Community(i) for i in range(self.config.communities)]

    async def run_item(self, item: Community) -> CommunityRecord:
        if self.executor.distributed:
            return CommunityRecord(stats=await self._run_remotely(item))
        return CommunityRecord(stats=await generate_community(
            item.index, self.config, self.model, self.steps, self.options.out))

    async def _run_remotely(self, item: Community) -> dict:
        """The community on a worker; its step records, files and usage come back here."""
        prefix = f"{item.key}/"
        # Keys first: each record is read from disk, so only this community's are read.
        done = {k: self.steps.done[k] for k in self.steps.done if k.startswith(prefix)}
        result = await self.executor.call(generate_remotely, item.index, self.config,
                                                  self.options.generator, done)
        for record in result["steps"]:
            self.steps.append(record)
        self.ledger.add(result["usage"])
        if result["failure"] is not None:
            raise RecordedFailure.from_data(result["failure"])
        write_files(self.options.out, result["files"])
        return result["stats"]

    def summarise(self, records: ItemRecords[CommunityRecord],
                  tally: Tally) -> GenerationMetrics:
        communities = {r.key: {"failed": r.message} if isinstance(r, ItemFailure) else r.stats
                       for r in records}
        # Read and drawn once: report_sections, which the harness calls next, shows these.
        self.surveyed = survey(
            self.options.out, [name for name, stats in communities.items()
                               if "failed" not in stats])
        for community in self.surveyed:
            communities[community.name] = {**communities[community.name],
                                           "quality": community.quality.counts(),
                                           "validation_problems": len(community.problems)}
        counted = totals([s["quality"] for s in communities.values() if "quality" in s])
        return GenerationMetrics(complete=tally.complete, communities=communities,
                                 failures=[*tally.failures, *tally.step_failures],
                                 data=str(self.options.out / "synthetic_data"),
                                 quality=counted, quality_high=high_rules(counted))

    def summary_line(self, metrics: GenerationMetrics) -> str:
        options = self.options
        return (f"Model: {options.generator.spec} · seed {options.seed} · "
                f"{options.communities} community(ies) of {options.people} people · "
                f"noise levels {', '.join(options.noise)} · typo habits "
                f"{'on' if options.typo_habits else 'off'} · data in {metrics.data}")

    def report_sections(self, report: HtmlReport, metrics: GenerationMetrics,
                        records: ItemRecords[CommunityRecord]) -> None:
        report_sections(report, metrics.communities, self.surveyed)

    async def aclose(self) -> None:
        await self.model.aclose()


def run_generate(options: GenerateOptions, *, progress: bool = True) -> Outcome:
    return run_lens(Generation(options), options.out, progress=progress)
