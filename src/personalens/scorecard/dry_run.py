"""`personalens scorecard --dry-run`: the runs it would make, and for every eval whose data is
built, its items and model calls (each lens's own `--dry-run` plan), summed per model.

The population and the builds are listed (done, or to run) but not counted: how many calls
they make depends on what the generator writes (a reveal check or a decoy that fails is
drawn again). On a new --out the evals are counted once the scorecard has built the data.
"""

import json
from collections import defaultdict

from personalens.lenses.commands import resolve
from personalens.models.spec import DEFAULT_MODEL
from personalens.retrieval.registry import reranks_with_a_model
from personalens.runs.call_plan import CallPlan
from personalens.runs.run_directory import MANIFEST
from personalens.runs.usage import estimated_cost
from personalens.scorecard.stages import Plan, Stage


def plan_lines(plan: Plan, prices: dict[str, tuple[float, float]]) -> list[str]:
    lines = [f"dry run of a {plan.size.name} scorecard: {len(plan.systems)} system(s) x "
             f"{len(plan.lenses)} lens(es); no model is called, nothing is written"]
    built = True
    for stage in plan.preparation():
        done = _complete(stage)
        built &= done
        lines.append(f"  {stage.label}: {'done (reused)' if done else 'to run'} -> {stage.out}")
    by_model: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    if not built:
        lines.append("  evals: their items and calls are counted once the data above is built "
                     "(the builds' calls depend on what the generator writes); rerun --dry-run "
                     "after the scorecard has built it")
        return lines
    for stage in plan.evaluations():
        call_plan: CallPlan = resolve(stage.command.dry_run)(stage.options)
        specs = _specs(stage)
        calls = ", ".join(f"{role} {c.calls:,}" for role, c in sorted(call_plan.roles.items()))
        lines.append(f"  {stage.label}: {call_plan.items} {call_plan.unit}; calls: "
                     f"{calls or 'none'}")
        for role, c in call_plan.roles.items():
            model = by_model[specs.get(role, role)]
            model["requests"] += c.calls
            model["prompt_tokens"] += c.prompt_tokens
            model["completion_tokens"] += c.completion_tokens
    lines.append("  total per model:")
    for spec, usage in sorted(by_model.items()):
        lines.append(f"    {spec}: {usage['requests']:,} calls, ~{usage['prompt_tokens']:,} "
                     f"prompt tokens, ~{usage['completion_tokens']:,} completion tokens")
    if prices:
        cost = estimated_cost(by_model, prices)
        lines.append(f"  estimated cost: ${cost:,.4f} at the prices given")
    lines.append("  counts assume every call succeeds at its first attempt and every dialogue "
                 "uses its whole budget (each lens's --dry-run notes say more)")
    return lines


def plan_usage(plan: Plan) -> dict[tuple[str, str], dict[str, int]]:
    """(stage label, role) -> the requests each eval would make (for tests and the bench)."""
    out = {}
    for stage in plan.evaluations():
        call_plan = resolve(stage.command.dry_run)(stage.options)
        for role, c in call_plan.roles.items():
            out[stage.label, role] = c.calls
    return out


def _specs(stage: Stage) -> dict[str, str]:
    models = stage.options.models
    resolved = models.resolved(getattr(type(stage.options), "roles", ()))
    out = {role: s.spec for role, s in resolved.items()}
    retriever = stage.system.retriever if stage.system else ""
    if reranks_with_a_model(retriever):  # the model the retriever names, else the bundled one
        out["reranker"] = retriever.partition(":")[2] or DEFAULT_MODEL
    return out


def _complete(stage: Stage) -> bool:
    try:
        manifest = json.loads((stage.out / MANIFEST).read_text())
    except (OSError, json.JSONDecodeError):
        return False
    return manifest.get("status") == "complete"
