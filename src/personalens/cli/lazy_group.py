"""A command group that builds a sub-command only when it is looked up.

The group knows each sub-command's one-line summary without importing it, so a group's --help
and every sibling's --help stay fast: `personalens <lens> eval --help` imports that lens's eval
options and nothing of its other commands.
"""

from collections.abc import Callable

import click
from typer.core import TyperGroup


class LazyGroup(TyperGroup):
    """`summaries()` lists the sub-commands (name -> summary, in help order); `build(name)`
    makes one (a click command), or returns None for a name that is not a sub-command."""

    def __init__(self, *args, summaries: Callable[[], dict[str, str]] | None = None,
                 build: Callable[[str], click.Command | None] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.summaries = summaries or dict
        self.build = build

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.summaries())

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        command = self.build(name)
        if command is not None:
            command.name = name
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # click would build every command to read its short help; the summaries are enough.
        summaries = self.summaries()
        limit = formatter.width - 6 - max(map(len, summaries))
        with formatter.section("Commands"):
            formatter.write_dl([(name, click.utils.make_default_short_help(summary, limit))
                                for name, summary in summaries.items()])


def subcommand(group, path: tuple[str, ...] | list[str]):
    """The command at `path` under `group` ("<lens>", "eval"), built as the CLI would."""
    command = group
    for name in path:
        command = command.get_command(command.context_class(command), name)
        if command is None:
            raise KeyError(" ".join(path))
    return command


def leaf_commands(group, path: tuple[str, ...] = ()):
    """(path, command) for every command under `group` that is not itself a group."""
    if not hasattr(group, "list_commands"):  # typer vendors click: no isinstance check
        yield path, group
        return
    for name in group.list_commands(group.context_class(group)):
        yield from leaf_commands(subcommand(group, (name,)), (*path, name))
