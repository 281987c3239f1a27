"""The scorecard's columns: each lens's declared headline metrics (`lenses.commands.CardMetric`),
read from its eval's metrics.json through the lens's typed accessor, and the lens's paired
comparison (`personalens compare`) that tests it between two systems.

A cell is {value, ci_low, ci_high, n}, the `Estimate` the accessor reads from the run's own
metrics (never recomputed), so every figure of the scorecard is its lens run's own.
"""

import json
from dataclasses import dataclass

import pydantic

from personalens.lenses.commands import CardMetric, resolve
from personalens.runs.options import LensOptions
from personalens.runs.run_directory import METRICS
from personalens.scorecard.stages import Stage, card


@dataclass(frozen=True)
class Column:
    lens: str
    metric: CardMetric

    @property
    def key(self) -> str:  # scorecard.json's metrics key
        return f"{self.lens}.{self.metric.name}"

    def compared(self, options: LensOptions) -> str:
        """The compare headline of the same figure in the eval run of these options."""
        return self.metric.compared.format_map(dict(options))

    def cell(self, metrics, options: LensOptions) -> dict | None:
        """The figure in the run's metrics (its metrics model), as the card holds it."""
        estimate = resolve(self.metric.value)(metrics, options)
        if estimate is None:
            return None
        return {"value": estimate.value, "ci_low": estimate.ci_low,
                "ci_high": estimate.ci_high, "n": estimate.n}


def columns(lenses: list[str]) -> list[Column]:
    """Every headline of these lenses, lens by lens in their declared order."""
    return [Column(lens, metric) for lens in lenses for metric in card(lens).metrics]


def read_metrics(stage: Stage) -> tuple[object | None, str | None]:
    """The eval run's metrics.json as its command's metrics model; (None, why) when there is
    none to read (not run, unreadable, or not of the model)."""
    path = stage.out / METRICS
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None, None
    try:
        return resolve(stage.command.metrics).model_validate(data), None
    except pydantic.ValidationError as exc:
        return None, (f"{stage.label}: {path} does not read as this version's metrics "
                      f"({exc.error_count()} field(s) differ); its cells are empty")
