"""`personalens pqb build` and `pqb eval`'s options, declared once (CLI, validation, identity)."""

from pathlib import Path
from typing import ClassVar, Literal

import pydantic

from personalens.models import DEFAULT_MODEL, SPEC_HELP
from personalens.models.role_set import Role, RoleModels
from personalens.retrieval.retriever_names import RETRIEVER_HELP
from personalens.runs.options import DistributedOptions, UserPath, not_identity, option

BUILD_FILES = ("queries.json", "corpus.jsonl")  # what `pqb build` writes and `--data` reads


class EvalOptions(DistributedOptions):
    """--data DIR (a `pqb build` folder), or --queries with --meta."""

    command = "pqb eval"
    roles: ClassVar = (Role("reranker", None),)

    out: UserPath = not_identity(help="Run directory; rerunning resumes it.")
    data: UserPath | None = option(None, "A `pqb build` folder (queries.json, corpus.jsonl).")
    queries: UserPath | None = option(None, "Released queries: {parent_asin: [{asin, uid, "
                                            "syntax_query, typo_query}]}.")
    meta: UserPath | None = option(None, "Amazon Reviews 2023 meta_<Category>.jsonl: the "
                                         "corpus for --queries.")
    retriever: str = option("bm25", f"Retriever: {RETRIEVER_HELP}. The endpoint options below "
                                    "serve rerank-llm's model.")
    seed: int = option(0, "Seed of the bootstrap resampling.")
    models: RoleModels = option(RoleModels(), cli=False)

    @pydantic.model_validator(mode="after")
    def _one_dataset(self) -> "EvalOptions":
        if self.data is not None and (self.queries or self.meta):
            raise ValueError("give --data, or --queries with --meta, not both")
        if self.data is None and not (self.queries and self.meta):
            raise ValueError("give --data DIR (a pqb build folder), or both --queries and "
                             "--meta")
        for name in BUILD_FILES if self.data else ():
            if not (self.data / name).is_file():
                raise ValueError(f"{self.data} is not a pqb build folder (no {name})")
        return self

    @property
    def queries_file(self) -> Path:
        return self.data / BUILD_FILES[0] if self.data else self.queries

    @property
    def meta_file(self) -> Path:
        return self.data / BUILD_FILES[1] if self.data else self.meta


class BuildOptions(DistributedOptions):
    """The source is --reviews with --meta, or --population (checked when it is opened)."""

    command = "pqb build"
    roles: ClassVar = (Role("generator", "model", DEFAULT_MODEL,
                            f"Model writing candidate queries: {SPEC_HELP}. Its endpoint "
                            "options also serve --corrector llm:<spec>."),)

    out: UserPath = not_identity(help="Dataset folder (also a run directory; rerunning "
                                      "resumes it).")
    reviews: UserPath | None = option(None, "Amazon Reviews 2023 <Category>.jsonl: the users' "
                                            "writing histories.")
    meta: UserPath | None = option(None, "Amazon Reviews 2023 meta_<Category>.jsonl: the "
                                         "product corpus.")
    population: UserPath | None = option(
        None, "A `personalens generate` folder: purchases form the corpus, each person's own "
              "turns their writing history.")
    candidates: Literal["model", "templates"] = option(
        "model", "Candidate source: 'model' (PQB's method) or 'templates' (fixed syntactic "
                 "frames; for offline machines whose model cannot keep the constraint).")
    candidates_per_item: int = option(8, "Model candidates per item.", ge=1)
    similarity_model: str = option("minilm", "Sentence-transformers model for the cosine gates "
                                             "(PQB used all-mpnet-base-v2).")
    similarity: float = option(0.9, "Minimum cosine between kept candidates, and between a "
                                    "query and its typo version.", gt=0, le=1)
    min_sentences: int = option(30, "Sentences a user needs to be profiled.", ge=1)
    min_df: int = option(2, "Drop syntax rules seen in fewer sentences.")
    covariance: Literal["low_rank", "full"] = option(
        "low_rank", "User Gaussians: low_rank (+diagonal) or full.")
    # At most the style vectors' dimension (style_encoder.EncoderOptions.dim).
    rank: int = option(4, "Rank of the low-rank covariance.", ge=1, le=16)
    encoder_epochs: int = option(30, "Style-encoder training epochs.", ge=1)
    region: float = option(26.30, "Squared Mahalanobis acceptance region (chi2(16) 95% = "
                                  "26.30).")
    margin: float = option(1.0, "Minimum log-density margin over the other user.")
    pair_users: Literal["owners", "all"] = option(
        "owners", "Users considered for an item: 'owners' (who reviewed/bought it) or 'all'.")
    max_items: int | None = option(None, "Build at most this many items.", ge=1)
    corrector: str = option("dictionary", "Spelling corrector for the typo model: 'dictionary' "
                                          "(offline) or 'llm:<model spec>'.")
    max_typo_words: int = option(3, "Most words misspelt per query.", ge=1)
    typo_attempts: int = option(5, "Injection attempts before a query is left without a typo "
                                   "version.", ge=1)
    seed: int = option(0, "Seed of the encoder and the typo draws.")
    models: RoleModels = option(RoleModels.model_validate({"generator": DEFAULT_MODEL}),
                                cli=False)

    @pydantic.field_validator("corrector")
    @classmethod
    def _known_corrector(cls, name: str) -> str:
        if name != "dictionary" and not (name.startswith("llm:") and name.removeprefix("llm:")):
            raise ValueError(f"unknown spelling corrector {name!r}; expected dictionary or "
                             "llm:<model spec>")
        return name

    @property
    def corrector_spec(self) -> str | None:
        """The LLM corrector's model spec; None for the offline dictionary."""
        return self.corrector.removeprefix("llm:") if self.corrector != "dictionary" else None
