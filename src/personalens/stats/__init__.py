"""Small, pure statistics: bootstrap confidence intervals."""

from personalens.stats.bootstrap import bootstrap_ci, mean_ci, mean_with_ci

__all__ = ["bootstrap_ci", "mean_ci", "mean_with_ci"]
