"""Running the audit and writing what it leaves: audit.json, the note in the audited run, the
label sheet for people."""

import json
from pathlib import Path

import typer

from personalens.judge_audit.audit import JudgeAudit
from personalens.judge_audit.audited_run import open_run
from personalens.judge_audit.label_sheet import LabelRow, write_label_sheet
from personalens.judge_audit.options import AuditOptions
from personalens.runs import run_lens, write_atomic
from personalens.runs.harness import INCOMPLETE
from personalens.runs.judge_note import record_audit

AUDIT = "audit.json"


def run_audit(options: AuditOptions, *, progress: bool = True) -> int:
    """Run (or resume) the audit; write audit.json and the audited run's note; print the
    verdicts. Returns the exit status (0 complete, 3 incomplete)."""
    outcome = run_lens(JudgeAudit(options), options.out, progress=progress)
    metrics = outcome.metrics
    write_atomic(options.out / AUDIT, json.dumps(metrics.to_json(), indent=2, sort_keys=True))
    if outcome.complete:
        note = {"audit": str(options.out), "judges": metrics.judges, "verdict": metrics.verdict,
                "metrics": {name: m.verdict for name, m in metrics.metrics.items()}}
        record_audit(options.run, note)
    for line in metrics.headlines():
        typer.echo(line)
    typer.echo(f"overall: {metrics.verdict}; every figure: {options.out / AUDIT}; report: "
               f"{options.out / 'report.html'}")
    if not outcome.complete:
        typer.echo(f"the audit is incomplete ({outcome.tally.n_failed} verdict(s) failed); "
                   "rerun the same command to retry them", err=True)
        # Returned, not raised: a library caller (the scorecard) goes on with the figures so
        # far; the CLI turns it into the exit status.
        return INCOMPLETE
    return 0


def export_labels(run: Path, out: Path, sample: int | None, seed: int) -> Path:
    """Write the label sheet of the run's sampled verdicts (the audit's sample for the same
    --sample and --seed) and its form; returns the form's path."""
    audited = open_run(run, sample, seed)
    rows = [LabelRow(unit=v.key, lens=audited.lens, metric=v.metric, criterion=v.criterion,
                     description=v.description, levels=v.levels, material=v.material,
                     answer=v.response) for v in audited.sample]
    out.parent.mkdir(parents=True, exist_ok=True)
    return write_label_sheet(rows, out)
