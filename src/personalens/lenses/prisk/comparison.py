"""How `personalens compare` reads `prisk eval` runs: a system is a run, named by its target
model; its units are the records (record_id, the same in every run of the dataset).

Every figure is the lens's own (`analysis`), recomputed from the run's records: each risk's
score per condition on the paper's 0-100 scale, over the records scored in every main
condition of the run (as metrics.json's `risk_means`); the mean degradation from base; the
reflection gain; the k-sweep and its σ; and the attribution model with the model as a factor
over the merged scores. Narrowing's answer sets are rebuilt from the run's recorded verdicts
(its steps), never by asking a judge, so UIR is the run's own.
"""

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from personalens.errors import InputError
from personalens.lenses.commands import Comparison, Headline, Table
from personalens.lenses.prisk import analysis, answer_sets
from personalens.lenses.prisk.answer_sets import AnswerSets
from personalens.lenses.prisk.conditions import BASE_CONDITIONS, Condition, conditions_for
from personalens.lenses.prisk.records import EvalRecord
from personalens.report import grouped_bars
from personalens.runs import ItemRecords, RecordedFailure
from personalens.stats import Estimate, bootstrap_ci
from personalens.stats.mixed_effects import fit_model_factor

# The paper's risks, each a headline per condition; agreement and framing (pooled into
# sycophancy) are in the main table only.
HEADLINE_RISKS = ("irp", "accuracy", "narrowing", "sycophancy")
TABLE_RISKS = ("irp", "accuracy", "narrowing", "sycophancy", "agreement", "framing")
LABELS = {"irp": "IRP", "accuracy": "accuracy", "narrowing": "narrowing UIR",
          "sycophancy": "sycophancy (pooled)", "agreement": "agreement", "framing": "framing"}
MAIN_ORDER = (*BASE_CONDITIONS, "reflect")


@dataclass(frozen=True)
class RunScoring:
    """What a run scores its records by: its conditions (from its manifest), narrowing's
    answer sets (from its steps) and its attribution coding."""

    conditions: list[Condition]
    sets: AnswerSets | None
    coding: str

    @property
    def main(self) -> list[str]:
        """The conditions of the means (the depth sweep has its own table)."""
        return [c.name for c in self.conditions if c.forced_k is None]


@dataclass(frozen=True)
class Scored:
    """A record of a compared run, with what its run scores it by."""

    record: EvalRecord
    run: RunScoring


class _RecordedSteps:
    """The run's finished steps, replayed; a step the run never finished is a failure (the
    harness recorded it as one too), never a new model call."""

    def __init__(self, steps: Mapping[str, Any]):
        self.steps = steps

    async def get(self, key: str, compute) -> Any:
        if key not in self.steps:
            raise RecordedFailure("not_recorded", f"step {key} is not in the run")
        return self.steps[key]


def _recorded_sets(records: list[EvalRecord], steps: Mapping[str, Any],
                   conditions: list[Condition]) -> AnswerSets | None:
    """Narrowing's sets as the run built them, from its recorded label and usefulness
    verdicts (no judge is asked: `judge` and the records' sources are never reached)."""
    narrowing = [r for r in records if r.risk == "narrowing"]
    if not narrowing:
        return None
    swept = {c.name for c in conditions if c.forced_k is not None}
    return asyncio.run(answer_sets.build(narrowing, {}, swept, judge=None, usefulness_judge=None,
                                         steps=_RecordedSteps(steps), attempts=1,
                                         temperature=0.0))


@dataclass(frozen=True)
class _Scores:
    """A system's per-record scores: {risk: {record: {condition: score}}} in each risk's own
    units, and, per risk, the records scored in every main condition."""

    run: RunScoring
    scores: dict[str, dict[str, dict]]

    @classmethod
    def of(cls, records: list[Scored]) -> "_Scores | None":
        if not records:
            return None
        run = records[0].run
        return cls(run, analysis.risk_scores([s.record for s in records], run.sets))

    def complete(self, risk: str) -> dict[str, dict]:
        return analysis.paired(self.scores.get(risk, {}), self.run.main)[0]

    def means(self, risk: str, seed: int) -> dict[str, Estimate]:
        """metrics.json's risk_means[risk]: condition -> estimate."""
        complete = self.complete(risk)
        return analysis.condition_means(complete, self.run.main, seed) if complete else {}


def _scaled(risk: str, value: float | None) -> float | None:
    return None if value is None else analysis.SCALES[risk](value)


def _degradation(risk: str, condition: str):
    """The statistic of rows (base score, condition score): analysis.degradation of their
    means, in percent."""
    def statistic(rows: np.ndarray) -> float | None:
        means = {"base": Estimate(value=float(rows[:, 0].mean())),
                 condition: Estimate(value=float(rows[:, 1].mean()))}
        return analysis.degradation({risk: means})[risk][condition]
    return statistic


def _gains(scores: "_Scores", risk: str) -> dict[str, float]:
    """Per record the reflection gain: reflect - profile_retrieval on the 0-100 scale."""
    if not {"reflect", "profile_retrieval"} <= set(scores.run.main):
        return {}
    return {rid: _scaled(risk, s["reflect"]) - _scaled(risk, s["profile_retrieval"])
            for rid, s in scores.complete(risk).items()}


class PriskComparison(Comparison):
    record_model = EvalRecord

    def systems(self, records: ItemRecords[EvalRecord],
                manifest: Mapping[str, Any]) -> dict[str, list[Scored]]:
        """One system, named by the run's target model; a failed record is left out, as in
        metrics.json."""
        config = manifest.get("config") or {}
        model = (manifest.get("models") or {}).get("target")
        if not isinstance(model, str):
            raise InputError("the run's manifest.json names no target model (models.target)")
        conditions = conditions_for(list(config.get("conditions") or BASE_CONDITIONS),
                                    list(config.get("k_sweep") or []))
        ok = sorted(records.ok(), key=lambda r: r.record_id)
        run = RunScoring(conditions, _recorded_sets(ok, records.steps, conditions),
                         str(config.get("coding") or "treatment"))
        return {model: [Scored(r, run) for r in ok]}

    def item(self, record: Scored) -> str:
        return record.record.record_id

    def headlines(self, records: list[Scored]) -> dict[str, Headline]:
        """`<risk>.<condition>`: the 0-100 score (accuracy 0 or 100 per record: McNemar);
        `degradation.<risk>.<condition>`: % below base; `reflection_gain.<risk>`: points."""
        scores = _Scores.of(records)
        if scores is None:
            return {}
        out: dict[str, Headline] = {}
        for risk in HEADLINE_RISKS:
            complete = scores.complete(risk)
            if not complete:
                continue
            for condition in scores.run.main:
                out[f"{risk}.{condition}"] = Headline(
                    f"{LABELS[risk]} · {condition} (0-100)",
                    {rid: _scaled(risk, s[condition]) for rid, s in complete.items()},
                    binary=risk == "accuracy")
            for condition in scores.run.main[1:]:
                out[f"degradation.{risk}.{condition}"] = Headline(
                    f"{LABELS[risk]} · degradation from base, {condition} (%)",
                    {rid: (s["base"], s[condition]) for rid, s in complete.items()},
                    statistic=_degradation(risk, condition))
            if gains := _gains(scores, risk):
                out[f"reflection_gain.{risk}"] = Headline(
                    f"{LABELS[risk]} · reflection gain (points)", gains)
        return out

    def tables(self, systems: Mapping[str, list[Scored]], seed: int) -> list[Table]:
        scored = {name: s for name, records in systems.items()
                  if (s := _Scores.of(records)) is not None}
        main = [c for c in MAIN_ORDER if any(c in s.run.main for s in scored.values())]
        tables = [_score_table(scored, main, seed), _degradation_table(scored, main[1:], seed)]
        if "reflect" in main:
            tables.append(_gain_table(scored, seed))
        depths = sorted({c.forced_k for s in scored.values() for c in s.run.conditions
                         if c.forced_k is not None})
        if depths:
            tables.append(_sweep_table(scored, depths, seed))
        return [*tables, *_model_factor_tables(scored)]

    def figures(self, tables: list[Table]) -> list[tuple[bytes, str]]:
        """Per risk, each system's 0-100 score per condition (the paper's main table)."""
        table = tables[0]
        out = []
        for risk in TABLE_RISKS:
            bars = {row[0]: {c: None if cell is None else cell.value
                             for c, cell in zip(table.headers[2:], row[2:], strict=True)}
                    for row in table.rows if row[1] == risk}
            if bars:
                out.append((grouped_bars(bars, "score (0-100)", f"{LABELS[risk]} per condition"),
                            f"{LABELS[risk]}: each system's 0-100 score per condition"))
        return out

    def unit_text(self, records: list[Scored]) -> dict[str, tuple[str, str]]:
        return {s.record.record_id: (f"{s.record.risk} {s.record.record_id}: "
                                     f"{s.record.question}", _answers(s.record))
                for s in records}


def _answers(record: EvalRecord) -> str:
    """Each condition's answer (narrowing: its first sample) with its score where it has one."""
    return "\n".join(f"{name}{'' if answer.score is None else f' (score {answer.score})'}: "
                     f"{answer.answer}" for name, answer in record.conditions.items())


def _score_table(scored: Mapping[str, "_Scores"], main: list[str], seed: int) -> Table:
    rows = []
    for name, scores in scored.items():
        for risk in TABLE_RISKS:
            means = scores.means(risk, seed)
            if means:
                rows.append([name, risk, *(analysis.scaled_cell(risk, means.get(c)) for c in main)])
    return Table("PRISK: model x risk x condition, 0-100 (higher is safer; means over the "
                 "records scored in every condition, 95 % CI)", ["system", "risk", *main], rows)


def _degradation_table(scored: Mapping[str, "_Scores"], conditions: list[str],
                       seed: int) -> Table:
    rows = []
    for name, scores in scored.items():
        for risk in TABLE_RISKS:
            complete = scores.complete(risk)
            if not complete:
                continue
            cells = []
            for condition in conditions:
                if condition not in scores.run.main:
                    cells.append(None)
                    continue
                values = np.array([(s["base"], s[condition]) for s in complete.values()])
                statistic = _degradation(risk, condition)
                cells.append(Estimate.with_bounds(statistic(values), bootstrap_ci(
                    values, statistic, seed=seed), len(values)))
            rows.append([name, risk, *cells])
    return Table("Mean degradation from base (%): (base - condition) / base of the 0-100 "
                 "score (negative: better than base; 95 % bootstrap CI over records)",
                 ["system", "risk", *conditions], rows)


def _gain_table(scored: Mapping[str, "_Scores"], seed: int) -> Table:
    rows = [[name, risk, Estimate.of_mean(list(gains.values()), seed=seed)]
            for name, scores in scored.items() for risk in TABLE_RISKS
            if (gains := _gains(scores, risk))]
    return Table("Reflection gain: reflect - profile_retrieval, points of the 0-100 score "
                 "(95 % CI)", ["system", "risk", "reflection gain"], rows)


def _sweep_table(scored: Mapping[str, "_Scores"], depths: list[int], seed: int) -> Table:
    """Each risk's 0-100 score at every depth (the records scored there, as metrics.json's
    k_sweep) and its σ across depths (k_sweep_sigma: IRP, narrowing, sycophancy)."""
    rows = []
    for name, scores in scored.items():
        sigma = analysis.k_sweep_sigma(scores.scores, scores.run.conditions)
        for risk in analysis.SWEPT:
            cells = []
            for k in depths:
                values = [_scaled(risk, s[f"k{k}"]) for s in scores.scores.get(risk, {}).values()
                          if s.get(f"k{k}") is not None]
                cells.append(Estimate.of_mean(values, seed=seed) if values else None)
            if any(cells):
                rows.append([name, risk, *cells, sigma.get(risk)])
    return Table("Retrieval-depth sweep: 0-100 score at each k (memory only, retrieval forced) "
                 "and σ across k", ["system", "risk", *(f"k={k}" for k in depths), "σ over k"],
                 rows)


def _model_factor_tables(scored: Mapping[str, "_Scores"]) -> list[Table]:
    """score ~ P * M * model + (1 | model:record) per risk over every system's records scored
    in all four 2x2 cells (each risk in the lens's own units, as its per-run model)."""
    fits = {}
    for risk in TABLE_RISKS:
        table = _merged_rows(scored, risk)
        if table is not None:
            fits[risk] = fit_model_factor(table, coding=_coding(scored))
    if not fits:
        return []
    return [Table(f"Attribution with the model as a factor: score ~ P x M x model + "
                  f"(1 | model:record), {_coding(scored)} coding (reference: the first system; "
                  "Wald p, unadjusted)",
                  ["risk", "term", "β", "SE", "CI low", "CI high", "p"],
                  [[risk, term, e.value, e.se, *e.bounds, e.p]
                   for risk, fit in fits.items() for term, e in fit.effects.items()]),
            Table("Attribution with the model as a factor: variance components",
                  ["risk", "reference", "rows", "model x record groups", "record variance",
                   "residual variance"],
                  [[risk, fit.reference, fit.n_rows, fit.n_groups, fit.variance.record,
                    fit.variance.residual] for risk, fit in fits.items()])]


def _merged_rows(scored: Mapping[str, "_Scores"], risk: str) -> pd.DataFrame | None:
    """The systems' attribution rows with a model column; None unless two systems have all
    four cells and two records each, and the scores vary (else the fit is degenerate)."""
    parts = []
    for name, scores in scored.items():
        cells = analysis.two_by_two(scores.run.conditions)
        rows = analysis.attribution_rows(scores.scores.get(risk, {}), cells)
        if len(cells) == 4 and rows["record"].nunique() >= 2:
            parts.append(rows.assign(model=name))
    if len(parts) < 2:
        return None
    table = pd.concat(parts, ignore_index=True)
    return table if table["score"].nunique() > 1 else None


def _coding(scored: Mapping[str, "_Scores"]) -> str:
    """The runs' coding of P and M, treatment when they differ."""
    codings = {s.run.coding for s in scored.values()}
    return codings.pop() if len(codings) == 1 else "treatment"


COMPARISON = PriskComparison()
