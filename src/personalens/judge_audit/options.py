"""`personalens judge-audit`'s options, declared once (validation, identity)."""

from typing import ClassVar, Literal

import pydantic

from personalens.models.role_set import Role, RoleModels
from personalens.runs.options import CommaList, LensOptions, UserPath, not_identity, option

CHECKS = ("probes", "stability", "order", "wording")
SAMPLE_CAP = 200  # verdicts per judged metric when --sample is not given
Check = Literal["probes", "stability", "order", "wording"]


class AuditOptions(LensOptions):
    command = "judge-audit"
    roles: ClassVar = (Role("judge", "judge", None, "Judge model(s) to audit, comma-separated. "
                                                    "Default: the judge(s) the run used."),)

    run: UserPath = option(help="A finished run directory of a judged lens command (an LLM "
                                "judge scored it).")
    out: UserPath = not_identity(help="The audit's run directory (audit.json, report.html); "
                                      "rerunning the same command resumes it.")
    sample: int | None = option(None, f"Verdicts sampled per judged metric (seeded). Default: "
                                      f"all, at most {SAMPLE_CAP}.", ge=1)
    seed: int = option(0, "Seed of the sample, the off-topic answers and the bootstrap CIs.")
    judges: CommaList = option([], "Judges to audit instead of the run's own.")
    repeats: int = option(1, "Fresh samples of each verdict (new seeds, never the cache), for "
                             "stability and --judge-noise.", ge=1, le=20)
    checks: CommaList = option(list(CHECKS), "Comma-separated: probes, stability, order, "
                                             "wording.")
    labels: UserPath | None = not_identity(
        None, "People's labels (a `judge-audit export` sheet, filled in): the judge's "
              "agreement with them is reported.")
    thresholds: CommaList = not_identity(
        [], "Override verdict thresholds, e.g. alpha=0.8:0.667,probe=0.9:0.75 (reliable at or "
            "above the first, doubtful at or above the second).")
    models: RoleModels = option(RoleModels(), cli=False)

    @pydantic.field_validator("checks")
    @classmethod
    def _known_checks(cls, value: list[str]) -> list[str]:
        unknown = [c for c in value if c not in CHECKS]
        if unknown or not value:
            raise ValueError(f"--checks takes {', '.join(CHECKS)} (got "
                             f"{', '.join(unknown) or 'none'})")
        return value
