"""One community end to end: people, graph, profiles, sessions, questions, release files."""

import asyncio
import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from personalens.models import ChatModel
from personalens.population import release_writer
from personalens.population.document_plan import PURCHASE, PersonPlan, Planner, SessionPlan
from personalens.population.graph_stage import newcomer, pick_anchor, triad
from personalens.population.personas import Seed, SeedSampler
from personalens.population.profile_schema import ProfileSchema
from personalens.population.profile_stage import (
    complete_profile,
    grounded_attributes,
    grounded_groups,
    reconcile,
)
from personalens.population.reveal_check import leaked_items, queried_items, session_text
from personalens.population.session_writer import clean_fallback, small_talk, write_session
from personalens.population.social_graph import FAMILY, Relation, build_graph, to_release_json
from personalens.population.writing_habits import draw_habits, type_written
from personalens.runs.step_store import StepStore


@dataclass(frozen=True)
class GenerationConfig:
    people: int
    communities: int
    seed: int
    noises: list[str]
    attributes_per_person: int
    update_probability: float
    window: tuple[dt.datetime, dt.datetime]
    news: list[dict]
    personas: list[str]
    schema: ProfileSchema
    max_list_entries: int = 5
    typo_habits: bool = True  # off: people keep their writing styles but make no typos


def _adopt_family_surnames(seeds: list[Seed], relations: list[Relation],
                           sampler: SeedSampler) -> dict[str, str]:
    """Blood relatives share a surname: everyone in a family takes its first member's (if free)."""
    order = {s.name: i for i, s in enumerate(seeds)}
    family = nx.Graph((r.person, r.other) for r in relations
                      if r.relation in FAMILY - {"partner"})
    renames: dict[str, str] = {}
    for members in sorted(nx.connected_components(family), key=lambda c: min(map(order.get, c))):
        first, *rest = sorted(members, key=order.get)
        for person in rest:
            candidate = f"{person.split()[0]} {first.split()[-1]}"
            if candidate != person and candidate not in sampler.used_names:
                sampler.used_names.add(candidate)
                renames[person] = candidate
    return renames


async def _relations(model, store, key, seeds, rng) -> list[Relation]:
    relations = await triad(model, store, f"{key}/graph/triad", seeds[:3])
    for i in range(3, len(seeds)):
        anchor, other = pick_anchor(rng, i)
        value = await newcomer(model, store, f"{key}/graph/newcomer/{i}", seeds[i], seeds[anchor],
                               seeds[other])
        relations.append(Relation(seeds[i].name, seeds[anchor].name,
                                  value["relation_to_anchor"], value["description"]))
        if value["also_knows_other"]:
            relations.append(Relation(seeds[i].name, seeds[other].name,
                                      value["relation_to_other"], ""))
    return relations


async def generate_community(index: int, config: GenerationConfig, model: ChatModel,
                             store: StepStore, out: Path) -> dict[str, Any]:
    """Generate community `index` into out/synthetic_data and out/ground_truth; return stats."""
    key = f"community_{index}"
    rng = np.random.default_rng([config.seed, index])
    sampler = SeedSampler(config.personas, rng)
    seeds = [sampler.seed() for _ in range(config.people)]
    relations = await _relations(model, store, key, seeds, rng)
    renames = _adopt_family_surnames(seeds, relations, sampler)

    def name(n: str) -> str:
        return renames.get(n, n)

    personas = {name(s.name): s.persona for s in seeds}
    def renamed(text: str) -> str:  # descriptions were written before family renames
        for old, new in renames.items():
            text = text.replace(old, new)
        return text

    graph, report = build_graph(list(personas), [
        Relation(name(r.person), name(r.other), r.relation, renamed(r.description))
        for r in relations])

    known: dict[str, dict] = {p: {} for p in personas}
    for j, (keys, members) in enumerate(grounded_groups(graph)):
        shared = await grounded_attributes(model, store, f"{key}/grounded/{j}", config.schema,
                                           keys, members, personas, config.max_list_entries)
        for member in members:
            known[member].update(shared)
    profiles = dict(zip(personas, await asyncio.gather(*(
        complete_profile(model, store, f"{key}/profile/{p}", config.schema,
                         Seed(p, personas[p]), graph, personas, known[p],
                         config.max_list_entries)
        for p in personas)), strict=True))

    reconciled = [fix for p in personas for fix in reconcile(profiles[p], graph, p)]
    planner = Planner(rng, config.schema, graph, profiles, config.window,
                      config.attributes_per_person, config.update_probability, config.news)
    max_noise = max(float(n) for n in config.noises)
    plans = {p: planner.plan(p, max_noise) for p in personas}
    people = list(personas)
    habits = draw_habits(config.seed, index, people, config.typo_habits)
    queried = queried_by_person(plans)
    written = await _write_sessions(model, store, key, plans, personas,
                                    {p: h.style for p, h in habits.items()}, queried)
    fixes = report.fixes + reconciled + _drop_repeated_purchases(plans, written)
    typed = type_written(written, _reveals(plans), habits, config.seed, key)
    written = _without_leaks(plans, written, typed, queried)

    root = out / "synthetic_data" / key
    ids = {noise: release_writer.write_level(root, noise, people, plans, written)
           for noise in config.noises}
    release_writer.write_questions(root, people, plans, ids)
    graph_json = to_release_json(graph, personas)
    release_writer.write_ground_truth(out / "ground_truth" / key, profiles, personas,
                                      graph_json, fixes, plans, written, ids)
    release_writer.dump_json(out / "ground_truth" / key / "writing_habits.json",
                             {p: h.as_json() for p, h in habits.items()})
    (root / "graph_json").mkdir(parents=True, exist_ok=True)
    release_writer.dump_json(root / "graph_json" / "social_graph.json", graph_json)
    return _stats(plans, written, fixes, config.noises)


def queried_by_person(plans: dict[str, PersonPlan]) -> dict[str, list[str]]:
    """Each person's queried items, as the release's validator derives them from the release:
    every answer item of every question, people's names excepted (`reveal_check.queried_items`).
    """
    return {person: queried_items(((q.type, q.items) for q in plan.questions), plans)
            for person, plan in plans.items()}


def unreferenced(plan: PersonPlan) -> list[SessionPlan]:
    """Sessions no question points to, which validation checks for leaks: the noise, and the
    earlier sessions of updated preferences (they reveal an outdated value, not an answer)."""
    referenced = {i for q in plan.questions for ids in q.items.values() for i in ids}
    return [s for s in plan.personal if s.index not in referenced] + plan.noise


async def _write_sessions(model, store, key, plans, personas, styles,
                          queried) -> dict[str, dict[int, dict]]:
    jobs = []
    for person, plan in plans.items():
        guarded = {s.index for s in unreferenced(plan)}
        for session in plan.personal + plan.noise:
            jobs.append((person, session,
                         queried[person] if session.index in guarded else None))

    async def one(person, session, forbidden):
        return await store.get(f"{key}/session/{person}/{session.index}",
                               lambda: write_session(model, session, person, personas, forbidden,
                                                     styles[person]))

    results = await asyncio.gather(*(one(*job) for job in jobs))
    written: dict[str, dict[int, dict]] = {p: {} for p in plans}
    for (person, session, _), result in zip(jobs, results, strict=True):
        written[person][session.index] = result
    return written


def _without_leaks(plans, clean, typed, queried) -> dict[str, dict[int, dict]]:
    """The typed sessions, but none that leaks: the last word of the shared leak check.

    A typo can make a word queried ("friends" -> "friend"): that session keeps its clean text.
    A session replayed from an older run's records may leak by today's check: it is replaced
    by small talk, as a fresh run would have replaced it.
    """
    for person, plan in plans.items():
        items = queried[person]
        for session in unreferenced(plan):
            if not leaked_items(typed[person][session.index]["session"], items):
                continue
            meta = clean[person][session.index]
            if leaked_items(meta["session"], items):
                replacement = small_talk(session, person, items)
                if session.reveal is not None:
                    replacement = clean_fallback(session, person, replacement, items)
                meta = {**meta, "session": replacement, "replaced_leak": True,
                        "revealed_by": None if session.reveal is None else "fallback"}
            typed[person][session.index] = meta
    return typed


def _reveals(plans) -> dict:
    return {p: {s.index: s.reveal for s in plan.personal + plan.noise}
            for p, plan in plans.items()}


def _drop_repeated_purchases(plans, written) -> list[str]:
    """Nobody buys the same product twice: later repeats leave noise purchase sessions."""
    fixes = []
    for person, plan in plans.items():
        seen: set[str] = set()
        for session in sorted(plan.personal + plan.noise, key=lambda s: s.time):
            if session.kind != PURCHASE:
                continue
            items = written[person][session.index]["session"]["purchase_history"]
            kept = [i for i in items if i["title"].lower() not in seen]
            if session.reveal is None and kept and len(kept) < len(items):
                fixes.append(f"{person}: dropped {len(items) - len(kept)} repeated purchase(s)")
                written[person][session.index]["session"]["purchase_history"] = kept
            seen.update(i["title"].lower() for i in items)
    return fixes


def _stats(plans, written, fixes, noises) -> dict[str, Any]:
    per_level = {}
    for noise in noises:
        sessions = [(p, s) for p, plan in plans.items()
                    for s in release_writer.level_sessions(plan, float(noise))]
        utterances = sum(len(written[p][s.index]["session"].get(k, []))
                         for p, s in sessions for k in ("conversation", "user_ai_interaction"))
        per_level[noise] = {"sessions": len(sessions), "utterances": utterances}
    personal = [written[p][s.index] for p, plan in plans.items() for s in plan.personal]
    noise = [written[p][s.index] for p, plan in plans.items() for s in plan.noise]
    return {
        "people": len(plans), "questions": sum(len(p.questions) for p in plans.values()),
        "levels": per_level, "personal_sessions": len(personal),
        "revealed_by_model": sum(w["revealed_by"] == "model" for w in personal),
        "revealed_by_fallback": sum(w["revealed_by"] == "fallback" for w in personal),
        "written_by_code": sum(bool(w.get("model_failed")) for w in personal + noise),
        "noise_sessions": len(noise),
        "noise_replaced_for_leaks": sum(bool(w.get("replaced_leak")) for w in noise),
        "fixes": fixes, "characters": sum(len(session_text(w["session"]))
                                          for w in personal + noise),
    }
