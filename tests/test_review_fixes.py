"""Fixes from a review of the scorecard, Inspect and population-report code: each case is a
plausible input that used to give a wrong figure or a crash."""

import networkx as nx

from personalens.inspect_tasks.log_import import merged
from personalens.inspect_tasks.pqb import figures
from personalens.population.graph_svg import graph_svg
from personalens.population.quality import is_degenerate, is_degenerate_session
from personalens.population.reveal_check import session_text
from personalens.scorecard.dry_run import _specs
from personalens.scorecard.inputs import make_plan


def test_catalogue_fields_shared_by_purchases_are_not_degenerate_writing():
    kitchen = ["Home & Kitchen", "Kitchen & Dining", "Cutlery"]
    items = [{"title": t, "description": d, "categories": kitchen}
             for t, d in [("Chef Knife", "Sharp blade."), ("Cutting Board", "Maple wood."),
                          ("Knife Sharpener", "Two stages."), ("Paring Knife", "Small blade.")]]
    session = {"purchases": items}
    assert is_degenerate(session_text(session))  # what the rule read before
    assert not is_degenerate_session(session)
    looping = {"purchases": [{"title": "Knife", "description": "sow sow sow sow sow sow"}]}
    assert is_degenerate_session(looping)


def test_a_tie_kind_without_a_colour_is_drawn_in_the_legend_last():
    graph = nx.DiGraph()
    graph.add_edge("Ann", "Bo", relation="neighbor")
    graph.add_edge("Bo", "Cy", relation="sibling")
    svg = str(graph_svg(graph, "community_0"))
    legend = svg[svg.rindex("sibling") - 200:]
    assert "neighbor" in legend and svg.rindex("sibling") < svg.rindex("neighbor")


def test_a_failed_sample_never_replaces_a_recorded_one_whatever_the_order():
    ok, failed = {"key": "a", "status": "ok", "x": 1}, {"key": "a", "status": "failed"}
    retry = {"key": "b", "status": "ok", "x": 2}
    assert merged([{"a": failed}, {"a": ok}]) == {"a": ok}
    assert merged([{"a": ok, "b": {"key": "b", "status": "failed"}}, {"a": failed, "b": retry}]) \
        == {"a": ok, "b": retry}
    newer = {"key": "a", "status": "ok", "x": 3}
    assert merged([{"a": ok}, {"a": newer}]) == {"a": newer}


def test_pqb_reports_no_typo_rank_for_a_record_without_a_typo_query():
    line = {"rank_clean": 2, "syntax_query": "q", "rank_typo": None, "typo_query": None}
    assert figures(line) == {"rr_clean": 0.5}
    assert figures({**line, "typo_query": "qq"}) == {"rr_clean": 0.5, "rr_typo": 0.0}


def test_the_scorecard_dry_run_books_a_reranker_under_the_model_it_runs(tmp_path):
    plan = make_plan(["a=scripted,retriever=rerank-llm:scripted",
                      "b=openai/x,retriever=rerank-llm"], out=tmp_path / "card",
                     lenses="personabench")
    a, b = plan.evaluations()
    assert _specs(a) == {"target": "scripted", "reranker": "scripted"}
    assert _specs(b) == {"target": "openai/x", "reranker": "local/smollm2-135m"}
