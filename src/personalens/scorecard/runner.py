"""Running a scorecard: the population and builds once, then every lens for every system,
with a display of lenses x systems; then scorecard.json and scorecard.html.

A run that does not finish (failed items) is marked in the card and the scorecard exits 3,
as a lens run does; rerunning the command resumes every unfinished run.
"""

import json
from collections.abc import Callable

from personalens.errors import InputError
from personalens.lenses.commands import resolve
from personalens.runs import write_atomic
from personalens.scorecard import judge_audits
from personalens.scorecard.card import build_card
from personalens.scorecard.page import render
from personalens.scorecard.stages import Plan, card
from personalens.stats.multiple_testing import Method

Echo = Callable[[str], None]


def run_scorecard(plan: Plan, *, correction: Method = "holm", seed: int = 0,
                  echo: Echo = print, progress: bool = True,
                  audit_judges: bool = False) -> tuple[dict, bool]:
    """Runs (or resumes) every stage, then writes the card; (card, every run complete)."""
    for stage in plan.preparation():
        echo(f"scorecard: {stage.label} -> {stage.out}")
        try:
            outcome = resolve(stage.command.run)(stage.options, progress=progress)
        except InputError as exc:  # found only once the stage's input exists
            raise InputError(f"{stage.label}: {exc}") from None
        if not outcome.complete:
            raise Incomplete(f"{stage.label} did not finish ({stage.out}); rerun the same "
                             "command to resume it")
    statuses: dict[tuple[str, str], str] = {}
    notes: list[str] = []
    pairs = [(lens, system) for lens in plan.lenses for system in plan.systems]
    for done, (lens, system) in enumerate(pairs):
        key = lens, system.name
        statuses[key] = "running"
        echo(grid(plan, statuses, done, len(pairs)))
        try:
            stage = plan.evaluation(lens, system)
            outcome = resolve(stage.command.run)(stage.options, progress=progress)
        except InputError as exc:  # e.g. a lens whose data it refuses: marked, not fatal
            statuses[key] = "not run"
            notes.append(f"{lens} · {system.name}: not run: {exc}")
            echo(f"scorecard: {notes[-1]}")
            continue
        statuses[key] = _status(outcome)
        if statuses[key] == NO_ITEMS:
            notes.append(f"{lens} · {system.name}: no items: its data holds none (see the "
                         "build's report under data/)")
    echo(grid(plan, statuses, len(pairs), len(pairs)))
    card = build_card(plan, statuses, correction=correction, seed=seed)
    card["notes"] = notes + card["notes"]
    if audit_judges:
        audits = judge_audits.run_audits(plan, statuses, echo)
        card["judge_audit"] = judge_audits.card_section(plan, audits)
        judge_audits.mark_pairs(card)
    plan.out.mkdir(parents=True, exist_ok=True)
    write_atomic(plan.out / "scorecard.json", json.dumps(card, indent=1))
    write_atomic(plan.out / "scorecard.html", render(card))
    # "not run" (its data refused) is not complete: the card is missing a lens it was asked for.
    return card, all(s in ("complete", NO_ITEMS) for s in statuses.values())


NO_ITEMS = "no items"


def _status(outcome) -> str:
    if outcome.tally.n_planned == 0:
        return NO_ITEMS
    return "complete" if outcome.complete else "incomplete"


class Incomplete(Exception):
    """A shared run (the population, a build) did not finish: nothing after it can run."""


def grid(plan: Plan, statuses: dict[tuple[str, str], str], done: int, total: int) -> str:
    """The display: a row per system, a column per lens, each run's status."""
    width = max(len(s.name) for s in plan.systems) + 2
    head = "".join(f"{card(lens).group:>12}" for lens in plan.lenses)
    lines = [f"scorecard: {done} of {total} runs done", " " * width + head]
    for system in plan.systems:
        cells = "".join(f"{statuses.get((lens, system.name), '·'):>12}"
                        for lens in plan.lenses)
        lines.append(f"{system.name:<{width}}{cells}")
    return "\n".join(lines)
