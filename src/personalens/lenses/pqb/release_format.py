"""PQB's released queries and the Amazon Reviews 2023 item metadata they are evaluated against.

Release: {parent_asin: [{asin, uid, syntax_query, typo_query | null}]}; relevance = the record's
own asin. Corpus: meta_<Category>.jsonl, one item per line (title, brand, categories,
description, features, details).
"""

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import pydantic
import typer

from personalens.errors import InputError
from personalens.input_files import (
    expect_dict,
    expect_list,
    read_json,
    read_jsonl_objects,
    validation_message,
)
from personalens.lenses.pqb.options import EvalOptions
from personalens.retrieval import Document
from personalens.retrieval.beir_export import BeirQuery, export_beir
from personalens.runs.options import user_path


class QueryRecord(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="ignore", strict=True)

    asin: str = pydantic.Field(min_length=1)
    uid: str = pydantic.Field(min_length=1)
    syntax_query: str = pydantic.Field(min_length=1)
    typo_query: str | None = pydantic.Field(default=None, min_length=1)
    # `pqb build` only: the random-typo baseline.
    random_typo_query: str | None = pydantic.Field(default=None, min_length=1)


@dataclass(frozen=True)
class QueryGroup:
    parent_asin: str
    records: list[QueryRecord]


def load_queries(path: Path) -> list[QueryGroup]:
    groups = []
    for parent, records in expect_dict(read_json(path), str(path)).items():
        where = f"{path} item {parent}"
        parsed = []
        for i, raw in enumerate(expect_list(records, where)):
            try:
                parsed.append(QueryRecord.model_validate(raw))
            except pydantic.ValidationError as exc:
                raise InputError(validation_message(exc), where=f"{where} record {i}") from None
        groups.append(QueryGroup(parent, parsed))
    return groups


def item_text(item: dict) -> str:
    """What a retriever indexes for a meta item: title, store, categories, features, ..."""
    parts = [item.get("title"), item.get("store") or item.get("brand")]
    parts += [" ".join(map(str, item.get(key) or [])) for key in ("categories", "features",
                                                                   "description")]
    details = item.get("details") or {}
    if isinstance(details, dict):
        parts += [f"{k}: {v}" for k, v in details.items()]
    return "\n".join(str(p) for p in parts if p)


def meta_items(path: Path) -> Iterator[tuple[str, str, dict]]:
    """(where, parent_asin, item) for each line of a meta_<Category>.jsonl file, streamed."""
    for where, item in read_jsonl_objects(path, "meta"):
        asin = item.get("parent_asin")
        if not isinstance(asin, str) or not asin:
            raise InputError("field 'parent_asin' must be a non-empty string", where=where)
        yield where, asin, item


def load_corpus(path: Path) -> list[Document]:
    """One document per item of a meta_<Category>.jsonl file, keyed by its parent_asin."""
    documents, seen = [], set()
    for where, asin, item in meta_items(path):
        if asin in seen:
            raise InputError(f"duplicate parent_asin {asin}", where=where)
        seen.add(asin)
        documents.append(Document(asin, item_text(item)))
    if not documents:
        raise InputError("meta file holds no items", where=str(path))
    return documents


def beir_queries(groups: list[QueryGroup]) -> list[BeirQuery]:
    """Every query text as a BEIR query: ids <parent_asin>/<uid>/clean, .../typo and, for built
    data, .../random_typo; the record's own asin is the one relevant document."""
    return [BeirQuery(f"{group.parent_asin}/{record.uid}/{kind}", text, (record.asin,),
                      {"uid": record.uid, "kind": kind, "parent_asin": group.parent_asin})
            for group in groups for record in group.records
            for kind, text in (("clean", record.syntax_query), ("typo", record.typo_query),
                               ("random_typo", record.random_typo_query)) if text is not None]


def _path(help_text: str):
    return typer.Option(parser=user_path, help=help_text)


def export_beir_command(
    out: Annotated[Path, _path("Folder for corpus.jsonl, queries.jsonl, qrels/.")],
    data: Annotated[Path | None, _path("A `pqb build` folder.")] = None,
    queries: Annotated[Path | None, _path("Released queries (PQB format).")] = None,
    meta: Annotated[Path | None, _path("Amazon Reviews 2023 meta_<Category>.jsonl.")] = None,
) -> None:
    """Write the queries and corpus in BEIR format for external retrievers."""
    # The same choice of dataset as `pqb eval`, refused the same way.
    files = EvalOptions.parse(out=out, data=data, queries=queries, meta=meta)
    counts = export_beir(beir_queries(load_queries(files.queries_file)),
                         load_corpus(files.meta_file), out)
    typer.echo(f"{counts['documents']} documents, {counts['queries']} queries, "
               f"{counts['qrels']} qrels -> {out}")
