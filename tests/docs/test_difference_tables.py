"""The docs' paper | release | default | option tables name only options that exist: every
`--flag` in a row's option and default columns is an option of the lens's own commands, or of a
command the cell names (`judge-audit`, `compare`, `scorecard`), read from the real CLI."""

import re
from pathlib import Path

import pytest
import typer

from personalens.cli.app import app
from personalens.cli.lazy_group import leaf_commands, subcommand

DOCS = Path(__file__).resolve().parents[2] / "docs"
LENSES = ("personabench", "pqb", "prefdisco", "prisk")
# The commands whose options each page's table may name: a lens's own; compare reads every
# lens's runs, so its table may name their options.
TABLES = {**{f"{lens}.md": (lens,) for lens in LENSES}, "compare.md": ("compare", *LENSES)}
NAMED = ("judge-audit", "compare", "scorecard")
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def _options(command) -> set[str]:
    """Every long option of `command` and of the commands under it."""
    return {opt for _, leaf in leaf_commands(command) for param in leaf.params
            for opt in param.opts if opt.startswith("--")}


@pytest.fixture(scope="module")
def cli():
    return typer.main.get_command(app)


def difference_rows(text: str) -> list[list[str]]:
    """The cells of each row of the table under "Where ... differs"."""
    section = text.split("## Where", 1)[1]
    rows = [line for line in section.splitlines()
            if line.startswith("|") and not re.fullmatch(r"[|\s:-]+", line)]
    header = [c.strip() for c in rows[0].strip("|").split(" | ")]
    assert header[-2:] == ["personalens default", "option"], header
    return [[c.strip() for c in re.split(r"(?<!\\)\|", row.strip().strip("|"))]
            for row in rows[1:]]


@pytest.mark.parametrize("page", TABLES)
def test_every_option_a_difference_table_names_is_a_real_option(cli, page):
    known = set().union(*[_options(subcommand(cli, [name])) for name in TABLES[page]])
    rows = difference_rows((DOCS / page).read_text())
    assert rows, page
    unknown = []
    for row in rows:
        for cell in row[-2:]:
            allowed = known.union(*[_options(subcommand(cli, [name])) for name in NAMED
                                    if name in cell])
            unknown += [(row[0], flag) for flag in FLAG.findall(cell) if flag not in allowed]
    assert unknown == [], f"{page}: options the CLI does not have: {unknown}"


def test_the_check_would_catch_a_misspelt_option(cli):
    text = ("## Where x differs\n\n| element | paper | release | personalens default | option |"
            "\n|---|---|---|---|---|\n| a | b | c | d | `--memory-scop record` |\n")
    flags = FLAG.findall(difference_rows(text)[0][-1])
    assert flags == ["--memory-scop"] and flags[0] not in _options(subcommand(cli, ["prisk"]))
