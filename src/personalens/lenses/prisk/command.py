"""`personalens prisk eval`: the PRISK lens on the run harness.

Items are records (every condition inside, so comparisons stay paired); answers, samples, the
router's decision and the narrowing sets' verdicts are steps (the per-answer verdicts are asked
again on resume, from the response cache when it is on). Roles: target (`--model`, also the router),
judge (`--judge`), and the topic and usefulness judges of narrowing (default: the judge).
"""

from dataclasses import dataclass, field
from pathlib import Path

from personalens.errors import InputError
from personalens.lenses.prisk import analysis, answer_sets
from personalens.lenses.prisk.conditions import BASE_CONDITIONS, applies, conditions_for
from personalens.lenses.prisk.evaluation import (
    RISK_GROUPS,
    Evaluation,
    Item,
    Roles,
    Settings,
    Temperatures,
    answer_tokens,
)
from personalens.lenses.prisk.memory_index import MemoryIndexes
from personalens.lenses.prisk.metrics import PriskMetrics
from personalens.lenses.prisk.records import PriskRecord, load_records
from personalens.lenses.prisk.report_page import browser_entries, report_sections
from personalens.models import ModelSettings
from personalens.report.run_page import run_page
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


@dataclass(frozen=True)
class PriskOptions:
    data: Path
    out: Path
    target: ModelSettings
    judge: ModelSettings
    topic_judge: ModelSettings | None = None
    usefulness_judge: ModelSettings | None = None
    conditions: list[str] = field(default_factory=lambda: list(BASE_CONDITIONS))
    risks: list[str] = field(default_factory=lambda: list(RISK_GROUPS))
    retriever: str = "minilm"
    k: int = 3
    k_sweep: list[int] = field(default_factory=list)
    samples: int = 5
    temperatures: Temperatures = field(default_factory=Temperatures)
    attempts: int = 3
    max_tokens: int | None = None  # None: 512, or 128 for a local (in-process CPU) target
    coding: str = "treatment"
    correction: str = "holm"
    limit: int | None = None
    seed: int = 0
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)

    def check(self) -> None:
        conditions_for(self.conditions, self.k_sweep)
        unknown = [r for r in self.risks if r not in RISK_GROUPS]
        if unknown or not self.risks:
            raise InputError(f"--risks takes {', '.join(RISK_GROUPS)} (got "
                             f"{', '.join(unknown) or 'none'})")
        for name, value, low in (("--k", self.k, 1), ("--samples", self.samples, 1),
                                 ("--attempts", self.attempts, 1),
                                 ("--max-tokens", self.answer_tokens, 16)):
            if value < low:
                raise InputError(f"{name} must be at least {low} (got {value})")
        if self.coding not in ("treatment", "effect"):
            raise InputError(f"--coding is treatment or effect (got {self.coding!r})")
        if self.correction not in ("holm", "bh"):
            raise InputError(f"--correction is holm or bh (got {self.correction!r})")
        for name, value in vars(self.temperatures).items():
            if not 0.0 <= value <= 2.0:
                raise InputError(f"the {name} temperature must be in [0, 2] (got {value})")
        for settings in self.roles().values():
            settings.validate_spec()

    @property
    def answer_tokens(self) -> int:
        return answer_tokens(self.max_tokens, self.target.spec)

    def roles(self) -> dict[str, ModelSettings]:
        return {"target": self.target, "judge": self.judge,
                "topic_judge": self.topic_judge or self.judge,
                "usefulness_judge": self.usefulness_judge or self.judge}

    def config(self) -> dict:
        return {"lens": "prisk", "data": str(self.data.resolve()),
                "conditions": self.conditions, "risks": self.risks,
                "retriever": self.retriever, "k": self.k, "k_sweep": self.k_sweep,
                "samples": self.samples, "temperatures": vars(self.temperatures),
                "attempts": self.attempts, "max_tokens": self.answer_tokens,
                "coding": self.coding, "correction": self.correction, "limit": self.limit,
                "models": {role: s.spec for role, s in self.roles().items()}}


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


class PriskEval(Lens):
    """IRP, accuracy, narrowing and sycophancy per condition, and their attribution."""

    name = "prisk"
    title = "personalens · PRISK evaluation"

    def __init__(self, options: PriskOptions):
        super().__init__(options.prices)
        options.check()
        self.options = options
        self.conditions = conditions_for(options.conditions, options.k_sweep)
        self.files = sorted(options.data.glob("*.json")) if options.data.is_dir() else \
            [options.data]
        self.records = selected(load_records(options.data), options.risks, options.limit)
        if not self.records:
            raise InputError(f"no records of the chosen risks ({', '.join(options.risks)})",
                             where=str(options.data))
        self.by_id = {r.record_id: r for r in self.records}
        models = {role: s.load(role, self.ledger) for role, s in options.roles().items()}
        self.roles = Roles(models["target"], models["judge"], models["topic_judge"],
                           models["usefulness_judge"])
        self.retriever = get_retriever(options.retriever, ledger=self.ledger)
        self.evaluation = Evaluation(
            self.roles, MemoryIndexes(self.retriever), self.conditions,
            Settings(k=options.k, samples=options.samples, attempts=options.attempts,
                     max_tokens=options.answer_tokens, temperatures=options.temperatures))
        self.sets: answer_sets.AnswerSets | None = None
        self.steps = None

    def identity(self) -> RunIdentity:
        options = self.options
        root = options.data.resolve()
        return RunIdentity(
            config=options.config(),
            dataset_hash=fingerprint(self.files, root if root.is_dir() else root.parent),
            seeds={"bootstrap": options.seed, "samples": 0},
            models={role: s.spec for role, s in options.roles().items()},
            endpoints={role: s.public() for role, s in options.roles().items()},
            extra={"temperatures": vars(options.temperatures)})

    async def setup(self, context: RunContext) -> None:
        self.steps = context.steps
        self.evaluation.steps = context.steps

    def plan(self) -> list[Item]:
        return [Item(record) for record in self.records]

    async def run_item(self, item: Item) -> dict:
        return await self.evaluation.record(item)

    async def finish(self, records: ItemRecords) -> None:
        narrowing = [r for r in records if r["status"] == "ok" and r["risk"] == "narrowing"]
        if narrowing:
            self.sets = await answer_sets.build(
                narrowing, self.by_id, judge=self.roles.topic_judge,
                usefulness_judge=self.roles.usefulness_judge, steps=self.steps,
                attempts=self.options.attempts, temperature=self.options.temperatures.judge)

    def summarise(self, records: ItemRecords, tally: Tally) -> PriskMetrics:
        ok = [r for r in records if r["status"] == "ok"]
        names = [c.name for c in self.conditions]
        scores = analysis.risk_scores(ok, self.sets)
        of_risk = {risk: [c.name for c in self.conditions if applies(c, risk)] for risk in scores}
        paired = {risk: analysis.paired(table, of_risk[risk]) for risk, table in scores.items()}
        means = {risk: analysis.condition_means(complete, of_risk[risk], self.options.seed)
                 for risk, (complete, _) in paired.items()}
        fits = analysis.attribution(scores, self.conditions, coding=self.options.coding,
                                   correction=self.options.correction, seed=self.options.seed)
        exclusion_condition = next((c for c in ("profile_retrieval", "profile", "retrieval")
                                    if c in names), None)
        by_risk = {risk: [r for r in ok if r["risk"] == risk] for risk in scores}
        return PriskMetrics(
            conditions=names,
            irp=analysis.irp_table(means["irp"]) if "irp" in means else {},
            accuracy=analysis.accuracy_table(by_risk["accuracy"], means["accuracy"],
                                             set(paired["accuracy"][0]))
            if "accuracy" in means else {},
            narrowing=analysis.narrowing_table(by_risk["narrowing"], self.sets,
                                               of_risk["narrowing"])
            if "narrowing" in scores else {},
            exclusion=analysis.exclusion(by_risk.get("narrowing", []), self.sets,
                                         exclusion_condition, "bh"),
            exclusion_condition=exclusion_condition,
            sycophancy=analysis.sycophancy_table(
                {risk: paired[risk][0] for risk in ("agreement", "framing") if risk in paired},
                [c.name for c in self.conditions if applies(c, "agreement")]),
            risk_means=means, pis=analysis.pis_table(ok),
            inversion=analysis.inversion_table(ok),
            lmm=fits["lmm"], cell_means=fits["cell_means"], permutation=fits["permutation"],
            router=analysis.router_table(ok, self.conditions),
            k_sweep=analysis.k_sweep_table(scores, self.conditions),
            unpaired={risk: p[1] for risk, p in paired.items() if p[1]},
            narrowing_failures=self.sets.failures if self.sets else [],
            n_records=len(ok), n_failed=tally.n_failed, failures=tally.failures)

    def render_report(self, metrics: PriskMetrics, tally: Tally, manifest: dict,
                      records: ItemRecords) -> str:
        config = manifest["config"]
        models = config["models"]
        return run_page(
            self.title, tally, manifest,
            summary=(f"Data: {config['data']} · target {models['target']} · judge "
                     f"{models['judge']} · retriever {config['retriever']} (k={config['k']}) · "
                     f"{metrics.n_records} records"),
            sections=lambda report: report_sections(report, metrics),
            browser=browser_entries(records, self.by_id, self.conditions, self.sets))

    async def aclose(self) -> None:
        for model in {id(m): m for m in vars(self.roles).values()}.values():
            await model.aclose()
        self.retriever.close()


def run_eval(options: PriskOptions, *, progress: bool = True) -> Outcome:
    """Validate everything (nothing is written if any input is bad), then evaluate."""
    return run_lens(PriskEval(options), options.out, progress=progress)
