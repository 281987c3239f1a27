"""`personalens/prisk`: the PRISK lens as an Inspect task (IRP, accuracy and sycophancy).

Narrowing is not offered here: its answer sets are built across the samples of a query after
every record is answered (the lens's `finish`), which an Inspect sample cannot see. It runs
through `personalens prisk eval --risks narrowing`.
"""

from inspect_ai import Task, task

from personalens.errors import InputError
from personalens.inspect_tasks.lens_task import LensTask, lens_task
from personalens.lenses.prisk.command import PriskEval
from personalens.lenses.prisk.metrics import PriskMetrics
from personalens.lenses.prisk.options import ANSWER_TOKENS, EvalOptions
from personalens.lenses.prisk.records import PriskRecord

ACROSS_SAMPLES = "narrowing"


def sample(record: PriskRecord) -> dict:
    gold = record.answer or record.verdict or ""
    return {"input": record.question, "target": str(gold),
            "metadata": {"persona": record.persona, "risk": record.risk,
                         "domain": record.domain, "query_id": record.query_id}}


def figures(line: dict) -> dict[str, float]:
    """Each condition's rubric score (1-5) or correctness (0/1), as the lens scored it."""
    out: dict[str, float] = {}
    for condition, answer in line.get("conditions", {}).items():
        if answer.get("score") is not None:
            out[f"{condition}/score"] = answer["score"]
        if answer.get("correct") is not None:
            out[f"{condition}/correct"] = float(answer["correct"])
    return out


def headlines(metrics: PriskMetrics) -> dict[str, float]:
    """Each risk's mean per condition, IRP normalised, and the inversion's full-flip rate."""
    out = {f"{risk}/{condition}": cell["value"]
           for risk, by_condition in metrics.risk_means.items()
           for condition, cell in by_condition.items()}
    out |= {f"irp_normalised/{c}": row.get("normalised") for c, row in metrics.irp.items()}
    if metrics.inversion.get("full_flip_rate") is not None:
        out["inversion/full_flip_rate"] = metrics.inversion["full_flip_rate"]
    return out


PRISK = LensTask("prisk", PriskEval, EvalOptions, sample, figures, headlines)


@task
def prisk(data: str, condition: str = "base,profile,retrieval,profile_retrieval",
          risks: str = "irp,sycophancy", retriever: str = "minilm", k: int = 3,
          max_tokens: int = ANSWER_TOKENS, limit: int | None = None, seed: int = 0) -> Task:
    """PRISK: what personalization costs (irrelevant personal details, sycophancy).

    Args:
        data: Assembled PRISK records (release JSON), a file or a folder of them.
        condition: Condition(s), comma-separated: base, profile, retrieval,
          profile_retrieval, reflect.
        risks: Risk group(s), comma-separated: irp (with accuracy), sycophancy. Narrowing
          runs through `personalens prisk eval` (its answer sets span samples).
        retriever: Memory retriever (bm25, minilm, ...).
        k: Memories retrieved when the router retrieves.
        max_tokens: Longest answer, in tokens (the release's 1600); a local model's is capped
          so that prompt and reply fit its context.
        limit: At most this many records per risk.
        seed: Seed of the bootstrap and permutation draws.
    """
    if ACROSS_SAMPLES in risks:
        raise InputError("the narrowing risk's answer sets span samples, so it runs through "
                         "`personalens prisk eval --risks narrowing`, not Inspect")
    args = {"data": data, "conditions": condition, "risks": risks, "retriever": retriever,
            "k": k, "max_tokens": max_tokens, "limit": limit, "seed": seed}
    return lens_task(PRISK, args)
