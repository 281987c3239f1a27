"""PQB's scorecard columns: the paper's flip rate and the typo drop in Hit at K = 1, as the
run's metrics.json has them."""

from personalens.lenses.pqb.metrics import PqbMetrics
from personalens.lenses.pqb.options import EvalOptions
from personalens.stats.estimate import Estimate

K = "1"


def flip_rate(metrics: PqbMetrics, options: EvalOptions) -> Estimate | None:
    """Over the run's pairs of users (`n_pairs`)."""
    figure = metrics.flip_rate.get("paper", {}).get(K)
    return None if figure is None else figure.model_copy(update={"n": metrics.n_pairs})


def typo_drop(metrics: PqbMetrics, options: EvalOptions) -> Estimate | None:
    """Hit@1 on the clean queries minus on their typo versions."""
    return metrics.hit.get("drop", {}).get(K)
