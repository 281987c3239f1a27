"""A lens driven by Inspect: its items become samples, its `run_item` runs per sample, and its
`summarise` reads the samples' records.

The harness's own parts do the work: the item's record line is what `run_lens` would append to
records.jsonl (`runs.harness.run_items`), and the steps a lens takes (dialogue turns, router
decisions) go to an in-memory step store, as on a remote worker. Nothing is written to disk:
Inspect's log holds the records.
"""

import asyncio
from pathlib import Path
from tempfile import gettempdir
from typing import Any

from personalens.inspect_tasks.inspect_models import InspectRole
from personalens.models import Role, RoleModels
from personalens.runs import ItemRecords, Lens, LensOptions, Metrics, RunContext, Tally
from personalens.runs.harness import run_items
from personalens.runs.progress import ItemProgress
from personalens.runs.step_store import DetachedSteps

# Inspect's lens runs write no run directory; the options still need an --out to validate.
UNWRITTEN = Path(gettempdir()) / "personalens-inspect-unwritten"


def inspect_options(options_model: type[LensOptions], models: dict[str, str],
                    **values: Any) -> LensOptions:
    """The lens's options from a task's arguments, every role played by an Inspect model:
    `models` names them (role -> Inspect model); a role it leaves out is named after itself
    while the task runs, or takes its fallback's model (the lens's own rule) when a log is
    imported. A bad argument is one line naming it (InputError)."""
    roles: tuple[Role, ...] = options_model.roles
    settings = {r.role: InspectRole(spec=models.get(r.role) or f"inspect/{r.role}")
                for r in roles if r.role in models or not models}
    return options_model.parse(out=UNWRITTEN, models=RoleModels(settings=settings), **values)


class LensSession:
    """One lens for one Inspect task: set up once (on the first sample), an item per sample."""

    def __init__(self, lens: Lens):
        self.lens = lens
        self.items = {item.key: item for item in lens.plan()}
        self.steps = DetachedSteps({})
        self._progress = ItemProgress(lens.name, enabled=False)  # Inspect shows its own
        self._progress.start(total=len(self.items), completed=0)
        self._ready: asyncio.Future | None = None
        self.lines: dict[str, dict] = {}  # each finished item's record line, by key

    async def record_line(self, key: str) -> dict:
        """The item's record as records.jsonl would hold it (status ok, or failed with its
        error and what it produced)."""
        await self._set_up()
        await run_items(self.lens, [self.items[key]], self.steps, self._progress)
        self.lines[key] = self.steps.done.get(key) or self.steps.failed_items[key]
        return self.lines[key]

    async def _set_up(self) -> None:
        # The first sample sets the lens up; the others wait for it.
        if self._ready is None:
            self._ready = asyncio.ensure_future(self._setup_once())
        await self._ready

    async def _setup_once(self) -> None:
        await self.lens.setup(RunContext(None, self.steps, self._progress))
        await self.lens.prepare(list(self.items.values()))

    def summarise(self, keys: list[str]) -> Metrics:
        """The lens's metrics over the records of these items (the samples scored)."""
        return summarise(self.lens, list(self.items), [self.lines[k] for k in keys])


def summarise(lens: Lens, keys: list[str], lines: list[dict]) -> Metrics:
    """`lens.summarise` over stored record lines, planned in the order of `keys`."""
    done = {line["key"]: line for line in lines if line["status"] == "ok"}
    failed = {line["key"]: line for line in lines if line["status"] != "ok"}
    records = ItemRecords(keys, done, failed, lens.record_model)
    return lens.summarise(records, Tally(n_planned=len(keys), n_recorded=len(records),
                                         failures=records.failures(), step_failures=[]))
