"""How `personalens compare` reads `prefdisco eval` runs: a system is a run (its target model,
with the dialogue settings that differ from the paper's); its units are the instances, paired
across conditions as the lens pairs them (`analysis.pairing`) and across systems by instance.

Every figure is the lens's own: the tables are `summarise_scored` of the system's records (over
all of a run's items, its metrics.json), the headlines the per-instance values those figures
average, NormAlign the lens's `normalign_of_rows` of the (baseline, discovery, oracle) rows.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pydantic

from personalens.errors import InputError
from personalens.lenses.commands import Comparison, Headline, Table
from personalens.lenses.prefdisco.analysis import (
    NORMALIGN_CONDITIONS,
    Pairing,
    accuracy_drops,
    counts_for_accuracy,
    pairing,
    question_turns_and_gains,
    summarise_scored,
)
from personalens.lenses.prefdisco.evaluation import fixed_questions
from personalens.lenses.prefdisco.metrics import LinearFit, NormAlign
from personalens.lenses.prefdisco.options import EvalOptions
from personalens.lenses.prefdisco.records import PrefdiscoRecord
from personalens.lenses.prefdisco.scoring import linear_fit, normalign_of_rows
from personalens.report import grouped_bars, line_plot
from personalens.runs import ItemRecords
from personalens.stats.estimate import Estimate

# Options that change what the target does: a run that sets one away from its default is
# named with it, so runs of one model at two turn limits are two systems.
SYSTEM_OPTIONS = ("turns", "protocol", "user")
ALL_SYSTEMS = "all systems"  # the pooled row of a table (the paper's 61 of 210 cells)


@dataclass(frozen=True)
class RunSettings:
    """What the lens's summarise needs of the run's options."""

    conditions: tuple[str, ...]
    truncated: str
    min_gap: float
    turns: int


@dataclass(frozen=True)
class Scored:
    """A scored record with its run's settings (a system's records are these)."""

    record: PrefdiscoRecord
    run: RunSettings


def _settings(config: Mapping[str, Any]) -> tuple[RunSettings, EvalOptions]:
    # The run's options as recorded (an option added since takes its default); where its data
    # and output were does not matter here.
    recorded = {key: value for key, value in config.items()
                if key in EvalOptions.model_fields and key not in ("data", "out", "models")}
    try:
        options = EvalOptions.model_validate({**recorded, "data": ".", "out": "."})
    except pydantic.ValidationError as exc:
        error = exc.errors()[0]
        raise InputError("the run's manifest.json config is not a prefdisco eval's: "
                         f"{'.'.join(map(str, error['loc'])) or 'config'}: {error['msg']}") \
            from None
    return RunSettings(tuple(options.all_conditions), options.truncated,
                       options.normalign_min_gap, options.turns), options


def _name(manifest: Mapping[str, Any], options: EvalOptions) -> str:
    target = (manifest.get("models") or {}).get("target")
    if not isinstance(target, str):
        raise InputError("the run's manifest.json names no target model (models.target)")
    changed = [f"{field} {getattr(options, field)}" for field in SYSTEM_OPTIONS
               if getattr(options, field) != EvalOptions.model_fields[field].default]
    return " · ".join([target, *changed])


def _instances(scored: list[Scored]) -> list[tuple[str, str]]:
    """(instance, task) in the order the run recorded them (its plan order when its items
    finished in order: the order only moves the bootstrap's draws, never a value)."""
    return list(dict.fromkeys((s.record.instance, s.record.task) for s in scored))


def _pairing(scored: list[Scored]) -> Pairing:
    return pairing([s.record for s in scored], _instances(scored), list(scored[0].run.conditions))


def _summary(scored: list[Scored]) -> dict:
    """The lens's metrics of these records (judge agreement aside: one judge assumed)."""
    run = scored[0].run
    return summarise_scored([s.record for s in scored], n_failed=0,
                            instances=_instances(scored), conditions=list(run.conditions),
                            n_judges=1, min_gap=run.min_gap, truncated=run.truncated)


class NormAlignCell(Estimate):
    """A NormAlign as a table shows it: the estimate, and whether it is undefined."""

    undefined: bool


def _normalign_cell(value: NormAlign | None) -> NormAlignCell | None:
    return None if value is None else NormAlignCell.with_bounds(
        value.value, value.bounds, value.n, undefined=value.undefined)


def _value(cell: Estimate | None) -> float | None:
    return None if cell is None else cell.value


class PrefdiscoComparison(Comparison):
    record_model = PrefdiscoRecord

    def systems(self, records: ItemRecords[PrefdiscoRecord],
                manifest: Mapping[str, Any]) -> dict[str, list[Scored]]:
        """One system per run, named by its target model (and the dialogue options it changed):
        its scored records (the lens's pairing leaves a dropped one out, as metrics.json)."""
        run, options = _settings(manifest.get("config") or {})
        return {_name(manifest, options): [Scored(r, run) for r in records.ok()]}

    def item(self, record: Scored) -> str:
        return record.record.instance

    def headlines(self, records: list[Scored]) -> dict[str, Headline]:
        """NormAlign of discovery and of each fixed_<N> (paired permutation), then
        prefalign.<condition> (sign-flip) and accuracy.<condition> (McNemar), per instance."""
        if not records:
            return {}
        run = records[0].run
        pairs = _pairing(records)
        out: dict[str, Headline] = {}
        if set(NORMALIGN_CONDITIONS) <= set(pairs.main):
            for condition in ["discovery", *(c for c in run.conditions if c not in pairs.main)]:
                key = "normalign" if condition == "discovery" else f"normalign.{condition}"
                out[key] = Headline(
                    "NormAlign" + ("" if condition == "discovery" else f" {condition}"),
                    {k: tuple(pairs.by_instance[k][c].prefalign
                              for c in ("baseline", condition, "oracle"))
                     for k in pairs.instances(condition)},
                    statistic=lambda rows, gap=run.min_gap: normalign_of_rows(rows, gap))
        for condition in run.conditions:
            out[f"prefalign.{condition}"] = Headline(
                f"PrefAlign {condition}", {r.instance: r.prefalign
                                           for r in pairs.records(condition)})
        if {"baseline", "discovery"} <= set(run.conditions):
            out["accuracy_drop"] = Headline(
                "accuracy drop (baseline - discovery)", accuracy_drops(
                    pairs.records("baseline"), pairs.records("discovery"), run.truncated))
        for condition in run.conditions:
            out[f"accuracy.{condition}"] = Headline(
                f"accuracy {condition}", {r.instance: float(r.correctness.correct)
                                          for r in pairs.records(condition)
                                          if counts_for_accuracy(r, run.truncated)},
                binary=True)
        return out

    def tables(self, systems: Mapping[str, list[Scored]], seed: int) -> list[Table]:
        """The lens's figures (its own bootstrap, seed 0 as in metrics.json: `seed` is not
        used, so each figure is the run's)."""
        summaries = {name: _summary(records) for name, records in systems.items() if records}
        tables = [_normalign_table(summaries), _negative_table(summaries),
                  _conditions_table(summaries)]
        fixed = _fixed_table(summaries)
        if fixed is not None:
            tables.append(fixed)
        turns = {records[0].run.turns for records in systems.values() if records}
        if len(turns) > 1:
            tables.append(_turns_table(systems, summaries))
        tables.append(_questions_table(systems, summaries))
        return tables

    def figures(self, tables: list[Table]) -> list[tuple[bytes, str]]:
        by_title = {t.title.split(":")[0]: t for t in tables}
        per_task = by_title[NORMALIGN_TITLE]
        bars = {row[0]: {task: _value(cell) for task, cell in
                         zip(per_task.headers[1:], row[1:], strict=True)}
                for row in per_task.rows}
        out = [(grouped_bars(bars, "NormAlign", "NormAlign per task"),
                "NormAlign of discovery per task and system (the paper's main table)")]
        fixed = by_title.get(FIXED_TITLE)
        if fixed is not None:
            out.append((line_plot({row[0]: [(fixed_questions(c), _value(cell))
                                            for c, cell in zip(fixed.headers[1:], row[1:],
                                                               strict=True)]
                                   for row in fixed.rows}, "questions asked (N)", "NormAlign",
                                  "NormAlign vs N"),
                        "NormAlign of fixed_<N> against N per system"))
        turns = by_title.get(TURNS_TITLE)
        if turns is not None:
            series: dict[str, list[tuple[float, float | None]]] = {}
            for name, limit, cell, _ in turns.rows:  # one line per target model
                series.setdefault(name.split(" · ")[0], []).append((limit, _value(cell)))
            out.append((line_plot(series, "turn limit", "NormAlign", "NormAlign vs turn limit"),
                        "NormAlign of discovery against the turn limit per target model"))
        return out

    def unit_text(self, records: list[Scored]) -> dict[str, tuple[str, str]]:
        out: dict[str, list[str]] = {}
        for scored in records:
            r = scored.record
            correct = "unscored" if r.correctness is None else (
                "correct" if r.correctness.correct else "wrong")
            out.setdefault(r.instance, []).append(
                f"[{r.condition}] PrefAlign {_number(r.prefalign)}, {correct}"
                + (", truncated" if r.truncated else "") + f"\n{r.response or '(no answer)'}")
        return {instance: (f"instance {instance}", "\n\n".join(texts))
                for instance, texts in out.items()}


NORMALIGN_TITLE = "NormAlign per model x task"
FIXED_TITLE = "NormAlign against N"
TURNS_TITLE = "NormAlign against the turn limit"


def _number(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _normalign_table(summaries: dict[str, dict]) -> Table:
    tasks = sorted({task for m in summaries.values() for task in m.get("normalign", {})
                    if task != "overall"})
    return Table(f"{NORMALIGN_TITLE}: discovery, 100 x (PA_d - PA_b) / (PA_o - PA_b), "
                 "95 % CI (the paper's main table)", ["system", *tasks, "overall"],
                 [[name, *(_normalign_cell(m.get("normalign", {}).get(t))
                           for t in [*tasks, "overall"])] for name, m in summaries.items()])


def _negative_table(summaries: dict[str, dict]) -> Table:
    """Per system and over all systems: the model x task cells with negative NormAlign, of
    the defined cells whose oracle is not below the baseline (as metrics.json counts them)."""
    rows, totals = [], [0, 0, 0, 0]
    for name, metrics in summaries.items():
        cells = [v for task, v in metrics.get("normalign", {}).items() if task != "overall"]
        counted = [v for v in cells if not v.undefined and not v.oracle_below_baseline]
        counts = [sum(bool(v.value < 0) for v in counted), len(counted),
                  sum(v.undefined for v in cells), sum(v.oracle_below_baseline for v in cells)]
        totals = [t + c for t, c in zip(totals, counts, strict=True)]
        rows.append([name, metrics.get("negative_normalign_share"), *counts])
    rows.append([ALL_SYSTEMS, totals[0] / totals[1] if totals[1] else None, *totals])
    return Table("Share of model x task cells with negative NormAlign (undefined cells and "
                 "cells whose oracle is below the baseline counted apart)",
                 ["system", "negative share", "negative", "cells counted", "undefined",
                  "oracle below baseline"], rows)


def _conditions_table(summaries: dict[str, dict]) -> Table:
    conditions = list(dict.fromkeys(c for m in summaries.values() for c in m["prefalign"]))
    return Table("PrefAlign (1-5) and accuracy per condition (paired instances, 95 % CI)",
                 ["system", *(f"PrefAlign {c}" for c in conditions),
                  *(f"accuracy {c}" for c in conditions)],
                 [[name, *(m["prefalign"][c].plain() if c in m["prefalign"] else None
                           for c in conditions),
                   *(m["accuracy"][c].plain() if c in m["accuracy"] else None
                     for c in conditions)] for name, m in summaries.items()])


def _fixed_table(summaries: dict[str, dict]) -> Table | None:
    fixed = sorted({f for m in summaries.values() for f in m.get("normalign_fixed", {})},
                   key=fixed_questions)
    if not fixed:
        return None
    return Table(f"{FIXED_TITLE}: NormAlign of fixed_<N> (exactly N questions), each paired "
                 "on its own with baseline and oracle", ["system", *fixed],
                 [[name, *(_normalign_cell(m.get("normalign_fixed", {}).get(f, {})
                                           .get("overall")) for f in fixed)]
                  for name, m in summaries.items()])


def _turns_table(systems: Mapping[str, list[Scored]], summaries: dict[str, dict]) -> Table:
    rows = sorted(([name, systems[name][0].run.turns,
                    _normalign_cell(m.get("normalign", {}).get("overall")),
                    (m["questions_asked"].get("discovery") or {}).get("turns")]
                   for name, m in summaries.items()), key=lambda row: row[1])
    return Table(f"{TURNS_TITLE}: discovery under each run's --turns",
                 ["system", "turn limit", "NormAlign", "question turns (discovery)"], rows)


def _questions_table(systems: Mapping[str, list[Scored]], summaries: dict[str, dict]) -> Table:
    """Question turns in discovery against the PrefAlign gain over baseline: the lens's fit per
    system, and pooled over every system's paired instances."""
    rows, turns, gains = [], [], []
    for name, metrics in summaries.items():
        pairs = _pairing(systems[name])
        if {"baseline", "discovery"} <= set(pairs.main):
            x, y = question_turns_and_gains(pairs.records("discovery"), pairs.records("baseline"))
            turns += x
            gains += y
        rows.append([name, (metrics["questions_asked"].get("discovery") or {}).get("turns"),
                     *_fit_cells(metrics.get("question_turns_vs_gain"))])
    rows.append([ALL_SYSTEMS, sum(turns) / len(turns) if turns else None,
                 *_fit_cells(linear_fit(turns, gains))])
    return Table("Question turns (discovery) against the PrefAlign gain over baseline: "
                 "least-squares slope per system and pooled",
                 ["system", "question turns", "slope", "intercept", "r", "p", "n"], rows)


def _fit_cells(fit: LinearFit | None) -> list:
    return [None] * 5 if fit is None else [fit.slope, fit.intercept, fit.r, fit.p, fit.n]


COMPARISON = PrefdiscoComparison()
