"""MkDocs hook: the command-line reference pages, written at build time from the commands' help,
and the Inspect tasks' parameters, from the lens registry.

One page per command group (`cli/<group>.md`) is added to the site's files, and to the nav's
"Command-line reference" section, before the navigation is built, so the pages can never drift
from `personalens ... --help`: they are that help, one per registered lens. docs/inspect.md's
`<!-- inspect-parameters -->` becomes the table of every registered lens's task parameters
(`inspect_tasks.parameters`, generated from its options model).
"""

from __future__ import annotations

import typer.main
from mkdocs.structure.files import File, Files

from personalens.cli.app import app

# The top-level commands that are not groups share the first page.
TOP_PAGE = "personalens"
WIDTH = 100  # fixed, so the pages do not depend on the terminal that builds them


def _context(command, name: str, parent=None):
    return command.context_class(command, info_name=name, parent=parent,
                                 terminal_width=WIDTH, max_content_width=WIDTH)


def _is_group(command) -> bool:
    return hasattr(command, "list_commands")  # typer vendors click; no isinstance check


def _section(command, context, level: int) -> list[str]:
    """The help of one command and, below it, of each sub-command, as markdown."""
    path = context.command_path
    lines = [f"{'#' * level} `{path}`", "", "```text", context.get_help().rstrip(), "```", ""]
    if _is_group(command):
        for name in command.list_commands(context):
            sub = command.get_command(context, name)
            if not _is_group(sub):
                lines += _section(sub, _context(sub, name, context), level + 1)
    return lines


def reference_pages() -> dict[str, str]:
    """{page name: markdown} for the root command and each command group."""
    root = typer.main.get_command(app)
    root_context = _context(root, "personalens")
    top = _section(root, root_context, 1)
    pages = {}
    for name in root.list_commands(root_context):
        sub = root.get_command(root_context, name)
        if _is_group(sub):
            pages[name] = "\n".join(_section(sub, _context(sub, name, root_context), 1))
    intro = ["Generated from the commands' own `--help` when the site is built; each lens's "
             "commands are on its own page.", ""]
    pages = {TOP_PAGE: "\n".join(top[:1] + [""] + intro + top[1:]), **pages}
    return pages


REFERENCE = "Command-line reference"
INSPECT_PARAMETERS = "<!-- inspect-parameters -->"


def on_config(config):
    """The reference section of the nav: a page per command group, lenses included."""
    section = next(entry for entry in config["nav"]
                   if isinstance(entry, dict) and REFERENCE in entry)
    section[REFERENCE] = [{f"personalens {name}" if name != TOP_PAGE else TOP_PAGE:
                           f"cli/{name}.md"} for name in reference_pages()]
    return config


def on_files(files: Files, config) -> Files:
    for name, markdown in reference_pages().items():
        files.append(File.generated(config, f"cli/{name}.md", content=markdown))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    if INSPECT_PARAMETERS in markdown:
        markdown = markdown.replace(INSPECT_PARAMETERS, inspect_parameters())
    return markdown


def inspect_parameters() -> str:
    """| task | parameter | default | meaning | for every registered lens's Inspect task."""
    from personalens.inspect_tasks.parameters import REQUIRED, declaration, task_parameters
    from personalens.lenses import LENSES
    from personalens.lenses.commands import lens_commands

    rows = ["| task | parameter | default | meaning |", "|---|---|---|---|"]
    for lens in (lens for lens in LENSES if lens_commands(lens).inspect is not None):
        for i, p in enumerate(task_parameters(*declaration(lens))):
            shown = str(p.default).lower() if isinstance(p.default, bool) else p.default
            default = ("(required)" if p.default is REQUIRED else "none" if p.default is None
                       else f"`{shown}`")
            meaning = (p.help.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
                       .replace("*", "\\*"))
            rows.append(f"| {f'`{lens}`' if i == 0 else ''} | `{p.name}` | {default} | "
                        f"{meaning} |")
    return "\n".join(rows)
