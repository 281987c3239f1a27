"""The run under audit: checked (a finished run of a judged command), opened through its lens's
`JudgedRun`, and its verdicts sampled, each with the off-topic answer its probe borrows."""

import hashlib
import random
from dataclasses import dataclass
from pathlib import Path

from personalens.errors import InputError
from personalens.judge_audit.options import SAMPLE_CAP
from personalens.lenses.commands import judged_commands, resolve
from personalens.lenses.judged import JudgedRun, JudgedVerdict
from personalens.runs import RECORDS
from personalens.runs.run_directory import read_run_manifest, run_command


@dataclass
class AuditedRun:
    path: Path
    command: str
    judged: JudgedRun
    verdicts: list[JudgedVerdict]  # every verdict of the run, by key
    sample: list[JudgedVerdict]  # the audited ones, by key
    donors: dict[str, str]  # sampled verdict key -> the off-topic answer its probe uses

    @property
    def lens(self) -> str:
        return self.command.split(" ")[0]

    def records_hash(self) -> str:
        """The audited records' hash: an audit resumes only onto the records it began on."""
        return hashlib.sha256((self.path / RECORDS).read_bytes()).hexdigest()


def open_run(path: Path, sample: int | None, seed: int) -> AuditedRun:
    """The run at `path`, checked and sampled; InputError (one line) when it cannot be audited."""
    manifest = read_run_manifest(path)
    command = run_command(manifest)
    judged = judged_commands()
    if command not in judged:
        raise InputError(f"a {command!r} run has no judged figures; judge-audit reads "
                         f"{', '.join(judged)} runs", where=str(path))
    status = manifest.get("status")
    if status != "complete":
        raise InputError(f"the run is not finished (status {status!r}); finish it (rerun its "
                         "command) before auditing its judge", where=str(path))
    run: JudgedRun = resolve(judged[command].judged)(path, manifest)
    # By key, not as records.jsonl has them (items finish in any order): the same run and
    # seed always audit the same verdicts.
    verdicts = sorted(run.verdicts(), key=lambda v: v.key)
    if not verdicts:
        raise InputError("the run holds no judged verdict to audit", where=str(path))
    chosen = sampled(verdicts, sample, seed)
    return AuditedRun(path, command, run, verdicts, chosen, donors(chosen, verdicts, seed))


def sampled(verdicts: list[JudgedVerdict], size: int | None,
            seed: int) -> list[JudgedVerdict]:
    """Up to `size` verdicts per metric (default all, at most SAMPLE_CAP), drawn with `seed`,
    kept in the order given."""
    size = size or SAMPLE_CAP
    rng = random.Random(seed)
    keep: set[str] = set()
    for metric in dict.fromkeys(v.metric for v in verdicts):
        keys = [v.key for v in verdicts if v.metric == metric]
        keep.update(keys if len(keys) <= size else rng.sample(keys, size))
    return [v for v in verdicts if v.key in keep]


def donors(sample: list[JudgedVerdict], verdicts: list[JudgedVerdict],
           seed: int) -> dict[str, str]:
    """Each sampled verdict's off-topic answer: a non-empty answer of the same metric to
    another item with another question, chosen by (seed, key); none when the run has none."""
    out = {}
    for verdict in sample:
        pool = sorted({v.response for v in verdicts if v.metric == verdict.metric
                       and v.item != verdict.item and v.question != verdict.question
                       and v.response.strip()})
        if pool:
            out[verdict.key] = random.Random(f"{seed}/{verdict.key}").choice(pool)
    return out
