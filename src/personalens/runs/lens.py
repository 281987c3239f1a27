"""The contract between a lens and the run harness.

A lens supplies its options (validated in its constructor, before anything is written), its
identity, `plan()`, `run_item()`, `summarise()` and its report sections. The harness
(`runs.harness.run_lens`) does everything else: run directory, resume, retries of failed
items, concurrency, progress, usage and cost, Ctrl-C, exit status, metrics.json, report.html
and the manifest. See docs/architecture.md.
"""

import sys
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import pydantic

from personalens.runs.item_records import ItemRecords
from personalens.runs.usage import UsageLedger

if TYPE_CHECKING:
    from personalens.runs.run_directory import RunDirectory
    from personalens.runs.step_store import StepStore


class Item(Protocol):
    """One unit of a plan; its key is stable across runs (it names the item's record)."""

    @property
    def key(self) -> str: ...


class RunIdentity(pydantic.BaseModel):
    """What identifies a run. Resuming onto a different config or dataset is refused."""

    config: dict[str, Any]
    dataset_hash: str | None = None
    seeds: dict[str, int] = {}
    models: dict[str, str] = {}  # role -> spec
    endpoints: dict[str, dict] = {}  # role -> endpoint settings, never a secret
    extra: dict[str, Any] = {}  # anything else the lens wants in the manifest
    command: str = pydantic.Field(default_factory=lambda: " ".join(["personalens",
                                                                    *sys.argv[1:]]))

    def manifest(self, versions: dict[str, str]) -> dict[str, Any]:
        # The dataset's hash is part of the config, so resuming over changed files is refused.
        config = {**self.config, "dataset_hash": self.dataset_hash} if self.dataset_hash else \
            self.config
        return {"command": self.command, "config": config, "versions": versions,
                "dataset_hash": self.dataset_hash, "seeds": self.seeds, "models": self.models,
                "endpoints": self.endpoints, **self.extra}


class Tally(pydantic.BaseModel):
    """What the harness counted: planned, recorded and failed items, and failed steps."""

    n_planned: int
    n_recorded: int
    failures: list[dict]  # {key, kind, message, attempts} per failed item
    step_failures: list[dict]  # the same, per failed step that is not an item

    @property
    def n_failed(self) -> int:
        return len(self.failures)

    @property
    def complete(self) -> bool:
        return (self.n_recorded == self.n_planned and not self.failures
                and not self.step_failures)


class Metrics(pydantic.BaseModel):
    """A lens's metrics: typed fields for the report and the CLI, written as metrics.json."""

    model_config = pydantic.ConfigDict(extra="forbid")

    def headlines(self) -> list[str]:
        """The lines the CLI prints after a run."""
        return []

    def to_json(self) -> dict:
        # Only the keys the lens set: metrics.json keeps exactly the keys it always had.
        return self.model_dump(mode="json", exclude_unset=True)


@dataclass
class RunContext:
    """What the harness hands a lens at setup: the run directory and its step store."""

    run: "RunDirectory"
    steps: "StepStore"
    progress: Any


class Lens(ABC):
    """Subclass this; implement the abstract methods, override the optional hooks.

    `prices` (role -> USD per million tokens in, out) turn the usage ledger into the
    manifest's `estimated_cost_usd`.
    """

    name = "run"  # the progress bar's label
    title = "personalens"  # the report's title
    concurrency = 32  # items in flight at once

    def __init__(self, prices: dict[str, tuple[float, float]] | None = None):
        self.ledger = UsageLedger()
        self.prices = prices or {}

    @abstractmethod
    def identity(self) -> RunIdentity: ...

    async def setup(self, context: RunContext) -> None:
        """Work before the plan exists (multi-step lenses: their first steps)."""
        return None

    @abstractmethod
    def plan(self) -> Sequence[Item]: ...

    async def prepare(self, todo: Sequence[Item]) -> None:
        """Batch work for the items still to do (e.g. one search for every query)."""
        return None

    @abstractmethod
    async def run_item(self, item: Any) -> dict:
        """The item's record fields; raise a RecordedFailure when it fails for good."""

    async def finish(self, records: ItemRecords) -> None:
        """Files the lens writes from its records (a built dataset)."""
        return None

    # `records` (here and above) is read from the run directory as it is iterated, so a run's
    # size is bounded by what the lens keeps of each record: keep the fields a metric needs,
    # not the records (`list(records)` would hold them all).
    @abstractmethod
    def summarise(self, records: ItemRecords, tally: Tally) -> Metrics: ...

    @abstractmethod
    def render_report(self, metrics: Metrics, tally: Tally, manifest: dict,
                      records: ItemRecords) -> str:
        """report.html: the lens's sections inside `report.run_page`'s shared frame."""

    async def aclose(self) -> None:
        """Release models and retrievers (called on the run's loop, also after Ctrl-C)."""
        return None
