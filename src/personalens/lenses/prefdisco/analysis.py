"""From item records to metrics: pairing, PrefAlign and accuracy per condition, NormAlign per
task, questions asked, preferences discovered, judge validity and agreement.

Pairing: an instance enters the means only when every condition has a scored record for it
(not failed, not dropped); the others are listed with the reason.
"""

from collections import defaultdict

import numpy as np

from personalens.lenses.prefdisco.evaluation import SINGLE_TURN
from personalens.lenses.prefdisco.records import PrefdiscoRecord
from personalens.lenses.prefdisco.scoring import MIN_GAP, normalign, pearson
from personalens.runs import ItemRecords
from personalens.stats.agreement import judge_agreement
from personalens.stats.bootstrap import mean_ci

NORMALIGN_CONDITIONS = ("baseline", "discovery", "oracle")


def summarise(records: ItemRecords[PrefdiscoRecord], *, instances: list[tuple[str, str]],
              conditions: list[str], n_judges: int, min_gap: float = MIN_GAP) -> dict:
    """`instances`: (key, task) of every planned instance, in plan order."""
    ok = list(records.ok())
    by_instance: dict[str, dict[str, PrefdiscoRecord]] = defaultdict(dict)
    for record in ok:
        by_instance[record.instance][record.condition] = record
    paired, unpaired = _pair(instances, conditions, by_instance)
    tasks, by_task = dict(instances), defaultdict(list)  # task: paired instances, plan order
    for key in paired:
        by_task[tasks[key]].append(key)
    scored = {c: [by_instance[k][c] for k in paired] for c in conditions}  # paired records
    metrics: dict = {
        "prefalign": {c: _mean([r.prefalign for r in scored[c]]) for c in conditions},
        # Unparsed answers are wrong and stay in the denominator.
        "accuracy": {c: {**_mean([float(r.correctness.correct) for r in scored[c]]),
                         "n_unparsed": sum(r.correctness.unparsed for r in scored[c])}
                     for c in conditions},
    }
    if set(NORMALIGN_CONDITIONS) <= set(conditions):
        metrics.update(_normalign(paired, by_task, by_instance, min_gap))
    dialogue = [c for c in conditions if c not in SINGLE_TURN]
    metrics["questions_asked"] = {
        c: {"turns": _mean_or_none([r.questions.turns for r in scored[c]]),
            "questions": _mean_or_none([r.questions.questions for r in scored[c]])}
        for c in dialogue}
    metrics["preferences_discovered"] = {
        c: _mean_or_none([len(r.revealed) for r in scored[c]]) for c in dialogue}
    metrics["preferences_discovered_share"] = {
        c: _mean_or_none([len(r.revealed) / max(len(r.criteria), 1) for r in scored[c]])
        for c in dialogue}
    if "discovery" in conditions and "baseline" in conditions:
        pairs = list(zip(scored["discovery"], scored["baseline"], strict=True))
        metrics["questions_vs_gain"] = pearson([d.questions.questions for d, _ in pairs],
                                               [d.prefalign - b.prefalign for d, b in pairs])
    metrics["judge"] = _judge_quality(ok, n_judges)
    metrics["per_task"] = _per_task(by_task, by_instance, conditions)
    metrics.update(n_instances=len(paired), n_planned_instances=len(instances),
                   n_failed=len(records.failures()), unpaired=unpaired,
                   renormalised_weights=sorted({
                       r.instance for r in ok
                       if any(abs(c.weight - c.normalised_weight) > 1e-12 for c in r.criteria)}))
    return metrics


def _pair(instances, conditions, by_instance) -> tuple[list[str], list[dict]]:
    paired, unpaired = [], []
    for key, _ in instances:
        scored = by_instance.get(key, {})
        reasons = [f"{c}: dropped ({scored[c].dropped})" if c in scored
                   else f"{c}: no scored record (failed or not run)"
                   for c in conditions if c not in scored or scored[c].dropped]
        if reasons:
            unpaired.append({"instance": key, "reasons": reasons})
        else:
            paired.append(key)
    return paired, unpaired


def _mean(values: list[float]) -> dict:
    low, high = mean_ci(np.asarray(values, dtype=float))
    return {"mean": float(np.mean(values)) if values else None, "ci_low": low, "ci_high": high,
            "n": len(values)}


def _mean_or_none(values: list[float]) -> float | None:
    return float(np.mean(values)) if values else None


def _normalign(paired, by_task, by_instance, min_gap: float) -> dict:
    def rows(keys):
        return [[by_instance[k][c].prefalign for c in NORMALIGN_CONDITIONS] for k in keys]

    per_task = {task: normalign(rows(keys), min_gap=min_gap) for task, keys in by_task.items()}
    # Below the baseline the oracle turns NormAlign's sign around: such a task says nothing
    # about whether discovery did worse than the baseline, so the share leaves it out.
    counted = [v["value"] for v in per_task.values()
               if not v["undefined"] and not v["oracle_below_baseline"]]
    return {"normalign": {**per_task, "overall": normalign(rows(paired), min_gap=min_gap)},
            "negative_normalign_share": (sum(v < 0 for v in counted) / len(counted)
                                         if counted else None),
            "negative_normalign_tasks": len(counted)}


def _judge_quality(records: list[PrefdiscoRecord], n_judges: int) -> dict:
    replies = invalid = excluded = 0
    for record in records:
        for criterion in record.criteria:
            excluded += criterion.score is None
            for verdict in criterion.verdicts:
                replies += verdict.attempts
                invalid += verdict.attempts - (verdict.score is not None and
                                               verdict.problem is None)
        if record.dropped:
            replies += 1
            invalid += 1
    quality = {"invalid_rate": invalid / replies if replies else None,
               "excluded_criteria": excluded, "replies": replies}
    if n_judges > 1:
        units = [[v.score for v in c.verdicts] for r in records for c in r.criteria]  # None: NaN
        quality["agreement"] = (judge_agreement(np.array(units, dtype=float).T) if units else
                                {"method": None, "value": None, "n": 0})
    return quality


def _per_task(by_task, by_instance, conditions) -> dict:
    return {task: {"n": len(keys),
                   "prefalign": {c: float(np.mean([by_instance[k][c].prefalign for k in keys]))
                                 for c in conditions},
                   "accuracy": {c: float(np.mean([by_instance[k][c].correctness.correct
                                                  for k in keys])) for c in conditions}}
            for task, keys in by_task.items()}
