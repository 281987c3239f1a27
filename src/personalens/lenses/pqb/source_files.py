"""Which data `pqb build` starts from: Amazon Reviews 2023 files or a generated population,
opened as one BuildSource, with the hash of its files."""

from pathlib import Path

from personalens.errors import InputError
from personalens.lenses.pqb.amazon_reviews import load_amazon
from personalens.lenses.pqb.build_source import BuildSource
from personalens.lenses.pqb.population_source import load_population
from personalens.runs import fingerprint


def open_source(reviews: Path | None, meta: Path | None,
                population: Path | None) -> tuple[BuildSource, str]:
    """The BuildSource the options name, and its files' hash (the build's dataset_hash)."""
    if population is not None and (reviews or meta):
        raise InputError("give --population, or --reviews with --meta, not both")
    if population is not None:
        files = [p for p in population.rglob("*") if p.is_file()
                 and (p.parts[len(population.parts)] in ("synthetic_data", "ground_truth"))]
        return load_population(population), fingerprint(files, population)
    if not (reviews and meta):
        raise InputError("give --reviews and --meta (Amazon Reviews 2023), or --population DIR")
    return load_amazon(reviews, meta), fingerprint([reviews.resolve(), meta.resolve()], Path("/"))
