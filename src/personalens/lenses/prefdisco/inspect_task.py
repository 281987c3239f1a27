"""`personalens/prefdisco` in Inspect: the solver is the lens's protocol (in discovery the
target's dialogue with the simulated user, `--model-role user=...`, then the judge,
`--model-role judge=...`, grades each criterion). The task itself is generated from the lens's
declaration by `inspect_tasks`."""

from personalens.lenses.prefdisco.evaluation import Item
from personalens.lenses.prefdisco.metrics import PrefdiscoMetrics


def sample(item: Item) -> dict:
    instance, problem = item.instance, item.instance.problem
    return {"input": problem.question, "target": problem.gold,
            "metadata": {"persona": instance.persona, "task": instance.task,
                         "condition": item.condition, "options": problem.options,
                         "preferences": instance.preferences}}


def figures(line: dict) -> dict[str, float]:
    """PrefAlign (1-5) and correctness (0/1) of the scored answer, when each was scored."""
    out = {}
    if line.get("prefalign") is not None:
        out["prefalign"] = line["prefalign"]
    correctness = line.get("correctness")
    if correctness is not None and not correctness["unparsed"]:
        out["correct"] = float(correctness["correct"])
    return out


def headlines(metrics: PrefdiscoMetrics) -> dict[str, float]:
    """PrefAlign and accuracy per condition, NormAlign per task and overall."""
    out: dict[str, float] = {}
    for condition in metrics.conditions:
        out[f"{condition}/prefalign"] = metrics.prefalign[condition].value
        out[f"{condition}/accuracy"] = metrics.accuracy[condition].value
    for name, value in metrics.normalign.items():
        out[f"normalign/{name}"] = value.value
    return out


def answer(line: dict) -> str:
    return line.get("response") or ""
