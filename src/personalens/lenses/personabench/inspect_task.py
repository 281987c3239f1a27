"""`personalens/personabench` in Inspect: an item as a sample, a record's scores, the headline
figures (the task itself is generated from the lens's declaration by `inspect_tasks`)."""

import json

from personalens.lenses.personabench.evaluation import Item
from personalens.lenses.personabench.metrics import PersonabenchMetrics
from personalens.stats.estimate import Estimate


def sample(item: Item) -> dict:
    q = item.question
    return {"input": q.question, "target": json.dumps(q.answer),
            "metadata": {"persona": item.person, "community": item.community.name,
                         "noise": item.noise, "retriever": item.retriever,
                         "type": q.type, "difficulty": q.difficulty, "answer": q.answer,
                         "ground_truth": item.community.levels[item.noise].ground_truth[q.q_id]}}


def figures(line: dict) -> dict[str, float]:
    """Retrieval recall and nDCG, and the answer's precision, recall and F1 when answered."""
    out = {f"retrieval_{k}": v for k, v in line["retrieval"].items()}
    out.update({f"answer_{k}": v for k, v in (line.get("end_to_end") or {}).items()})
    return out


def headlines(metrics: PersonabenchMetrics) -> dict[str, float]:
    """Overall recall and nDCG (and answer F1) of each retriever x noise condition."""
    out: dict[str, float] = {}
    for c in metrics.conditions:
        label = f"{c.retriever}@{c.noise:g}"
        overall = c.retrieval["overall"]
        out[f"{label}/recall"], out[f"{label}/ndcg"] = _value(overall.recall), _value(
            overall.ndcg)
        if c.end_to_end is not None:
            out[f"{label}/f1"] = _value(c.end_to_end["overall"].f1)
    return out


def _value(estimate: Estimate | None) -> float | None:
    return None if estimate is None else estimate.value


def answer(line: dict) -> str:
    return line.get("prediction") or ""
