"""The runs a comparison reads, checked before anything is written: run directories of one
lens command, on one dataset (or restricted to the items all share), complete unless allowed.
"""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from personalens.errors import InputError
from personalens.lenses.commands import Comparison, comparable_commands, resolve
from personalens.runs import METRICS, RECORDS, ItemRecords
from personalens.runs.run_directory import read_run_manifest, run_command


@dataclass
class System:
    """One compared system: its name, the run it comes from and the records it is scored on
    (restricted to the shared items with --shared-items)."""

    name: str
    run: Path
    complete: bool
    records: list[Any]

    @property
    def label(self) -> str:
        """The name as every table shows it: an incomplete run is marked."""
        return self.name if self.complete else f"{self.name} [incomplete]"


@dataclass
class RunSet:
    command: str
    comparison: Comparison
    systems: list[System]
    metrics: dict[str, dict]  # system name -> its run's own metrics.json
    shared_items: int | None  # with --shared-items: how many items every run shares


def load_runs(paths: list[Path], *, shared_items: bool = False,
              allow_incomplete: bool = False, names: dict[Path, str] | None = None) -> RunSet:
    """`names`: run -> the name of its one system, in place of the name the lens gives it
    (the scorecard names systems itself: two of them may share a model or a retriever)."""
    if len(paths) < 2:
        raise InputError("compare takes at least two run directories")
    manifests = [read_run_manifest(path) for path in paths]
    command = _one_command(paths, manifests)
    comparison: Comparison = resolve(_comparison(command))
    _same_data(paths, manifests, shared_items)
    systems, metrics = [], {}
    for path, manifest in zip(paths, manifests, strict=True):
        records = _records(path, comparison)
        complete = manifest.get("status") == "complete" and not records.failures()
        if not complete and not allow_incomplete:
            raise InputError("the run is incomplete (not finished, or items failed); finish "
                             "it, or pass --allow-incomplete to compare it marked",
                             where=str(path))
        systems_of_run = _systems(comparison, records, manifest, path)
        if names and path in names and len(systems_of_run) == 1:
            systems_of_run = {names[path]: next(iter(systems_of_run.values()))}
        for name, scored in systems_of_run.items():
            if name in metrics:
                raise InputError(f"two systems are named {name!r}; compare runs of different "
                                 "systems", where=str(path))
            systems.append(System(name, path, complete, scored))
            metrics[name] = _metrics(path)
    shared = _restrict(systems, comparison) if shared_items else None
    return RunSet(command, comparison, systems, metrics, shared)


def _systems(comparison: Comparison, records: ItemRecords, manifest: dict,
             path: Path) -> dict[str, list[Any]]:
    """The run's systems; a bad record or manifest field is named with the run's path."""
    try:
        return comparison.systems(records, manifest)
    except InputError as exc:
        raise InputError(str(exc), where=str(path)) from None


def _one_command(paths: list[Path], manifests: list[dict]) -> str:
    commands = {run_command(m): path for path, m in zip(paths, manifests, strict=True)}
    if len(commands) > 1:
        raise InputError("runs of different commands cannot be compared: " + "; ".join(
            f"{path}: {command}" for command, path in commands.items()))
    return next(iter(commands))


def _comparison(command: str) -> str:
    """The "module:object" of the command's Comparison."""
    comparable = comparable_commands()
    if command not in comparable:
        raise InputError(f"runs of {command!r} cannot be compared (compare reads "
                         f"{', '.join(comparable)} runs)")
    return comparable[command].comparison


def _same_data(paths: list[Path], manifests: list[dict], shared_items: bool) -> None:
    hashes = [m.get("dataset_hash") for m in manifests]
    if len(set(hashes)) > 1 and not shared_items:
        raise InputError("runs on different data (dataset_hash differs): " + ", ".join(
            f"{path} ({str(h)[:12]})" for path, h in zip(paths, hashes, strict=True))
            + "; pass --shared-items to compare them on the items they share")


def _records(path: Path, comparison: Comparison) -> ItemRecords:
    try:
        with (path / RECORDS).open() as handle:
            lines = [json.loads(line) for line in handle if line.strip()]
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"unreadable {RECORDS} ({type(exc).__name__})", where=str(path)) \
            from None
    return ItemRecords.from_lines(lines, comparison.record_model)


def _metrics(path: Path) -> dict:
    try:
        return json.loads((path / METRICS).read_text())
    except (OSError, json.JSONDecodeError):
        return {}  # an unfinished run has none yet; its figures come from its records


def _restrict(systems: list[System], comparison: Comparison) -> int:
    """Keeps in every system only the items all of them share; returns how many."""
    shared = set.intersection(*({comparison.item(r) for r in s.records} for s in systems))
    for system in systems:
        system.records = [r for r in system.records if comparison.item(r) in shared]
    return len(shared)
