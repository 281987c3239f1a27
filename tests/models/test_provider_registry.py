"""The model-provider registry: a spec's prefix picks its provider, the help lists every one,
the flags come from the endpoint settings' one declaration, and a model says if it runs here."""

import pydantic
import pytest
import typer
from typer.testing import CliRunner

from personalens.cli.model_options import model_roles
from personalens.errors import InputError
from personalens.models import ModelSettings, load_model
from personalens.models.role import Role
from personalens.models.role_set import RoleModels
from personalens.models.settings import EndpointSettings
from personalens.models.spec import PROVIDERS, SPEC_HELP, provider_kind, validate_spec


@pytest.mark.parametrize("spec, prefix, name", [
    ("openai/gpt-4o-mini", "openai", "gpt-4o-mini"),
    ("openai/org/model:tag", "openai", "org/model:tag"),  # the rest of the spec is the name
    ("local/smollm2-135m", "local", "smollm2-135m"),
    ("local//abs/path.gguf", "local", "/abs/path.gguf"),
    ("scripted", "scripted", ""),
    ("scripted:rules.json", "scripted", "rules.json"),
])
def test_a_spec_names_its_provider_and_model(spec, prefix, name):
    kind, model = provider_kind(spec)
    assert (kind.prefix, model) == (prefix, name)


@pytest.mark.parametrize("spec", ["openai", "openai/", "local", "local/", "scripted:",
                                  "scriptedx", "vllm/m", "", "/m"])
def test_a_spec_without_a_provider_or_a_required_name_is_refused_in_one_line(spec):
    with pytest.raises(InputError) as error:
        provider_kind(spec)
    assert str(error.value) == f"unknown model spec {spec!r}; expected {SPEC_HELP}"


def test_the_help_lists_every_provider_in_registry_order():
    assert SPEC_HELP.startswith("openai/<name> (with --base-url")
    positions = [SPEC_HELP.index(kind.syntax) for kind in PROVIDERS]
    assert positions == sorted(positions) and len(PROVIDERS) == 3


def test_a_provider_checks_its_own_names(tmp_path):
    with pytest.raises(InputError, match="neither a bundled model"):
        validate_spec("local/no-such-model")
    with pytest.raises(InputError, match="scripted rules file not found"):
        validate_spec(f"scripted:{tmp_path / 'missing.json'}")
    validate_spec("openai/anything")  # a remote name is the server's to judge


def test_a_model_says_whether_it_runs_in_this_process():
    assert load_model("scripted", use_cache=False).in_process is True
    remote = load_model("openai/m", base_url="http://127.0.0.1:9/v1", use_cache=False)
    assert remote.in_process is False
    assert {kind.prefix: kind.in_process for kind in PROVIDERS} == {
        "openai": False, "local": True, "scripted": True}


def test_endpoint_settings_reach_the_provider():
    model = load_model("openai/m", base_url="http://127.0.0.1:9/v1", use_cache=False,
                       timeout=7.5, concurrency=3, max_attempts=2)
    assert (model.provider.endpoint, model.concurrency, model.retry.max_attempts) == (
        "http://127.0.0.1:9/v1", 3, 2)
    assert model.provider._client.timeout == 7.5
    assert model.cache is None


def test_an_unknown_endpoint_setting_is_refused():
    with pytest.raises(pydantic.ValidationError):
        ModelSettings(spec="scripted", time_out=3)


def _app(captured: dict) -> typer.Typer:
    app = typer.Typer()

    @app.command()
    @model_roles(Role("target", "model", "scripted"), Role("judge", "judge"))
    def run(models: RoleModels) -> None:
        captured["models"] = models
    return app


def test_every_endpoint_setting_is_a_flag_of_every_role_and_falls_back_to_the_main_one():
    captured: dict = {}
    runner = CliRunner()
    help_text = runner.invoke(_app(captured), ["--help"], terminal_width=300).output
    for name in EndpointSettings.model_fields:
        flag = "--" + name.replace("_", "-")
        assert flag in help_text and f"--judge-{flag[2:]}" in help_text, name
    result = runner.invoke(_app(captured), [
        "--judge", "scripted", "--timeout", "30", "--api-key-env", "K", "--judge-timeout", "5"])
    assert result.exit_code == 0, result.output
    target, judge = captured["models"]["target"], captured["models"]["judge"]
    assert (target.timeout, target.api_key_env) == (30.0, "K")
    assert (judge.timeout, judge.api_key_env) == (5.0, "K")
    # Not given anywhere: the declared default.
    assert (target.max_attempts, judge.max_attempts) == (6, 6)


@pytest.mark.parametrize("args, message", [
    (["--timeout", "0"], "--timeout must be positive (got 0)"),
    (["--judge", "scripted", "--judge-max-attempts", "0"],
     "--judge-max-attempts must be at least 1 (got 0)"),
    (["--concurrency", "-2"], "--concurrency must be at least 1 (got -2)"),
])
def test_a_setting_out_of_its_bounds_is_refused_naming_the_flag(args, message):
    result = CliRunner().invoke(_app({}), args)
    assert isinstance(result.exception, InputError)
    assert str(result.exception) == message
