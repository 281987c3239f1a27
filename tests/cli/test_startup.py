"""The CLI starts at once: the root's --version and --help import no command, a command's
--help imports its own options and none of its siblings' modules or any heavy library, and the
root's summaries are the commands' own first paragraphs. (Time itself is measured in
bench/cli_startup.py, not asserted here.)"""

import json
import subprocess
import sys

import pytest

from personalens.cli.subcommands import build_subcommand, subcommand_summaries

pytestmark = pytest.mark.subprocess

HEAVY = ("numpy", "scipy", "openai", "httpx", "matplotlib", "networkx", "torch", "xllamacpp",
         "sentence_transformers", "spacy", "bm25s", "statsmodels", "pandas", "rich")
PROBE = """
import json, sys
from personalens.cli.app import main
sys.argv = ["personalens", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def loaded_modules(*args: str) -> set[str]:
    """The modules a fresh interpreter has loaded after `personalens ARGS`."""
    result = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True,
                            text=True, timeout=120)
    return set(json.loads(result.stderr.strip().splitlines()[-1]))


def _top(modules: set[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


@pytest.mark.parametrize("flag", ["--version", "--help"])
def test_the_root_imports_no_command_and_no_pydantic(flag):
    modules = loaded_modules(flag)
    assert _top(modules) & {*HEAVY, "pydantic"} == set()
    ours = {m for m in modules if m.startswith("personalens.")}
    # Only the CLI's own modules, the error type, the lenses' declarations and what they name.
    assert not {m for m in ours if m.startswith(("personalens.runs", "personalens.compare",
                                                 "personalens.scorecard",
                                                 "personalens.population"))}
    assert not {m for m in ours if m.startswith("personalens.lenses.")
                and not m.endswith((".commands", "lenses.commands"))
                and m.count(".") > 2}


def test_a_command_help_imports_its_options_only():
    modules = loaded_modules("pqb", "eval", "--help")
    assert "personalens.lenses.pqb.options" in modules
    assert _top(modules) & set(HEAVY) == set()
    # Nothing of the sibling commands (build, export-beir) or of the eval itself.
    assert not modules & {"personalens.lenses.pqb.build", "personalens.lenses.pqb.command",
                          "personalens.lenses.pqb.release_format"}


@pytest.mark.parametrize("name", ["prisk", "prefdisco", "personabench"])
def test_each_lens_eval_help_is_light(name):
    assert _top(loaded_modules(name, "eval", "--help")) & set(HEAVY) == set()


def test_the_root_summaries_are_the_commands_own_first_paragraphs():
    for name, summary in subcommand_summaries().items():
        command = build_subcommand(name)
        assert command.help.split("\n\n")[0].split() == summary.split(), name
    assert build_subcommand("no-such-command") is None


def test_a_lens_group_builds_only_the_command_asked_for():
    group = build_subcommand("pqb")
    context = group.context_class(group)  # typer's own click: no isinstance check
    assert group.get_command(context, "nope") is None
    assert group.get_command(context, "eval").name == "eval"
