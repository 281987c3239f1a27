"""The PersonaBench sections of report.html: every metric as a table, recall plots, and a
browser of every question with what was retrieved, what the model said and the gold answer."""

import json
from collections.abc import Iterable
from dataclasses import dataclass

from personalens.lenses.personabench.analysis import CATEGORIES
from personalens.lenses.personabench.answering import ANSWER_PARAMS, answer_messages, prompt_digest
from personalens.lenses.personabench.metrics import Condition, Int8Difference, PersonabenchMetrics
from personalens.lenses.personabench.records import PersonabenchRecord
from personalens.lenses.personabench.scoring import answer_words
from personalens.population.release_reader import Community, Session
from personalens.report import (
    ENTRY_LIMIT,
    BrowserEntry,
    BrowserItems,
    HtmlReport,
    failure_fields,
    first_entries,
    grouped_bars,
    line_plot,
)
from personalens.runs import ItemFailure, ItemRecords
from personalens.stats.estimate import Estimate

_ROWS = (*CATEGORIES, "overall")
FACETS = ["category", "condition", "outcome"]


def report_sections(report: HtmlReport, metrics: PersonabenchMetrics) -> None:
    conditions = metrics.conditions
    _retrieval_section(report, conditions)
    if any(c.end_to_end is not None for c in conditions):
        _end_to_end_section(report, conditions, metrics.noise_robustness or {})
    if metrics.int8_vs_fp32:
        _int8_section(report, metrics.int8_vs_fp32)


def _value(estimate: Estimate | None) -> float | None:
    return None if estimate is None else estimate.value


def _ci(estimate: Estimate | None) -> str | None:
    return None if estimate is None else _bounds(*estimate.bounds)


def _retrieval_section(report: HtmlReport, conditions: list[Condition]) -> None:
    report.heading("Retrieval")
    rows = [[c.label, name, _value(s.recall), _ci(s.recall), _value(s.ndcg), _ci(s.ndcg), s.n]
            for c in conditions for name, s in ((n, c.retrieval[n]) for n in _ROWS)]
    report.table(["condition", "category", "recall", "95% CI", "nDCG", "95% CI", "n"], rows)
    # A category no condition scored is left out of the plot (it would be drawn as a bar of
    # height 0); with nothing scored at all the page says so instead of drawing empty axes.
    rows = [n for n in _ROWS if any(_value(c.retrieval[n].recall) is not None
                                    for c in conditions)]
    if not rows:
        report.paragraph("Retrieval recall per category: nothing scored.")
    else:
        report.figure(
            grouped_bars({c.label: {n: _value(c.retrieval[n].recall) for n in rows}
                          for c in conditions}, "recall", "Retrieval recall per category"),
            "Retrieval recall per category per retriever and noise level",
        )
    if len({c.noise for c in conditions}) > 1:
        series: dict[str, list] = {}
        for c in sorted(conditions, key=lambda c: c.noise):
            series.setdefault(c.retriever, []).append((c.noise,
                                                       _value(c.retrieval["overall"].recall)))
        if any(y is not None for points in series.values() for _, y in points):
            report.figure(line_plot(series, "noise ratio", "overall recall", "Recall vs noise"),
                          "Overall retrieval recall against the noise ratio")
        else:
            report.paragraph("Recall vs noise: nothing scored.")


def _end_to_end_section(report: HtmlReport, conditions: list[Condition],
                        robustness: dict[str, float]) -> None:
    report.heading("End to end (answers)")
    rows = [[c.label, name, _value(s.recall), _value(s.precision), _value(s.f1), _ci(s.f1), s.n]
            for c in conditions for name, s in ((n, c.end_to_end[n]) for n in _ROWS)]
    report.table(["condition", "category", "recall", "precision", "F1", "F1 95% CI", "n"], rows)
    report.heading("Information updating", level=3)
    report.table(["condition", "outdated-word recall", "score (1 − recall)", "95% CI", "n"],
                 [[c.label, c.info_updating.outdated_recall.value, c.info_updating.score.value,
                   _ci(c.info_updating.score), c.info_updating.n] for c in conditions])
    if robustness:
        report.heading("Noise robustness", level=3)
        report.table(["retriever", "1 − (F1 at lowest noise − F1 at highest)"],
                     sorted(robustness.items()))


def _int8_section(report: HtmlReport, rows: list[Int8Difference]) -> None:
    report.heading("What int8 costs here")
    report.paragraph(
        "Each int8 retriever against its fp32 retriever on the same questions: the difference "
        "int8 − fp32 of the mean, its paired bootstrap 95% CI, the sign-flip test's p (raw and "
        "Holm-adjusted across this table) and how many questions changed value at all.")
    report.table(["pair", "noise", "metric", "int8", "fp32", "int8 − fp32", "95% CI", "p",
                  "p (Holm)", "changed", "n"],
                 [[f"{d.int8} − {d.fp32}", d.noise, d.metric, d.int8_value, d.fp32_value,
                   d.value, _bounds(*d.bounds), d.p, d.p_holm, d.changed, d.n]
                  for d in rows])


def _bounds(low: float | None, high: float | None) -> str | None:
    return None if low is None or high is None else f"{low:.3f}–{high:.3f}"


def browser_entries(records: ItemRecords[PersonabenchRecord],
                    communities: Iterable[Community] = ()) -> BrowserItems:
    """One entry per question and condition, wrong and failed answers first.

    Each entry is the whole exchange: the question, the person, the gold answer and sessions,
    what the retriever returned, the prompt the answering model was sent, its answer, and how
    the scorer compared them; a failed item shows what it produced before it failed. Records
    hold retrieved ids, not texts: the texts come from `communities` (the run's data, which the
    lens has loaded), and the prompt is rebuilt from them and checked against the digest the
    record kept. Long sessions are cut, and the entry says so: the browser embeds at most
    TEXT_BUDGET characters of session text in all.
    """
    sessions = _Sessions(communities)
    per_entry = min(ENTRY_CHARS, max(MIN_ENTRY_CHARS,
                                     TEXT_BUDGET // max(1, min(len(records), ENTRY_LIMIT))))

    def shown(item: PersonabenchRecord | ItemFailure) -> _Shown:
        if isinstance(item, ItemFailure):
            return _Shown(item.key, records.produced(item), item)
        return _Shown(item.key, item, None)

    return first_entries(((_wrong_first(s), _entry(s, sessions, per_entry))
                          for s in map(shown, records)), FACETS)


@dataclass(frozen=True)
class _Shown:
    """One browser entry's item: its record (for a failed item, what it produced), its
    failure."""

    key: str
    record: PersonabenchRecord | None
    failure: ItemFailure | None


# Session text shown per entry: the whole browser stays near TEXT_BUDGET characters, however
# many items the run has (a 20,000-entry report gets 1,250 characters per entry).
TEXT_BUDGET = 25_000_000
ENTRY_CHARS = 20_000
MIN_ENTRY_CHARS = 1_000
SESSION_CHARS = 6_000


class _Sessions:
    """The sessions of each (community, noise, person), by segment id, built when first asked."""

    def __init__(self, communities: Iterable[Community]):
        self._communities = {c.name: c for c in communities}
        self._by_id: dict[tuple, dict[str, Session]] = {}

    def of(self, record: PersonabenchRecord) -> dict[str, Session]:
        key = (record.community, record.noise, record.person)
        if key not in self._by_id:
            community = self._communities.get(key[0])
            level = community.levels.get(key[1]) if community else None
            found = level.sessions.get(key[2], []) if level else []
            self._by_id[key] = {s.segment_id: s for s in found}
        return self._by_id[key]


def _outcome(shown: _Shown) -> str:
    record = shown.record
    if shown.failure is not None or record is None:
        return "failed"
    if record.end_to_end is not None:
        # Correct: every gold word is in the answer (extra words cost precision, not this).
        return "correct" if record.end_to_end.recall == 1.0 else "incorrect"
    return "all found" if record.retrieval.recall == 1.0 else "missed some"


def _wrong_first(shown: _Shown) -> tuple:
    order = {"failed": 0, "incorrect": 1, "missed some": 1, "correct": 2, "all found": 2}
    return order[_outcome(shown)], shown.key


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _clip(text: str, limit: int, reader: str) -> str:
    if len(text) <= limit:
        return text
    return (f"{text[:limit]}\n[… {len(text) - limit:,} more characters of this session are not "
            f"shown in this report; {reader} all {len(text):,}]")


def _entry(shown: _Shown, sessions: _Sessions, per_entry: int) -> BrowserEntry:
    record = shown.record
    if record is None:  # failed before it produced a record's worth
        return BrowserEntry(title=shown.key, fields=[
            *failure_fields(shown.failure),
            ("stopped at", "before retrieval finished: nothing was retrieved or asked")],
            facets={"category": "", "outcome": "failed", "condition": "?"})
    fields = [("question", f"{record.question}\n(question {record.q_id}: {record.type}, "
                           f"{record.difficulty}; scored as {record.category})"),
              ("person", f"{record.person} (community {record.community}, noise "
                         f"{record.noise})")]
    gold = _json(record.answer)
    if record.outdated_value is not None:
        gold += (f"\noutdated value (the answer must not repeat it): "
                 f"{_json(record.outdated_value)}")
    fields.append(("gold answer", gold))
    fields += _retrieval_fields(record, sessions.of(record), per_entry)
    if record.answered:
        fields += [("model answer", record.prediction), ("answer score", _answer_score(record))]
    if shown.failure is not None:
        fields += failure_fields(shown.failure)
        fields.append(("stopped at", _stopped_at(record)))
    return BrowserEntry(title=record.question, fields=fields, facets={
        "category": record.category, "outcome": _outcome(shown),
        "condition": f"{record.retriever} @ noise {float(record.noise):g}"})


def _stopped_at(record: PersonabenchRecord) -> str:
    if record.prompt_sha256 is not None and not record.answered:
        return ("answering: the sessions above were retrieved and the prompt above was sent; "
                "the model gave no answer, so this question is not scored end to end (its "
                "retrieval scores count)")
    return "after retrieval"


def _retrieval_fields(record: PersonabenchRecord, by_id: dict[str, Session],
                      per_entry: int) -> list[tuple[str, str]]:
    ids, alternatives = record.retrieved_ids, record.ground_truth
    gold_of: dict[str, list[str]] = {}
    for item, options in alternatives.items():
        for segment in options:
            gold_of.setdefault(segment, []).append(item)
    rank = {}
    for i, segment in enumerate(ids, start=1):
        rank.setdefault(segment, i)
    gold_lines = [f"{item}: " + ", ".join(
        f"{s} (retrieved at rank {rank[s]})" if s in rank else f"{s} (not retrieved)"
        for s in options) for item, options in alternatives.items()]
    answered = record.prompt_sha256 is not None
    limit = min(SESSION_CHARS, max(200, per_entry // max(1, len(ids))))
    reader = "the model received" if answered else "the retriever indexed"
    lines = []
    for i, segment in enumerate(ids, start=1):
        session = by_id.get(segment)
        head = f"[{i}] {segment}" + (f" · {session.kind}" if session else "")
        if segment in gold_of:
            head += " · gold for " + ", ".join(gold_of[segment])
        if answered and session is not None:
            lines.append(head)  # its text is in the prompt below, as [i]
        elif session is None:
            lines.append(f"{head}\n(text not available: this session is not in the loaded data)")
        else:
            lines.append(f"{head}\n{_clip(session.text, limit, reader)}\n")
    label = f"retrieved by {record.retriever} (top {len(ids)})"
    if answered:
        label += ", their texts are the prompt's excerpts [1]…"
    scores = record.retrieval
    found = [item for item, options in alternatives.items() if any(s in rank for s in options)]
    fields = [("gold sessions (any one of an item's sessions counts)", "\n".join(gold_lines)),
              (label, "\n".join(lines).rstrip()),
              ("retrieval score", f"recall {scores.recall:.3f}, nDCG "
                                  f"{scores.ndcg:.3f}: {len(found)} of "
                                  f"{len(alternatives)} answer item(s) found in the top "
                                  f"{len(ids)} (each the best over every way of picking one "
                                  "gold session per item)")]
    if answered:
        fields.append(_prompt_field(record, ids, by_id, limit))
    return fields


def _prompt_field(record: PersonabenchRecord, ids: list[str], by_id: dict[str, Session],
                  limit: int) -> tuple[str, str]:
    params = ", ".join(f"{k} {v:g}" for k, v in ANSWER_PARAMS.items())
    missing = [s for s in dict.fromkeys(ids) if s not in by_id]
    if missing:
        return (f"prompt sent to the answering model ({params})",
                f"cannot be rebuilt: session(s) {', '.join(missing)} are not in the loaded data "
                f"(sha256 of the prompt sent: {record.prompt_sha256})")
    texts = [by_id[s].text for s in ids]
    sent = prompt_digest(answer_messages(record.question, texts)) == record.prompt_sha256
    check = ("rebuilt from the data; identical to the prompt sent (sha256)" if sent else
             "rebuilt from the data, but NOT identical to the prompt sent: the data or "
             "personalens changed since the run")
    shown = answer_messages(record.question, [_clip(t, limit, "the model received")
                                                 for t in texts])
    body = "\n\n".join(f"── {m['role']} ──\n{m['content']}" for m in shown)
    return f"prompt sent to the answering model ({params}; {check})", body


def _answer_score(record: PersonabenchRecord) -> str:
    gold, predicted = answer_words(record.answer), answer_words(record.prediction)
    e2e = record.end_to_end
    lines = [f"gold words: {' '.join(sorted(gold)) or '(none)'}",
             f"answer words: {' '.join(sorted(predicted)) or '(none)'}",
             f"in both: {' '.join(sorted(gold & predicted)) or '(none)'}",
             f"precision {e2e.precision:.3f} ({len(gold & predicted)}/{len(predicted)}), "
             f"recall {e2e.recall:.3f} ({len(gold & predicted)}/{len(gold)}), "
             f"F1 {e2e.f1:.3f}"]
    if record.outdated_recall is not None:
        stale = answer_words(record.outdated_value) - gold
        lines.append(f"outdated words: {' '.join(sorted(stale)) or '(none)'}; repeated: "
                     f"{' '.join(sorted(stale & predicted)) or '(none)'} (outdated-word "
                     f"recall {record.outdated_recall:.3f})")
    if record.usage is not None:
        lines.append(f"tokens: {record.usage.prompt_tokens} in, "
                     f"{record.usage.completion_tokens} out"
                     + (" (from the response cache)" if record.cached else ""))
    return "\n".join(lines)
