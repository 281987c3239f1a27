"""Writing a generated community in PersonaBench's release layout, plus its hidden ground truth.

synthetic_data/<community>/ is what a model under test may see (documents) and what the
evaluator reads (questions, ground-truth session ids). ground_truth/<community>/ holds the full
profiles, graph and per-session provenance, which no model under test is ever given.
"""

import datetime as dt
import json
from pathlib import Path

from personalens.errors import InputError
from personalens.population.document_plan import (
    CONVERSATION,
    PURCHASE,
    USER_AI,
    PersonPlan,
    noise_count,
)
from personalens.runs import write_atomic

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def release_time(when) -> str:
    """The release's "2024/Oct/14/11:11 AM", spelled out by hand so no locale can change it."""
    hour = when.hour % 12 or 12
    return (f"{when.year}/{_MONTHS[when.month - 1]}/{when.day:02d}/{hour:02d}:{when.minute:02d} "
            f"{'AM' if when.hour < 12 else 'PM'}")


def parse_release_time(text: str) -> dt.datetime:
    """The inverse of `release_time`; ValueError when `text` is not in that form."""
    year, month, day, clock = text.split("/")
    hour_minute, half = clock.split(" ")
    hour, minute = (int(x) for x in hour_minute.split(":"))
    if half not in ("AM", "PM") or not 1 <= hour <= 12:
        raise ValueError(f"not a release time: {text!r}")
    return dt.datetime(int(year), _MONTHS.index(month) + 1, int(day),
                       hour % 12 + (12 if half == "PM" else 0), minute)


_FILES = {CONVERSATION: "conversation_data", USER_AI: "user_ai_interaction_data",
          PURCHASE: "purchase_history_data"}


def safe_name(name: str) -> str:
    """A person's name as a folder name; refuses anything that could leave the folder."""
    if not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name:
        raise InputError(f"person name {name!r} cannot be used as a folder name")
    return name


def dump_json(path: Path, value) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(value, indent=2, ensure_ascii=False))


def level_sessions(plan: PersonPlan, noise: float):
    """The person's sessions at one noise level, in time order."""
    chosen = plan.personal + plan.noise[:noise_count(len(plan.personal), noise)]
    return sorted(chosen, key=lambda s: (s.time, s.index))


def write_level(root: Path, noise: str, people: list[str], plans: dict[str, PersonPlan],
                written: dict[str, dict[int, dict]]) -> dict[str, dict[int, str]]:
    """Documents for one noise level; returns person -> session index -> segment id."""
    ids: dict[str, dict[int, str]] = {}
    by_file: dict[str, list] = {kind: [] for kind in _FILES}
    for p_index, person in enumerate(people):
        ids[person] = {}
        partners: dict[str, list] = {}
        data: dict[str, list] = {kind: [] for kind in _FILES}
        counters: dict[str, int] = {}
        for s_index, plan in enumerate(level_sessions(plans[person], float(noise))):
            segment_id = f"{p_index:06d}{s_index:06d}"
            ids[person][plan.index] = segment_id
            counter_key = f"{plan.kind}/{plan.partner}"
            counters[counter_key] = counters.get(counter_key, 0) + 1
            session = {"session": f"{plan.kind}---session---{counters[counter_key]}",
                       "time": release_time(plan.time),
                       **written[person][plan.index]["session"], "segment_id": segment_id}
            if plan.kind == CONVERSATION:
                partners.setdefault(plan.partner, []).append(session)
            else:
                data[plan.kind].append(session)
        data[CONVERSATION] = [{"Target_name": partner, "Conversations": sessions}
                              for partner, sessions in partners.items()]
        for kind, filename in _FILES.items():
            entry = {"Name": person, "Data": data[kind]}
            by_file[kind].append(entry)
            dump_json(root / "private_data" / f"noise_{noise}" / safe_name(person)
                      / f"{filename}.json", entry)
    for kind, filename in _FILES.items():
        dump_json(root / "private_data" / f"noise_{noise}" / f"{filename}_all.json", by_file[kind])
    return ids


def write_questions(root: Path, people: list[str], plans: dict[str, PersonPlan],
                    ids_by_level: dict[str, dict[str, dict[int, str]]]) -> None:
    eval_info, truths = [], {noise: [] for noise in ids_by_level}
    for p_index, person in enumerate(people):
        qa = []
        for q_index, q in enumerate(plans[person].questions):
            q_id = f"{p_index * 1000 + q_index:09d}"
            qa.append({"q_id": q_id, "question": q.question, "answer": q.answer,
                       "type": q.type, "difficulty": q.difficulty,
                       "outdated_value": q.outdated_value})
            for noise, ids in ids_by_level.items():
                truths[noise].append({
                    "q_id": q_id, "question": q.question, "answer": q.answer,
                    "segment_id": {item: [ids[person][i] for i in sessions]
                                   for item, sessions in q.items.items()}})
        eval_info.append({"Name": person, "Eval_Info": {"qa": qa}})
    dump_json(root / "eval_info" / "eval_info_all.json", eval_info)
    for noise, truth in truths.items():
        dump_json(root / "eval_info" / f"qa_gt_context_all_noise_{noise}.json", truth)


def write_ground_truth(root: Path, profiles: dict, personas: dict, graph_json: dict,
                       fixes: list[str], plans: dict[str, PersonPlan],
                       written: dict[str, dict[int, dict]],
                       ids_by_level: dict[str, dict[str, dict[int, str]]]) -> None:
    dump_json(root / "profiles.json", {name: {"persona": personas[name], "attributes": profile}
                                   for name, profile in profiles.items()})
    dump_json(root / "social_graph.json", graph_json)
    dump_json(root / "graph_fixes.json", fixes)
    provenance = []
    for person, plan in plans.items():
        for session in plan.personal + plan.noise:
            meta = written[person][session.index]
            provenance.append({
                "person": person, "index": session.index, "kind": session.kind,
                "noise": session.reveal is None,
                "segment_ids": {n: ids[person].get(session.index)
                                for n, ids in ids_by_level.items()},
                "reveals": None if session.reveal is None else vars(session.reveal),
                "revealed_by": meta.get("revealed_by"),
                "replaced_leak": meta.get("replaced_leak", False),
                "model_failed": meta.get("model_failed"),
                "news": session.news["title"] if session.news else None,
            })
    dump_json(root / "sessions.json", provenance)
