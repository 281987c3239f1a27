"""A command's options, declared once: one pydantic model per command.

The model holds each option's type, constraints (`Field(ge=...)`, `Literal`), default and help
(`Field(description=...)`). The CLI builds its options from it (`cli.declared_command`), a
lens validates with it, and the run's identity is derived from it: every field is part of the
identity unless declared with `not_identity(...)` (where the output goes, prices, the executor,
concurrency: what cannot change a record). Nothing is written by hand a second time, so an
option cannot be left out of the resume guard.

Field conventions the CLI follows: a field's flag is its name with dashes (`flag=` to
override); `list[str|int|float]` is one comma-separated option; `list[Path]` repeats; a
`bool` is an on-flag; `Path` options are read like every path (`~`, relative, symlinks kept).
"""

import os
from pathlib import Path
from typing import Annotated, Any, ClassVar

import pydantic

from personalens.errors import InputError


def user_path(value: str | Path) -> Path:
    """A path as every command reads it: `~` expanded, absolute, symlinks kept (not resolved)."""
    return Path(os.path.abspath(os.path.expanduser(os.fspath(value))))


def comma_list(value: Any) -> Any:
    """"a,b,a" -> ["a", "b"]: each value once (a repeated value would plan duplicate items)."""
    if isinstance(value, str):
        return list(dict.fromkeys(p.strip() for p in value.split(",") if p.strip()))
    return list(dict.fromkeys(value)) if isinstance(value, list | tuple) else value


UserPath = Annotated[Path, pydantic.BeforeValidator(lambda v: user_path(v) if v else v)]
CommaList = Annotated[list[str], pydantic.BeforeValidator(comma_list)]
IntList = Annotated[list[int], pydantic.BeforeValidator(comma_list)]


def option(default: Any = ..., help: str = "", *, flag: str | None = None,
           identity: bool = True, cli: bool = True, **constraints: Any) -> Any:
    """A declared option: `Field` with its help, and where the CLI and the identity use it.

    `cli=False`: set by the command from other options (a role's settings), not a flag.
    """
    extra = {k: v for k, v in (("flag", flag), ("identity", identity), ("cli", cli))
             if (k == "flag" and v) or (k != "flag" and v is False)}
    return pydantic.Field(default, description=help, json_schema_extra=extra or None,
                          **constraints)


def not_identity(default: Any = ..., help: str = "", **kwargs: Any) -> Any:
    """An option that cannot change a record: not part of the run's identity."""
    return option(default, help, identity=False, **kwargs)


class LensOptions(pydantic.BaseModel):
    """Subclass per command; `command` names it in the identity ("<lens> eval")."""

    model_config = pydantic.ConfigDict(frozen=True, extra="forbid")

    command: ClassVar[str] = ""

    @classmethod
    def parse(cls, **values: Any) -> "LensOptions":
        """Validate, turning pydantic's errors into one line naming the option."""
        try:
            return cls(**values)
        except pydantic.ValidationError as exc:
            raise InputError(option_error(cls, exc)) from None

    def identity(self) -> dict[str, Any]:
        """The resume identity: every field not declared `not_identity`, as JSON values."""
        out: dict[str, Any] = {"command": self.command}
        for name, field in type(self).model_fields.items():
            if (field.json_schema_extra or {}).get("identity", True):
                out[name] = identity_value(getattr(self, name))
        return out


def identity_value(value: Any) -> Any:
    """A value as the identity holds it. A model (a role's settings) gives its own `identity()`
    when it has one (a model's spec, not where it is served), else its fields."""
    if hasattr(value, "identity") and callable(value.identity):
        return value.identity()
    if isinstance(value, pydantic.BaseModel):
        return {k: identity_value(v) for k, v in value}
    if isinstance(value, Path):
        return str(value.resolve())  # one identity however the path was spelled
    if isinstance(value, dict):
        return {k: identity_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [identity_value(v) for v in value]
    return value


def flag(model: type[pydantic.BaseModel], name: str) -> str:
    field = model.model_fields.get(name)
    extra = (field.json_schema_extra or {}) if field else {}
    return extra.get("flag") or "--" + name.replace("_", "-")


def option_error(model: type[pydantic.BaseModel], exc: pydantic.ValidationError) -> str:
    """The first error as one line: "--turns must be at least 1 (got 0)"."""
    error = exc.errors()[0]
    message = str(error["msg"]).removeprefix("Value error, ")
    if not error["loc"]:  # a check across options: its message names them
        return message
    where = flag(model, str(error["loc"][0]))
    ctx = error.get("ctx") or {}
    got = error.get("input")
    rules = {"greater_than_equal": "must be at least {ge}", "greater_than": "must be above {gt}",
             "less_than_equal": "must be at most {le}", "less_than": "must be below {lt}",
             "too_short": "takes at least {min_length} value(s)"}
    if error["type"] in rules:
        return f"{where} {rules[error['type']].format(**ctx)} (got {got})"
    if error["type"] in ("int_parsing", "int_from_float"):
        many = len(error["loc"]) > 1  # an item of a comma-separated list
        return (f"{where} takes {'comma-separated whole numbers' if many else 'a whole number'}"
                f" (got {got!r})")
    if error["type"] == "literal_error":
        return f"{where} takes {ctx.get('expected', '')} (got {got!r})"
    return f"{where}: {message}"


class DistributedOptions(LensOptions):
    """Options of a command with parallel stages: where they run (never part of the
    identity: the records are the same either way)."""

    executor: str = not_identity(
        "local", "Where the parallel stages run: local or ray (Ray: pip install "
                 "'personalens\\[ray]'). The records are the same either way.")
    ray_address: str | None = not_identity(
        None, "A running Ray cluster (ray://HOST:10001 or auto); default with --executor ray: "
              "start Ray on this machine.")

    def make_executor(self):
        from personalens.runs.executor import make_executor

        return make_executor(self.executor, self.ray_address)
