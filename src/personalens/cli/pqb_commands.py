"""`personalens pqb ...`: build a dataset, evaluate retrievers on it, export it, compare runs."""

from pathlib import Path
from typing import Annotated

import typer

from personalens.cli.executor_options import ExecutorOption, RayAddressOption
from personalens.cli.model_options import Role, RoleModels, model_roles
from personalens.cli.path_options import path_argument, path_option
from personalens.cli.run_output import report_outcome
from personalens.lenses.pqb.command import PqbOptions, run_pqb_eval
from personalens.models import DEFAULT_MODEL, SPEC_HELP
from personalens.retrieval import RETRIEVER_HELP
from personalens.runs.executor import make_executor

app = typer.Typer(help="PersonalQuery-Benchmark: retrieval robustness to how each user phrases "
                       "a need.", no_args_is_help=True, rich_markup_mode=None)


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


@app.command("eval")
@model_roles(Role("reranker", None))
def eval_command(
    out: Annotated[Path, path_option(help="Run directory; rerunning resumes it.")],
    models: RoleModels,
    data: Annotated[Path | None, path_option(help="A `pqb build` folder (queries.json, "
                                                   "corpus.jsonl).")] = None,
    queries: Annotated[Path | None, path_option(
        help="Released queries: {parent_asin: [{asin, uid, syntax_query, typo_query}]}.")
    ] = None,
    meta: Annotated[Path | None, path_option(help="Amazon Reviews 2023 meta_<Category>.jsonl: "
                                                   "the corpus for --queries.")] = None,
    retriever: Annotated[str, typer.Option(help=f"Retriever: {RETRIEVER_HELP}. The endpoint "
                                                "options below serve rerank-llm's model.")
                         ] = "bm25",
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap resampling.")] = 0,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
) -> None:
    """Flip rate (paper and all-pairs definitions), Hit@K and MRR for clean vs typo queries.

    With --executor ray, a dense retriever encodes the corpus on Ray Data actors.
    """
    options = PqbOptions.from_flags(data, queries, meta, retriever=retriever, out=out,
                                    seed=seed, endpoint=models.endpoint, prices=models.prices,
                                    executor=make_executor(executor, ray_address))
    report_outcome(run_pqb_eval(options))


@app.command("export-beir")
def export_beir_command(
    out: Annotated[Path, path_option(help="Folder for corpus.jsonl, queries.jsonl, qrels/.")],
    data: Annotated[Path | None, path_option(help="A `pqb build` folder.")] = None,
    queries: Annotated[Path | None, path_option(help="Released queries (PQB format).")] = None,
    meta: Annotated[Path | None, path_option(help="Amazon Reviews 2023 meta_<Category>.jsonl."
                                              )] = None,
) -> None:
    """Write the queries and corpus in BEIR format for external retrievers."""
    from personalens.lenses.pqb.release_format import beir_queries, load_corpus, load_queries
    from personalens.retrieval.beir_export import export_beir

    options = PqbOptions.from_flags(data, queries, meta, retriever="", out=out)
    counts = export_beir(beir_queries(load_queries(options.queries)),
                         load_corpus(options.meta), out)
    typer.echo(f"{counts['documents']} documents, {counts['queries']} queries, "
               f"{counts['qrels']} qrels -> {out}")


@app.command("build")
@model_roles(Role("generator", "model", DEFAULT_MODEL,
                  f"Model writing candidate queries: {SPEC_HELP}. Its endpoint options also "
                  "serve --corrector llm:<spec>."))
def build_command(
    out: Annotated[Path, path_option(help="Dataset folder (also a run directory; rerunning "
                                           "resumes it).")],
    models: RoleModels,
    reviews: Annotated[Path | None, path_option(
        help="Amazon Reviews 2023 <Category>.jsonl: the users' writing histories.")] = None,
    meta: Annotated[Path | None, path_option(
        help="Amazon Reviews 2023 meta_<Category>.jsonl: the product corpus.")] = None,
    population: Annotated[Path | None, path_option(
        help="A `personalens generate` folder: purchases form the corpus, each person's own "
             "turns their writing history.")] = None,
    candidates: Annotated[str, typer.Option(
        help="Candidate source: 'model' (PQB's method) or 'templates' (fixed syntactic frames; "
             "for offline machines whose model cannot keep the constraint).")] = "model",
    candidates_per_item: Annotated[int, typer.Option(help="Model candidates per item.")] = 8,
    similarity_model: Annotated[str, typer.Option(
        help="Sentence-transformers model for the cosine gates (PQB used all-mpnet-base-v2).")
    ] = "minilm",
    similarity: Annotated[float, typer.Option(
        help="Minimum cosine between kept candidates, and between a query and its typo "
             "version.")] = 0.9,
    min_sentences: Annotated[int, typer.Option(help="Sentences a user needs to be profiled.")
                             ] = 30,
    min_df: Annotated[int, typer.Option(help="Drop syntax rules seen in fewer sentences.")] = 2,
    covariance: Annotated[str, typer.Option(help="User Gaussians: low_rank (+diagonal) or "
                                                 "full.")] = "low_rank",
    rank: Annotated[int, typer.Option(help="Rank of the low-rank covariance.")] = 4,
    encoder_epochs: Annotated[int, typer.Option(help="Style-encoder training epochs.")] = 30,
    region: Annotated[float, typer.Option(
        help="Squared Mahalanobis acceptance region (chi2(16) 95% = 26.30).")] = 26.30,
    margin: Annotated[float, typer.Option(help="Minimum log-density margin over the other "
                                               "user.")] = 1.0,
    pair_users: Annotated[str, typer.Option(
        help="Users considered for an item: 'owners' (who reviewed/bought it) or 'all'.")
    ] = "owners",
    max_items: Annotated[int | None, typer.Option(help="Build at most this many items.")
                         ] = None,
    corrector: Annotated[str, typer.Option(
        help="Spelling corrector for the typo model: 'dictionary' (offline) or "
             "'llm:<model spec>'.")] = "dictionary",
    max_typo_words: Annotated[int, typer.Option(help="Most words misspelt per query.")] = 3,
    typo_attempts: Annotated[int, typer.Option(
        help="Injection attempts before a query is left without a typo version.")] = 5,
    seed: Annotated[int, typer.Option(help="Seed of the encoder and the typo draws.")] = 0,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
) -> None:
    """Build a PQB dataset: syntactic profiles, candidate queries, pair selection, typos.

    With --executor ray, the style stage's spaCy parsing runs as Ray tasks.
    """
    from personalens.lenses.pqb.build import BuildOptions, run_build

    options = BuildOptions.from_flags(
        reviews=reviews, meta=meta, population=population, min_sentences=min_sentences,
        min_df=min_df, covariance=covariance, rank=rank, encoder_epochs=encoder_epochs,
        region=region, margin=margin, seed=seed, out=out, model=models["generator"],
        candidates=candidates, candidates_per_item=candidates_per_item,
        similarity_model=similarity_model, similarity=similarity, pair_users=pair_users,
        max_items=max_items, corrector=corrector, max_typo_words=max_typo_words,
        typo_attempts=typo_attempts, prices=models.prices,
        executor=make_executor(executor, ray_address))
    outcome = run_build(options)
    _explain_empty(outcome.metrics, candidates)
    report_outcome(outcome)


def _explain_empty(summary, candidates: str) -> None:
    """Say which stage left the dataset empty, and what to change."""
    if summary.queries or not summary.items:
        return
    if candidates == "model" and summary.candidates and not summary.candidates_valid:
        typer.echo("no candidate kept the 5-core-term constraint: use a stronger --model, or "
                   "--candidates templates (the bundled SmolLM2-135M cannot keep it)", err=True)
    elif summary.skipped_by_reason.get("no user pair passes the gates"):
        typer.echo("no user pair passed the gates: records.jsonl shows each item's "
                   "nearest_mahalanobis_sq; a larger --region admits more", err=True)


@app.command("compare")
def compare_command(
    runs: Annotated[list[Path], path_argument(help="pqb eval run directories.")],
    out: Annotated[Path, path_option(help="Folder for comparison.json and report.html.")],
) -> None:
    """Flip rate vs K per retriever and clean vs typo hits, across pqb eval runs."""
    from personalens.lenses.pqb.comparison import compare_runs

    table = compare_runs(runs, out)
    typer.echo(f"report: {out / 'report.html'}")
    for name, row in table.items():
        typer.echo(f"{name}: flip rate@1 (paper) {_fmt(row['flip_rate_paper_1'])}, "
                   f"hit@20 clean {_fmt(row['hit_clean_20'])} typo {_fmt(row['hit_typo_20'])}"
                   + ("" if row["status"] == "complete" else f" [{row['status']}]"))
