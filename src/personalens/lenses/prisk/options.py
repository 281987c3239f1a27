"""`personalens prisk eval|build|stats`'s options, declared once (CLI, validation, identity)."""

from pathlib import Path
from typing import Annotated, ClassVar, Literal

import pydantic

from personalens.lenses.prisk.records import RISKS
from personalens.models import DEFAULT_MODEL, SPEC_HELP
from personalens.models.role_set import Role, RoleModels
from personalens.retrieval.retriever_names import RETRIEVER_HELP
from personalens.runs.options import LensOptions, UserPath, comma_list, not_identity, option

CONDITION_NAMES = Literal["base", "profile", "retrieval", "profile_retrieval", "reflect"]
RISK_GROUPS = {"irp": ("irp", "accuracy"), "sycophancy": ("agreement", "framing"),
               "narrowing": ("narrowing",)}
Coding = Literal["treatment", "effect"]
Correction = Literal["holm", "bh"]
# The exclusion analysis' p: BH within each query (the paper's), or over every cell of the report.
ExclusionCorrection = Literal["query-bh", "report-holm", "report-bh"]
MemoryScope = Literal["persona", "record"]
PisQuestion = Literal["sycophantic", "contrast"]
Temperature = Annotated[float, pydantic.Field(ge=0.0, le=2.0)]


def _comma(item) -> type:
    """A comma-separated option of `item`s, each once."""
    return Annotated[list[item], pydantic.BeforeValidator(comma_list)]


# generate.py's max_tokens for every answer; a local model's is capped so that prompt and reply
# fit its context (models.reply_budget).
ANSWER_TOKENS = 1600


class EvalOptions(LensOptions):
    command = "prisk eval"
    roles: ClassVar = (
        Role("target", "model", DEFAULT_MODEL, f"Target model (answers, and routes retrieval): "
                                               f"{SPEC_HELP}."),
        Role("judge", "judge", None, "Judge model (IRP, sycophancy, PIS, lean). Default: the "
                                     "target's.", fallback="target"),
        Role("topic_judge", "topic_judge", None, "Narrowing: topic extraction and canonical "
                                                 "labels. Default: the judge.", fallback="judge"),
        Role("usefulness_judge", "usefulness_judge", None,
             "Narrowing: which answer items are useful to the user. Default: the judge.",
             fallback="judge"))

    data: UserPath = option(help="Assembled PRISK records (release JSON), a file or a folder of "
                                 "*.json (e.g. a `prisk build` OUT/data).")
    out: UserPath = not_identity(help="Run directory; rerunning the same command resumes it.")
    conditions: _comma(CONDITION_NAMES) = option(
        ["base", "profile", "retrieval", "profile_retrieval"],
        "Comma-separated: base, profile, retrieval, profile_retrieval, reflect (base is always "
        "run).")
    risks: _comma(Literal[tuple(RISK_GROUPS)]) = option(
        ["irp", "narrowing", "sycophancy"], "Comma-separated: irp (with benchmark accuracy), "
                                            "narrowing, sycophancy.", min_length=1)
    retriever: str = option("minilm", f"Memory retriever: {RETRIEVER_HELP}.")
    k: int = option(3, "Memories retrieved when the router retrieves.", ge=1)
    memory_scope: MemoryScope = option(
        "persona", "persona (the release's): one memory store per user, pooling the "
                   "conversations of all their records in the run (per risk); record: each "
                   "record's own conversations only.")
    k_sweep: _comma(Annotated[int, pydantic.Field(ge=1)]) = option(
        [], "Retrieval depths to sweep, e.g. 1,3,5,7: conditions k<N>, memory only, retrieval "
            "forced, for every risk; σ of each risk's score across k is reported.")
    samples: int = option(20, "Narrowing samples per record and personalised condition (the "
                              "paper's 20).", ge=1)
    base_samples: int = option(50, "Narrowing samples per record of the generic base (the "
                                   "paper's 50).", ge=1)
    temperature: Temperature = option(0.2, "Target's temperature.")
    sample_temperature: Temperature = option(0.8, "Narrowing samples' temperature.")
    judge_temperature: Temperature = option(0.0, "Judges' temperature.")
    attempts: int = option(3, "Tries for a valid verdict or router decision.", ge=1)
    max_tokens: int = option(
        ANSWER_TOKENS, "Longest answer, in tokens (the release's 1600); a local model's is "
                       "capped so that prompt and reply fit its context.", ge=16)
    truncated_answers: Literal["exclude", "score"] = option(
        "exclude", "A benchmark answer cut off at --max-tokens: exclude (counted apart under "
                   "truncated.<condition>, no accuracy score) or score (by the rule, usually "
                   "wrong).")
    pis_question: PisQuestion = option(
        "sycophantic", "PIS: sycophantic (the release's question: is an answer judged "
                       "sycophantic so because of the user's profile or history? asked of "
                       "those answers only) or contrast (every personalised answer against the "
                       "base answer: does it differ because of the user?).")
    coding: Coding = option("treatment", "treatment (0/1) or effect (±0.5) coding of P and M in "
                                         "the attribution model.")
    correction: Correction = option("holm", "holm or bh: the attribution model's p, across risks "
                                            "x effects.")
    exclusion_correction: ExclusionCorrection = option(
        "query-bh", "The exclusion analysis' p: query-bh (the paper's: Benjamini-Hochberg within "
                    "each query), report-holm or report-bh (over every cell of every query).")
    limit: int | None = option(None, "At most this many records per risk.")
    seed: int = option(0, "Seed of the bootstrap and permutation draws.")
    models: RoleModels = option(RoleModels.model_validate({"target": DEFAULT_MODEL}), cli=False)

    def sample_count(self, condition: str) -> int:
        """Narrowing samples of `condition`: the generic base has its own count."""
        return self.base_samples if condition == "base" else self.samples


class BuildOptions(LensOptions):
    command = "prisk build"
    roles: ClassVar = (
        Role("generator", "model", DEFAULT_MODEL, f"Generator model (profiles, conversations, "
                                                  f"decoys, templates): {SPEC_HELP}."),
        Role("judge", "judge", None, "Judge model (is a decoy answering its query?). Default: "
                                     "the generator's.", fallback="generator"))

    out: UserPath = not_identity(help="Build folder (a run directory; rerunning resumes it). "
                                      "Records go to OUT/data/<risk>.json.")
    risks: _comma(Literal[RISKS]) = option(list(RISKS), "Comma-separated: irp, accuracy, "
                                                        "agreement, framing, narrowing.",
                                           min_length=1)
    population: UserPath | None = option(
        None, "A `personalens generate` output: profiles come from its people (most diverse "
              "first); the generator writes the fields it lacks.")
    profiles: int = option(8, "Profiles in the dataset.", ge=1)
    candidates: int | None = option(
        None, "Generated candidate profiles (without --population), thinned to --profiles by "
              "farthest-point sampling. Default: 3 x --profiles (24 for the default 8).", ge=1)
    profile_attempts: int = option(4, "Drafts per candidate profile before one that breaks the "
                                      "age/education/profession constraints is dropped.", ge=1)
    per_risk: int = option(10, "Records per risk ((query, profile) pairs drawn with --seed).",
                           ge=1)
    irp_templates: UserPath | None = option(
        None, "IRP templates, JSON [{domain, preference, query}] (the release's "
              "irrelevant_personalization_templates_*.json). Default: the shipped 20.")
    benchmark: UserPath | None = option(
        None, "Benchmark rows, JSONL in GSM8K, MMLU or CommonsenseQA shape. Default: the "
              "shipped 15.")
    aita: UserPath | None = option(
        None, "AITA-style posts, CSV with a query column and a verdict column (YTA/NTA) (the "
              "release's sycophantic_query.csv plus verdicts). Default: the shipped 10.")
    aita_verdict: Annotated[Literal["YTA", "NTA"] | None, pydantic.BeforeValidator(
        lambda v: v.upper() if isinstance(v, str) else v)] = option(
        None, "Verdict (YTA or NTA) for every row of an --aita file without a verdict column.")
    sycophancy_templates: UserPath | None = option(
        None, "Perspective (framing) templates, JSON [{domain, preference, query, sides?}] (the "
              "release's sycophancy_templates_*.json). Default: the shipped 10.")
    narrowing: UserPath | None = option(
        None, "Open recommendation queries, CSV with a query column (the release's "
              "narrowing_queries_100.csv). Default: the shipped 10.")
    benchmark_questions: Literal["conversational", "as-is"] = option(
        "conversational", "Benchmark rows: conversational (the paper's step: the generator "
                          "rewrites each question as a user's message, every number kept, the "
                          "gold answer unchanged) or as-is.")
    rewrite_attempts: int = option(3, "Drafts of a conversational rewrite before the record "
                                      "keeps the original wording (counted).", ge=1)
    generate_templates: int = option(
        0, "Extra IRP templates the generator writes, near-duplicates dropped.", ge=0)
    template_dedup: float = option(
        0.7, "Cosine (MiniLM) at which a generated template duplicates a kept one.", gt=0, le=1)
    decoy_max_similarity: float = option(
        0.6, "Highest cosine (MiniLM) allowed between a decoy conversation and its query (a "
             "conversation that restates the query scores about 0.6-0.7; typical decoys 0.1).",
        gt=0, le=1)
    decoy_attempts: int = option(3, "Regenerations of a decoy that fails the judge or the "
                                    "similarity cap before its record fails.", ge=0)
    turns: int = option(4, "Turns per memory conversation.", ge=2)
    seed: int = option(0, "Seed of the pairing, age bands and generation.")
    temperature: float = option(0.5, "Generator temperature.")
    models: RoleModels = option(RoleModels.model_validate({"generator": DEFAULT_MODEL}),
                                cli=False)

    @pydantic.model_validator(mode="after")
    def _consistent(self) -> "BuildOptions":
        if self.population is None and self.candidate_count < self.profiles:
            raise ValueError(f"--candidates ({self.candidates}) must be at least --profiles "
                             f"({self.profiles}): profiles are chosen from the candidates")
        if self.generate_templates and "irp" not in self.risks:
            raise ValueError("--generate-templates writes IRP templates: add irp to --risks")
        return self

    @property
    def candidate_count(self) -> int:
        """Candidates to draft: three per profile unless --candidates says otherwise (a fixed 24
        made `--profiles 1` draft 24 profiles, over an hour with the bundled model)."""
        return self.candidates if self.candidates is not None else 3 * self.profiles

    def query_file(self, risk: str) -> Path | None:
        """The release file replacing the risk's shipped query set (None: the shipped one)."""
        return {"irp": self.irp_templates, "framing": self.sycophancy_templates,
                "agreement": self.aita, "narrowing": self.narrowing,
                "accuracy": self.benchmark}[risk]


class StatsOptions(LensOptions):
    command = "prisk stats"

    scores: UserPath = option(help="CSV with columns record, profile (0/1), memory (0/1), score;"
                                   " optional risk and model.")
    out: UserPath = not_identity(help="Run directory for metrics.json and report.html.")
    coding: Coding = option("treatment", "treatment (0/1) or effect (±0.5) coding of P and M.")
    correction: Correction = option("holm", "holm or bh, across models x risks x effects.")
    seed: int = option(0, "Seed of the bootstrap and permutation draws.")
