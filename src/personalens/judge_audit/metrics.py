"""What an audit finds, typed: audit.json (and metrics.json, the same) is this model."""

import pydantic

from personalens.runs import Metrics
from personalens.stats.estimate import Estimate


class Figure(Estimate):
    """One reliability figure: its value with a 95 % CI over n units, and its verdict."""

    n: int
    verdict: str  # reliable | doubtful | unreliable | undefined (judge_audit.thresholds)
    kind: str  # which thresholds judged it: probe, exact, alpha, ac2, kappa


class FailedProbe(pydantic.BaseModel):
    family: str
    verdict: str  # the verdict's key in the audited run
    note: str
    expect: str
    first: float | None  # the judge's score of the run's answer
    score: float | None  # its score of the probe
    original: str
    probe: str


class Headline(Estimate):
    """The metric on the audited sample, as this judge scores it, over its n items."""

    n: int
    # With --repeats: the CI when each verdict's score is also drawn from its repeats, i.e.
    # the judge's own noise added to the items' (docs/judges.md says what this assumes).
    noise_ci_low: float | None = None
    noise_ci_high: float | None = None


class JudgeFindings(pydantic.BaseModel):
    """One judge on one metric."""

    verdict: str  # the worst of its figures' verdicts
    figures: dict[str, Figure]  # "probe.off_topic", "stability.alpha", "people.kappa", ...
    headline: Headline
    # How far the headline moved when the same verdicts were asked again, reworded, or with the
    # texts swapped (absolute difference on the metric's scale); a difference between two
    # systems smaller than `max` is within what this judge's instability can produce.
    instability: dict[str, float]
    invalid: int  # asks that got no valid verdict (left out of every figure, not scored)
    failed_probes: list[FailedProbe]


class JudgePair(pydantic.BaseModel):
    judges: tuple[str, str]
    figures: dict[str, Figure]  # exact, alpha, ac2


class MetricAudit(pydantic.BaseModel):
    label: str
    scale: tuple[int, int]
    sampled: int  # verdicts audited
    in_run: int  # verdicts the run holds
    run_headline: float | None  # the metric on the sample from the run's own scores
    judges: dict[str, JudgeFindings]
    between_judges: list[JudgePair] = []
    disagreements: list[dict] = []  # {verdict, item, scores: {judge: score}}, widest first
    verdict: str  # the worst over its judges


class AuditMetrics(Metrics):
    run: str
    command: str
    lens: str
    judges: list[str]
    checks: list[str]
    repeats: int
    thresholds: dict[str, tuple[float, float]]
    min_n: int
    metrics: dict[str, MetricAudit]
    verdict: str  # the worst over every metric
    people: dict | None = None  # labels file, annotators, units labelled; the papers' figures
    failed_items: int = 0

    def headlines(self) -> list[str]:
        lines = []
        for audit in self.metrics.values():
            for judge, found in audit.judges.items():
                weak = [f"{key} {fig.value:.2f}" for key, fig in found.figures.items()
                        if fig.verdict == "unreliable" and fig.value is not None][:3]
                lines.append(f"{audit.label} · {judge}: {found.verdict.upper()}"
                             + (f" ({', '.join(weak)})" if weak else ""))
        return lines
