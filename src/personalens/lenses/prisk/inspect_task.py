"""`personalens/prisk` in Inspect (IRP, accuracy and sycophancy). Narrowing is not offered:
its answer sets are built across the samples of a query after every record is answered (the
lens's `finish`), which an Inspect sample cannot see; it runs through `personalens prisk eval
--risks narrowing`. The task itself is generated from the lens's declaration by
`inspect_tasks`."""

from personalens.errors import InputError
from personalens.lenses.prisk.metrics import PriskMetrics
from personalens.lenses.prisk.records import PriskRecord

ACROSS_SAMPLES = "narrowing"


def check(arguments: dict) -> None:
    if ACROSS_SAMPLES in str(arguments.get("risks")):
        raise InputError("the narrowing risk's answer sets span samples, so it runs through "
                         "`personalens prisk eval --risks narrowing`, not Inspect")


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
    out = {f"{risk}/{condition}": cell.value
           for risk, by_condition in metrics.risk_means.items()
           for condition, cell in by_condition.items()}
    out |= {f"irp_normalised/{c}": row.normalised for c, row in metrics.irp.items()}
    if metrics.inversion is not None and metrics.inversion.full_flip_rate is not None:
        out["inversion/full_flip_rate"] = metrics.inversion.full_flip_rate
    return out
