"""`personalens personabench validate DIR`: is a dataset in the release layout sound?

Checks, per community and noise level: every ground-truth id resolves (the loader's job); every
queried answer item is revealed by at least one of its sessions; noise sessions reveal no queried
item; the social graph is symmetric. Reveal and leak checks are lexical by default and use a
judge model with `--judge`. The lexical leak check is the generator's own
(`reveal_check.leaked_items` over `reveal_check.queried_items`), so generated data passes it.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import pydantic
import typer

from personalens.models import ChatModel, complete_structured
from personalens.models.role_set import RoleModels
from personalens.population.release_reader import (
    Community,
    available_noises,
    find_communities,
    load_community,
)
from personalens.population.reveal_check import leaked_items, queried_items, reveals
from personalens.population.social_graph import INVERSE, check_graph, from_release_json
from personalens.runs.options import user_path


@dataclass
class ValidationReport:
    errors: list[str] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)


class Verdict(pydantic.BaseModel):
    reveals: bool


class Leaked(pydantic.BaseModel):
    revealed: list[int]


async def _judge_reveals(judge: ChatModel, text: str, fact: str) -> bool:
    verdict, _ = await complete_structured(judge, [{"role": "user", "content": (
        f"Session:\n{text}\n\nDoes this session reveal, directly or by clear implication, "
        f"this fact: {fact}? Answer with JSON.")}], Verdict, temperature=0.0, max_tokens=20)
    return verdict.reveals


async def _judge_leaks(judge: ChatModel, text: str, facts: list[str]) -> list[str]:
    listing = "\n".join(f"{i}. {f}" for i, f in enumerate(facts))
    leaked, _ = await complete_structured(judge, [{"role": "user", "content": (
        f"Session:\n{text}\n\nFacts:\n{listing}\n\nList the numbers of the facts this session "
        "reveals (empty if none). Answer with JSON.")}], Leaked, temperature=0.0, max_tokens=60)
    return [facts[i] for i in leaked.revealed if 0 <= i < len(facts)]


async def validate(root: Path, judge: ChatModel | None = None) -> ValidationReport:
    report = ValidationReport()
    for path in find_communities(root):
        community = load_community(path, available_noises(path))
        for noise in community.levels:
            await _check_level(community, noise, judge, report)
        _check_graph(path, report)
    return report


def queried_by_person(community: Community, noise: str) -> dict[str, list[str]]:
    """Each person's queried items at one noise level: every answer item of their questions
    (own attributes, relationships, neighbours' attributes), people's names excepted.

    The generator guards its noise sessions against exactly this set (`reveal_check`)."""
    level = community.levels[noise]
    # People's names are speakers and partners in any session, so they are not leaks.
    names = set(community.questions) | _partners(level)
    return {person: queried_items(((q.type, level.ground_truth[q.q_id])
                                   for q in community.questions[person]), names)
            for person in community.people(noise)}


async def _check_level(community: Community, noise: str, judge: ChatModel | None,
                       report: ValidationReport) -> None:
    level = community.levels[noise]
    where = f"{community.name} noise {noise}"
    people = community.people(noise)
    queried = queried_by_person(community, noise)
    referenced = 0
    for person in people:
        texts = {s.segment_id: s.text for s in level.sessions[person]}
        used: set[str] = set()
        for q in community.questions[person]:
            if q.type == "Subjective":
                continue
            for item, ids in level.ground_truth[q.q_id].items():
                used.update(ids)
                attribute = "relationship" if "relationship" in q.question else ""
                shown = [i for i in ids if reveals(texts[i], item, attribute)
                         or (judge is not None and await _judge_reveals(
                             judge, texts[i], f"{q.question} -> {item}"))]
                if not shown:
                    report.errors.append(f"{where}: {person} q_id {q.q_id} item {item!r} is not "
                                         f"revealed by its session(s) {', '.join(ids)}")
        referenced += len(used)
        for segment_id in sorted(set(texts) - used):
            found = (await _judge_leaks(judge, texts[segment_id], queried[person]) if judge
                     else leaked_items(json.loads(texts[segment_id]), queried[person]))
            if found:
                report.errors.append(f"{where}: {person} noise session {segment_id} reveals "
                                     f"queried item(s) {', '.join(map(repr, found))}")
    sessions = sum(len(level.sessions[p]) for p in people)
    report.summary.append(f"{where}: {len(people)} people, {sessions} sessions "
                          f"({sessions - referenced} not referenced by any question)")


def _partners(level) -> set[str]:
    return {json.loads(s.text).get("target_name") for ss in level.sessions.values()
            for s in ss if s.kind == "conversation"}


def _check_graph(path: Path, report: ValidationReport) -> None:
    graph_file = path / "graph_json" / "social_graph.json"
    if not graph_file.exists():
        report.errors.append(f"{path.name}: no graph_json/social_graph.json")
        return
    try:
        graph = from_release_json(json.loads(graph_file.read_text(encoding="utf-8")))
    except (KeyError, TypeError, ValueError) as exc:
        report.errors.append(f"{graph_file}: not a social graph ({exc})")
        return
    typed = all(r in INVERSE for _, _, r in graph.edges(data="relation"))
    problems = (check_graph(graph) if typed else
                [f"{u} -> {v} has no reverse edge" for u, v in graph.edges
                 if not graph.has_edge(v, u)])
    report.errors += [f"{path.name} graph: {p}" for p in problems]
    report.summary.append(f"{path.name}: graph with {graph.number_of_nodes()} people, "
                          f"{graph.number_of_edges()} directed ties")


def validate_command(
    data: Annotated[Path, typer.Argument(parser=user_path,
                                         help="A dataset in the release layout.")],
    models: RoleModels,
) -> None:
    """Check a dataset: ids resolve, answers are revealed, noise leaks nothing, graph symmetric."""
    import asyncio

    judge = models["judge"]
    report = asyncio.run(validate(data.resolve(), judge and judge.load("judge")))
    for line in report.summary:
        typer.echo(line)
    for error in report.errors:
        typer.echo(f"error: {error}", err=True)
    typer.echo(f"{len(report.errors)} error(s)")
    if report.errors:
        raise typer.Exit(1)
