"""A generated community read back whole: profiles, habits, graph, questions and every session
with its provenance, as the population report and the quality rules look at it.

Read from the files `personalens generate` wrote (so an older run's report can be redrawn):
ground_truth/<community>/ (profiles, writing habits, social graph, sessions.json) and the
release at its highest noise level, which holds every session the community has (the noise
levels are nested).
"""

import json
from dataclasses import dataclass
from pathlib import Path

import networkx as nx

from personalens.input_files import read_json
from personalens.population.release_reader import Community, available_noises, load_community
from personalens.population.social_graph import from_release_json


@dataclass(frozen=True)
class GeneratedSession:
    person: str
    kind: str  # conversation, user_ai_interaction or purchase_history
    noise: bool  # True: reveals nothing (a distractor)
    reveals: dict | None  # {subject, attribute, value, description} of a personal session
    revealed_by: str | None  # "model", "fallback", or None for noise
    segment_id: str  # at the highest noise level
    body: dict  # the release session without its ids: time, turns or purchases


@dataclass(frozen=True)
class GeneratedCommunity:
    name: str
    profiles: dict[str, dict]  # name -> {"persona": ..., "attributes": {...}}
    habits: dict[str, dict]  # name -> {"writing_style": ..., "typo_rates": {...}}; {} if absent
    graph: nx.DiGraph
    release: Community  # questions and the highest noise level's sessions and ground truth
    noise: str  # that level
    sessions: list[GeneratedSession]

    @property
    def people(self) -> list[str]:
        return list(self.profiles)


def generated_communities(out: Path) -> list[str]:
    """Names of the communities whose files are complete in a generate run directory."""
    return sorted(p.parent.name for p in (out / "ground_truth").glob("*/sessions.json")
                  if (out / "synthetic_data" / p.parent.name / "eval_info").is_dir())


def read_generated(out: Path, name: str) -> GeneratedCommunity:
    truth = out / "ground_truth" / name
    root = out / "synthetic_data" / name
    noise = max(available_noises(root), key=float)
    release = load_community(root, [noise])
    bodies = {s.segment_id: json.loads(s.text)
              for sessions in release.levels[noise].sessions.values() for s in sessions}
    sessions = [GeneratedSession(s["person"], s["kind"], s["noise"], s["reveals"],
                                 s["revealed_by"], s["segment_ids"][noise],
                                 bodies[s["segment_ids"][noise]])
                for s in read_json(truth / "sessions.json") if s["segment_ids"].get(noise)]
    habits = truth / "writing_habits.json"
    return GeneratedCommunity(name, read_json(truth / "profiles.json"),
                              read_json(habits) if habits.exists() else {},
                              from_release_json(read_json(truth / "social_graph.json")),
                              release, noise, sessions)
