"""A comparison: the runs read and checked, each system's headlines, the paired tests, and
comparison.json and report.html written (atomically, after every check passed)."""

import json
from pathlib import Path

import numpy as np
import pydantic

from personalens.compare.paired_tests import Pair, compare_pairs
from personalens.compare.report_page import render
from personalens.compare.run_inputs import RunSet, System, load_runs
from personalens.errors import InputError
from personalens.lenses.commands import Headline, Table
from personalens.runs import write_atomic
from personalens.stats.multiple_testing import Method


def compare_runs(paths: list[Path], out: Path, *, shared_items: bool = False,
                 allow_incomplete: bool = False, correction: Method = "holm",
                 seed: int = 0, command: str | None = None,
                 names: dict[Path, str] | None = None) -> dict:
    """Reads and checks every run (nothing is written if one is bad), then writes
    comparison.json and report.html into `out`; returns comparison.json's content.
    `command`: the only lens command accepted (a lens's alias of compare); `names`:
    run -> its system's name (see `load_runs`)."""
    runs = load_runs(paths, shared_items=shared_items, allow_incomplete=allow_incomplete,
                     names=names)
    if command is not None and runs.command != command:
        raise InputError(f"these are {runs.command!r} runs; this command compares {command!r} "
                         "runs (personalens compare reads any)")
    if out.exists() and not out.is_dir():
        raise InputError("--out exists and is not a directory", where=str(out))
    headlines = {s.name: runs.comparison.headlines(s.records) for s in runs.systems}
    tables = _tables(runs, seed)
    pairs = compare_pairs(runs.systems, headlines, correction=correction, seed=seed)
    result = _result(runs, headlines, tables, pairs, correction, seed)
    page = render(f"personalens · comparison of {runs.command} runs", result, runs, headlines,
                  tables, pairs)
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / "comparison.json", json.dumps(result, indent=1))
    write_atomic(out / "report.html", page)
    return result


def _tables(runs: RunSet, seed: int) -> list[Table]:
    """The lens's tables, each row's system shown by its label; a cell is a value, text or an
    `Estimate`."""
    labels = {s.name: s.label for s in runs.systems}
    return [Table(t.title, t.headers, [[labels.get(row[0], row[0]), *row[1:]] for row in t.rows])
            for t in runs.comparison.tables({s.name: s.records for s in runs.systems}, seed)]


def _cell(cell: object) -> object:
    """A table cell as comparison.json holds it: an estimate as its metrics.json object."""
    return cell.model_dump(mode="json", exclude_unset=True) \
        if isinstance(cell, pydantic.BaseModel) else cell


def _result(runs: RunSet, headlines: dict[str, dict[str, Headline]], tables: list[Table],
            pairs: list[Pair], correction: Method, seed: int) -> dict:
    """comparison.json's content (see docs/compare.md); systems shown by their labels."""
    return {
        "command": runs.command, "shared_items": runs.shared_items, "correction": correction,
        "seed": seed,
        "runs": {s.name: _run_entry(s, headlines[s.name]) for s in runs.systems},
        "headlines": {key: h.label for hs in headlines.values() for key, h in hs.items()},
        "tables": [{"title": t.title, "headers": t.headers,
                    "rows": [[_cell(c) for c in row] for row in t.rows]} for t in tables],
        "pairs": [pair.model_dump(mode="json") for pair in pairs],
        "metrics": runs.metrics,
    }


def headline_value(headline: Headline) -> float | None:
    """The system's figure: the statistic of its unit rows, or the mean of its unit values."""
    values = np.array(list(headline.units.values()), dtype=float)
    if headline.statistic is not None:
        return headline.statistic(values.reshape(len(values), -1)) if len(values) else None
    return float(values.mean()) if len(values) else None


def _run_entry(system: System, headlines: dict[str, Headline]) -> dict:
    return {"run": str(system.run), "status": "complete" if system.complete else "incomplete",
            "n_items": len(system.records),
            "headlines": {key: {"value": headline_value(h), "n": len(h.units)}
                          for key, h in headlines.items()}}
