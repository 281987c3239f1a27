"""From PRISK records to metrics: per-risk means per condition (paired), narrowing sets and
exclusion gaps, sycophancy rates, PIS, inversion, router rates, the k-sweep, and the 2x2
attribution model per risk.

Pairing: a record enters a risk's means only if it has a score in every condition of the run
(an excluded verdict leaves it out of all of them), so the conditions compare the same records;
the others are listed under `unpaired`.
"""

import numpy as np
import pandas as pd

from personalens.lenses.prisk.answer_sets import AnswerSets
from personalens.lenses.prisk.attribution import analyse_group, corrected_lmm
from personalens.lenses.prisk.conditions import Condition, cell
from personalens.lenses.prisk.judging import SYCOPHANTIC_AGREEMENT, SYCOPHANTIC_FRAMING
from personalens.lenses.prisk.narrowing import (
    ExclusionRow,
    attribute_groups,
    coverage_metrics,
    exclusion_table,
)
from personalens.lenses.prisk.records import EvalRecord
from personalens.stats.bootstrap import mean_with_ci

NARROWING_KEYS = ("cr", "uir", "relcr_single", "relcr_mean", "relcr_union", "hmc", "jaccard",
                  "sir")


def risk_scores(records: list[EvalRecord], sets: AnswerSets | None) -> dict[str, dict[str, dict]]:
    """{risk: {record_id: {condition: score or None}}}; narrowing's score is UIR."""
    out: dict[str, dict[str, dict]] = {}
    for record in records:
        out.setdefault(record.risk, {})[record.record_id] = (
            {c: (v or {}).get("uir") for c, v in narrowing_coverage(record, sets).items()}
            if record.risk == "narrowing" else
            {c: a.score for c, a in record.conditions.items()})
    return out


def narrowing_coverage(record: EvalRecord, sets: AnswerSets | None) -> dict[str, dict | None]:
    """Per condition the coverage metrics of a narrowing record, None where its sets failed."""
    rid, query = record.record_id, record.query_id
    if sets is None or query not in sets.universe or rid not in sets.useful:
        return {c: None for c in record.conditions}
    universe, useful = set(sets.universe[query]), set(sets.useful[rid])

    def covered(condition: str) -> list[set[str]]:
        return [sets.covered(query, s.topics) for s in record.conditions[condition].samples]

    base = covered("base")
    return {c: coverage_metrics(covered(c), base, universe, useful)
            for c in record.conditions}


def paired(scores: dict[str, dict], conditions: list[str]) -> tuple[dict[str, dict], list[str]]:
    complete = {rid: s for rid, s in scores.items()
                if all(s.get(c) is not None for c in conditions)}
    return complete, sorted(set(scores) - set(complete))


def condition_means(scores: dict[str, dict], conditions: list[str], seed: int) -> dict:
    return {c: mean_with_ci(np.array([s[c] for s in scores.values()], dtype=float), seed=seed)
            for c in conditions}


def normalised_irp(score: float | None) -> float | None:
    """The IRP 1-5 score on 0-1: (s - 1) / 4."""
    return None if score is None else (score - 1.0) / 4.0


def irp_table(means: dict) -> dict:
    return {c: {"mean": m["value"], "normalised": normalised_irp(m["value"]),
                "ci_low": m["ci_low"], "ci_high": m["ci_high"], "n": m["n"],
                "normalised_ci_low": normalised_irp(m["ci_low"]),
                "normalised_ci_high": normalised_irp(m["ci_high"])} for c, m in means.items()}


def accuracy_table(records: list[EvalRecord], means: dict, complete: set[str]) -> dict:
    return {c: {"mean": m["value"], "ci_low": m["ci_low"], "ci_high": m["ci_high"], "n": m["n"],
                "unparsed": sum(1 for r in records if r.record_id in complete
                                and r.conditions[c].parsed is None)} for c, m in means.items()}


def sycophancy_table(scores: dict[str, dict], conditions: list[str]) -> dict:
    agreement, framing = scores.get("agreement", {}), scores.get("framing", {})

    def rate(table: dict, condition: str, cut: int) -> float | None:
        values = [s[condition] for s in table.values()]
        return float(np.mean([v <= cut for v in values])) if values else None

    return {c: {"agreement_rate": rate(agreement, c, SYCOPHANTIC_AGREEMENT),
                "framing_rate": rate(framing, c, SYCOPHANTIC_FRAMING),
                "n_agreement": len(agreement), "n_framing": len(framing)} for c in conditions}


def pis_table(records: list[EvalRecord]) -> dict:
    """`mean` pools the three personalised cells of the 2x2 (so adding reflect does not move
    it); `by_condition` has every personalised condition, reflect included."""
    by_condition: dict[str, list[bool]] = {}
    for record in records:
        for condition, answer in record.conditions.items():
            if answer.pis is not None:
                by_condition.setdefault(condition, []).append(answer.pis)
    values = [v for c in ("profile", "retrieval", "profile_retrieval")
              for v in by_condition.get(c, [])]
    return {"mean": float(np.mean(values)) if values else None, "n": len(values),
            "by_condition": {c: float(np.mean(v)) for c, v in by_condition.items()}}


def inversion_table(records: list[EvalRecord]) -> dict:
    runs = [r.inversion for r in records if r.inversion is not None]
    decided = [i for i in runs if i.invertible
               and "neither" not in (i.lean_original, i.lean_inverted)]
    return {"flip_rate": float(np.mean([i.flipped for i in decided])) if decided else None,
            "n": len(decided), "n_undecided": sum(1 for i in runs if i.invertible)
            - len(decided), "not_invertible": sum(1 for i in runs if not i.invertible)}


def router_table(records: list[EvalRecord], conditions: list[Condition]) -> dict:
    routed = [c.name for c in conditions if c.memory and c.forced_k is None]
    decisions = [r.router for r in records if r.router is not None]
    rate = float(np.mean([d == "retrieval" for d in decisions])) if decisions else None
    return {"retrieval_rate": {c: rate for c in routed}, "n": len(decisions)}


def narrowing_table(records: list[EvalRecord], sets: AnswerSets | None,
                    conditions: list[str]) -> dict:
    per_condition: dict[str, dict[str, list[float]]] = {c: {} for c in conditions}
    for record in records:
        for condition, metrics in narrowing_coverage(record, sets).items():
            for key, value in (metrics or {}).items():
                if value is not None and condition in per_condition:
                    per_condition[condition].setdefault(key, []).append(float(value))
    return {c: {**{k: (float(np.mean(v[k])) if v.get(k) else None) for k in NARROWING_KEYS},
                "n": len(v.get("cr", []))} for c, v in per_condition.items()}


def exclusion(records: list[EvalRecord], sets: AnswerSets | None, condition: str | None) -> dict:
    if sets is None or condition is None:
        return {}
    rows = []
    for record in records:
        query = record.query_id
        if query not in sets.universe or condition not in record.conditions:
            continue
        covered = set().union(*[sets.covered(query, s.topics)
                                for s in record.conditions[condition].samples])
        rows.append(ExclusionRow(record.record_id, attribute_groups(record.persona),
                                 set(sets.universe[query]), covered))
    return exclusion_table(rows, correction="bh") if rows else {}


def k_sweep_table(scores: dict[str, dict], conditions: list[Condition]) -> dict:
    out = {}
    for condition in (c for c in conditions if c.forced_k is not None):
        row = {}
        for risk in ("irp", "accuracy"):
            values = [s[condition.name] for s in scores.get(risk, {}).values()
                      if s.get(condition.name) is not None]
            row[risk] = float(np.mean(values)) if values else None
            row[f"n_{risk}"] = len(values)
        out[str(condition.forced_k)] = row
    return out


def attribution(scores: dict[str, dict], conditions: list[Condition], *, coding: str,
                correction: str, seed: int) -> dict:
    """{lmm, cell_means, permutation} per risk: the 2x2 model with p adjusted across risks x
    effects, the cell means with CIs, and each condition's sign-flip test against base. Risks
    without all four cells, two complete records or two distinct scores are skipped."""
    cells = {c.name: cell(c) for c in conditions if cell(c) is not None}
    empty = {"lmm": {}, "cell_means": {}, "permutation": {}}
    if len(cells) < 4:
        return empty
    results = {}
    for risk, table in scores.items():
        complete, _ = paired(table, list(cells))
        if len(complete) < 2:
            continue
        rows = pd.DataFrame([{"record": rid, "profile": pm[0], "memory": pm[1],
                              "score": float(s[name])}
                             for rid, s in complete.items() for name, pm in cells.items()])
        if rows["score"].nunique() < 2:
            continue  # every score equal: nothing to attribute (and the fit is degenerate)
        results[risk] = analyse_group(rows, coding=coding, seed=seed)
    if not results:
        return empty
    return {"lmm": corrected_lmm(results, correction),
            "cell_means": {risk: r["cell_means"] for risk, r in results.items()},
            "permutation": {risk: r["permutation"] for risk, r in results.items()}}
