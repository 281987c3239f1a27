"""How every path option is read: `~` expanded, made absolute against the working directory.

Lenses then see one spelling of each path, so relative paths, `~` and symlinked folders work
the same everywhere (a file found under a folder stays under it when both are compared).
Symlinks are kept, not resolved: the names a user gave stay the names the run reports.
"""

import typer

from personalens.runs.options import user_path


def path_option(*default, **kwargs):
    """`typer.Option` for a path: every path option of every command is read by `user_path`."""
    return typer.Option(*default, parser=user_path, **kwargs)


def path_argument(*default, **kwargs):
    """`typer.Argument` for a path, read by `user_path`."""
    return typer.Argument(*default, parser=user_path, **kwargs)
