import networkx as nx

from personalens.population.social_graph import (
    Relation,
    build_graph,
    check_graph,
    from_release_json,
    to_release_json,
)

PEOPLE = ["Ana", "Ben", "Cy", "Dee"]


def test_relations_are_stored_both_ways_with_their_inverse():
    graph, report = build_graph(PEOPLE, [Relation("Ana", "Ben", "mother"),
                                         Relation("Ben", "Cy", "colleague")])
    assert graph.edges["Ana", "Ben"]["relation"] == "parent"  # Ben is Ana's parent
    assert graph.edges["Ben", "Ana"]["relation"] == "child"
    assert graph.edges["Cy", "Ben"]["relation"] == "coworker"
    assert report.fixes == [] and check_graph(graph) == []


def test_contradictions_keep_the_closer_tie_and_are_reported():
    graph, report = build_graph(PEOPLE, [Relation("Ana", "Ben", "friend"),
                                         Relation("Ana", "Ben", "sibling")])
    assert graph.edges["Ana", "Ben"]["relation"] == "sibling"
    assert report.fixes == ["Ben was both friend and sibling of Ana; kept sibling"]


def test_second_partner_becomes_a_friend():
    graph, report = build_graph(PEOPLE, [Relation("Ana", "Ben", "wife"),
                                         Relation("Ana", "Cy", "husband")])
    assert {graph.edges["Ana", o]["relation"] for o in ("Ben", "Cy")} == {"partner", "friend"}
    assert check_graph(graph) == [] and len(report.fixes) == 1


def test_parent_cycles_are_broken():
    graph, report = build_graph(PEOPLE, [Relation("Ana", "Ben", "parent"),
                                         Relation("Ben", "Cy", "parent"),
                                         Relation("Cy", "Ana", "parent")])
    parents = nx.DiGraph((u, v) for u, v, r in graph.edges(data="relation") if r == "parent")
    assert nx.is_directed_acyclic_graph(parents)
    assert any("ancestors" in fix for fix in report.fixes) and check_graph(graph) == []


def test_self_loops_unknown_people_and_unknown_words_are_fixed():
    graph, report = build_graph(PEOPLE, [Relation("Ana", "Ana", "friend"),
                                         Relation("Ana", "Zed", "friend"),
                                         Relation("Ana", "Dee", "nemesis")])
    assert graph.edges["Dee", "Ana"]["relation"] == "friend"
    assert len(report.fixes) == 3 and graph.number_of_edges() == 2


def test_check_graph_finds_asymmetry_and_release_json_round_trips():
    graph, _ = build_graph(PEOPLE, [Relation("Ana", "Ben", "parent")])
    again = from_release_json(to_release_json(graph, {p: "" for p in PEOPLE}))
    assert nx.utils.edges_equal(sorted(again.edges(data="relation")),
                                sorted(graph.edges(data="relation")))
    again.remove_edge("Ben", "Ana")
    assert check_graph(again) == ["Ana -> Ben (parent) has no reverse edge"]
    again.add_edge("Ben", "Ana", relation="friend")
    assert check_graph(again)[0] == "Ana -> Ben is parent but Ben -> Ana is friend"


def test_a_whole_family_shares_one_home_country_group():
    from personalens.population.profile_stage import grounded_groups

    graph, _ = build_graph(PEOPLE, [Relation("Ana", "Ben", "sibling"),
                                    Relation("Ana", "Cy", "parent"),
                                    Relation("Dee", "Ben", "coworker")])
    groups = grounded_groups(graph)
    assert (("home_country",), ["Ana", "Ben", "Cy"]) in groups
    assert (("birth_city",), ["Ana", "Ben"]) in groups
    assert (("employer",), ["Ben", "Dee"]) in groups and len(groups) == 3


def test_family_members_take_the_first_members_surname():
    import numpy as np

    from personalens.population.community import _adopt_family_surnames
    from personalens.population.personas import Seed, SeedSampler

    seeds = [Seed("Ann Alpha", ""), Seed("Bob Beta", ""), Seed("Dan Delta", "")]
    sampler = SeedSampler(["p"], np.random.default_rng(0))
    # Dan (a newcomer) is Bob's sibling, Bob is Ann's sibling: all become Alphas.
    renames = _adopt_family_surnames(seeds, [Relation("Ann Alpha", "Bob Beta", "sibling"),
                                             Relation("Dan Delta", "Bob Beta", "sibling")],
                                     sampler)
    assert renames == {"Bob Beta": "Bob Alpha", "Dan Delta": "Dan Alpha"}
