"""`pqb compare`: several pqb eval runs (one retriever each) side by side."""

import json
from pathlib import Path

from personalens.errors import InputError
from personalens.lenses.pqb.analysis import KS
from personalens.report import HtmlReport, grouped_bars, line_plot
from personalens.runs import METRICS, write_atomic


def _load(run: Path) -> tuple[str, dict]:
    try:
        metrics = json.loads((run / METRICS).read_text())
        manifest = json.loads((run / "manifest.json").read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"not a finished pqb eval run ({type(exc).__name__})",
                         where=str(run)) from None
    if manifest.get("config", {}).get("lens") != "pqb":
        raise InputError("not a pqb eval run", where=str(run))
    return metrics["retriever"], metrics


def compare_runs(runs: list[Path], out: Path) -> dict[str, dict]:
    """Writes comparison.json and report.html; returns one summary row per run."""
    loaded: dict[str, dict] = {}
    for run in runs:
        name, metrics = _load(run)
        loaded[name if name not in loaded else f"{name} ({run.name})"] = metrics
    rows = {name: {"run": str(run), "flip_rate_paper_1": m["flip_rate"]["paper"]["1"]["value"],
                   "hit_clean_20": m["hit"]["clean"]["20"]["value"],
                   "hit_typo_20": m["hit"]["typo"]["20"]["value"]}
            for (name, m), run in zip(loaded.items(), runs, strict=True)}
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / "comparison.json", json.dumps(
        {"runs": rows, "metrics": loaded}, indent=1))
    write_atomic(out / "report.html", _report(loaded))
    return rows


def _report(loaded: dict[str, dict]) -> str:
    report = HtmlReport("personalens · PersonalQuery-Benchmark comparison")
    for definition in ("paper", "all_pairs"):
        report.figure(line_plot({name: [(k, m["flip_rate"][definition][str(k)]["value"])
                                        for k in KS] for name, m in loaded.items()},
                                "K", "flip rate", f"Flip rate vs K ({definition})"),
                      f"Flip rate against K per retriever ({definition} definition)")
    report.table(["retriever", *(f"flip@{k} paper" for k in KS),
                  *(f"hit@{k} clean" for k in KS), *(f"hit@{k} typo" for k in KS),
                  "MRR clean", "MRR typo"],
                 [[name, *(m["flip_rate"]["paper"][str(k)]["value"] for k in KS),
                   *(m["hit"]["clean"][str(k)]["value"] for k in KS),
                   *(m["hit"]["typo"][str(k)]["value"] for k in KS),
                   m["mrr"]["clean"]["value"], m["mrr"]["typo"]["value"]]
                  for name, m in loaded.items()])
    for k in (1, 20):
        report.figure(grouped_bars({name: {kind: m["hit"][kind][str(k)]["value"]
                                           for kind in ("clean", "typo", "random_typo")}
                                    for name, m in loaded.items()},
                                   f"Hit@{k}", f"Clean vs typo queries, Hit@{k}"),
                      f"Hit@{k} for clean, personal-typo and random-typo queries per retriever")
    return report.render()
