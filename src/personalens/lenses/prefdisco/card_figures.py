"""PrefDisco's scorecard columns: NormAlign, PrefAlign in discovery and the accuracy drop, as
the run's metrics.json has them."""

from personalens.lenses.prefdisco.metrics import PrefdiscoMetrics
from personalens.lenses.prefdisco.options import EvalOptions
from personalens.stats.estimate import Estimate


def normalign(metrics: PrefdiscoMetrics, options: EvalOptions) -> Estimate | None:
    return metrics.normalign.get("overall")


def prefalign_discovery(metrics: PrefdiscoMetrics, options: EvalOptions) -> Estimate | None:
    return metrics.prefalign.get("discovery")


def accuracy_drop(metrics: PrefdiscoMetrics, options: EvalOptions) -> Estimate | None:
    """Baseline minus discovery accuracy over the instances whose two answers both count."""
    return metrics.accuracy_drop
