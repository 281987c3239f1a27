"""Declared options: every command's resume identity is derived from its options model.

For every declared command (each lens's, from the registry, and generate), each field is
changed in turn: a field in the identity makes resuming the run directory refused; a field
declared `not_identity` (where the output goes, the executor) and the endpoint settings and
prices of every role are accepted. A new option is covered the day it is declared.
"""

import importlib
import tempfile
import typing
from pathlib import Path

import pydantic
import pytest
from pydantic_core import PydanticUndefined

from personalens.cli.subcommands import GENERATE
from personalens.errors import InputError
from personalens.lenses import LENSES
from personalens.lenses.commands import DeclaredCommand
from personalens.lenses.pqb.options import BUILD_FILES
from personalens.models import ModelSettings
from personalens.models.role_set import RoleModels
from personalens.runs import RunDirectory, RunIdentity


def _declared() -> list[DeclaredCommand]:
    commands = [GENERATE]
    for lens in LENSES:
        module = importlib.import_module(f"personalens.lenses.{lens}.commands")
        commands += [c for c in module.LENS.commands if isinstance(c, DeclaredCommand)]
    return commands


COMMANDS = {c.options: c for c in _declared()}

# The options that cannot change a record, by name: every other option must be in the identity
# (a field wrongly declared `not_identity` fails here, not only a derivation that drops one).
NOT_IDENTITY = {"out", "executor", "ray_address"}

# Values a generic rule cannot choose (a check across options, a closed vocabulary).
CHANGES: dict[str, typing.Any] = {"start": "2024-02-01", "end": "2024-11-30",
                                  "noise": ["0.1"], "corrector": "llm:scripted"}

# Options a command needs besides its required ones, each way it can be given (pqb eval takes
# --data or --queries with --meta): a field is changed on the first base where both validate.
def _build_folders() -> Path:
    """Two pqb build folders, data and data-other (pqb eval's --data is checked for its files)."""
    root = Path(tempfile.mkdtemp(prefix="declared-options-"))
    for name in ("data", "data-other"):
        (root / name).mkdir()
        for file in BUILD_FILES:
            (root / name / file).write_text("")
    return root


BASES: dict[str, list[dict]] = {
    "personalens.lenses.pqb.options:EvalOptions": [
        {"data": _build_folders() / "data"}, {"queries": Path("/tmp/q"), "meta": Path("/tmp/m")}]}


def _changed(name: str, field: pydantic.fields.FieldInfo, value: typing.Any) -> typing.Any:
    if name in CHANGES and CHANGES[name] != value:
        return CHANGES[name]
    annotation = field.annotation
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    literal = next((a for a in [annotation, *args] if typing.get_origin(a) is typing.Literal),
                   None)
    if literal is not None:
        return next(v for v in typing.get_args(literal) if v != value)
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        high = next((m.le for m in field.metadata if getattr(m, "le", None) is not None), None)
        step = 1 if isinstance(value, int) else 0.125
        return value - step if high is not None and value + step > high else value + step
    if isinstance(value, Path):
        return value.parent / (value.name + "-other")
    if value is None:
        leaves = _leaves(annotation)
        low = next((m.ge for m in field.metadata if getattr(m, "ge", None) is not None), 0)
        return (Path("/tmp/other") if Path in leaves else low + 7 if int in leaves
                else 0.5 if float in leaves else "other")
    if isinstance(value, list):
        return value[:-1] if len(value) > 1 else value + ([7] if int in _leaves(annotation)
                                                          else ["other"])
    if isinstance(value, str):
        return value + "-other"
    raise AssertionError(f"no rule changes {name} ({annotation})")


def _leaves(annotation) -> set:
    args = typing.get_args(annotation)
    return {annotation} if not args else set().union(*(_leaves(a) for a in args))


def _bases(target: str, model) -> list[dict]:
    """The fewest values that validate: required paths, a model per role, and BASES."""
    values = {name: Path(f"/tmp/{name}") for name, field in model.model_fields.items()
              if field.default is PydanticUndefined and field.default_factory is None}
    if "models" in model.model_fields:
        values["models"] = RoleModels.model_validate({r.role: "scripted" for r in model.roles})
    return [{**values, **extra} for extra in BASES.get(target, [{}])]


def _pair(target: str, model, name: str) -> tuple[dict, dict]:
    """A base and the same with `name` changed, both valid."""
    field = model.model_fields[name]
    for base in _bases(target, model):
        changed = {**base, name: _changed(name, field, getattr(model.parse(**base), name))}
        try:
            model.parse(**changed)
        except InputError:
            continue
        return base, changed
    raise AssertionError(f"no base lets {name} change; add one to BASES")


def _cases():
    for target, command in COMMANDS.items():
        model = command.options_model()
        for name, _field in model.model_fields.items():
            if name != "models":
                yield pytest.param(target, name, id=f"{command.name}:{target}:{name}")


def _resumes(tmp_path, model, base: dict, changed: dict) -> bool:
    def manifest(values):
        return RunIdentity(options=model.parse(**values), dataset_hash="h").manifest({})
    RunDirectory.open(tmp_path / "run", manifest(base)).close("interrupted")
    try:
        RunDirectory.open(tmp_path / "run", manifest(changed)).close("complete")
    except InputError as exc:
        assert "different configuration" in str(exc)
        return False
    return True


@pytest.mark.parametrize("target, name", list(_cases()))
def test_each_option_is_in_the_resume_identity_unless_declared_otherwise(tmp_path, target,
                                                                          name):
    model = COMMANDS[target].options_model()
    field = model.model_fields[name]
    base, changed = _pair(target, model, name)
    in_identity = name not in NOT_IDENTITY
    assert (field.json_schema_extra or {}).get("identity", True) is in_identity
    assert _resumes(tmp_path, model, base, changed) is not in_identity, (
        f"{name}: changing it {'was accepted' if in_identity else 'was refused'}")


@pytest.mark.parametrize("target", list(COMMANDS))
def test_a_roles_model_is_identity_but_its_endpoint_and_price_are_not(tmp_path, target):
    model = COMMANDS[target].options_model()
    if "models" not in model.model_fields:
        pytest.skip("no model roles")
    base = _bases(target, model)[0]
    role = model.roles[0].role
    served = RoleModels(settings={**base["models"].settings, role: ModelSettings(
        spec="scripted", base_url="http://127.0.0.1:9", concurrency=3, max_attempts=2,
        timeout=5.0, use_cache=False)}, prices={role: (1.0, 2.0)})
    assert _resumes(tmp_path / "a", model, base, {**base, "models": served})
    other = RoleModels(settings={**base["models"].settings, role: ModelSettings(spec="other")})
    assert not _resumes(tmp_path / "b", model, base, {**base, "models": other})


def test_every_lens_declares_at_least_one_run_command():
    assert {c.options.split(".")[2] for c in COMMANDS.values() if c is not GENERATE} == \
        set(LENSES)


@pytest.mark.parametrize("target", list(COMMANDS))
def test_the_cli_takes_each_flag_default_and_help_from_the_options_model(target):
    import typer

    from personalens.cli.declared_command import declared

    command = COMMANDS[target]
    model = command.options_model()
    app = typer.Typer()
    app.command()(declared(command))
    params = {p.name: p for p in typer.main.get_command(app).params}
    for name, field in model.model_fields.items():
        if name == "models":
            assert {r.flag for r in model.roles if r.flag} <= set(params)
            continue
        param = params[name]
        assert param.help == field.description and field.description, name
        if field.is_required():
            assert param.required, name
            continue
        default = field.get_default(call_default_factory=True)
        if getattr(param, "multiple", False):  # a repeatable path: the model's default applies
            assert param.default in (None, [], ()) and default == [], name
        elif isinstance(default, list):
            assert param.default == ",".join(map(str, default)), name
        else:
            assert param.default == default, name
