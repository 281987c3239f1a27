"""`personalens personabench eval`: the PersonaBench lens on the run harness."""

from personalens.errors import InputError
from personalens.lenses.personabench.analysis import summarise
from personalens.lenses.personabench.evaluation import GT_CONTEXT, Evaluation, Item, plan
from personalens.lenses.personabench.metrics import PersonabenchMetrics
from personalens.lenses.personabench.options import EvalOptions
from personalens.lenses.personabench.records import PersonabenchRecord
from personalens.lenses.personabench.report_page import browser_entries, report_sections
from personalens.population.release_reader import load_communities
from personalens.report import BrowserItems, HtmlReport
from personalens.retrieval import DenseRetriever, get_retriever
from personalens.runs import ItemRecords, Lens, Outcome, RunIdentity, Tally, fingerprint, run_lens


class PersonabenchEval(Lens[EvalOptions, PersonabenchRecord, PersonabenchMetrics]):
    """Retrieval recall/nDCG and answer precision/recall/F1 per question and condition."""

    name = "personabench"
    title = "personalens · PersonaBench evaluation"
    record_model = PersonabenchRecord

    def __init__(self, options: EvalOptions):
        """Validates everything (data, retrievers, model) before any run directory exists."""
        super().__init__(options, options.models.prices)
        target = options.target
        if target is not None:
            target.validate_spec()
        self.data = options.data.resolve()
        self.communities = load_communities(self.data, options.noise)
        executor = options.make_executor()
        retrievers = {name: None if name == GT_CONTEXT else get_retriever(
            name, ledger=self.ledger, endpoint=target or options.models.endpoint,
            executor=executor) for name in options.retriever}
        for retriever in retrievers.values():
            # A model that cannot load must fail before the run directory exists. The bundled
            # MiniLM always loads, and skipping it keeps warm-cache runs from loading it at all.
            if isinstance(retriever, DenseRetriever) and not retriever.bundled:
                retriever.load()
        self.items = plan(self.communities, options.noise, options.retriever)
        if not self.items:
            raise InputError(f"nothing to evaluate: no person at noise "
                             f"{', '.join(options.noise)} has both questions and documents",
                             where=str(self.data))
        model = None if target is None else target.load("target", self.ledger)
        self.evaluation = Evaluation(retrievers, options.k, model, executor)

    def identity(self) -> RunIdentity:
        target = self.options.target
        files = [f for c in self.communities for f in c.files]
        return RunIdentity(
            options=self.options, dataset_hash=fingerprint(files, self.data),
            seeds={"answer": 0}, models={"target": target.spec} if target else {},
            endpoints={"target": target.public()} if target else {},
            extra={"base_url": target.base_url if target else None,
                   "people_without_documents": sorted(
                       {f"{c.name}/{p}" for c in self.communities for n in self.options.noise
                        for p in c.questions if p not in c.levels[n].sessions})})

    def plan(self) -> list[Item]:
        return self.items

    async def prepare(self, todo: list[Item]) -> None:
        self.evaluation.group(todo)

    async def run_item(self, item: Item) -> PersonabenchRecord:
        return await self.evaluation.record(item)

    def summarise(self, records: ItemRecords[PersonabenchRecord],
                  tally: Tally) -> PersonabenchMetrics:
        return PersonabenchMetrics.model_validate(summarise(
            records, n_planned=tally.n_planned, answered=self.options.target is not None))

    def summary_line(self, metrics: PersonabenchMetrics) -> str:
        target = self.options.target
        return (f"Data: {self.data} · model: "
                f"{target.spec if target else 'none (retrieval only)'} · k = {self.options.k} · "
                f"items: {metrics.n_recorded} of {metrics.n_planned} recorded, "
                f"{metrics.n_failed} failed")

    def report_sections(self, report: HtmlReport, metrics: PersonabenchMetrics,
                        records: ItemRecords[PersonabenchRecord]) -> None:
        report_sections(report, metrics)

    def browser(self, records: ItemRecords[PersonabenchRecord]) -> BrowserItems:
        return browser_entries(records, self.communities)

    async def aclose(self) -> None:
        await self.evaluation.aclose()


def run_eval(options: EvalOptions, *, progress: bool = True) -> Outcome:
    """Validate inputs (nothing is written if any is bad), then evaluate into options.out."""
    return run_lens(PersonabenchEval(options), options.out, progress=progress)
