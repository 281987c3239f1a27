"""Small, pure statistics: bootstrap confidence intervals and the Estimate they make.

Names load on first use (lazy_loader): a metrics model that holds an `Estimate` does not pull
in numpy, so reading an options model or a command's --help stays light.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "bootstrap": ["bootstrap_ci", "mean_ci"],
    "estimate": ["Estimate", "MeanEstimate"],
})
