"""`personalens pqb ...`: build a dataset, evaluate retrievers on it, export it, compare runs."""

from pathlib import Path
from typing import Annotated

import typer

from personalens.cli.interruption import interruptible
from personalens.cli.model_options import ApiKeyEnv, BaseUrl, Concurrency, MaxAttempts, NoCache
from personalens.cli.progress import ItemProgress
from personalens.errors import InputError
from personalens.lenses.pqb.analysis import KS
from personalens.lenses.pqb.command import PqbOptions, run_pqb_eval
from personalens.models import DEFAULT_MODEL, SPEC_HELP
from personalens.retrieval import RETRIEVER_HELP

app = typer.Typer(help="PersonalQuery-Benchmark: retrieval robustness to how each user phrases "
                       "a need.", no_args_is_help=True)


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _dataset(data: Path | None, queries: Path | None, meta: Path | None) -> dict:
    """--data DIR, or --queries with --meta; anything else is refused."""
    if data is not None and (queries or meta):
        raise InputError("give --data, or --queries with --meta, not both")
    if data is None and not (queries and meta):
        raise InputError("give --data DIR (a pqb build folder), or both --queries and --meta")
    return {"data": data} if data is not None else {"queries": queries, "meta": meta}


@app.command("eval")
def eval_command(
    out: Annotated[Path, typer.Option(help="Run directory; rerunning resumes it.")],
    data: Annotated[Path | None, typer.Option(help="A `pqb build` folder (queries.json, "
                                                   "corpus.jsonl).")] = None,
    queries: Annotated[Path | None, typer.Option(
        help="Released queries: {parent_asin: [{asin, uid, syntax_query, typo_query}]}.")
    ] = None,
    meta: Annotated[Path | None, typer.Option(help="Amazon Reviews 2023 meta_<Category>.jsonl: "
                                                   "the corpus for --queries.")] = None,
    retriever: Annotated[str, typer.Option(help=f"Retriever: {RETRIEVER_HELP}.")] = "bm25",
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap resampling.")] = 0,
) -> None:
    """Flip rate (paper and all-pairs definitions), Hit@K and MRR for clean vs typo queries."""
    _dataset(data, queries, meta)
    common = {"retriever": retriever, "out": out, "seed": seed}
    options = (PqbOptions.from_data(data, **common) if data is not None
               else PqbOptions(queries=queries, meta=meta, **common))
    metrics = interruptible(lambda: run_pqb_eval(options))
    typer.echo(f"report: {out / 'report.html'}")
    typer.echo(f"metrics: {out / 'metrics.json'}")
    for k in map(str, KS):
        hit = metrics["hit"]
        line = (f"K={k}: flip rate (paper) {_fmt(metrics['flip_rate']['paper'][k]['value'])}, "
                f"all pairs {_fmt(metrics['flip_rate']['all_pairs'][k]['value'])}; hit clean "
                f"{_fmt(hit['clean'][k]['value'])} (n={metrics['n_queries']}); typo subset "
                f"(n={metrics['n_typo']}): clean {_fmt(hit['clean_on_typo'][k]['value'])} -> "
                f"typo {_fmt(hit['typo'][k]['value'])}")
        if metrics["n_random_typo"]:
            line += f"; random typo {_fmt(hit['random_typo'][k]['value'])}"
        typer.echo(line)
    if metrics["failures"]:
        typer.echo(f"run incomplete: {len(metrics['failures'])} query record(s) failed; rerun "
                   "the same command to retry them", err=True)
        raise typer.Exit(3)


@app.command("export-beir")
def export_beir_command(
    out: Annotated[Path, typer.Option(help="Folder for corpus.jsonl, queries.jsonl, qrels/.")],
    data: Annotated[Path | None, typer.Option(help="A `pqb build` folder.")] = None,
    queries: Annotated[Path | None, typer.Option(help="Released queries (PQB format).")] = None,
    meta: Annotated[Path | None, typer.Option(help="Amazon Reviews 2023 meta_<Category>.jsonl."
                                              )] = None,
) -> None:
    """Write the queries and corpus in BEIR format for external retrievers."""
    from personalens.lenses.pqb.release_format import beir_queries, load_corpus, load_queries
    from personalens.retrieval.beir_export import export_beir

    _dataset(data, queries, meta)
    if data is not None:
        options = PqbOptions.from_data(data, retriever="", out=out)
        queries, meta = options.queries, options.meta
    counts = export_beir(beir_queries(load_queries(queries)), load_corpus(meta), out)
    typer.echo(f"{counts['documents']} documents, {counts['queries']} queries, "
               f"{counts['qrels']} qrels -> {out}")


@app.command("build")
def build_command(
    out: Annotated[Path, typer.Option(help="Dataset folder (also a run directory; rerunning "
                                           "resumes it).")],
    reviews: Annotated[Path | None, typer.Option(
        help="Amazon Reviews 2023 <Category>.jsonl: the users' writing histories.")] = None,
    meta: Annotated[Path | None, typer.Option(
        help="Amazon Reviews 2023 meta_<Category>.jsonl: the product corpus.")] = None,
    population: Annotated[Path | None, typer.Option(
        help="A `personalens generate` folder: purchases form the corpus, each person's own "
             "turns their writing history.")] = None,
    model: Annotated[str, typer.Option(help=f"Model writing candidate queries: {SPEC_HELP}.")
                     ] = DEFAULT_MODEL,
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
    base_url: BaseUrl = None,
    api_key_env: ApiKeyEnv = "OPENAI_API_KEY",
    no_cache: NoCache = False,
    concurrency: Concurrency = None,
    max_attempts: MaxAttempts = 6,
    seed: Annotated[int, typer.Option(help="Seed of the encoder and the typo draws.")] = 0,
) -> None:
    """Build a PQB dataset: syntactic profiles, candidate queries, pair selection, typos."""
    from dataclasses import replace

    from personalens.lenses.pqb.build import BuildOptions, run_build
    from personalens.lenses.pqb.pair_selection import SelectionOptions
    from personalens.lenses.pqb.style_encoder import EncoderOptions
    from personalens.lenses.pqb.style_profiles import ProfileOptions

    source, source_config = _build_source(reviews, meta, population)
    profile = ProfileOptions(min_sentences=min_sentences, min_df=min_df, covariance=covariance,
                             rank=rank, encoder=replace(EncoderOptions(), epochs=encoder_epochs,
                                                        seed=seed))
    options = BuildOptions(
        out=out, source=source, source_config=source_config, model=model,
        base_url=base_url, api_key_env=api_key_env, use_cache=not no_cache,
        concurrency=concurrency, max_attempts=max_attempts, candidates=candidates,
        candidates_per_item=candidates_per_item, similarity_model=similarity_model,
        similarity=similarity, profile=profile,
        selection=SelectionOptions(region=region, margin=margin), pair_users=pair_users,
        max_items=max_items, corrector=corrector, max_typo_words=max_typo_words,
        typo_attempts=typo_attempts, seed=seed)
    summary = interruptible(lambda: run_build(options, ItemProgress("pqb build")))
    typer.echo(f"data: {out / 'queries.json'}, {out / 'corpus.jsonl'}")
    typer.echo(f"report: {out / 'report.html'}")
    typer.echo(f"{summary['profiled_users']} of {summary['users']} users profiled; "
               f"{summary['items']} items tried; {summary['queries']} queries, "
               f"{summary['typo_queries']} with typos")
    _explain_empty(summary, candidates)
    if not summary["complete"]:
        typer.echo("build incomplete; rerun the same command to retry", err=True)
        raise typer.Exit(3)


def _explain_empty(summary: dict, candidates: str) -> None:
    """Say which stage left the dataset empty, and what to change."""
    if summary["queries"] or not summary["items"]:
        return
    if candidates == "model" and summary["candidates"] and not summary["candidates_valid"]:
        typer.echo("no candidate kept the 5-core-term constraint: use a stronger --model, or "
                   "--candidates templates (the bundled SmolLM2-135M cannot keep it)", err=True)
    elif summary["skipped_by_reason"].get("no user pair passes the gates"):
        typer.echo("no user pair passed the gates: records.jsonl shows each item's "
                   "nearest_mahalanobis_sq; a larger --region admits more", err=True)


def _build_source(reviews: Path | None, meta: Path | None, population: Path | None):
    """The BuildSource and what identifies its files (part of the run's config)."""
    from personalens.lenses.pqb.amazon_reviews import load_amazon
    from personalens.lenses.pqb.population_source import load_population
    from personalens.runs import fingerprint

    if population is not None and (reviews or meta):
        raise InputError("give --population, or --reviews with --meta, not both")
    if population is not None:
        files = [p for p in population.rglob("*") if p.is_file()
                 and (p.parts[len(population.parts)] in ("synthetic_data", "ground_truth"))]
        return load_population(population), {
            "population": str(population.resolve()),
            "dataset_hash": fingerprint(files, population)}
    if not (reviews and meta):
        raise InputError("give --reviews and --meta (Amazon Reviews 2023), or --population DIR")
    source = load_amazon(reviews, meta)
    return source, {"reviews": str(reviews.resolve()), "meta": str(meta.resolve()),
                    "dataset_hash": fingerprint([reviews.resolve(), meta.resolve()], Path("/"))}


@app.command("compare")
def compare_command(
    runs: Annotated[list[Path], typer.Argument(help="pqb eval run directories.")],
    out: Annotated[Path, typer.Option(help="Folder for comparison.json and report.html.")],
) -> None:
    """Flip rate vs K per retriever and clean vs typo hits, across pqb eval runs."""
    from personalens.lenses.pqb.comparison import compare_runs

    table = compare_runs(runs, out)
    typer.echo(f"report: {out / 'report.html'}")
    for name, row in table.items():
        typer.echo(f"{name}: flip rate@1 (paper) {_fmt(row['flip_rate_paper_1'])}, "
                   f"hit@20 clean {_fmt(row['hit_clean_20'])} typo {_fmt(row['hit_typo_20'])}"
                   + ("" if row["status"] == "complete" else f" [{row['status']}]"))
