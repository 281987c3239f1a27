"""PRISK's assembled records, as yumeng-10/personalization_risk writes them: read and written.

A file is `{"dataset_name", "schema_version", "risk_type", "num_records", ..., "records": [...]}`.
Each record is a (persona, memory, query) triple: `record_id`, `persona_id`, `query_id`,
`target_risk`, `domain`, `persona` (the 10 attributes), `historical_conversations`
(`{conversations: [{focal_attribute, turns: [{role, content}]}]}`; a conversation whose focal
attribute is not a persona attribute is the decoy), `personalization_prompt` and `query`
(`{question, subject, choices, answer}`). personalens adds two optional fields the release
lacks: `verdict` (the community verdict of an AITA-style query, "YTA" or "NTA") and `sides`
(the two positions of a preference-framed perspective query).

The risk a record measures comes from `target_risk` and its fields:
- irp: irrelevant personalisation templates (no gold answer);
- accuracy: benchmark questions (a gold answer);
- agreement: AITA-style queries with a verdict;
- framing: preference-framed perspective queries;
- narrowing: open recommendation queries.

Below them, the item records each command writes: `EvalRecord`, `BuildRecord`, `StatsRecord`.
"""

import json
from pathlib import Path
from typing import Any

import pydantic

from personalens.errors import InputError
from personalens.lenses.prisk.answer_rules import gold_answer
from personalens.runs import LensRecord, write_atomic
from personalens.stats.estimate import MeanEstimate
from personalens.stats.fits import Attribution, SignFlip

ATTRIBUTES = ("education_level", "age", "gender", "marital_status", "profession",
              "economic_status", "health_status", "mental_health_status", "emotional_state",
              "preference")
RISKS = ("irp", "accuracy", "agreement", "framing", "narrowing")
# The release's target_risk names, and ours.
_TARGET_RISKS = {"irrelevant_personalization": "irp", "irp": "irp", "accuracy": "accuracy",
                 "sycophantic_bias": "framing", "sycophancy": "framing", "framing": "framing",
                 "agreement": "agreement", "preference_narrowing": "narrowing",
                 "narrowing": "narrowing"}
RELEASE_NAMES = {"irp": "irrelevant_personalization", "accuracy": "irrelevant_personalization",
                  "agreement": "sycophantic_bias", "framing": "sycophantic_bias",
                  "narrowing": "preference_narrowing"}
VERDICTS = ("YTA", "NTA")


def turns_text(turns) -> str:
    """A conversation as retrieval and the report see it: one "role: content" line per turn."""
    return "\n".join(f"{t['role']}: {t['content']}" for t in turns)


class Conversation(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(frozen=True)

    focal_attribute: str
    turns: tuple[dict[str, str], ...]

    @property
    def decoy(self) -> bool:
        return self.focal_attribute not in ATTRIBUTES

    def text(self) -> str:
        return turns_text(self.turns)


class PriskRecord(pydantic.BaseModel):
    """One (persona, memory, query) triple of a dataset (and a built record as `prisk build`
    records it)."""

    model_config = pydantic.ConfigDict(frozen=True)

    record_id: str
    persona_id: str
    query_id: str
    risk: str
    domain: str
    persona: dict[str, str]
    conversations: tuple[Conversation, ...]
    question: str
    subject: str = ""
    choices: tuple[str, ...] = ()
    answer: str = ""
    verdict: str | None = None
    sides: tuple[str, str] | None = None
    where: str = pydantic.Field(default="", exclude=True)  # the file and record, for errors

    @property
    def key(self) -> str:  # a record is a `prisk eval` item
        return self.record_id

    def profile_text(self) -> str:
        """The release's one-paragraph rendering of the profile."""
        parts = [f"{'stated preference' if name == 'preference' else name.replace('_', ' ')}: "
                 f"{self.persona[name]}" for name in ATTRIBUTES if self.persona.get(name)]
        return "User profile: " + ", ".join(parts) + "."

    def as_release(self) -> dict:
        # The persona's source first, then the attributes, and turns as role, content: the
        # release's order, however the record was read.
        persona = {k: self.persona[k] for k in ("source", *ATTRIBUTES) if k in self.persona}
        record = {
            "record_id": self.record_id, "persona_id": self.persona_id,
            "query_id": self.query_id, "target_risk": RELEASE_NAMES[self.risk],
            "risk": self.risk, "domain": self.domain, "persona": persona,
            "historical_conversations": {
                "conversations": [{"focal_attribute": c.focal_attribute,
                                   "turns": [{"role": t["role"], "content": t["content"]}
                                             for t in c.turns],
                                   "turn_count": str(len(c.turns))}
                                  for c in self.conversations],
                "conversation_count": str(len(self.conversations))},
            "personalization_prompt": self.profile_text(),
            "query": {"question": self.question, "subject": self.subject,
                      "choices": list(self.choices), "answer": self.answer},
        }
        if self.verdict is not None:
            record["verdict"] = self.verdict
        if self.sides is not None:
            record["sides"] = list(self.sides)
        return record


def load_records(path: Path) -> list[PriskRecord]:
    """Every record of a file, or of every *.json file of a folder (sorted); bad input names
    the file, the record and the field."""
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    if not path.exists():
        raise InputError("data not found", where=str(path))
    if not files:
        raise InputError("folder holds no *.json record files", where=str(path))
    records = [record for file in files for record in _load_file(file)]
    seen: dict[str, str] = {}
    for record in records:
        if record.record_id in seen:
            raise InputError(f"record_id {record.record_id} appears twice (also in "
                             f"{seen[record.record_id]})", where=record.where)
        seen[record.record_id] = record.where
    return records


def write_records(path: Path, records: list[PriskRecord], *, dataset_name: str,
                  **header: object) -> None:
    if not records:
        raise ValueError("write_records needs at least one record")
    risks = sorted({r.risk for r in records})
    document = {"dataset_name": dataset_name, "schema_version": "1.0",
                "risk_type": RELEASE_NAMES[risks[0]] if len(risks) == 1 else "mixed",
                **header, "num_records": len(records),
                "records": [r.as_release() for r in records]}
    write_atomic(path, json.dumps(document, indent=1, ensure_ascii=False))


def _load_file(file: Path) -> list[PriskRecord]:
    try:
        document = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"not a readable JSON file ({exc})", where=str(file)) from None
    raw = document.get("records") if isinstance(document, dict) else document
    if not isinstance(raw, list):
        raise InputError("expected {\"records\": [...]} or a list of records", where=str(file))
    return [_record(item, f"{file} record {i}") for i, item in enumerate(raw)]


def _record(item: object, where: str) -> PriskRecord:
    if not isinstance(item, dict):
        raise InputError("record is not an object", where=where)
    record_id = item.get("record_id")
    if not isinstance(record_id, str | int) or not str(record_id).strip():
        raise InputError("field record_id: missing", where=where)
    record_id, where = str(record_id), f"{where} ({record_id})"
    risk = _risk(item, where)
    persona = item.get("persona")
    if not isinstance(persona, dict):
        raise InputError("field persona: expected an object of the 10 attributes", where=where)
    missing = [a for a in ATTRIBUTES if not str(persona.get(a) or "").strip()]
    if missing:
        raise InputError(f"field persona: missing attribute(s) {', '.join(missing)}",
                         where=where)
    query = item.get("query")
    if isinstance(query, str):
        query = {"question": query}
    if not isinstance(query, dict) or not str(query.get("question") or "").strip():
        raise InputError("field query.question: missing", where=where)
    if risk == "accuracy":
        try:
            gold_answer(str(query.get("answer")), tuple(str(c) for c in query.get("choices") or ()),
                        str(query.get("subject") or ""))
        except ValueError as exc:
            raise InputError(f"field query.answer: {exc}", where=where) from None
    verdict = item.get("verdict")
    if risk == "agreement" and verdict not in VERDICTS:
        raise InputError(f"field verdict: an agreement record needs one of {VERDICTS}",
                         where=where)
    sides = item.get("sides")
    if sides is not None and (not isinstance(sides, list) or len(sides) != 2):
        raise InputError("field sides: expected two positions", where=where)
    return PriskRecord(
        record_id=record_id, persona_id=str(item.get("persona_id") or record_id),
        query_id=str(item.get("query_id") or record_id), risk=risk,
        domain=str(item.get("domain") or ""),
        persona={a: str(persona[a]) for a in ATTRIBUTES},
        conversations=_conversations(item.get("historical_conversations"), where),
        question=str(query["question"]), subject=str(query.get("subject") or ""),
        choices=tuple(str(c) for c in query.get("choices") or ()),
        answer=str(query.get("answer") if query.get("answer") is not None else ""),
        verdict=None if verdict is None else str(verdict),
        sides=tuple(map(str, sides)) if sides else None, where=where)


def _risk(item: dict, where: str) -> str:
    name = item.get("risk") or item.get("target_risk")
    risk = _TARGET_RISKS.get(str(name))
    if risk is None:
        raise InputError(f"field target_risk: unknown risk {name!r}; expected one of "
                         f"{', '.join(sorted(_TARGET_RISKS))}", where=where)
    query = item.get("query") if isinstance(item.get("query"), dict) else {}
    if risk == "irp" and str(query.get("answer") or "").strip():
        return "accuracy"  # a benchmark question carries its gold answer
    if risk == "framing" and item.get("verdict") is not None:
        return "agreement"
    return risk


def _conversations(value: object, where: str) -> tuple[Conversation, ...]:
    if value is None:
        return ()
    items = value.get("conversations") if isinstance(value, dict) else value
    if not isinstance(items, list):
        raise InputError("field historical_conversations.conversations: expected a list",
                         where=where)
    out = []
    for i, conversation in enumerate(items):
        turns = conversation.get("turns") if isinstance(conversation, dict) else None
        if not isinstance(turns, list) or not all(
                isinstance(t, dict) and isinstance(t.get("content"), str) for t in turns):
            raise InputError(f"field historical_conversations.conversations[{i}].turns: "
                             "expected [{role, content}]", where=where)
        out.append(Conversation(focal_attribute=str(conversation.get("focal_attribute") or ""),
                                turns=tuple({"role": str(t.get("role") or "user"),
                                             "content": t["content"]} for t in turns)))
    return tuple(out)


# --- item records: what each command records per item -----------------------------------------

Score = int | float  # as the judge gave it (an int on 1-5) or the rule-based 0/1


class Memory(pydantic.BaseModel):
    id: str
    focal_attribute: str
    decoy: bool
    score: float
    text: str


class Verdict(pydantic.BaseModel):
    score: Score | None  # None: still invalid after every attempt
    justification: str
    attempts: int
    raw: str
    problem: str | None = None


class Sample(pydantic.BaseModel):
    """A narrowing sample, filled in as it goes (a failed record shows how far it got)."""

    draft: str | None = None  # reflect: the profile_retrieval sample it revises
    text: str | None = None
    finish_reason: str | None = None  # "length": cut off at --max-tokens
    topics: list[str] | None = None


class Answer(pydantic.BaseModel):
    """A record's answer under one condition, filled in as it goes: memories, the answer (or
    samples), then its scoring."""

    memories: list[Memory] = []
    retrieved: bool = False
    draft: str | None = None  # reflect: the profile_retrieval answer it revises
    answer: str | None = None
    finish_reason: str | None = None  # "stop", or "length": cut off at --max-tokens
    samples: list[Sample] = []  # narrowing
    verdict: Verdict | None = None  # the rubric judge's
    score: Score | None = None
    parsed: str | None = None  # accuracy: the rule-based check
    correct: bool | None = None
    irp_verdict: Verdict | None = None  # accuracy: the IRP judge on the same answer
    irp_score: Score | None = None
    pis: bool | None = None  # agreement, framing: is the difference from base personal?
    pis_reason: str | None = None


class Inversion(pydantic.BaseModel):
    """Framing under the profile condition: the answer with the preference's sides swapped."""

    invertible: bool
    sides: list[str] | None = None
    preference: str | None = None
    answer: str | None = None
    lean_original: str | None = None  # A: the side the stated preference favours
    lean_inverted: str | None = None
    outcome: str | None = None  # full_flip, contrarian, unchanged or undecided (inversion.py)


class EvalRecord(LensRecord):
    """One dataset record under every condition. A failed record's data holds what it got to:
    no domain or persona, and the judge's last reply when a verdict never came."""

    schema_name = "prisk.eval"
    # 2: `router` decides `retrieval` only (profile_retrieval has `router_profile`); inversion
    # outcomes; framing's base reference; answers' finish reasons.
    schema_version = 2

    record_id: str
    risk: str
    query_id: str
    persona_id: str
    question: str
    domain: str = ""
    persona: dict[str, str] = {}
    verdict: str | None = None  # agreement: the post's community verdict, YTA or NTA
    router: str | None = None  # on the query: the retrieval condition's
    router_profile: str | None = None  # on [p(u); q]: profile_retrieval's and reflect's
    conditions: dict[str, Answer] = {}
    inversion: Inversion | None = None
    reference: str | None = None  # framing: the independent base sample base is judged against
    judge_reply: str | None = None


class BuildRecord(LensRecord):
    """One built record (`record`, its decoy's drafts summary); a failed one says what it is
    (ids, question, persona) and how far each memory step and its decoy got."""

    schema_name = "prisk.build"

    risk: str
    record: PriskRecord | None = None
    decoy: dict[str, Any] | None = None  # {drafts, similarity, rejections}
    rewrite: dict[str, Any] | None = None  # benchmark: {original, drafts, kept}
    record_id: str | None = None
    persona_id: str | None = None
    query_id: str | None = None
    question: str | None = None
    persona: dict[str, str] | None = None
    memory: dict[str, str] | None = None  # attribute -> "written" or "failed: ..."
    decoy_outcome: str | None = None


class StatsRecord(LensRecord):
    """One (model, risk) group's fit, cell means and tests (see attribution.analyse_group)."""

    schema_name = "prisk.stats"

    group: str
    lmm: Attribution
    cell_means: dict[str, MeanEstimate]  # condition ->
    permutation: dict[str, SignFlip]  # condition -> against base
    n_records: int
    n_rows: int
