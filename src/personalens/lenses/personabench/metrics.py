"""The typed metrics of a PersonaBench run: what metrics.json holds, the report and CLI read."""

import pydantic

from personalens.runs import ItemFailure, Metrics
from personalens.stats.estimate import Estimate, SideBySide
from personalens.stats.paired import PairedDifference


class Scores(SideBySide):
    """Means over one category's n questions, each with its 95 % bootstrap CI over them."""

    recall: Estimate | None = None
    ndcg: Estimate | None = None  # retrieval only
    precision: Estimate | None = None  # answers only
    f1: Estimate | None = None  # answers only


class InfoUpdating(SideBySide):
    """Over the n questions whose value changed: the share of outdated words still repeated,
    and the score 1 - that share."""

    outdated_recall: Estimate
    score: Estimate


class Condition(pydantic.BaseModel):
    retriever: str
    noise: float
    n_items: int
    n_failed: int
    failures_by_kind: dict[str, int]
    retrieval: dict[str, Scores]  # category (and "overall") -> scores
    end_to_end: dict[str, Scores] | None = None
    info_updating: InfoUpdating | None = None

    @property
    def label(self) -> str:
        return f"{self.retriever} @ noise {self.noise:g}"


class Int8Difference(PairedDifference):
    """int8 − fp32 of one metric at one noise level, paired over the n questions both scored
    (the sign-flip test's p, Holm-adjusted across the run's rows as p_holm)."""

    int8: str
    fp32: str
    noise: float
    metric: str  # recall, ndcg or f1
    int8_value: float
    fp32_value: float
    p_holm: float | None = None
    changed: int  # questions whose value differs between the two

    @property
    def label(self) -> str:
        return f"{self.int8} − {self.fp32} @ noise {self.noise:g}"


class PersonabenchMetrics(Metrics):
    n_planned: int
    n_recorded: int
    n_failed: int
    complete: bool
    conditions: list[Condition]
    failures: list[ItemFailure]
    noise_robustness: dict[str, float] | None = None  # retriever -> 1 - F1 drop
    # A single-condition run also carries that condition's sections at the top level.
    retrieval: dict[str, Scores] | None = None
    end_to_end: dict[str, Scores] | None = None
    info_updating: InfoUpdating | None = None
    # Each <retriever>-int8 against its fp32 retriever, when a run has both.
    int8_vs_fp32: list[Int8Difference] | None = None

    def headlines(self) -> list[str]:
        lines = []
        for c in self.conditions:
            overall = c.retrieval["overall"]
            line = (f"{c.label}: retrieval recall {_fmt(overall.recall.value)}, nDCG "
                    f"{_fmt(overall.ndcg.value)}")
            if c.end_to_end is not None:
                line += f"; answer F1 {_fmt(c.end_to_end['overall'].f1.value)}"
            lines.append(line)
        by_label: dict[str, list[str]] = {}
        for d in self.int8_vs_fp32 or []:
            by_label.setdefault(d.label, []).append(
                f"{_NAMES[d.metric]} {d.value:+.3f} ({_fmt(d.ci_low)} to {_fmt(d.ci_high)}, "
                f"{d.changed}/{d.n} changed)")
        lines += [f"{label}: {'; '.join(parts)}" for label, parts in by_label.items()]
        return lines


_NAMES = {"recall": "recall", "ndcg": "nDCG", "f1": "F1"}


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"
