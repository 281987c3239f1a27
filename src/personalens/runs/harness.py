"""The run lifecycle, once, for every lens.

open the run directory with the lens's identity -> setup -> plan -> skip finished items ->
run the rest (bounded, with progress; failures recorded in the one failure shape) -> finish ->
summarise -> metrics.json, report.html, manifest (usage per role, estimated cost) -> close.
Ctrl-C records the run as interrupted and exits 130, SIGTERM (timeout, a batch scheduler,
docker stop) likewise with 143; the caller exits 3 when it is incomplete.
"""

import asyncio
import signal
import sys
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from personalens.errors import InputError
from personalens.report.run_page import run_page
from personalens.runs.failures import ItemFailure, RecordedFailure
from personalens.runs.item_records import ItemRecords
from personalens.runs.judge_note import judge_note
from personalens.runs.lens import Lens, Metrics, RunContext, Tally
from personalens.runs.progress import ItemProgress
from personalens.runs.provenance import package_versions
from personalens.runs.run_directory import RunDirectory
from personalens.runs.step_store import StepStore
from personalens.runs.usage import estimated_cost, merge_usage

INTERRUPTED = 130
TERMINATED = 128 + signal.SIGTERM
INCOMPLETE = 3  # a run that ended with items failed or not recorded; rerunning resumes it


@dataclass(frozen=True)
class Outcome:
    metrics: Metrics
    run_dir: Path
    tally: Tally

    @property
    def complete(self) -> bool:
        return self.tally.complete


def run_lens(lens: Lens, out: Path, *, progress: bool = True) -> Outcome:
    """Run (or resume) `lens` into `out`. Everything that can refuse the input already has."""
    display = ItemProgress(lens.name, enabled=progress)  # may refuse its setting: before any write
    run = RunDirectory.open(out, lens.identity().manifest(
        package_versions(), schema=lens.record_model.schema_tag()))
    status = "interrupted"
    try:
        outcome = _run_stoppable(_lifecycle(lens, run, display))
        status = "complete" if outcome.complete else "incomplete"
        return outcome
    except (KeyboardInterrupt, Terminated) as stop:
        # Every finished item is already on disk; the same command picks up from there.
        terminated = isinstance(stop, Terminated)
        status = "terminated" if terminated else "interrupted"
        how = "terminated (SIGTERM)" if terminated else "interrupted"
        print(f"personalens: {how}; rerun the same command to resume: "
              f"{run.manifest.command}".rstrip(": "), file=sys.stderr)
        raise SystemExit(TERMINATED if terminated else INTERRUPTED) from None
    finally:
        _write_usage(run, lens)
        run.close(status)


class Terminated(Exception):
    """SIGTERM arrived: the run was cancelled as after a Ctrl-C."""


def _run_stoppable(lifecycle):
    """Run the lifecycle; SIGTERM cancels it as Ctrl-C does, whatever the launcher did to SIGINT.

    asyncio.run cancels the main task on Ctrl-C, but it installs that handler only when SIGINT
    has its default handler: a job a script started in the background (`cmd &`, nohup, many
    batch launchers) has SIGINT ignored. So SIGTERM cancels the task itself, on the loop: the
    lens's finally blocks and aclose run, and the run is recorded as terminated.
    """
    if threading.current_thread() is not threading.main_thread():
        return asyncio.run(lifecycle)  # only the main thread may set handlers

    received: list[int] = []

    async def main():
        task, loop = asyncio.current_task(), asyncio.get_running_loop()

        def on_sigterm():
            received.append(signal.SIGTERM)
            task.cancel()

        loop.add_signal_handler(signal.SIGTERM, on_sigterm)
        try:
            return await lifecycle
        except asyncio.CancelledError:
            if received:
                raise Terminated() from None
            raise

    previous = signal.getsignal(signal.SIGTERM)
    try:
        return asyncio.run(main())
    finally:
        if previous is not None:  # the loop's removal would leave SIG_DFL, not the caller's
            signal.signal(signal.SIGTERM, previous)


async def _lifecycle(lens: Lens, run: RunDirectory, progress: ItemProgress) -> Outcome:
    steps = StepStore(run, on_step=progress.step)
    try:
        await lens.setup(RunContext(run, steps, progress))
        items = _checked_plan(lens.plan())
        todo = [item for item in items if item.key not in steps.done]
        progress.start(total=len(items), completed=len(items) - len(todo))
        await lens.prepare(todo)
        await run_items(lens, todo, steps, progress)
        records = ItemRecords([item.key for item in items], steps.done, steps.failed_items,
                              lens.record_model)
        await lens.finish(records)  # may still call models (cross-item steps), so before aclose
    finally:
        progress.stop()
        await lens.aclose()
    tally = _tally(items, records, steps)
    metrics = lens.summarise(records, tally)
    _write_usage(run, lens)
    run.manifest.status = "complete" if tally.complete else "incomplete"  # for the report
    report = run_page(lens.title, tally, run.manifest, summary=lens.summary_line(metrics),
                      sections=lambda page: lens.report_sections(page, metrics, records),
                      browser=lens.browser(records),
                      judge_note=judge_note(run.path) if lens.judged else None)
    run.write_outputs(metrics.to_json(), report)
    return Outcome(metrics, run.path, tally)


def _checked_plan(items: Sequence) -> list:
    counts = Counter(item.key for item in items)
    if len(counts) != len(items):
        duplicates = sorted(k for k, n in counts.items() if n > 1)
        raise InputError(f"the plan names items twice: {', '.join(duplicates[:5])}")
    return list(items)


async def run_items(lens: Lens, todo: list, steps: StepStore,
                    progress: ItemProgress) -> None:
    """Run `todo` (at most `lens.concurrency` at once), writing each item's record line or
    failure as a run does; the Inspect tasks call it for one sample at a time."""
    limit = asyncio.Semaphore(lens.concurrency)

    async def one(item) -> None:
        async with limit:
            schema = lens.record_model.schema_tag()
            try:
                record = {**(await lens.run_item(item)).fields(), "key": item.key,
                          "status": "ok", "schema": schema}
            except RecordedFailure as exc:
                record = {**_plain(exc.data), "key": item.key, "status": "failed",
                          "schema": schema, "error": exc.failure.model_dump(),
                          **({"failed_steps": exc.steps} if exc.steps else {})}
            steps.append(record, item=True)
            progress.advance(failed=record["status"] != "ok")

    # A TaskGroup, not gather: a bug in one item cancels the others instead of running on.
    async with asyncio.TaskGroup() as group:
        for item in todo:
            group.create_task(one(item))


def _tally(items: list, records: ItemRecords, steps: StepStore) -> Tally:
    item_keys = {item.key for item in items}
    failed = records.failures()
    # A step whose failure failed an item is listed once, as the item (its record names the
    # steps the failure came through).
    carried = {key for failure in failed for key in failure.failed_steps}
    return Tally(n_planned=len(items), n_recorded=len(records), failures=failed,
                 step_failures=[ItemFailure(key=f["key"], **f["error"]) for f in steps.failures
                                if f["key"] not in item_keys and f["key"] not in carried])


def _plain(data) -> dict:
    """What a failed item produced, as JSON fields (a partial record model, or a dict)."""
    return data.fields() if hasattr(data, "fields") else dict(data)


def _write_usage(run: RunDirectory, lens: Lens) -> None:
    usage = merge_usage(run.previous_usage, lens.ledger.as_dict())
    run.write_manifest(usage=usage, estimated_cost_usd=estimated_cost(usage, lens.prices))
