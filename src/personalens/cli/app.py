"""The `personalens` command."""

import sys
from typing import Annotated

import typer

from personalens.cli import demo_command
from personalens.cli.declared_command import declared, example_epilog, lens_app
from personalens.cli.default_group import DefaultCommandGroup
from personalens.cli.model_options import model_roles
from personalens.compare.command import compare_command
from personalens.errors import InputError
from personalens.inspect_tasks.import_command import (
    IMPORT_INSPECT_EXAMPLE,
    import_inspect_command,
)
from personalens.judge_audit import command as judge_audit
from personalens.lenses import LENSES
from personalens.lenses.commands import DeclaredCommand, lens_commands
from personalens.models import ModelCallFailed
from personalens.models.role_set import Role
from personalens.scorecard.command import scorecard_command

app = typer.Typer(help="personalens: measure how well AI assistants understand, find, ask for "
                       "and safely use a person's private information.",
                  no_args_is_help=True, rich_markup_mode=None, pretty_exceptions_enable=False)


def _version(value: bool) -> None:
    if value:
        from personalens.runs.provenance import package_versions

        typer.echo(f"personalens {package_versions()['personalens']}")
        raise typer.Exit()


@app.callback()
def _options(version: Annotated[bool, typer.Option(
        "--version", "-V", is_eager=True, callback=_version,
        help="Print the version (each run's manifest records it too) and exit.")] = False,
) -> None:
    """personalens: measure how well AI assistants understand, find, ask for and safely use a
    person's private information."""
for lens in LENSES:
    app.add_typer(lens_app(lens_commands(lens)), name=lens)
GENERATE = DeclaredCommand(
    "generate", "personalens.population.generate_options:GenerateOptions",
    "personalens.population.generate:run_generate",
    "Make a synthetic population: people with profiles and a social graph, and the private "
    "documents that reveal their facts (conversations, AI chats, purchases) among noise, in "
    "PersonaBench's release layout, with the hidden truth beside it.\n\n"
    "With --executor ray, every community is generated at once, each by a Ray task with its "
    "own generator client; this process alone writes the records and the data.",
    example="personalens generate --people 10 --out runs/population")
EXAMPLES = {
    "demo": "personalens demo --out runs/demo",
    "compare": "personalens compare runs/pqb-bm25 runs/pqb-minilm --out runs/pqb-compare",
    "scorecard": "personalens scorecard --system small=local/smollm2-135m --size tiny "
                 "--out runs/card",
}
app.command("generate", epilog=example_epilog(GENERATE.example))(declared(GENERATE))
app.command(epilog=example_epilog(EXAMPLES["demo"]))(demo_command.demo)
app.command("compare", epilog=example_epilog(EXAMPLES["compare"]))(compare_command)
app.command("scorecard", epilog=example_epilog(EXAMPLES["scorecard"]))(scorecard_command)
app.command("import-inspect", epilog=example_epilog(IMPORT_INSPECT_EXAMPLE))(import_inspect_command)
audit_app = typer.Typer(
    cls=DefaultCommandGroup, no_args_is_help=True, rich_markup_mode=None,
    help="How far the LLM judges that scored a prefdisco or prisk run can be trusted. "
         "`judge-audit RUN --out DIR` audits (the `run` command); `judge-audit export RUN "
         "--out labels.csv` writes verdicts for people to label.",
    epilog=example_epilog(judge_audit.AUDIT_EXAMPLE))
audit_app.command("run", epilog=example_epilog(judge_audit.RUN_EXAMPLE))(model_roles(
    Role("judge", "judge", None, "Judge model(s) to audit, comma-separated. Default: the "
                                 "judge(s) the run used, at the endpoint it recorded."))(
    judge_audit.audit))
audit_app.command("export", epilog=example_epilog(judge_audit.EXPORT_EXAMPLE))(judge_audit.export)
app.add_typer(audit_app, name="judge-audit")


def main() -> None:
    try:
        app()
    except InputError as exc:
        # One line, no traceback: the message already names the file, record and field.
        print(f"personalens: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except ModelCallFailed as exc:  # outside a run (e.g. a validation judge): nothing to record
        print(f"personalens: error: model call failed: {exc}", file=sys.stderr)
        sys.exit(3)

