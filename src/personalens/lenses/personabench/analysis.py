"""metrics.json for a PersonaBench run, computed only from its records.

Means are over successful records; failed items are counted and listed, never scored as zero.
"""

from collections import Counter
from dataclasses import dataclass

import numpy as np

from personalens.lenses.personabench.int8_difference import int8_differences
from personalens.lenses.personabench.metrics import InfoUpdating, Scores
from personalens.lenses.personabench.records import (
    AnswerScores,
    PersonabenchRecord,
    RetrievalScores,
)
from personalens.runs import ItemFailure, ItemRecords
from personalens.stats import Estimate, mean_ci

CATEGORIES = ("basic", "preference_easy", "preference_hard", "social")


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _with_ci(values: list[float]) -> Estimate:
    """The mean of the questions' values with its 95 % bootstrap CI over them."""
    return Estimate.with_bounds(_mean(values), mean_ci(np.array(values)), len(values))


@dataclass(frozen=True)
class _Scored:
    """What the metrics read of a record; the rest (question, retrieved ids, answer text) is
    left on disk, so summarising a large run holds a few numbers per record."""

    key: str
    unit: tuple[str, str]  # (community, q_id): the question, paired across retrievers
    retriever: str
    noise: str
    category: str
    retrieval: RetrievalScores
    end_to_end: AnswerScores | None
    outdated_recall: float | None
    failure: ItemFailure | None  # the item failed (answering, after retrieval)


def _scored(record: PersonabenchRecord, failure: ItemFailure | None = None) -> _Scored:
    return _Scored(record.key, (record.community, record.q_id), record.retriever, record.noise,
                   record.category,
                   record.retrieval, record.end_to_end, record.outdated_recall, failure)


def _by_category(records: list[_Scored], section: str,
                 fields: tuple[str, ...]) -> dict[str, Scores]:
    out = {}
    for name in (*CATEGORIES, "overall"):
        chosen = [r for r in records if name == "overall" or r.category == name]
        out[name] = Scores(n=len(chosen), **{f: _with_ci([getattr(getattr(r, section), f)
                                                          for r in chosen]) for f in fields})
    return out


def _info_updating(records: list[_Scored]) -> InfoUpdating:
    """1 - the share of outdated words still repeated, over questions that had an update."""
    outdated = [r.outdated_recall for r in records if r.outdated_recall is not None]
    share = _with_ci(outdated)
    score = mean_ci(np.array([1.0 - v for v in outdated]))
    return InfoUpdating(n=len(outdated), outdated_recall=share, score=Estimate.with_bounds(
        None if share.value is None else 1.0 - share.value, score, len(outdated)))


def _condition(retriever: str, noise: str, records: list[_Scored], answered: bool) -> dict:
    ok = [r for r in records if r.failure is None]
    failed = [r.failure for r in records if r.failure is not None]
    result = {
        "retriever": retriever, "noise": float(noise), "n_items": len(records),
        "n_failed": len(failed),
        "failures_by_kind": dict(Counter(f.kind for f in failed)),
        # Retrieval succeeded even where answering failed, so every record counts here.
        "retrieval": _by_category(records, "retrieval", ("recall", "ndcg")),
    }
    if answered:
        result["end_to_end"] = _by_category(ok, "end_to_end", ("recall", "precision", "f1"))
        result["info_updating"] = _info_updating(ok)
    return result


def summarise(records: ItemRecords[PersonabenchRecord], *, n_planned: int,
              answered: bool) -> dict:
    scored, failures = [], []
    for record in records:
        if isinstance(record, ItemFailure):
            failures.append(record)
            produced = records.produced(record)
            if produced is not None:  # its retrieval counts
                scored.append(_scored(produced, record))
        else:
            scored.append(_scored(record))
    scored.sort(key=lambda r: r.key)
    groups: dict[tuple[str, str], list[_Scored]] = {}
    for r in scored:
        groups.setdefault((r.retriever, r.noise), []).append(r)
    conditions = [_condition(ret, noise, rs, answered) for (ret, noise), rs in groups.items()]
    failures.sort(key=lambda f: f.key)
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
    differences = int8_differences(_unit_values(scored))
    if differences:
        metrics["int8_vs_fp32"] = differences
    if len(conditions) == 1:  # the common single-condition run reads as the keys
        for section in ("retrieval", "end_to_end", "info_updating"):
            if section in conditions[0]:
                metrics[section] = conditions[0][section]
    return metrics


def _unit_values(scored: list[_Scored]) -> dict[tuple[str, str, str], dict]:
    """{(retriever, noise, metric): {question: value}}: retrieval for every record, answer F1
    for the answered ones (as the conditions' means count them)."""
    out: dict[tuple[str, str, str], dict] = {}
    for r in scored:
        out.setdefault((r.retriever, r.noise, "recall"), {})[r.unit] = r.retrieval.recall
        out.setdefault((r.retriever, r.noise, "ndcg"), {})[r.unit] = r.retrieval.ndcg
        if r.failure is None and r.end_to_end is not None:
            out.setdefault((r.retriever, r.noise, "f1"), {})[r.unit] = r.end_to_end.f1
    return out


def _noise_robustness(conditions: list[dict]) -> dict[str, float | None]:
    """Per retriever: 1 - (overall F1 at the lowest noise - overall F1 at the highest)."""
    out: dict[str, float | None] = {}
    for retriever in sorted({c["retriever"] for c in conditions}):
        mine = sorted((c for c in conditions if c["retriever"] == retriever),
                      key=lambda c: c["noise"])
        low, high = (c["end_to_end"]["overall"].f1.value for c in (mine[0], mine[-1]))
        if len(mine) > 1 and low is not None and high is not None:
            out[retriever] = 1.0 - (low - high)
    return out
