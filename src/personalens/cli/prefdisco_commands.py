"""`personalens prefdisco ...`: evaluate preference discovery, or build a dataset to evaluate."""

from pathlib import Path
from typing import Annotated

import typer

from personalens.cli.model_options import Role, RoleModels, model_roles
from personalens.cli.option_lists import int_list, split_list
from personalens.cli.path_options import path_option
from personalens.cli.run_output import report_outcome
from personalens.models import DEFAULT_MODEL, SPEC_HELP

app = typer.Typer(help="PrefDisco: does a model ask the right questions to discover a new "
                       "user's preferences, then reason for them?",
                  no_args_is_help=True, rich_markup_mode=None)


@app.command("eval")
@model_roles(Role("target", "model", DEFAULT_MODEL, f"Target model (answers): {SPEC_HELP}."),
             Role("user", "user_model", None, "Simulated user's model. Default: the target's."),
             Role("judge", "judge", None, "Judge model. Default: the target's."))
def eval_command(
    data: Annotated[Path, path_option(help="prefq-bench JSONL file, or a folder of them.")],
    out: Annotated[Path, path_option(help="Run directory; rerunning the same command resumes "
                                           "it.")],
    models: RoleModels,
    conditions: Annotated[str, typer.Option(help="Comma-separated: baseline, discovery, oracle."
                                            )] = "baseline,discovery,oracle",
    fixed_questions: Annotated[str, typer.Option(
        help="Fixed-question ablation, e.g. 2,4,8: condition fixed_<N> asks exactly N.")] = "",
    turns: Annotated[int, typer.Option(help="Question budget in discovery.")] = 5,
    user: Annotated[str, typer.Option(help="Simulated user: passive (answers only what is "
                                           "asked) or collaborative.")] = "passive",
    scoring: Annotated[str, typer.Option(help="strict (default) or release (the released "
                                              "scorer's behaviour, for comparisons).")
                       ] = "strict",
    judges: Annotated[str, typer.Option(help="Several judge specs, comma-separated (same "
                                             "endpoint as --judge); reports their agreement.")
                      ] = "",
    skip_invalid: Annotated[bool, typer.Option("--skip-invalid", help="Run the valid records "
                                               "and list the invalid ones.")] = False,
    temperature: Annotated[float, typer.Option(help="Target's temperature (0 means 0).")] = 0.0,
    user_temperature: Annotated[float, typer.Option(help="Simulated user's temperature.")
                                ] = 0.4,
    judge_temperature: Annotated[float, typer.Option(help="Judge's temperature.")] = 0.0,
    attempts: Annotated[int, typer.Option(help="Tries for a valid judge verdict, a well-formed "
                                               "turn or a non-empty user reply.")] = 3,
    max_tokens: Annotated[int, typer.Option(help="Longest target turn, in tokens.")] = 1024,
) -> None:
    """PrefAlign, accuracy and NormAlign under baseline, discovery and oracle conditions."""
    from personalens.lenses.prefdisco.command import PrefdiscoOptions, run_eval
    from personalens.lenses.prefdisco.evaluation import Temperatures

    target = models["target"]
    judge = models["judge"] or target
    options = PrefdiscoOptions(
        data=data, out=out, target=target, user=models["user"] or target,
        judges=[judge.with_spec(spec) for spec in split_list(judges)] or [judge],
        conditions=split_list(conditions), fixed_questions=int_list(fixed_questions,
                                                                    "--fixed-questions"),
        turns=turns, user_kind=user, scoring=scoring, skip_invalid=skip_invalid,
        temperatures=Temperatures(temperature, user_temperature, judge_temperature),
        attempts=attempts, max_tokens=max_tokens, prices=models.prices)
    report_outcome(run_eval(options))


@app.command("build")
@model_roles(Role("generator", "model", DEFAULT_MODEL, f"Generator model: {SPEC_HELP}."))
def build_command(
    out: Annotated[Path, path_option(help="Build folder (a run directory; rerunning resumes "
                                           "it). The dataset goes to OUT/data/<task>.jsonl.")],
    models: RoleModels,
    problems: Annotated[list[Path] | None, path_option(
        help="Source benchmark rows (JSONL; MATH-500, AIME, CommonsenseQA, LogiQA, MaScQA, "
             "MedQA, MMLU, ScienceQA, SimpleQA, SocialIQA). Repeatable; the task is the file's "
             "stem. Default: the ~30 problems shipped with personalens.")] = None,
    population: Annotated[Path | None, path_option(
        help="A `personalens generate` output: personas come from its profiles.")] = None,
    personas: Annotated[int, typer.Option(help="Personas the generator writes (without "
                                               "--population).")] = 6,
    per_problem: Annotated[int, typer.Option(help="Personas paired with each problem.")] = 2,
    preferences: Annotated[int, typer.Option(help="Preferences (and rubric criteria) per "
                                                  "instance.")] = 3,
    candidates: Annotated[int, typer.Option(help="Candidate attributes proposed per "
                                                 "instance before selection.")] = 8,
    limit: Annotated[int | None, typer.Option(help="At most this many problems per task.")
                     ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the persona-problem pairing.")] = 0,
    temperature: Annotated[float, typer.Option(help="Generator temperature.")] = 0.7,
) -> None:
    """Build a prefq-bench dataset: personas, sparse preferences, rubrics, in the release format."""
    from personalens.lenses.prefdisco.build import BuildOptions, run_build

    options = BuildOptions(out=out, generator=models["generator"], problems=problems or [],
                           population=population, personas=personas, per_problem=per_problem,
                           preferences=preferences, candidates=candidates, limit=limit,
                           seed=seed, temperature=temperature, prices=models.prices)
    report_outcome(run_build(options))
