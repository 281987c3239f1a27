"""`personalens/personabench`: the PersonaBench lens as an Inspect task."""

import json

from inspect_ai import Task, task

from personalens.inspect_tasks.lens_task import LensTask, lens_task
from personalens.lenses.personabench.command import PersonabenchEval
from personalens.lenses.personabench.evaluation import Item
from personalens.lenses.personabench.metrics import PersonabenchMetrics
from personalens.lenses.personabench.options import EvalOptions


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
        out[f"{label}/recall"], out[f"{label}/ndcg"] = overall.recall, overall.ndcg
        if c.end_to_end is not None:
            out[f"{label}/f1"] = c.end_to_end["overall"].f1
    return out


PERSONABENCH = LensTask("personabench", PersonabenchEval, EvalOptions, sample, figures, headlines,
                        answer=lambda line: line.get("prediction") or "")


@task
def personabench(data: str, noise: str = "0.5", retriever: str = "minilm", k: int = 5,
                 no_answer: bool = False) -> Task:
    """PersonaBench: answer personal questions from a person's noisy private documents.

    Args:
        data: A community in the release layout, or a folder of several.
        noise: Noise level(s), comma-separated (e.g. 0.0,0.5).
        retriever: Retriever(s), comma-separated: bm25, minilm, ... or gt-context.
        k: Chunks retrieved per question.
        no_answer: Evaluate retrieval only (no model calls).
    """
    args = {"data": data, "noise": str(noise), "retriever": retriever, "k": k,
            "no_answer": no_answer}
    return lens_task(PERSONABENCH, args)
