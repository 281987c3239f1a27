"""Inspect logs of a personalens task -> a personalens run directory.

Each sample's score holds its item's record line (as records.jsonl holds it); the log's
metadata holds the task's arguments and its models name the roles. The lens is built again
from those, and the harness writes the run directory as for any run (manifest, records.jsonl,
metrics.json, report.html), its items replayed from the records instead of run: no model is
called, and `personalens compare` reads the result like any other run.
"""

from pathlib import Path

from inspect_ai.log import EvalLog, read_eval_log

from personalens.errors import InputError
from personalens.inspect_tasks.lens_task import LENS, RECORD, LensTask, build_lens, task_lenses
from personalens.runs import Outcome, RecordedFailure, RunIdentity, run_lens
from personalens.runs.lens import Lens

# A sample Inspect could not finish (its error, no score) is a failed item of this kind.
INSPECT_FAILURE = "inspect_sample_error"


def import_logs(paths: list[Path], out: Path) -> Outcome:
    """Write the run directory `out` from Inspect logs of one personalens task (several logs
    of it, e.g. a retried eval-set, merge: a key's recorded line wins over a failed one, else
    the last)."""
    logs = [_read(path) for path in paths]
    first = logs[0]
    spec = LensTask.of(_lens_of(first, paths[0]))
    for log, path in zip(logs[1:], paths[1:], strict=True):
        if (_lens_of(log, path), _args(log), roles(log)) != (spec.name, _args(first),
                                                             roles(first)):
            raise InputError("not a log of the same task, arguments and models as "
                             f"{paths[0]}", where=str(path))
    lines = merged([sample_lines(log) for log in logs])
    lens = build_lens(spec, _args(first), roles(first))
    return run_lens(ReplayedLens(lens, lines, [str(p) for p in paths]), out, progress=False)


def roles(log: EvalLog) -> dict[str, str]:
    """Role -> the Inspect model that played it: `--model` the target, `--model-role` others."""
    given = {role: (config[0] if isinstance(config, list) else config).model
             for role, config in (log.eval.model_roles or {}).items()}
    return {"target": log.eval.model, **given}


def sample_lines(log: EvalLog) -> dict[str, dict]:
    """Each sample's record line; a sample Inspect failed (no score) as a failed item."""
    lines = {}
    for sample in log.samples or []:
        score = next(iter((sample.scores or {}).values()), None)
        if score is not None and RECORD in (score.metadata or {}):
            lines[str(sample.id)] = score.metadata[RECORD]
        else:
            message = sample.error.message if sample.error else "the sample has no score"
            lines[str(sample.id)] = {"key": str(sample.id), "status": "failed",
                                     "error": {"kind": INSPECT_FAILURE, "message": message,
                                               "attempts": 1}}
    return lines


class ReplayedLens(Lens):
    """A lens whose items replay records from Inspect logs; every other part is the lens's.

    Its plan is the lens's items that the logs hold (a log of `--limit N` samples is a run of
    those N items)."""

    def __init__(self, lens: Lens, lines: dict[str, dict], logs: list[str]):
        super().__init__(lens.options, lens.prices)
        self.lens, self.lines, self.logs = lens, lines, logs
        self.ledger = lens.ledger
        self.name, self.title, self.record_model = lens.name, lens.title, lens.record_model

    def identity(self) -> RunIdentity:
        identity = self.lens.identity()
        return identity.model_copy(update={"extra": {**identity.extra,
                                                     "inspect_logs": self.logs}})

    async def setup(self, context) -> None:
        await self.lens.setup(context)

    def plan(self) -> list:
        return [item for item in self.lens.plan() if item.key in self.lines]

    async def run_item(self, item):
        line = self.lines[item.key]
        if line["status"] == "ok":
            return self.record_model.from_line(line)
        error = line["error"]
        raise RecordedFailure(error["kind"], error["message"], error.get("attempts", 1),
                              data={k: v for k, v in line.items()
                                    if k not in ("key", "status", "schema", "error")},
                              final=error.get("final", False))

    async def finish(self, records) -> None:
        await self.lens.finish(records)

    def summarise(self, records, tally):
        return self.lens.summarise(records, tally)

    def summary_line(self, metrics) -> str:
        return f"{self.lens.summary_line(metrics)} · imported from Inspect"

    def report_sections(self, report, metrics, records) -> None:
        self.lens.report_sections(report, metrics, records)

    def browser(self, records):
        return self.lens.browser(records)

    async def aclose(self) -> None:
        await self.lens.aclose()


def _read(path: Path) -> EvalLog:
    try:
        return read_eval_log(str(path))
    except FileNotFoundError:
        raise InputError("no such Inspect log", where=str(path)) from None
    except Exception as exc:  # Inspect's reader raises several kinds for a bad file
        raise InputError(f"not an Inspect log ({exc})", where=str(path)) from None


def _lens_of(log: EvalLog, path: Path) -> str:
    name = (log.eval.metadata or {}).get(LENS)
    if name not in task_lenses():
        tasks = ", ".join(f"personalens/{lens}" for lens in task_lenses())
        raise InputError(f"not a log of a personalens task ({tasks})", where=str(path))
    return name


def _args(log: EvalLog) -> dict:
    return log.eval.metadata["task_args"]


def merged(logs: list[dict[str, dict]]) -> dict[str, dict]:
    """Each key's line from several logs' lines: a recorded sample is never replaced by a
    failed one, whatever the order the logs are given in; else the last one wins."""
    lines: dict[str, dict] = {}
    for log in logs:
        for key, line in log.items():
            if key not in lines or not _failed(line) or _failed(lines[key]):
                lines[key] = line
    return lines


def _failed(line: dict) -> bool:
    return line.get("status") != "ok"
