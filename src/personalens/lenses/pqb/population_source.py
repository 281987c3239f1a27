"""`pqb build` from a `personalens generate` output folder.

Products are the items people bought (purchases carry no ids, so an item's id is a short hash of
its normalised name); a product's users are the people who bought it; a person's history is the
turns they typed (their side of conversations, the user side of chats with an AI), one text per
session, in time order. Every level of noise holds the person's own sessions (noise sessions are
their own small talk, not other people's text), and the fullest level holds all of them, so that
level is read. Sessions written by code rather than the model (identical small talk, recorded in
ground_truth/<community>/sessions.json) are no one's writing and are left out. The typo truth
comes from ground_truth/<community>/writing_habits.json when it is there.

A person's uid is "<community>/<name>": names are unique within a community only.
"""

import datetime as dt
import hashlib
from pathlib import Path

import pydantic

from personalens.errors import InputError
from personalens.input_files import expect_dict, expect_list, read_json, validation_message
from personalens.lenses.pqb.build_source import BuildSource, product_from_meta
from personalens.population.release_reader import (
    available_noises,
    find_communities,
    load_community,
)
from personalens.population.release_writer import parse_release_time
from personalens.population.writing_habits import own_turns


class _Turn(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="ignore", strict=True)

    role: str
    content: str


class _Item(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="ignore", strict=True)

    title: str = pydantic.Field(min_length=1)
    description: str = ""
    brand: str = ""
    categories: list[str] = []


class _Session(pydantic.BaseModel):
    """A released session (its chunk): the parts this source reads."""

    model_config = pydantic.ConfigDict(extra="ignore", strict=True)

    time: str
    conversation: list[_Turn] | None = None
    user_ai_interaction: list[_Turn] | None = None
    purchase_history: list[_Item] | None = None


class _Habits(pydantic.BaseModel):
    typo_rates: dict[str, float]


def product_id(name: str) -> str:
    """A stable, asin-like id (10 characters) for an item known only by its name."""
    normalised = " ".join(name.casefold().split())
    return "G" + hashlib.sha256(normalised.encode()).hexdigest()[:9].upper()


def item_meta(item: _Item) -> dict:
    """A purchased item as a meta_<Category>.jsonl line."""
    return {"parent_asin": product_id(item.title), "title": item.title, "store": item.brand,
            "categories": item.categories, "features": [],
            "description": [item.description] if item.description else [],
            "details": {}}


def _fullest_level(community: Path) -> str:
    levels = available_noises(community)
    try:
        return max(levels, key=float)
    except ValueError:
        raise InputError("expected noise_<ratio> folders (e.g. noise_0.5)",
                         where=str(community / "private_data")) from None


def _code_written(truth: Path, noise: str) -> set[tuple[str, str]]:
    """(person, segment id) of the sessions code wrote at this noise level."""
    path = truth / "sessions.json"
    if not path.exists():
        return set()
    skipped = set()
    for i, entry in enumerate(expect_list(read_json(path), str(path))):
        entry = expect_dict(entry, f"{path} record {i}")
        if entry.get("model_failed") or entry.get("replaced_leak"):
            ids = expect_dict(entry.get("segment_ids"), f"{path} record {i} field 'segment_ids'")
            skipped.add((entry.get("person"), ids.get(noise)))
    return skipped


def _typo_truth(truth: Path, community: str) -> dict[str, dict[str, float]]:
    path = truth / "writing_habits.json"
    if not path.exists():
        return {}
    rates = {}
    for name, habits in expect_dict(read_json(path), str(path)).items():
        try:
            rates[f"{community}/{name}"] = _Habits.model_validate(habits).typo_rates
        except pydantic.ValidationError as exc:
            raise InputError(validation_message(exc), where=f"{path} person {name!r}") from None
    return rates


def _parsed(session_json: str, where: str) -> tuple[dt.datetime, _Session]:
    try:
        session = _Session.model_validate_json(session_json)
    except pydantic.ValidationError as exc:
        raise InputError(validation_message(exc), where=where) from None
    try:
        return parse_release_time(session.time), session
    except ValueError:
        raise InputError(f"field 'time': {session.time!r} is not like '2024/Oct/14/11:11 AM'",
                         where=where) from None


def _read_community(path: Path, name: str, truth: Path
                    ) -> tuple[list[tuple[str, _Session]], int]:
    """(person, session) in each person's time order, and how many sessions code wrote."""
    noise = _fullest_level(path)
    level = load_community(path, [noise], name).levels[noise]
    skipped = _code_written(truth, noise)
    read, code_written = [], 0
    for person, sessions in level.sessions.items():
        timed = []
        for s in sessions:
            if (person, s.segment_id) in skipped:
                code_written += 1
                continue
            where = f"{path} noise {noise} ({person}) segment {s.segment_id}"
            timed.append((*_parsed(s.text, where), s.segment_id))
        read += [(person, session) for _, session, _ in sorted(timed, key=lambda t: (t[0], t[2]))]
    return read, code_written


def load_population(root: Path) -> BuildSource:
    """Products, buyers, histories and typo truth from a `personalens generate` output folder."""
    data = root / "synthetic_data"
    if not data.is_dir():
        raise InputError("not a `personalens generate` output folder (expected synthetic_data/ "
                         "with one folder per community)", where=str(root))
    histories: dict[str, list[str]] = {}
    items: dict[str, dict] = {}  # product id -> meta of its first purchase
    buyers: dict[str, set[str]] = {}
    code_written, typo_truth = 0, {}
    communities = find_communities(data)
    for path in communities:
        name = path.relative_to(data).as_posix() if path != data else path.name
        truth = root / "ground_truth" / name
        read, left_out = _read_community(path, name, truth)
        code_written += left_out
        for person, session in read:
            uid = f"{name}/{person}"
            if turns := own_turns(session.model_dump(exclude_none=True), person):
                histories.setdefault(uid, []).append("\n".join(t["content"] for t in turns))
            for meta in map(item_meta, session.purchase_history or []):
                items.setdefault(meta["parent_asin"], meta)
                buyers.setdefault(meta["parent_asin"], set()).add(uid)
        typo_truth.update(_typo_truth(truth, name))
    products = [product_from_meta(meta, tuple(sorted(buyers[pid]))) for pid, meta in items.items()]
    origin = (f"personalens population {root}: {len(communities)} community(ies), "
              f"{len(histories)} people with writing, {len(products)} purchased items; "
              f"{code_written} session(s) written by code left out")
    return BuildSource(products, histories, typo_truth, origin)
