"""The community's social graph: typed, symmetric relations, with a report of every fix.

An edge u -> v with relation r reads "v is u's r". Every relation has an inverse (parent/child,
sibling/sibling, ...), and the graph always holds both directions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where a graph is made: reading the module (a command's help) is light
    import networkx as nx

INVERSE = {"parent": "child", "child": "parent", "sibling": "sibling", "partner": "partner",
           "coworker": "coworker", "friend": "friend"}
RELATIONS = tuple(INVERSE)
FAMILY = {"parent", "child", "sibling", "partner"}
# When a model names two relations for one pair, the closer tie wins.
_PRIORITY = {"parent": 0, "child": 0, "sibling": 1, "partner": 2, "coworker": 3, "friend": 4}
SYNONYMS = {
    "mother": "parent", "father": "parent", "mom": "parent", "dad": "parent",
    "son": "child", "daughter": "child", "brother": "sibling", "sister": "sibling",
    "husband": "partner", "wife": "partner", "spouse": "partner", "girlfriend": "partner",
    "boyfriend": "partner", "fiance": "partner", "fiancee": "partner",
    "colleague": "coworker", "co-worker": "coworker", "workmate": "coworker",
    "best friend": "friend", "neighbor": "friend", "neighbour": "friend", "acquaintance": "friend",
}


@dataclass(frozen=True)
class Relation:
    person: str
    other: str
    relation: str  # what `other` is to `person`
    description: str = ""


@dataclass
class GraphReport:
    fixes: list[str] = field(default_factory=list)


def normalise_relation(word: str) -> str | None:
    word = word.strip().lower()
    return word if word in INVERSE else SYNONYMS.get(word)


def build_graph(people: list[str], relations: list[Relation]) -> tuple[nx.DiGraph, GraphReport]:
    """A consistent graph from (possibly contradictory) model output, and what was fixed."""
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_nodes_from(people)
    report = GraphReport()
    for r in relations:
        _add(graph, r, report)
    _limit_partners(graph, report)
    _break_parent_cycles(graph, report)
    return graph, report


def _add(graph: nx.DiGraph, r: Relation, report: GraphReport) -> None:
    relation = normalise_relation(r.relation)
    if r.person == r.other:
        report.fixes.append(f"dropped self-relation of {r.person}")
        return
    if r.person not in graph or r.other not in graph:
        report.fixes.append(f"dropped relation to unknown person: {r.person} - {r.other}")
        return
    if relation is None:
        report.fixes.append(f"unknown relation {r.relation!r} for {r.person} - {r.other}; "
                            "made it 'friend'")
        relation = "friend"
    if graph.has_edge(r.person, r.other):
        current = graph.edges[r.person, r.other]["relation"]
        if current == relation:
            return
        keep = min(current, relation, key=_PRIORITY.__getitem__)
        report.fixes.append(f"{r.other} was both {current} and {relation} of {r.person}; "
                            f"kept {keep}")
        if keep == current:
            return
    graph.add_edge(r.person, r.other, relation=relation, description=r.description)
    graph.add_edge(r.other, r.person, relation=INVERSE[relation], description=r.description)


def _limit_partners(graph: nx.DiGraph, report: GraphReport) -> None:
    for person in list(graph.nodes):
        partners = [o for o in graph.successors(person)
                    if graph.edges[person, o]["relation"] == "partner"]
        for extra in partners[1:]:
            report.fixes.append(f"{person} had more than one partner; {extra} became a friend")
            _retype(graph, person, extra, "friend")


def _break_parent_cycles(graph: nx.DiGraph, report: GraphReport) -> None:
    """Nobody may be their own ancestor; a parent edge that closes a cycle becomes 'friend'."""
    import networkx as nx

    parents = nx.DiGraph((u, v) for u, v, r in graph.edges(data="relation") if r == "parent")
    while True:
        try:
            cycle = nx.find_cycle(parents)
        except nx.NetworkXNoCycle:
            return
        child, parent = cycle[-1]
        report.fixes.append(f"{parent} and {child} were each other's ancestors; "
                            "their parent link became 'friend'")
        parents.remove_edge(child, parent)
        _retype(graph, child, parent, "friend")


def _retype(graph: nx.DiGraph, a: str, b: str, relation: str) -> None:
    graph.edges[a, b]["relation"] = relation
    graph.edges[b, a]["relation"] = INVERSE[relation]


def check_graph(graph: nx.DiGraph) -> list[str]:
    """Problems that a consistent graph never has (the validator reports these)."""
    problems = []
    for u, v, relation in graph.edges(data="relation"):
        if relation not in INVERSE:
            problems.append(f"{u} -> {v}: unknown relation {relation!r}")
        elif not graph.has_edge(v, u):
            problems.append(f"{u} -> {v} ({relation}) has no reverse edge")
        elif graph.edges[v, u]["relation"] != INVERSE[relation]:
            problems.append(f"{u} -> {v} is {relation} but {v} -> {u} is "
                            f"{graph.edges[v, u]['relation']}")
    return problems


def neighbours(graph: nx.DiGraph, person: str) -> list[tuple[str, str]]:
    """(other, what other is to person), in a stable order."""
    return sorted((o, graph.edges[person, o]["relation"]) for o in graph.successors(person))


def to_release_json(graph: nx.DiGraph, personas: dict[str, str]) -> dict:
    """The release's graph_json/social_graph.json shape: numbered nodes, typed directed edges."""
    numbers = {name: i for i, name in enumerate(sorted(graph.nodes), start=1)}
    return {
        "nodes": [{"node": i, "properties": {"name": n, "persona": personas.get(n, "")}}
                  for n, i in numbers.items()],
        "edges": [{"source": numbers[u], "target": numbers[v],
                   "properties": {"relationship": r,
                                  "description": graph.edges[u, v].get("description", "")}}
                  for u, v, r in sorted(graph.edges(data="relation"))],
    }


def from_release_json(data: dict) -> nx.DiGraph:
    """Read a graph written by `to_release_json` (or the release itself) back."""
    names = {node["node"]: node["properties"]["name"] for node in data["nodes"]}
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_nodes_from(names.values())
    for edge in data["edges"]:
        props = edge["properties"]
        graph.add_edge(names[edge["source"]], names[edge["target"]],
                       relation=props["relationship"], description=props.get("description", ""))
    return graph
