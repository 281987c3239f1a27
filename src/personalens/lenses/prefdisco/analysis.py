"""From item records to metrics: pairing, PrefAlign and accuracy per condition, truncated
answers, NormAlign per task (for discovery and each fixed_<N>), questions asked against the
PrefAlign gain, preferences discovered, judge validity and agreement.

Pairing: an instance enters the main means only when every condition of `--conditions` has a
scored record for it (not failed, not dropped); the others are listed with the reason. A
`fixed_<N>` condition is paired on its own, with baseline and oracle (those that ran), so adding
`--fixed-questions` never changes the main numbers. A truncated answer (cut off at the token
limit) is counted apart and, with `truncated="exclude"`, left out of accuracy (not of PrefAlign).
Accuracy is the run's correctness method's; where records also hold the rules' verdict (a
judged run whose answers carry an ANSWER: line), `accuracy_rules` is the rules' accuracy.
"""

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from personalens.lenses.prefdisco.evaluation import SINGLE_TURN, fixed_questions
from personalens.lenses.prefdisco.metrics import Accuracy, NormAlign
from personalens.lenses.prefdisco.records import Correctness, PrefdiscoRecord
from personalens.lenses.prefdisco.scoring import MIN_GAP, linear_fit, normalign
from personalens.runs import ItemRecords
from personalens.stats.agreement import judge_agreement
from personalens.stats.estimate import MeanEstimate

NORMALIGN_CONDITIONS = ("baseline", "discovery", "oracle")


@dataclass
class Pairing:
    """Which instances each condition is scored on: the main conditions share one pairing
    (`paired`); each fixed_<N> has its own, with baseline and oracle (those that ran)."""

    by_instance: dict[str, dict[str, PrefdiscoRecord]]  # instance -> condition -> record
    main: list[str]  # the conditions that are not fixed_<N>
    paired: list[str]  # instances scored in every main condition, plan order
    unpaired: list[dict]
    fixed: dict[str, tuple[list[str], list[dict]]]  # fixed_<N> -> (paired, unpaired)

    def instances(self, condition: str) -> list[str]:
        """The instances `condition` is scored on."""
        return self.paired if condition in self.main else self.fixed[condition][0]

    def records(self, condition: str) -> list[PrefdiscoRecord]:
        return [self.by_instance[k][condition] for k in self.instances(condition)]


def pairing(ok: list[PrefdiscoRecord], instances: list[tuple[str, str]],
            conditions: list[str]) -> Pairing:
    """`ok`: the scored records; `instances`: (key, task) of every planned instance."""
    by_instance: dict[str, dict[str, PrefdiscoRecord]] = defaultdict(dict)
    for record in ok:
        by_instance[record.instance][record.condition] = record
    main = [c for c in conditions if fixed_questions(c) is None]
    anchors = [c for c in ("baseline", "oracle") if c in main]
    paired, unpaired = _pair(instances, main, by_instance)
    fixed = {f: _pair(instances, [*anchors, f], by_instance)
             for f in conditions if f not in main}
    return Pairing(by_instance, main, paired, unpaired, fixed)


def summarise(records: ItemRecords[PrefdiscoRecord], *, instances: list[tuple[str, str]],
              conditions: list[str], n_judges: int, min_gap: float = MIN_GAP,
              truncated: str = "exclude") -> dict:
    """`instances`: (key, task) of every planned instance, in plan order; `truncated`:
    "exclude" (truncated answers out of accuracy) or "score"."""
    return summarise_scored(list(records.ok()), n_failed=len(records.failures()),
                            instances=instances, conditions=conditions, n_judges=n_judges,
                            min_gap=min_gap, truncated=truncated)


def summarise_scored(ok: list[PrefdiscoRecord], *, n_failed: int,
                     instances: list[tuple[str, str]], conditions: list[str], n_judges: int,
                     min_gap: float = MIN_GAP, truncated: str = "exclude") -> dict:
    """`summarise` of the scored records (`personalens compare` reads them from a run)."""
    pairs = pairing(ok, instances, conditions)
    by_instance, main, paired, unpaired, fixed = (pairs.by_instance, pairs.main, pairs.paired,
                                                  pairs.unpaired, pairs.fixed)
    tasks = dict(instances)
    scored = {c: pairs.records(c) for c in conditions}  # paired records
    metrics: dict = {
        "prefalign": {c: MeanEstimate.of_mean([r.prefalign for r in scored[c]])
                      for c in conditions},
        "accuracy": {c: _accuracy(scored[c], truncated) for c in conditions},
        "truncated": {c: _truncated(scored[c]) for c in conditions},
    }
    both = any(r.correctness_rules is not None for c in conditions for r in scored[c])
    metrics["accuracy_rules"] = ({c: _accuracy(scored[c], truncated, _rules)
                                  for c in conditions} if both else {})
    if {"baseline", "discovery"} <= set(main):
        metrics["accuracy_drop"] = MeanEstimate.of_mean(list(accuracy_drops(
            scored["baseline"], scored["discovery"], truncated).values()))
    if set(NORMALIGN_CONDITIONS) <= set(main):
        metrics.update(_normalign(paired, _by_task(paired, tasks), by_instance, min_gap))
    if {"baseline", "oracle"} <= set(main) and fixed:
        metrics["normalign_fixed"] = {
            f: _normalign_rows(keys, _by_task(keys, tasks), by_instance, f, min_gap)
            for f, (keys, _) in fixed.items()}
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
    if "discovery" in main and "baseline" in main:
        metrics["question_turns_vs_gain"] = linear_fit(*question_turns_and_gains(
            scored["discovery"], scored["baseline"]))
    metrics["judge"] = _judge_quality(ok, n_judges)
    metrics["per_task"] = _per_task(_by_task(paired, tasks), by_instance, main, truncated)
    metrics.update(n_instances=len(paired), n_planned_instances=len(instances),
                   n_failed=n_failed, unpaired=unpaired,
                   unpaired_fixed={f: missing for f, (_, missing) in fixed.items()},
                   renormalised_weights=sorted({
                       r.instance for r in ok
                       if any(abs(c.weight - c.normalised_weight) > 1e-12 for c in r.criteria)}))
    return metrics


def question_turns_and_gains(discovery: list[PrefdiscoRecord],
                             baseline: list[PrefdiscoRecord]) -> tuple[list[int], list[float]]:
    """Per paired instance: the target's question turns in discovery (its ask actions, not
    question marks) and its PrefAlign gain over baseline."""
    pairs = list(zip(discovery, baseline, strict=True))
    return ([d.questions.turns for d, _ in pairs], [d.prefalign - b.prefalign for d, b in pairs])


def _by_task(keys: list[str], tasks: dict[str, str]) -> dict[str, list[str]]:
    by_task: dict[str, list[str]] = defaultdict(list)  # task: paired instances, plan order
    for key in keys:
        by_task[tasks[key]].append(key)
    return by_task


def counts_for_accuracy(record: PrefdiscoRecord, truncated: str) -> bool:
    """Unparsed answers are wrong and stay in the denominator; truncated ones leave it unless
    `truncated` is "score"."""
    return truncated == "score" or not record.truncated


def accuracy_drops(baseline: list[PrefdiscoRecord], discovery: list[PrefdiscoRecord],
                   truncated: str) -> dict[str, float]:
    """Instance -> baseline correct minus discovery correct (1, 0 or -1), over the paired
    instances whose two answers both count for accuracy: the paper's accuracy cost of
    discovering preferences, paired so one mean and one CI describe it."""
    answered = {r.instance: r for r in discovery if counts_for_accuracy(r, truncated)}
    return {b.instance: float(b.correctness.correct)
            - float(answered[b.instance].correctness.correct)
            for b in baseline if counts_for_accuracy(b, truncated) and b.instance in answered}


def _chosen(record: PrefdiscoRecord) -> Correctness | None:
    return record.correctness


def _rules(record: PrefdiscoRecord) -> Correctness | None:
    return record.correctness_rules


def _accuracy(records: list[PrefdiscoRecord], truncated: str,
              verdict: Callable[[PrefdiscoRecord], Correctness | None] = _chosen) -> Accuracy:
    """The share correct of the answers that count for accuracy and have a `verdict`."""
    graded = [g for g in (verdict(r) for r in records if counts_for_accuracy(r, truncated))
              if g is not None]
    return Accuracy.of_mean([float(g.correct) for g in graded],
                            n_unparsed=sum(g.unparsed for g in graded))


def _truncated(records: list[PrefdiscoRecord]) -> dict:
    count = sum(r.truncated for r in records)
    return {"count": count, "share": count / len(records) if records else None,
            "n": len(records)}


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


def _mean_or_none(values: list[float]) -> float | None:
    return float(np.mean(values)) if values else None


def _normalign(paired, by_task, by_instance, min_gap: float) -> dict:
    per_condition = _normalign_rows(paired, by_task, by_instance, "discovery", min_gap)
    defined = [v for task, v in per_condition.items() if task != "overall" and not v.undefined]
    # Below the baseline the oracle turns NormAlign's sign around: such a task says nothing
    # about whether discovery did worse than the baseline, so the first share leaves it out;
    # the paper's share (61 of 210) is over every task with a defined NormAlign.
    return {"normalign": per_condition,
            **_negative_share("", [v for v in defined if not v.oracle_below_baseline]),
            **_negative_share("_all", defined)}


def _negative_share(suffix: str, cells: list[NormAlign]) -> dict:
    """negative_normalign_share<suffix>: the share of `cells` below 0; ..._tasks<suffix>: how
    many cells."""
    negative = sum(cell.value < 0 for cell in cells)
    return {f"negative_normalign_share{suffix}": negative / len(cells) if cells else None,
            f"negative_normalign_tasks{suffix}": len(cells)}


def _normalign_rows(paired, by_task, by_instance, condition: str,
                    min_gap: float) -> dict[str, NormAlign]:
    """NormAlign of `condition` (discovery or a fixed_<N>) per task and overall."""
    def rows(keys):
        return [[by_instance[k][c].prefalign for c in ("baseline", condition, "oracle")]
                for k in keys]

    return {**{task: normalign(rows(keys), min_gap=min_gap) for task, keys in by_task.items()},
            "overall": normalign(rows(paired), min_gap=min_gap)}


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


def _per_task(by_task, by_instance, conditions, truncated: str) -> dict:
    return {task: {"n": len(keys),
                   "prefalign": {c: float(np.mean([by_instance[k][c].prefalign for k in keys]))
                                 for c in conditions},
                   "accuracy": {c: _accuracy([by_instance[k][c] for k in keys], truncated).value
                                for c in conditions}}
            for task, keys in by_task.items()}
