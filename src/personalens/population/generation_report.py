"""The generation sections of report.html: what was made and how it was checked."""

from personalens.report import HtmlReport


def report_sections(report: HtmlReport, communities: dict[str, dict]) -> None:
    report.heading("Communities")
    rows = []
    for name, stats in communities.items():
        if "failed" in stats:
            rows.append([name, "failed: " + stats["failed"], None, None, None, None, None,
                         None])
            continue
        rows.append([name, stats["people"], stats["questions"], stats["personal_sessions"],
                     stats["revealed_by_model"], stats["revealed_by_fallback"],
                     stats["noise_replaced_for_leaks"], stats["written_by_code"]])
    report.table(["community", "people", "questions", "personal sessions",
                  "revealed by the model", "revealed by fallback line",
                  "noise sessions replaced (leaks)", "sessions written by code (model failed)"],
                 rows)
    report.heading("Sessions per noise level", level=3)
    report.table(["community", "noise", "sessions", "utterances"],
                 [[name, noise, level["sessions"], level["utterances"]]
                  for name, stats in communities.items() if "levels" in stats
                  for noise, level in stats["levels"].items()])
    fixes = [(name, fix) for name, stats in communities.items()
             for fix in stats.get("fixes", [])]
    report.heading("Fixes applied in code", level=3)
    report.table(["community", "fix"], fixes) if fixes else report.paragraph("None.")
