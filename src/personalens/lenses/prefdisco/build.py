"""`personalens prefdisco build`: a prefq-bench dataset from problems and personas.

Problems: rows of any of the ten source formats (`--problems FILE.jsonl`, the task is the file's
stem), else the ~30 hand-written problems shipped with the package (task = their domain).
Personas: a generated population's profiles (`--population DIR`), else written by the generator
with embedding-distance rejection sampling (steps `persona/<i>`). Items: each problem paired with
`per_problem` personas (seeded draw); each item's preferences, library decisions and rubrics
are model-written and recorded. `finish` writes `<out>/data/<task>.jsonl` in the release format
and `<out>/attribute_library.json`.
"""

import hashlib
import json
from collections import Counter
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from personalens.errors import InputError
from personalens.input_files import read_jsonl_objects
from personalens.lenses.prefdisco import release_format
from personalens.lenses.prefdisco.attribute_library import AttributeLibrary
from personalens.lenses.prefdisco.options import BuildOptions
from personalens.lenses.prefdisco.persona_source import generate_persona, personas_from_population
from personalens.lenses.prefdisco.preference_builder import build_record
from personalens.lenses.prefdisco.problems import Problem, ProblemShapeError, normalise
from personalens.lenses.prefdisco.records import BuildRecord
from personalens.models import RoleSet
from personalens.population.profile_reader import profile_files
from personalens.report import HtmlReport
from personalens.retrieval import DenseRetriever
from personalens.retrieval.dense import BUNDLED_MINILM
from personalens.runs import (
    ItemFailure,
    ItemRecords,
    Lens,
    Metrics,
    Outcome,
    RunContext,
    RunIdentity,
    StepFailed,
    Tally,
    fingerprint,
    run_lens,
    write_atomic,
)
from personalens.runs.blocking import run_blocking

SHIPPED_PROBLEMS = Path(__file__).parent / "data" / "problems.jsonl"
_ID_FIELDS = ("problem_id", "unique_id", "id", "ID", "qID")


@dataclass(frozen=True)
class SourceProblem:
    task: str
    problem_id: str
    row: dict
    problem: Problem


@dataclass(frozen=True)
class Item:
    source: SourceProblem
    persona_index: int

    @property
    def key(self) -> str:
        return f"instance/{self.source.task}/{self.source.problem_id}/{self.persona_index}"


def load_problems(files: list[Path], limit: int | None,
                  tasks: list[str] | None = None) -> list[SourceProblem]:
    """The problems of `files` (default: the shipped ones), at most `limit` per task, of
    `tasks` only when given (InputError naming the tasks there are for one that is not)."""
    problems: list[SourceProblem] = []
    seen: set[str] = set()
    for file in files or [SHIPPED_PROBLEMS]:
        per_task: dict[str, int] = {}
        for index, (where, row) in enumerate(read_jsonl_objects(file, "problems")):
            task = row.get("source", file.stem) if not files else file.stem
            seen.add(task)
            if tasks and task not in tasks:
                continue
            try:
                problem = normalise(row, task)
            except ProblemShapeError as exc:
                raise InputError(str(exc), where=where) from None
            if limit is not None and per_task.get(task, 0) >= limit:
                continue
            per_task[task] = per_task.get(task, 0) + 1
            pid = next((str(row[f]) for f in _ID_FIELDS if row.get(f) is not None),
                       f"{task}-{index}")
            problems.append(SourceProblem(task, pid, row, problem))
    missing = [t for t in tasks or [] if t not in seen]
    if missing:
        raise InputError(f"--tasks names {missing[0]!r}, which no problem has; the tasks are "
                         f"{', '.join(sorted(seen))}")
    return problems


class BuildMetrics(Metrics):
    out: str
    instances: int
    tasks: dict[str, int]
    personas: int
    rejected_persona_drafts: int
    library_size: int
    library_merges: int
    failures: list[ItemFailure]

    def headlines(self) -> list[str]:
        return [f"data: {Path(self.out) / 'data'} ({self.instances} instances over "
                f"{len(self.tasks)} task(s)); {self.personas} personas, attribute library "
                f"{self.library_size} entries ({self.library_merges} merged candidates)"]


class PrefdiscoBuild(Lens[BuildOptions, BuildRecord, BuildMetrics]):
    name = "prefdisco build"
    title = "personalens · PrefDisco dataset build"
    concurrency = 4
    record_model = BuildRecord

    def __init__(self, options: BuildOptions):
        super().__init__(options, options.models.prices)
        self.problems = load_problems(options.problems, options.limit, options.tasks)
        self.roles = RoleSet(options.models.resolved(BuildOptions.roles), self.ledger)
        self.model = self.roles["generator"]
        self.encoder = DenseRetriever(BUNDLED_MINILM)
        self.encode = partial(run_blocking, self.encoder.encode)
        # None: its step failed (see persona_failures); generated in setup without a population
        self.personas: list[dict | None] = (personas_from_population(options.population)
                                            if options.population else [])
        self.persona_failures: dict[int, StepFailed] = {}
        self.rejected = 0

    def identity(self) -> RunIdentity:
        files = [f.resolve() for f in self.options.problems or [SHIPPED_PROBLEMS]]
        if self.options.population:
            files += profile_files(self.options.population.resolve())
        digest = hashlib.sha256("".join(fingerprint([f], f.parent) for f in files).encode())
        return RunIdentity(options=self.options, dataset_hash=digest.hexdigest(),
                           seeds={"pairing": self.options.seed}, models=self.roles.specs(),
                           endpoints=self.roles.endpoints())

    async def setup(self, context: RunContext) -> None:
        self.library = AttributeLibrary(self.model, self.encode, context.steps)
        await self.library.restore()
        if self.options.population:
            return
        summaries: list[str] = []
        for index in range(self.options.personas):
            try:
                drawn = await context.steps.get(f"persona/{index}", lambda i=index, s=list(
                    summaries): generate_persona(self.model, i, s, self.encode,
                                                 temperature=self.options.temperature))
            except StepFailed as exc:
                # Only the items paired with this persona fail (with this failure); the
                # pairing stays what it would have been, so a rerun that succeeds pairs alike.
                self.personas.append(None)
                self.persona_failures[index] = exc
                continue
            self.personas.append(drawn["persona"])
            summaries.append(drawn["summary"])
            self.rejected += drawn["rejected_drafts"]

    def plan(self) -> list[Item]:
        rng = np.random.default_rng(self.options.seed)
        count = min(self.options.per_problem, len(self.personas))
        return [Item(source, int(p)) for source in self.problems
                for p in sorted(rng.choice(len(self.personas), count, replace=False))]

    async def run_item(self, item: Item) -> BuildRecord:
        failed = self.persona_failures.get(item.persona_index)
        if failed is not None:  # a copy of the persona's failure, without its data
            raise failed.with_data({})
        record = await build_record(
            self.model, self.library, self.options,
            problem_id=f"{item.source.problem_id}-p{item.persona_index}", row=item.source.row,
            problem=item.source.problem, persona=self.personas[item.persona_index])
        return BuildRecord(task=item.source.task, record=record)

    async def finish(self, records: ItemRecords[BuildRecord]) -> None:
        data = self.options.out / "data"
        data.mkdir(parents=True, exist_ok=True)
        by_task: dict[str, list[dict]] = {}
        for built in records.ok():
            by_task.setdefault(built.task, []).append(built.record)
        for task, rows in by_task.items():
            release_format.write(data / f"{task}.jsonl", task, rows,
                                 {"source": "personalens prefdisco build",
                                  "generator": self.roles.specs()["generator"]})
        write_atomic(self.options.out / "attribute_library.json",
                     json.dumps(list(self.library.entries.values()), indent=1))

    def summarise(self, records: ItemRecords[BuildRecord], tally: Tally) -> BuildMetrics:
        tasks = dict(Counter(built.task for built in records.ok()))
        return BuildMetrics(out=str(self.options.out), instances=sum(tasks.values()),
                            tasks=tasks, personas=sum(p is not None for p in self.personas),
                            rejected_persona_drafts=self.rejected,
                            library_size=len(self.library.entries),
                            library_merges=self.library.merges, failures=tally.failures)

    def summary_line(self, metrics: BuildMetrics) -> str:
        return f"Generator: {self.roles.specs()['generator']} · out: {self.options.out}"

    def report_sections(self, report: HtmlReport, metrics: BuildMetrics,
                        records: ItemRecords[BuildRecord]) -> None:
        report.heading("Built dataset")
        report.table(["task", "instances"], list(metrics.tasks.items()))
        report.paragraph(f"{metrics.personas} personas ({metrics.rejected_persona_drafts} "
                         "drafts rejected as too similar); attribute library: "
                         f"{metrics.library_size} entries, {metrics.library_merges} "
                         "candidates merged into an existing entry.")
        report.table(["attribute", "type", "description"],
                     [[e["name"], e["type"], e["description"]]
                      for e in self.library.entries.values()])

    async def aclose(self) -> None:
        await self.roles.aclose()
        self.encoder.close()


def run_build(options: BuildOptions, *, progress: bool = True) -> Outcome:
    return run_lens(PrefdiscoBuild(options), options.out, progress=progress)
