"""The typed metrics of a prefdisco eval: what metrics.json holds, the report and CLI read."""

import pydantic

from personalens.lenses.prefdisco.release_format import Invalid
from personalens.runs import ItemFailure, Metrics
from personalens.stats.estimate import Estimate, MeanEstimate


class Accuracy(MeanEstimate):
    n_unparsed: int


class Truncated(pydantic.BaseModel):
    """Scored answers cut off at the token limit (finish reason "length")."""

    count: int
    share: float | None  # count / n
    n: int  # the condition's paired answers


class NormAlign(Estimate):
    """100 x (PA_d - PA_b) / (PA_o - PA_b) on n paired instances, its paired bootstrap CI."""

    undefined: bool
    discovery_gain: float | None  # paired mean PA_discovery - PA_baseline
    oracle_gain: float | None  # paired mean PA_oracle - PA_baseline
    oracle_below_baseline: bool = False  # defined, but the oracle scored below the baseline
    undefined_resamples: int = 0  # bootstrap resamples left out of the CI (undefined there)


class LinearFit(pydantic.BaseModel):
    """Pearson r with its p and the least-squares line of y on x over n pairs (all None but n
    with fewer than 3 pairs or a constant side)."""

    r: float | None
    p: float | None
    slope: float | None
    intercept: float | None
    n: int


class QuestionsAsked(pydantic.BaseModel):
    turns: float | None  # the target's ask actions
    questions: float | None  # question marks in what it asked


class Agreement(pydantic.BaseModel):
    method: str | None  # weighted_kappa or krippendorff_alpha
    value: float | None
    n: int


class JudgeQuality(pydantic.BaseModel):
    invalid_rate: float | None
    excluded_criteria: int
    replies: int
    agreement: Agreement | None = None  # with several judges


class TaskMeans(pydantic.BaseModel):
    """One task's paired instances: PrefAlign and accuracy per main condition."""

    n: int
    prefalign: dict[str, float]
    accuracy: dict[str, float | None]


class Unpaired(pydantic.BaseModel):
    instance: str
    reasons: list[str]


class PrefdiscoMetrics(Metrics):
    scoring: str
    protocol: str  # release or personalens: what the target was told, which answer is scored
    truncated_answers: str  # exclude (from accuracy) or score
    correctness: str | None = None  # judge or rules: the method `accuracy` is by
    conditions: list[str]
    prefalign: dict[str, MeanEstimate]
    accuracy: dict[str, Accuracy]  # n: the answers counted (truncated ones out when excluded)
    # Under --correctness judge, the rules' accuracy over the counted answers that carry an
    # ANSWER: line anyway (n: how many); empty when none does
    accuracy_rules: dict[str, Accuracy] = {}
    # baseline minus discovery accuracy over instances whose two answers both count
    accuracy_drop: MeanEstimate | None = None
    truncated: dict[str, Truncated]
    normalign: dict[str, NormAlign] = {}  # task -> value, and "overall"
    normalign_fixed: dict[str, dict[str, NormAlign]] = {}  # fixed_<N> -> task (and overall)
    negative_normalign_share: float | None = None
    negative_normalign_tasks: int | None = None  # the tasks the share is over
    # the paper's share (61 of 210): over every task with a defined NormAlign
    negative_normalign_share_all: float | None = None
    negative_normalign_tasks_all: int | None = None
    questions_asked: dict[str, QuestionsAsked]
    preferences_discovered: dict[str, float | None]  # condition -> mean preferences revealed
    preferences_discovered_share: dict[str, float | None]
    # discovery: question turns (ask actions) vs PrefAlign gain over baseline, per instance
    question_turns_vs_gain: LinearFit | None = None
    judge: JudgeQuality
    per_task: dict[str, TaskMeans]
    n_instances: int  # paired instances: the n of every mean
    n_planned_instances: int
    n_failed: int
    unpaired: list[Unpaired]
    unpaired_fixed: dict[str, list[Unpaired]] = {}  # fixed_<N> -> instances out of its pairing
    renormalised_weights: list[str]
    data_warnings: dict[str, list[str]] = {}  # instance -> loader warnings (defaulted weights)
    skipped_invalid: list[Invalid]
    failures: list[ItemFailure]

    def headlines(self) -> list[str]:
        lines = [f"instances scored in every condition: {self.n_instances} of "
                 f"{self.n_planned_instances} (scoring: {self.scoring})"]
        for condition in self.conditions:
            pa, acc = self.prefalign[condition], self.accuracy[condition]
            cut = self.truncated[condition].count
            lines.append(f"{condition}: PrefAlign {_fmt(pa.value, 2)} [{_fmt(pa.ci_low, 2)}, "
                         f"{_fmt(pa.ci_high, 2)}] · accuracy {_fmt(acc.value)} "
                         f"({acc.n_unparsed} unparsed, {cut} truncated"
                         + (" and left out)" if cut and self.truncated_answers == "exclude"
                            else ")"))
        overall = self.normalign.get("overall")
        if overall is not None:
            lines.append(f"NormAlign (overall): {normalign_text(overall)}")
        return lines


def normalign_text(value: NormAlign) -> str:
    """A NormAlign for people: its value and CI, or why it has none."""
    if value.n == 0:
        return "– (no instance was scored in every condition: nothing to compare)"
    if value.undefined:
        return "undefined (oracle ≈ baseline)"
    return f"{value.value:.1f} [{_fmt(value.ci_low, 1)}, {_fmt(value.ci_high, 1)}]"


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"
