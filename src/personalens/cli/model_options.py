"""Model options, one reusable group per role.

`@model_roles(Role("target", "model", ...), Role("judge", "judge", ...))` adds to a command:
- for the main role: `--model` (its spec), `--base-url`, `--api-key-env`, `--no-cache`,
  `--concurrency`, `--max-attempts`, `--timeout`, `--price-per-mtok-in/out`;
- for every other role: `--judge` plus `--judge-base-url`, `--judge-api-key-env`,
  `--judge-concurrency`, `--judge-max-attempts`, `--judge-timeout`,
  `--judge-price-per-mtok-in/out`, each falling back to the main role's value.
The command receives one `models: RoleModels` argument instead (`models.role_set`).
"""

import functools
import inspect
from typing import Annotated, Any

import pydantic
import typer

from personalens.errors import InputError
from personalens.models.role_set import Role, RoleModels
from personalens.models.settings import EndpointSettings, ModelSettings
from personalens.models.spec import SPEC_HELP

# name -> (type, help): each endpoint setting's flag, from its one declaration; then prices.
_ENDPOINT = {name: (field.annotation | None, field.description)
             for name, field in EndpointSettings.model_fields.items()} | {
    "price_per_mtok_in": (float | None, "USD per million prompt tokens, for the cost estimate."),
    "price_per_mtok_out": (float | None, "USD per million completion tokens."),
}


def model_roles(main: Role, *others: Role):
    """Decorate a typer command: add each role's option group, pass `models: RoleModels`."""
    def decorate(command):
        signature = inspect.signature(command)
        own = [p for name, p in signature.parameters.items() if name != "models"]
        added = _main_parameters(main) + [p for role in others for p in _role_parameters(role)]

        @functools.wraps(command)
        def wrapper(**kwargs: Any):
            values = {p.name: kwargs.pop(p.name) for p in added}
            return command(models=_settings(main, others, values), **kwargs)

        wrapper.__signature__ = signature.replace(parameters=own + added)
        return wrapper
    return decorate


def _option(name: str, kind, default, help_text: str, flag: str | None = None):
    option = typer.Option(flag, help=help_text) if flag else typer.Option(help=help_text)
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                             annotation=Annotated[kind, option])


def _main_parameters(main: Role) -> list[inspect.Parameter]:
    params = []
    if main.flag:
        params.append(_option(main.flag, str | None if main.default is None else str,
                              main.default, main.help or f"Model: {SPEC_HELP}."))
    for name, (kind, help_text) in _ENDPOINT.items():
        params.append(_option(name, kind, None, help_text))
    params.append(_option("no_cache", bool, False, "Bypass the on-disk response cache.",
                          "--no-cache"))
    return params


def _role_parameters(role: Role) -> list[inspect.Parameter]:
    params = [_option(role.flag, str | None, role.default,
                      role.help or f"{role_label(role.role)} model: {SPEC_HELP}.")]
    for name, (kind, help_text) in _ENDPOINT.items():
        params.append(_option(f"{role.flag}_{name}", kind, None,
                              f"{role_label(role.role)}'s {_lower_first(help_text)} Default: "
                              "the main model's."))
    return params


def role_label(role: str) -> str:
    """A role's name as help text writes it: "topic_judge" -> "Topic judge"."""
    return role.replace("_", " ").capitalize()


def _lower_first(text: str) -> str:
    """Lower-case a sentence's first letter, but not an acronym's ("USD per ...")."""
    word = text.split(" ", 1)[0]
    return text if word.isupper() else text[0].lower() + text[1:]


def _settings(main: Role, others: tuple[Role, ...], values: dict) -> RoleModels:
    # None: not given (a role falls back to the main role's value, the main role to the
    # setting's declared default).
    base = {name: values[name] for name in _ENDPOINT}
    use_cache = not values["no_cache"]
    settings = {main.role: _make(values.get(main.flag) if main.flag else None, base, use_cache)}
    prices = {main.role: _price(base)}
    for role in others:
        mine = {name: values[f"{role.flag}_{name}"] if values[f"{role.flag}_{name}"] is not None
                else base[name] for name in _ENDPOINT}
        settings[role.role] = _make(values[role.flag], mine, use_cache, f"{role.flag}_")
        prices[role.role] = _price(mine)
    return RoleModels(settings=settings, endpoint=_make("", base, use_cache),
                      prices={r: p for r, p in prices.items() if any(p)})


def _make(spec: str | None, endpoint: dict, use_cache: bool,
          prefix: str = "") -> ModelSettings | None:
    if spec is None:
        return None
    given = {name: endpoint[name] for name in EndpointSettings.model_fields
             if endpoint[name] is not None}
    try:
        return ModelSettings(spec=spec, use_cache=use_cache, **given)
    except pydantic.ValidationError as exc:
        error = exc.errors()[0]
        flag = f"--{prefix}{error['loc'][0]}".replace("_", "-")
        raise InputError(f"{flag} {_bound(error)} (got {error['input']:g})") from None


def _bound(error: dict) -> str:
    """A bound's message as a user reads it: "must be at least 1", "must be positive"."""
    context = error.get("ctx", {})
    if "ge" in context:
        return f"must be at least {context['ge']}"
    if context.get("gt") == 0:
        return "must be positive"
    return error["msg"].lower()


def _price(values: dict) -> tuple[float, float]:
    return (values["price_per_mtok_in"] or 0.0, values["price_per_mtok_out"] or 0.0)
