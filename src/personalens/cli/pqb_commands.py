"""`personalens pqb ...`"""

from pathlib import Path
from typing import Annotated

import typer

from personalens.cli.interruption import interruptible
from personalens.lenses.pqb.command import PqbOptions, run_pqb_eval
from personalens.retrieval import RETRIEVER_HELP

app = typer.Typer(help="PersonalQuery-Benchmark: retrieval robustness to how each user phrases "
                       "a need.", no_args_is_help=True)


@app.command("eval")
def eval_command(
    queries: Annotated[Path, typer.Option(help="Released queries: {parent_asin: [{asin, uid, "
                                               "syntax_query, typo_query}]}.")],
    meta: Annotated[Path, typer.Option(help="Amazon Reviews 2023 meta_<Category>.jsonl: the "
                                            "corpus.")],
    out: Annotated[Path, typer.Option(help="Run directory; rerunning resumes it.")],
    retriever: Annotated[str, typer.Option(help=f"Retriever: {RETRIEVER_HELP}.")] = "bm25",
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap resampling.")] = 0,
) -> None:
    """Flip rate (paper and all-pairs definitions), Hit@K and MRR for clean vs typo queries."""
    options = PqbOptions(queries=queries, meta=meta, retriever=retriever, out=out, seed=seed)
    metrics = interruptible(lambda: run_pqb_eval(options))
    typer.echo(f"report: {out / 'report.html'}")
    typer.echo(f"metrics: {out / 'metrics.json'}")
    for k in ("1", "5", "10", "20"):
        paper = metrics["flip_rate"]["paper"][k]["value"]
        typer.echo(f"K={k}: flip rate (paper) {_fmt(paper)}, all pairs "
                   f"{_fmt(metrics['flip_rate']['all_pairs'][k]['value'])}; hit clean "
                   f"{_fmt(metrics['hit']['clean'][k]['value'])}, typo "
                   f"{_fmt(metrics['hit']['typo'][k]['value'])}")


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


@app.command("export-beir")
def export_beir_command(
    queries: Annotated[Path, typer.Option(help="Released queries (PQB format).")],
    meta: Annotated[Path, typer.Option(help="Amazon Reviews 2023 meta_<Category>.jsonl.")],
    out: Annotated[Path, typer.Option(help="Folder for corpus.jsonl, queries.jsonl, qrels/.")],
) -> None:
    """Write the queries and corpus in BEIR format for external retrievers."""
    from personalens.lenses.pqb.beir_export import export_beir
    from personalens.lenses.pqb.release_format import load_corpus, load_queries

    groups, corpus = load_queries(queries), load_corpus(meta)
    counts = export_beir(groups, corpus, out)
    typer.echo(f"{counts['documents']} documents, {counts['queries']} queries, "
               f"{counts['qrels']} qrels -> {out}")
