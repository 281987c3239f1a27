"""`personalens prisk build`: PRISK's (profile, memory, query) records, written offline."""

from pathlib import Path
from typing import Annotated

import typer

from personalens.cli.model_options import Role, RoleModels, model_roles
from personalens.cli.option_lists import split_list
from personalens.cli.path_options import path_option
from personalens.cli.run_output import report_outcome
from personalens.models import DEFAULT_MODEL, SPEC_HELP


def register(app: typer.Typer) -> None:
    """Add the `build` command to `app` (the `prisk` group)."""
    app.command("build")(build_command)


@model_roles(Role("generator", "model", DEFAULT_MODEL,
                  f"Generator model (profiles, conversations, decoys, templates): {SPEC_HELP}."),
             Role("judge", "judge", None, "Judge model (is a decoy answering its query?). "
                                          "Default: the generator's."))
def build_command(
    out: Annotated[Path, path_option(help="Build folder (a run directory; rerunning resumes "
                                           "it). Records go to OUT/data/<risk>.json.")],
    models: RoleModels,
    risks: Annotated[str, typer.Option(help="Comma-separated: irp, accuracy, agreement, "
                                            "framing, narrowing.")
                     ] = "irp,accuracy,agreement,framing,narrowing",
    population: Annotated[Path | None, path_option(
        help="A `personalens generate` output: profiles come from its people (most diverse "
             "first); the generator writes the fields it lacks.")] = None,
    profiles: Annotated[int, typer.Option(help="Profiles in the dataset.")] = 8,
    candidates: Annotated[int, typer.Option(
        help="Generated candidate profiles (without --population), thinned to --profiles by "
             "farthest-point sampling.")] = 24,
    profile_attempts: Annotated[int, typer.Option(
        help="Drafts per candidate profile before one that breaks the age/education/"
             "profession constraints is dropped.")] = 4,
    per_risk: Annotated[int, typer.Option(help="Records per risk ((query, profile) pairs "
                                               "drawn with --seed).")] = 10,
    irp_templates: Annotated[Path | None, path_option(
        help="IRP templates, JSON [{domain, preference, query}] (the release's "
             "irrelevant_personalization_templates_*.json). Default: the shipped 20.")] = None,
    benchmark: Annotated[Path | None, path_option(
        help="Benchmark rows, JSONL in GSM8K, MMLU or CommonsenseQA shape. Default: the "
             "shipped 15.")] = None,
    aita: Annotated[Path | None, path_option(
        help="AITA-style posts, CSV with a query column and a verdict column (YTA/NTA) "
             "(the release's sycophantic_query.csv plus verdicts). Default: the shipped 10.")
                    ] = None,
    aita_verdict: Annotated[str | None, typer.Option(
        help="Verdict (YTA or NTA) for every row of an --aita file without a verdict column.")
                            ] = None,
    sycophancy_templates: Annotated[Path | None, path_option(
        help="Perspective (framing) templates, JSON [{domain, preference, query, sides?}] (the "
             "release's sycophancy_templates_*.json). Default: the shipped 10.")] = None,
    narrowing: Annotated[Path | None, path_option(
        help="Open recommendation queries, CSV with a query column (the release's "
             "narrowing_queries_100.csv). Default: the shipped 10.")] = None,
    generate_templates: Annotated[int, typer.Option(
        help="Extra IRP templates the generator writes, near-duplicates dropped.")] = 0,
    template_dedup: Annotated[float, typer.Option(
        help="Cosine (MiniLM) at which a generated template duplicates a kept one.")] = 0.7,
    decoy_max_similarity: Annotated[float, typer.Option(
        help="Highest cosine (MiniLM) allowed between a decoy conversation and its query (a "
             "conversation that restates the query scores about 0.6-0.7; typical decoys 0.1).")
                                    ] = 0.6,
    decoy_attempts: Annotated[int, typer.Option(
        help="Regenerations of a decoy that fails the judge or the similarity cap before its "
             "record fails.")] = 3,
    turns: Annotated[int, typer.Option(help="Turns per memory conversation.")] = 4,
    seed: Annotated[int, typer.Option(help="Seed of the pairing, age bands and "
                                           "generation.")] = 0,
    temperature: Annotated[float, typer.Option(help="Generator temperature.")] = 0.5,
) -> None:
    """Build PRISK records: profiles, attribute conversations, checked decoys and queries."""
    from personalens.lenses.prisk.build import BuildOptions, QueryFiles, run_build

    files = QueryFiles(irp_templates=irp_templates, sycophancy_templates=sycophancy_templates,
                       aita=aita, narrowing=narrowing, benchmark=benchmark)
    options = BuildOptions(
        out=out, generator=models["generator"], judge=models["judge"],
        risks=tuple(split_list(risks)), files=files,
        aita_verdict=aita_verdict.upper() if aita_verdict else None, population=population,
        profiles=profiles, candidates=candidates, profile_attempts=profile_attempts,
        per_risk=per_risk, generate_templates=generate_templates, template_dedup=template_dedup,
        decoy_max_similarity=decoy_max_similarity, decoy_attempts=decoy_attempts, turns=turns,
        seed=seed, temperature=temperature, prices=models.prices)
    report_outcome(run_build(options))
