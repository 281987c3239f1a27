"""`personalens personabench ...`"""

from pathlib import Path
from typing import Annotated

import typer

from personalens.cli.executor_options import ExecutorOption, RayAddressOption
from personalens.cli.model_options import Role, RoleModels, model_roles
from personalens.cli.option_lists import split_list
from personalens.cli.path_options import path_argument, path_option
from personalens.cli.run_output import report_outcome
from personalens.lenses.personabench.command import EvalOptions, normalise_noise, run_eval
from personalens.models import DEFAULT_MODEL, SPEC_HELP
from personalens.retrieval import RETRIEVER_HELP
from personalens.runs.executor import make_executor

app = typer.Typer(help="PersonaBench: RAG over noisy private documents answers personal "
                       "questions.", no_args_is_help=True, rich_markup_mode=None)


def noise_levels(value: str) -> list[str]:
    """Noise levels as the release names them, each once ('0.5' and '.5' are one level)."""
    return list(dict.fromkeys(normalise_noise(n) for n in split_list(value)))


@app.command("eval")
@model_roles(Role("target", "model", DEFAULT_MODEL, f"Answering model: {SPEC_HELP}."))
def eval_command(
    data: Annotated[Path, path_option(help="A community in the release layout, or a folder of "
                                            "several.")],
    out: Annotated[Path, path_option(help="Run directory; rerunning the same command resumes "
                                           "it.")],
    models: RoleModels,
    noise: Annotated[str, typer.Option(help="Noise level(s), comma-separated for a sweep, e.g. "
                                            "0.0,0.3,0.5,0.7.")] = "0.5",
    retriever: Annotated[str, typer.Option(help=f"Retriever(s), comma-separated: {RETRIEVER_HELP}, "
                                                "or gt-context (ground-truth sessions).")
                         ] = "minilm",
    k: Annotated[int, typer.Option(help="Chunks retrieved per question.")] = 5,
    no_answer: Annotated[bool, typer.Option("--no-answer",
                                            help="Evaluate retrieval only.")] = False,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
) -> None:
    """Evaluate retrieval (recall, nDCG) and answers (precision, recall, F1) on PersonaBench.

    With --executor ray, each person's index and search is a Ray task (answers stay here).
    """
    options = EvalOptions(
        data=data, out=out, noises=noise_levels(noise), retrievers=split_list(retriever), k=k,
        model=None if no_answer else models["target"], endpoint=models.endpoint,
        prices=models.prices, executor=make_executor(executor, ray_address))
    report_outcome(run_eval(options))


@app.command("validate")
@model_roles(Role("judge", "judge", None, f"Judge model for semantic reveal/leak checks: "
                                          f"{SPEC_HELP}. Default: lexical checks only."))
def validate_command(
    data: Annotated[Path, path_argument(help="A dataset in the release layout.")],
    models: RoleModels,
) -> None:
    """Check a dataset: ids resolve, answers are revealed, noise leaks nothing, graph symmetric."""
    import asyncio

    from personalens.lenses.personabench.validation import validate
    judge = models["judge"]
    report = asyncio.run(validate(data.resolve(), judge and judge.load("judge")))
    for line in report.summary:
        typer.echo(line)
    for error in report.errors:
        typer.echo(f"error: {error}", err=True)
    typer.echo(f"{len(report.errors)} error(s)")
    if report.errors:
        raise typer.Exit(1)
