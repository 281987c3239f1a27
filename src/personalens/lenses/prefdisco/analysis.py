"""From item records to metrics: pairing, PrefAlign and accuracy per condition, NormAlign per
task, questions asked, preferences discovered, judge validity and agreement.

Pairing: an instance enters the means only when every condition has a scored record for it
(not failed, not dropped); the others are listed with the reason.
"""

from collections import defaultdict

import numpy as np

from personalens.lenses.prefdisco.evaluation import SINGLE_TURN
from personalens.lenses.prefdisco.records import Correctness, Criterion, PrefdiscoRecord
from personalens.lenses.prefdisco.scoring import normalign, pearson
from personalens.runs import ItemRecords
from personalens.stats.agreement import judge_agreement
from personalens.stats.bootstrap import mean_ci

NORMALIGN_CONDITIONS = ("baseline", "discovery", "oracle")


def summarise(records: ItemRecords[PrefdiscoRecord], *, instances: list[tuple[str, str]],
              conditions: list[str], n_judges: int) -> dict:
    """`instances`: (key, task) of every planned instance, in plan order."""
    ok = list(records.ok())
    by_instance: dict[str, dict[str, PrefdiscoRecord]] = defaultdict(dict)
    for record in ok:
        by_instance[record.instance][record.condition] = record
    paired, unpaired = _pair(instances, conditions, by_instance)
    tasks = dict(instances)
    metrics: dict = {
        "prefalign": {c: _mean([by_instance[k][c].prefalign for k in paired])
                      for c in conditions},
        "accuracy": {c: _accuracy([by_instance[k][c].correctness for k in paired])
                     for c in conditions},
    }
    if set(NORMALIGN_CONDITIONS) <= set(conditions):
        metrics.update(_normalign(paired, tasks, by_instance))
    dialogue = [c for c in conditions if c not in SINGLE_TURN]
    metrics["questions_asked"] = {c: _questions(paired, by_instance, c) for c in dialogue}
    metrics["preferences_discovered"] = {
        c: _mean_or_none([len(by_instance[k][c].revealed) for k in paired]) for c in dialogue}
    metrics["preferences_discovered_share"] = {
        c: _mean_or_none([len(by_instance[k][c].revealed)
                          / max(len(by_instance[k][c].criteria), 1) for k in paired])
        for c in dialogue}
    if "discovery" in conditions and "baseline" in conditions:
        x = [by_instance[k]["discovery"].questions.questions for k in paired]
        y = [by_instance[k]["discovery"].prefalign - by_instance[k]["baseline"].prefalign
             for k in paired]
        metrics["questions_vs_gain"] = pearson(x, y)
    metrics["judge"] = _judge_quality(ok, n_judges)
    metrics["per_task"] = _per_task(paired, tasks, by_instance, conditions)
    metrics.update(n_instances=len(paired), n_planned_instances=len(instances),
                   n_failed=len(records.failures()), unpaired=unpaired,
                   renormalised_weights=sorted({r.instance for r in ok
                                                if _renormalised(r.criteria)}))
    return metrics


def _pair(instances, conditions, by_instance) -> tuple[list[str], list[dict]]:
    paired, unpaired = [], []
    for key, _ in instances:
        reasons = []
        for condition in conditions:
            record = by_instance.get(key, {}).get(condition)
            if record is None:
                reasons.append(f"{condition}: no scored record (failed or not run)")
            elif record.dropped:
                reasons.append(f"{condition}: dropped ({record.dropped})")
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


def _accuracy(graded: list[Correctness]) -> dict:
    # Unparsed answers are wrong and stay in the denominator.
    return {**_mean([float(g.correct) for g in graded]),
            "n_unparsed": sum(g.unparsed for g in graded)}


def _normalign(paired, tasks, by_instance) -> dict:
    def rows(keys):
        return np.array([[by_instance[k][c].prefalign for c in NORMALIGN_CONDITIONS]
                         for k in keys], dtype=float).reshape(-1, 3)

    per_task = {}
    for task in dict.fromkeys(tasks[k] for k in paired):
        per_task[task] = normalign(rows([k for k in paired if tasks[k] == task]))
    defined = [v["value"] for v in per_task.values() if not v["undefined"]]
    return {"normalign": {**per_task, "overall": normalign(rows(paired))},
            "negative_normalign_share": (sum(v < 0 for v in defined) / len(defined)
                                         if defined else None)}


def _questions(paired, by_instance, condition) -> dict:
    asked = [by_instance[k][condition].questions for k in paired]
    return {"turns": _mean_or_none([a.turns for a in asked]),
            "questions": _mean_or_none([a.questions for a in asked])}


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
        units = [[v.score if v.score is not None else np.nan for v in c.verdicts]
                 for r in records for c in r.criteria]
        quality["agreement"] = (judge_agreement(np.array(units, dtype=float).T) if units else
                                {"method": None, "value": None, "n": 0})
    return quality


def _per_task(paired, tasks, by_instance, conditions) -> dict:
    table = {}
    for task in dict.fromkeys(tasks[k] for k in paired):
        keys = [k for k in paired if tasks[k] == task]
        table[task] = {"n": len(keys),
                       "prefalign": {c: float(np.mean([by_instance[k][c].prefalign
                                                       for k in keys])) for c in conditions},
                       "accuracy": {c: float(np.mean([by_instance[k][c].correctness.correct
                                                      for k in keys])) for c in conditions}}
    return table


def _renormalised(criteria: list[Criterion]) -> bool:
    return any(abs(c.weight - c.normalised_weight) > 1e-12 for c in criteria)
