"""The audit's item record: one sampled verdict asked again of one judge, under every check."""

import pydantic

from personalens.runs import LensRecord

TEXT_CHARS = 1500  # of a response kept in the record, for the report's pairs of texts


class ProbeOutcome(pydantic.BaseModel):
    family: str
    expect: str  # bottom, top, below, above, not_both_high (lenses.judged.Expect)
    note: str
    response: str  # the probe's text (cut to TEXT_CHARS)
    score: float | None  # None: the judge gave no valid verdict
    baseline: float | None  # the judge's first score of the verdict
    passed: bool | None  # None: no valid verdict, counted apart


class AuditRecord(LensRecord):
    schema_name = "judge_audit.verdict"

    judge: str  # the audited judge's spec
    verdict: str  # the verdict's key in the audited run
    item: str
    metric: str
    criterion: str
    scale: tuple[int, int]
    response: str  # the run's response (cut to TEXT_CHARS)
    run_score: float | None  # what the run recorded
    first: float | None  # the judge asked as the run asked (sample 0)
    repeats: list[float | None] = []  # fresh samples 1..R
    wording_b: float | None = None
    swapped: float | None = None  # the two texts in the other order (pairwise verdicts)
    probes: list[ProbeOutcome] = []
    invalid: int = 0  # asks that got no valid verdict (left out of every figure)


def cut(text: str) -> str:
    return text if len(text) <= TEXT_CHARS else text[:TEXT_CHARS] + " […]"
