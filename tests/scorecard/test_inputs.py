"""The scorecard's inputs: systems, sizes, prices and the runs a plan makes."""

import pytest

from personalens.errors import InputError
from personalens.scorecard.inputs import make_plan, parse_prices
from personalens.scorecard.runner import grid
from personalens.scorecard.systems import System, parse_system, parse_systems


def test_a_system_is_a_name_a_model_and_optionally_a_retriever_and_a_server():
    assert parse_system("small=local/smollm2-135m") == System("small", "local/smollm2-135m",
                                                              "minilm")
    assert parse_system("api=openai/gpt-4o-mini,retriever=bm25,base_url=http://h:8000/v1") == \
        System("api", "openai/gpt-4o-mini", "bm25", "http://h:8000/v1")


@pytest.mark.parametrize("text, says", [
    ("small", "expected NAME=MODEL"),
    ("small=", "expected NAME=MODEL"),
    ("=local/smollm2-135m", "the name ''"),
    ("a b=scripted", "the name 'a b'"),
    ("x=scripted,depth=3", "got 'depth=3'"),
    ("x=nowhere/model", "nowhere"),
])
def test_a_malformed_system_is_refused_naming_it(text, says):
    with pytest.raises(InputError, match=None) as caught:
        parse_system(text)
    assert says in str(caught.value)


def test_two_systems_of_one_name_are_refused():
    with pytest.raises(InputError, match="two systems are named 'a'"):
        parse_systems(["a=scripted", "b=scripted", "a=scripted,retriever=bm25"])


def test_prices_per_model():
    assert parse_prices(["openai/gpt-4o-mini=0.15,0.6", "scripted=1,2"]) == {
        "openai/gpt-4o-mini": (0.15, 0.6), "scripted": (1.0, 2.0)}
    with pytest.raises(InputError, match="MODEL=IN,OUT"):
        parse_prices(["openai/x=1"])


def test_a_plan_runs_the_builds_once_and_each_lens_per_system(tmp_path):
    plan = make_plan(["a=scripted", "b=scripted,retriever=bm25"], out=tmp_path / "card",
                     size="tiny", lenses="prisk,personabench")
    assert plan.lenses == ["personabench", "prisk"]  # the registry's order
    assert [s.label for s in plan.preparation()] == ["generate population", "build prisk"]
    prisk = plan.preparation()[1].options
    assert prisk.population == tmp_path / "card" / "population"
    assert (prisk.profiles, prisk.per_risk) == (1, 1)
    assert prisk.models["generator"].spec == prisk.models["judge"].spec == "local/smollm2-135m"
    assert not (tmp_path / "card").exists()  # planning writes nothing
    shown = grid(plan, {("personabench", "a"): "complete", ("prisk", "a"): "running"}, 1, 4)
    assert shown.splitlines() == ["scorecard: 1 of 4 runs done",
                                  "           find        safe",
                                  "a      complete     running",
                                  "b             ·           ·"]


def test_an_unknown_lens_and_a_foreign_out_folder_are_refused(tmp_path):
    with pytest.raises(InputError, match="unknown lens 'nope'"):
        make_plan(["a=scripted"], out=tmp_path / "card", lenses="personabench,nope")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.tex").write_text("x")
    with pytest.raises(InputError, match="'thesis.tex'"):
        make_plan(["a=scripted"], out=tmp_path / "mine")


def test_the_judges_server_reaches_every_role_the_judge_plays(tmp_path):
    """--judge-base-url: the judge's server is the population's and the builds' generator's,
    PrefDisco's user's and judge's and PRISK's judge's; a system's model keeps its own."""
    url = "http://judge.example:8000/v1"
    plan = make_plan(["a=openai/sysa,base_url=http://sysa.example/v1"], out=tmp_path / "card",
                     judge="openai/judge", judge_base_url=url, size="small",
                     lenses="prefdisco,prisk")
    generate, prefdisco_build, prisk_build = (stage.options for stage in plan.preparation())
    assert generate.models["generator"].base_url == url
    assert prefdisco_build.models["generator"].base_url == url
    assert prisk_build.models["judge"].base_url == url
    system = plan.systems[0]
    prefdisco = plan.evaluation("prefdisco", system).options.models
    assert (prefdisco["user"].base_url, prefdisco["judge"].base_url) == (url, url)
    assert prefdisco["target"].base_url == "http://sysa.example/v1"
    prisk = plan.evaluation("prisk", system).options.models
    assert (prisk["judge"].base_url, prisk["target"].base_url) == (
        url, "http://sysa.example/v1")
    default = make_plan(["a=openai/sysa"], out=tmp_path / "other", judge="openai/judge",
                        size="small", lenses="prefdisco")
    assert default.evaluation("prefdisco", default.systems[0]).options.models[
        "judge"].base_url is None
