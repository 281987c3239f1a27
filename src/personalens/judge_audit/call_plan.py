"""`judge-audit --dry-run`: the calls the audit would make, counted from its own plan."""

from personalens.judge_audit.audit import JudgeAudit
from personalens.judge_audit.options import AuditOptions
from personalens.runs.call_plan import CallPlan, estimated_tokens

VERDICT_TOKENS = 400  # a verdict's cap (the rubric judge's max_tokens)


def plan_calls(options: AuditOptions) -> CallPlan:
    """Per audited verdict and judge: the first ask, the repeats, the second wording, the
    swapped order (pairwise verdicts), the off-topic and empty probes, and the lens's own probe
    when the run's score qualifies (the audited judge's first score decides in a real run)."""
    audit = JudgeAudit(options)
    out = CallPlan(command="judge-audit", items=len(audit.plan()), unit="verdicts x judges",
                   specs={"judge": ",".join(audit.specs)})
    for item in audit.plan():
        verdict = item.verdict
        calls = 1 + sum(len(asks) for asks in audit.checks_of(verdict).values())
        if "probes" in options.checks:
            calls += len(audit.probes_of(verdict, verdict.score))
        prompt = estimated_tokens(len(verdict.description) + len(verdict.material)
                                  + len(verdict.response) + 600)
        out.add("judge", calls, calls * prompt, calls * VERDICT_TOKENS)
    out.notes.append("each call counted at its first attempt; a lens probe is counted when the "
                     "run's own score qualifies for it")
    return out
