"""PQB's item records: one query record of `pqb eval`, one item of `pqb build`."""

from typing import Any, Literal

import pydantic

from personalens.runs import LensRecord


class EvalRecord(LensRecord):
    """A user's queries for an item, each query's rank of the item (None: not in the top 20)
    and its ranking's head. A failed item keeps what it ranked, beside `ranking_errors`.

    The queries are optional only so a failed record of an older version (which kept none)
    still reads; the browser then takes them from the dataset."""

    schema_name = "pqb.eval"

    parent_asin: str
    asin: str | None = None
    uid: str
    syntax_query: str | None = None
    typo_query: str | None = None
    random_typo_query: str | None = None
    rank_clean: int | None = None
    rank_typo: int | None = None
    rank_random_typo: int | None = None
    top_clean: list[str] | None = None
    top_typo: list[str] | None = None
    top_random_typo: list[str] | None = None
    ranking_errors: dict[str, str] | None = None  # query kind -> why it was not ranked

    def query(self, kind: str) -> str | None:
        return getattr(self, "syntax_query" if kind == "clean" else f"{kind}_query")

    def ranked(self, kind: str) -> bool:
        """Whether the query of this kind was ranked (a failed item's may not have been)."""
        return f"top_{kind}" in self.model_fields_set and kind not in (self.ranking_errors or {})


class Candidate(pydantic.BaseModel):
    text: str
    rejected: str | None  # why the candidate breaks the 5-core-term constraint; None: valid


class BuiltQuery(pydantic.BaseModel):
    """A chosen query; `pqb build` adds its typo versions (a step each) after the items.
    The fields are in the order queries.json has always held them."""

    syntax_query: str
    uid: str
    random_edits: list[dict[str, Any]] = []
    random_skipped: str | None = None
    random_typo_query: str | None = None
    typo_edits: list[dict[str, Any]] = []
    typo_query: str | None = None
    typo_skipped: str | None = None


class BuildRecord(LensRecord):
    """One item: its core terms, the candidates and why each was rejected, the coherent set,
    and the chosen pair with their queries (`outcome` ok), or why it was skipped."""

    schema_name = "pqb.build"

    asin: str
    users: list[str]
    terms: list[str] = []
    candidates: list[Candidate] = []
    kept: list[str] = []
    reason: str | None = None
    nearest_mahalanobis_sq: dict[str, float] | None = None  # how near the gates came
    selection: dict[str, Any] | None = None
    queries: list[BuiltQuery] = []
    outcome: Literal["ok", "skipped"]
