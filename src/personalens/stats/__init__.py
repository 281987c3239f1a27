"""Small, pure statistics: bootstrap confidence intervals and the Estimate they make."""

from personalens.stats.bootstrap import bootstrap_ci, mean_ci
from personalens.stats.estimate import Estimate, MeanEstimate

__all__ = ["Estimate", "MeanEstimate", "bootstrap_ci", "mean_ci"]
