"""The root command's sub-commands: each one's summary, and how it is built when called.

A summary is what `personalens --help` lists; it costs no import beyond the lenses' light
declarations (`lenses.commands`). A sub-command is built — its options model, its model roles,
its module — only when it is run or asked for its own --help, so the root starts at once.
"""

import functools

import click
import typer

from personalens.lenses import LENSES
from personalens.lenses.commands import DeclaredCommand, lens_commands, resolve

GENERATE = DeclaredCommand(
    "generate", "personalens.population.generate_options:GenerateOptions",
    "personalens.population.generate:run_generate",
    "Make a synthetic population: people with profiles and a social graph, and the private "
    "documents that reveal their facts (conversations, AI chats, purchases) among noise, in "
    "PersonaBench's release layout, with the hidden truth beside it.\n\n"
    "With --executor ray, every community is generated at once, each by a Ray task with its "
    "own generator client; this process alone writes the records and the data.",
    example="personalens generate --people 10 --out runs/population")

# name -> (summary, "module:function" returning the typer function, its one-line example).
# Each summary is its function's first docstring sentence (tests/cli check they agree).
_COMMANDS = {
    "demo": ("Generate a 3-person community with the bundled model, then evaluate it offline.",
             "personalens.cli.demo_command:demo", "personalens demo --out runs/demo"),
    "compare": ("Systems side by side in the lens's paper layout, with paired tests between "
                "every two on their shared items.",
                "personalens.compare.command:compare_command",
                "personalens compare runs/eval-bm25 runs/eval-minilm --out runs/compare"),
    "scorecard": ("Evaluate several systems through every lens on one population, and "
                  "compare them.", "personalens.scorecard.command:scorecard_command",
                  "personalens scorecard --system small=local/smollm2-135m --size tiny "
                  "--out runs/card"),
    "import-inspect": ("Turn Inspect logs of a personalens task into a personalens run "
                       "directory (manifest, records, metrics, report), so `personalens "
                       "compare` and the reports read it.",
                       "personalens.inspect_tasks.import_command:import_inspect_command",
                       "personalens import-inspect logs/2026-01-05T10-00-00_task.eval "
                       "--out runs/from-inspect"),
}
JUDGE_AUDIT = ("How far the LLM judges that scored a run can be trusted. "
               "`judge-audit RUN --out DIR` audits (the `run` command); `judge-audit export "
               "RUN --out labels.csv` writes verdicts for people to label.")


@functools.cache
def subcommand_summaries() -> dict[str, str]:
    """Every sub-command's summary, in the order `personalens --help` lists them."""
    return {"generate": GENERATE.help.split("\n\n")[0],
            **{name: c[0] for name, c in _COMMANDS.items()},
            **{lens: lens_commands(lens).help for lens in LENSES},
            "judge-audit": JUDGE_AUDIT}


def build_subcommand(name: str) -> click.Command | None:
    """The click command of a sub-command, built now (imports its module and options); None
    for a name that is not one."""
    from personalens.cli.declared_command import declared, lens_group, typer_command

    if name not in subcommand_summaries():
        return None
    if name in LENSES:
        return lens_group(lens_commands(name))
    if name == "judge-audit":
        return typer.main.get_command(_judge_audit_app())
    if name == "generate":
        return typer_command(name, declared(GENERATE), GENERATE.example)
    _, target, example = _COMMANDS[name]
    return typer_command(name, resolve(target), example)


def _judge_audit_app() -> typer.Typer:
    from personalens.cli.declared_command import example_epilog
    from personalens.cli.default_group import DefaultCommandGroup
    from personalens.cli.model_options import model_roles
    from personalens.judge_audit import command as judge_audit
    from personalens.models.role_set import Role

    audit_app = typer.Typer(cls=DefaultCommandGroup, no_args_is_help=True, add_completion=False,
                            rich_markup_mode=None, help=JUDGE_AUDIT,
                            epilog=example_epilog(judge_audit.AUDIT_EXAMPLE))
    audit_app.command("run", epilog=example_epilog(judge_audit.RUN_EXAMPLE))(model_roles(
        Role("judge", "judge", None, "Judge model(s) to audit, comma-separated. Default: the "
                                     "judge(s) the run used, at the endpoint it recorded."))(
        judge_audit.audit))
    audit_app.command("export", epilog=example_epilog(judge_audit.EXPORT_EXAMPLE))(
        judge_audit.export)
    return audit_app

