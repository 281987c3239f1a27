"""report.html for a generation run: what was made, how it was checked, what it cost."""

from personalens.report import HtmlReport


def build_report(summary: dict, manifest: dict) -> str:
    report = HtmlReport("personalens · generated population")
    config = manifest["config"]
    report.paragraph(f"Model: {config['model']} · seed {config['seed']} · "
                     f"{config['communities']} community(ies) of {config['people']} people · "
                     f"noise levels {', '.join(config['noises'])} · typo habits "
                     f"{'on' if config.get('typo_habits', True) else 'off'} · data in "
                     f"{summary['data']}")
    report.heading("Communities")
    rows = []
    for name, stats in summary["communities"].items():
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
                  for name, stats in summary["communities"].items() if "levels" in stats
                  for noise, level in stats["levels"].items()])
    fixes = [(name, fix) for name, stats in summary["communities"].items()
             for fix in stats.get("fixes", [])]
    report.heading("Fixes applied in code", level=3)
    report.table(["community", "fix"], fixes) if fixes else report.paragraph("None.")
    report.heading("Usage")
    report.table(["role", "requests", "cached", "prompt tokens", "completion tokens"],
                 [[role, u["requests"], u["cached_requests"], u["prompt_tokens"],
                   u["completion_tokens"]] for role, u in manifest.get("usage", {}).items()])
    report.paragraph(f"Estimated cost: ${manifest.get('estimated_cost_usd', 0.0):.4f} "
                     "(from --price-per-mtok-in/out).")
    if summary["failures"]:
        report.heading("Failures")
        report.table(["step", "kind", "message"],
                     [[f["key"], f["error"]["kind"], f["error"]["message"][:300]]
                      for f in summary["failures"]])
    return report.render()
