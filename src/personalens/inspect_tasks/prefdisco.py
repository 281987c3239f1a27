"""`personalens/prefdisco`: the PrefDisco lens as an Inspect task.

The solver is the lens's protocol: in discovery the target's dialogue with the simulated user
(`--model-role user=...`), then the judge (`--model-role judge=...`) grades each criterion.
"""

from inspect_ai import Task, task

from personalens.inspect_tasks.lens_task import LensTask, lens_task
from personalens.lenses.prefdisco.command import PrefdiscoEval
from personalens.lenses.prefdisco.evaluation import Item
from personalens.lenses.prefdisco.metrics import PrefdiscoMetrics
from personalens.lenses.prefdisco.options import CONDITIONS, RELEASE_MAX_TOKENS, EvalOptions


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
        out[f"{condition}/prefalign"] = metrics.prefalign[condition].mean
        out[f"{condition}/accuracy"] = metrics.accuracy[condition].mean
    for name, value in metrics.normalign.items():
        out[f"normalign/{name}"] = value.value
    return out


PREFDISCO = LensTask("prefdisco", PrefdiscoEval, EvalOptions, sample, figures, headlines,
                     answer=lambda line: line.get("response") or "")


@task
def prefdisco(data: str, condition: str = ",".join(CONDITIONS), turns: int = 5,
              user: str = "passive", scoring: str = "strict", protocol: str = "release",
              correctness: str | None = None, max_tokens: int = RELEASE_MAX_TOKENS) -> Task:
    """PrefDisco: does the model ask a new user the right questions, then adapt its answer?

    Args:
        data: prefq-bench JSONL file, or a folder of them.
        condition: Condition(s), comma-separated: baseline, discovery, oracle (NormAlign
          needs all three).
        turns: Question budget in discovery.
        user: Simulated user: passive or collaborative.
        scoring: strict, or release (the released scorer's behaviour).
        protocol: release (the release's prompts) or personalens (ours).
        correctness: judge (the release's: the judge reads each answer against the gold) or
          rules (an ANSWER: line checked by rule). Default: judge under the release's
          protocol, rules under ours.
        max_tokens: Longest target reply, in tokens.
    """
    args = {"data": data, "conditions": condition, "turns": turns, "user": user,
            "scoring": scoring, "protocol": protocol, "correctness": correctness,
            "max_tokens": max_tokens}
    return lens_task(PREFDISCO, args)
