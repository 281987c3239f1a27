"""The population report: the graph drawn, a card per person, marked reveals, quality warnings
in metrics.json and at the end of `generate`; opened in headless Chromium."""

import json
import shutil

import networkx as nx
import pytest

from personalens.models import ModelSettings
from personalens.population.generate import GenerateOptions, run_generate
from personalens.population.graph_svg import circle_layout, graph_svg
from personalens.population.social_graph import Relation, build_graph
from personalens.report import HtmlReport, tag
from tests.devtools_pipe import DevToolsPipe

CHROMIUM = shutil.which("chromium")


def _generate(out, **overrides):
    model = ModelSettings(spec="scripted", use_cache=False)
    options = dict(people=4, communities=1, models={"generator": model}, out=out, seed=3,
                   noise=["0.0", "0.5"], attributes_per_person=4, update_probability=1.0)
    return run_generate(GenerateOptions(**{**options, **overrides}), progress=False)


def _evaluate(browser, session, expression):
    return browser.call("Runtime.evaluate", session, expression=expression,
                        returnByValue=True)["result"]["value"]


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (installed by .ci/run)")
def test_chromium_finds_the_graph_a_person_card_and_a_marked_reveal(tmp_path, double):
    outcome = _generate(tmp_path / "gen")
    assert outcome.complete
    people = json.loads((tmp_path / "gen/ground_truth/community_0/profiles.json").read_text())
    browser = DevToolsPipe(tmp_path / "profile")
    try:
        target = browser.call("Target.createTarget",
                              url=(tmp_path / "gen" / "report.html").as_uri())["targetId"]
        session = browser.call("Target.attachToTarget", targetId=target,
                               flatten=True)["sessionId"]
        for _ in range(500):
            if _evaluate(browser, session, "document.readyState === 'complete' && "
                                           "location.protocol === 'file:'"):
                break
        found = _evaluate(browser, session, """(() => {
            const svg = document.querySelector('svg.social-graph');
            const box = svg.getBoundingClientRect();
            const card = document.querySelector('.person-card');
            card.open = true;
            const mark = document.querySelector('.session mark.reveal');
            return {nodes: [...svg.querySelectorAll('g.person')].map(g => g.dataset.name),
                    ties: svg.querySelectorAll('line.tie').length,
                    legend: [...svg.querySelectorAll('.legend text')].map(t => t.textContent),
                    drawn: box.width > 100 && box.height > 100,
                    card: card.querySelector('summary').textContent,
                    persona: card.querySelector('.persona').textContent,
                    questions: card.querySelectorAll('tbody tr').length,
                    mark: mark.textContent,
                    update: [...document.querySelectorAll('.update .session')].map(
                        e => [e.querySelector('.muted').textContent,
                              e.querySelector('.label').textContent]),
                    label: mark.closest('.session').querySelector('.label').textContent};
        })()""")
    finally:
        browser.close()
    assert sorted(found["nodes"]) == sorted(people)  # a node per person, drawn on the page
    assert found["drawn"] and found["ties"] >= len(people) - 1
    assert found["legend"] == ["parent / child"]  # the double picks the first relation
    first = next(iter(people))
    assert found["card"] == first and found["persona"] == people[first]["persona"]
    assert found["questions"] > 0
    # The double writes "I mention VALUE here" for the fact it is asked to reveal.
    value = found["label"].split(": ", 1)[1]
    assert found["mark"] == f"I mention {value} here"
    # At update probability 1 a list preference changed: its old value, then the current one.
    questions = json.loads((tmp_path / "gen/synthetic_data/community_0/eval_info/"
                                       "eval_info_all.json").read_text())
    changed = next(q for p in questions for q in p["Eval_Info"]["qa"] if q["outdated_value"])
    (first_note, first_label), (second_note, second_label) = found["update"]
    assert first_note == "earlier: outdated value" and second_note == "later: the current value"
    assert first_label.endswith(f": {changed['outdated_value'][0]}")
    assert second_label.split(": ", 1)[1] in changed["answer"]


def test_metrics_and_the_last_line_flag_fallback_reveals(tmp_path, double, monkeypatch):
    from tests.schema_double import SchemaDouble

    clean = _generate(tmp_path / "clean").metrics
    assert clean.quality_high == [] and clean.headlines()[-1].startswith("community_0: ")
    assert clean.quality["fallback_reveals"] == 0 and clean.quality["personal_sessions"] > 0

    original = SchemaDouble.__call__

    def hide(self, messages, params):  # the model never reveals: the fallback line does
        messages = [*messages[:-1], {**messages[-1], "content": messages[-1]["content"]
                                     .replace(" -> ", " -> hidden ")}]
        return original(self, messages, params)

    monkeypatch.setattr(SchemaDouble, "__call__", hide)
    metrics = _generate(tmp_path / "hidden").metrics
    n = metrics.communities["community_0"]["personal_sessions"]
    on_disk = json.loads((tmp_path / "hidden" / "metrics.json").read_text())
    assert on_disk["quality"]["fallback_reveals"] == on_disk["quality"]["personal_sessions"] == n
    assert on_disk["communities"]["community_0"]["quality"] == on_disk["quality"]
    assert on_disk["communities"]["community_0"]["validation_problems"] == 0
    assert on_disk["quality_high"] == ["fallback_reveals"]
    assert metrics.headlines()[-1].startswith(
        f"quality warning: {n} of {n} reveals written by the fallback line (a quarter")
    page = (tmp_path / "hidden" / "report.html").read_text()
    assert f"{n} of {n} (100%) HIGH" in page


def test_the_graph_escapes_names_and_draws_each_tie_once():
    hostile = "<script>alert(1)</script>"
    graph, _ = build_graph(["Ann Lee", hostile, "Bo Chan"],
                           [Relation("Ann Lee", hostile, "sibling"),
                            Relation("Ann Lee", "Bo Chan", "coworker")])
    svg = graph_svg(graph, "graph of <c>")
    assert "<script>" not in svg and "&lt;script&gt;alert(1)&lt;/script&gt;" in svg
    assert svg.count('class="tie"') == 2 and svg.count('class="person"') == 3
    assert 'data-relation="sibling"' in svg and 'data-relation="coworker"' in svg
    report = HtmlReport("t")
    report.markup(svg)
    assert "&lt;c&gt;" in report.render()


def test_the_circle_layout_starts_at_the_top_and_spaces_people_evenly():
    radius, where = circle_layout(["a", "b", "c", "d"])
    assert radius == 90.0
    assert [tuple(round(v, 6) for v in where[p]) for p in "abcd"] == [
        (0.0, -90.0), (90.0, 0.0), (0.0, 90.0), (-90.0, 0.0)]
    assert circle_layout(["p"] * 20)[0] == 180.0  # 9 px of circle per person beyond 10


def test_markup_escapes_text_and_refuses_what_could_run():
    assert tag("p", "a < b & c", class_="x") == '<p class="x">a &lt; b &amp; c</p>'
    assert tag("a", "t", title='say "hi"') == '<a title="say &quot;hi&quot;">t</a>'
    assert tag("ol", [tag("li", n) for n in (1, 2)]) == "<ol><li>1</li><li>2</li></ol>"
    assert tag("details", open=True) == "<details open></details>"
    assert tag("details", open=False, title=None) == "<details></details>"
    for bad in (lambda: tag("script", "x"), lambda: tag("svg", onload="x"),
                lambda: tag("p", **{"x y": 1}), lambda: tag("Img")):
        with pytest.raises(ValueError):
            bad()
    with pytest.raises(TypeError):
        HtmlReport("t").markup("<b>not built by tag</b>")
    with pytest.raises(ValueError):
        HtmlReport("t").stylesheet("p{}</style><script>")


def test_the_turns_that_reveal_a_fact_are_the_ones_marked():
    from personalens.population.generated_community import GeneratedSession
    from personalens.population.population_page import revealing_turns

    session = GeneratedSession("Ann", "user_ai_interaction", False,
                               {"subject": "Ann", "attribute": "hobbies",
                                "value": "Marketing (Dream)", "description": ""},
                               "model", "s", {})
    # One turn says it all: only that turn.
    assert revealing_turns(session, ["hi", "my Dream is marketing", "a dream"]) == {1}
    # The words are spread over turns 0 and 2: both, not turn 1.
    assert revealing_turns(session, ["about marketing", "nothing", "a dream"]) == {0, 2}
    # Not revealed at all (one word missing): nothing is marked.
    assert revealing_turns(session, ["about marketing", "nothing"]) == set()
    noise = GeneratedSession("Ann", "user_ai_interaction", True, None, None, "s", {})
    assert revealing_turns(noise, ["my Dream is marketing"]) == set()


def test_a_tie_kind_without_a_colour_is_drawn_in_the_legend_last():
    graph = nx.DiGraph()
    graph.add_edge("Ann", "Bo", relation="neighbor")
    graph.add_edge("Bo", "Cy", relation="sibling")
    svg = str(graph_svg(graph, "community_0"))
    legend = svg[svg.rindex("sibling") - 200:]
    assert "neighbor" in legend and svg.rindex("sibling") < svg.rindex("neighbor")
