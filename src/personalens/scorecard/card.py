"""scorecard.json: every system's headline figures, copied from its lens runs' metrics.json,
and the paired comparisons between every two systems from `personalens compare`, with p
adjusted across all of the scorecard's pairs (docs/compare-models.md lists the keys)."""

import json
from pathlib import Path

from personalens.compare.engine import compare_runs
from personalens.errors import InputError
from personalens.runs import METRICS
from personalens.scorecard.headlines import METRICS as CARD_METRICS
from personalens.scorecard.headlines import CardMetric
from personalens.scorecard.stages import GROUPS, Plan
from personalens.stats.multiple_testing import Method, adjust


def build_card(plan: Plan, statuses: dict[tuple[str, str], str], *,
               correction: Method = "holm", seed: int = 0) -> dict:
    """`statuses`: (lens, system) -> the run's status (complete, incomplete, failed, ...)."""
    metrics = {(lens, s.name): _metrics(plan.eval_dir(lens, s)) for lens in plan.lenses
               for s in plan.systems}
    chosen = [m for m in CARD_METRICS if m.lens in plan.lenses]
    card = {
        "size": plan.size.name, "judge": plan.judge.spec, "user": plan.judge.spec,
        "generator": plan.judge.spec, "population": str(plan.population_dir),
        "lenses": plan.lenses, "correction": correction, "seed": seed,
        "system_info": {s.name: {"model": s.model, "retriever": s.retriever,
                                 "self_judged": s.model == plan.judge.spec}
                        for s in plan.systems},
        "metrics": {f"{m.lens}.{m.name}": {"label": m.label, "short": m.short,
                                           "group": GROUPS[m.lens],
                                           "higher_is_better": m.higher_is_better,
                                           "judged": bool(m.judged)}
                    for m in chosen},
        "runs": {s.name: {lens: {"dir": _relative(plan, plan.eval_dir(lens, s)),
                                 "report": _relative(plan, plan.eval_dir(lens, s)
                                                     / "report.html"),
                                 "status": statuses.get((lens, s.name), "not run")}
                          for lens in plan.lenses} for s in plan.systems},
        "systems": {s.name: {lens: {m.name: m.cell(metrics[lens, s.name], plan.size, s)
                                    if metrics[lens, s.name] is not None else None
                                    for m in chosen if m.lens == lens}
                             for lens in plan.lenses} for s in plan.systems},
    }
    card["pairs"], card["comparisons"], card["notes"] = _pairs(plan, chosen, metrics, statuses,
                                                               correction, seed)
    return card


# Runs with items to pair (an incomplete one is compared on what it scored, marked).
COMPARED = ("complete", "incomplete")


def _pairs(plan: Plan, chosen: list[CardMetric], metrics: dict,
           statuses: dict[tuple[str, str], str], correction: Method,
           seed: int) -> tuple[dict, dict, list[str]]:
    pairs: dict[str, dict] = {}
    comparisons: dict[str, str] = {}
    notes: list[str] = []
    entries = []  # (pair key, lens, metric, entry): p is adjusted across all of them
    for lens in plan.lenses:
        ran = [s for s in plan.systems if metrics[lens, s.name] is not None
               and statuses.get((lens, s.name)) in COMPARED]
        if len(ran) < 2:
            continue
        out = plan.out / "compare" / lens
        paths = {plan.eval_dir(lens, s): s.name for s in ran}
        try:
            result = compare_runs(list(paths), out, allow_incomplete=True,
                                  correction=correction, seed=seed, names=paths)
        except InputError as exc:
            notes.append(f"{lens}: not compared: {exc}")
            continue
        comparisons[lens] = _relative(plan, out / "report.html")
        by_key = {(p["a"], p["b"], p["headline"]): p for p in result["pairs"]}
        for i, a in enumerate(ran):
            for b in ran[i + 1:]:
                for metric in (m for m in chosen if m.lens == lens):
                    found = by_key.get((a.name, b.name, metric.headline(plan.size)))
                    if found is not None:
                        entries.append((f"{a.name}__vs__{b.name}", lens, metric.name, found))
    adjusted = adjust([e[3]["p"] for e in entries], correction)
    for (key, lens, name, found), p_adj in zip(entries, adjusted, strict=True):
        pairs.setdefault(key, {}).setdefault(lens, {})[name] = {
            "diff": found["diff"], "ci_low": found["ci_low"], "ci_high": found["ci_high"],
            "p": found["p"], "p_adj": p_adj, "n": found["n"], "test": found["test"]}
    return pairs, comparisons, notes


def _metrics(run: Path) -> dict | None:
    try:
        return json.loads((run / METRICS).read_text())
    except (OSError, json.JSONDecodeError):
        return None


def _relative(plan: Plan, path: Path) -> str:
    try:
        return str(path.relative_to(plan.out))
    except ValueError:
        return str(path)
