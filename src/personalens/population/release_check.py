"""The lexical checks of a community in the release layout, at one noise level: every answer
item is revealed by one of its sessions, no session that no question references names a
queried item, and the social graph is consistent.

These are the release validator's checks without a judge, on the shared definitions of
`reveal_check`; the population report shows their result for the data it just wrote.
"""

import json

import networkx as nx

from personalens.population.release_reader import Community
from personalens.population.reveal_check import leaked_items, queried_items, reveals
from personalens.population.social_graph import check_graph


def _names(community: Community, noise: str) -> set[str]:
    # People's names are speakers and conversation partners, not facts.
    level = community.levels[noise]
    partners = {json.loads(s.text).get("target_name") for sessions in level.sessions.values()
                for s in sessions if s.kind == "conversation"}
    return set(community.questions) | partners


def release_problems(community: Community, noise: str, graph: nx.DiGraph) -> list[str]:
    """What fails the checks, one line each; [] when the community passes."""
    level = community.levels[noise]
    names = _names(community, noise)
    problems = [f"graph: {p}" for p in check_graph(graph)]
    for person in community.people(noise):
        texts = {s.segment_id: s.text for s in level.sessions[person]}
        questions = [q for q in community.questions[person] if q.type != "Subjective"]
        used: set[str] = set()
        for q in questions:
            attribute = "relationship" if "relationship" in q.question else ""
            for item, ids in level.ground_truth[q.q_id].items():
                used.update(ids)
                if not any(reveals(texts[i], item, attribute) for i in ids):
                    problems.append(f"{person} q_id {q.q_id}: item {item!r} is not revealed "
                                    f"by its session(s) {', '.join(ids)}")
        queried = queried_items(((q.type, level.ground_truth[q.q_id]) for q in questions), names)
        for segment_id in sorted(set(texts) - used):
            found = leaked_items(json.loads(texts[segment_id]), queried)
            if found:
                problems.append(f"{person} session {segment_id} (no question's) names queried "
                                f"item(s) {', '.join(map(repr, found))}")
    return problems
