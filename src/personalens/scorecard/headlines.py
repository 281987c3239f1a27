"""The scorecard's headline metrics: where each is in its lens's metrics.json, and which of
the lens's paired comparisons (`personalens compare`) tests it between two systems.

A cell is {value, ci_low, ci_high, n}, copied from metrics.json (never recomputed), so every
figure of the scorecard is its lens run's own.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from personalens.scorecard.sizes import Size
from personalens.scorecard.systems import System

PRISK_CONDITION = "profile_retrieval"  # full personalisation: profile and memory
SCALE_100 = 25.0  # a 1-5 score on prisk's 0-100 scale: (score - 1) * 25


@dataclass(frozen=True)
class CardMetric:
    lens: str
    name: str
    label: str
    short: str  # the scorecard table's column
    headline: Callable[[Size], str]  # the compare headline of the same figure
    cell: Callable[[dict, Size, System], dict | None]
    higher_is_better: bool
    # The judge-audit metrics that score it (empty: no LLM judge), and the factor from their
    # 1-5 (or 0-1) scale to this metric's (None: not a linear map, e.g. NormAlign's ratio).
    judged: tuple[str, ...] = ()
    noise_scale: float | None = None


def _cell(figure: dict | None, value: str = "value", n: Any = None) -> dict | None:
    if not figure or value not in figure:
        return None
    return {"value": figure.get(value), "ci_low": figure.get("ci_low"),
            "ci_high": figure.get("ci_high"), "n": figure.get("n") if n is None else n}


def _personabench(part: str, metric: str):
    """metrics.json `conditions[retriever, noise].<part>.overall`: one metric of it."""
    def cell(metrics: dict, size: Size, system: System) -> dict | None:
        condition = next((c for c in metrics.get("conditions", [])
                          if c.get("retriever") == system.retriever
                          and float(c.get("noise")) == float(size.noise)), None)
        overall = ((condition or {}).get(part) or {}).get("overall")
        if not overall or metric not in overall:
            return None
        return {"value": overall[metric], "ci_low": (overall.get("ci_low") or {}).get(metric),
                "ci_high": (overall.get("ci_high") or {}).get(metric), "n": overall.get("n")}
    return cell


def _path(*keys: str, value: str = "value", n_key: str | None = None):
    def cell(metrics: dict, size: Size, system: System) -> dict | None:
        figure: Any = metrics
        for key in keys:
            figure = figure.get(key) if isinstance(figure, dict) else None
        n = metrics.get(n_key) if n_key else None
        return _cell(figure, value, n) if isinstance(figure, dict) else None
    return cell


METRICS = [
    CardMetric("personabench", "recall", "retrieval recall", "recall",
               lambda size: f"recall@{size.noise}", _personabench("retrieval", "recall"), True),
    CardMetric("personabench", "f1", "answer F1", "F1",
               lambda size: f"f1@{size.noise}", _personabench("end_to_end", "f1"), True),
    CardMetric("pqb", "flip_rate", "flip rate @1 (paper)", "flip@1",
               lambda size: "flip_rate.paper.1",
               _path("flip_rate", "paper", "1", n_key="n_pairs"), False),
    CardMetric("pqb", "typo_drop", "Hit@1 drop (clean - typo)", "typo drop",
               lambda size: "hit.drop.1",
               _path("hit", "drop", "1"), False),
    CardMetric("prefdisco", "normalign", "NormAlign", "NormAlign", lambda size: "normalign",
               _path("normalign", "overall"), True, judged=("prefalign",)),
    CardMetric("prefdisco", "prefalign_discovery", "PrefAlign discovery (1-5)", "PrefAlign",
               lambda size: "prefalign.discovery", _path("prefalign", "discovery", value="mean"),
               True, judged=("prefalign",), noise_scale=1.0),
    CardMetric("prefdisco", "accuracy_drop", "accuracy drop (baseline - discovery)",
               "accuracy drop",
               lambda size: "accuracy_drop", _path("accuracy_drop", value="mean"), False,
               judged=("correctness",), noise_scale=1.0),
    CardMetric("prisk", "irp", "IRP (0-100, safer higher)", "IRP",
               lambda size: f"irp.{PRISK_CONDITION}",
               _path("scores_100", "irp", PRISK_CONDITION), True, judged=("irp",),
               noise_scale=SCALE_100),
    CardMetric("prisk", "uir", "narrowing UIR (0-100)", "UIR",
               lambda size: f"narrowing.{PRISK_CONDITION}",
               _path("scores_100", "narrowing", PRISK_CONDITION), True),
    CardMetric("prisk", "sycophancy", "sycophancy (0-100, safer higher)",
               "sycophancy",
               lambda size: f"sycophancy.{PRISK_CONDITION}",
               _path("scores_100", "sycophancy", PRISK_CONDITION), True,
               judged=("agreement", "framing"), noise_scale=SCALE_100),
]
