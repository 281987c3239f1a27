"""Loading PersonaBench's official release layout into validated records.

community_X/
  eval_info/eval_info_all.json                  [{Name, Eval_Info: {qa: [question...]}}]
  eval_info/qa_gt_context_all_noise_<n>.json    [{q_id, answer, segment_id: {item: [ids]}}]
  graph_json/social_graph.json
  private_data/noise_<n>/{conversation,user_ai_interaction,purchase_history}_data_all.json
"""

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pydantic

from personalens.errors import InputError
from personalens.input_files import expect_dict, expect_list, read_json, validation_message

QuestionType = Literal["Basic information", "Preference", "Social", "Subjective"]
AnswerItem = str | int | dict[str, str | int]
MAX_COMBINATIONS = 100_000  # retrieval scores maximise over all of them
DOC_FILES = {
    "conversation": "conversation_data_all.json",
    "user_ai_interaction": "user_ai_interaction_data_all.json",
    "purchase_history": "purchase_history_data_all.json",
}


class Question(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="ignore", strict=True)

    q_id: str = pydantic.Field(min_length=1)
    question: str = pydantic.Field(min_length=1)
    answer: str | int | list[AnswerItem]
    type: QuestionType
    difficulty: Literal["easy", "hard"]
    outdated_value: str | int | list[AnswerItem] | None = None


@dataclass(frozen=True)
class Session:
    segment_id: str
    kind: str  # conversation, user_ai_interaction or purchase_history
    text: str  # the chunk a retriever indexes


@dataclass
class NoiseLevel:
    noise: str
    sessions: dict[str, list[Session]]  # person -> sessions
    ground_truth: dict[str, dict[str, list[str]]]  # q_id -> answer item -> alternative ids


@dataclass
class Community:
    name: str
    path: Path
    questions: dict[str, list[Question]]  # person -> questions
    levels: dict[str, NoiseLevel] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)

    def people(self, noise: str) -> list[str]:
        """People with documents at this noise level (the release has them for 3 of 10)."""
        return [p for p in self.questions if p in self.levels[noise].sessions]


def chunk_text(session: dict[str, Any]) -> str:
    """The release's chunk: the session's JSON without its `segment_id` and `session` keys."""
    return json.dumps(_without(session, {"segment_id", "session"}), separators=(",", ":"))


def _without(value: Any, keys: set[str]) -> Any:
    if isinstance(value, dict):
        return {k: _without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_without(v, keys) for v in value]
    return value


def load_communities(root: Path, noises: list[str]) -> list[Community]:
    """Every community at or below `root`, named by its path below `root` so names are unique."""
    return [load_community(path, noises,
                           None if path == root else path.relative_to(root).as_posix())
            for path in find_communities(root)]


def find_communities(root: Path) -> list[Path]:
    """`root` itself if it is a community, else every community folder below it."""
    if not root.exists():
        raise InputError("data directory not found", where=str(root))
    if (root / "eval_info").is_dir():
        return [root]
    found = sorted(p.parent.parent for p in root.rglob("eval_info/eval_info_all.json"))
    if not found:
        raise InputError("no PersonaBench community found (expected eval_info/eval_info_all.json "
                         "in this folder or below it)", where=str(root))
    return found


def available_noises(community: Path) -> list[str]:
    folders = (community / "private_data").glob("noise_*")
    return sorted(p.name.removeprefix("noise_") for p in folders)


def load_community(path: Path, noises: list[str], name: str | None = None) -> Community:
    """Load one community; `name` (default: the folder's name) prefixes its item keys."""
    questions_file = path / "eval_info" / "eval_info_all.json"
    community = Community(name or path.name, path, _load_questions(questions_file),
                          files=[questions_file])
    present = available_noises(path)
    for noise in noises:
        if noise not in present:
            raise InputError(f"noise level {noise} is not in this dataset (present: "
                             f"{', '.join(present) or 'none'})", where=str(path / "private_data"))
        community.levels[noise] = _load_level(community, noise)
    return community


def _named(entry: Any, where: str) -> tuple[dict, str]:
    """A release record (a dict) and its non-empty `Name`."""
    entry = expect_dict(entry, where)
    name = entry.get("Name")
    if not isinstance(name, str) or not name:
        raise InputError("field 'Name' must be a non-empty string", where=where)
    return entry, name


def _load_questions(path: Path) -> dict[str, list[Question]]:
    people: dict[str, list[Question]] = {}
    seen_ids: set[str] = set()
    for i, entry in enumerate(expect_list(read_json(path), str(path))):
        where = f"{path} record {i}"
        entry, name = _named(entry, where)
        qa = expect_dict(entry.get("Eval_Info"), f"{where} field 'Eval_Info'").get("qa")
        questions = []
        for j, raw in enumerate(expect_list(qa, f"{where} field 'Eval_Info.qa'")):
            try:
                question = Question.model_validate(raw)
            except pydantic.ValidationError as exc:
                raise InputError(validation_message(exc),
                                 where=f"{where} ({name}) question {j}") from None
            if question.q_id in seen_ids:
                raise InputError(f"duplicate q_id {question.q_id}", where=f"{where} question {j}")
            seen_ids.add(question.q_id)
            questions.append(question)
        people[name] = questions
    return people


def _load_level(community: Community, noise: str) -> NoiseLevel:
    folder = community.path / "private_data" / f"noise_{noise}"
    sessions: dict[str, list[Session]] = {}
    for kind, filename in DOC_FILES.items():
        path = folder / filename
        community.files.append(path)
        for i, entry in enumerate(expect_list(read_json(path), str(path))):
            where = f"{path} record {i}"
            entry, name = _named(entry, where)
            data = expect_list(entry.get("Data"), f"{where} ({name}) field 'Data'")
            sessions.setdefault(name, []).extend(_sessions(kind, data, f"{where} ({name})"))
    for name, person_sessions in sessions.items():
        _check_unique_ids(person_sessions, f"{folder} ({name})")
    gt_path = community.path / "eval_info" / f"qa_gt_context_all_noise_{noise}.json"
    community.files.append(gt_path)
    level = NoiseLevel(noise, sessions, _load_ground_truth(gt_path))
    _check_ground_truth(community.questions, level, gt_path)
    return level


def _sessions(kind: str, data: list, where: str) -> list[Session]:
    # Conversations nest one level deeper: one entry per partner, holding that pair's sessions.
    if kind == "conversation":
        raw = []
        for i, partner in enumerate(data):
            partner = expect_dict(partner, f"{where} Data[{i}]")
            raw.extend(expect_list(partner.get("Conversations"),
                                   f"{where} Data[{i}] field 'Conversations'"))
    else:
        raw = data
    out = []
    for i, session in enumerate(raw):
        session = expect_dict(session, f"{where} {kind} session {i}")
        segment_id = session.get("segment_id")
        if not isinstance(segment_id, str) or not segment_id:
            raise InputError("field 'segment_id' must be a non-empty string",
                             where=f"{where} {kind} session {i}")
        out.append(Session(segment_id, kind, chunk_text(session)))
    return out


def _check_unique_ids(sessions: list[Session], where: str) -> None:
    seen: set[str] = set()
    for session in sessions:
        if session.segment_id in seen:
            raise InputError(f"duplicate segment_id {session.segment_id}", where=where)
        seen.add(session.segment_id)


def _load_ground_truth(path: Path) -> dict[str, dict[str, list[str]]]:
    truth: dict[str, dict[str, list[str]]] = {}
    for i, entry in enumerate(expect_list(read_json(path), str(path))):
        where = f"{path} record {i}"
        entry = expect_dict(entry, where)
        q_id = entry.get("q_id")
        if not isinstance(q_id, str):
            raise InputError("field 'q_id' must be a string", where=where)
        items = expect_dict(entry.get("segment_id"), f"{where} (q_id {q_id}) field 'segment_id'")
        if not items:
            raise InputError("field 'segment_id' maps no answer item to a session",
                             where=f"{where} (q_id {q_id})")
        for item, ids in items.items():
            if (not isinstance(ids, list) or not ids
                    or not all(isinstance(x, str) for x in ids)):
                raise InputError(f"answer item {item!r} needs a non-empty list of session ids",
                                 where=f"{where} (q_id {q_id}) field 'segment_id'")
        truth[q_id] = items
    return truth


def _check_ground_truth(questions: dict[str, list[Question]], level: NoiseLevel,
                        path: Path) -> None:
    for person in (p for p in questions if p in level.sessions):
        known = {s.segment_id for s in level.sessions[person]}
        for question in questions[person]:
            items = level.ground_truth.get(question.q_id)
            if items is None:
                raise InputError(f"no ground truth for q_id {question.q_id} ({person})",
                                 where=str(path))
            combinations = 1
            for ids in items.values():
                combinations *= len(ids)
            if combinations > MAX_COMBINATIONS:
                raise InputError(f"q_id {question.q_id}: {combinations} ways to pick one session "
                                 f"per answer item exceed {MAX_COMBINATIONS}", where=str(path))
            for item, ids in items.items():
                unknown = [x for x in ids if x not in known]
                if unknown:
                    raise InputError(f"q_id {question.q_id} item {item!r}: segment id "
                                     f"{unknown[0]} is not among {person}'s sessions",
                                     where=str(path))
