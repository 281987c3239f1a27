"""scorecard.json: every system's headline figures, copied from its lens runs' metrics.json,
and the paired comparisons between every two systems from `personalens compare`, with p
adjusted across all of the scorecard's pairs (docs/compare-models.md lists the keys)."""

from pathlib import Path

from personalens.compare.engine import compare_runs
from personalens.errors import InputError
from personalens.scorecard.headlines import Column, columns, read_metrics
from personalens.scorecard.stages import Plan, Stage, card
from personalens.stats.multiple_testing import Method, adjust


def build_card(plan: Plan, statuses: dict[tuple[str, str], str], *,
               correction: Method = "holm", seed: int = 0) -> dict:
    """`statuses`: (lens, system) -> the run's status (complete, incomplete, failed, ...)."""
    stages, metrics, notes = {}, {}, []
    for lens in plan.lenses:
        for s in plan.systems:
            try:
                stages[lens, s.name] = stage = plan.evaluation(lens, s)
            except InputError:  # its data refused it: not run
                stages[lens, s.name], metrics[lens, s.name] = None, None
                continue
            metrics[lens, s.name], note = read_metrics(stage)
            notes += [note] if note else []
    chosen = columns(plan.lenses)
    result = {
        "size": plan.size.name, "judge": plan.judge.spec, "user": plan.judge.spec,
        "generator": plan.judge.spec, "population": str(plan.population_dir),
        "lenses": plan.lenses, "correction": correction, "seed": seed,
        "system_info": {s.name: {"model": s.model, "retriever": s.retriever,
                                 "self_judged": s.model == plan.judge.spec}
                        for s in plan.systems},
        "metrics": {c.key: {"label": c.metric.label, "short": c.metric.short,
                            "group": card(c.lens).group,
                            "higher_is_better": c.metric.higher_is_better,
                            "judged": bool(c.metric.judged)}
                    for c in chosen},
        "runs": {s.name: {lens: {"dir": _relative(plan, plan.eval_dir(lens, s)),
                                 "report": _relative(plan, plan.eval_dir(lens, s)
                                                     / "report.html"),
                                 "status": statuses.get((lens, s.name), "not run")}
                          for lens in plan.lenses} for s in plan.systems},
        "systems": {s.name: {lens: {c.metric.name: c.cell(metrics[lens, s.name],
                                                          stages[lens, s.name].options)
                                    if metrics[lens, s.name] is not None else None
                                    for c in chosen if c.lens == lens}
                             for lens in plan.lenses} for s in plan.systems},
    }
    result["pairs"], result["comparisons"], pair_notes = _pairs(plan, chosen, stages, metrics,
                                                                statuses, correction, seed)
    result["notes"] = notes + pair_notes
    return result


# Runs with items to pair (an incomplete one is compared on what it scored, marked).
COMPARED = ("complete", "incomplete")


def _pairs(plan: Plan, chosen: list[Column], stages: dict[tuple[str, str], Stage | None],
           metrics: dict, statuses: dict[tuple[str, str], str], correction: Method,
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
                for column in (c for c in chosen if c.lens == lens):
                    headline = column.compared(stages[lens, a.name].options)
                    found = by_key.get((a.name, b.name, headline))
                    if found is not None:
                        entries.append((f"{a.name}__vs__{b.name}", lens, column.metric.name,
                                        found))
    adjusted = adjust([e[3]["p"] for e in entries], correction)
    for (key, lens, name, found), p_adj in zip(entries, adjusted, strict=True):
        pairs.setdefault(key, {}).setdefault(lens, {})[name] = {
            "diff": found["diff"], "ci_low": found["ci_low"], "ci_high": found["ci_high"],
            "p": found["p"], "p_adj": p_adj, "n": found["n"], "test": found["test"]}
    return pairs, comparisons, notes


def _relative(plan: Plan, path: Path) -> str:
    try:
        return str(path.relative_to(plan.out))
    except ValueError:
        return str(path)
