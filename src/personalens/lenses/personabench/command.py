"""`personalens personabench eval`: the PersonaBench lens on the run harness."""

from dataclasses import dataclass, field
from pathlib import Path

from personalens.errors import InputError
from personalens.lenses.personabench.analysis import summarise
from personalens.lenses.personabench.evaluation import GT_CONTEXT, Evaluation, Item, plan
from personalens.lenses.personabench.metrics import PersonabenchMetrics
from personalens.lenses.personabench.report_page import browser_entries, report_sections
from personalens.models import ModelSettings
from personalens.population.release_reader import load_communities
from personalens.report.run_page import run_page
from personalens.retrieval import DenseRetriever, get_retriever
from personalens.retrieval.distributed import attach_executor
from personalens.runs import ItemRecords, Lens, Outcome, RunIdentity, Tally, fingerprint, run_lens
from personalens.runs.executor import Executor, LocalExecutor


@dataclass(frozen=True)
class EvalOptions:
    data: Path
    out: Path
    noises: list[str]
    retrievers: list[str]
    k: int
    model: ModelSettings | str | None  # the answering model; None: retrieval only
    endpoint: ModelSettings | None = None  # for models named elsewhere (rerank-llm:<spec>)
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)
    # Where retrieval runs; not part of the run's identity (the records are the same).
    executor: Executor = field(default_factory=LocalExecutor)

    @property
    def target(self) -> ModelSettings | None:
        return ModelSettings(spec=self.model) if isinstance(self.model, str) else self.model

    def config(self) -> dict:
        """What identifies the run: resuming with anything different is refused.

        The endpoint is not part of it: the same model may be served from another host later.
        """
        target = self.target
        return {"lens": "personabench", "data": str(self.data.resolve()), "noises": self.noises,
                "retrievers": self.retrievers, "k": self.k,
                "model": target.spec if target else None}


def normalise_noise(value: str) -> str:
    """'0.5', '.5' and '0.50' all name the release's folder noise_0.5."""
    try:
        number = float(value)
    except ValueError:
        raise InputError(f"--noise {value!r} is not a number") from None
    if not 0.0 <= number < 1.0:
        raise InputError(f"--noise {value} must be in [0, 1)")
    return f"{number:.1f}" if round(number, 1) == number else f"{number:g}"


class PersonabenchEval(Lens):
    """Retrieval recall/nDCG and answer precision/recall/F1 per question and condition."""

    name = "personabench"
    title = "personalens · PersonaBench evaluation"

    def __init__(self, options: EvalOptions):
        """Validates everything (data, retrievers, model) before any run directory exists."""
        super().__init__(options.prices)
        if options.k < 1:
            raise InputError(f"--k must be at least 1 (got {options.k})")
        target = options.target
        if target is not None:
            target.validate_spec()
        self.options = options
        self.data = options.data.resolve()
        self.communities = load_communities(self.data, options.noises)
        retrievers = {name: None if name == GT_CONTEXT else get_retriever(
            name, ledger=self.ledger, endpoint=target or options.endpoint)
            for name in options.retrievers}
        for retriever in retrievers.values():
            # A model that cannot load must fail before the run directory exists. The bundled
            # MiniLM always loads, and skipping it keeps warm-cache runs from loading it at all.
            if isinstance(retriever, DenseRetriever) and not retriever.bundled:
                retriever.load()
        self.items = plan(self.communities, options.noises, options.retrievers)
        if not self.items:
            raise InputError(f"nothing to evaluate: no person at noise "
                             f"{', '.join(options.noises)} has both questions and documents",
                             where=str(self.data))
        for retriever in retrievers.values():
            attach_executor(retriever, options.executor)
        model = None if target is None else target.load("target", self.ledger)
        self.evaluation = Evaluation(retrievers, options.k, model, options.executor)

    def identity(self) -> RunIdentity:
        target = self.options.target
        files = [f for c in self.communities for f in c.files]
        return RunIdentity(
            config=self.options.config(), dataset_hash=fingerprint(files, self.data),
            seeds={"answer": 0}, models={"target": target.spec} if target else {},
            endpoints={"target": target.public()} if target else {},
            extra={"base_url": target.base_url if target else None,
                   "people_without_documents": sorted(
                       {f"{c.name}/{p}" for c in self.communities for n in self.options.noises
                        for p in c.questions if p not in c.levels[n].sessions})})

    def plan(self) -> list[Item]:
        return self.items

    async def prepare(self, todo: list[Item]) -> None:
        self.evaluation.group(todo)

    async def run_item(self, item: Item) -> dict:
        return await self.evaluation.record(item)

    def summarise(self, records: ItemRecords, tally: Tally) -> PersonabenchMetrics:
        return PersonabenchMetrics.model_validate(summarise(
            records, n_planned=tally.n_planned, answered=self.options.model is not None))

    def render_report(self, metrics: PersonabenchMetrics, tally: Tally, manifest: dict,
                      records: ItemRecords) -> str:
        config = manifest["config"]
        return run_page(
            self.title, tally, manifest,
            summary=(f"Data: {config['data']} · model: "
                     f"{config['model'] or 'none (retrieval only)'} · k = {config['k']} · "
                     f"items: {metrics.n_recorded} of {metrics.n_planned} recorded, "
                     f"{metrics.n_failed} failed"),
            sections=lambda report: report_sections(report, metrics),
            browser=browser_entries(records, self.communities))

    async def aclose(self) -> None:
        await self.evaluation.aclose()


def run_eval(options: EvalOptions, *, progress: bool = True) -> Outcome:
    """Validate inputs (nothing is written if any is bad), then evaluate into options.out."""
    return run_lens(PersonabenchEval(options), options.out, progress=progress)
