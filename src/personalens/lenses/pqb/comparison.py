"""`pqb compare`: several pqb eval runs (one retriever each) side by side."""

import json
from pathlib import Path
from typing import Annotated

import typer

from personalens.errors import InputError
from personalens.lenses.pqb.analysis import KS
from personalens.lenses.pqb.metrics import fmt
from personalens.report import HtmlReport, grouped_bars, line_plot
from personalens.runs import METRICS, write_atomic
from personalens.runs.options import user_path


def compare_command(
    runs: Annotated[list[Path], typer.Argument(parser=user_path,
                                               help="pqb eval run directories.")],
    out: Annotated[Path, typer.Option(parser=user_path,
                                      help="Folder for comparison.json and report.html.")],
) -> None:
    """Flip rate vs K per retriever and clean vs typo hits, across pqb eval runs."""
    table = compare_runs(runs, out)
    typer.echo(f"report: {out / 'report.html'}")
    for name, row in table.items():
        typer.echo(f"{name}: flip rate@1 (paper) {fmt(row['flip_rate_paper_1'])}, "
                   f"hit@20 clean {fmt(row['hit_clean_20'])} typo {fmt(row['hit_typo_20'])}"
                   + ("" if row["status"] == "complete" else f" [{row['status']}]"))


def _load(run: Path) -> tuple[dict, dict]:
    try:
        metrics = json.loads((run / METRICS).read_text())
        manifest = json.loads((run / "manifest.json").read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"not a finished pqb eval run ({type(exc).__name__})",
                         where=str(run)) from None
    config = manifest.get("config", {})
    # Runs written before options were declared name their lens, not their command.
    if (config.get("command") != "pqb eval" and config.get("lens") != "pqb") \
            or "flip_rate" not in metrics:
        raise InputError("not a pqb eval run", where=str(run))
    return metrics, manifest


def compare_runs(runs: list[Path], out: Path) -> dict[str, dict]:
    """Writes comparison.json and report.html; returns one summary row per run.

    A run is named by its retriever, plus its folder when two runs share a retriever. An
    incomplete run (failed query records left out of its metrics) is marked, not hidden.
    """
    loaded: dict[str, dict] = {}
    rows: dict[str, dict] = {}
    for run in runs:
        metrics, manifest = _load(run)
        name = metrics["retriever"]
        if name in loaded:
            name = f"{name} ({run})"
        if name in loaded:
            raise InputError("the same run is given twice", where=str(run))
        loaded[name] = metrics
        rows[name] = {"run": str(run), "status": manifest.get("status"),
                      "flip_rate_paper_1": metrics["flip_rate"]["paper"]["1"]["value"],
                      "hit_clean_20": metrics["hit"]["clean"]["20"]["value"],
                      "hit_typo_20": metrics["hit"]["typo"]["20"]["value"]}
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / "comparison.json", json.dumps(
        {"runs": rows, "metrics": loaded}, indent=1))
    write_atomic(out / "report.html", _report(loaded, rows))
    return rows


def _report(loaded: dict[str, dict], rows: dict[str, dict]) -> str:
    report = HtmlReport("personalens · PersonalQuery-Benchmark comparison")
    report.table(["retriever", "run", "status"],
                 [[name, row["run"], row["status"]] for name, row in rows.items()])
    if any(row["status"] != "complete" for row in rows.values()):
        report.paragraph("Runs not marked complete left failed query records out of their "
                         "metrics; rerun them before comparing numbers.")
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
        # Runs of released queries have no random-typo version.
        hits = {name: {kind: m["hit"].get(kind, {}).get(str(k), {}).get("value")
                       for kind in ("clean_on_typo", "typo", "random_typo")}
                for name, m in loaded.items()}
        report.figure(grouped_bars(hits, f"Hit@{k}", f"Clean vs typo queries, Hit@{k}"),
                      f"Hit@{k} for clean, personal-typo and random-typo queries per retriever")
    return report.render()
