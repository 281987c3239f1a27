"""`personalens personabench ...`"""

from pathlib import Path
from typing import Annotated

import typer

from personalens.cli.interruption import interruptible
from personalens.cli.model_options import ApiKeyEnv, BaseUrl, Concurrency, MaxAttempts, NoCache
from personalens.cli.progress import ItemProgress
from personalens.lenses.personabench.command import EvalOptions, normalise_noise, run_eval
from personalens.models import DEFAULT_MODEL, SPEC_HELP
from personalens.retrieval import RETRIEVER_HELP

app = typer.Typer(help="PersonaBench: RAG over noisy private documents answers personal "
                       "questions.", no_args_is_help=True)


def split_list(value: str) -> list[str]:
    """Comma-separated values, each once (a repeated value would plan duplicate items)."""
    return list(dict.fromkeys(part.strip() for part in value.split(",") if part.strip()))


def noise_levels(value: str) -> list[str]:
    """Noise levels as the release names them, each once ('0.5' and '.5' are one level)."""
    return list(dict.fromkeys(normalise_noise(n) for n in split_list(value)))


@app.command("eval")
def eval_command(
    data: Annotated[Path, typer.Option(help="A community in the release layout, or a folder of "
                                            "several.")],
    out: Annotated[Path, typer.Option(help="Run directory; rerunning the same command resumes "
                                           "it.")],
    noise: Annotated[str, typer.Option(help="Noise level(s), comma-separated for a sweep, e.g. "
                                            "0.0,0.3,0.5,0.7.")] = "0.5",
    retriever: Annotated[str, typer.Option(help=f"Retriever(s), comma-separated: {RETRIEVER_HELP}, "
                                                "or gt-context (ground-truth sessions).")
                         ] = "minilm",
    k: Annotated[int, typer.Option(help="Chunks retrieved per question.")] = 5,
    model: Annotated[str, typer.Option(help=f"Answering model: {SPEC_HELP}.")] = DEFAULT_MODEL,
    no_answer: Annotated[bool, typer.Option("--no-answer",
                                            help="Evaluate retrieval only.")] = False,
    base_url: BaseUrl = None,
    api_key_env: ApiKeyEnv = "OPENAI_API_KEY",
    no_cache: NoCache = False,
    concurrency: Concurrency = None,
    max_attempts: MaxAttempts = 6,
    timeout: Annotated[float, typer.Option(help="Seconds before an HTTP model call times out "
                                                "(and is retried).")] = 120.0,
) -> None:
    """Evaluate retrieval (recall, nDCG) and answers (precision, recall, F1) on PersonaBench."""
    options = EvalOptions(
        data=data, out=out, noises=noise_levels(noise),
        retrievers=split_list(retriever), k=k, model=None if no_answer else model,
        base_url=base_url, api_key_env=api_key_env, use_cache=not no_cache,
        concurrency=concurrency, max_attempts=max_attempts, timeout=timeout,
    )
    finish(interruptible(lambda: run_eval(options, ItemProgress("personabench"))))



def finish(outcome) -> None:
    """Print where the results are; exit 3 when items failed (the run is incomplete)."""
    metrics = outcome.metrics
    typer.echo(f"report: {outcome.run_dir / 'report.html'}")
    typer.echo(f"metrics: {outcome.run_dir / 'metrics.json'}")
    for c in metrics["conditions"]:
        line = (f"{c['retriever']} @ noise {c['noise']:g}: retrieval recall "
                f"{_fmt(c['retrieval']['overall']['recall'])}, nDCG "
                f"{_fmt(c['retrieval']['overall']['ndcg'])}")
        if "end_to_end" in c:
            line += f"; answer F1 {_fmt(c['end_to_end']['overall']['f1'])}"
        typer.echo(line)
    if not metrics["complete"]:
        typer.echo(f"run incomplete: {metrics['n_failed']} item(s) failed, "
                   f"{metrics['n_planned'] - metrics['n_recorded']} not recorded; rerun the same "
                   "command to retry them", err=True)
        raise typer.Exit(3)


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


@app.command("validate")
def validate_command(
    data: Annotated[Path, typer.Argument(help="A dataset in the release layout.")],
    judge: Annotated[str | None, typer.Option(
        help=f"Judge model for semantic reveal/leak checks: {SPEC_HELP}. Default: lexical "
             "checks only.")] = None,
    base_url: Annotated[str | None, typer.Option(help="Judge's OpenAI-compatible base URL.")
                        ] = None,
) -> None:
    """Check a dataset: ids resolve, answers are revealed, noise leaks nothing, graph symmetric."""
    import asyncio

    from personalens.lenses.personabench.validation import validate
    from personalens.models import load_model

    model = None if judge is None else load_model(judge, role="judge", base_url=base_url)
    report = asyncio.run(validate(data.resolve(), model))
    for line in report.summary:
        typer.echo(line)
    for error in report.errors:
        typer.echo(f"error: {error}", err=True)
    typer.echo(f"{len(report.errors)} error(s)")
    if report.errors:
        raise typer.Exit(1)
