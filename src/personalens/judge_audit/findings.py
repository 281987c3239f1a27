"""The audit's figures from its records: probe pass rates, agreement under each check, between
judges and with people, the headline per judge, each with its verdict."""

from collections.abc import Callable
from itertools import combinations

import numpy as np
from scipy.stats import binomtest

from personalens.judge_audit.label_sheet import Label
from personalens.judge_audit.metrics import FailedProbe, Figure, Headline, JudgeFindings, JudgePair
from personalens.judge_audit.records import AuditRecord
from personalens.judge_audit.thresholds import verdict, worst
from personalens.lenses.judged import JudgedVerdict
from personalens.stats.agreement import agreement_figures
from personalens.stats.bootstrap import bootstrap_ci
from personalens.stats.estimate import CLOPPER_PEARSON, Estimate

AGREEMENT = ("exact", "alpha", "ac2")
SHOWN_FAILURES = 25  # failed probes per judge and metric kept in audit.json and the report
SHOWN_DISAGREEMENTS = 50
Headliner = Callable[[list[tuple[JudgedVerdict, float | None]]], float | None]


def probe_figures(records: list[AuditRecord], limits) -> dict[str, Figure]:
    """Per probe family: the share passed (invalid verdicts apart), with its exact
    (Clopper-Pearson) 95 % interval."""
    out = {}
    families = dict.fromkeys(p.family for r in records for p in r.probes)
    for family in families:
        outcomes = [p.passed for r in records for p in r.probes
                    if p.family == family and p.passed is not None]
        n, passed = len(outcomes), sum(outcomes)
        if n:
            ci = binomtest(passed, n).proportion_ci(method="exact")
            low, high, value = float(ci.low), float(ci.high), passed / n
        else:
            low = high = value = None
        out[f"probe.{family}"] = Figure.with_bounds(
            value, (low, high), n, method=CLOPPER_PEARSON,
            verdict=verdict("probe", value, n, limits, high), kind="probe")
    return out


def agreement(a: list, b: list, scale: tuple[int, int], limits, seed: int,
              prefix: str) -> dict[str, Figure]:
    """Exact agreement, Krippendorff's alpha and Gwet's AC2 of two ratings of the same units
    (ordinal on a 1-5 scale, nominal and AC1 on yes/no), each with its bootstrap CI."""
    binary = scale == (0, 1)
    x, y = _floats(a), _floats(b)
    figures = agreement_figures(x, y, list(range(scale[0], scale[1] + 1)),
                                level="nominal" if binary else "ordinal",
                                weights="identity" if binary else "quadratic", seed=seed)
    wanted = (*AGREEMENT, "kappa") if prefix == "people" else AGREEMENT
    return {f"{prefix}.{name}": _figure(figures[name], name, limits) for name in wanted}


def _figure(found: Estimate, kind: str, limits) -> Figure:
    return Figure.with_bounds(found.value, found.bounds, found.n, verdict=verdict(
        kind, found.value, found.n, limits, found.ci_high), kind=kind)


def _floats(values: list) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def judge_findings(records: list[AuditRecord], verdicts: dict[str, JudgedVerdict],
                   headline: Headliner, scale: tuple[int, int], checks: list[str],
                   limits, seed: int, labels: list[Label] | None) -> JudgeFindings:
    """Everything one judge's records on one metric show."""
    figures: dict[str, Figure] = {}
    if "probes" in checks:
        figures.update(probe_figures(records, limits))
    first = [r.first for r in records]
    if "stability" in checks and records and records[0].repeats:
        figures.update(agreement(first, [r.repeats[0] for r in records], scale, limits, seed,
                                 "stability"))
    pairwise = [r for r in records if verdicts[r.verdict].pairwise]
    if "order" in checks and pairwise:
        figures.update(agreement([r.first for r in pairwise], [r.swapped for r in pairwise],
                                 scale, limits, seed, "order"))
    if "wording" in checks:
        figures.update(agreement(first, [r.wording_b for r in records], scale, limits, seed,
                                 "wording"))
    if labels:
        figures.update(people_figures(records, labels, scale, limits, seed))
    return JudgeFindings(
        verdict=worst([f.verdict for f in figures.values()]), figures=figures,
        headline=headline_figure(records, verdicts, headline, seed),
        instability=instability(records, verdicts, headline),
        invalid=sum(r.invalid for r in records), failed_probes=failed_probes(records))


def people_figures(records: list[AuditRecord], labels: list[Label], scale, limits,
                   seed: int) -> dict[str, Figure]:
    """The judge against each person's label (a verdict labelled by two people counts twice)."""
    first = {r.verdict: r.first for r in records}
    pairs = [(first[label.unit], float(label.label)) for label in labels if label.unit in first]
    if not pairs:
        return {}
    judge, people = zip(*pairs, strict=True)
    return agreement(list(judge), list(people), scale, limits, seed, "people")


def headline_figure(records: list[AuditRecord], verdicts: dict[str, JudgedVerdict],
                    headline: Headliner, seed: int) -> Headline:
    """The metric on the sample under this judge, its CI over items, and with repeats the CI
    that also draws each verdict's score from its samples (first and repeats)."""
    items = sorted({r.item for r in records})
    by_item = {item: [r for r in records if r.item == item] for item in items}

    def over(chosen: np.ndarray, pick: Callable[[AuditRecord], float | None]) -> float | None:
        return headline([(verdicts[r.verdict], pick(r)) for i in chosen
                         for r in by_item[items[i]]])

    value = over(np.arange(len(items)), lambda r: r.first)
    out = Headline.with_bounds(value, bootstrap_ci(
        np.arange(len(items)), lambda rows: over(rows, lambda r: r.first), seed=seed),
        len(items))
    if records and records[0].repeats:
        rng = np.random.default_rng(seed + 1)

        def noisy(rows: np.ndarray) -> float | None:
            # Each verdict's score drawn from its own samples, afresh in every resample.
            return over(rows, lambda r: [r.first, *r.repeats][rng.integers(0, 1 + len(r.repeats))])

        out.noise_ci_low, out.noise_ci_high = bootstrap_ci(np.arange(len(items)), noisy,
                                                           seed=seed)
    return out


def instability(records: list[AuditRecord], verdicts: dict[str, JudgedVerdict],
                headline: Headliner) -> dict[str, float]:
    """|headline asked again - headline as asked| for each check that ran, and their max."""
    def value(pick) -> float | None:
        return headline([(verdicts[r.verdict], pick(r)) for r in records])

    base = value(lambda r: r.first)
    shifts = {}
    variants = {"repeat": lambda r: r.repeats[0] if r.repeats else None,
                "wording": lambda r: r.wording_b, "order": lambda r: r.swapped}
    for name, pick in variants.items():
        if any(pick(r) is not None for r in records):
            other = value(pick)
            if base is not None and other is not None:
                shifts[name] = abs(other - base)
    if shifts:
        shifts["max"] = max(shifts.values())
    return shifts


def failed_probes(records: list[AuditRecord]) -> list[FailedProbe]:
    failed = [FailedProbe(family=p.family, verdict=r.verdict, note=p.note, expect=p.expect,
                          first=r.first, score=p.score, original=r.response, probe=p.response)
              for r in records for p in r.probes if p.passed is False]
    return failed[:SHOWN_FAILURES]


def between_judges(by_judge: dict[str, list[AuditRecord]], scale, limits,
                   seed: int) -> list[JudgePair]:
    """Every two judges' agreement on the verdicts both scored."""
    pairs = []
    for a, b in combinations(by_judge, 2):
        first_b = {r.verdict: r.first for r in by_judge[b]}
        shared = [r for r in by_judge[a] if r.verdict in first_b]
        pairs.append(JudgePair(judges=(a, b), figures=agreement(
            [r.first for r in shared], [first_b[r.verdict] for r in shared], scale, limits,
            seed, "judges")))
    return pairs


def disagreements(by_judge: dict[str, list[AuditRecord]]) -> list[dict]:
    """Verdicts the judges scored differently, widest spread first."""
    scores: dict[str, dict[str, float | None]] = {}
    items: dict[str, str] = {}
    for judge, records in by_judge.items():
        for r in records:
            scores.setdefault(r.verdict, {})[judge] = r.first
            items[r.verdict] = r.item
    rows = []
    for key, by in scores.items():
        valid = [v for v in by.values() if v is not None]
        if len(valid) >= 2 and max(valid) != min(valid):
            rows.append({"verdict": key, "item": items[key], "scores": by,
                         "spread": max(valid) - min(valid)})
    rows.sort(key=lambda row: (-row["spread"], row["verdict"]))
    return rows[:SHOWN_DISAGREEMENTS]

