"""The prisk sections of report.html: risk x condition means with CIs, the attribution model,
an interaction plot per risk, narrowing coverage, exclusion gaps, the k-sweep, and every
response in the browser with its scores, reasons and retrieved memories."""

from collections.abc import Iterable, Iterator

from personalens.lenses.prisk import judging
from personalens.lenses.prisk.analysis import (
    NARROWING_KEYS,
    NORMALISED,
    SWEPT,
    narrowing_coverage,
)
from personalens.lenses.prisk.answer_sets import AnswerSets
from personalens.lenses.prisk.attribution import cell_plots, fit_tables
from personalens.lenses.prisk.conditions import Condition
from personalens.lenses.prisk.metrics import PriskMetrics
from personalens.lenses.prisk.prompts import answer_messages, question_text, reflect_messages
from personalens.lenses.prisk.records import Answer, EvalRecord, PriskRecord
from personalens.report import (
    BrowserEntry,
    BrowserItems,
    HtmlReport,
    bars_with_ci,
    failure_fields,
    first_entries,
    grouped_bars,
    line_plot,
)
from personalens.runs import ItemFailure, ItemRecords

FACETS = ["risk", "condition", "retrieved", "status"]
EXCLUSION_METHODS = {"query-bh": "Benjamini–Hochberg within each query",
                     "report-holm": "Holm over every cell of the report",
                     "report-bh": "Benjamini–Hochberg over every cell of the report"}


def report_sections(report: HtmlReport, metrics: PriskMetrics) -> None:
    _means(report, metrics)
    _attribution(report, metrics)
    _narrowing(report, metrics)
    _sycophancy(report, metrics)
    _k_sweep(report, metrics)


def _means(report: HtmlReport, metrics: PriskMetrics) -> None:
    report.heading("Risk × condition")
    report.paragraph("Means over the records scored in every condition (paired), with 95 % "
                     "bootstrap CIs. IRP is the 1–5 judge score (5 = no irrelevant "
                     "personalisation); accuracy is rule-based (unparsed answers are wrong); "
                     "agreement (AITA posts whose poster was in the wrong, YTA) and framing "
                     "are 1–5 (5 = not sycophantic), and sycophancy pools them on the same "
                     "1–5 (the paper's 0–100 is (s − 1)/4 × 100, in the degradation table); "
                     "agreement_nta is agreement on the NTA posts, apart from every headline; "
                     "narrowing is UIR.")
    report.table(["risk", "condition", "mean", "CI low", "CI high", "n"],
                 [[risk, c, v.value, *v.bounds, v.n]
                  for risk, by_condition in metrics.risk_means.items()
                  for c, v in by_condition.items()])
    if metrics.degradation:
        report.paragraph("Degradation from base: (base − condition) / base × 100 on each risk's "
                         "0–100 score (higher = safer); negative = better than base.")
        report.table(["risk", *[c for c in metrics.conditions if c != "base"
                                and not _swept(c)]],
                     [[risk, *[by.get(c) for c in metrics.conditions if c != "base"
                               and not _swept(c)]]
                      for risk, by in metrics.degradation.items()])
    if metrics.reflection_gain:
        report.paragraph("Self-reflection gain (reflect − profile_retrieval, points of the 0–100 "
                         "score): " + ", ".join(f"{risk} {_fmt(gain)}" for risk, gain in
                                                metrics.reflection_gain.items()) + ".")
    for risk, by_condition in metrics.risk_means.items():
        caption = f"{risk}: mean per condition with 95 % CI"
        if _scored(v.value for v in by_condition.values()):
            report.figure(bars_with_ci({c: (v.value, *v.bounds)
                                        for c, v in by_condition.items()}, risk, risk), caption)
        else:
            report.paragraph(f"{caption}: nothing scored (no record was scored in every "
                             "condition).")
    if any(metrics.truncated.values()):
        report.paragraph("Replies cut off at --max-tokens (answers and narrowing samples), "
                         "counted apart; a cut-off benchmark answer has no accuracy score unless "
                         "--truncated-answers score: " + ", ".join(
                             f"{c} {n}" for c, n in metrics.truncated.items()) + ".")
    if metrics.unpaired:
        report.paragraph("Left out of the means (not scored in every condition): " + "; ".join(
            f"{risk}: {', '.join(ids[:20])}" for risk, ids in metrics.unpaired.items() if ids))


def _attribution(report: HtmlReport, metrics: PriskMetrics) -> None:
    if not metrics.lmm:
        return
    report.heading("Attribution: score ~ P × M + (1 | record)")
    families = metrics.lmm_families
    report.paragraph(f"REML fit per risk, each in its own units (sycophancy pooled on the "
                     f"judge's 1–5); p adjusted ({metrics.correction}) across risks × effects "
                     "within each family: " + "; ".join(
                         f"{name}: {', '.join(risks)}" for name, risks in families.items())
                     + "; partial η² from the repeated-measures ANOVA.")
    fit_tables(report, metrics.lmm, "risk", "CI")
    cell_plots(report, metrics.cell_means)


def _narrowing(report: HtmlReport, metrics: PriskMetrics) -> None:
    if not metrics.narrowing:
        return
    report.heading("Narrowing")
    report.table(["condition", *NARROWING_KEYS, "n"],
                 [[c, *[getattr(v, k) for k in NARROWING_KEYS], v.n]
                  for c, v in metrics.narrowing.items()])
    coverage = {k: {c: getattr(v, k) for c, v in metrics.narrowing.items()}
                for k in ("cr_union", "uir", "jaccard")}
    caption = "Coverage (CR over the union of samples), useful-item recall (UIR) and Jaccard " \
              "per condition"
    if _scored(x for by_condition in coverage.values() for x in by_condition.values()):
        report.figure(grouped_bars(coverage, "share", "coverage"), caption)
    else:
        report.paragraph(f"{caption}: nothing scored (every ratio is undefined).")
    for condition, n in metrics.narrower.items():
        report.paragraph(
            f"{condition}: {n.personas_narrower} of {n.personas} personas got narrower "
            f"answers than base (mean RelCR < 1, each response against the base's union), "
            f"{n.records_narrower} of {n.records} records; lowest RelCR "
            f"{_fmt(n.min_relcr)} ({n.min_relcr_record}). Union against union: "
            f"{n.personas_narrower_union} of {n.personas_union} personas.")
    if metrics.narrowing_records:
        shown = [c for c in metrics.conditions if not _swept(c)]
        report.table(["record", *[f"{c} {k}" for c in shown for k in ("CR", "UIR", "RelCR")]],
                     [[rid, *[getattr(by[c], k) if c in by else None for c in shown
                              for k in ("cr_union", "uir", "relcr")]]
                      for rid, by in metrics.narrowing_records.items()])
    gaps = [(f"{query} · {item} · {attr}={group}", cell)
            for query, items in metrics.aer.items() for item, attrs in items.items()
            for attr, groups in attrs.items() for group, cell in groups.items()
            if cell.gap is not None]
    if gaps:
        gaps.sort(key=lambda g: -abs(g[1].gap))
        method = EXCLUSION_METHODS[metrics.exclusion_correction]
        report.paragraph(f"Exclusion gaps under {metrics.exclusion_condition}, per query: rate at "
                         "which a group's answers leave out an item useful to the user (A ∖ C), "
                         "against the query's other records (groups: gender, age band, economic "
                         "status low / middle / high, health healthy / unwell, other for text "
                         f"the mapping cannot place); Fisher's exact test, {method}. "
                         "* = p_adj < 0.05.")
        report.table(["query · item · group", "rate in", "rate out", "gap", "odds ratio", "p",
                      "p adj"],
                     [[name, c.rate_in, c.rate_out, c.gap, c.odds_ratio, c.p, c.p_adj]
                      for name, c in gaps[:40]])
        top = gaps[:15]
        report.figure(grouped_bars({"gap": {(("* " if (c.p_adj or 1) < 0.05 else "") + name)
                                            [:40]: abs(c.gap) for name, c in top}},
                                   "|exclusion gap|", "largest exclusion gaps"),
                      f"Largest exclusion gaps (* significant after {method})")
    if metrics.narrowing_failures:
        report.paragraph("Narrowing verdicts that failed (records left out): " + "; ".join(
            f"{f.key} ({f.kind})" for f in metrics.narrowing_failures))


def _sycophancy(report: HtmlReport, metrics: PriskMetrics) -> None:
    if not any(v.n_agreement or v.n_framing for v in metrics.sycophancy.values()):
        return
    pis = metrics.pis.by_condition if metrics.pis is not None else {}
    report.heading("Sycophancy")
    report.table(["condition", "agreement rate (YTA posts, score ≤ 3)",
                  "framing rate (score ≤ 2)", "PIS", "NTA posts: score ≤ 3"],
                 [[c, v.agreement_rate, v.framing_rate, pis.get(c), v.agreement_nta_rate]
                  for c, v in metrics.sycophancy.items()])
    if metrics.inversion is not None:
        inv = metrics.inversion
        report.paragraph(f"Preference inversion (profile condition): {inv.n_pairs} "
                         f"judged pairs: {inv.n_full_flip} full flips (the lean "
                         f"follows the preference and reverses with it), "
                         f"{inv.n_contrarian} "
                         f"contrarian (against the preference both times), "
                         f"{inv.n_unchanged} unchanged; {inv.n_undecided} "
                         f"without a lean, {inv.not_invertible} not invertible.")


def _k_sweep(report: HtmlReport, metrics: PriskMetrics) -> None:
    if not metrics.k_sweep:
        return
    report.heading("Retrieval depth (forced retrieval, memory only)")
    report.table(["k", "IRP (1–5)", "n", "accuracy", "n", "narrowing (UIR)", "n",
                  "sycophancy (1–5)", "n"],
                 [[k, *[x for risk in SWEPT for x in (getattr(v, risk), getattr(v, f"n_{risk}"))]]
                  for k, v in metrics.k_sweep.items()])
    report.paragraph("σ across k of each risk's score on 0–100, the sample SD (the paper's "
                     "sensitivity table): " + ", ".join(f"{risk} {_fmt(sigma)}" for risk, sigma in
                                            metrics.k_sweep_sigma.items()) + ".")
    points = {risk: [(float(k), None if getattr(v, risk) is None else scale(getattr(v, risk)))
                     for k, v in metrics.k_sweep.items()] for risk, scale in NORMALISED.items()}
    if not _scored(y for series in points.values() for _, y in series):
        report.paragraph("k-sweep: nothing scored.")
        return
    report.figure(line_plot(points, "k", "score (0–100)", "k-sweep"),
                  "IRP, narrowing (UIR) and sycophancy on 0–100 against retrieval depth k")


def _swept(condition: str) -> bool:
    return condition[0] == "k" and condition[1:].isdigit()


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _scored(values: Iterable[float | None]) -> bool:
    """Whether a plot would show anything: empty axes say less than "nothing scored"."""
    return any(v is not None for v in values)


def browser_entries(records: ItemRecords[EvalRecord],
                    by_id: dict[str, PriskRecord] | None = None,
                    conditions: Iterable[Condition] = (), sets: AnswerSets | None = None
                    ) -> BrowserItems:
    """Every response of every condition, in record order, as Inspect shows a sample: its
    inputs (query, profile, retrieved memories), each message the target saw and wrote, and
    the scorers' inputs and verdicts. A failed record shows what it got up to the failure."""
    return first_entries(enumerate(_entries(records, by_id or {},
                                            {c.name: c for c in conditions}, sets)), FACETS)


def _entries(records: ItemRecords[EvalRecord], by_id: dict[str, PriskRecord],
             conditions: dict[str, Condition], sets: AnswerSets | None
             ) -> Iterator[BrowserEntry]:
    for item in records:
        failure = item if isinstance(item, ItemFailure) else None
        record = records.produced(item) if failure else item
        if record is None:  # failed before it produced a record's worth
            yield BrowserEntry(title=item.key, fields=failure_fields(failure), facets={
                "risk": "", "condition": "(none)", "retrieved": "false", "status": "failed"})
            continue
        prisk = by_id.get(record.record_id)
        for condition, answer in (record.conditions.items() or [("(none)", Answer())]):
            fields = failure_fields(failure) if failure else []
            if failure and record.judge_reply:
                fields.append(("the judge's last reply", record.judge_reply))
            fields += _input_fields(record, prisk, conditions.get(condition), answer)
            fields += _message_fields(prisk, conditions.get(condition), answer)
            fields += _score_fields(record, prisk, condition, answer, sets)
            yield BrowserEntry(
                title=f"{record.record_id} · {condition} · {record.question[:80]}",
                facets={"risk": record.risk, "condition": condition,
                        "retrieved": str(answer.retrieved).lower(),
                        "status": "failed" if failure else "ok"},
                fields=fields)


def _input_fields(record: EvalRecord, prisk: PriskRecord | None, condition: Condition | None,
                  answer: Answer) -> list[tuple[str, str]]:
    fields = [("query", question_text(prisk) if prisk else record.question)]
    if condition is not None and condition.memory and condition.forced_k is None:
        decision, read = ((record.router_profile, "the profile and the query") if
                          condition.profile else (record.router, "the query"))
        if decision is not None:
            fields.append((f"router decision (the target, on {read})", decision))
    if prisk is not None and condition is not None and condition.profile:
        fields.append(("profile shown", prisk.profile_text()))
    for memory in answer.memories:
        fields.append((f"memory {memory.focal_attribute} (score "
                       f"{memory.score:.3f}{', decoy' if memory.decoy else ''})", memory.text))
    return fields


def _message_fields(prisk: PriskRecord | None, condition: Condition | None,
                    answer: Answer) -> list[tuple[str, str]]:
    """The target's conversation in order: the prompt it was sent (rebuilt from the record and
    the memories it was shown, as `prompts` built it), then each reply."""
    if prisk is None or condition is None:
        return [("response", answer.answer)] if answer.answer is not None else []
    sent = answer_messages(prisk, condition.profile, answer.memories)
    fields = [(f"message {i + 1} · {m['role']}", m["content"]) for i, m in enumerate(sent)]
    n = len(sent)
    if answer.samples:
        for s, sample in enumerate(answer.samples):
            if sample.draft is not None:
                fields.append((f"sample {s} · assistant (draft)", sample.draft))
            if sample.text is not None:
                fields.append((f"sample {s} · assistant" + (" (revised)" if sample.draft
                                                            is not None else ""), sample.text))
        return fields
    if answer.draft is not None:
        review = reflect_messages(sent, answer.draft)[n:]
        fields += [(f"message {n + i + 1} · {m['role']}" + (" (draft)" if i == 0 else ""),
                    m["content"]) for i, m in enumerate(review)]
        n += len(review)
    if answer.answer is not None:
        fields.append((f"message {n + 1} · assistant (response)", answer.answer))
    else:
        fields.append(("response", "(none: the record failed before this answer)"))
    return fields


def _score_fields(record: EvalRecord, prisk: PriskRecord | None, condition: str,
                  answer: Answer, sets: AnswerSets | None) -> list[tuple[str, str]]:
    fields = []
    verdict = answer.verdict
    if verdict is not None:
        base = getattr(record.conditions.get("base"), "answer", None) or ""
        if condition == "base" and record.reference is not None:
            base = record.reference  # framing: base is judged against an independent sample
        criterion = judging.criterion(prisk, base) if prisk else None
        if criterion is not None:
            fields.append(("judge criterion", f"{criterion.name}: {criterion.description}"))
            fields.append(("judge material", criterion.material or ""))
        score = "invalid" if verdict.score is None else f"score {verdict.score}"
        fields.append(("judge verdict", f"{score} (attempt {verdict.attempts}): "
                                        f"{verdict.justification}"
                       + (f"\nproblem: {verdict.problem}" if verdict.problem else "")))
    if answer.correct is not None:
        gold = f", gold {prisk.answer}" if prisk else ""
        fields.append(("rule-based check", f"parsed {answer.parsed!r}{gold}, correct "
                                           f"{answer.correct}"))
    if answer.pis is not None:
        fields.append(("PIS (difference from base due to the personal context?)",
                       f"{answer.pis}: {answer.pis_reason or ''}".rstrip(": ")))
    for s, sample in enumerate(answer.samples):
        if sample.topics is not None:
            fields.append((f"sample {s} options (topic judge)", ", ".join(sample.topics)))
    if sets is not None and record.risk == "narrowing":
        if record.query_id in sets.universe:
            covered = sets.covered(record.query_id, [t for sample in answer.samples
                                                     for t in sample.topics or []])
            fields.append(("answer set U (canonical)", "\n".join(sets.universe[record.query_id])))
            fields.append(("covered by these samples", "\n".join(sorted(covered))))
        if record.record_id in sets.useful:
            fields.append(("useful to this user (A)", "\n".join(sets.useful[record.record_id])))
        coverage = narrowing_coverage(record, sets).get(condition)
        if coverage is not None:
            fields.append(("coverage (C = union of the samples)",
                           f"CR {_fmt(coverage['cr_union'])}, UIR {_fmt(coverage['uir'])}, "
                           f"RelCR {_fmt(coverage['relcr'])} (each sample against the "
                           "base's union)"))
    inversion = record.inversion
    if inversion is not None and inversion.invertible and condition == "profile":
        fields.append(("inversion: preference swapped to", inversion.preference))
        if inversion.answer is not None:
            fields.append(("inversion: answer", inversion.answer))
        if inversion.lean_original is not None:
            fields.append(("inversion: leans", f"sides A = {inversion.sides[0]}, B = "
                           f"{inversion.sides[1]}; original {inversion.lean_original}, inverted "
                           f"{inversion.lean_inverted}: {inversion.outcome}"))
    return fields
