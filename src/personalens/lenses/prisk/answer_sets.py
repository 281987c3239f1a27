"""Narrowing's sets, built after every record is answered: per query the universal answer set U
(the canonical topics of every sample, base and personalised, across personas), and per record
the useful set A (a judge's verdict for that persona).

The release built U from personalised answers only, so base-only options could never count as
lost, and treated a missing usefulness verdict as useful; here both sides feed U, and a verdict
that never arrives is a recorded failure that takes the record out of the narrowing metrics.
The samples of reflect and the depth sweep are labelled after U is fixed
(`narrowing/<query>/swept/labels/...`), so adding them leaves U as it was (the release built U
from whatever conditions it had, so a mitigation run moved the main numbers). Every verdict is
a step keyed by its input too (`narrowing/<query>/labels/<chunk>/<digest>`,
`narrowing/<record>/useful/<digest of U>`), so a rerun with different inputs asks again.
"""

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from personalens.lenses.prisk import judging
from personalens.lenses.prisk.records import EvalRecord, PriskRecord
from personalens.models import ChatModel
from personalens.models.dialogue import Steps
from personalens.runs import RecordedFailure
from personalens.runs.settled import gather_settled

CHUNK = 60  # raw topics per canonicalisation call; later chunks reuse earlier labels


@dataclass
class AnswerSets:
    labels: dict[str, dict[str, str]] = field(default_factory=dict)  # query -> raw -> canonical
    universe: dict[str, list[str]] = field(default_factory=dict)  # query -> U
    useful: dict[str, list[str]] = field(default_factory=dict)  # record -> A
    failures: list[dict] = field(default_factory=list)  # {key, kind, message}

    def covered(self, query_id: str, topics: list[str]) -> set[str]:
        mapping = self.labels.get(query_id, {})
        return {mapping[_raw(t)] for t in topics if _raw(t) in mapping}


def _raw(topic: str) -> str:
    return " ".join(topic.lower().split())


def _topics(group: list[EvalRecord], later: bool, conditions: set[str]) -> set[str]:
    return {_raw(t) for r in group for name, answer in r.conditions.items()
            if (name in conditions) == later for sample in answer.samples for t in sample.topics}


async def build(records: list[EvalRecord], by_id: dict[str, PriskRecord], after: set[str], *,
                judge: ChatModel, usefulness_judge: ChatModel, steps: Steps, attempts: int,
                temperature: float) -> AnswerSets:
    """U from the 2x2's conditions; the topics of the conditions `after` (reflect, the depth
    sweep) are labelled after them, reusing their labels, so adding them leaves U and every
    main number as they were (an item only such an answer mentions is outside U and not
    counted)."""
    sets = AnswerSets()
    kw = {"attempts": attempts, "temperature": temperature}
    by_query: dict[str, list[EvalRecord]] = {}
    for record in records:
        by_query.setdefault(record.query_id, []).append(record)
    for query_id, group in sorted(by_query.items()):
        raw = sorted(_topics(group, False, after))
        extra = sorted(_topics(group, True, after) - set(raw))
        question = group[0].question
        try:
            labels = await _canonical(judge, query_id, question, raw, steps, kw)
            universe = sets.universe[query_id] = sorted(set(labels.values()))
            if extra:
                labels |= await _canonical(judge, f"{query_id}/swept", question, extra, steps,
                                           kw, known=universe)
            sets.labels[query_id] = labels
        except RecordedFailure as exc:
            sets.universe.pop(query_id, None)
            sets.failures.append(_failure(f"narrowing/{query_id}", exc))
            continue

        async def useful(record_id: str, universe=universe) -> None:
            async def verdict() -> list[str]:
                return await judging.useful_items(usefulness_judge, by_id[record_id], universe,
                                                  **kw)
            try:
                # Keyed by U too: a rerun whose U changed (a failed record now answered) asks
                # again instead of replaying a verdict over another set.
                sets.useful[record_id] = await steps.get(
                    f"narrowing/{record_id}/useful/{_digest(universe)}", verdict)
            except RecordedFailure as exc:
                sets.failures.append(_failure(record_id, exc))

        await gather_settled(*[useful(r.record_id) for r in group])
    sets.failures.sort(key=lambda f: f["key"])
    return sets


def _digest(value: object) -> str:
    """A short content key, so a step is replayed only for the same input."""
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:12]


async def _canonical(judge: ChatModel, query_id: str, question: str, raw: list[str],
                     steps: Steps, kw: dict, known: Sequence[str] = ()) -> dict[str, str]:
    mapping: dict[str, str] = {}
    for start in range(0, len(raw), CHUNK):
        chunk = raw[start:start + CHUNK]
        existing = sorted(set(known) | set(mapping.values()))

        async def label(chunk=chunk, existing=existing) -> list[str]:
            return await judging.canonical_labels(judge, question, chunk, existing, **kw)

        labels = await steps.get(
            f"narrowing/{query_id}/labels/{start // CHUNK}/{_digest([chunk, existing])}", label)
        mapping.update(zip(chunk, labels, strict=True))
    return mapping


def _failure(key: str, exc: RecordedFailure) -> dict:
    # final (only when true, as failures are written): a rerun would get the same verdict.
    return {"key": key, "kind": exc.failure.kind, "message": exc.failure.message,
            **({"final": True} if exc.failure.final else {})}
