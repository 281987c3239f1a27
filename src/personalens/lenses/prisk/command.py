"""`personalens prisk eval`: the PRISK lens on the run harness.

Items are records (every condition inside, so comparisons stay paired); answers, samples, the
router's two decisions and the narrowing sets' verdicts are steps (the per-answer verdicts are asked
again on resume, from the response cache when it is on). Roles: target (`--model`, also the router),
judge (`--judge`), and the topic and usefulness judges of narrowing (default: the judge).
"""

from personalens.errors import InputError
from personalens.lenses.prisk import analysis
from personalens.lenses.prisk.answer_sets import AnswerSets
from personalens.lenses.prisk.conditions import conditions_for
from personalens.lenses.prisk.evaluation import Evaluation
from personalens.lenses.prisk.memory_index import MemoryIndexes
from personalens.lenses.prisk.metrics import PriskMetrics
from personalens.lenses.prisk.options import RISK_GROUPS, EvalOptions
from personalens.lenses.prisk.records import EvalRecord, PriskRecord, load_records
from personalens.lenses.prisk.report_page import browser_entries, report_sections
from personalens.models.role_set import RoleSet
from personalens.report import BrowserItems, HtmlReport
from personalens.retrieval import get_retriever
from personalens.runs import (
    ItemRecords,
    Lens,
    Outcome,
    RunContext,
    RunIdentity,
    Tally,
    fingerprint,
    run_lens,
)
from personalens.runs.blocking import run_blocking


def selected(records: list[PriskRecord], risks: list[str], limit: int | None) -> list[PriskRecord]:
    """The records of the chosen risk groups; `limit` keeps the first N of each risk."""
    wanted = {r for group in risks for r in RISK_GROUPS[group]}
    kept: list[PriskRecord] = []
    counts: dict[str, int] = {}
    for record in records:
        if record.risk in wanted and (limit is None or counts.get(record.risk, 0) < limit):
            counts[record.risk] = counts.get(record.risk, 0) + 1
            kept.append(record)
    return kept


def eval_records(options: EvalOptions) -> list[PriskRecord]:
    """The records a run evaluates (the chosen risks, --limit per risk); InputError if none."""
    records = selected(load_records(options.data), options.risks, options.limit)
    if not records:
        raise InputError(f"no records of the chosen risks ({', '.join(options.risks)})",
                         where=str(options.data))
    return records


class PriskEval(Lens[EvalOptions, EvalRecord, PriskMetrics]):
    """IRP, accuracy, narrowing and sycophancy per condition, and their attribution."""

    name = "prisk"
    title = "personalens · PRISK evaluation"
    record_model = EvalRecord
    judged = True

    def __init__(self, options: EvalOptions):
        """Validates everything (data, models, retriever) before any run directory exists."""
        super().__init__(options, options.models.prices)
        self.conditions = conditions_for(options.conditions, options.k_sweep)
        data = options.data
        self.files = sorted(data.glob("*.json")) if data.is_dir() else [data]
        self.records = eval_records(options)
        self.by_id = {r.record_id: r for r in self.records}
        self.roles = RoleSet(options.models.resolved(EvalOptions.roles), self.ledger)
        self.retriever = get_retriever(options.retriever, ledger=self.ledger)
        self.sets: AnswerSets | None = None  # narrowing's, built once every record is answered

    def identity(self) -> RunIdentity:
        root = self.options.data.resolve()
        return RunIdentity(
            options=self.options,
            dataset_hash=fingerprint(self.files, root if root.is_dir() else root.parent),
            seeds={"bootstrap": self.options.seed, "samples": 0},
            models=self.roles.specs(), endpoints=self.roles.endpoints())

    async def setup(self, context: RunContext) -> None:
        memory = MemoryIndexes(self.retriever, self.records, self.options.memory_scope)
        self.evaluation = Evaluation(self.roles, memory, self.conditions,
                                     self.options, context.steps)

    def plan(self) -> list[PriskRecord]:
        return self.records

    async def run_item(self, record: PriskRecord) -> EvalRecord:
        return await self.evaluation.record(record)

    async def finish(self, records: ItemRecords[EvalRecord]) -> None:
        narrowing = [r for r in records.ok() if r.risk == "narrowing"]
        if narrowing:
            after = {c.name for c in self.conditions if not c.in_universe}
            self.sets = await self.evaluation.answer_sets(narrowing, self.by_id, after)

    def summarise(self, records: ItemRecords[EvalRecord], tally: Tally) -> PriskMetrics:
        ok = list(records.ok())
        names = [c.name for c in self.conditions]
        seed = self.options.seed
        scores = analysis.risk_scores(ok, self.sets)
        # The depth sweep has its own table: adding it never changes the main means' pairing.
        main = [c.name for c in self.conditions if c.forced_k is None]
        paired = {risk: analysis.paired(table, main) for risk, table in scores.items()}
        means = {risk: analysis.condition_means(complete, main, seed)
                 for risk, (complete, _) in paired.items()}
        fits = analysis.attribution(scores, self.conditions, coding=self.options.coding,
                                    correction=self.options.correction, seed=seed)
        exclusion_condition = next((c for c in ("profile_retrieval", "profile", "retrieval")
                                    if c in names), None)
        by_risk = {risk: [r for r in ok if r.risk == risk] for risk in scores}
        coverage = analysis.record_coverage(by_risk.get("narrowing", []), self.sets)
        return PriskMetrics(
            conditions=names,
            irp=analysis.irp_table(means["irp"]) if "irp" in means else {},
            accuracy=analysis.accuracy_table(by_risk["accuracy"], means["accuracy"],
                                             set(paired["accuracy"][0]))
            if "accuracy" in means else {},
            narrowing=analysis.narrowing_table(by_risk["narrowing"], self.sets, main)
            if "narrowing" in scores else {},
            aer=analysis.exclusion(by_risk.get("narrowing", []), self.sets,
                                   exclusion_condition, self.options.exclusion_correction),
            exclusion_condition=exclusion_condition, correction=self.options.correction,
            exclusion_correction=self.options.exclusion_correction,
            sycophancy=analysis.sycophancy_table(
                {risk: paired[risk][0] for risk in analysis.SYCOPHANCY_TABLES if risk in paired},
                main),
            risk_means=means, scores_100=analysis.scores_100(means),
            degradation=analysis.degradation(means),
            reflection_gain=analysis.reflection_gain(means), narrowing_records=coverage,
            narrower=analysis.narrower(by_risk.get("narrowing", []), coverage, main)
            if coverage else {},
            pis=analysis.pis_table(ok),
            inversion=analysis.inversion_table(ok),
            lmm=fits["lmm"], lmm_families=fits["families"], cell_means=fits["cell_means"],
            permutation=fits["permutation"],
            truncated=analysis.truncated_table(ok, names),
            router=analysis.router_table(ok, self.conditions),
            k_sweep=analysis.k_sweep_table(scores, self.conditions),
            k_sweep_sigma=analysis.k_sweep_sigma(scores, self.conditions),
            unpaired={risk: p[1] for risk, p in paired.items() if p[1]},
            narrowing_failures=self.sets.failures if self.sets else [],
            n_records=len(ok), n_failed=tally.n_failed, failures=tally.failures)

    def summary_line(self, metrics: PriskMetrics) -> str:
        specs = self.roles.specs()
        return (f"Data: {self.options.data.resolve()} · target {specs['target']} · judge "
                f"{specs['judge']} · retriever {self.options.retriever} (k={self.options.k}) · "
                f"{metrics.n_records} records")

    def report_sections(self, report: HtmlReport, metrics: PriskMetrics,
                        records: ItemRecords[EvalRecord]) -> None:
        report_sections(report, metrics)

    def browser(self, records: ItemRecords[EvalRecord]) -> BrowserItems:
        return browser_entries(records, self.by_id, self.conditions, self.sets)

    async def aclose(self) -> None:
        await self.roles.aclose()
        # On the blocking worker, as searches run: rerank-llm closes its model on this loop.
        await run_blocking(self.retriever.close)


def run_eval(options: EvalOptions, *, progress: bool = True) -> Outcome:
    """Validate everything (nothing is written if any input is bad), then evaluate."""
    return run_lens(PriskEval(options), options.out, progress=progress)
