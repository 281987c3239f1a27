"""Headless Chromium (Debian's package) opens reports holding hostile text: nothing runs."""

import shutil
import subprocess

import pytest

from personalens.report import HtmlReport

CHROMIUM = shutil.which("chromium")
# The marker is assembled at run time, so it appears in the DOM only if a payload executed.
PAYLOADS = ["<script>document.body.setAttribute('data-x','EXEC'+'UTED')</script>",
            "<img src=x onerror=\"document.body.setAttribute('data-x','EXEC'+'UTED')\">",
            "<svg onload=\"document.body.setAttribute('data-x','EXEC'+'UTED')\"></svg>"]


def _dom(path) -> str:
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={path.parent / 'profile'}",
         "--virtual-time-budget=2000", "--dump-dom", path.as_uri()],
        capture_output=True, text=True, timeout=120).stdout


@pytest.mark.chromium
@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (installed by .ci/run)")
def test_payloads_in_a_report_do_not_execute(tmp_path):
    control = tmp_path / "control.html"
    control.write_text("<html><body>" + "".join(PAYLOADS) + "</body></html>")
    assert 'data-x="EXECUTED"' in _dom(control)  # the harness does detect execution

    report = HtmlReport("answers " + PAYLOADS[0])
    report.paragraph(PAYLOADS[1])
    report.table(["prediction"], [[p] for p in PAYLOADS])
    page = tmp_path / "report.html"
    page.write_text(report.render())
    dom = _dom(page)
    assert "answers" in dom and "EXECUTED" not in dom
