"""The prefdisco sections of report.html: per-task table, NormAlign bars with CIs (and a table
per fixed_<N>), PrefAlign, accuracy and truncated answers per condition, question turns vs
gain, data notes, and every item in the browser.

A plot with nothing to draw is replaced by the words "nothing scored". The browser shows what
happened in each (instance, condition), as Inspect's log viewer does: the sample's inputs
(problem and options, gold answer, persona, preference values and importances), what the target
was told, every message in order (each discovery turn, rejected and repaired ones included, and
the simulated user's reply), the final answer, the correctness check, and each criterion the
judge scored with its levels and verdicts; a failed item shows its failure and the exchange up
to it.
"""

from collections.abc import Mapping

from personalens.lenses.prefdisco import protocol, release_protocol
from personalens.lenses.prefdisco.analysis import question_turns_and_gains
from personalens.lenses.prefdisco.evaluation import target_messages
from personalens.lenses.prefdisco.metrics import NormAlign, PrefdiscoMetrics, normalign_text
from personalens.lenses.prefdisco.options import EvalOptions
from personalens.lenses.prefdisco.records import Correctness, Criterion, PrefdiscoRecord, Turn
from personalens.lenses.prefdisco.release_format import Instance
from personalens.report import (
    BrowserEntry,
    BrowserItems,
    HtmlReport,
    bars_with_ci,
    failure_fields,
    first_entries,
    grouped_bars,
    scatter,
)
from personalens.runs import ItemFailure, ItemRecords

FACETS = ["condition", "task", "correct", "judge"]
_CORRECTNESS_TEXT = {
    "judge": "Accuracy is the judge's verdict against the gold answer (--correctness judge, "
             "the release's; no ANSWER: line was asked for).",
    "rules": "Accuracy is checked by rule on each answer's ANSWER: line (--correctness rules; "
             "a judge only for open-ended golds)."}
NOTHING_SCORED = "nothing scored"


def report_sections(report: HtmlReport, metrics: PrefdiscoMetrics,
                    records: ItemRecords[PrefdiscoRecord], min_gap: float) -> None:
    conditions, pa, acc = metrics.conditions, metrics.prefalign, metrics.accuracy
    cut = metrics.truncated
    report.heading("PrefAlign and accuracy per condition")
    report.paragraph(f"Means over the {metrics.n_instances} instance(s) scored in every "
                     "condition (paired; a fixed_<N> condition is paired with baseline and "
                     "oracle on its own), with 95 % bootstrap CIs. PrefAlign is on the 1–5 "
                     f"scale (scoring: {metrics.scoring}; protocol: {metrics.protocol}). "
                     + _CORRECTNESS_TEXT.get(metrics.correctness or "rules", "") + " "
                     f"{sum(t.count for t in cut.values())} answer(s) were cut off at the "
                     "token limit (truncated): "
                     + ("left out of accuracy, still judged for PrefAlign."
                        if metrics.truncated_answers == "exclude" else
                        "graded like any other (--truncated score)."))
    report.table(["condition", "PrefAlign", "CI low", "CI high", "accuracy", "CI low",
                  "CI high", "unparsed answers", "truncated", "truncated share",
                  "n (accuracy)", "n"],
                 [[c, pa[c].value, *pa[c].bounds, acc[c].value, *acc[c].bounds,
                   acc[c].n_unparsed, cut[c].count, cut[c].share, acc[c].n, pa[c].n]
                  for c in conditions])
    if metrics.accuracy_rules:
        rules = metrics.accuracy_rules
        report.paragraph("The rules' accuracy too, over the answers that wrote an ANSWER: line "
                         "though none was asked for (accuracy_rules; not the headline):")
        report.table(["condition", "accuracy (rules)", "CI low", "CI high", "unparsed", "n"],
                     [[c, rules[c].value, *rules[c].bounds, rules[c].n_unparsed, rules[c].n]
                      for c in conditions if c in rules])
    main = [c for c in conditions if not c.startswith("fixed_")]  # per task: main pairing
    report.heading("Per task")
    report.table(["task", "n", *[f"PrefAlign {c}" for c in main],
                  *[f"accuracy {c}" for c in main],
                  "NormAlign" if metrics.normalign else "–"],
                 [[task, row.n, *[row.prefalign[c] for c in main],
                   *[row.accuracy[c] for c in main],
                   _normalign_cell(metrics.normalign.get(task))]
                  for task, row in metrics.per_task.items()])
    if metrics.normalign:
        _normalign_section(report, metrics, min_gap)
    for condition, values in metrics.normalign_fixed.items():
        report.heading(f"NormAlign of {condition}")
        report.paragraph(f"100 × ({condition} − baseline) / (oracle − baseline) on the "
                         f"instances scored in baseline, oracle and {condition}.")
        report.table(["task", "NormAlign", "CI low", "CI high", f"{condition} − baseline",
                      "oracle − baseline", "n"],
                     [[task, _normalign_cell(v), *v.bounds, v.discovery_gain, v.oracle_gain,
                       v.n] for task, v in values.items()])
    _questions_section(report, metrics, records)
    _data_notes(report, metrics)


def _normalign_cell(value: NormAlign | None) -> object:
    if value is None:
        return None
    return normalign_text(value) if value.undefined else value.value


def _normalign_section(report: HtmlReport, metrics: PrefdiscoMetrics, min_gap: float) -> None:
    report.heading("NormAlign")
    report.paragraph("100 × (discovery − baseline) / (oracle − baseline) on paired PrefAlign "
                     "means: 0 = no better than not asking, 100 = as good as being told. "
                     f"Undefined where oracle and baseline are within {min_gap:g} (the raw gains "
                     "are shown); bootstrap resamples where it is undefined are left out of the "
                     "CI and counted. A task whose oracle scored below its baseline is flagged "
                     "(its sign no longer says whether discovery helped) and left out of the "
                     "share of tasks with negative NormAlign: "
                     f"{_pct(metrics.negative_normalign_share)} of "
                     f"{metrics.negative_normalign_tasks} task(s); over every task with a "
                     "defined NormAlign, as the paper counts: "
                     f"{_pct(metrics.negative_normalign_share_all)} of "
                     f"{metrics.negative_normalign_tasks_all}.")
    report.table(["task", "NormAlign", "CI low", "CI high", "discovery − baseline",
                  "oracle − baseline", "n", "resamples undefined", "oracle below baseline"],
                 [[task, _normalign_cell(v), *v.bounds, v.discovery_gain, v.oracle_gain, v.n,
                   v.undefined_resamples,
                   "yes" if v.oracle_below_baseline else ""]
                  for task, v in metrics.normalign.items()])
    if not any(v.n for v in metrics.normalign.values()):
        report.paragraph(f"NormAlign per task: {NOTHING_SCORED} (no instance was scored in "
                         "every condition).")
        return
    report.figure(bars_with_ci({task: (v.value, *v.bounds)
                                for task, v in metrics.normalign.items()},
                               "NormAlign", "NormAlign per task (95 % CI)"),
                  "NormAlign per task with paired bootstrap CIs")


def _questions_section(report: HtmlReport, metrics: PrefdiscoMetrics,
                       records: ItemRecords[PrefdiscoRecord]) -> None:
    if not metrics.questions_asked:
        return
    report.heading("Questions asked and preferences discovered")
    report.table(["condition", "question turns", "questions (?)", "preferences revealed",
                  "share of preferences"],
                 [[c, q.turns, q.questions, metrics.preferences_discovered[c],
                   metrics.preferences_discovered_share[c]]
                  for c, q in metrics.questions_asked.items()])
    scored = [c for c in metrics.conditions if metrics.prefalign[c].value is not None]
    if scored:
        report.figure(grouped_bars({c: {"PrefAlign / 5": metrics.prefalign[c].value / 5,
                                        "accuracy": metrics.accuracy[c].value}
                                    for c in scored}, "score", "By condition"),
                      "PrefAlign (divided by 5) and accuracy per condition")
    else:
        report.paragraph(f"PrefAlign and accuracy by condition: {NOTHING_SCORED} (no instance "
                         "was scored in every condition).")
    gain = metrics.question_turns_vs_gain
    if gain is not None:
        report.paragraph(f"Question turns (the target's ask actions) vs PrefAlign gain over "
                         f"baseline (discovery): Pearson r = {_num(gain.r)}, p = "
                         f"{_num(gain.p)}, slope = {_num(gain.slope)} per "
                         f"question turn, n = {gain.n}.")
        ok = {(r.instance, r.condition): r for r in records.ok()
              if r.prefalign is not None and not r.dropped}
        paired = [i for (i, c) in ok if c == "discovery" and (i, "baseline") in ok]
        turns, gains = question_turns_and_gains([ok[(i, "discovery")] for i in paired],
                                                [ok[(i, "baseline")] for i in paired])
        if paired:
            report.figure(scatter(turns, gains, "question turns", "PrefAlign gain over "
                                  "baseline", "Question turns vs gain"),
                          "One point per instance scored in baseline and discovery")
        else:
            report.paragraph(f"Question turns vs gain: {NOTHING_SCORED}.")


def _data_notes(report: HtmlReport, metrics: PrefdiscoMetrics) -> None:
    report.heading("Data notes")
    judge = metrics.judge
    report.paragraph(f"Judge: {_pct(judge.invalid_rate)} of {judge.replies} "
                     f"replies invalid; {judge.excluded_criteria} criterion score(s) "
                     "excluded (their weight renormalised over the rest).")
    agreement = judge.agreement
    if agreement:
        report.paragraph(f"Judge agreement ({agreement.method}): {_num(agreement.value)} "
                         f"over {agreement.n} criterion scores.")
    if metrics.renormalised_weights:
        report.paragraph(f"Weights renormalised to sum to 1 (they did not) in "
                         f"{len(metrics.renormalised_weights)} instance(s): "
                         f"{', '.join(metrics.renormalised_weights[:30])}.")
    else:
        report.paragraph("Every instance's weights summed to exactly 1: renormalising changed "
                         "nothing.")
    if metrics.data_warnings:
        report.paragraph(f"Data warnings in {len(metrics.data_warnings)} instance(s):")
        report.table(["instance", "warning"], [[key, "; ".join(warnings)] for key, warnings
                                               in metrics.data_warnings.items()])
    if metrics.unpaired:
        report.paragraph(f"{len(metrics.unpaired)} instance(s) left out of every condition's "
                         "means (not scored in some condition):")
        report.table(["instance", "why"], [[u.instance, "; ".join(u.reasons)]
                                           for u in metrics.unpaired])
    for condition, missing in metrics.unpaired_fixed.items():
        if missing:
            report.paragraph(f"{len(missing)} instance(s) left out of {condition}'s means and "
                             "NormAlign (not scored in it, or in baseline or oracle):")
            report.table(["instance", "why"], [[u.instance, "; ".join(u.reasons)]
                                               for u in missing])
    if metrics.skipped_invalid:
        report.paragraph(f"{len(metrics.skipped_invalid)} invalid record(s) skipped "
                         "(--skip-invalid):")
        columns = ["where", "problem_id", "field", "problem"]
        report.table(columns, [[getattr(s, c) for c in columns]
                               for s in metrics.skipped_invalid])


def browser_entries(records: ItemRecords[PrefdiscoRecord],
                    instances: Mapping[str, Instance], options: EvalOptions) -> BrowserItems:
    """Every (instance, condition), failed ones included: inputs, messages in order, final
    answer, correctness, each criterion's levels and verdicts; failed items first, then wrong
    answers. `instances` (by key) gives the inputs; `options` the prompts the target was given
    (discovery budget, protocol, whether an ANSWER: line was asked for)."""
    order = {"failed": 0, "truncated": 1, "wrong": 2, "unparsed": 3}

    def entries():
        for item in records:
            failure = item if isinstance(item, ItemFailure) else None
            record = records.produced(item) if failure else item
            if record is not None:
                yield _entry(record, failure, instances[record.instance], options)

    return first_entries((((order.get(e.facets["correct"], 4), e.title), e)
                          for e in entries()), FACETS)


def _entry(record: PrefdiscoRecord, failure: ItemFailure | None, instance: Instance,
           options: EvalOptions) -> BrowserEntry:
    fields = _inputs(instance)
    first = target_messages(instance, record.condition, options.turns, options.protocol,
                            options.asks_answer_line)[0]
    if first["role"] == "system":
        fields.append(("target's system prompt", first["content"]))
    if failure:
        fields += failure_fields(failure)
    for index, turn in enumerate(record.transcript):
        fields += _turn_fields(index + 1, turn)
    # A failed item's turn that could not be completed: every reply it got.
    for number, rejected in enumerate(record.rejected, start=1):
        fields.append((f"turn {len(record.transcript) + 1}: rejected reply {number} "
                       f"({rejected.problem})", rejected.raw))
    if options.protocol == "release" and record.transcript and record.response is not None:
        fields.append(("final prompt (user)", release_protocol.final_prompt(
            instance.problem, options.asks_answer_line)))
    if record.raw:  # a reply whose protocol wrapper was stripped
        fields.append(("target", record.raw))
    if record.response is not None:
        cut = ", TRUNCATED at the token limit" if record.truncated else ""
        fields.append((f"final answer (judged{cut})", record.response))
    graded = record.correctness
    if graded is not None:
        fields.append(("correctness", _correctness_text(graded, instance)))
    if record.correctness_rules is not None:
        fields.append(("correctness by the rules (not counted in accuracy)",
                       _correctness_text(record.correctness_rules, instance)))
    fields += [_criterion_field(criterion, instance) for criterion in record.criteria]
    correct = ("failed" if failure else "truncated" if record.truncated
               else "unparsed" if graded and graded.unparsed
               else "right" if graded and graded.correct else "wrong")
    flagged = any(c.score is None for c in record.criteria)
    outcome = (f"FAILED ({failure.kind})" if failure else "PrefAlign "
               + ("–" if record.prefalign is None else f"{record.prefalign:.2f}"))
    facets = {"condition": record.condition, "task": record.task, "correct": correct,
              "judge": "dropped" if record.dropped else "flagged" if flagged else "clean"}
    return BrowserEntry(title=f"{record.instance} · {record.condition} · {outcome}",
                        fields=fields, facets=facets)


def _inputs(instance: Instance) -> list[tuple[str, str]]:
    problem = instance.problem
    weights = {c.preference: c.normalised_weight for c in instance.criteria}
    preferences = []
    for name, preference in instance.preferences.items():
        importance, weight = preference.get("local_importance"), weights.get(name)
        notes = ", ".join([*([f"importance {importance}"] if importance is not None else []),
                           *([f"weight {weight:.2f}"] if weight is not None else [])])
        description = preference.get("description")
        preferences.append(f"- {name}: {preference.get('value')}" + (f" ({notes})" if notes else "")
                           + (f"\n  {description}" if description else ""))
    return [("problem", protocol.problem_text(problem)),
            ("gold answer", f"{problem.gold} ({problem.kind})"),
            ("persona", protocol.render_persona(instance.persona)),
            ("preferences (value, importance, weight)", "\n".join(preferences))]


def _turn_fields(number: int, turn: Turn) -> list[tuple[str, str]]:
    fields = [(f"turn {number}: rejected reply {i} ({rejected.problem})", rejected.raw)
              for i, rejected in enumerate(turn.rejected, start=1)]
    action = "question" if turn.action == "ask" else "final answer"
    repaired = f", repaired: {turn.repaired}" if turn.repaired else ""
    fields.append((f"turn {number}: target ({action}{repaired})", turn.raw))
    if turn.reply is not None:
        revealed = ", ".join(turn.revealed or []) or "none"
        fields.append((f"turn {number}: user (revealed: {revealed})", turn.reply))
    elif turn.action == "ask":
        fields.append((f"turn {number}: user", "(no reply: the item failed here)"))
    return fields


def _correctness_text(correctness: Correctness, instance: Instance) -> str:
    gold = f" (gold {instance.problem.gold})"
    verdict = "right" if correctness.correct else "wrong"
    if correctness.judged:
        return f"judged {verdict}{gold}: {correctness.justification or ''}"
    if correctness.unparsed:
        return f"unparsed: no readable ANSWER line{gold}"
    return f"ANSWER read as {correctness.parsed!r}{gold}: {verdict}"


def _criterion_field(criterion: Criterion, instance: Instance) -> tuple[str, str]:
    score = "excluded" if criterion.score is None else f"{criterion.score:g}"
    label = f"judge · {criterion.preference} (w={criterion.normalised_weight:.2f}): {score}"
    value = instance.preferences[criterion.preference].get("value")  # validated on load
    lines = [f"criterion: {criterion.description}",
             *([f"user's value: {value}"] if value is not None else []),
             *[f"level {level.score}: {level.description}" for level in criterion.levels]]
    for number, verdict in enumerate(criterion.verdicts, start=1):
        given = "excluded" if verdict.score is None else f"{verdict.score:g}"
        lines.append(f"verdict {number}: {given} after {verdict.attempts} attempt(s)"
                     + (f" — {verdict.justification}" if verdict.justification else "")
                     + (f" [{verdict.problem}]" if verdict.problem else ""))
        if verdict.score is None or verdict.problem:
            lines.append(f"  judge's reply: {verdict.raw}")
    return label, "\n".join(lines)


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f} %"


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}"
