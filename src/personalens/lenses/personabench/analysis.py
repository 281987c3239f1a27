"""metrics.json for a PersonaBench run, computed only from its records.

Means are over successful records; failed items are counted and listed, never scored as zero.
"""

from collections import Counter
from collections.abc import Iterable

import numpy as np

from personalens.stats import mean_ci

CATEGORIES = ("basic", "preference_easy", "preference_hard", "social")


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _with_ci(values: dict[str, list[float]]) -> dict:
    """Each metric's mean, then ci_low and ci_high: {metric: bound} (95 %, over questions)."""
    out: dict = {name: _mean(v) for name, v in values.items()}
    bounds = {name: mean_ci(np.array(v)) for name, v in values.items()}
    out["ci_low"] = {name: low for name, (low, _) in bounds.items()}
    out["ci_high"] = {name: high for name, (_, high) in bounds.items()}
    return out


def _by_category(records: list[dict], section: str, fields: tuple[str, ...]) -> dict:
    out = {}
    for name in (*CATEGORIES, "overall"):
        chosen = [r for r in records if name == "overall" or r["category"] == name]
        out[name] = {**_with_ci({f: [r[section][f] for r in chosen] for f in fields}),
                     "n": len(chosen)}
    return out


def _info_updating(records: list[dict]) -> dict:
    """1 - the share of outdated words still repeated, over questions that had an update."""
    outdated = [r["outdated_recall"] for r in records if "outdated_recall" in r]
    scored = _with_ci({"outdated_recall": outdated, "score": [1.0 - v for v in outdated]})
    mean = scored["outdated_recall"]
    return {"outdated_recall": mean, "n": len(outdated),
            "score": None if mean is None else 1.0 - mean, "ci_low": scored["ci_low"],
            "ci_high": scored["ci_high"]}


def _condition(retriever: str, noise: str, records: list[dict], answered: bool) -> dict:
    ok = [r for r in records if r["status"] == "ok"]
    failed = [r for r in records if r["status"] != "ok"]
    result = {
        "retriever": retriever, "noise": float(noise), "n_items": len(records),
        "n_failed": len(failed),
        "failures_by_kind": dict(Counter(r["error"]["kind"] for r in failed)),
        # Retrieval succeeded even where answering failed, so every record counts here.
        "retrieval": _by_category(records, "retrieval", ("recall", "ndcg")),
    }
    if answered:
        result["end_to_end"] = _by_category(ok, "end_to_end", ("recall", "precision", "f1"))
        result["info_updating"] = _info_updating(ok)
    return result


# What the metrics read of a record; the rest (question, retrieved ids, answer text) is left
# on disk, so summarising a large run holds a few numbers per record.
_SCORED = ("key", "status", "retriever", "noise", "category", "retrieval", "end_to_end",
           "outdated_recall", "error")


def summarise(records: Iterable[dict], *, n_planned: int, answered: bool) -> dict:
    records = sorted(({f: r[f] for f in _SCORED if f in r} for r in records),
                     key=lambda r: r["key"])
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in records:
        groups.setdefault((r["retriever"], r["noise"]), []).append(r)
    conditions = [_condition(ret, noise, rs, answered) for (ret, noise), rs in groups.items()]
    failures = [{"key": r["key"], **r["error"]} for r in records if r["status"] != "ok"]
    metrics = {
        "n_planned": n_planned,
        "n_recorded": len(records),
        "n_failed": len(failures),
        "complete": len(records) == n_planned and not failures,
        "conditions": conditions,
        "failures": failures,
    }
    if answered:
        metrics["noise_robustness"] = _noise_robustness(conditions)
    if len(conditions) == 1:  # the common single-condition run reads as the keys
        for section in ("retrieval", "end_to_end", "info_updating"):
            if section in conditions[0]:
                metrics[section] = conditions[0][section]
    return metrics


def _noise_robustness(conditions: list[dict]) -> dict[str, float | None]:
    """Per retriever: 1 - (overall F1 at the lowest noise - overall F1 at the highest)."""
    out: dict[str, float | None] = {}
    for retriever in sorted({c["retriever"] for c in conditions}):
        mine = sorted((c for c in conditions if c["retriever"] == retriever),
                      key=lambda c: c["noise"])
        low, high = mine[0]["end_to_end"]["overall"]["f1"], mine[-1]["end_to_end"]["overall"]["f1"]
        if len(mine) > 1 and low is not None and high is not None:
            out[retriever] = 1.0 - (low - high)
    return out
