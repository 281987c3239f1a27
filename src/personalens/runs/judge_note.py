"""The line a judged run's report shows about its judges' audit, kept beside the run.

`personalens judge-audit` writes JUDGE_AUDIT (where the audit is, its judges, its verdict per
metric) into the audited run and rewrites that line of the run's report.html; the harness reads
it whenever it writes the report again, so a resumed run keeps the line.
"""

import json
import re
from pathlib import Path

from personalens.report.run_page import note_markup
from personalens.runs.atomic import write_atomic
from personalens.runs.run_directory import REPORT

JUDGE_AUDIT = "judge_audit.json"
NOTE_ID = "judge-audit"
_NOTE = re.compile(r'<p id="judge-audit"[^>]*>.*?</p>', re.S)


def judge_note(run: Path) -> str:
    """The report's line about the audit of `run`'s judges (or that there is none yet)."""
    try:
        note = json.loads((run / JUDGE_AUDIT).read_text())
        verdicts = ", ".join(f"{metric} {verdict}" for metric, verdict in note["metrics"].items())
        return (f"Judge audit of {', '.join(note['judges'])}: {note['verdict'].upper()} "
                f"({verdicts}); details in {note['audit']}/report.html.")
    except (OSError, ValueError, KeyError, TypeError):
        return ("Its judged figures have not been audited: personalens judge-audit "
                f"{run} --out DIR measures how far its judge can be trusted.")


def record_audit(run: Path, note: dict) -> None:
    """Write the audit's note into `run` and its line into the run's report.html."""
    write_atomic(run / JUDGE_AUDIT, json.dumps(note, indent=2))  # metrics in the lens's order
    note_html = note_markup(judge_note(run))
    report = run / REPORT
    if report.is_file():
        page = report.read_text(encoding="utf-8")
        page = _NOTE.sub(lambda _: note_html, page, count=1) if _NOTE.search(page) else \
            page.replace("</h1>", "</h1>" + note_html, 1)
        write_atomic(report, page)
