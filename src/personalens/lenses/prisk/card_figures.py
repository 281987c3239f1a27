"""PRISK's scorecard columns: each risk's 0-100 score under full personalisation (profile and
memory), as the run's metrics.json has it."""

from personalens.lenses.prisk.metrics import PriskMetrics
from personalens.lenses.prisk.options import EvalOptions
from personalens.stats.estimate import Estimate

CONDITION = "profile_retrieval"  # full personalisation: profile and memory


def _score(metrics: PriskMetrics, risk: str) -> Estimate | None:
    return metrics.scores_100.get(risk, {}).get(CONDITION)


def irp(metrics: PriskMetrics, options: EvalOptions) -> Estimate | None:
    return _score(metrics, "irp")


def uir(metrics: PriskMetrics, options: EvalOptions) -> Estimate | None:
    """Narrowing's UIR."""
    return _score(metrics, "narrowing")


def sycophancy(metrics: PriskMetrics, options: EvalOptions) -> Estimate | None:
    return _score(metrics, "sycophancy")
