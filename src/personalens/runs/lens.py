"""The contract between a lens and the run harness (contract v2, docs/architecture.md).

A lens is `Lens[Options, Record, Metrics]`: its declared options (`runs.options.LensOptions`,
validated before anything is written), its identity (derived from the options, plus the
dataset's hash), `plan()`, `run_item()` returning its record model, `summarise()` and its
report's parts (summary line, sections, browser). The harness (`runs.harness.run_lens`) does
everything else: run directory, resume, retries of failed items, concurrency, progress, usage
and cost, Ctrl-C, exit status, metrics.json, report.html and the manifest.
"""

import json
import sys
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

import pydantic

from personalens.report.html_report import HtmlReport
from personalens.report.question_browser import BrowserItems
from personalens.runs.failures import ItemFailure
from personalens.runs.item_records import ItemRecords
from personalens.runs.manifest import Manifest
from personalens.runs.options import LensOptions
from personalens.runs.records import LensRecord
from personalens.runs.usage import UsageLedger

if TYPE_CHECKING:
    from personalens.runs.run_directory import RunDirectory
    from personalens.runs.step_store import StepStore


class Item(Protocol):
    """One unit of a plan; its key is stable across runs (it names the item's record)."""

    @property
    def key(self) -> str: ...


class RunIdentity(pydantic.BaseModel):
    """What identifies a run: its options' identity and the dataset's hash (resuming onto a
    change in either is refused), and what the manifest says about it besides."""

    model_config = pydantic.ConfigDict(arbitrary_types_allowed=True)

    options: LensOptions
    dataset_hash: str | None = None
    seeds: dict[str, int] = {}
    models: dict[str, str] = {}  # role -> spec
    endpoints: dict[str, dict] = {}  # role -> endpoint settings, never a secret
    extra: dict[str, Any] = {}  # anything else the lens wants in the manifest
    command: str = pydantic.Field(default_factory=lambda: " ".join(["personalens",
                                                                    *sys.argv[1:]]))

    def manifest(self, versions: dict[str, str], schema: str | None = None) -> Manifest:
        config = self.options.identity()
        if self.dataset_hash:
            config["dataset_hash"] = self.dataset_hash
        return Manifest(command=self.command, config=config, versions=versions,
                        record_schema=schema,
                        dataset_hash=self.dataset_hash, seeds=self.seeds, models=self.models,
                        endpoints=self.endpoints, **self.extra)


class Tally(pydantic.BaseModel):
    """What the harness counted: planned, recorded and failed items, and failed steps."""

    n_planned: int
    n_recorded: int
    failures: list[ItemFailure]  # per failed item
    step_failures: list[ItemFailure]  # per failed step that is not an item

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
        # Only the keys the lens set: metrics.json keeps exactly the keys it always had. Through
        # JSON text, so a float JSON cannot hold (an infinite odds ratio, a NaN p) is null.
        return json.loads(self.model_dump_json(exclude_unset=True))


@dataclass
class RunContext:
    """What the harness hands a lens at setup: the run directory and its step store. Build
    what needs the step store here, passing it to the constructor."""

    run: "RunDirectory"
    steps: "StepStore"
    progress: Any


Options = TypeVar("Options", bound=LensOptions)
Record = TypeVar("Record", bound=LensRecord)
M = TypeVar("M", bound=Metrics)


class Lens(ABC, Generic[Options, Record, M]):
    """Subclass this; implement the abstract methods, override the optional hooks.

    `prices` (role -> USD per million tokens in, out) turn the usage ledger into the
    manifest's `estimated_cost_usd`.
    """

    name = "run"  # the progress bar's label
    title = "personalens"  # the report's title
    concurrency = 32  # items in flight at once
    record_model: ClassVar[type[LensRecord]] = LensRecord
    judged: ClassVar[bool] = False  # LLM judges score it: its report says if they were audited

    def __init__(self, options: Options, prices: dict[str, tuple[float, float]] | None = None):
        self.options = options
        self.ledger = UsageLedger()
        self.prices = prices or {}

    @abstractmethod
    def identity(self) -> RunIdentity: ...

    async def setup(self, context: RunContext) -> None:
        """Work before the plan exists (multi-step lenses: their first steps), and building
        what needs the step store."""
        return None

    @abstractmethod
    def plan(self) -> Sequence[Item]: ...

    async def prepare(self, todo: Sequence[Item]) -> None:
        """Batch work for the items still to do (e.g. one search for every query)."""
        return None

    @abstractmethod
    async def run_item(self, item: Any) -> Record:
        """The item's record; raise a RecordedFailure when it fails for good."""

    async def finish(self, records: ItemRecords[Record]) -> None:
        """Files the lens writes from its records (a built dataset)."""
        return None

    # `records` (here and above) is read from the run directory as it is iterated, so a run's
    # size is bounded by what the lens keeps of each record: keep the fields a metric needs,
    # not the records (`list(records)` would hold them all).
    @abstractmethod
    def summarise(self, records: ItemRecords[Record], tally: Tally) -> M: ...

    @abstractmethod
    def summary_line(self, metrics: M) -> str:
        """The report's first line: the data, the models, how many items."""

    def report_sections(self, report: HtmlReport, metrics: M,
                        records: ItemRecords[Record]) -> None:
        """The lens's own parts of report.html (tables, plots), between status and browser."""
        return None

    def browser(self, records: ItemRecords[Record]) -> BrowserItems | None:
        """Entries of the report's item browser (None: no browser)."""
        return None

    async def aclose(self) -> None:
        """Release models and retrievers (called on the run's loop, also after Ctrl-C)."""
        return None
