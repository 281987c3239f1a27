"""`personalens pqb build`: a PQB dataset from users' own writing and the items they own.

Stages: (1) a syntactic profile per user (style_profiles); (2) a typo profile per user from
their corrected texts; (3) per item, five core terms, candidate queries that keep them, the
coherent set (pairwise cosine >= 0.9), the pair of users chosen by PQB's gates, and each chosen
query typed with its user's typos and, as a baseline, with random typos. Every model-derived
value is a record (runs.step_store), so a killed build resumes where it stopped.

The folder it writes is both a run directory (manifest, records.jsonl, metrics.json,
report.html) and a dataset: queries.json (the release format plus `random_typo_query`) and
corpus.jsonl (meta_<Category>.jsonl lines), which `pqb eval --data` reads.
"""

import asyncio
import json
import random
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

import pydantic

from personalens.errors import InputError
from personalens.lenses.pqb.build_report import report_sections
from personalens.lenses.pqb.build_source import BuildSource, Product
from personalens.lenses.pqb.candidate_queries import (
    FRAMES,
    candidate_messages,
    check_candidate,
    clean_reply,
    coherent_subset,
    core_terms,
    template_candidates,
)
from personalens.lenses.pqb.pair_selection import SelectionOptions, select_pair
from personalens.lenses.pqb.source_files import open_source
from personalens.lenses.pqb.spacy_pipeline import load_pipeline
from personalens.lenses.pqb.spelling_correction import get_corrector
from personalens.lenses.pqb.style_encoder import EncoderOptions
from personalens.lenses.pqb.style_profiles import (
    ProfileOptions,
    StyleProfiles,
    file_hashes,
    load_checked,
    parse_histories,
    profiled_users,
    train_profiles,
)
from personalens.lenses.pqb.typo_injection import inject_random, inject_typos, passes_similarity
from personalens.lenses.pqb.typo_profile import TypoProfile, learn_profile
from personalens.models import DEFAULT_MODEL, ModelSettings
from personalens.report.run_page import run_page
from personalens.retrieval import DenseRetriever
from personalens.runs import (
    ItemFailure,
    ItemRecords,
    Lens,
    Metrics,
    Outcome,
    RunContext,
    RunIdentity,
    StepFailed,
    StepStore,
    Tally,
    run_lens,
    write_atomic,
)
from personalens.runs.blocking import run_blocking
from personalens.runs.executor import Executor, LocalExecutor
from personalens.runs.run_directory import step_recorded

CANDIDATE_SOURCES = ("model", "templates")


@dataclass(frozen=True)
class BuildOptions:
    out: Path
    source: BuildSource = field(repr=False, compare=False)
    source_config: dict = field(default_factory=dict)  # what identifies the input files
    model: ModelSettings | str = DEFAULT_MODEL  # writes candidates; its endpoint serves llm:
    candidates: str = "model"  # or "templates"
    candidates_per_item: int = 8
    similarity_model: str = "minilm"
    similarity: float = 0.9
    profile: ProfileOptions = ProfileOptions()
    selection: SelectionOptions = SelectionOptions()
    pair_users: str = "owners"  # "owners": the item's own users; "all": every profiled user
    max_items: int | None = None
    corrector: str = "dictionary"
    max_typo_words: int = 3
    typo_attempts: int = 5
    seed: int = 0
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)
    # Where the style stage parses; not part of the build's identity (same profiles).
    executor: Executor = field(default_factory=LocalExecutor, repr=False, compare=False)

    @property
    def writer(self) -> ModelSettings:
        return ModelSettings(spec=self.model) if isinstance(self.model, str) else self.model

    @classmethod
    def from_flags(cls, *, reviews: Path | None, meta: Path | None, population: Path | None,
                   min_sentences: int, min_df: int, covariance: str, rank: int,
                   encoder_epochs: int, region: float, margin: float, seed: int,
                   **rest) -> "BuildOptions":
        """The command line's flat options, assembled (the source is read and hashed here)."""
        source, source_config = open_source(reviews, meta, population)
        profile = ProfileOptions(min_sentences=min_sentences, min_df=min_df,
                                 covariance=covariance, rank=rank,
                                 encoder=replace(EncoderOptions(), epochs=encoder_epochs,
                                                 seed=seed))
        return cls(source=source, source_config=source_config, profile=profile,
                   selection=SelectionOptions(region=region, margin=margin), seed=seed, **rest)

    def config(self) -> dict:
        p, s = self.profile, self.selection
        return {"lens": "pqb-build", **self.source_config, "model": self.writer.spec,
                "candidates": self.candidates, "candidates_per_item": self.candidates_per_item,
                "similarity_model": self.similarity_model, "similarity": self.similarity,
                "min_sentences": p.min_sentences, "min_df": p.min_df,
                "covariance": p.covariance, "rank": p.rank, "encoder": vars(p.encoder),
                "region": s.region, "margin": s.margin, "pair_users": self.pair_users,
                "max_items": self.max_items, "corrector": self.corrector,
                "max_typo_words": self.max_typo_words, "typo_attempts": self.typo_attempts,
                "seed": self.seed}


@dataclass
class _Context:
    options: BuildOptions
    nlp: object
    store: StepStore | None
    model: object | None
    corrector: object
    embedder: DenseRetriever
    profiles: StyleProfiles | None = None
    typos: dict[str, TypoProfile] = field(default_factory=dict)


def check_options(options: BuildOptions) -> None:
    """Refuse bad options before anything is written."""
    if options.candidates not in CANDIDATE_SOURCES:
        raise InputError(f"--candidates must be one of {', '.join(CANDIDATE_SOURCES)}")
    if options.pair_users not in ("owners", "all"):
        raise InputError("--pair-users must be 'owners' or 'all'")
    if options.profile.covariance not in ("low_rank", "full"):
        raise InputError("--covariance must be 'low_rank' or 'full'")
    if not 0 < options.similarity <= 1:
        raise InputError("--similarity must be in (0, 1]")
    if not 1 <= options.profile.rank <= options.profile.encoder.dim:
        raise InputError(f"--rank must be between 1 and {options.profile.encoder.dim}")
    for flag, value in (("--candidates-per-item", options.candidates_per_item),
                        ("--max-items", 1 if options.max_items is None else options.max_items),
                        ("--max-typo-words", options.max_typo_words),
                        ("--typo-attempts", options.typo_attempts),
                        ("--min-sentences", options.profile.min_sentences),
                        ("--encoder-epochs", options.profile.encoder.epochs)):
        if value < 1:
            raise InputError(f"{flag} must be at least 1")
    if options.candidates == "model":
        options.writer.validate_spec()


@dataclass(frozen=True)
class BuildItem:
    product: Product
    users: list[str]

    @property
    def key(self) -> str:
        return f"item/{self.product.parent_asin}"


class BuildMetrics(Metrics):
    """The build's funnel, each count traceable to records.jsonl and the written files."""

    model_config = pydantic.ConfigDict(extra="allow")  # the summary's keys, as they were
    complete: bool
    users: int
    profiled_users: int
    items: int
    candidates: int
    candidates_valid: int
    queries: int
    typo_queries: int
    skipped_by_reason: dict[str, int]
    failures: list[ItemFailure]
    out: str  # the build folder

    def headlines(self) -> list[str]:
        out = Path(self.out)
        return [f"data: {out / 'queries.json'}, {out / 'corpus.jsonl'}",
                f"{self.profiled_users} of {self.users} users profiled; {self.items} items "
                f"tried; {self.queries} queries, {self.typo_queries} with typos"]


class PqbBuild(Lens):
    """Items are products with two or more profiled users; the profiles and each user's
    spelling correction are steps before the plan, typo versions steps after it."""

    name = "pqb build"
    title = "personalens · PersonalQuery-Benchmark build"

    def __init__(self, options: BuildOptions):
        """Everything that can refuse the input does so here, before the folder exists."""
        super().__init__(options.prices)
        check_options(options)
        self.options = options
        writer = options.writer
        nlp = load_pipeline()
        self.sentences = None
        if not step_recorded(options.out, STYLE_STEP):
            self.sentences = parse_histories(options.source.histories, nlp, options.executor)
            self.kept = profiled_users(self.sentences, options.profile)
        model = (writer.load("generator", self.ledger) if options.candidates == "model"
                 else None)
        corrector = get_corrector(options.corrector, settings=writer, ledger=self.ledger)
        self.context = _Context(options, nlp, None, model, corrector,
                                DenseRetriever(options.similarity_model))
        self.items: list[BuildItem] = []

    def identity(self) -> RunIdentity:
        options = self.options
        writer = options.writer
        models = {"generator": writer.spec} if options.candidates == "model" else {}
        if options.corrector.startswith("llm:"):
            models["corrector"] = options.corrector.removeprefix("llm:")
        return RunIdentity(config=options.config(),
                           seeds={"build": options.seed, "encoder": options.profile.encoder.seed},
                           models=models, endpoints={role: writer.public() for role in models})

    async def setup(self, context: RunContext) -> None:
        self.context.store = context.steps
        style = self.options.out / "style"

        async def train() -> dict:
            await run_blocking(train_profiles, self.sentences, self.kept, self.options.profile,
                               style)
            return file_hashes(style)
        hashes = await context.steps.get(STYLE_STEP, train)
        self.context.profiles = load_checked(style, hashes)
        profiled = sorted(self.context.profiles.gaussians)
        self.context.typos = await _typo_profiles(self.context, profiled)
        self.items = [BuildItem(p, u) for p, u in _items(self.options.source, profiled,
                                                          self.options)]

    def plan(self) -> list[BuildItem]:
        return self.items

    async def run_item(self, item: BuildItem) -> dict:
        result = await _build_item(self.context, item.product, item.users)
        return {**result, "outcome": result.pop("status")}

    async def finish(self, records: ItemRecords) -> None:
        results = [await _with_typos(self.context, _result(r)) for r in records]
        _write_dataset(self.options.out, self.options.source, results)
        write_atomic(self.options.out / "typo_profiles.json", json.dumps(
            {uid: p.to_json() for uid, p in self.context.typos.items()}, indent=1,
            sort_keys=True))
        self.results = results

    def summarise(self, records: ItemRecords, tally: Tally) -> BuildMetrics:
        return BuildMetrics.model_validate({
            **summarise(self.results, self.context, self.options.source),
            "complete": tally.complete, "failures": tally.failures + tally.step_failures,
            "out": str(self.options.out)})

    def render_report(self, metrics: BuildMetrics, tally: Tally, manifest: dict,
                      records: ItemRecords) -> str:
        config = manifest["config"]
        return run_page(
            self.title, tally, manifest,
            summary=(f"Source: {metrics.origin} · candidates: {config['candidates']} "
                     f"({config['model'] if config['candidates'] == 'model' else 'templates'})"
                     f" · seed {config['seed']}"),
            sections=lambda report: report_sections(report, metrics, config))

    async def aclose(self) -> None:
        for model in (self.context.model, getattr(self.context.corrector, "model", None)):
            if model is not None:
                await model.aclose()


STYLE_STEP = "style/profiles"


def _result(record: dict) -> dict:
    """An item record as the build's result: its outcome as `status` (failed items too)."""
    fields = {k: v for k, v in record.items() if k not in ("key", "status", "outcome")}
    if record["status"] != "ok":
        return {"asin": record["key"].removeprefix("item/"), "status": "failed",
                "error": record["error"]}
    return {**fields, "status": record["outcome"]}


def run_build(options: BuildOptions, *, progress: bool = True) -> Outcome:
    return run_lens(PqbBuild(options), options.out, progress=progress)


def _items(source: BuildSource, profiled: list[str], options: BuildOptions
           ) -> list[tuple[Product, list[str]]]:
    """Items with at least two profiled users, most-owned first (ties by id), capped."""
    known = set(profiled)
    chosen = []
    for product in source.products:
        users = profiled if options.pair_users == "all" else sorted(
            set(product.users) & known)
        if len(users) >= 2:
            chosen.append((product, users))
    chosen.sort(key=lambda pu: (-len(pu[1]), pu[0].parent_asin))
    return chosen[:options.max_items] if options.max_items else chosen


async def _typo_profiles(context: _Context, users: list[str]) -> dict[str, TypoProfile]:
    histories = context.options.source.histories

    async def profile(uid: str) -> TypoProfile | None:
        async def correct():
            return await context.corrector.correct(histories[uid])
        try:
            corrected = await context.store.get(f"correct/{uid}", correct)
        except StepFailed:
            return None  # recorded; the user's typo steps wait for a rerun that succeeds
        return learn_profile(histories[uid], corrected, context.nlp)

    learned = await asyncio.gather(*(profile(uid) for uid in users))
    return {uid: p for uid, p in zip(users, learned, strict=True) if p is not None}


async def _candidates(context: _Context, terms: list[str]) -> list[str]:
    options = context.options
    if options.candidates == "templates":
        return template_candidates(terms)

    async def one(i: int) -> str:
        completion = await context.model.complete(
            candidate_messages(terms, FRAMES[i % len(FRAMES)]), temperature=0.9, seed=i,
            max_tokens=80)
        return clean_reply(completion.text)
    return list(await asyncio.gather(*(one(i) for i in range(options.candidates_per_item))))


async def _build_item(context: _Context, product: Product, users: list[str]) -> dict:
    result = {"asin": product.parent_asin, "users": users}
    terms = core_terms(product.title, product.text, context.nlp)
    if terms is None:
        return {**result, "status": "skipped", "reason": "fewer than 5 core terms"}
    written = await _candidates(context, terms)
    checked = [{"text": t, "rejected": check_candidate(t, terms, context.nlp)} for t in written]
    valid = list(dict.fromkeys(c["text"] for c in checked if c["rejected"] is None))
    kept = [valid[i] for i in coherent_subset(
        context.embedder.encode(valid), context.options.similarity)] if valid else []
    result.update(terms=terms, candidates=checked, kept=kept)
    if len(kept) < 2:
        return {**result, "status": "skipped", "reason": "fewer than 2 coherent candidates"}
    vectors = context.profiles.vectors(kept, context.nlp)
    choice = select_pair(users, context.profiles.gaussians, vectors, context.options.selection)
    if choice is None:
        # How close each user's nearest candidate came, to show what --region would admit.
        nearest = {u: float(context.profiles.gaussians[u].mahalanobis_sq(vectors).min())
                   for u in users}
        return {**result, "status": "skipped", "reason": "no user pair passes the gates",
                "nearest_mahalanobis_sq": nearest}
    result["selection"] = choice.to_json()
    result["queries"] = [{"uid": uid, "syntax_query": kept[index]}
                         for uid, index in ((choice.user_a, choice.candidate_a),
                                            (choice.user_b, choice.candidate_b))]
    return {**result, "status": "ok"}


async def _with_typos(context: _Context, item: dict) -> dict:
    """The item with each chosen query's typo versions, each a step of its own: a user whose
    correction failed gets them on the rerun that corrects their texts."""
    if item["status"] != "ok":
        return item
    queries = []
    for query in item["queries"]:
        profile = context.typos.get(query["uid"])
        if profile is None:  # the correction step failed and is recorded; a rerun fills it
            queries.append({**query, **_untyped("the user's spelling correction failed")})
            continue

        async def compute(query=query, profile=profile):
            return _typed(context, item["asin"], query, profile)
        queries.append({**query, **await context.store.get(
            f"typo/{item['asin']}/{query['uid']}", compute)})
    return {**item, "queries": queries}


def _untyped(reason: str) -> dict:
    return {"typo_query": None, "typo_edits": [], "typo_skipped": reason,
            "random_typo_query": None, "random_edits": [], "random_skipped": reason}


def _typed(context: _Context, asin: str, query: dict, profile: TypoProfile) -> dict:
    """The user's typo version of their query and a random-typo version editing as many words
    (one edit each), or why either is missing."""
    options, clean, uid = context.options, query["syntax_query"], query["uid"]
    if not profile.edits:
        return _untyped("the user has no observed typos")
    personal = _first_passing(context, clean, lambda rng: inject_typos(
        clean, profile, context.nlp, rng, max_words=options.max_typo_words),
        f"{options.seed}/{asin}/{uid}/personal")
    gate = f"no version kept cosine >= {options.similarity} in {options.typo_attempts} draws"
    if personal is None:
        return _untyped(gate)
    record = {"typo_query": personal.text, "typo_edits": _edits(personal), "typo_skipped": None}
    baseline = _first_passing(context, clean, lambda rng: inject_random(
        clean, len(personal.edits), rng), f"{options.seed}/{asin}/{uid}/random")
    if baseline is None:
        return {**record, "random_typo_query": None, "random_edits": [], "random_skipped": gate}
    return {**record, "random_typo_query": baseline.text, "random_edits": _edits(baseline),
            "random_skipped": None}


def _first_passing(context: _Context, clean: str, draw, seed: str):
    """The first of up to --typo-attempts seeded draws that edits something and keeps the
    similarity gate, or None."""
    for attempt in range(context.options.typo_attempts):
        injected = draw(random.Random(f"{seed}/{attempt}"))
        if injected.edits and passes_similarity(clean, injected.text, context.embedder.encode,
                                                context.options.similarity):
            return injected
    return None


def _edits(injected) -> list[dict]:
    return [edit._asdict() for edit in injected.edits]


def _write_dataset(out: Path, source: BuildSource, results: list[dict]) -> None:
    queries = {r["asin"]: [{"asin": r["asin"], **q} for q in r["queries"]]
               for r in results if r["status"] == "ok"}
    write_atomic(out / "queries.json", json.dumps(queries, indent=1, ensure_ascii=False))
    write_atomic(out / "corpus.jsonl", "".join(
        json.dumps(p.meta, ensure_ascii=False) + "\n" for p in source.products))


def summarise(results: list[dict], context: _Context, source: BuildSource) -> dict:
    """The build's numbers, each countable from records.jsonl and the written files."""
    statuses = Counter(r["status"] for r in results)
    reasons = Counter(r["reason"] for r in results if r["status"] == "skipped")
    candidates = [c for r in results for c in r.get("candidates", [])]
    queries = [q for r in results if r["status"] == "ok" for q in r["queries"]]
    profiles = context.profiles
    summary = {
        "origin": source.origin, "users": len(source.histories),
        "profiled_users": len(profiles.gaussians), "products": len(source.products),
        "items": len(results), "items_by_status": dict(statuses),
        "skipped_by_reason": dict(reasons),
        "candidates": len(candidates),
        "candidates_valid": sum(c["rejected"] is None for c in candidates),
        "candidates_kept": sum(len(r.get("kept", [])) for r in results),
        "queries": len(queries),
        "typo_queries": sum(q["typo_query"] is not None for q in queries),
        "random_typo_queries": sum(q["random_typo_query"] is not None for q in queries),
        "typo_skipped_by_reason": dict(Counter(q["typo_skipped"] for q in queries
                                               if q["typo_skipped"])),
        "random_skipped_by_reason": dict(Counter(q["random_skipped"] for q in queries
                                                 if q["random_skipped"] and q["typo_query"])),
        "sentences": profiles.sentences,
        "typo_rates": {uid: p.rates for uid, p in sorted(context.typos.items())},
    }
    if source.typo_truth:
        summary["typo_recovery"] = typo_recovery(context.typos, source.typo_truth)
    return summary


def typo_recovery(learned: dict[str, TypoProfile], truth: dict[str, dict[str, float]]) -> dict:
    """Mean absolute error between learned and true per-kind rates, over users with both."""
    users = sorted(set(learned) & set(truth))
    errors = [abs(learned[u].rates.get(k, 0.0) - rate)
              for u in users for k, rate in truth[u].items()]
    return {"users": len(users), "mean_absolute_error":
            sum(errors) / len(errors) if errors else None}
