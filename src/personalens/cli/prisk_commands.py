"""`personalens prisk ...`: evaluate the hidden costs of personalisation, build data for it, and
run its attribution statistics on any scored table."""

from pathlib import Path
from typing import Annotated

import typer

from personalens.cli import prisk_build_command
from personalens.cli.model_options import Role, RoleModels, model_roles
from personalens.cli.option_lists import int_list, split_list
from personalens.cli.path_options import path_option
from personalens.cli.run_output import report_outcome
from personalens.models import DEFAULT_MODEL, SPEC_HELP
from personalens.retrieval import RETRIEVER_HELP

app = typer.Typer(help="PRISK: the hidden costs of personalisation, and the statistics that "
                       "attribute them to the profile and to memory.",
                  no_args_is_help=True, rich_markup_mode=None)


@app.command("eval")
@model_roles(Role("target", "model", DEFAULT_MODEL, f"Target model (answers, and routes "
                                                    f"retrieval): {SPEC_HELP}."),
             Role("judge", "judge", None, "Judge model (IRP, sycophancy, PIS, lean). "
                                          "Default: the target's."),
             Role("topic_judge", "topic_judge", None, "Narrowing: topic extraction and "
                                                      "canonical labels. Default: the judge."),
             Role("usefulness_judge", "usefulness_judge", None, "Narrowing: which answer "
                                                                "items are useful to the "
                                                                "user. Default: the judge."))
def eval_command(
    data: Annotated[Path, path_option(help="Assembled PRISK records (release JSON), a file or "
                                            "a folder of *.json (e.g. a `prisk build` OUT/data)."
                                       )],
    out: Annotated[Path, path_option(help="Run directory; rerunning the same command resumes "
                                           "it.")],
    models: RoleModels,
    conditions: Annotated[str, typer.Option(help="Comma-separated: base, profile, retrieval, "
                                                 "profile_retrieval, reflect (base is always "
                                                 "run).")
                          ] = "base,profile,retrieval,profile_retrieval",
    risks: Annotated[str, typer.Option(help="Comma-separated: irp (with benchmark accuracy), "
                                            "narrowing, sycophancy.")
                     ] = "irp,narrowing,sycophancy",
    retriever: Annotated[str, typer.Option(help=f"Memory retriever: {RETRIEVER_HELP}.")
                         ] = "minilm",
    k: Annotated[int, typer.Option(help="Memories retrieved when the router retrieves.")] = 3,
    k_sweep: Annotated[str, typer.Option(help="Retrieval depths to sweep, e.g. 1,3,5,7: "
                                              "conditions k<N>, memory only, retrieval forced."
                                         )] = "",
    samples: Annotated[int, typer.Option(help="Narrowing samples per record and condition "
                                              "(the paper uses 20).")] = 5,
    temperature: Annotated[float, typer.Option(help="Target's temperature.")] = 0.2,
    sample_temperature: Annotated[float, typer.Option(help="Narrowing samples' temperature."
                                                      )] = 0.8,
    judge_temperature: Annotated[float, typer.Option(help="Judges' temperature.")] = 0.0,
    attempts: Annotated[int, typer.Option(help="Tries for a valid verdict or router "
                                               "decision.")] = 3,
    max_tokens: Annotated[int | None, typer.Option(
        help="Longest answer, in tokens. Default: 512; 128 for a local/ target, which rarely "
             "stops earlier and runs on the CPU.")] = None,
    coding: Annotated[str, typer.Option(help="treatment (0/1) or effect (±0.5) coding of P "
                                             "and M in the attribution model.")] = "treatment",
    correction: Annotated[str, typer.Option(help="holm or bh, across risks x effects.")
                          ] = "holm",
    limit: Annotated[int | None, typer.Option(help="At most this many records per risk.")
                     ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap and permutation draws.")] = 0,
) -> None:
    """IRP and accuracy, narrowing, sycophancy per condition, and their attribution (LMM)."""
    from personalens.lenses.prisk.command import PriskOptions, run_eval
    from personalens.lenses.prisk.evaluation import Temperatures

    target = models["target"]
    judge = models["judge"] or target
    options = PriskOptions(
        data=data, out=out, target=target, judge=judge, topic_judge=models["topic_judge"],
        usefulness_judge=models["usefulness_judge"], conditions=split_list(conditions),
        risks=split_list(risks), retriever=retriever, k=k,
        k_sweep=int_list(k_sweep, "--k-sweep"), samples=samples,
        temperatures=Temperatures(temperature, sample_temperature, judge_temperature),
        attempts=attempts, max_tokens=max_tokens, coding=coding, correction=correction,
        limit=limit, seed=seed, prices=models.prices)
    report_outcome(run_eval(options))


prisk_build_command.register(app)


@app.command("stats")
def stats_command(
    scores: Annotated[Path, path_option(help="CSV with columns record, profile (0/1), memory "
                                              "(0/1), score; optional risk and model.")],
    out: Annotated[Path, path_option(help="Run directory for metrics.json and report.html.")],
    coding: Annotated[str, typer.Option(help="treatment (0/1) or effect (±0.5) coding of P "
                                             "and M.")] = "treatment",
    correction: Annotated[str, typer.Option(help="holm or bh, across models x risks x "
                                                 "effects.")] = "holm",
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap and permutation draws.")] = 0,
) -> None:
    """Mixed-effects attribution (REML), partial η², cell-mean CIs and sign-flip tests."""
    from personalens.lenses.prisk.attribution import PriskStats, StatsOptions
    from personalens.runs import run_lens

    options = StatsOptions(scores=scores, out=out, coding=coding, correction=correction,
                           seed=seed)
    report_outcome(run_lens(PriskStats(options), out))
