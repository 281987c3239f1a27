"""`scorecard --audit-judges`: the judge audit of every judged lens run of the card, and what
the card shows of it: each judged cell's judge verdict, and which paired differences are
smaller than the judge's own instability can produce (docs/judges.md).

The card's judge is one fixed model, so each (lens, system) run is audited with it on a
sample of that run's verdicts; a metric's verdict is the worst over the systems.
"""

import json
from pathlib import Path

from personalens.errors import InputError
from personalens.judge_audit.options import AuditOptions
from personalens.judge_audit.outputs import AUDIT, run_audit
from personalens.scorecard.headlines import Column, columns
from personalens.scorecard.stages import Plan

SAMPLE = {"tiny": 20, "small": 60, "standard": 200}  # verdicts per judged metric and run
_ORDER = ("undefined", "reliable", "doubtful", "unreliable")


def audit_dir(plan: Plan, lens: str, system: str) -> Path:
    return plan.out / "judge-audit" / lens / system


def run_audits(plan: Plan, statuses: dict[tuple[str, str], str], echo) -> dict[str, dict]:
    """Audit every complete judged run of the card; (lens, system) -> its audit.json, or a
    note of why it has none."""
    from personalens.lenses.commands import judged_commands

    judged = {name.split(" ")[0] for name in judged_commands()}
    found: dict[str, dict] = {}
    for lens in (lens for lens in plan.lenses if lens in judged):
        for system in plan.systems:
            key = f"{lens}/{system.name}"
            if statuses.get((lens, system.name)) != "complete":
                found[key] = {"note": "its run is not complete: not audited"}
                continue
            out = audit_dir(plan, lens, system.name)
            echo(f"scorecard: judge audit of {lens} · {system.name} -> {out}")
            options = AuditOptions.parse(run=plan.eval_dir(lens, system), out=out,
                                         sample=SAMPLE[plan.size.name], repeats=1,
                                         judges=[plan.judge.spec],
                                         models={"judge": plan.judge})
            try:
                # An incomplete audit (exit status 3) still counts with its figures so far.
                run_audit(options, progress=False)
            except InputError as exc:
                found[key] = {"note": f"not audited: {exc}"}
                continue
            found[key] = _read(out)
    return found


def _read(out: Path) -> dict:
    try:
        return json.loads((out / AUDIT).read_text())
    except (OSError, ValueError):
        return {"note": "the audit wrote no figures"}


def card_section(plan: Plan, audits: dict[str, dict]) -> dict[str, dict]:
    """scorecard.json's `judge_audit.<lens>.<metric>`: per card metric that a judge scores,
    its verdict (the worst over systems) and each system's verdict, instability (on the
    card metric's scale) and audit."""
    section: dict[str, dict] = {}
    for column in (c for c in columns(plan.lenses) if c.metric.judged):
        by_system = {s.name: _system_entry(plan, column, s.name, audits.get(
            f"{column.lens}/{s.name}", {})) for s in plan.systems}
        verdicts = [e["verdict"] for e in by_system.values() if e.get("verdict")]
        section.setdefault(column.lens, {})[column.metric.name] = {
            "audited": list(column.metric.judged),
            "verdict": max(verdicts, key=_ORDER.index) if verdicts else None,
            "systems": by_system}
    return section


def _system_entry(plan: Plan, column: Column, system: str, audit: dict) -> dict:
    metric = column.metric
    if "metrics" not in audit:
        return {"verdict": None, "note": audit.get("note", "not audited")}
    parts = [audit["metrics"][m] for m in metric.judged if m in audit["metrics"]]
    if not parts:
        return {"verdict": None, "note": "the run holds none of its verdicts"}
    shifts = [max((f["instability"].get("max") or 0.0) for f in p["judges"].values())
              for p in parts]
    return {"verdict": max((p["verdict"] for p in parts), key=_ORDER.index),
            "instability": None if metric.noise_scale is None
            else max(shifts) * metric.noise_scale,
            "audit": str(audit_dir(plan, column.lens, system).relative_to(plan.out)
                         / "report.html")}


def mark_pairs(card: dict) -> None:
    """Each pair of a judged metric gains `within_judge_noise`: its difference is no larger
    than the judge's instability on either system (None when not measured)."""
    section = card.get("judge_audit", {})
    for key, by_lens in card["pairs"].items():
        a, b = key.split("__vs__")
        for lens, by_metric in by_lens.items():
            for name, entry in by_metric.items():
                systems = section.get(lens, {}).get(name, {}).get("systems", {})
                noise = [systems.get(s, {}).get("instability") for s in (a, b)]
                noise = [n for n in noise if n is not None]
                entry["within_judge_noise"] = (abs(entry["diff"]) <= max(noise)
                                               if noise and entry["diff"] is not None
                                               else None)
