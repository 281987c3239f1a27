"""`personalens judge-audit RUN`: the audit as a lens on the run harness.

An item is one sampled verdict under one audited judge: the verdict asked as the run asked it
(sample 0, the run's own request, so the run's judge answers from the cache when the run's
reply was cached), fresh samples (other seeds), the second wording, the two texts swapped
(pairwise verdicts), and its known-answer probes. The harness gives it resume, failures,
progress, Ctrl-C and kill -9 safety like any run.
"""

from dataclasses import dataclass

from personalens.errors import InputError
from personalens.judge_audit import findings, report_page
from personalens.judge_audit.audited_run import AuditedRun, open_run
from personalens.judge_audit.label_sheet import Label, read_labels
from personalens.judge_audit.metrics import AuditMetrics, MetricAudit
from personalens.judge_audit.options import AuditOptions
from personalens.judge_audit.records import AuditRecord, ProbeOutcome, cut
from personalens.judge_audit.thresholds import MIN_N, thresholds, worst
from personalens.lenses.judged import JudgedVerdict, Probe, Variant
from personalens.models import ChatModel
from personalens.models.settings import ModelSettings
from personalens.report import HtmlReport
from personalens.runs import ItemRecords, Lens, RunIdentity, Tally
from personalens.runs.settled import gather_settled


@dataclass(frozen=True)
class AuditItem:
    judge: int  # index into the audited judges
    verdict: JudgedVerdict

    @property
    def key(self) -> str:
        return f"judge{self.judge}/{self.verdict.key}"


def passed(expect: str, score: float | None, first: float | None,
           scale: tuple[int, int]) -> bool | None:
    """Whether a probe's score is what its construction says it must be; None when the judge
    gave no valid verdict (or no first score to compare with)."""
    if score is None:
        return None
    if expect == "bottom":
        return score == scale[0]
    if expect == "top":
        return score == scale[1]
    if first is None:
        return None
    if expect == "below":
        return score < first
    if expect == "above":
        return score > first
    high = scale[1] - 1 if scale[1] - scale[0] > 1 else scale[1]
    return not (first >= high and score >= high)  # not_both_high


class JudgeAudit(Lens[AuditOptions, AuditRecord, AuditMetrics]):
    name = "judge-audit"
    title = "personalens · judge audit"
    concurrency = 8
    record_model = AuditRecord

    def __init__(self, options: AuditOptions):
        """Checks the run, the judges, the labels and the thresholds before anything is
        written."""
        super().__init__(options, options.models.prices)
        self.limits = thresholds(options.thresholds)
        self.audited: AuditedRun = open_run(options.run, options.sample, options.seed)
        self.settings = self._judge_settings()
        for settings in self.settings:
            settings.validate_spec()
        self.specs = [s.spec for s in self.settings]
        if len(set(self.specs)) != len(self.specs):
            raise InputError(f"--judge names a judge twice: {', '.join(self.specs)}")
        self.labels = self._labels()
        self.by_key = {v.key: v for v in self.audited.sample}
        self.models: list[ChatModel] = []

    def _judge_settings(self) -> list[ModelSettings]:
        if not self.options.judges:
            return [self._moved(s) for s in self.audited.judged.judge_settings()]
        endpoint = self.options.models["judge"] or self.options.models.endpoint
        return [endpoint.with_spec(spec) if endpoint else ModelSettings(spec=spec)
                for spec in self.options.judges]

    def _moved(self, recorded: ModelSettings) -> ModelSettings:
        """The run's judge at the endpoint it recorded, with what the command line changes:
        --base-url (a server that moved), --concurrency and --no-cache."""
        given = self.options.models.endpoint
        if given is None:
            return recorded
        changes = {"base_url": given.base_url, "concurrency": given.concurrency}
        changes = {k: v for k, v in changes.items() if v is not None}
        if not given.use_cache:
            changes["use_cache"] = False
        return recorded.model_copy(update=changes)

    def _labels(self) -> list[Label] | None:
        if self.options.labels is None:
            return None
        scales = {v.key: v.scale for v in self.audited.sample}
        return read_labels(self.options.labels, scales)

    def identity(self) -> RunIdentity:
        return RunIdentity(
            options=self.options, dataset_hash=self.audited.records_hash(),
            seeds={"sample": self.options.seed, "bootstrap": self.options.seed},
            models={"judge": ",".join(self.specs)},
            endpoints={"judge": self.settings[0].public()},
            extra={"audited_command": self.audited.command})

    async def setup(self, context) -> None:
        self.models = [s.load("judge", self.ledger) for s in self.settings]

    def plan(self) -> list[AuditItem]:
        return [AuditItem(j, v) for j in range(len(self.settings)) for v in self.audited.sample]

    async def run_item(self, item: AuditItem) -> AuditRecord:
        verdict = item.verdict
        judge, judged = self.models[item.judge], self.audited.judged

        async def ask(variant: Variant) -> float | None:
            return await judged.score(judge, verdict, variant)

        first = await ask(Variant(verdict.response))
        checked = {name: await gather_settled(*[ask(v) for v in variants])
                   for name, variants in self.checks_of(verdict).items()}
        probes = self.probes_of(verdict, first) if "probes" in self.options.checks else []
        scores = await gather_settled(*[ask(p.variant) for p in probes])
        outcomes = [ProbeOutcome(family=p.family, expect=p.expect, note=p.note,
                                 response=cut(p.variant.response), score=s, baseline=first,
                                 passed=passed(p.expect, s, first, verdict.scale))
                    for p, s in zip(probes, scores, strict=True)]
        asked = [first, *scores, *(v for values in checked.values() for v in values)]
        return AuditRecord(
            judge=self.specs[item.judge], verdict=verdict.key, item=verdict.item,
            metric=verdict.metric, criterion=verdict.criterion, scale=verdict.scale,
            response=cut(verdict.response), run_score=verdict.score, first=first,
            repeats=list(checked.get("stability", [])),
            wording_b=(checked.get("wording") or [None])[0],
            swapped=(checked.get("order") or [None])[0], probes=outcomes,
            invalid=sum(v is None for v in asked))

    def checks_of(self, verdict: JudgedVerdict) -> dict[str, list[Variant]]:
        """The asks of each check that applies to `verdict` besides its first ask and its
        probes: fresh samples (stability), the second wording, the texts swapped (order,
        pairwise verdicts only). The run and the dry run both count from here."""
        checks, response = self.options.checks, verdict.response
        out = {}
        if "stability" in checks:
            out["stability"] = [Variant(response, sample=r)
                                for r in range(1, self.options.repeats + 1)]
        if "wording" in checks:
            out["wording"] = [Variant(response, wording="b")]
        if "order" in checks and verdict.pairwise:
            out["order"] = [Variant(response, swapped=True)]
        return out

    def probes_of(self, verdict: JudgedVerdict, first: float | None) -> list[Probe]:
        """The generic probes (another item's answer, an empty answer: both at the bottom),
        then the lens's own, which need the judge's first score."""
        out = [Probe("empty", Variant(""), "bottom", "an empty answer")]
        donor = self.audited.donors.get(verdict.key)
        if donor is not None:
            out.insert(0, Probe("off_topic", Variant(donor), "bottom",
                                "another item's answer, to another question"))
        if first is not None:
            out += self.audited.judged.probes(verdict, first)
        return out

    def summarise(self, records: ItemRecords[AuditRecord], tally: Tally) -> AuditMetrics:
        ok = list(records.ok())
        judged = self.audited.judged
        metrics = {}
        for metric, label in judged.metrics.items():
            mine = [r for r in ok if r.metric == metric]
            sampled = [v for v in self.audited.sample if v.metric == metric]
            if not sampled:
                continue
            metrics[metric] = self._metric(metric, label, mine, sampled)
        return AuditMetrics(
            run=str(self.options.run), command=self.audited.command, lens=self.audited.lens,
            judges=self.specs, checks=self.options.checks, repeats=self.options.repeats,
            thresholds=self.limits, min_n=MIN_N, metrics=metrics,
            verdict=worst([m.verdict for m in metrics.values()]),
            people=self._people(), failed_items=tally.n_failed)

    def _metric(self, metric: str, label: str, records: list[AuditRecord],
                sampled: list[JudgedVerdict]) -> MetricAudit:
        judged, seed, scale = self.audited.judged, self.options.seed, sampled[0].scale
        by_judge = {spec: [r for r in records if r.judge == spec] for spec in self.specs}

        def headline(scored):
            return judged.headline(metric, scored)

        found = {spec: findings.judge_findings(mine, self.by_key, headline, scale,
                                               self.options.checks, self.limits, seed,
                                               self.labels)
                 for spec, mine in by_judge.items() if mine}
        return MetricAudit(
            label=label, scale=scale, sampled=len(sampled),
            in_run=sum(v.metric == metric for v in self.audited.verdicts),
            run_headline=headline([(v, v.score) for v in sampled]), judges=found,
            between_judges=findings.between_judges(by_judge, scale, self.limits, seed)
            if len(found) > 1 else [],
            disagreements=findings.disagreements(by_judge) if len(found) > 1 else [],
            verdict=worst([f.verdict for f in found.values()]))

    def _people(self) -> dict | None:
        if self.labels is None:
            return None
        return {"labels": str(self.options.labels), "labelled": len(self.labels),
                "units": len({label.unit for label in self.labels}),
                "annotators": sorted({label.annotator for label in self.labels}),
                "published": self.audited.judged.published}

    def summary_line(self, metrics: AuditMetrics) -> str:
        sampled = sum(m.sampled for m in metrics.metrics.values())
        return (f"Audit of {metrics.command} run {metrics.run} · judge(s) "
                f"{', '.join(metrics.judges)} · {sampled} verdicts sampled · overall: "
                f"{metrics.verdict.upper()}")

    def report_sections(self, report: HtmlReport, metrics: AuditMetrics,
                        records: ItemRecords[AuditRecord]) -> None:
        report_page.sections(report, metrics, self.audited.judged.families)

    async def aclose(self) -> None:
        for model in self.models:
            await model.aclose()
