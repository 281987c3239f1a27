"""PersonaBench's scorecard columns: one figure of the run's condition (the system's retriever
at the card's noise level), as its metrics.json has it."""

from personalens.lenses.personabench.metrics import PersonabenchMetrics
from personalens.lenses.personabench.options import EvalOptions
from personalens.stats.estimate import Estimate


def _overall(metrics: PersonabenchMetrics, options: EvalOptions, part: str, metric: str
             ) -> Estimate | None:
    condition = next((c for c in metrics.conditions if c.retriever == options.retriever[0]
                      and c.noise == float(options.noise[0])), None)
    overall = (getattr(condition, part, None) or {}).get("overall")
    estimate = getattr(overall, metric, None)
    return None if estimate is None else estimate.model_copy(update={"n": overall.n})


def recall(metrics: PersonabenchMetrics, options: EvalOptions) -> Estimate | None:
    return _overall(metrics, options, "retrieval", "recall")


def f1(metrics: PersonabenchMetrics, options: EvalOptions) -> Estimate | None:
    return _overall(metrics, options, "end_to_end", "f1")
