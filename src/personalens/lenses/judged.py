"""What a judged lens tells the judge audit (`personalens judge-audit`): its verdicts, how to ask
its judge again, and the probes only it can build.

A lens whose run command is scored by LLM judges names a `JudgedRun` subclass in its
`DeclaredCommand.judged` ("module:Class"). The audit (the `judge_audit` package, above the
lenses) opens the run with it, samples its verdicts, and asks each audited judge again through
`score`, under the variants below. The types are here, below the audit, so a lens never imports
that layer.
"""

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from personalens.errors import InputError
from personalens.models.chat_model import ChatModel
from personalens.models.settings import ModelSettings
from personalens.runs import RECORDS, ItemRecords, fingerprint

Expect = Literal["bottom", "top", "below", "above", "not_both_high"]


@dataclass(frozen=True)
class JudgedVerdict:
    """One verdict of a run: a judge's score of one response on one criterion.

    `scale` is (bottom, top): (1, 5) for a rubric, (0, 1) for a yes/no verdict (1 = yes).
    `pairwise`: the judge compares two texts (the response and a reference), so their order
    can be swapped. `description`, `levels` and `material` are what a person labelling it
    sees: the same as the judge, without the judge's score."""

    key: str  # unique in the run: "<item>/<metric>[/<criterion>]"
    item: str  # the run's item key
    metric: str  # the judged metric it feeds ("irp", "prefalign", ...)
    criterion: str
    scale: tuple[int, int]
    question: str
    response: str
    score: float | None  # as the run recorded it (None: the run's verdict was excluded)
    description: str
    levels: tuple[tuple[int, str], ...]
    material: str
    pairwise: bool = False
    context: dict[str, Any] = field(default_factory=dict, compare=False)  # the lens's own

    @property
    def binary(self) -> bool:
        return self.scale == (0, 1)


@dataclass(frozen=True)
class Variant:
    """How a verdict is asked again: with which response, in which wording and order, with a
    lens's change to what the judge is told, and which sample (0: the run's own request,
    answered from the cache when the run's was cached; n > 0: a fresh sample, another seed)."""

    response: str
    wording: Literal["a", "b"] = "a"
    swapped: bool = False
    change: str | None = None  # a lens-specific change ("flip_verdict", "opposite_value")
    sample: int = 0

    def with_response(self, response: str) -> "Variant":
        return replace(self, response=response)


@dataclass(frozen=True)
class Probe:
    """A known-answer probe: the verdict asked under `variant`, whose right outcome is known by
    construction (`expect`, against the judge's own first score of the verdict for
    "below"/"above"/"not_both_high")."""

    family: str
    variant: Variant
    expect: Expect
    note: str  # what was changed, as the report says it


@dataclass(frozen=True)
class ProbeFamily:
    """A lens's own probe family: its name, what it checks (the report's wording), and the
    metrics it applies to."""

    name: str
    checks: str
    metrics: tuple[str, ...]


class JudgedRun(ABC):
    """A finished run of a judged lens command, opened for the audit.

    The constructor reads the run's data (from the manifest's config) and records; it raises
    `InputError` when the data is gone or changed."""

    metrics: dict[str, str] = {}  # judged metric -> label, in report order
    families: tuple[ProbeFamily, ...] = ()  # the lens's own probe families
    # The paper's own agreement figure, shown beside the judge's agreement with people.
    published: str | None = None

    def __init__(self, run: Path, manifest: dict[str, Any]):
        self.run = run
        self.manifest = manifest
        self.config: dict[str, Any] = manifest.get("config") or {}

    def data_path(self) -> Path:
        """The data the run evaluated, as its manifest names it; InputError when it is gone."""
        data = Path(str(self.config.get("data", "")))
        if not self.config.get("data") or not data.exists():
            raise InputError(f"the run's data {str(data)!r} is not there any more; the audit "
                             "re-reads it to ask the judge again", where=str(self.run))
        return data

    def check_data(self, files: list[Path], root: Path) -> None:
        """InputError when the data is not what the run evaluated (its hash changed)."""
        if fingerprint(files, root) != self.manifest.get("dataset_hash"):
            raise InputError(f"the run's data {root} changed since the run (dataset_hash "
                             "differs); audit a run of the data as it is", where=str(self.run))

    def records(self, model) -> ItemRecords:
        """The run's item records (`model`: the command's record model)."""
        with (self.run / RECORDS).open() as handle:
            lines = [json.loads(line) for line in handle if line.strip()]
        return ItemRecords.from_lines(lines, model)

    def judge_settings(self) -> list[ModelSettings]:
        """The run's judge role(s) with the endpoint its manifest recorded ("a,b": several
        judges on one endpoint)."""
        endpoint = (self.manifest.get("endpoints") or {}).get("judge") or {}
        specs = str((self.manifest.get("models") or {}).get("judge") or "").split(",")
        settings = ModelSettings(**{**endpoint, "spec": specs[0]}) if endpoint else None
        return [settings.with_spec(spec) if settings else ModelSettings(spec=spec)
                for spec in specs if spec]

    @abstractmethod
    def verdicts(self) -> list[JudgedVerdict]:
        """Every verdict the run's judge gave, in a stable order."""

    def probes(self, verdict: JudgedVerdict, first: float) -> list[Probe]:
        """The lens's own probes of a verdict, given the judge's first score of it."""
        return []

    @abstractmethod
    async def score(self, judge: ChatModel, verdict: JudgedVerdict,
                    variant: Variant) -> float | None:
        """The judge's score of `verdict` asked under `variant`, with the run's judge settings
        (temperature, attempts, scoring mode); None when no valid verdict came. Model-call
        failures propagate (`ModelCallFailed`)."""

    def headline(self, metric: str,
                 scored: list[tuple[JudgedVerdict, float | None]]) -> float | None:
        """The metric's value from (verdict, score) pairs (default: the mean of the valid
        scores), so the audit can show how much it moves with the judge."""
        values = [score for _, score in scored if score is not None]
        return sum(values) / len(values) if values else None
